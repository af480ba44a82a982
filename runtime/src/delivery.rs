//! A delivery: one action run from its entry, in attempts until it commits,
//! fails, parks, is held or faults, at most `attempts` of them, each later
//! one `retry_after` after the one before. A crash ends its attempt and the
//! delivery resumes at once, at the same clock, not counting the crashed
//! attempt. Every ending but a commit keeps the record as an operator item.

use std::collections::BTreeMap;

use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::{ActionId, Program};
use jadpo_plan::{ActionPlan, Plan, Point};

use crate::attempt::{short, Attempt, CrashAt, Seen, Setting, StepsBySite};
use crate::eval::{Budget, Divergence, Failed, Flow, Interp, Stop};
use crate::provider::Provider;
use crate::record::{Mode, RowState, Sealer, TEST_KEY};
use crate::store::{Commit, CommitError, OperatorItem, Store};
use crate::value::{Instant, Value};

/// Expressions one delivery may evaluate: far more than any real action
/// needs, and a bound on a recursion that does not end.
pub const FUEL: u64 = 10_000_000;

/// A program with its plan, ready to run deliveries.
pub struct Runtime<'p> {
    pub program: &'p Program,
    pub plan: &'p Plan,
    /// Each action's plan, by the action's id.
    by_action: BTreeMap<ActionId, usize>,
    /// Each planned action's steps by call site, with the action calls
    /// leading there.
    steps: Vec<StepsBySite>,
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Delivery {
    /// `test:<test name>:<n>`, with `:<subscriber>` for a `deliver`.
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
}

/// One line of a delivery's step listing, in the seed's shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedStep {
    pub position: u32,
    pub operation: String,
    /// `answered`, `replayed`, `in doubt` or `sent`.
    pub state: &'static str,
    pub sent_at: Instant,
    /// The answer's `id` (else its first field, else its type), the
    /// failure it answered, the step's key, or an answer's size.
    pub detail: String,
    /// The answer as this run saw it (canonical JSON, cut), for a test's
    /// crash-run listings; empty when it did not answer. Never shown by
    /// the server's listings, which carry no answers.
    pub answer: String,
}

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
        }
        Runtime {
            program,
            plan,
            by_action,
            steps,
        }
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

    /// Runs a delivery to its end. `crash` strikes once, at the first send
    /// of its step that reaches its point.
    pub fn deliver(
        &self,
        d: &Delivery,
        store: &mut dyn Store,
        provider: &mut dyn Provider,
        crash: Option<CrashAt>,
    ) -> Outcome {
        let Some(index) = self.by_action.get(&d.action).copied() else {
            let name = &self.program.action(d.action).qualified;
            return ended(End::Faulted(format!("`{name}` is not planned")), d.start);
        };
        let Some(plan) = self.plan.actions.get(index) else {
            return ended(End::Faulted("no plan".into()), d.start);
        };
        let sealer = Sealer::new(&secret(self.program, &d.config));
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
        run_attempts(&setting, d, store, provider, crash)
    }
}

fn ended(end: End, at: Instant) -> Outcome {
    Outcome {
        end,
        steps: Vec::new(),
        attempts: 0,
        last_start: at,
        crashed: false,
        bytes_left: 0,
    }
}

/// The application's steps key, or the fixed test key when none is given.
fn secret(program: &Program, config: &BTreeMap<Name, Value>) -> String {
    program
        .app
        .encryption_key
        .as_ref()
        .and_then(|k| config.get(&k.name))
        .map_or_else(|| TEST_KEY.to_string(), Value::as_text)
}

/// How one attempt ended.
enum Ending {
    Done(End, Vec<ListedStep>),
    Again(String, Vec<ListedStep>),
    Crashed,
}

/// What a delivery's attempts have spent so far.
struct Tally {
    attempts: u32,
    crashed: bool,
    bytes: u64,
}

fn run_attempts(
    s: &Setting<'_>,
    d: &Delivery,
    store: &mut dyn Store,
    provider: &mut dyn Provider,
    mut crash: Option<CrashAt>,
) -> Outcome {
    let lease = store.claim(&d.id);
    let mut start = d.start;
    let mut tally = Tally {
        attempts: 0,
        crashed: false,
        bytes: d.limits.bytes,
    };
    loop {
        let ending = {
            let mut attempt = Attempt::new(s, store, provider, lease, start, &mut crash);
            let ending = one_attempt(&mut attempt, d, &mut tally.bytes);
            tally.crashed |= attempt.crashed;
            ending
        };
        match ending {
            Ending::Crashed => continue,
            Ending::Again(why, steps) => {
                tally.attempts += 1;
                if tally.attempts >= d.attempts.max(1) {
                    return finish(store, d, End::RetryLater(why), steps, &tally, start);
                }
                start = Instant(start.0 + i128::from(d.retry_after_ms) * 1_000_000);
            }
            Ending::Done(end, steps) => {
                tally.attempts += 1;
                return finish(store, d, end, steps, &tally, start);
            }
        }
    }
}

fn finish(
    store: &mut dyn Store,
    d: &Delivery,
    end: End,
    steps: Vec<ListedStep>,
    tally: &Tally,
    last_start: Instant,
) -> Outcome {
    if !matches!(end, End::Completed(_) | End::LeaseLost) {
        store.keep_item(OperatorItem {
            delivery: d.id.clone(),
            outcome: end.word().to_string(),
            record: store.record(&d.id),
        });
    }
    Outcome {
        end,
        steps,
        attempts: tally.attempts,
        last_start,
        crashed: tally.crashed,
        bytes_left: tally.bytes,
    }
}

/// One attempt, spending from `bytes` (what the delivery's attempts may
/// still compute).
fn one_attempt(a: &mut Attempt<'_, '_>, d: &Delivery, bytes: &mut u64) -> Ending {
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
        Ok(v) => commit(a, v),
        Err(flow) => stopped(a, flow),
    }
}

fn is_transient(program: &Program, f: &Failed) -> bool {
    let failure = program.failure(f.failure);
    failure.owner == jadpo_compiler::ir::Owner::Stdlib && failure.kind.is_transient()
}

fn commit(a: &mut Attempt<'_, '_>, v: Value) -> Ending {
    let listing = listing(a);
    let c = Commit {
        delivery: a.s.delivery.to_string(),
        at: a.started,
        writes: a.writes(),
        follow_ups: std::mem::take(&mut a.follow_ups),
    };
    match a.store.commit(&c, a.lease) {
        Ok(()) => Ending::Done(End::Completed(v), listing),
        Err(CommitError::Conflict) => Ending::Again(
            "the commit met a conflict: another delivery committed first".into(),
            listing,
        ),
        Err(CommitError::LeaseLost) => Ending::Done(End::LeaseLost, listing),
    }
}

fn stopped(a: &mut Attempt<'_, '_>, flow: Flow) -> Ending {
    let listing = listing(a);
    match flow {
        Flow::Fail(f) if is_transient(a.s.program, &f) => {
            let name = &a.s.program.failure(f.failure).qualified;
            Ending::Again(
                format!("a call failed with `{name}` and did not act"),
                listing,
            )
        }
        Flow::Fail(f) => Ending::Done(End::Failed(f), listing),
        Flow::Return(v) => commit(a, v),
        Flow::Stop(Stop::RetryLater(why)) => Ending::Again(why, listing),
        Flow::Stop(Stop::Park { step, why }) => Ending::Done(End::Parked { step, why }, listing),
        Flow::Stop(Stop::Held(d)) => Ending::Done(End::Held(d), listing),
        Flow::Stop(Stop::Fault(why)) => Ending::Done(End::Faulted(why), listing),
        Flow::Stop(Stop::Crash) => Ending::Crashed,
        Flow::Stop(Stop::LeaseLost) => Ending::Done(End::LeaseLost, listing),
    }
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
