//! A delivery: one action run from its entry. [`Runtime::attempt`] runs one
//! attempt under a lease the caller hands in and says how it went:
//! committed, again (with why, and by when a keyed step in doubt must be
//! sent again), or ended. The server's dispatcher and routes call it once
//! per claim; [`Runtime::deliver`] is the test runner's loop over it: at
//! most `attempts` attempts, each later one `retry_after` after the one
//! before, a crash resuming at once at the same clock without counting,
//! and every end but a commit released to the queue, which opens an
//! operator item.

use std::collections::BTreeMap;

use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::{ActionId, Program};
use jadpo_plan::{ActionPlan, EntryPlan, Plan, Point};

use crate::attempt::{short, Attempt, CrashAt, Seen, Setting, StepsBySite};
use crate::eval::{Budget, Divergence, Failed, Flow, Interp, Stop};
use crate::provider::Provider;
use crate::record::{Mode, RowState, Sealer, StoredRecord, TEST_KEY};
use crate::store::{
    Commit, CommitError, DeliveryState, Follow, Lease, NewDelivery, Next, Queue, RunStore, Source,
    StepSummary, StoredResponse, DIRECT_QUEUE,
};
use crate::value::{Instant, Value};

/// Expressions one attempt may evaluate: far more than any real action
/// needs, and a bound on a recursion that does not end.
pub const FUEL: u64 = 10_000_000;

/// A retry is never scheduled later than this before a keyed step's
/// window (less its margin) ends (design section 17).
const WINDOW_SLACK_MS: i128 = 5 * 60 * 1000;

/// A program with its plan, ready to run deliveries.
pub struct Runtime<'p> {
    pub program: &'p Program,
    pub plan: &'p Plan,
    /// Each action's plan, by the action's id.
    by_action: BTreeMap<ActionId, usize>,
    /// Each planned action's steps by call site, with the action calls
    /// leading there.
    steps: Vec<StepsBySite>,
    /// Each event's subscribers: (subscriber, action), in plan order.
    subscribers: BTreeMap<String, Vec<(String, String)>>,
    /// The steps key before a rotation, which still opens what it sealed.
    previous_key: Option<String>,
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Delivery {
    /// A subscriber's `d_...`, a route's `r_...`, or in a test
    /// `test:<test name>:<n>` (with `:<subscriber>` for a `deliver`).
    pub id: String,
    pub action: ActionId,
    pub args: Vec<Value>,
    pub config: BTreeMap<Name, Value>,
    /// The first attempt's start.
    pub start: Instant,
    pub attempts: u32,
    pub retry_after_ms: i64,
    /// The bytes of text its code may compute over all its attempts, and
    /// when it must stop (a test's time limit); its fuel is [`FUEL`] per
    /// attempt.
    pub limits: Limits,
}

/// What a delivery may spend beyond each attempt's [`FUEL`].
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub bytes: u64,
    pub deadline: Option<std::time::Instant>,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            bytes: crate::eval::MAX_COMPUTED_BYTES,
            deadline: None,
        }
    }
}

/// How a delivery ended.
#[derive(Clone, Debug, PartialEq)]
pub enum End {
    Completed(Value),
    Failed(Failed),
    /// Parked as outcome_unknown at a step.
    Parked {
        step: u32,
        why: String,
    },
    /// Held as diverged.
    Held(Divergence),
    /// Still retry-later after the last attempt.
    RetryLater(String),
    Faulted(String),
    /// Another runner took the delivery's lease.
    LeaseLost,
}

impl End {
    /// `completed`, `failed`, `outcome_unknown`, `diverged`, `retry_later`,
    /// `fault`, `lease_lost`.
    pub fn word(&self) -> &'static str {
        match self {
            End::Completed(_) => "completed",
            End::Failed(_) => "failed",
            End::Parked { .. } => "outcome_unknown",
            End::Held(_) => "diverged",
            End::RetryLater(_) => "retry_later",
            End::Faulted(_) => "fault",
            End::LeaseLost => "lease_lost",
        }
    }

    /// The delivery state it leaves (`None` for a lost lease: the new
    /// runner's to say).
    pub fn state(&self) -> Option<DeliveryState> {
        Some(match self {
            End::Completed(_) => DeliveryState::Completed,
            End::Failed(_) => DeliveryState::Failed,
            End::Parked { .. } => DeliveryState::OutcomeUnknown,
            End::Held(_) => DeliveryState::Diverged,
            End::RetryLater(_) => DeliveryState::RetryLater,
            End::Faulted(_) => DeliveryState::Fault,
            End::LeaseLost => return None,
        })
    }
}

/// One line of a delivery's step listing, in the seed's shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedStep {
    pub position: u32,
    pub operation: String,
    /// `answered`, `replayed`, `in doubt`, `sent` or `too large`.
    pub state: &'static str,
    pub sent_at: Instant,
    /// The answer's `id` (else its first field, else its type), the
    /// failure it answered, the step's key, or an answer's size.
    pub detail: String,
    /// The answer as this run saw it (canonical JSON, cut), for a test's
    /// crash-run listings; empty when it did not answer. Never shown by
    /// the server's listings, which carry no answers.
    pub answer: String,
    /// The provider key of a keyed step.
    pub key: Option<String>,
}

impl ListedStep {
    /// What a delivery row keeps of the step: no answers.
    pub fn summary(&self) -> StepSummary {
        StepSummary {
            position: self.position,
            operation: self.operation.clone(),
            state: self.state.to_string(),
            sent_at: self.sent_at,
            key: self.key.clone(),
        }
    }
}

/// Makes a route's stored answer from its action's result and the ids of
/// the events its commit inserts.
pub type Respond<'r> = dyn FnMut(&Value, &[String]) -> StoredResponse + 'r;

/// How one attempt went.
#[derive(Clone, Debug, PartialEq)]
pub enum Attempted {
    /// Its commit landed: the delivery is completed.
    Committed(Value),
    /// It ended before its end: a later attempt goes on. `crashed` when a
    /// planned crash stopped it (that attempt does not count, and the next
    /// starts at once). `not_after`: when a keyed step is in doubt, the
    /// latest a retry may start and still send it under the same key.
    Again {
        why: String,
        crashed: bool,
        not_after: Option<Instant>,
    },
    /// It ended the delivery other than by a commit, or lost its lease.
    Ended(End),
}

/// What a commit applied, for a listing: the entities written (once per
/// write) and the events inserted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    pub writes: Vec<String>,
    pub events: Vec<String>,
}

/// One attempt's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct AttemptOutcome {
    pub attempted: Attempted,
    /// What its commit applied, when it committed.
    pub applied: Option<Applied>,
    /// The delivery's steps as it leaves them.
    pub steps: Vec<ListedStep>,
    /// The bytes of computed text left for later attempts.
    pub bytes_left: u64,
}

/// A delivery run to its end by [`Runtime::deliver`].
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub end: End,
    pub steps: Vec<ListedStep>,
    /// Attempts made, crashed ones not counted.
    pub attempts: u32,
    /// When the last attempt started.
    pub last_start: Instant,
    /// Whether the asked-for crash struck.
    pub crashed: bool,
    /// The bytes of computed text its attempts left unspent.
    pub bytes_left: u64,
}

impl<'p> Runtime<'p> {
    pub fn new(program: &'p Program, plan: &'p Plan) -> Self {
        let mut by_action = BTreeMap::new();
        let mut steps = Vec::with_capacity(plan.actions.len());
        let mut subscribers: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
        for (i, a) in plan.actions.iter().enumerate() {
            if let Some(id) = a.action {
                by_action.insert(id, i);
            }
            let mut by_site = StepsBySite::new();
            for (j, s) in a.steps.iter().enumerate() {
                by_site
                    .entry(s.call)
                    .or_default()
                    .push((s.via_calls.clone(), j));
            }
            steps.push(by_site);
            for e in &a.entries {
                if let EntryPlan::Subscriber {
                    label,
                    event: Some(event),
                    ..
                } = e
                {
                    let name = label.strip_prefix("subscriber ").unwrap_or(label);
                    subscribers
                        .entry(event.clone())
                        .or_default()
                        .push((name.to_string(), a.name.clone()));
                }
            }
        }
        Runtime {
            program,
            plan,
            by_action,
            steps,
            subscribers,
            previous_key: None,
        }
    }

    /// Opens answers sealed under `previous` too (a steps key rotation).
    pub fn with_previous_key(mut self, previous: Option<String>) -> Runtime<'p> {
        self.previous_key = previous.filter(|p| !p.is_empty());
        self
    }

    pub fn previous_key(&self) -> Option<&str> {
        self.previous_key.as_deref()
    }

    pub fn action_plan(&self, action: ActionId) -> Option<&'p ActionPlan> {
        self.by_action
            .get(&action)
            .and_then(|i| self.plan.actions.get(*i))
    }

    /// The arguments an entry point's `run:` gives its action, over the
    /// entry's values (`event`, or a route's `input` and `path`).
    pub fn entry_args(&self, entry: usize, values: Vec<Value>) -> Result<Vec<Value>, String> {
        let Some(e) = self.program.entries.get(entry) else {
            return Err("no such entry point".into());
        };
        crate::eval::eval_args(self.program, &e.run_args, values)
    }

    /// Runs one attempt of `d` under `lease`, starting at `start`, with at
    /// most `bytes` of computed text. `crash` strikes once, at the first
    /// send of its step that reaches its point.
    #[allow(clippy::too_many_arguments)]
    pub fn attempt(
        &self,
        d: &Delivery,
        store: &dyn RunStore,
        provider: &mut dyn Provider,
        lease: Lease,
        start: Instant,
        crash: &mut Option<CrashAt>,
        bytes: u64,
    ) -> AttemptOutcome {
        self.attempt_with(d, store, provider, lease, start, crash, bytes, None)
    }

    /// [`Runtime::attempt`] of a route's run: `respond` makes the answer
    /// from the action's result and the ids of the events it inserts, and
    /// the commit stores it with the writes.
    #[allow(clippy::too_many_arguments)]
    pub fn attempt_with(
        &self,
        d: &Delivery,
        store: &dyn RunStore,
        provider: &mut dyn Provider,
        lease: Lease,
        start: Instant,
        crash: &mut Option<CrashAt>,
        bytes: u64,
        respond: Option<&mut Respond<'_>>,
    ) -> AttemptOutcome {
        let ended = |end: End| AttemptOutcome {
            attempted: Attempted::Ended(end),
            applied: None,
            steps: Vec::new(),
            bytes_left: bytes,
        };
        let Some(index) = self.by_action.get(&d.action).copied() else {
            let name = &self.program.action(d.action).qualified;
            return ended(End::Faulted(format!("`{name}` is not planned")));
        };
        let Some(plan) = self.plan.actions.get(index) else {
            return ended(End::Faulted("no plan".into()));
        };
        let sealer = Sealer::rotating(
            &secret(self.program, &d.config),
            self.previous_key.as_deref(),
        );
        let empty = BTreeMap::new();
        let setting = Setting {
            program: self.program,
            plan,
            build_id: &self.plan.build_id,
            steps: self.steps.get(index).unwrap_or(&empty),
            delivery: &d.id,
            config: &d.config,
            sealer: &sealer,
            mode: if plan.multi_step {
                Mode::Steps
            } else {
                Mode::Dispatch
            },
        };
        let mut attempt = Attempt::new(&setting, store, provider, lease, start, crash);
        let mut bytes = bytes;
        let attempted = self.run_one(&mut attempt, d, &mut bytes, respond);
        let attempted = match attempted {
            Attempted::Again {
                why,
                crashed,
                not_after: None,
            } => Attempted::Again {
                not_after: window_end(&attempt, plan),
                why,
                crashed: crashed || attempt.crashed,
            },
            other => other,
        };
        AttemptOutcome {
            applied: matches!(attempted, Attempted::Committed(_)).then(|| attempt.applied.clone()),
            attempted,
            steps: listing(&attempt),
            bytes_left: bytes,
        }
    }

    fn run_one(
        &self,
        a: &mut Attempt<'_, '_>,
        d: &Delivery,
        bytes: &mut u64,
        respond: Option<&mut Respond<'_>>,
    ) -> Attempted {
        if let Err(flow) = a.check_record() {
            return stopped(a, flow);
        }
        let program = a.s.program;
        let budget = Budget {
            fuel: FUEL,
            bytes: *bytes,
            deadline: d.limits.deadline,
        };
        let result = {
            let mut interp = Interp::new(program, &mut *a, budget);
            let result = interp.run(d.action, d.args.clone());
            *bytes = interp.budget.bytes;
            result
        };
        let result = match result {
            Ok(v) => a.check_all_replayed().map(|()| v),
            Err(Flow::Fail(f)) if !is_transient(program, &f) => {
                a.check_all_replayed().and(Err(Flow::Fail(f)))
            }
            other => other,
        };
        match result {
            Ok(v) | Err(Flow::Return(v)) => self.commit(a, v, respond),
            Err(flow) => stopped(a, flow),
        }
    }

    fn commit(
        &self,
        a: &mut Attempt<'_, '_>,
        v: Value,
        respond: Option<&mut Respond<'_>>,
    ) -> Attempted {
        let follow_ups = self.with_deliveries(a.s.delivery, std::mem::take(&mut a.follow_ups));
        let response = respond.map(|r| {
            let ids: Vec<String> = follow_ups.iter().map(|f| f.id.clone()).collect();
            r(&v, &ids)
        });
        let c = Commit {
            delivery: a.s.delivery.to_string(),
            at: a.started,
            writes: a.writes(),
            follow_ups,
            steps: listing(a).iter().map(ListedStep::summary).collect(),
            response,
        };
        a.applied = Applied {
            writes: c
                .writes
                .iter()
                .map(|w| self.program.entity(w.entity()).qualified.clone())
                .collect(),
            events: c.follow_ups.iter().map(|f| f.event.clone()).collect(),
        };
        match a.store.commit(&c, &a.lease) {
            Ok(()) => Attempted::Committed(v),
            Err(CommitError::Conflict) => Attempted::Again {
                why: "the commit met a conflict: another delivery committed first".into(),
                crashed: false,
                not_after: None,
            },
            Err(CommitError::LeaseLost) => Attempted::Ended(End::LeaseLost),
            Err(CommitError::Store(e)) => Attempted::Again {
                why: format!("the commit did not land: {e}"),
                crashed: false,
                not_after: None,
            },
        }
    }

    /// The follow-ups with their ids and one delivery per subscriber of
    /// their event. Ids derive from the committing delivery's id and the
    /// follow-up's place, so every attempt stages the same ones.
    fn with_deliveries(&self, delivery: &str, mut follows: Vec<Follow>) -> Vec<Follow> {
        for (i, f) in follows.iter_mut().enumerate() {
            f.id = derived_id("e_", delivery, i, "");
            let subs = self
                .subscribers
                .get(&f.event)
                .map_or(&[][..], Vec::as_slice);
            f.deliveries = subs
                .iter()
                .map(|(name, action)| NewDelivery {
                    id: derived_id("d_", delivery, i, name),
                    source: Source::Event {
                        event: f.id.clone(),
                    },
                    action: action.clone(),
                    subscriber: Some(name.clone()),
                    queue: f.queue.clone(),
                    priority: f.priority,
                    tags: f.tags.clone(),
                    max_attempts: u32::try_from(f.max_attempts).unwrap_or(25),
                    run_at: f.run_at,
                    args: f.payload.canonical(),
                    build_id: self.plan.build_id.clone(),
                    unique: f.unique.clone(),
                })
                .collect();
        }
        follows
    }

    /// Runs a delivery to its end (the test runner's loop): takes its lease
    /// from `queue`, makes attempts against `store`, and releases an end
    /// other than a commit to `queue`, which opens its operator item.
    pub fn deliver(
        &self,
        d: &Delivery,
        store: &dyn RunStore,
        queue: &dyn Queue,
        provider: &mut dyn Provider,
        mut crash: Option<CrashAt>,
    ) -> Outcome {
        let finish = |end: End, steps, attempts, last_start, crashed, bytes_left| Outcome {
            end,
            steps,
            attempts,
            last_start,
            crashed,
            bytes_left,
        };
        // A delivery run by name gets its row first (one that exists, a
        // subscriber's, is kept as it is).
        let row = NewDelivery {
            id: d.id.clone(),
            source: Source::Direct,
            action: self.program.action(d.action).qualified.clone(),
            subscriber: None,
            queue: DIRECT_QUEUE.to_string(),
            priority: 0,
            tags: Vec::new(),
            max_attempts: d.attempts.max(1),
            run_at: d.start,
            args: Value::List(d.args.clone().into()).canonical(),
            build_id: self.plan.build_id.clone(),
            unique: None,
        };
        if let Err(e) = queue.enqueue(&[row], d.start) {
            let end = End::RetryLater(format!("the delivery could not be stored: {e}"));
            return finish(end, Vec::new(), 0, d.start, false, d.limits.bytes);
        }
        let lease = match queue.take(&d.id, 3_600_000, d.start) {
            Ok(Some(lease)) => lease,
            Ok(None) => {
                let end = End::Faulted(format!("no delivery `{}` to run", d.id));
                return finish(end, Vec::new(), 0, d.start, false, d.limits.bytes);
            }
            Err(e) => {
                let end = End::RetryLater(format!("the delivery's lease could not be taken: {e}"));
                return finish(end, Vec::new(), 0, d.start, false, d.limits.bytes);
            }
        };
        let (mut start, mut attempts, mut crashed, mut bytes) = (d.start, 0, false, d.limits.bytes);
        loop {
            let out = self.attempt(d, store, provider, lease, start, &mut crash, bytes);
            bytes = out.bytes_left;
            let end = match out.attempted {
                Attempted::Committed(v) => {
                    let attempts = attempts + 1;
                    return finish(
                        End::Completed(v),
                        out.steps,
                        attempts,
                        start,
                        crashed,
                        bytes,
                    );
                }
                Attempted::Again { crashed: true, .. } => {
                    crashed = true;
                    continue;
                }
                Attempted::Again { why, .. } => {
                    attempts += 1;
                    if attempts < d.attempts.max(1) {
                        start = Instant(start.0 + i128::from(d.retry_after_ms) * 1_000_000);
                        continue;
                    }
                    End::RetryLater(why)
                }
                Attempted::Ended(end) => {
                    attempts += 1;
                    end
                }
            };
            if let Some(state) = end.state() {
                let next = Next::End {
                    state,
                    why: crate::suite::describe_end(self.program, &end),
                    steps: out.steps.iter().map(ListedStep::summary).collect(),
                    response: None,
                };
                // The end stands whether or not the item could be opened.
                let _ = queue.release(&d.id, &lease, &next, start);
            }
            return finish(end, out.steps, attempts, start, crashed, bytes);
        }
    }
}

/// `prefix` and 128 bits of a hash of `parent`, `index` and `name` in
/// base32: an id that never repeats while its parent's does not.
fn derived_id(prefix: &str, parent: &str, index: usize, name: &str) -> String {
    let mut h = blake3::Hasher::new_derive_key("jadpo-delivery-id-v1");
    h.update(&(parent.len() as u64).to_le_bytes());
    h.update(parent.as_bytes());
    h.update(&(index as u64).to_le_bytes());
    h.update(name.as_bytes());
    let hash = h.finalize();
    let mut first = [0u8; 16];
    first.copy_from_slice(hash.as_bytes().get(..16).unwrap_or(&[0; 16]));
    let bits = u128::from_le_bytes(first);
    format!("{prefix}{}", base32(bits))
}

/// 128 bits in lowercase base32 (RFC 4648 letters), 26 characters.
pub fn base32(mut bits: u128) -> String {
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    let mut out = [0u8; 26];
    for slot in out.iter_mut().rev() {
        *slot = ALPHABET.get((bits & 31) as usize).copied().unwrap_or(b'a');
        bits >>= 5;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The application's steps key, or the fixed test key when none is given.
/// The steps key from the app's config values (the test key when the app
/// names none): what records and a route's stored answers are sealed
/// with.
pub fn secret(program: &Program, config: &BTreeMap<Name, Value>) -> String {
    program
        .app
        .encryption_key
        .as_ref()
        .and_then(|k| config.get(&k.name))
        .map_or_else(|| TEST_KEY.to_string(), Value::as_text)
}

fn is_transient(program: &Program, f: &Failed) -> bool {
    let failure = program.failure(f.failure);
    failure.owner == jadpo_compiler::ir::Owner::Stdlib && failure.kind.is_transient()
}

fn stopped(a: &mut Attempt<'_, '_>, flow: Flow) -> Attempted {
    let again = |why: String| Attempted::Again {
        why,
        crashed: false,
        not_after: None,
    };
    match flow {
        Flow::Fail(f) if is_transient(a.s.program, &f) => {
            let name = &a.s.program.failure(f.failure).qualified;
            again(format!("a call failed with `{name}` and did not act"))
        }
        Flow::Fail(f) => Attempted::Ended(End::Failed(f)),
        Flow::Return(v) => Attempted::Committed(v),
        Flow::Stop(Stop::RetryLater(why)) => again(why),
        Flow::Stop(Stop::Park { step, why }) => Attempted::Ended(End::Parked { step, why }),
        Flow::Stop(Stop::Held(d)) => Attempted::Ended(End::Held(d)),
        Flow::Stop(Stop::Fault(why)) => Attempted::Ended(End::Faulted(why)),
        Flow::Stop(Stop::Crash) => Attempted::Again {
            why: "a planned crash".into(),
            crashed: true,
            not_after: None,
        },
        Flow::Stop(Stop::LeaseLost) => Attempted::Ended(End::LeaseLost),
    }
}

/// When a keyed step is left in doubt: the latest a retry may start and
/// still send it again under the same key (five minutes before its window,
/// less its margin, ends).
fn window_end(a: &Attempt<'_, '_>, plan: &ActionPlan) -> Option<Instant> {
    let rec: &StoredRecord = a.record.as_ref()?;
    let row = rec.steps.last()?;
    if !matches!(row.state, RowState::Sent { .. }) || row.key.is_none() {
        return None;
    }
    let step = plan.steps.iter().find(|s| s.operation == row.operation)?;
    let window = i128::from(step.window_ms?) * 1_000_000;
    let margin = i128::from(step.margin_ms.unwrap_or(0)) * 1_000_000;
    Some(Instant(
        row.sent_at.0 + window - margin - WINDOW_SLACK_MS * 1_000_000,
    ))
}

/// The delivery's steps as this attempt leaves them.
fn listing(a: &Attempt<'_, '_>) -> Vec<ListedStep> {
    let Some(rec) = &a.record else {
        return Vec::new();
    };
    rec.steps
        .iter()
        .map(|row| {
            let sight = a.seen.get(&row.position);
            let key = || {
                row.key
                    .as_deref()
                    .map_or("no key".into(), |k| format!("key {}", short(k)))
            };
            let seen = sight.map(|s| (s.seen, s.detail.clone()));
            let (state, detail) = match (&row.state, seen) {
                (RowState::Answered(_), Some((Seen::Replayed, d))) => ("replayed", d),
                (RowState::Answered(_) | RowState::Dispatched, Some((_, d))) => ("answered", d),
                (RowState::Answered(_), None) => ("answered", String::new()),
                (RowState::Dispatched, None) => ("answered", key()),
                (RowState::Sent { .. }, Some((Seen::Answered | Seen::Replayed, _))) => {
                    ("sent", key())
                }
                (RowState::Sent { .. }, Some((Seen::TooLarge, d))) => ("too large", d),
                (RowState::Sent { .. }, _) => ("in doubt", key()),
            };
            ListedStep {
                position: row.position,
                operation: row.operation.clone(),
                state,
                sent_at: row.sent_at,
                detail,
                answer: sight.map(|s| s.answer.clone()).unwrap_or_default(),
                key: row.key.clone(),
            }
        })
        .collect()
}

/// The crash points of a delivery's steps, in order: what the crash
/// matrix runs for a delivery that sent `steps` steps.
pub fn crash_points(steps: u32) -> Vec<CrashAt> {
    (1..=steps)
        .flat_map(|step| Point::ALL.map(|point| CrashAt { step, point }))
        .collect()
}
