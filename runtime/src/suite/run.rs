//! One run of a test: its statements in order against fresh stores and
//! fakes, with at most one crash, and what it left behind for the crash
//! matrix to compare.

use std::collections::BTreeMap;

use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::code::{BinOp, Expr, ExprKind};
use jadpo_compiler::ir::test::{
    Count, Delivery, DeliveryTarget, Ending, Expect, Test, TestStepKind,
};
use jadpo_compiler::ir::{ActionId, EntityId, Program};
use jadpo_compiler::span::Span;

use super::fixture::Prepared;
use super::{Deadline, Failure, FailureKind};
use crate::delivery::{self, End, ListedStep, Runtime};
use crate::eval::{eval_over, fault, Budget, Effects, Flow, Read, Stop, WriteValues, R};
use crate::fake::Fake;
use crate::store::Store;
use crate::value::{Instant, Value};
use crate::CrashAt;

/// Evaluation steps one test expression may take.
const EXPR_FUEL: u64 = 1_000_000;

/// A delivery as it ended.
#[derive(Clone, Debug)]
pub struct Delivered {
    pub id: String,
    pub span: Span,
    pub action: ActionId,
    pub end: End,
    pub steps: Vec<ListedStep>,
}

/// What a run left: its failures, its deliveries, and the state the crash
/// matrix compares (each as a sorted multiset of canonical texts).
#[derive(Clone, Debug)]
pub struct Ran {
    pub failures: Vec<Failure>,
    pub deliveries: Vec<Delivered>,
    pub rows: BTreeMap<EntityId, Vec<String>>,
    pub outbox: Vec<String>,
    pub effects: Vec<String>,
    /// The test clock after each statement: the time line a crash run
    /// keeps.
    pub clocks: Vec<Instant>,
}

pub struct Run<'r, 'p> {
    rt: &'r Runtime<'p>,
    test: &'r Test,
    prep: &'r Prepared,
    crash: Option<(usize, CrashAt)>,
    /// The clean run's clock after each statement, for a crash run.
    timeline: &'r [Instant],
    deadline: Deadline,
    clock: Instant,
    locals: Vec<Value>,
    store: std::sync::Arc<dyn Store>,
    fake: Fake,
    statements: u32,
    /// The bytes of text the run's code may still compute, over every
    /// delivery and expression.
    bytes: u64,
    ran: Ran,
}

impl<'r, 'p> Run<'r, 'p> {
    /// A run of `test`; a crash run (`crash` given) keeps `timeline`, the
    /// clean run's clock after each statement (design section 10), so a
    /// crash that saves or adds an attempt moves no later statement's time.
    pub fn new(
        rt: &'r Runtime<'p>,
        test: &'r Test,
        prep: &'r Prepared,
        crash: Option<(usize, CrashAt)>,
        timeline: &'r [Instant],
        deadline: Deadline,
        store: std::sync::Arc<dyn Store>,
    ) -> Self {
        Run {
            rt,
            test,
            prep,
            crash,
            timeline,
            deadline,
            clock: prep.clock,
            locals: vec![Value::Unit; test.locals as usize],
            store,
            fake: Fake::new(prep.scripts.clone()),
            statements: 0,
            bytes: crate::eval::MAX_COMPUTED_BYTES,
            ran: Ran {
                failures: Vec::new(),
                deliveries: Vec::new(),
                rows: BTreeMap::new(),
                outbox: Vec::new(),
                effects: Vec::new(),
                clocks: Vec::new(),
            },
        }
    }

    /// Runs the statements to the first failure, then takes stock.
    pub fn finish(mut self) -> Ran {
        if let Some(why) = &self.prep.error {
            self.fail(
                FailureKind::Fault,
                format!("the fixture cannot be used: {why}"),
                self.test.span,
                Vec::new(),
            );
        }
        for (i, step) in self.test.steps.iter().enumerate() {
            if !self.ran.failures.is_empty() {
                break;
            }
            if self.deadline.passed() {
                self.ran.failures.push(over_time(step.span, self.deadline));
                break;
            }
            self.step(&step.kind, step.span);
            if let Some(clean) = self.timeline.get(i) {
                self.clock = *clean;
            }
            self.ran.clocks.push(self.clock);
        }
        self.take_stock();
        self.ran
    }

    fn fail(&mut self, kind: FailureKind, message: String, span: Span, steps: Vec<ListedStep>) {
        self.ran.failures.push(Failure {
            kind,
            message,
            span,
            steps,
            crash_steps: Vec::new(),
            differs_at: None,
        });
    }

    fn step(&mut self, kind: &TestStepKind, span: Span) {
        match kind {
            TestStepKind::Set(slot, e) => {
                if let Some(v) = self.eval(e) {
                    if let Some(l) = self.locals.get_mut(slot.0 as usize) {
                        *l = v;
                    }
                }
            }
            TestStepKind::Assert(e) => self.assert(e),
            TestStepKind::Advance(e) => {
                if let Some(Value::Duration(ms)) = self.eval(e) {
                    self.clock = Instant(self.clock.0 + i128::from(ms) * 1_000_000);
                }
            }
            TestStepKind::Deliver(d) => self.deliver(d, span),
        }
    }

    fn eval(&mut self, e: &Expr) -> Option<Value> {
        let fx = TestFx {
            program: self.rt.program,
            config: &self.prep.config,
            now: self.clock,
            store: &*self.store,
            fake: &self.fake,
        };
        let mut budget = Budget {
            fuel: EXPR_FUEL,
            bytes: self.bytes,
            deadline: Some(self.deadline.at()),
        };
        let out = eval_over(self.rt.program, fx, &mut self.locals, e, &mut budget);
        self.bytes = budget.bytes;
        if self.deadline.passed() {
            self.ran.failures.push(over_time(e.span, self.deadline));
            return None;
        }
        match out {
            Ok(v) => Some(v),
            Err(flow) => {
                let why = match flow {
                    Flow::Stop(Stop::Fault(why)) => why,
                    other => format!("{other:?}"),
                };
                self.fail(
                    FailureKind::Fault,
                    format!("the expression cannot be evaluated: {why}"),
                    e.span,
                    Vec::new(),
                );
                None
            }
        }
    }

    fn assert(&mut self, e: &Expr) {
        let Some(v) = self.eval(e) else { return };
        if v == Value::Bool(true) {
            return;
        }
        let mut message = "assertion failed".to_string();
        if let ExprKind::Binary(op, l, r) = &e.kind {
            if is_comparison(*op) {
                if let (Some(l), Some(r)) = (self.eval(l), self.eval(r)) {
                    message = format!(
                        "assertion failed: the left side is {}, the right side {}",
                        shown(&l),
                        shown(&r)
                    );
                }
            }
        }
        self.fail(FailureKind::Assertion, message, e.span, Vec::new());
    }

    fn deliver(&mut self, d: &Delivery, span: Span) {
        self.statements += 1;
        let base = format!("test:{}:{}", self.test.name, self.statements);
        match &d.target {
            DeliveryTarget::Call { action, args } => {
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    let Some(v) = self.eval(a) else { return };
                    values.push(v);
                }
                let label = format!("`{}`", self.rt.program.action(*action).qualified);
                if let Some(end) = self.one_delivery(base, *action, values, span, d.expect, &label)
                {
                    if let (Some(slot), End::Completed(v)) = (d.bind, end) {
                        if let Some(l) = self.locals.get_mut(slot.0 as usize) {
                            *l = v;
                        }
                    }
                }
            }
            DeliveryTarget::Deliver {
                payload, entries, ..
            } => {
                let Some(event) = self.eval(payload) else {
                    return;
                };
                for entry in entries {
                    if !self.ran.failures.is_empty() {
                        return;
                    }
                    self.subscriber_delivery(&base, *entry, event.clone(), span, d.expect);
                }
            }
        }
    }

    fn subscriber_delivery(
        &mut self,
        base: &str,
        entry: usize,
        event: Value,
        span: Span,
        expect: Expect,
    ) {
        let Some(e) = self.rt.program.entries.get(entry) else {
            return;
        };
        let (Some(action), Some(name)) = (e.action, e.subscriber_name()) else {
            return;
        };
        let args = match self.rt.entry_args(entry, vec![event]) {
            Ok(args) => args,
            Err(why) => {
                self.fail(
                    FailureKind::Fault,
                    format!("subscriber `{name}`'s `run:` cannot be evaluated: {why}"),
                    span,
                    Vec::new(),
                );
                return;
            }
        };
        let label = format!("subscriber `{name}`");
        self.one_delivery(format!("{base}:{name}"), action, args, span, expect, &label);
    }

    /// Runs one delivery and checks how it ended; its end when it ended as
    /// expected.
    fn one_delivery(
        &mut self,
        id: String,
        action: ActionId,
        args: Vec<Value>,
        span: Span,
        expect: Expect,
        label: &str,
    ) -> Option<End> {
        let index = self.ran.deliveries.len();
        let crash = self.crash.filter(|(i, _)| *i == index).map(|(_, c)| c);
        let d = delivery::Delivery {
            id: id.clone(),
            action,
            args,
            config: self.prep.config.clone(),
            start: self.clock,
            attempts: self.prep.attempts,
            retry_after_ms: self.prep.retry_after_ms,
            limits: delivery::Limits {
                bytes: self.bytes,
                deadline: Some(self.deadline.at()),
            },
        };
        let unscripted = self.fake.unscripted.len();
        let outcome = self
            .rt
            .deliver(&d, &*self.store, &*self.store, &mut self.fake, crash);
        self.bytes = outcome.bytes_left;
        self.clock = outcome.last_start;
        if self.deadline.passed() {
            self.ran.failures.push(over_time(span, self.deadline));
            return None;
        }
        self.ran.deliveries.push(Delivered {
            id,
            span,
            action,
            end: outcome.end.clone(),
            steps: outcome.steps.clone(),
        });
        if let Some(op) = self.fake.unscripted.get(unscripted).cloned() {
            let message = format!("no answer scripted for `{op}`: {label} called it");
            self.fail(FailureKind::Unscripted, message, span, outcome.steps);
            return None;
        }
        if ends_as(&outcome.end, expect) {
            return Some(outcome.end);
        }
        let wanted = expected_text(self.rt.program, expect);
        let found = describe_end(self.rt.program, &outcome.end);
        let message = format!("expected {label} to {wanted}; it {found}");
        self.fail(FailureKind::Outcome, message, span, outcome.steps);
        None
    }

    /// Committed rows, the outbox and the fake's effects, as multisets.
    fn take_stock(&mut self) {
        let mut unread = Vec::new();
        for i in 0..self.rt.program.entities.len() {
            let e = EntityId(i as u32);
            let found = stored(&*self.store, e).unwrap_or_else(|why| {
                unread.push(why);
                Vec::new()
            });
            let mut rows: Vec<String> = found.iter().map(canonical).collect();
            rows.sort();
            self.ran.rows.insert(e, rows);
        }
        let events = outbox(&*self.store).unwrap_or_else(|why| {
            unread.push(why);
            Vec::new()
        });
        if let Some(why) = unread.into_iter().next() {
            self.fail(FailureKind::Fault, why, self.test.span, Vec::new());
        }
        let mut outbox: Vec<String> = events
            .iter()
            .map(|o| {
                let f = &o.follow;
                // `run_at` is a time, and times are not compared: a crash
                // run's deliveries may start earlier than the clean run's.
                format!(
                    "{} {} queue={} priority={} max_attempts={} tags={:?} metadata={} unique={:?}",
                    f.event,
                    canonical(&f.payload),
                    f.queue,
                    f.priority,
                    f.max_attempts,
                    f.tags,
                    canonical(&f.metadata),
                    f.unique.as_ref().map(|u| &u.0),
                )
            })
            .collect();
        outbox.sort();
        self.ran.outbox = outbox;
        let mut effects: Vec<String> = self
            .fake
            .effects()
            .iter()
            .map(|e| {
                format!(
                    "{} {} {}",
                    e.operation,
                    crate::value::hex(&e.request),
                    canonical(&e.answer)
                )
            })
            .collect();
        effects.sort();
        self.ran.effects = effects;
    }
}

pub fn over_time(span: Span, deadline: Deadline) -> Failure {
    Failure {
        kind: FailureKind::TimeLimit,
        message: format!(
            "the test ran past its time limit of {:?} (crash runs included); it stopped here",
            deadline.limit
        ),
        span,
        steps: Vec::new(),
        crash_steps: Vec::new(),
        differs_at: None,
    }
}

fn canonical(v: &Value) -> String {
    String::from_utf8_lossy(&v.canonical()).into_owned()
}

/// A value as a failure message shows it.
pub(super) fn shown(v: &Value) -> String {
    let text = canonical(v);
    if text.len() > 200 {
        let cut = text.char_indices().nth(200).map_or(text.len(), |(i, _)| i);
        return format!("{}...", &text[..cut]);
    }
    text
}

fn is_comparison(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
    )
}

fn ends_as(end: &End, expect: Expect) -> bool {
    match (expect, end) {
        (Expect::Complete, End::Completed(_)) => true,
        (Expect::Fails(f), End::Failed(failed)) => failed.failure == f,
        (Expect::Ends(Ending::OutcomeUnknown), End::Parked { .. }) => true,
        (Expect::Ends(Ending::Diverged), End::Held(_)) => true,
        (Expect::Ends(Ending::RetryLater), End::RetryLater(_)) => true,
        (Expect::Ends(Ending::Fault), End::Faulted(_)) => true,
        _ => false,
    }
}

fn expected_text(program: &Program, expect: Expect) -> String {
    match expect {
        Expect::Complete => "complete".into(),
        Expect::Fails(f) => format!("fail with `{}`", program.failure(f).qualified),
        Expect::Ends(e) => format!("end {}", e.as_str()),
    }
}

/// How a delivery ended, after "it": `completed`, `failed with
/// `stripe.CardDeclined``, `parked as outcome_unknown at step 2: ...`.
pub fn describe_end(program: &Program, end: &End) -> String {
    match end {
        End::Completed(Value::Unit) => "completed".into(),
        End::Completed(v) => format!("completed with {}", shown(v)),
        End::Failed(f) => format!("failed with `{}`", program.failure(f.failure).qualified),
        End::Parked { step, why } => format!("parked as outcome_unknown at step {step}: {why}"),
        End::Held(d) => {
            let mut text = format!(
                "was held as diverged at step {} (`{}`): {}",
                d.step, d.operation, d.why
            );
            if !d.fields.is_empty() {
                text.push_str(&format!("; fields that differ: {}", d.fields.join(", ")));
            }
            text
        }
        End::RetryLater(why) => format!("was still retry-later after its last attempt: {why}"),
        End::Faulted(why) => format!("faulted: {why}"),
        End::LeaseLost => "lost its lease to another runner".into(),
    }
}

/// What a test's expressions reach: config, the test clock and the counts.
struct TestFx<'a> {
    program: &'a Program,
    config: &'a BTreeMap<Name, Value>,
    now: Instant,
    store: &'a dyn Store,
    fake: &'a Fake,
}

/// An entity's committed rows.
fn stored(store: &dyn Store, e: EntityId) -> Result<Vec<Value>, String> {
    match store.select(e, &[]) {
        Ok(rows) => Ok(rows.into_iter().map(|r| r.value).collect()),
        Err(e) => Err(format!("the test's store could not be read: {e}")),
    }
}

/// The events inserted, oldest first.
fn outbox(store: &dyn Store) -> Result<Vec<crate::store::Outboxed>, String> {
    store
        .events(usize::MAX)
        .map_err(|e| format!("the test's store could not be read: {e}"))
}

impl Effects for TestFx<'_> {
    fn call_op(&mut self, _: jadpo_compiler::ir::OpId, _: Value, _: Span, _: &[Span]) -> R<Value> {
        fault("an outside call in a test's expression")
    }
    fn write(&mut self, _: &Program, _: WriteValues<'_>) -> R<Value> {
        fault("a write in a test's expression")
    }
    fn read(&mut self, _: &Program, _: Read<'_>) -> R<Value> {
        fault("a store read in a test's expression")
    }
    fn emit(
        &mut self,
        _: &Program,
        _: &jadpo_compiler::ir::code::Emit,
        _: Value,
        _: Value,
    ) -> R<()> {
        fault("an emit in a test's expression")
    }
    fn config(&self, name: Name) -> R<Value> {
        match self.config.get(&name) {
            Some(v) => Ok(v.clone()),
            None => fault(format!("the fixture gives no value for `config.{name}`")),
        }
    }
    fn now(&self) -> Instant {
        self.now
    }
    fn count(&self, count: Count) -> R<Value> {
        let n = match count {
            Count::Stored(e) => stored(self.store, e).or_else(fault)?.len(),
            Count::Sent(op) => self.fake.effects_of(&self.program.op(op).qualified),
            Count::Emitted(ev) => {
                let name = &self.program.event(ev).qualified;
                outbox(self.store)
                    .or_else(fault)?
                    .iter()
                    .filter(|o| &o.follow.event == name)
                    .count()
            }
        };
        Ok(Value::Int(i64::try_from(n).unwrap_or(i64::MAX)))
    }
}
