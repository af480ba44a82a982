//! The data the store interfaces carry: errors, leases, delivery states,
//! rows and writes, staged follow-ups, commits, deliveries, route key
//! claims and operator items. Plain data, no IO.

use std::fmt;

use jadpo_compiler::ir::EntityId;

use crate::value::{Instant, Value};

/// What went wrong in a store, named so an operator can act on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreError {
    /// The store's name in the app (`primary`).
    pub store: String,
    pub kind: ErrorKind,
    /// The database's own words, or ours.
    pub detail: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The database cannot be reached (a refused connection, a missing
    /// socket, a closed file).
    Unreachable,
    /// The disk or the database is full.
    Full,
    /// The database or its file is read-only.
    ReadOnly,
    /// The file is not a database, or the database is damaged.
    Corrupt,
    /// Another process holds the store (a second server on one SQLite
    /// file) or a lock timed out.
    Busy,
    /// The store's runtime tables are of a newer version than this jadpo
    /// knows.
    NewerSchema,
    /// The build's entities cannot be stored in the tables there (a
    /// changed type, a new required field on a table with rows).
    Incompatible,
    /// Anything else the database refused.
    Failed,
}

impl ErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Unreachable => "cannot be reached",
            ErrorKind::Full => "is full",
            ErrorKind::ReadOnly => "is read-only",
            ErrorKind::Corrupt => "is damaged or not a database",
            ErrorKind::Busy => "is busy",
            ErrorKind::NewerSchema => "was set up by a newer jadpo",
            ErrorKind::Incompatible => "does not fit this build",
            ErrorKind::Failed => "refused an operation",
        }
    }
}

impl StoreError {
    pub fn new(store: &str, kind: ErrorKind, detail: impl Into<String>) -> StoreError {
        StoreError {
            store: store.to_string(),
            kind,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "store `{}` {}: {}",
            self.store,
            self.kind.as_str(),
            self.detail
        )
    }
}

impl std::error::Error for StoreError {}

pub type Result<T> = std::result::Result<T, StoreError>;

/// A write the lease fences did not happen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fenced {
    /// Another runner took the delivery (a higher generation), or the
    /// delivery is gone: this runner stops before sending anything more.
    LeaseLost,
    Store(StoreError),
}

impl From<StoreError> for Fenced {
    fn from(e: StoreError) -> Fenced {
        Fenced::Store(e)
    }
}

/// A runner's claim on a delivery: the generation every record write and
/// the commit check, until when it holds (the store's clock), and how long
/// a lease is (each fenced write of a shared store extends it by that).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lease {
    pub generation: u64,
    pub until: Instant,
    pub ms: u64,
}

/// A delivery's state (design section 14.3): the follow-up unique states,
/// and the ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DeliveryState {
    Scheduled,
    Available,
    Running,
    Retryable,
    Completed,
    Failed,
    OutcomeUnknown,
    Diverged,
    RetryLater,
    Fault,
    Abandoned,
}

impl DeliveryState {
    pub const ALL: [DeliveryState; 11] = [
        DeliveryState::Scheduled,
        DeliveryState::Available,
        DeliveryState::Running,
        DeliveryState::Retryable,
        DeliveryState::Completed,
        DeliveryState::Failed,
        DeliveryState::OutcomeUnknown,
        DeliveryState::Diverged,
        DeliveryState::RetryLater,
        DeliveryState::Fault,
        DeliveryState::Abandoned,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Scheduled => "scheduled",
            DeliveryState::Available => "available",
            DeliveryState::Running => "running",
            DeliveryState::Retryable => "retryable",
            DeliveryState::Completed => "completed",
            DeliveryState::Failed => "failed",
            DeliveryState::OutcomeUnknown => "outcome_unknown",
            DeliveryState::Diverged => "diverged",
            DeliveryState::RetryLater => "retry_later",
            DeliveryState::Fault => "fault",
            DeliveryState::Abandoned => "abandoned",
        }
    }

    pub fn parse(text: &str) -> Option<DeliveryState> {
        DeliveryState::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// Waiting to be claimed (by its `run_at`).
    pub fn waiting(self) -> bool {
        matches!(
            self,
            DeliveryState::Scheduled | DeliveryState::Available | DeliveryState::Retryable
        )
    }

    /// An end: nothing runs it again unless an operator says so.
    pub fn ended(self) -> bool {
        !self.waiting() && self != DeliveryState::Running
    }
}

/// A committed row: its key (the entity's first field, canonical), a
/// version every committed change raises, and the row.
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

impl Write {
    pub fn entity(&self) -> EntityId {
        match self {
            Write::Create { entity, .. }
            | Write::Update { entity, .. }
            | Write::Delete { entity, .. } => *entity,
        }
    }
}

/// A follow-up staged with `emit`: an event inserted into the outbox at
/// commit, with a delivery for each of its subscribers.
#[derive(Clone, Debug, PartialEq)]
pub struct Follow {
    /// The event's id, derived from the committing delivery's id and the
    /// follow-up's place, so a rerun stages the same ids.
    pub id: String,
    /// `SubscriptionStarted`
    pub event: String,
    pub payload: Value,
    pub queue: String,
    pub priority: i64,
    pub max_attempts: i64,
    pub tags: Vec<String>,
    pub run_at: Instant,
    pub metadata: Value,
    /// The unique key (hex) and the states it blocks in; `None` when the
    /// follow-up is not unique.
    pub unique: Option<(String, Vec<DeliveryState>)>,
    /// One delivery per subscriber of the event (filled in by the runtime
    /// from the plan).
    pub deliveries: Vec<NewDelivery>,
}

/// Where a delivery comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A subscriber of an event.
    Event { event: String },
    /// A route request under a key (route template, principal, key).
    Route {
        route: String,
        principal: String,
        key: String,
    },
    /// A schedule's tick.
    Schedule { name: String, tick: Instant },
    /// Run by name (a test's `call`, an operator).
    Direct,
}

impl Source {
    /// `event e_...`, `route POST /x`, `schedule nightly 2026-...`, `direct`.
    pub fn text(&self) -> String {
        match self {
            Source::Event { event } => format!("event {event}"),
            Source::Route { route, .. } => format!("route {route}"),
            Source::Schedule { name, tick } => {
                format!("schedule {name} {}", crate::value::instant_text(*tick))
            }
            Source::Direct => "direct".to_string(),
        }
    }
}

/// A delivery to insert.
#[derive(Clone, Debug, PartialEq)]
pub struct NewDelivery {
    /// `d_...` (a subscriber's), `r_...` (a route's), `s_<name>_<tick>`
    /// (a schedule's) or a test's id. Ids never repeat: step keys derive
    /// from them.
    pub id: String,
    pub source: Source,
    /// The action it runs (`subscribe`).
    pub action: String,
    /// A subscriber's name.
    pub subscriber: Option<String>,
    pub queue: String,
    pub priority: i64,
    pub tags: Vec<String>,
    pub max_attempts: u32,
    pub run_at: Instant,
    /// The entry's values as canonical JSON: the event's payload, or a
    /// route's input and path values.
    pub args: Vec<u8>,
    pub build_id: String,
    /// The unique key of the event it delivers, and the states it blocks
    /// in.
    pub unique: Option<(String, Vec<DeliveryState>)>,
}

/// A step as a delivery row keeps it after its record is gone: what an
/// operator's listing shows, without answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepSummary {
    pub position: u32,
    pub operation: String,
    /// `answered`, `replayed`, `in doubt`, `sent`, `too large`.
    pub state: String,
    pub sent_at: Instant,
    /// The provider key, when the step is keyed.
    pub key: Option<String>,
}

/// A delivery as a store holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct DeliveryRow {
    pub id: String,
    pub source: Source,
    pub action: String,
    pub subscriber: Option<String>,
    pub queue: String,
    pub priority: i64,
    pub tags: Vec<String>,
    pub max_attempts: u32,
    pub state: DeliveryState,
    pub run_at: Instant,
    /// Attempts counted (rescues and crashes are not).
    pub attempt: u32,
    pub rescues: u32,
    pub lease_generation: u64,
    pub lease_until: Option<Instant>,
    pub runner: Option<String>,
    pub build_id: String,
    pub args: Vec<u8>,
    pub created_at: Instant,
    pub ended_at: Option<Instant>,
    /// Why it last did not commit.
    pub reason: Option<String>,
    /// Its steps, kept with the row after the record is removed.
    pub steps: Vec<StepSummary>,
}

/// Rescues that end a delivery `fault` (design section 17): its runner
/// stopped this many times.
pub const MAX_RESCUES: u32 = 5;

/// Why a delivery rescued [`MAX_RESCUES`] times ended.
pub const RESCUES_WHY: &str = "its runner stopped 5 times";

/// The queue of a route's deliveries: they run in their requests, and no
/// dispatcher that serves "all queues" claims them.
pub const ROUTE_QUEUE: &str = "@route";

/// The queue of deliveries run by name (a test's `call`): run where they
/// are asked for, never claimed.
pub const DIRECT_QUEUE: &str = "@direct";

/// What a dispatcher asks for.
#[derive(Clone, Debug)]
pub struct ClaimRequest {
    /// The queues it serves; empty for all but the runtime's own (`@...`).
    pub queues: Vec<String>,
    /// Free slots.
    pub max: usize,
    pub lease_ms: u64,
    /// Who claims (for `deliveries list`).
    pub runner: String,
    /// The claimer's clock; a store with a clock of its own (Postgres)
    /// uses that instead.
    pub now: Instant,
}

/// A claimed delivery: waiting and due, or running with a lapsed lease (a
/// rescue, which does not count as an attempt).
#[derive(Clone, Debug, PartialEq)]
pub struct Claimed {
    pub delivery: DeliveryRow,
    pub lease: Lease,
    pub rescued: bool,
}

/// How an attempt that did not commit leaves its delivery.
#[derive(Clone, Debug, PartialEq)]
pub enum Next {
    /// Retryable at `run_at`; `counted` when the attempt counts against
    /// `max_attempts` (a crash's or a shutdown's does not).
    Retry {
        run_at: Instant,
        why: String,
        counted: bool,
        steps: Vec<StepSummary>,
    },
    /// An end other than `completed`: an operator item is opened in the
    /// same transaction, and a route's claim stores `response` (a failure's
    /// answer) or stays open.
    End {
        state: DeliveryState,
        why: String,
        steps: Vec<StepSummary>,
        response: Option<StoredResponse>,
    },
    /// `completed` by a commit that landed in another store (the
    /// delivery's record store, design section 14.5): the delivery's row
    /// copies it with its steps, and no item is opened.
    Completed { steps: Vec<StepSummary> },
}

/// How a store took in a delivery whose row lives in another store
/// (design section 14.5), from [`Queue::adopt`](super::Queue::adopt).
#[derive(Clone, Debug, PartialEq)]
pub enum Adopted {
    /// Its copy runs here at the claim's generation: every fenced write
    /// here checks it.
    Running,
    /// Its commit landed here already: the row it came from is to be
    /// completed with these steps, never run again.
    Handled(Vec<StepSummary>),
    /// A later claim adopted it: this one holds nothing.
    Stale,
}

/// The queue no dispatcher serves, holding the copies of deliveries
/// adopted from other stores.
pub const ADOPTED_QUEUE: &str = "@adopted";

/// A route's answer, stored with its claim and replayed byte for byte.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// Encrypted with the steps key (nonce ‖ ciphertext).
    pub body: Vec<u8>,
}

/// The key a route request claims.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyRequest {
    /// The route's method and template: `POST /subscriptions`.
    pub route: String,
    /// The authenticated principal, or `-` for `auth: none`.
    pub principal: String,
    pub key: String,
    /// BLAKE3 of the canonical typed input and path values.
    pub fingerprint: [u8; 32],
    /// The delivery to create when the key is new.
    pub delivery: NewDelivery,
    pub lease_ms: u64,
    pub now: Instant,
}

/// What a route's key claim found.
#[derive(Clone, Debug, PartialEq)]
pub enum KeyClaim {
    /// A new key: its delivery was inserted and is leased to the caller.
    New { lease: Lease },
    /// Done before with the same request: the stored answer.
    Replay(StoredResponse),
    /// Another request with the key is running under a live lease.
    InUse,
    /// Running, but its lease lapsed: the caller takes it over with a new
    /// generation and resumes the same delivery from its record.
    TakenOver { delivery: String, lease: Lease },
    /// The key was used with another request.
    Reused,
    /// Its run ended without an answer to store (held for an operator):
    /// it is not run again; the request answers `needs_operator`.
    Ended {
        delivery: String,
        state: DeliveryState,
    },
}

/// An operator item: a record that ended any way but a commit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    pub delivery: String,
    pub outcome: DeliveryState,
    pub reason: String,
    pub opened_at: Instant,
    pub answers_dropped_at: Option<Instant>,
    pub closed_at: Option<Instant>,
    /// `retry by alice`, `abandon by bob: reason`.
    pub closed_by: Option<String>,
}

/// Everything an action's commit applies, in one transaction.
#[derive(Clone, Debug, PartialEq)]
pub struct Commit {
    pub delivery: String,
    /// When it commits: a follow-up whose `run_at` is later is `scheduled`.
    pub at: Instant,
    pub writes: Vec<Write>,
    pub follow_ups: Vec<Follow>,
    /// The delivery's steps, kept with its row once the record is gone.
    pub steps: Vec<StepSummary>,
    /// A route's answer, stored with its key claim.
    pub response: Option<StoredResponse>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommitError {
    /// Another delivery committed first (a row changed, or a key now
    /// exists).
    Conflict,
    LeaseLost,
    Store(StoreError),
}

impl From<StoreError> for CommitError {
    fn from(e: StoreError) -> CommitError {
        CommitError::Store(e)
    }
}

/// Which deliveries an operator lists.
#[derive(Clone, Debug, Default)]
pub struct ListFilter {
    /// Only those not done: any state but `completed` and `abandoned`.
    pub not_done: bool,
    pub state: Option<DeliveryState>,
    pub action: Option<String>,
    /// Created at or after.
    pub since: Option<Instant>,
    pub limit: usize,
}

/// How long things are kept (design section 20).
#[derive(Clone, Copy, Debug)]
pub struct Retention {
    /// Completed deliveries, their events and answered route claims: 24 h.
    pub completed_ms: u64,
    /// An operator item's answers: 30 days.
    pub answers_ms: u64,
    /// A route claim still open (its client never came back): 24 h, then
    /// its record becomes an operator item and the key is free again.
    pub open_claims_ms: u64,
}

impl Default for Retention {
    fn default() -> Retention {
        Retention {
            completed_ms: 24 * 3600 * 1000,
            answers_ms: 30 * 24 * 3600 * 1000,
            open_claims_ms: 24 * 3600 * 1000,
        }
    }
}

/// What one prune removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pruned {
    pub deliveries: usize,
    pub events: usize,
    pub claims: usize,
    pub answers: usize,
    /// Open route claims that lapsed.
    pub lapsed: usize,
}

/// Why a lapsed claim's delivery ended.
pub const LAPSED_WHY: &str =
    "its route's client did not send the request again within 24 h: the claim lapsed and the key is free";

impl Pruned {
    pub fn total(&self) -> usize {
        self.deliveries + self.events + self.claims + self.answers + self.lapsed
    }
}

/// `now` less `ms`.
pub fn before(now: Instant, ms: u64) -> Instant {
    Instant(now.0 - i128::from(ms) * 1_000_000)
}

/// What an operator's command did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operated {
    Done,
    /// Refused, and why (`d_7Q2 is completed: there is nothing to retry`).
    Refused(String),
}

impl ListFilter {
    /// Whether a delivery passes.
    pub fn passes(&self, d: &DeliveryRow) -> bool {
        let done = matches!(d.state, DeliveryState::Completed | DeliveryState::Abandoned);
        // An adopted copy is another store's delivery, listed there.
        d.queue != ADOPTED_QUEUE
            && !(self.not_done && done)
            && self.state.is_none_or(|s| s == d.state)
            && self.action.as_ref().is_none_or(|a| *a == d.action)
            && self.since.is_none_or(|t| d.created_at >= t)
    }
}

/// Why a delivery cannot be retried now, or `None` when it can.
pub fn retry_refusal(d: &DeliveryRow, in_doubt: Option<u32>, not_done: bool) -> Option<String> {
    let id = &d.id;
    if d.state == DeliveryState::Completed {
        return Some(format!("{id} is completed: there is nothing to retry"));
    }
    if !d.state.ended() {
        return Some(format!(
            "{id} is {}: only an ended delivery is retried (another operator may have retried it)",
            d.state.as_str()
        ));
    }
    match (in_doubt, not_done) {
        (None, true) => Some(format!(
            "{id} has no step in doubt: --not-done is for a step whose outcome is unknown"
        )),
        (Some(step), false) if d.state == DeliveryState::OutcomeUnknown => Some(format!(
            "step {step} of {id} is in doubt: check the provider, then `jadpo deliveries retry {id} --not-done` if it did not act, or `jadpo deliveries abandon {id}` if it did"
        )),
        _ => None,
    }
}

/// Why a delivery cannot be abandoned now, or `None`.
pub fn abandon_refusal(d: &DeliveryRow, now: Instant) -> Option<String> {
    let id = &d.id;
    match d.state {
        DeliveryState::Completed => Some(format!("{id} is completed: there is nothing to abandon")),
        DeliveryState::Abandoned => Some(format!("{id} is abandoned already")),
        DeliveryState::Running if d.lease_until.is_some_and(|u| u > now) => Some(format!(
            "{id} is running under a live lease: wait for its attempt to end"
        )),
        _ => None,
    }
}

/// An inserted event, as the outbox holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct Outboxed {
    pub follow: Follow,
    /// The committing delivery.
    pub emitted_by: String,
    pub created_at: Instant,
}
