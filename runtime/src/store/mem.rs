//! The in-memory store: every interface of [`super`], transactional by
//! construction (one lock; a commit is checked whole before anything is
//! applied). The test runner's store, and the reference the conformance
//! suite holds the SQL stores to.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Mutex, MutexGuard};

use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::EntityId;

use super::*;
use crate::record::{StepRow, StoredRecord};
use crate::value::{Instant, Value};

/// A route key's claim.
#[derive(Clone, Debug)]
struct KeyRow {
    fingerprint: [u8; 32],
    delivery: String,
    response: Option<StoredResponse>,
    created_at: Instant,
}

/// A delivery with what the store keeps beside the row.
#[derive(Clone, Debug)]
struct Held {
    row: DeliveryRow,
    unique: Option<(String, Vec<DeliveryState>)>,
}

#[derive(Debug, Default)]
struct Inner {
    rows: BTreeMap<EntityId, BTreeMap<Vec<u8>, (u64, Value)>>,
    records: HashMap<String, StoredRecord>,
    deliveries: BTreeMap<String, Held>,
    /// Leases of deliveries that have no row (a test's, taken by name).
    loose_leases: HashMap<String, u64>,
    events: Vec<Outboxed>,
    /// Unique key to how many deliveries of its event block (an event
    /// without subscribers counts once, for as long as it is kept).
    unique: BTreeMap<String, u32>,
    handled: BTreeSet<String>,
    keys: BTreeMap<(String, String, String), KeyRow>,
    items: BTreeMap<String, Item>,
    /// Each schedule's last tick.
    ticks: BTreeMap<String, Instant>,
    version: u64,
}

/// The in-memory store.
#[derive(Debug, Default)]
pub struct MemStore {
    name: String,
    inner: Mutex<Inner>,
}

impl MemStore {
    pub fn new() -> MemStore {
        MemStore::named("primary")
    }

    pub fn named(name: &str) -> MemStore {
        MemStore {
            name: name.to_string(),
            inner: Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while the lock was held leaves data a later reader can
        // still use: every change is applied whole after its checks.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Every committed row of an entity, in key order.
    pub fn rows(&self, entity: EntityId) -> Vec<Value> {
        self.lock()
            .rows
            .get(&entity)
            .map(|r| r.values().map(|(_, v)| v.clone()).collect())
            .unwrap_or_default()
    }

    /// Every inserted event, oldest first.
    pub fn outbox(&self) -> Vec<Outboxed> {
        self.lock().events.clone()
    }

    /// The record of a delivery, read without a `Result` (tests).
    pub fn record_of(&self, delivery: &str) -> Option<StoredRecord> {
        self.lock().records.get(delivery).cloned()
    }
}

impl Inner {
    fn generation(&self, delivery: &str) -> Option<u64> {
        match self.deliveries.get(delivery) {
            Some(h) => Some(h.row.lease_generation),
            None => self.loose_leases.get(delivery).copied(),
        }
    }

    fn holds(&self, delivery: &str, lease: &Lease) -> bool {
        self.generation(delivery) == Some(lease.generation)
    }

    fn current(&self, entity: EntityId, key: &[u8]) -> Option<u64> {
        self.rows.get(&entity)?.get(key).map(|(v, _)| *v)
    }

    fn check(&self, commit: &Commit) -> std::result::Result<(), CommitError> {
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

    fn apply(&mut self, w: &Write) {
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

    /// Whether a follow-up with this unique key is blocked: an earlier
    /// event's claim holds.
    fn blocked(&self, key: &str) -> bool {
        self.unique.get(key).is_some_and(|n| *n > 0)
    }

    /// Inserts an event and its deliveries, taking its unique claim.
    fn insert_event(&mut self, f: &Follow, by: &str, at: Instant) {
        let first = initial_state(f.run_at, at);
        if let Some((key, states)) = &f.unique {
            // Every delivery starts in the same state; an event without
            // subscribers counts as one that never runs.
            if states.contains(&first) {
                let blocking = f.deliveries.len().max(1) as u32;
                *self.unique.entry(key.clone()).or_default() += blocking;
            }
        }
        for d in &f.deliveries {
            self.insert_delivery(d, at);
        }
        self.events.push(Outboxed {
            follow: f.clone(),
            emitted_by: by.to_string(),
            created_at: at,
        });
    }

    fn insert_delivery(&mut self, d: &NewDelivery, now: Instant) {
        if self.deliveries.contains_key(&d.id) {
            return;
        }
        let row = DeliveryRow {
            id: d.id.clone(),
            source: d.source.clone(),
            action: d.action.clone(),
            subscriber: d.subscriber.clone(),
            queue: d.queue.clone(),
            priority: d.priority,
            tags: d.tags.clone(),
            max_attempts: d.max_attempts,
            state: initial_state(d.run_at, now),
            run_at: d.run_at,
            attempt: 0,
            rescues: 0,
            lease_generation: self.loose_leases.remove(&d.id).unwrap_or(0),
            lease_until: None,
            runner: None,
            build_id: d.build_id.clone(),
            args: d.args.clone(),
            created_at: now,
            ended_at: None,
            reason: None,
            steps: Vec::new(),
        };
        self.deliveries.insert(
            d.id.clone(),
            Held {
                row,
                unique: d.unique.clone(),
            },
        );
    }

    /// Moves a delivery to `state`, keeping its event's unique claim's
    /// count: a transition out of the blocking states gives its share up,
    /// and the claim goes with the last.
    fn set_state(&mut self, id: &str, state: DeliveryState) {
        let Some(held) = self.deliveries.get_mut(id) else {
            return;
        };
        let before = held.row.state;
        held.row.state = state;
        let Some((key, states)) = held.unique.clone() else {
            return;
        };
        let (was, is) = (states.contains(&before), states.contains(&state));
        if was == is {
            return;
        }
        let count = self.unique.entry(key.clone()).or_default();
        if is {
            *count += 1;
        } else {
            *count = count.saturating_sub(1);
            if *count == 0 {
                self.unique.remove(&key);
            }
        }
    }

    /// A delivery whose runner stopped [`MAX_RESCUES`] times ends `fault`.
    fn end_rescued(&mut self, id: &str, now: Instant) {
        self.set_state(id, DeliveryState::Fault);
        if let Some(h) = self.deliveries.get_mut(id) {
            h.row.rescues += 1;
            h.row.reason = Some(RESCUES_WHY.to_string());
            h.row.lease_until = None;
            h.row.ended_at = Some(now);
        }
        self.open_item(id, DeliveryState::Fault, RESCUES_WHY, now);
    }

    fn open_item(&mut self, delivery: &str, state: DeliveryState, why: &str, now: Instant) {
        self.items.insert(
            delivery.to_string(),
            Item {
                delivery: delivery.to_string(),
                outcome: state,
                reason: why.to_string(),
                opened_at: now,
                answers_dropped_at: None,
                closed_at: None,
                closed_by: None,
            },
        );
    }
}

/// A delivery's first state: scheduled when its `run_at` is later.
fn initial_state(run_at: Instant, now: Instant) -> DeliveryState {
    if run_at > now {
        DeliveryState::Scheduled
    } else {
        DeliveryState::Available
    }
}

fn until(now: Instant, lease_ms: u64) -> Instant {
    Instant(now.0 + i128::from(lease_ms) * 1_000_000)
}

impl Records for MemStore {
    fn record(&self, delivery: &str) -> Result<Option<StoredRecord>> {
        Ok(self.lock().records.get(delivery).cloned())
    }

    fn put_step(
        &self,
        delivery: &str,
        lease: &Lease,
        record: &StoredRecord,
        step: &StepRow,
    ) -> std::result::Result<(), Fenced> {
        let mut inner = self.lock();
        if !inner.holds(delivery, lease) {
            return Err(Fenced::LeaseLost);
        }
        let kept = inner
            .records
            .entry(delivery.to_string())
            .or_insert_with(|| StoredRecord {
                steps: Vec::new(),
                ..record.clone()
            });
        let at = step.position.saturating_sub(1) as usize;
        kept.steps.truncate(at);
        kept.steps.push(step.clone());
        Ok(())
    }

    fn truncate_steps(
        &self,
        delivery: &str,
        lease: &Lease,
        position: u32,
    ) -> std::result::Result<(), Fenced> {
        let mut inner = self.lock();
        if !inner.holds(delivery, lease) {
            return Err(Fenced::LeaseLost);
        }
        if let Some(kept) = inner.records.get_mut(delivery) {
            kept.steps.truncate(position.saturating_sub(1) as usize);
        }
        Ok(())
    }
}

impl Rows for MemStore {
    fn select(&self, entity: EntityId, filter: &[(Name, Value)]) -> Result<Vec<Row>> {
        let inner = self.lock();
        let Some(rows) = inner.rows.get(&entity) else {
            return Ok(Vec::new());
        };
        Ok(rows
            .iter()
            .filter(|(_, (_, v))| matches(v, filter))
            .map(|(k, (version, v))| Row {
                key: k.clone(),
                version: *version,
                value: v.clone(),
            })
            .collect())
    }
}

impl Commits for MemStore {
    fn commit(&self, commit: &Commit, lease: &Lease) -> std::result::Result<(), CommitError> {
        let mut inner = self.lock();
        if !inner.holds(&commit.delivery, lease) {
            return Err(CommitError::LeaseLost);
        }
        inner.check(commit)?;
        for w in &commit.writes {
            inner.apply(w);
        }
        // Same-key follow-ups collapse in staging order: the first wins.
        let mut seen = BTreeSet::new();
        for f in &commit.follow_ups {
            if let Some((key, _)) = &f.unique {
                if inner.blocked(key) || !seen.insert(key.clone()) {
                    continue;
                }
            }
            inner.insert_event(f, &commit.delivery, commit.at);
        }
        inner.records.remove(&commit.delivery);
        inner.handled.insert(commit.delivery.clone());
        inner.set_state(&commit.delivery, DeliveryState::Completed);
        if let Some(h) = inner.deliveries.get_mut(&commit.delivery) {
            h.row.steps.clone_from(&commit.steps);
            h.row.ended_at = Some(commit.at);
            h.row.lease_until = None;
        }
        if let Some(response) = &commit.response {
            let delivery = commit.delivery.as_str();
            if let Some(k) = inner.keys.values_mut().find(|k| k.delivery == delivery) {
                k.response = Some(response.clone());
            }
        }
        Ok(())
    }
}

impl Queue for MemStore {
    fn enqueue(&self, deliveries: &[NewDelivery], now: Instant) -> Result<()> {
        let mut inner = self.lock();
        for d in deliveries {
            inner.insert_delivery(d, now);
        }
        Ok(())
    }

    fn claim(&self, request: &ClaimRequest) -> Result<Vec<Claimed>> {
        let mut inner = self.lock();
        let now = request.now;
        // Queues named `@...` are the runtime's own (a route's deliveries
        // run in their requests): only a claim that names one takes them.
        let serves = |q: &str| match request.queues.is_empty() {
            true => !q.starts_with('@'),
            false => request.queues.iter().any(|x| x == q),
        };
        let mut due: Vec<(i64, Instant, String, bool)> = inner
            .deliveries
            .values()
            .filter(|h| serves(&h.row.queue))
            .filter_map(|h| {
                let r = &h.row;
                if r.state.waiting() && r.run_at <= now {
                    Some((r.priority, r.run_at, r.id.clone(), false))
                } else if r.state == DeliveryState::Running
                    && r.lease_until.is_some_and(|u| u <= now)
                {
                    Some((r.priority, r.run_at, r.id.clone(), true))
                } else {
                    None
                }
            })
            .collect();
        due.sort();
        due.truncate(request.max);
        let mut out = Vec::with_capacity(due.len());
        for (_, _, id, rescued) in due {
            let rescues = inner.deliveries.get(&id).map_or(0, |h| h.row.rescues);
            if rescued && rescues + 1 >= MAX_RESCUES {
                inner.end_rescued(&id, now);
                continue;
            }
            inner.set_state(&id, DeliveryState::Running);
            let Some(h) = inner.deliveries.get_mut(&id) else {
                continue;
            };
            let r = &mut h.row;
            r.lease_generation += 1;
            r.lease_until = Some(until(now, request.lease_ms));
            r.runner = Some(request.runner.clone());
            if rescued {
                r.rescues += 1;
            } else {
                r.attempt += 1;
            }
            out.push(Claimed {
                lease: Lease {
                    generation: r.lease_generation,
                    until: until(now, request.lease_ms),
                    ms: request.lease_ms,
                },
                delivery: r.clone(),
                rescued,
            });
        }
        Ok(out)
    }

    fn take(&self, delivery: &str, lease_ms: u64, now: Instant) -> Result<Option<Lease>> {
        let mut inner = self.lock();
        let lease_until = until(now, lease_ms);
        let generation = match inner.deliveries.get_mut(delivery) {
            Some(h) => {
                h.row.lease_generation += 1;
                h.row.lease_until = Some(lease_until);
                h.row.lease_generation
            }
            None => {
                // A delivery run by name without a row (a test's): its
                // lease is kept beside.
                let g = inner.loose_leases.entry(delivery.to_string()).or_insert(0);
                *g += 1;
                *g
            }
        };
        if inner
            .deliveries
            .get(delivery)
            .is_some_and(|h| !h.row.state.ended())
        {
            inner.set_state(delivery, DeliveryState::Running);
        }
        Ok(Some(Lease {
            generation,
            until: lease_until,
            ms: lease_ms,
        }))
    }

    fn heartbeat(
        &self,
        delivery: &str,
        lease: &Lease,
        lease_ms: u64,
        now: Instant,
    ) -> std::result::Result<Lease, Fenced> {
        let mut inner = self.lock();
        if !inner.holds(delivery, lease) {
            return Err(Fenced::LeaseLost);
        }
        let until = until(now, lease_ms);
        if let Some(h) = inner.deliveries.get_mut(delivery) {
            h.row.lease_until = Some(until);
        }
        Ok(Lease {
            generation: lease.generation,
            until,
            ms: lease_ms,
        })
    }

    fn release(
        &self,
        delivery: &str,
        lease: &Lease,
        next: &Next,
        now: Instant,
    ) -> std::result::Result<(), Fenced> {
        let mut inner = self.lock();
        if !inner.holds(delivery, lease) {
            return Err(Fenced::LeaseLost);
        }
        match next {
            Next::Retry {
                run_at,
                why,
                counted,
                steps,
            } => {
                inner.set_state(delivery, DeliveryState::Retryable);
                if let Some(h) = inner.deliveries.get_mut(delivery) {
                    h.row.run_at = *run_at;
                    h.row.reason = Some(why.clone());
                    h.row.lease_until = None;
                    h.row.steps.clone_from(steps);
                    if !counted {
                        h.row.attempt = h.row.attempt.saturating_sub(1);
                    }
                }
            }
            Next::End {
                state,
                why,
                steps,
                response,
            } => {
                inner.set_state(delivery, *state);
                if let Some(h) = inner.deliveries.get_mut(delivery) {
                    h.row.reason = Some(why.clone());
                    h.row.lease_until = None;
                    h.row.ended_at = Some(now);
                    h.row.steps.clone_from(steps);
                }
                inner.open_item(delivery, *state, why, now);
                if let Some(response) = response {
                    if let Some(k) = inner.keys.values_mut().find(|k| k.delivery == delivery) {
                        k.response = Some(response.clone());
                    }
                }
            }
            Next::Completed { steps } => {
                inner.set_state(delivery, DeliveryState::Completed);
                if let Some(h) = inner.deliveries.get_mut(delivery) {
                    h.row.reason = None;
                    h.row.lease_until = None;
                    h.row.ended_at = Some(now);
                    h.row.steps.clone_from(steps);
                }
            }
        }
        Ok(())
    }

    fn tick(
        &self,
        schedule: &str,
        _every_ms: u64,
        delivery: &NewDelivery,
        now: Instant,
    ) -> Result<bool> {
        let mut inner = self.lock();
        let last = inner.ticks.get(schedule).copied();
        if last.is_some_and(|t| t >= delivery.run_at) || inner.deliveries.contains_key(&delivery.id)
        {
            return Ok(false);
        }
        inner.ticks.insert(schedule.to_string(), delivery.run_at);
        inner.insert_delivery(delivery, now);
        Ok(true)
    }

    fn delivery(&self, id: &str) -> Result<Option<DeliveryRow>> {
        Ok(self.lock().deliveries.get(id).map(|h| h.row.clone()))
    }

    fn handled(&self, id: &str) -> Result<bool> {
        Ok(self.lock().handled.contains(id))
    }

    fn adopt(&self, row: &DeliveryRow, lease: &Lease) -> Result<Adopted> {
        let mut inner = self.lock();
        if let Some(h) = inner.deliveries.get_mut(&row.id) {
            let r = &mut h.row;
            if r.state == DeliveryState::Completed {
                return Ok(Adopted::Handled(r.steps.clone()));
            }
            if r.lease_generation >= lease.generation {
                return Ok(Adopted::Stale);
            }
            r.lease_generation = lease.generation;
            r.lease_until = Some(lease.until);
            r.state = DeliveryState::Running;
            return Ok(Adopted::Running);
        }
        let copy = DeliveryRow {
            queue: ADOPTED_QUEUE.to_string(),
            state: DeliveryState::Running,
            lease_generation: lease.generation,
            lease_until: Some(lease.until),
            ended_at: None,
            reason: None,
            steps: Vec::new(),
            ..row.clone()
        };
        let held = Held {
            row: copy,
            unique: None,
        };
        inner.deliveries.insert(row.id.clone(), held);
        Ok(Adopted::Running)
    }

    fn events(&self, limit: usize) -> Result<Vec<Outboxed>> {
        let mut out: Vec<Outboxed> = self.lock().events.iter().take(limit).cloned().collect();
        for e in &mut out {
            e.follow.deliveries.sort_by(|a, b| a.id.cmp(&b.id));
        }
        Ok(out)
    }
}

impl RouteKeys for MemStore {
    fn claim_key(&self, request: &KeyRequest) -> Result<KeyClaim> {
        let mut inner = self.lock();
        let at = (
            request.route.clone(),
            request.principal.clone(),
            request.key.clone(),
        );
        let now = request.now;
        let Some(kept) = inner.keys.get(&at).cloned() else {
            inner.insert_delivery(&request.delivery, now);
            let id = request.delivery.id.clone();
            inner.keys.insert(
                at,
                KeyRow {
                    fingerprint: request.fingerprint,
                    delivery: id.clone(),
                    response: None,
                    created_at: request.now,
                },
            );
            drop(inner);
            let lease = self.take(&id, request.lease_ms, now)?;
            return Ok(lease.map_or(KeyClaim::InUse, |lease| KeyClaim::New { lease }));
        };
        if kept.fingerprint != request.fingerprint {
            return Ok(KeyClaim::Reused);
        }
        if let Some(response) = kept.response {
            return Ok(KeyClaim::Replay(response));
        }
        let row = inner.deliveries.get(&kept.delivery).map(|h| &h.row);
        if let Some(r) = row.filter(|r| r.state.ended() && r.state != DeliveryState::Completed) {
            return Ok(KeyClaim::Ended {
                delivery: kept.delivery,
                state: r.state,
            });
        }
        let live = row.and_then(|r| r.lease_until).is_some_and(|u| u > now);
        if live {
            return Ok(KeyClaim::InUse);
        }
        drop(inner);
        match self.take(&kept.delivery, request.lease_ms, now)? {
            Some(lease) => Ok(KeyClaim::TakenOver {
                delivery: kept.delivery,
                lease,
            }),
            None => Ok(KeyClaim::InUse),
        }
    }

    fn release_key(
        &self,
        route: &str,
        principal: &str,
        key: &str,
        lease: &Lease,
    ) -> std::result::Result<(), Fenced> {
        let mut inner = self.lock();
        let at = (route.to_string(), principal.to_string(), key.to_string());
        let Some(delivery) = inner.keys.get(&at).map(|k| k.delivery.clone()) else {
            return Err(Fenced::LeaseLost);
        };
        if !inner.holds(&delivery, lease) {
            return Err(Fenced::LeaseLost);
        }
        if let Some(h) = inner.deliveries.get_mut(&delivery) {
            h.row.lease_until = None;
        }
        Ok(())
    }
}

impl Items for MemStore {
    fn items(&self, open_only: bool) -> Result<Vec<Item>> {
        let inner = self.lock();
        let mut out: Vec<Item> = inner
            .items
            .values()
            .filter(|i| !open_only || i.closed_at.is_none())
            .cloned()
            .collect();
        out.sort_by(|a, b| (a.opened_at, &a.delivery).cmp(&(b.opened_at, &b.delivery)));
        Ok(out)
    }

    fn close_item(&self, delivery: &str, closed_by: &str, now: Instant) -> Result<bool> {
        let mut inner = self.lock();
        match inner.items.get_mut(delivery) {
            Some(item) if item.closed_at.is_none() => {
                item.closed_at = Some(now);
                item.closed_by = Some(closed_by.to_string());
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}

impl Store for MemStore {
    fn name(&self) -> &str {
        &self.name
    }
}

/// The step of a record whose outcome is unknown: sent, never answered.
pub fn in_doubt(record: Option<&StoredRecord>) -> Option<u32> {
    record?
        .steps
        .iter()
        .rev()
        .find(|s| matches!(s.state, crate::record::RowState::Sent { .. }))
        .map(|s| s.position)
}

/// The step row sent again under the next key generation (`retry
/// --not-done`): a fresh send of the same request, in its window again.
pub fn next_generation(delivery: &str, row: &StepRow, now: Instant) -> StepRow {
    let generation = row.key_generation + 1;
    StepRow {
        key_generation: generation,
        key: row
            .key
            .as_ref()
            .map(|_| crate::record::step_key(delivery, row.position, generation)),
        sent_at: now,
        state: crate::record::RowState::Sent {
            doubt: crate::record::Doubt::Unknown,
        },
        ..row.clone()
    }
}

impl Operate for MemStore {
    fn list(&self, filter: &ListFilter) -> Result<Vec<DeliveryRow>> {
        let inner = self.lock();
        let mut out: Vec<DeliveryRow> = inner
            .deliveries
            .values()
            .map(|h| &h.row)
            .filter(|d| filter.passes(d))
            .cloned()
            .collect();
        out.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(a.id.cmp(&b.id)));
        out.truncate(filter.limit.max(1));
        Ok(out)
    }

    fn ids_starting(&self, prefix: &str, max: usize) -> Result<Vec<String>> {
        let inner = self.lock();
        Ok(inner
            .deliveries
            .range(prefix.to_string()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .take(max)
            .map(|(k, _)| k.clone())
            .collect())
    }

    fn retry(&self, id: &str, not_done: bool, by: &str, now: Instant) -> Result<Operated> {
        let mut inner = self.lock();
        let Some(row) = inner.deliveries.get(id).map(|h| h.row.clone()) else {
            return Ok(Operated::Refused(format!("there is no delivery {id}")));
        };
        let doubt = in_doubt(inner.records.get(id));
        if let Some(why) = retry_refusal(&row, doubt, not_done) {
            return Ok(Operated::Refused(why));
        }
        if let (true, Some(step)) = (not_done, doubt) {
            if let Some(rec) = inner.records.get_mut(id) {
                if let Some(s) = rec.steps.iter_mut().find(|s| s.position == step) {
                    *s = next_generation(id, s, now);
                }
            }
        }
        inner.set_state(id, DeliveryState::Available);
        if let Some(h) = inner.deliveries.get_mut(id) {
            h.row.run_at = now;
            h.row.lease_generation += 1;
            h.row.lease_until = None;
            h.row.ended_at = None;
            h.row.attempt = 0;
            h.row.rescues = 0;
            h.row.reason = None;
        }
        let what = if not_done {
            "retry --not-done"
        } else {
            "retry"
        };
        close(&mut inner, id, &format!("{what} by {by}"), now);
        Ok(Operated::Done)
    }

    fn abandon(
        &self,
        id: &str,
        reason: &str,
        by: &str,
        response: Option<&StoredResponse>,
        now: Instant,
    ) -> Result<Operated> {
        let mut inner = self.lock();
        let Some(row) = inner.deliveries.get(id).map(|h| h.row.clone()) else {
            return Ok(Operated::Refused(format!("there is no delivery {id}")));
        };
        if let Some(why) = abandon_refusal(&row, now) {
            return Ok(Operated::Refused(why));
        }
        inner.set_state(id, DeliveryState::Abandoned);
        if let Some(h) = inner.deliveries.get_mut(id) {
            h.row.ended_at = Some(now);
            h.row.lease_generation += 1;
            h.row.lease_until = None;
            h.row.reason = Some(format!("abandoned: {reason}"));
        }
        inner.handled.insert(id.to_string());
        if let Some(r) = response {
            if let Some(k) = inner
                .keys
                .values_mut()
                .find(|k| k.delivery == id && k.response.is_none())
            {
                k.response = Some(r.clone());
            }
        }
        if !inner.items.contains_key(id) {
            inner.open_item(id, DeliveryState::Abandoned, reason, now);
        }
        close(&mut inner, id, &format!("abandon by {by}: {reason}"), now);
        Ok(Operated::Done)
    }

    fn prune(&self, now: Instant, keep: Retention, max: usize) -> Result<Pruned> {
        let mut inner = self.lock();
        Ok(MemStore::prune_inner(&mut inner, now, keep, max))
    }

    fn forget(&self, id: &str) -> Result<Operated> {
        let mut inner = self.lock();
        Ok(MemStore::forget_inner(&mut inner, id))
    }

    fn unfinished(&self) -> Result<Vec<(String, StoredRecord)>> {
        let inner = self.lock();
        let mut out: Vec<(String, StoredRecord)> = inner
            .records
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        out.sort_by(|a, b| a.1.started_at.cmp(&b.1.started_at).then(a.0.cmp(&b.0)));
        Ok(out)
    }
}

fn close(inner: &mut Inner, id: &str, by: &str, now: Instant) {
    if let Some(item) = inner.items.get_mut(id) {
        if item.closed_at.is_none() {
            item.closed_at = Some(now);
            item.closed_by = Some(by.to_string());
        }
    }
}

impl MemStore {
    /// Open route claims older than `keep.open_claims_ms` whose delivery
    /// is not running under a live lease: the delivery ends `retry_later`
    /// with an operator item (unless it ended already), and the key is
    /// freed.
    fn lapse_claims(inner: &mut Inner, now: Instant, keep: Retention, max: usize) -> usize {
        let open_before = before(now, keep.open_claims_ms);
        let lapsed: Vec<((String, String, String), String)> = inner
            .keys
            .iter()
            .filter(|(_, k)| k.response.is_none() && k.created_at < open_before)
            .filter(|(_, k)| {
                inner.deliveries.get(&k.delivery).is_none_or(|h| {
                    h.row.state != DeliveryState::Running
                        || h.row.lease_until.is_none_or(|t| t <= now)
                })
            })
            .map(|(at, k)| (at.clone(), k.delivery.clone()))
            .take(max)
            .collect();
        for (at, id) in &lapsed {
            let open = inner
                .deliveries
                .get(id)
                .is_some_and(|h| !h.row.state.ended());
            if open {
                inner.set_state(id, DeliveryState::RetryLater);
                if let Some(h) = inner.deliveries.get_mut(id) {
                    h.row.reason = Some(LAPSED_WHY.into());
                    h.row.lease_generation += 1;
                    h.row.lease_until = None;
                    h.row.ended_at = Some(now);
                }
                inner.open_item(id, DeliveryState::RetryLater, LAPSED_WHY, now);
            }
            inner.keys.remove(at);
        }
        lapsed.len()
    }

    fn prune_inner(inner: &mut Inner, now: Instant, keep: Retention, max: usize) -> Pruned {
        let mut p = Pruned::default();
        let done_before = before(now, keep.completed_ms);
        let old: Vec<String> = inner
            .deliveries
            .values()
            .filter(|h| {
                h.row.state == DeliveryState::Completed
                    && h.row.ended_at.is_some_and(|t| t < done_before)
            })
            .map(|h| h.row.id.clone())
            .take(max)
            .collect();
        for id in &old {
            inner.set_state(id, DeliveryState::Abandoned);
            inner.deliveries.remove(id);
            inner.handled.remove(id);
            p.deliveries += 1;
        }
        let live: BTreeSet<String> = inner
            .deliveries
            .values()
            .filter_map(|h| match &h.row.source {
                Source::Event { event } => Some(event.clone()),
                _ => None,
            })
            .collect();
        let before_events = inner.events.len();
        let mut removed = 0;
        inner.events.retain(|e| {
            let gone = e.created_at < done_before && !live.contains(&e.follow.id) && removed < max;
            if gone {
                removed += 1;
            }
            !gone
        });
        p.events = before_events - inner.events.len();
        let claims: Vec<(String, String, String)> = inner
            .keys
            .iter()
            .filter(|(_, k)| k.response.is_some() && !inner.deliveries.contains_key(&k.delivery))
            .map(|(at, _)| at.clone())
            .take(max)
            .collect();
        for at in claims {
            inner.keys.remove(&at);
            p.claims += 1;
        }
        p.lapsed = MemStore::lapse_claims(inner, now, keep, max);
        let answers_before = before(now, keep.answers_ms);
        let dropped: Vec<String> = inner
            .items
            .values()
            .filter(|i| i.opened_at < answers_before && i.answers_dropped_at.is_none())
            .map(|i| i.delivery.clone())
            .take(max)
            .collect();
        for id in dropped {
            inner.records.remove(&id);
            if let Some(i) = inner.items.get_mut(&id) {
                i.answers_dropped_at = Some(now);
            }
            p.answers += 1;
        }
        p
    }
}

impl MemStore {
    /// [`Operate::prune`] and [`Operate::forget`] on the same lock.
    fn forget_inner(inner: &mut Inner, id: &str) -> Operated {
        let Some(state) = inner.deliveries.get(id).map(|h| h.row.state) else {
            return Operated::Refused(format!("there is no delivery {id}"));
        };
        if !state.ended() {
            return Operated::Refused(format!(
                "{id} is {}: only an ended delivery is forgotten",
                state.as_str()
            ));
        }
        inner.set_state(id, DeliveryState::Abandoned);
        inner.deliveries.remove(id);
        inner.records.remove(id);
        inner.items.remove(id);
        inner.handled.remove(id);
        Operated::Done
    }
}
