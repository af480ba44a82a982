//! One attempt of a delivery (design `testing.md` section 9): the code runs
//! against the store and the provider, with every outside call from the
//! first changing call on made a step. Three concerns, one file each:
//! `steps.rs` records a step before it is sent and again when its answer
//! comes, replays answered steps without sending them (checking the
//! operation and the request's fingerprint), and judges a step in doubt by
//! its key and window; `staged.rs` keeps the writes and follow-ups staged
//! until the commit, and the rows an attempt sees; `answers.rs` records an
//! answer as the provider's body and decodes it on replay. Every record
//! write is fenced by the lease the attempt runs under.

mod answers;
mod staged;
mod steps;

pub use answers::{answer_detail, cut, detail_of, Recorded, Seen, Sight};

use std::collections::BTreeMap;

use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::code::Emit;
use jadpo_compiler::ir::{FailureKind, OpId, Program};
use jadpo_compiler::manifest::NewKeyOn;
use jadpo_compiler::span::Span;
use jadpo_plan::{ActionPlan, Point, StepPlan};

use crate::eval::{fault, Divergence, Effects, Failed, Flow, Read, Stop, WriteValues, R};
use crate::provider::{Answer, Call, Provider};
use crate::record::{Mode, Sealer, StoredRecord};
use crate::store::{Fenced, Follow, Lease, RunStore, StoreError};
use crate::value::{Instant, Value};

/// A crash to strike at a step's point (the crash matrix), once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CrashAt {
    pub step: u32,
    pub point: Point,
}

/// A planned action's steps by call site, each with the action calls
/// leading to it and its index in the plan's steps.
pub type StepsBySite = BTreeMap<Span, Vec<(Vec<Span>, usize)>>;

/// What stays the same over a delivery's attempts.
pub struct Setting<'a> {
    pub program: &'a Program,
    pub plan: &'a ActionPlan,
    pub build_id: &'a str,
    /// The plan's steps by call site, each with the action calls leading
    /// to it.
    pub steps: &'a StepsBySite,
    pub delivery: &'a str,
    pub config: &'a BTreeMap<Name, Value>,
    pub sealer: &'a Sealer,
    pub mode: Mode,
}

/// The facts an outside call is sent by.
#[derive(Clone, Debug)]
pub(crate) struct Facts {
    keyed: bool,
    window_ms: Option<u64>,
    margin_ms: Option<u64>,
    replays_failures: bool,
    new_key_on: Option<NewKeyOn>,
    attempts: u32,
}

pub struct Attempt<'s, 'w> {
    pub s: &'s Setting<'s>,
    pub store: &'w dyn RunStore,
    pub provider: &'w mut dyn Provider,
    pub lease: Lease,
    /// When this attempt started.
    pub started: Instant,
    /// `clock.now` for the code.
    pub clock: Instant,
    pub record: Option<StoredRecord>,
    /// The record could not be read: the attempt ends before it begins.
    record_error: Option<StoreError>,
    pub crash: &'w mut Option<CrashAt>,
    /// Whether the crash was reached.
    pub crashed: bool,
    position: u32,
    changed: bool,
    staged: staged::Staged,
    pub follow_ups: Vec<Follow>,
    /// What this attempt saw of each step, with the listing's detail.
    pub seen: BTreeMap<u32, Sight>,
    /// What its commit applies, once it commits.
    pub applied: crate::delivery::Applied,
}

impl<'s, 'w> Attempt<'s, 'w> {
    pub fn new(
        s: &'s Setting<'s>,
        store: &'w dyn RunStore,
        provider: &'w mut dyn Provider,
        lease: Lease,
        started: Instant,
        crash: &'w mut Option<CrashAt>,
    ) -> Self {
        let (record, record_error) = match store.record(s.delivery) {
            Ok(r) => (r, None),
            Err(e) => (None, Some(e)),
        };
        let clock = match (&record, s.mode) {
            (Some(r), Mode::Steps) => r.started_at,
            _ => started,
        };
        Attempt {
            s,
            store,
            provider,
            lease,
            started,
            clock,
            record,
            record_error,
            crash,
            crashed: false,
            position: 0,
            changed: false,
            staged: staged::Staged::new(),
            follow_ups: Vec::new(),
            seen: BTreeMap::new(),
            applied: crate::delivery::Applied::default(),
        }
    }

    /// Before the code runs: a record that could not be read ends the
    /// attempt retry-later; one kept in another mode or format, or under a
    /// build whose step shape its steps are not a prefix of, is held.
    pub fn check_record(&self) -> R<()> {
        if let Some(e) = &self.record_error {
            return Err(Flow::Stop(Stop::RetryLater(format!(
                "the record could not be read: {e}"
            ))));
        }
        let Some(rec) = &self.record else {
            return Ok(());
        };
        if rec.format != crate::record::FORMAT {
            return steps::held(Divergence {
                step: 0,
                operation: String::new(),
                why: format!(
                    "the record is in format {}; this jadpo reads format {}",
                    rec.format,
                    crate::record::FORMAT
                ),
                fields: Vec::new(),
            });
        }
        if rec.mode != self.s.mode {
            return steps::held(Divergence {
                step: 0,
                operation: String::new(),
                why: format!(
                    "the record was kept as {} and this build keeps {}",
                    rec.mode.as_str(),
                    self.s.mode.as_str()
                ),
                fields: Vec::new(),
            });
        }
        if rec.build_id == self.s.build_id || rec.shape_digest == self.s.plan.step_shape_digest {
            return Ok(());
        }
        let ops: Vec<&str> = rec.steps.iter().map(|r| r.operation.as_str()).collect();
        let Some(at) = self.s.plan.step_shape.first_off_path(&ops) else {
            return Ok(());
        };
        steps::held(Divergence {
            step: at as u32 + 1,
            operation: ops.get(at).copied().unwrap_or_default().to_string(),
            why: format!(
                "this build changed the step shape: its paths do not make recorded step {} next",
                at + 1
            ),
            fields: Vec::new(),
        })
    }

    /// After the action returned or failed: every recorded step must have
    /// been replayed.
    pub fn check_all_replayed(&self) -> R<()> {
        let Some(rec) = &self.record else {
            return Ok(());
        };
        if self.s.mode != Mode::Steps {
            return Ok(());
        }
        match rec.steps.get(self.position as usize) {
            Some(row) => steps::held(Divergence {
                step: row.position,
                operation: row.operation.clone(),
                why: format!(
                    "step {} was recorded, but the action ended after step {}",
                    row.position, self.position
                ),
                fields: Vec::new(),
            }),
            None => Ok(()),
        }
    }

    /// The staged writes as the commit applies them.
    pub fn writes(&self) -> Vec<crate::store::Write> {
        self.staged.writes()
    }

    /// Strikes the planned crash the first time its step reaches its point.
    fn crash_point(&mut self, step: u32, point: Point) -> R<()> {
        match *self.crash {
            Some(c) if c.step == step && c.point == point => {
                *self.crash = None;
                self.crashed = true;
                Err(Flow::Stop(Stop::Crash))
            }
            _ => Ok(()),
        }
    }

    fn facts(&self, op: OpId, site: Span, via: &[Span]) -> Facts {
        let planned: Option<&StepPlan> = self
            .s
            .steps
            .get(&site)
            .and_then(|calls| calls.iter().find(|(v, _)| v.as_slice() == via))
            .and_then(|(_, i)| self.s.plan.steps.get(*i));
        if let Some(p) = planned {
            return Facts {
                keyed: p.keyed,
                window_ms: p.window_ms,
                margin_ms: p.margin_ms,
                replays_failures: p.replays_failures,
                new_key_on: p.new_key_on,
                attempts: p.attempts.max(1),
            };
        }
        let o = self.s.program.op(op);
        let idem = self
            .s
            .program
            .packages
            .get(o.package)
            .and_then(|p| p.idempotency.as_ref());
        let keyed = o.keyed && idem.is_some();
        let window = o.window_ms;
        Facts {
            keyed,
            window_ms: window,
            margin_ms: window.map(jadpo_plan::margin_ms),
            replays_failures: keyed && idem.is_some_and(|i| i.replays_failures),
            new_key_on: idem.filter(|_| keyed).map(|i| i.new_key_on),
            attempts: o.attempts.max(1),
        }
    }

    fn transient(&self, answer: &Answer) -> Flow {
        let kind = match answer {
            Answer::RateLimited => FailureKind::RateLimited,
            _ => FailureKind::Unavailable,
        };
        Flow::Fail(Failed {
            failure: self.s.program.standard_failure(kind),
            fields: Value::Unit,
        })
    }

    /// A call that is no step: sent as it is, its attempts within this
    /// attempt.
    fn send_plain(&mut self, op: OpId, request: &Value, facts: &Facts) -> R<Value> {
        let operation = &self.s.program.op(op).qualified;
        let call = Call {
            op,
            operation,
            request,
            fingerprint: request.fingerprint(),
            key: None,
            repeat_safe: true,
            changes: self.s.program.op(op).changes,
            step: None,
        };
        let mut last = Answer::Unavailable;
        for _ in 0..facts.attempts {
            last = self.provider.send(&call);
            match last {
                Answer::Done(v) => return Ok(v),
                Answer::Failed { failure, fields } => {
                    return Err(Flow::Fail(Failed { failure, fields }))
                }
                Answer::InUse | Answer::Unavailable | Answer::RateLimited | Answer::ServerError => {
                }
                Answer::Lost => {
                    return Err(Flow::Stop(Stop::RetryLater(format!(
                        "the answer of `{operation}` was lost"
                    ))))
                }
                Answer::Mismatch => {
                    return fault(format!(
                        "`{operation}` answered \"different request\" without a key"
                    ))
                }
                Answer::Misconfigured(text) => return fault(format!("`{operation}`: {text}")),
            }
        }
        Err(self.transient(&last))
    }
}

/// A record write that did not happen, as the attempt's flow: a lost lease
/// stops the attempt before anything more is sent; a store that failed
/// ends it retry-later.
fn fenced(e: Fenced) -> Flow {
    match e {
        Fenced::LeaseLost => Flow::Stop(Stop::LeaseLost),
        Fenced::Store(e) => Flow::Stop(Stop::RetryLater(format!(
            "the record could not be written: {e}"
        ))),
    }
}

/// A store read that failed, as the attempt's flow.
fn unread(e: StoreError) -> Flow {
    Flow::Stop(Stop::RetryLater(format!("a store read failed: {e}")))
}

impl Effects for Attempt<'_, '_> {
    fn call_op(&mut self, op: OpId, request: Value, site: Span, via: &[Span]) -> R<Value> {
        let changes = self.s.program.op(op).changes;
        let facts = self.facts(op, site, via);
        if !(self.changed || changes) {
            return self.send_plain(op, &request, &facts);
        }
        self.changed = true;
        self.position += 1;
        if self.s.mode == Mode::Dispatch && !changes {
            // A single call's record keeps only its changing call.
            self.position -= 1;
            return self.send_plain(op, &request, &facts);
        }
        self.step(op, request, facts)
    }

    fn write(&mut self, program: &Program, w: WriteValues<'_>) -> R<Value> {
        self.stage_write(program, w)
    }

    fn read(&mut self, program: &Program, read: Read<'_>) -> R<Value> {
        self.query(program, read)
    }

    fn emit(&mut self, program: &Program, emit: &Emit, payload: Value, options: Value) -> R<()> {
        let follow = crate::follow::staged(program, emit, payload, &options, self.clock)?;
        self.follow_ups.push(follow);
        Ok(())
    }

    fn config(&self, name: Name) -> R<Value> {
        match self.s.config.get(&name) {
            Some(v) => Ok(v.clone()),
            None => fault(format!("no value is given for `config.{name}`")),
        }
    }

    fn now(&self) -> Instant {
        self.clock
    }
}

/// `hex` of the first 4 bytes of a key, for listings.
pub fn short(key: &str) -> String {
    key.chars().take(8).collect::<String>() + "…"
}
