//! `jadpo test`'s runner (design `testing.md` sections 8 to 10): each test
//! of a checked program runs once clean, then once per crash point of every
//! multi-step delivery in it that completed, failed or parked; a crash run
//! must end as the clean run did. Tests run in source order, each against
//! fresh stores, outbox and fakes; nothing here touches the filesystem, the
//! network or the environment.

mod compare;
mod fixture;
mod run;

use std::sync::Arc;
use std::time::Duration;

use jadpo_compiler::ir::test::Test;
use jadpo_compiler::ir::Program;
use jadpo_compiler::span::Span;
use jadpo_plan::Plan;

use crate::delivery::{End, ListedStep, Runtime};
use crate::store::{MemStore, Store};
use crate::CrashAt;

pub use fixture::{prepare_fixture, Prepared};
pub use run::describe_end;

/// How long one test may run, crash runs included, unless
/// [`Options::time_limit`] says otherwise.
pub const TIME_LIMIT: Duration = Duration::from_secs(10);

/// The stack of the thread a test runs on.
const STACK_BYTES: usize = 256 << 20;

/// When a test must stop: its start and its time limit.
#[derive(Clone, Copy, Debug)]
pub struct Deadline {
    pub started: std::time::Instant,
    pub limit: Duration,
}

impl Deadline {
    pub fn passed(&self) -> bool {
        self.started.elapsed() > self.limit
    }

    /// The instant it passes (far ahead when the limit cannot be added).
    pub fn at(&self) -> std::time::Instant {
        self.started
            .checked_add(self.limit)
            .unwrap_or_else(|| self.started + Duration::from_secs(86_400 * 365))
    }
}

/// What a test's failure is about (`kind` in the JSON output).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureKind {
    /// `assert e` did not hold.
    Assertion,
    /// A delivery ended other than its statement expects.
    Outcome,
    /// An operation was called with no answer scripted for it.
    Unscripted,
    /// A test expression could not be evaluated.
    Fault,
    /// A crash run ended unlike the clean run.
    CrashRun,
    /// The test ran past its time limit.
    TimeLimit,
}

impl FailureKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Assertion => "assertion",
            FailureKind::Outcome => "outcome",
            FailureKind::Unscripted => "unscripted",
            FailureKind::Fault => "fault",
            FailureKind::CrashRun => "crash_run",
            FailureKind::TimeLimit => "time_limit",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    pub kind: FailureKind,
    pub message: String,
    /// The statement or assertion.
    pub span: Span,
    /// The delivery's step listing (the clean run's, for a crash run).
    pub steps: Vec<ListedStep>,
    /// A crash run's own step listing.
    pub crash_steps: Vec<ListedStep>,
    /// For a crash run: the first step whose line or answer differs
    /// between the two listings.
    pub differs_at: Option<u32>,
}

/// One test's result.
#[derive(Clone, Debug, PartialEq)]
pub struct TestReport {
    pub name: String,
    pub span: Span,
    pub crash_runs: u32,
    pub failures: Vec<Failure>,
}

impl TestReport {
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// What to run.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options<'o> {
    /// Runs only tests whose name contains this.
    pub filter: Option<&'o str>,
    /// Skips the crash matrix.
    pub no_crash: bool,
    /// How long one test may run, crash runs included ([`TIME_LIMIT`] when
    /// `None`).
    pub time_limit: Option<Duration>,
}

/// Makes the fresh, empty store each run of a test gets.
pub type Stores<'p> = &'p (dyn Fn() -> Arc<dyn Store> + Sync);

/// Runs a checked program's tests (lowered with its code) against its plan.
pub struct Suite<'p> {
    runtime: Runtime<'p>,
    stores: Option<Stores<'p>>,
}

impl<'p> Suite<'p> {
    pub fn new(program: &'p Program, plan: &'p Plan) -> Self {
        Suite {
            runtime: Runtime::new(program, plan),
            stores: None,
        }
    }

    /// Runs each test's runs on stores `stores` makes (a scratch SQLite
    /// file each) instead of in memory.
    pub fn with_stores(mut self, stores: Stores<'p>) -> Self {
        self.stores = Some(stores);
        self
    }

    fn store(&self) -> Arc<dyn Store> {
        match self.stores {
            Some(make) => make(),
            None => Arc::new(MemStore::new()),
        }
    }

    /// The tests `options` selects, in source order.
    pub fn selected<'s>(&'s self, options: Options<'s>) -> impl Iterator<Item = &'p Test> + 's {
        self.runtime
            .program
            .tests
            .iter()
            .filter(move |t| options.filter.is_none_or(|f| t.name.contains(f)))
    }

    /// Runs every selected test.
    pub fn run(&self, options: Options<'_>) -> Vec<TestReport> {
        self.selected(options)
            .map(|t| self.run_test(t, options))
            .collect()
    }

    /// Runs one test clean, then (unless `no_crash`) its crash matrix, on
    /// a thread of its own with a stack deep enough for the interpreter's
    /// deepest call chain ([`crate::eval::MAX_CALL_DEPTH`]) in any build.
    pub fn run_test(&self, test: &Test, options: Options<'_>) -> TestReport {
        std::thread::scope(|scope| {
            let spawned = std::thread::Builder::new()
                .name("jadpo-test".into())
                .stack_size(STACK_BYTES)
                .spawn_scoped(scope, || self.run_test_here(test, options));
            match spawned {
                Ok(handle) => handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                // No thread to be had: run here, on the caller's stack.
                Err(_) => self.run_test_here(test, options),
            }
        })
    }

    fn run_test_here(&self, test: &Test, options: Options<'_>) -> TestReport {
        let deadline = Deadline {
            started: std::time::Instant::now(),
            limit: options.time_limit.unwrap_or(TIME_LIMIT),
        };
        let prepared = fixture::prepare(self.runtime.program, test);
        let clean = run::Run::new(
            &self.runtime,
            test,
            &prepared,
            None,
            &[],
            deadline,
            self.store(),
        )
        .finish();
        let mut report = TestReport {
            name: test.name.clone(),
            span: test.span,
            crash_runs: 0,
            failures: clean.failures.clone(),
        };
        if !report.passed() || options.no_crash {
            return report;
        }
        for (delivery, crash) in self.matrix(&clean) {
            if deadline.passed() {
                report.failures.push(run::over_time(test.span, deadline));
                break;
            }
            let crashed = run::Run::new(
                &self.runtime,
                test,
                &prepared,
                Some((delivery, crash)),
                &clean.clocks,
                deadline,
                self.store(),
            )
            .finish();
            report.crash_runs += 1;
            if let Some(f) = crashed
                .failures
                .iter()
                .find(|f| f.kind == FailureKind::TimeLimit)
            {
                report.failures.push(f.clone());
                break;
            }
            // Like the clean run, the matrix stops at its first failure:
            // the closing total counts the crash runs up to it.
            if let Some(f) =
                compare::first_difference(self.runtime.program, &clean, &crashed, delivery, crash)
            {
                report.failures.push(f);
                break;
            }
        }
        report
    }

    /// The crash runs of a clean run: for each multi-step delivery that
    /// completed, failed or parked, every step it sent times the three
    /// points.
    fn matrix(&self, clean: &run::Ran) -> Vec<(usize, CrashAt)> {
        let mut out = Vec::new();
        for (i, d) in clean.deliveries.iter().enumerate() {
            let multi = self
                .runtime
                .action_plan(d.action)
                .is_some_and(|p| p.multi_step);
            let settled = matches!(
                d.end,
                End::Completed(_) | End::Failed(_) | End::Parked { .. }
            );
            if !(multi && settled) {
                continue;
            }
            let sent = d.steps.iter().map(|s| s.position).max().unwrap_or(0);
            out.extend(
                crate::delivery::crash_points(sent)
                    .into_iter()
                    .map(|c| (i, c)),
            );
        }
        out
    }
}

/// A crash-run failure's listing: each line of [`listing_lines`] after
/// `  `, and the first step that differs between the two runs after `> `,
/// with the answer this run saw there, so two listings that read the same
/// still show where the runs parted.
pub fn marked_listing_lines(steps: &[ListedStep], differs_at: Option<u32>) -> Vec<String> {
    steps
        .iter()
        .zip(listing_lines(steps))
        .map(|(s, line)| {
            if Some(s.position) != differs_at {
                return format!("  {line}");
            }
            match s.answer.is_empty() {
                true => format!("> {line}"),
                false => format!("> {line}  (answer: {})", s.answer),
            }
        })
        .collect()
}

/// `1  stripe.customers.create  answered  12:00:00  cus_1`: a step listing
/// as the test output shows it.
pub fn listing_lines(steps: &[ListedStep]) -> Vec<String> {
    steps
        .iter()
        .map(|s| {
            let time = crate::value::instant_text(s.sent_at);
            let clock = time.get(11..19).unwrap_or(&time).to_string();
            let mut line = format!("{}  {}  {}  {}", s.position, s.operation, s.state, clock);
            if !s.detail.is_empty() {
                line.push_str("  ");
                line.push_str(&s.detail);
            }
            line
        })
        .collect()
}
