//! `jadpo test [PATH]` (design `testing.md` section 11): checks the app,
//! refuses to run on errors, then runs each test in source order with its
//! crash matrix and prints a line per test and a closing line, or one JSON
//! document (`spec/test-output.schema.json`).

use jadpo_compiler::diag::Diagnostic;
use jadpo_compiler::load::loaders::join;
use jadpo_compiler::load::Loader;
use jadpo_compiler::resolve::Lowering;
use jadpo_compiler::source::Files;
use jadpo_runtime::suite::{
    listing_lines, marked_listing_lines, Failure, FailureKind, Options, Suite, TestReport,
};
use jadpo_runtime::ListedStep;
use serde::Serialize;
use std::io::Write;

use crate::check::{check_app_lowering, Outcome};
use crate::render::{self, json, Summary};

/// Bumped whenever a field of the JSON output changes meaning or goes.
pub const FORMAT: u32 = 1;

#[derive(Clone, Copy, Debug, Default)]
pub struct TestArgs<'a> {
    pub filter: Option<&'a str>,
    pub no_crash: bool,
    pub json: bool,
    pub color: bool,
    /// One test's limit, crash runs included (10 s when `None`).
    pub time_limit: Option<std::time::Duration>,
    /// Show which test is running (human output on a terminal).
    pub progress: bool,
}

/// [`run`] into a string: what `jadpo test` prints, and its exit status.
pub fn run_to_string(loader: &dyn Loader, root: &str, args: TestArgs<'_>) -> (String, u8) {
    let mut out = Vec::new();
    let status = run(loader, root, args, &mut out);
    (String::from_utf8_lossy(&out).into_owned(), status)
}

/// Runs `jadpo test`, writing as it goes (a line per test as it ends);
/// returns the exit status: 0 every test and crash run passed, 1 one
/// failed or the check has errors, 2 the project cannot be checked at all.
/// A write error (a closed pipe) stops the output, not the status.
pub fn run(loader: &dyn Loader, root: &str, args: TestArgs<'_>, out: &mut dyn Write) -> u8 {
    let outcome = if is_package_folder(loader, root) {
        crate::publish::check_package_for_tests(loader, root)
    } else {
        check_app_lowering(loader, root, jadpo_checker::Wanted::Whole, Lowering::Code)
    };
    let plan = outcome.plan.as_ref().and_then(|p| p.app());
    let (Some(program), Some(plan), false) = (&outcome.program, plan, outcome.has_errors()) else {
        let (text, status) = refused(&outcome, args, root);
        let _ = out.write_all(text.as_bytes());
        return status;
    };
    let suite = Suite::new(program, plan);
    let options = Options {
        filter: args.filter,
        no_crash: args.no_crash,
        time_limit: args.time_limit,
    };
    if args.json {
        let reports = suite.run(options);
        let _ = out.write_all(json_document(&outcome.files, &reports).as_bytes());
        return u8::from(reports.iter().any(|r| !r.passed()));
    }
    let selected: Vec<_> = suite.selected(options).collect();
    let mut reports = Vec::with_capacity(selected.len());
    for (i, test) in selected.iter().enumerate() {
        if args.progress {
            let _ = write!(
                out,
                "running {}/{}: \"{}\" ...",
                i + 1,
                selected.len(),
                render::escape_hostile(&test.name)
            );
            let _ = out.flush();
        }
        let report = suite.run_test(test, options);
        if args.progress {
            // Back to the start of the line, and clear it.
            let _ = out.write_all(b"\r\x1b[2K");
        }
        let _ = out.write_all(human_report(&outcome.files, &report, args.color, root).as_bytes());
        let _ = out.flush();
        reports.push(report);
    }
    let _ = out.write_all(closing_line(&reports).as_bytes());
    u8::from(reports.iter().any(|r| !r.passed()))
}

/// A folder with a `package.yaml` and no `jadpo.yaml`: a package's tests.
fn is_package_folder(loader: &dyn Loader, root: &str) -> bool {
    // A huge manifest is not read here: its size says it is there, and
    // loading it reports it.
    let limit = jadpo_compiler::load::yaml::MAX_MANIFEST_BYTES as u64;
    let has = |name: &str| {
        let path = join(root, name);
        loader.size(&path).is_some_and(|len| len > limit) || loader.read(&path).is_ok()
    };
    !has("jadpo.yaml") && has("package.yaml")
}

/// The check failed: its diagnostics, and no test runs.
fn refused(outcome: &Outcome, args: TestArgs<'_>, root: &str) -> (String, u8) {
    let status = if outcome.program.is_none() { 2 } else { 1 };
    if args.json {
        let doc = Unchecked {
            format: FORMAT,
            checked: false,
            diagnostics: outcome
                .diagnostics
                .iter()
                .map(|d| json::diagnostic(&outcome.files, d))
                .collect(),
        };
        let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        text.push('\n');
        return (text, status);
    }
    let mut out =
        render::human::render_all_from(&outcome.files, &outcome.diagnostics, args.color, root);
    let summary = Summary::new(
        outcome.stats.files,
        outcome.stats.packages,
        &outcome.diagnostics,
    );
    if outcome.program.is_some() {
        out.push_str(&format!("{}\n", summary.closing_line()));
        out.push_str("not running tests: the project has errors\n");
    } else {
        out.push_str("could not check this project\n");
    }
    (out, status)
}

/// `test "NAME" ... ok (9 crash runs)`, or `... FAILED` and each failure.
/// File paths in failures are shown from `base`, the app as the user named it.
fn human_report(files: &Files, r: &TestReport, color: bool, base: &str) -> String {
    let mut out = format!("test \"{}\" ... ", render::escape_hostile(&r.name));
    if r.passed() {
        out.push_str(&match r.crash_runs {
            0 => "ok\n".to_string(),
            1 => "ok (1 crash run)\n".to_string(),
            n => format!("ok ({n} crash runs)\n"),
        });
        return out;
    }
    out.push_str("FAILED\n");
    // A test stops at its first failure, crash runs included.
    for f in &r.failures {
        out.push_str(&failure_text(files, f, color, base));
    }
    out
}

fn failure_text(files: &Files, f: &Failure, color: bool, base: &str) -> String {
    let d = Diagnostic::error("test.failed", f.span, f.message.clone()).with_label(label(f));
    let mut out = render::human::render_from(files, &d, color, base);
    let crash = f.kind == FailureKind::CrashRun;
    let listings: [(&str, &[ListedStep]); 2] = if crash {
        [
            ("steps of the clean run:", &f.steps),
            ("steps of the crash run:", &f.crash_steps),
        ]
    } else {
        [("steps:", &f.steps), ("", &[])]
    };
    for (title, steps) in listings {
        if title.is_empty() || (steps.is_empty() && !crash) {
            continue;
        }
        out.push_str(&format!("  {title}\n"));
        if steps.is_empty() {
            out.push_str("    (no steps recorded)\n");
        }
        let lines = if crash {
            marked_listing_lines(steps, f.differs_at)
        } else {
            listing_lines(steps)
        };
        for line in lines {
            out.push_str(&format!("    {}\n", render::escape_hostile(&line)));
        }
    }
    out.push('\n');
    out
}

fn label(f: &Failure) -> &'static str {
    match f.kind {
        FailureKind::Assertion => "this does not hold",
        FailureKind::Outcome => "this delivery ended otherwise",
        FailureKind::Unscripted => "the fixture scripts no answer for a call this makes",
        FailureKind::CrashRun => "a crash in this delivery changes the test",
        FailureKind::TimeLimit => "the test stopped here",
        FailureKind::Fault => "this cannot be evaluated",
    }
}

/// `4 passed, 1 failed; 36 crash runs`
fn closing_line(reports: &[TestReport]) -> String {
    let failed = reports.iter().filter(|r| !r.passed()).count();
    let passed = reports.len() - failed;
    let crash_runs: u32 = reports.iter().map(|r| r.crash_runs).sum();
    let runs = if crash_runs == 1 {
        "crash run"
    } else {
        "crash runs"
    };
    format!("{passed} passed, {failed} failed; {crash_runs} {runs}\n")
}

#[derive(Serialize)]
struct Unchecked<'a> {
    format: u32,
    checked: bool,
    diagnostics: Vec<json::JsonDiagnostic<'a>>,
}

#[derive(Serialize)]
struct Document<'a> {
    format: u32,
    checked: bool,
    tests: Vec<JsonTest<'a>>,
    passed: usize,
    failed: usize,
    crash_runs: u32,
}

#[derive(Serialize)]
struct JsonTest<'a> {
    name: &'a str,
    verdict: &'static str,
    crash_runs: u32,
    failures: Vec<JsonFailure<'a>>,
}

#[derive(Serialize)]
struct JsonFailure<'a> {
    kind: &'static str,
    message: &'a str,
    span: json::Location<'a>,
    steps: Vec<JsonStep<'a>>,
    /// A crash run's own listing (empty otherwise).
    crash_steps: Vec<JsonStep<'a>>,
    /// A crash run's first step that differs between the two listings.
    #[serde(skip_serializing_if = "Option::is_none")]
    first_differing_step: Option<u32>,
}

#[derive(Serialize)]
struct JsonStep<'a> {
    position: u32,
    operation: &'a str,
    state: &'static str,
    sent_at: String,
    detail: &'a str,
    /// The answer this run saw (canonical JSON, cut), when it answered.
    #[serde(skip_serializing_if = "str::is_empty")]
    answer: &'a str,
}

fn json_document(files: &Files, reports: &[TestReport]) -> String {
    let failed = reports.iter().filter(|r| !r.passed()).count();
    let doc = Document {
        format: FORMAT,
        checked: true,
        tests: reports
            .iter()
            .map(|r| JsonTest {
                name: &r.name,
                verdict: if r.passed() { "ok" } else { "failed" },
                crash_runs: r.crash_runs,
                failures: r
                    .failures
                    .iter()
                    .map(|f| JsonFailure {
                        kind: f.kind.as_str(),
                        message: &f.message,
                        span: json::location(files, f.span),
                        steps: json_steps(&f.steps),
                        crash_steps: json_steps(&f.crash_steps),
                        first_differing_step: f.differs_at,
                    })
                    .collect(),
            })
            .collect(),
        passed: reports.len() - failed,
        failed,
        crash_runs: reports.iter().map(|r| r.crash_runs).sum(),
    };
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

fn json_steps(steps: &[ListedStep]) -> Vec<JsonStep<'_>> {
    steps
        .iter()
        .map(|s| JsonStep {
            position: s.position,
            operation: &s.operation,
            state: s.state,
            sent_at: jadpo_runtime::value::instant_text(s.sent_at),
            detail: &s.detail,
            answer: &s.answer,
        })
        .collect()
}
