//! An app's several stores as one [`Store`] (design section 14.5), so the
//! engine, the routes and the operator commands run on them as on one.
//!
//! A delivery's row lives in its home store: the emitting action's (where
//! the commit inserted it), a route's or a schedule's action's. Its record,
//! its steps, its handled marker and the events its action emits live in
//! the action's record store (the plan's `record_store`). When the two
//! differ, a claim in the home store raises the generation there first,
//! then the record store adopts the delivery at that generation (a copy in
//! [`ADOPTED_QUEUE`]), so every fenced write there checks it as in one
//! store. The commit lands in the record store; the home row is then
//! completed with its steps. A claim of a home row whose commit landed
//! already (the process died between the two) finds the copy completed
//! and completes the row, never running it again. Releases and operator
//! actions reach the copy first, then the home row, so the two end alike.
//!
//! Entities are read in their own store. An action that writes entities
//! of two stores cannot commit atomically: the server refuses such an app
//! before this is built.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::EntityId;
use jadpo_runtime::record::{StepRow, StoredRecord};
use jadpo_runtime::store::{
    Adopted, ClaimRequest, Claimed, Commit, CommitError, Commits, DeliveryRow, Fenced, Item, Items,
    KeyClaim, KeyRequest, Lease, ListFilter, NewDelivery, Next, Operate, Operated, Outboxed,
    Pruned, Queue, Records, Retention, RouteKeys, Row, Rows, Store, StoreError, StoredResponse,
};
use jadpo_runtime::value::{Instant, Value};

type Res<T> = Result<T, StoreError>;

/// Where each thing of the app lives.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    /// Each action's record store, by its qualified name.
    pub records: BTreeMap<String, String>,
    /// Each entity's store.
    pub entities: BTreeMap<EntityId, String>,
    /// The store of what names none (the `events:` store, else the first).
    pub default: String,
}

/// Several stores, one [`Store`].
pub struct Several {
    stores: Vec<Arc<dyn Store>>,
    records: HashMap<String, usize>,
    entities: HashMap<EntityId, usize>,
    default: usize,
    name: String,
    /// (home, record store) of the deliveries this process holds leases
    /// of; one without an entry is looked up.
    held: Mutex<HashMap<String, (usize, usize)>>,
    /// Where the next claim starts, so no store waits behind another.
    turn: std::sync::atomic::AtomicUsize,
    /// Errors of stores a claim went on without, until read.
    claim_errors: Mutex<Vec<StoreError>>,
}

/// A bound on [`Several::claim_errors`] while nobody reads them.
const MAX_CLAIM_ERRORS: usize = 16;

/// A bound on [`Several::held`]: entries are removed as attempts end, and
/// a lost lease may leave one behind.
const HELD_MAX: usize = 65_536;

impl Several {
    /// `stores` by name; `placement` names only stores among them.
    pub fn new(stores: Vec<Arc<dyn Store>>, placement: &Placement) -> Several {
        let at = |name: &str| stores.iter().position(|s| s.name() == name);
        let default = at(&placement.default).unwrap_or(0);
        let records = placement
            .records
            .iter()
            .filter_map(|(action, store)| Some((action.clone(), at(store)?)))
            .collect();
        let entities = placement
            .entities
            .iter()
            .filter_map(|(entity, store)| Some((*entity, at(store)?)))
            .collect();
        let name = stores
            .iter()
            .map(|s| s.name().to_string())
            .collect::<Vec<_>>()
            .join("+");
        Several {
            stores,
            records,
            entities,
            default,
            name,
            held: Mutex::new(HashMap::new()),
            turn: std::sync::atomic::AtomicUsize::new(0),
            claim_errors: Mutex::new(Vec::new()),
        }
    }

    /// The record store of `action`.
    fn record_store(&self, action: &str) -> usize {
        self.records.get(action).copied().unwrap_or(self.default)
    }

    fn hold(&self, id: &str, home: usize, away: usize) {
        if let Ok(mut held) = self.held.lock() {
            if held.len() >= HELD_MAX {
                held.clear();
            }
            held.insert(id.to_string(), (home, away));
        }
    }

    fn let_go(&self, id: &str) {
        if let Ok(mut held) = self.held.lock() {
            held.remove(id);
        }
    }

    /// The store holding delivery `id`'s row (not an adopted copy), with
    /// the row.
    fn home_of(&self, id: &str) -> Res<Option<(usize, DeliveryRow)>> {
        self.found(|i, store| {
            let row = store.delivery(id)?;
            let home = row.filter(|r| r.queue != jadpo_runtime::store::ADOPTED_QUEUE);
            Ok(home.map(|row| (i, row)))
        })
    }

    /// The first store's `Some` answer to `op`, asking each in turn. A
    /// store that cannot be reached fails the question only when no other
    /// store answered it: the others' deliveries go on.
    fn found<T>(&self, mut op: impl FnMut(usize, &dyn Store) -> Res<Option<T>>) -> Res<Option<T>> {
        let mut first_error = None;
        for (i, store) in self.stores.iter().enumerate() {
            match op(i, &**store) {
                Ok(Some(v)) => return Ok(Some(v)),
                Ok(None) => {}
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(None),
        }
    }

    /// (home, record store) of delivery `id`; a delivery with no row (a
    /// test's run by name) lives in the default store.
    fn placed(&self, id: &str) -> Res<(usize, usize)> {
        if let Some(found) = self.held.lock().ok().and_then(|h| h.get(id).copied()) {
            return Ok(found);
        }
        let found = match self.home_of(id)? {
            Some((home, row)) => (home, self.record_store(&row.action)),
            None => (self.default, self.default),
        };
        self.hold(id, found.0, found.1);
        Ok(found)
    }

    fn away(&self, id: &str) -> Res<&dyn Store> {
        Ok(&*self.stores[self.placed(id)?.1])
    }

    /// Takes in a delivery claimed in `home` under `lease`: `true` when it
    /// is to run. A copy already committed completes the home row.
    fn adopted(&self, home: usize, row: &DeliveryRow, lease: &Lease) -> bool {
        let away = self.record_store(&row.action);
        self.hold(&row.id, home, away);
        if away == home {
            return true;
        }
        let now = crate::store::clock::now();
        let next = match self.stores[away].adopt(row, lease) {
            Ok(Adopted::Running) => return true,
            Ok(Adopted::Handled(steps)) => Next::Completed { steps },
            Ok(Adopted::Stale) => {
                self.let_go(&row.id);
                return false;
            }
            Err(e) => Next::Retry {
                run_at: Instant(now.0 + 1_000_000_000),
                why: e.to_string(),
                counted: false,
                steps: row.steps.clone(),
            },
        };
        let _ = self.stores[home].release(&row.id, lease, &next, now);
        self.let_go(&row.id);
        false
    }

    /// `op` on every store, even after one failed; the first error, if
    /// any (maintenance and notices go on in the stores that answer).
    fn each<T>(&self, mut op: impl FnMut(&dyn Store) -> Res<T>) -> Res<Vec<T>> {
        let mut out = Vec::with_capacity(self.stores.len());
        let mut first_error = None;
        for store in &self.stores {
            match op(&**store) {
                Ok(v) => out.push(v),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    /// Every store's answer to `op`, or the first error.
    fn all<T>(&self, op: impl FnMut(&Arc<dyn Store>) -> Res<T>) -> Res<Vec<T>> {
        self.stores.iter().map(op).collect()
    }
}

impl Records for Several {
    fn record(&self, delivery: &str) -> Res<Option<StoredRecord>> {
        self.away(delivery)?.record(delivery)
    }

    fn put_step(
        &self,
        delivery: &str,
        lease: &Lease,
        record: &StoredRecord,
        step: &StepRow,
    ) -> Result<(), Fenced> {
        self.away(delivery)?.put_step(delivery, lease, record, step)
    }

    fn truncate_steps(&self, delivery: &str, lease: &Lease, position: u32) -> Result<(), Fenced> {
        self.away(delivery)?
            .truncate_steps(delivery, lease, position)
    }
}

impl Rows for Several {
    fn select(&self, entity: EntityId, filter: &[(Name, Value)]) -> Res<Vec<Row>> {
        let at = self.entities.get(&entity).copied().unwrap_or(self.default);
        self.stores[at].select(entity, filter)
    }
}

impl Commits for Several {
    fn commit(&self, commit: &Commit, lease: &Lease) -> Result<(), CommitError> {
        let id = &commit.delivery;
        let (home, away) = self.placed(id).map_err(CommitError::Store)?;
        self.stores[away].commit(commit, lease)?;
        if home != away {
            if crate::crash::between_stores() {
                crate::crash::die();
            }
            // The commit landed: a failure to copy it is left to the next
            // claim, which finds the copy completed.
            let next = Next::Completed {
                steps: commit.steps.clone(),
            };
            let now = crate::store::clock::now();
            let _ = self.stores[home].release(id, lease, &next, now);
        }
        self.let_go(id);
        Ok(())
    }
}

impl Queue for Several {
    fn enqueue(&self, deliveries: &[NewDelivery], now: Instant) -> Res<()> {
        let mut by_store: BTreeMap<usize, Vec<NewDelivery>> = BTreeMap::new();
        for d in deliveries {
            let at = self.record_store(&d.action);
            by_store.entry(at).or_default().push(d.clone());
        }
        for (at, list) in by_store {
            self.stores[at].enqueue(&list, now)?;
        }
        Ok(())
    }

    fn claim(&self, request: &ClaimRequest) -> Res<Vec<Claimed>> {
        use std::sync::atomic::Ordering;
        let n = self.stores.len();
        let start = self.turn.fetch_add(1, Ordering::Relaxed) % n.max(1);
        let mut out = Vec::new();
        let (mut answered, mut first_error) = (false, None);
        for i in (0..n).map(|k| (start + k) % n) {
            let left = request.max.saturating_sub(out.len());
            if left == 0 {
                break;
            }
            let mut part = request.clone();
            part.max = left;
            match self.stores[i].claim(&part) {
                // Claimed deliveries are leased: they are run even when
                // another store could not answer.
                Ok(found) => {
                    answered = true;
                    let running = found.into_iter();
                    out.extend(running.filter(|c| self.adopted(i, &c.delivery, &c.lease)));
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match (answered, first_error) {
            (false, Some(e)) => Err(e),
            (true, Some(e)) => {
                if let Ok(mut errors) = self.claim_errors.lock() {
                    // Until the dispatcher reads them: a few say it.
                    if errors.len() < MAX_CLAIM_ERRORS {
                        errors.push(e);
                    }
                }
                Ok(out)
            }
            _ => Ok(out),
        }
    }

    fn take(&self, delivery: &str, lease_ms: u64, now: Instant) -> Res<Option<Lease>> {
        let Some((home, row)) = self.home_of(delivery)? else {
            let at = self.default;
            self.hold(delivery, at, at);
            return self.stores[at].take(delivery, lease_ms, now);
        };
        let Some(lease) = self.stores[home].take(delivery, lease_ms, now)? else {
            return Ok(None);
        };
        Ok(self.adopted(home, &row, &lease).then_some(lease))
    }

    fn heartbeat(
        &self,
        delivery: &str,
        lease: &Lease,
        lease_ms: u64,
        now: Instant,
    ) -> Result<Lease, Fenced> {
        let (home, away) = self.placed(delivery)?;
        let extended = self.stores[home].heartbeat(delivery, lease, lease_ms, now)?;
        if away != home {
            self.stores[away].heartbeat(delivery, lease, lease_ms, now)?;
        }
        Ok(extended)
    }

    fn release(
        &self,
        delivery: &str,
        lease: &Lease,
        next: &Next,
        now: Instant,
    ) -> Result<(), Fenced> {
        let (home, away) = self.placed(delivery)?;
        if away != home {
            // The copy first: a crash between leaves the home row running,
            // and its rescue adopts the copy again.
            let _ = self.stores[away].release(delivery, lease, next, now);
        }
        let released = self.stores[home].release(delivery, lease, next, now);
        self.let_go(delivery);
        released
    }

    fn delivery(&self, id: &str) -> Res<Option<DeliveryRow>> {
        Ok(self.home_of(id)?.map(|(_, row)| row))
    }

    fn adopt(&self, row: &DeliveryRow, lease: &Lease) -> Res<Adopted> {
        self.stores[self.record_store(&row.action)].adopt(row, lease)
    }

    fn listen(&self, wake: Arc<dyn Fn() + Send + Sync>) -> Res<()> {
        self.each(|s| s.listen(wake.clone())).map(drop)
    }

    fn handled(&self, id: &str) -> Res<bool> {
        // A store that says it is handled settles it.
        let handled = self.found(|_, s| Ok(s.handled(id)?.then_some(())))?;
        Ok(handled.is_some())
    }

    fn tick(
        &self,
        schedule: &str,
        every_ms: u64,
        delivery: &NewDelivery,
        now: Instant,
    ) -> Res<bool> {
        let at = self.record_store(&delivery.action);
        self.stores[at].tick(schedule, every_ms, delivery, now)
    }

    fn events(&self, limit: usize) -> Res<Vec<Outboxed>> {
        let mut out: Vec<Outboxed> = self.all(|s| s.events(limit))?.concat();
        out.sort_by_key(|a| a.created_at);
        out.truncate(limit);
        Ok(out)
    }

    fn lead_schedules(&self) -> bool {
        self.stores[self.default].lead_schedules()
    }
}

impl RouteKeys for Several {
    fn claim_key(&self, request: &KeyRequest) -> Res<KeyClaim> {
        let at = self.record_store(&request.delivery.action);
        let claimed = self.stores[at].claim_key(request)?;
        if let KeyClaim::New { .. } = claimed {
            self.hold(&request.delivery.id, at, at);
        }
        Ok(claimed)
    }

    fn release_key(
        &self,
        route: &str,
        principal: &str,
        key: &str,
        lease: &Lease,
    ) -> Result<(), Fenced> {
        let mut answer = Err(Fenced::LeaseLost);
        for store in &self.stores {
            answer = store.release_key(route, principal, key, lease);
            if answer.is_ok() {
                break;
            }
        }
        answer
    }
}

impl Items for Several {
    fn items(&self, open_only: bool) -> Res<Vec<Item>> {
        // A delivery whose copy ended with it has an item in both stores.
        let mut out: Vec<Item> = Vec::new();
        for item in self.all(|s| s.items(open_only))?.concat() {
            if !out.iter().any(|i| i.delivery == item.delivery) {
                out.push(item);
            }
        }
        out.sort_by_key(|a| a.opened_at);
        Ok(out)
    }

    fn close_item(&self, delivery: &str, closed_by: &str, now: Instant) -> Res<bool> {
        let closed = self.all(|s| s.close_item(delivery, closed_by, now))?;
        Ok(closed.into_iter().any(|c| c))
    }
}

impl Operate for Several {
    fn list(&self, filter: &ListFilter) -> Res<Vec<DeliveryRow>> {
        let mut out = self.all(|s| s.list(filter))?.concat();
        out.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(a.id.cmp(&b.id)));
        out.truncate(filter.limit.max(1));
        Ok(out)
    }

    fn ids_starting(&self, prefix: &str, max: usize) -> Res<Vec<String>> {
        let mut out = self.all(|s| s.ids_starting(prefix, max))?.concat();
        out.sort();
        out.dedup();
        out.truncate(max);
        Ok(out)
    }

    fn retry(&self, id: &str, not_done: bool, by: &str, now: Instant) -> Res<Operated> {
        let Some((home, row)) = self.home_of(id)? else {
            return Ok(Operated::Refused(format!("there is no delivery {id}")));
        };
        let away = self.record_store(&row.action);
        self.let_go(id);
        if away != home && self.stores[away].delivery(id)?.is_some() {
            // The copy holds the record and its step in doubt.
            if let refused @ Operated::Refused(_) =
                self.stores[away].retry(id, not_done, by, now)?
            {
                return Ok(refused);
            }
            return self.stores[home].retry(id, false, by, now);
        }
        self.stores[home].retry(id, not_done, by, now)
    }

    fn abandon(
        &self,
        id: &str,
        reason: &str,
        by: &str,
        response: Option<&StoredResponse>,
        now: Instant,
    ) -> Res<Operated> {
        let Some((home, row)) = self.home_of(id)? else {
            return Ok(Operated::Refused(format!("there is no delivery {id}")));
        };
        let away = self.record_store(&row.action);
        self.let_go(id);
        if away != home && self.stores[away].delivery(id)?.is_some() {
            let copy = self.stores[away].abandon(id, reason, by, None, now)?;
            if let Operated::Refused(_) = copy {
                return Ok(copy);
            }
        }
        self.stores[home].abandon(id, reason, by, response, now)
    }

    fn unfinished(&self) -> Res<Vec<(String, StoredRecord)>> {
        let mut out = self.all(|s| s.unfinished())?.concat();
        out.sort_by(|a, b| a.1.started_at.cmp(&b.1.started_at).then(a.0.cmp(&b.0)));
        Ok(out)
    }

    fn prune(&self, now: Instant, keep: Retention, max: usize) -> Res<Pruned> {
        let mut sum = Pruned::default();
        for p in self.each(|s| s.prune(now, keep, max))? {
            sum.deliveries += p.deliveries;
            sum.events += p.events;
            sum.claims += p.claims;
            sum.answers += p.answers;
            sum.lapsed += p.lapsed;
        }
        Ok(sum)
    }

    fn forget(&self, id: &str) -> Res<Operated> {
        let Some((home, row)) = self.home_of(id)? else {
            return Ok(Operated::Refused(format!("there is no delivery {id}")));
        };
        let away = self.record_store(&row.action);
        self.let_go(id);
        let forgotten = self.stores[home].forget(id)?;
        if away != home && forgotten == Operated::Done {
            let _ = self.stores[away].forget(id)?;
        }
        Ok(forgotten)
    }
}

impl Store for Several {
    fn name(&self) -> &str {
        &self.name
    }

    /// Each store that answers, by its own name (a store that cannot be
    /// reached keeps its gauges as they were).
    fn unfinished_by_store(&self) -> Vec<(String, Res<jadpo_runtime::store::Unfinished>)> {
        self.stores
            .iter()
            .map(|store| (store.name().to_string(), store.unfinished()))
            .collect()
    }

    fn claim_errors(&self) -> Vec<StoreError> {
        self.claim_errors
            .lock()
            .map(|mut errors| std::mem::take(&mut *errors))
            .unwrap_or_default()
    }
}
