//! A test's fixture made ready to run: its clock, its config values and
//! each faked operation's script, evaluated once per test and shared by the
//! clean run and every crash run.

use std::collections::BTreeMap;

use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::code::Expr;
use jadpo_compiler::ir::test::{
    AnswerCode, Test, DEFAULT_ATTEMPTS, DEFAULT_CLOCK, DEFAULT_RETRY_AFTER_MS,
};
use jadpo_compiler::ir::{FailureKind, OpId, Owner, Program};

use crate::eval::{eval_over, fault, Budget, Effects, Flow, Read, Stop, WriteValues, R};
use crate::fake::{Script, Scripted};
use crate::value::{parse_instant, Instant, Value};

/// Evaluation steps a fixture's values may take.
const FIXTURE_FUEL: u64 = 1_000_000;

pub struct Prepared {
    pub clock: Instant,
    pub config: BTreeMap<Name, Value>,
    pub retry_after_ms: i64,
    pub attempts: u32,
    pub scripts: BTreeMap<OpId, Script>,
    /// A fixture value that could not be evaluated.
    pub error: Option<String>,
}

pub fn prepare(program: &Program, test: &Test) -> Prepared {
    prepare_fixture(program, test.fixture)
}

/// A fixture made ready by its id (`jadpo dev --fakes NAME`); the
/// defaults without one.
pub fn prepare_fixture(
    program: &Program,
    fixture: Option<jadpo_compiler::ir::test::FixtureId>,
) -> Prepared {
    let fixture = fixture.and_then(|f| program.fixtures.get(f));
    let clock_text = fixture
        .and_then(|f| f.clock.as_deref())
        .unwrap_or(DEFAULT_CLOCK);
    let mut p = Prepared {
        clock: parse_instant(clock_text).unwrap_or(Instant(0)),
        config: BTreeMap::new(),
        retry_after_ms: fixture.map_or(DEFAULT_RETRY_AFTER_MS, |f| f.retry_after_ms),
        attempts: fixture.map_or(DEFAULT_ATTEMPTS, |f| f.attempts),
        scripts: BTreeMap::new(),
        error: None,
    };
    let Some(fixture) = fixture else {
        return p;
    };
    for (name, e) in &fixture.config {
        match value(program, e) {
            Ok(v) => {
                p.config.insert(*name, v);
            }
            Err(why) => p.error = Some(format!("`config.{name}`: {why}")),
        }
    }
    for fake in &fixture.fakes {
        let replays = program
            .package(fake.package)
            .idempotency
            .as_ref()
            .is_some_and(|i| i.replays_failures);
        for a in &fake.answers {
            let script = p.scripts.entry(a.op).or_insert_with(|| Script {
                answers: Vec::new(),
                replays_failures: replays,
            });
            match scripted(program, &a.answer) {
                Ok(s) => script.answers.push(s),
                Err(why) => {
                    let op = &program.op(a.op).qualified;
                    p.error = Some(format!("the answer of `{op}`: {why}"));
                }
            }
        }
    }
    p
}

fn scripted(program: &Program, a: &AnswerCode) -> Result<Scripted, String> {
    Ok(match a {
        AnswerCode::Value(e) => Scripted::Answer(value(program, e)?),
        AnswerCode::Done => Scripted::Answer(Value::Unit),
        AnswerCode::Fail { failure, fields } => {
            let f = program.failure(*failure);
            match (f.owner, f.kind) {
                (Owner::Stdlib, FailureKind::Unavailable) => Scripted::Unavailable,
                (Owner::Stdlib, FailureKind::RateLimited) => Scripted::RateLimited,
                _ => {
                    let mut given = Vec::with_capacity(fields.len());
                    for (name, e) in fields {
                        given.push((*name, value(program, e)?));
                    }
                    let fields = if given.is_empty() {
                        Value::Unit
                    } else {
                        Value::record(given)
                    };
                    Scripted::Fail {
                        failure: *failure,
                        fields,
                    }
                }
            }
        }
        AnswerCode::Lost(inner) => Scripted::Lost(Box::new(scripted(program, inner)?)),
        AnswerCode::InUse => Scripted::InUse,
        AnswerCode::ServerError => Scripted::ServerError,
    })
}

/// A fixture value: pure code over nothing.
fn value(program: &Program, e: &Expr) -> Result<Value, String> {
    match eval_over(
        program,
        Pure,
        &mut Vec::new(),
        e,
        &mut Budget::steps(FIXTURE_FUEL),
    ) {
        Ok(v) => Ok(v),
        Err(Flow::Stop(Stop::Fault(why))) => Err(why),
        Err(other) => Err(format!("{other:?}")),
    }
}

/// Effects of a fixture's values: none.
struct Pure;

impl Effects for Pure {
    fn call_op(
        &mut self,
        _: OpId,
        _: Value,
        _: jadpo_compiler::span::Span,
        _: &[jadpo_compiler::span::Span],
    ) -> R<Value> {
        fault("an outside call in a fixture")
    }
    fn write(&mut self, _: &Program, _: WriteValues<'_>) -> R<Value> {
        fault("a write in a fixture")
    }
    fn read(&mut self, _: &Program, _: Read<'_>) -> R<Value> {
        fault("a store read in a fixture")
    }
    fn emit(
        &mut self,
        _: &Program,
        _: &jadpo_compiler::ir::code::Emit,
        _: Value,
        _: Value,
    ) -> R<()> {
        fault("an emit in a fixture")
    }
    fn config(&self, name: Name) -> R<Value> {
        fault(format!("`config.{name}` in a fixture's value"))
    }
    fn now(&self) -> Instant {
        Instant(0)
    }
}
