//! The store interfaces the engine runs on (design `server.md` sections
//! 12, 14, 17 and 19), narrow and fallible: records and steps, rows, one
//! commit transaction, the queue (deliveries, unique claims, handled
//! markers), route key claims, and operator items. Every method returns a
//! `Result`: a store that cannot answer says so (and the attempt ends
//! retry-later), never "no record". Every record write and every commit is
//! fenced by the runner's lease generation; a stale generation writes
//! nothing.
//!
//! [`MemStore`] implements them in memory (the test runner's store); the
//! server's SQLite and Postgres stores implement them on a database, and
//! one conformance suite holds all three to the same behaviour.
//! [`schema`] says how an app's entities become tables, shared by the SQL
//! stores. Nothing here does IO.

mod mem;
pub mod schema;
mod types;

pub use mem::{in_doubt, next_generation, MemStore};
pub use types::*;

use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::EntityId;

use crate::record::{StepRow, StoredRecord};
use crate::value::{Instant, Value};

/// A delivery's record: a header and one row per step.
pub trait Records {
    /// The delivery's record, or `None` when it has none.
    fn record(&self, delivery: &str) -> Result<Option<StoredRecord>>;

    /// Writes step `step.position` (the record's header with it, when the
    /// record is new) and removes any later step, in one short transaction
    /// fenced by `lease`.
    fn put_step(
        &self,
        delivery: &str,
        lease: &Lease,
        record: &StoredRecord,
        step: &StepRow,
    ) -> std::result::Result<(), Fenced>;

    /// Removes the steps from `position` on (a send the provider refused
    /// without acting never happened), fenced by `lease`.
    fn truncate_steps(
        &self,
        delivery: &str,
        lease: &Lease,
        position: u32,
    ) -> std::result::Result<(), Fenced>;
}

/// Committed rows.
pub trait Rows {
    /// The rows of `entity` whose fields equal every condition of
    /// `filter`, in key order.
    fn select(&self, entity: EntityId, filter: &[(Name, Value)]) -> Result<Vec<Row>>;
}

/// The commit of an action.
pub trait Commits {
    /// Applies a commit all or nothing: its writes (each checked against
    /// the version it read), its events with their deliveries (a duplicate
    /// unique key is skipped), the record's removal, the handled marker,
    /// the delivery `completed` with its steps, and a route's stored
    /// answer; fenced by `lease`.
    fn commit(&self, commit: &Commit, lease: &Lease) -> std::result::Result<(), CommitError>;
}

/// Deliveries: inserted, claimed under leases, released, looked up.
pub trait Queue {
    /// Inserts deliveries (a schedule's tick, a direct run); one whose id
    /// exists is skipped, so a tick inserted twice is one delivery.
    fn enqueue(&self, deliveries: &[NewDelivery], now: Instant) -> Result<()>;

    /// Claims up to `max` deliveries of the queues: waiting ones due by
    /// `run_at`, and running ones whose lease lapsed (a rescue), in
    /// (priority, run_at, id) order, each with its generation raised and a
    /// new lease. A waiting one counts an attempt, a rescue does not.
    fn claim(&self, request: &ClaimRequest) -> Result<Vec<Claimed>>;

    /// Takes one delivery's lease with a raised generation, whatever holds
    /// it (a route request taking over, an operator's retry, a test).
    /// `None` when there is no such delivery.
    fn take(&self, delivery: &str, lease_ms: u64, now: Instant) -> Result<Option<Lease>>;

    /// Extends a lease while its attempt waits on a provider.
    fn heartbeat(
        &self,
        delivery: &str,
        lease: &Lease,
        lease_ms: u64,
        now: Instant,
    ) -> std::result::Result<Lease, Fenced>;

    /// Ends an attempt that did not commit: retryable, or ended (with an
    /// operator item), fenced by `lease`.
    fn release(
        &self,
        delivery: &str,
        lease: &Lease,
        next: &Next,
        now: Instant,
    ) -> std::result::Result<(), Fenced>;

    fn delivery(&self, id: &str) -> Result<Option<DeliveryRow>>;

    /// Takes in `row`, claimed in another store under `lease`, whose action
    /// keeps its record here (design section 14.5): a copy in
    /// [`ADOPTED_QUEUE`], running at the lease's generation. A copy at that
    /// generation or later is left as it is ([`Adopted::Stale`]); a
    /// completed copy says the commit landed ([`Adopted::Handled`]).
    fn adopt(&self, row: &DeliveryRow, lease: &Lease) -> Result<Adopted>;

    /// Calls `wake` whenever deliveries a dispatcher may claim are inserted
    /// by another process (Postgres: LISTEN/NOTIFY). A store one process
    /// owns does nothing: its engine wakes its own runners.
    fn listen(&self, _wake: std::sync::Arc<dyn Fn() + Send + Sync>) -> Result<()> {
        Ok(())
    }

    /// Whether the delivery's commit landed (the handled marker: the
    /// truth the delivery row copies).
    fn handled(&self, id: &str) -> Result<bool>;

    /// A schedule's tick (design section 18): in one transaction, moves
    /// the schedule's last tick to `delivery`'s `run_at` where it is
    /// earlier (or records the schedule), and inserts the delivery.
    /// `false` when the tick was taken already (another process, or this
    /// one before): nothing is inserted.
    fn tick(
        &self,
        schedule: &str,
        every_ms: u64,
        delivery: &NewDelivery,
        now: Instant,
    ) -> Result<bool>;

    /// The events inserted, oldest first, at most `limit`, each with its
    /// deliveries in id order.
    fn events(&self, limit: usize) -> Result<Vec<Outboxed>>;

    /// Whether this process leads the schedules (design section 18): only
    /// the leader offers ticks. A store one process owns always leads; a
    /// shared one elects one process at a time, and another takes over
    /// once the leader is gone.
    fn lead_schedules(&self) -> bool {
        true
    }
}

/// Idempotency-Key claims of routes.
pub trait RouteKeys {
    /// Claims (route, principal, key) for a request (design section 16).
    fn claim_key(&self, request: &KeyRequest) -> Result<KeyClaim>;

    /// An interrupted request gives its claim up: its lease lapses now, so
    /// a retry takes the delivery over.
    fn release_key(
        &self,
        route: &str,
        principal: &str,
        key: &str,
        lease: &Lease,
    ) -> std::result::Result<(), Fenced>;
}

/// Operator items.
pub trait Items {
    /// The items, open ones only when `open_only`, oldest first.
    fn items(&self, open_only: bool) -> Result<Vec<Item>>;

    /// Closes a delivery's open item, saying who did what; whether one was
    /// open.
    fn close_item(&self, delivery: &str, closed_by: &str, now: Instant) -> Result<bool>;
}

/// What operators do (design section 19): list deliveries, put an ended
/// one back to run, abandon one, and read the records still unfinished.
/// Each is one transaction; a refusal says why in the operator's terms.
pub trait Operate {
    /// Deliveries matching `filter`, newest first.
    fn list(&self, filter: &ListFilter) -> Result<Vec<DeliveryRow>>;

    /// Delivery ids starting with `prefix`, at most `max`.
    fn ids_starting(&self, prefix: &str, max: usize) -> Result<Vec<String>>;

    /// Puts an ended delivery (any end but `completed`) back to
    /// `available` with a new generation; its record replays. `not_done`:
    /// its step in doubt was checked and did not act, so it is sent again
    /// under the next key generation. Closes its item with `by`.
    fn retry(&self, id: &str, not_done: bool, by: &str, now: Instant) -> Result<Operated>;

    /// Ends a delivery `abandoned`: the handled marker is set, the step
    /// list kept, a route's open claim stores `response`, its item closes.
    fn abandon(
        &self,
        id: &str,
        reason: &str,
        by: &str,
        response: Option<&StoredResponse>,
        now: Instant,
    ) -> Result<Operated>;

    /// Every record not yet committed, with its delivery's id, oldest
    /// first.
    fn unfinished(&self) -> Result<Vec<(String, StoredRecord)>>;

    /// Retention (design section 20), at most `max` rows of each kind per
    /// call: completed deliveries (with their handled markers) and
    /// answered route claims older than `keep`, events none of whose
    /// deliveries is left, and the answers (the records) of operator items
    /// opened more than `answers` ago, their step lists kept on the
    /// delivery.
    fn prune(&self, now: Instant, keep: Retention, max: usize) -> Result<Pruned>;

    /// Removes an ended delivery with its record, item and marker (`jadpo
    /// deliveries forget`).
    fn forget(&self, id: &str) -> Result<Operated>;
}

/// What an attempt reads and writes: its record, rows, its commit.
pub trait RunStore: Records + Rows + Commits {}

impl<T: Records + Rows + Commits + ?Sized> RunStore for T {}

/// Unfinished records, each with its delivery's id.
pub type Unfinished = Vec<(String, StoredRecord)>;

/// One store of an app, whole.
pub trait Store: RunStore + Queue + RouteKeys + Items + Operate + Send + Sync {
    /// The store's name in the app (`primary`).
    fn name(&self) -> &str;

    /// [`Operate::unfinished`] by store, each with its name: an app's
    /// several stores each apart, one that cannot be read with its error.
    fn unfinished_by_store(&self) -> Vec<(String, Result<Unfinished>)> {
        vec![(self.name().to_string(), self.unfinished())]
    }

    /// The errors of stores that did not answer a claim another store
    /// answered (an app's several stores: the claim went on without
    /// them), each given once.
    fn claim_errors(&self) -> Vec<StoreError> {
        Vec::new()
    }
}

/// Whether a row's fields equal every condition.
pub fn matches(row: &Value, filter: &[(Name, Value)]) -> bool {
    let Some(r) = row.as_record() else {
        return filter.is_empty();
    };
    filter.iter().all(|(name, v)| r.get(*name) == *v)
}
