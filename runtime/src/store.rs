//! The store interface and an in-memory, transactional store. The engine
//! needs: leases with generations, the delivery's record (read, and written
//! in short transactions that check the lease), the committed rows of an
//! entity, and one commit transaction (writes, the outbox, the record's
//! removal and the handled marker). A SQL store implements the same trait:
//! each method is one statement or one transaction.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::EntityId;

use crate::record::StoredRecord;
use crate::value::Value;

/// A runner's claim on a delivery; every record write checks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Lease(pub u64);

/// The lease was taken over by another runner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaseLost;

/// A committed row: its key (the entity's first field), a version that
/// every committed change raises, and the row.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub key: Vec<u8>,
    pub version: u64,
    pub value: Value,
}

/// A write staged by an attempt, applied at commit.
#[derive(Clone, Debug, PartialEq)]
pub enum Write {
    Create {
        entity: EntityId,
        key: Vec<u8>,
        value: Value,
    },
    /// `version` is the committed row's when the attempt read it.
    Update {
        entity: EntityId,
        key: Vec<u8>,
        version: u64,
        value: Value,
    },
    Delete {
        entity: EntityId,
        key: Vec<u8>,
        version: u64,
    },
}

/// A follow-up staged with `emit`, inserted into the outbox at commit.
#[derive(Clone, Debug, PartialEq)]
pub struct Follow {
    /// `SubscriptionStarted`
    pub event: String,
    pub payload: Value,
    pub queue: String,
    pub priority: i64,
    pub max_attempts: i64,
    pub tags: Vec<String>,
    pub run_at: crate::value::Instant,
    pub metadata: Value,
    /// The unique key (hex) and the states it blocks in; `None` when the
    /// follow-up is not unique.
    pub unique: Option<(String, Vec<String>)>,
}

/// An inserted follow-up, with its state.
#[derive(Clone, Debug, PartialEq)]
pub struct Outboxed {
    pub follow: Follow,
    pub state: &'static str,
}

/// Everything an action's commit applies, in one transaction.
#[derive(Clone, Debug, PartialEq)]
pub struct Commit {
    pub delivery: String,
    /// When it commits: a follow-up whose `run_at` is later is `scheduled`.
    pub at: crate::value::Instant,
    pub writes: Vec<Write>,
    pub follow_ups: Vec<Follow>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommitError {
    /// Another delivery committed first (a row changed, or a key now exists).
    Conflict,
    LeaseLost,
}

/// A delivery that ended other than by committing: its record and how it
/// ended, for an operator.
#[derive(Clone, Debug, PartialEq)]
pub struct OperatorItem {
    pub delivery: String,
    pub outcome: String,
    pub record: Option<StoredRecord>,
}

pub trait Store {
    /// Takes the delivery's lease, ending any earlier runner's.
    fn claim(&mut self, delivery: &str) -> Lease;
    fn record(&self, delivery: &str) -> Option<StoredRecord>;
    /// Writes the record in a short transaction of its own.
    fn put_record(
        &mut self,
        delivery: &str,
        lease: Lease,
        record: &StoredRecord,
    ) -> Result<(), LeaseLost>;
    /// The committed rows of an entity whose fields equal `filter`, in key
    /// order.
    fn select(&self, entity: EntityId, filter: &[(Name, Value)]) -> Vec<Row>;
    /// Applies a commit: writes, outbox (a duplicate unique key is skipped),
    /// the record's removal and the handled marker, all or nothing.
    fn commit(&mut self, commit: &Commit, lease: Lease) -> Result<(), CommitError>;
    fn keep_item(&mut self, item: OperatorItem);
}

/// Writes into `kept` only the parts of `new` that changed (a step write
/// changes one row), as a SQL store writes one row.
fn sync(kept: &mut StoredRecord, new: &StoredRecord) {
    if kept.build_id != new.build_id {
        kept.build_id.clone_from(&new.build_id);
    }
    if kept.shape_digest != new.shape_digest {
        kept.shape_digest.clone_from(&new.shape_digest);
    }
    kept.mode = new.mode;
    kept.started_at = new.started_at;
    kept.steps.truncate(new.steps.len());
    for (i, row) in new.steps.iter().enumerate() {
        match kept.steps.get_mut(i) {
            Some(old) if old == row => {}
            Some(old) => old.clone_from(row),
            None => kept.steps.push(row.clone()),
        }
    }
}

/// Whether a row's fields equal every condition.
pub fn matches(row: &Value, filter: &[(Name, Value)]) -> bool {
    let Some(r) = row.as_record() else {
        return filter.is_empty();
    };
    filter.iter().all(|(name, v)| r.get(*name) == *v)
}

/// The in-memory store: transactional by construction (a commit is checked
/// whole before anything is applied).
#[derive(Clone, Debug, Default)]
pub struct MemStore {
    rows: BTreeMap<EntityId, BTreeMap<Vec<u8>, (u64, Value)>>,
    records: HashMap<String, StoredRecord>,
    leases: HashMap<String, u64>,
    outbox: Vec<Outboxed>,
    handled: BTreeSet<String>,
    items: Vec<OperatorItem>,
    version: u64,
}

impl MemStore {
    pub fn new() -> MemStore {
        MemStore::default()
    }

    /// Every committed row of an entity, in key order.
    pub fn rows(&self, entity: EntityId) -> Vec<Value> {
        self.rows
            .get(&entity)
            .map(|r| r.values().map(|(_, v)| v.clone()).collect())
            .unwrap_or_default()
    }

    pub fn outbox(&self) -> &[Outboxed] {
        &self.outbox
    }

    pub fn handled(&self, delivery: &str) -> bool {
        self.handled.contains(delivery)
    }

    pub fn items(&self) -> &[OperatorItem] {
        &self.items
    }

    /// Whether a follow-up with this unique key blocks in one of `states`.
    fn blocked(&self, key: &str, states: &[String], staged: &[Follow]) -> bool {
        let existing = self.outbox.iter().any(|o| {
            o.follow.unique.as_ref().is_some_and(|(k, _)| k == key)
                && states.iter().any(|s| s == o.state)
        });
        existing
            || staged
                .iter()
                .any(|f| f.unique.as_ref().is_some_and(|(k, _)| k == key))
    }

    fn check(&self, commit: &Commit) -> Result<(), CommitError> {
        for w in &commit.writes {
            let ok = match w {
                Write::Create { entity, key, .. } => self.current(*entity, key).is_none(),
                Write::Update {
                    entity,
                    key,
                    version,
                    ..
                }
                | Write::Delete {
                    entity,
                    key,
                    version,
                } => self.current(*entity, key) == Some(*version),
            };
            if !ok {
                return Err(CommitError::Conflict);
            }
        }
        Ok(())
    }

    fn current(&self, entity: EntityId, key: &[u8]) -> Option<u64> {
        self.rows.get(&entity)?.get(key).map(|(v, _)| *v)
    }
}

impl Store for MemStore {
    fn claim(&mut self, delivery: &str) -> Lease {
        let g = self.leases.entry(delivery.to_string()).or_insert(0);
        *g += 1;
        Lease(*g)
    }

    fn record(&self, delivery: &str) -> Option<StoredRecord> {
        self.records.get(delivery).cloned()
    }

    fn put_record(
        &mut self,
        delivery: &str,
        lease: Lease,
        record: &StoredRecord,
    ) -> Result<(), LeaseLost> {
        if self.leases.get(delivery) != Some(&lease.0) {
            return Err(LeaseLost);
        }
        match self.records.get_mut(delivery) {
            Some(kept) => sync(kept, record),
            None => {
                self.records.insert(delivery.to_string(), record.clone());
            }
        }
        Ok(())
    }

    fn select(&self, entity: EntityId, filter: &[(Name, Value)]) -> Vec<Row> {
        let Some(rows) = self.rows.get(&entity) else {
            return Vec::new();
        };
        rows.iter()
            .filter(|(_, (_, v))| matches(v, filter))
            .map(|(k, (version, v))| Row {
                key: k.clone(),
                version: *version,
                value: v.clone(),
            })
            .collect()
    }

    fn commit(&mut self, commit: &Commit, lease: Lease) -> Result<(), CommitError> {
        if self.leases.get(&commit.delivery) != Some(&lease.0) {
            return Err(CommitError::LeaseLost);
        }
        self.check(commit)?;
        for w in &commit.writes {
            self.version += 1;
            let version = self.version;
            match w {
                Write::Create { entity, key, value }
                | Write::Update {
                    entity, key, value, ..
                } => {
                    self.rows
                        .entry(*entity)
                        .or_default()
                        .insert(key.clone(), (version, value.clone()));
                }
                Write::Delete { entity, key, .. } => {
                    if let Some(rows) = self.rows.get_mut(entity) {
                        rows.remove(key);
                    }
                }
            }
        }
        let mut inserted: Vec<Follow> = Vec::new();
        for f in &commit.follow_ups {
            if let Some((key, states)) = &f.unique {
                if self.blocked(key, states, &inserted) {
                    continue;
                }
            }
            inserted.push(f.clone());
        }
        self.outbox
            .extend(inserted.into_iter().map(|follow| Outboxed {
                state: if follow.run_at > commit.at {
                    "scheduled"
                } else {
                    "available"
                },
                follow,
            }));
        self.records.remove(&commit.delivery);
        self.handled.insert(commit.delivery.clone());
        Ok(())
    }

    fn keep_item(&mut self, item: OperatorItem) {
        self.items.push(item);
    }
}
