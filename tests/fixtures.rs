//! The fixture harness: every `pass_*`/`fail_*` fixture under
//! `tests/fixtures/` is checked as an app, its inline `// ^^^ code`
//! annotations are compared with the diagnostics exactly, and its source
//! plus uncoloured rendering is snapshotted in `tests/snapshots/`.

use crate::common;

use common::{expectation_of, expectations, Expectation, Fixture};
use jadpo::check::Outcome;
use jadpo::render::{human, Summary};
use std::path::Path;

#[test]
fn single_file_fixtures() {
    let mut failures = Vec::new();
    let snapshots = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        insta::glob!("fixtures/**/*.jadpo", |path| {
            if is_single_file_fixture(path) {
                failures.extend(run_fixture(path));
            }
        });
    }));
    assert_all_match(&failures, snapshots);
}

#[test]
fn folder_fixtures() {
    let mut failures = Vec::new();
    let snapshots = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        insta::glob!("fixtures/**/jadpo.yaml", |path| {
            if let Some(folder) = path.parent().filter(|f| is_fixture_name(f)) {
                failures.extend(run_fixture(folder));
            }
        });
    }));
    assert_all_match(&failures, snapshots);
}

/// Reports every fixture whose annotations do not match, all at once, and
/// only then any snapshot that changed: an annotation says what must be
/// reported, a snapshot only how it looks.
fn assert_all_match(failures: &[String], snapshots: std::thread::Result<()>) {
    assert!(
        failures.is_empty(),
        "{} fixture(s) do not match their annotations:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    if let Err(panic) = snapshots {
        std::panic::resume_unwind(panic);
    }
}

/// A `pass_`/`fail_` `.jadpo` file that is not inside a folder fixture.
fn is_single_file_fixture(path: &Path) -> bool {
    is_fixture_name(path) && !path.ancestors().skip(1).any(is_fixture_name)
}

fn is_fixture_name(path: &Path) -> bool {
    path.file_name()
        .map(|n| n.to_string_lossy())
        .is_some_and(|n| n.starts_with("pass_") || n.starts_with("fail_"))
}

/// Checks one fixture and snapshots its output; returns a report when its
/// annotations do not match, so every mismatch is listed in one run.
fn run_fixture(path: &Path) -> Option<String> {
    let fixture = Fixture::load(path);
    let outcome = fixture.check();
    let rendered = human::render_all(&outcome.files, &outcome.diagnostics, false);
    // Named by the fixture's own path: glob!'s default suffix depends on the
    // common prefix of all matches, which moves as fixtures are added.
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_suffix(fixture.name().replace(['/', '\\'], "__"));
    settings.bind(|| {
        insta::assert_snapshot!("fixture", snapshot_text(&fixture, &outcome, &rendered));
    });
    let problems = expectation_problems(&fixture, &outcome);
    (!problems.is_empty()).then(|| {
        format!(
            "--- {}\n{}\n\nactual output:\n{}",
            fixture.name(),
            problems.join("\n"),
            rendered
        )
    })
}

/// Every mismatch between the annotations and the diagnostics, as sentences:
/// annotations are matched against what `jadpo check` shows, which for the
/// packages inside a fixture's folder (`packages/...`, `vendor/...`) is
/// their own findings.
fn expectation_problems(fixture: &Fixture, outcome: &Outcome) -> Vec<String> {
    let mut problems = Vec::new();
    if outcome.program.is_none() {
        problems.push("the app could not be loaded at all".to_string());
    }
    let mut expected: Vec<Expectation> = fixture
        .files
        .iter()
        .flat_map(|(file, text)| expectations(file, text))
        .collect();
    let actual: Vec<(Expectation, &str)> = outcome
        .diagnostics
        .iter()
        .map(|d| (expectation_of(&outcome.files, d), d.summary.as_str()))
        .collect();
    if fixture.pass {
        if !expected.is_empty() {
            problems.push("a pass_ fixture has annotations; name it fail_".to_string());
        }
        for (e, summary) in &actual {
            problems.push(format!("pass_ fixture reports [{}] {summary}", e.code));
        }
        return problems;
    }
    if expected.is_empty() {
        problems.push("a fail_ fixture needs at least one `// ^^^ code` annotation".to_string());
    }
    for (found, summary) in actual {
        match expected.iter().position(|e| *e == found) {
            Some(i) => {
                expected.remove(i);
            }
            None => problems.push(format!(
                "unexpected [{}] at {}:{} ({} carets needed): {summary}",
                found.code, found.file, found.line, found.width
            )),
        }
    }
    for e in expected {
        problems.push(format!(
            "annotation [{}] at {}:{} ({} carets) matches no diagnostic",
            e.code, e.file, e.line, e.width
        ));
    }
    problems
}

/// The sources, then the rendering exactly as `jadpo check` prints it.
fn snapshot_text(fixture: &Fixture, outcome: &Outcome, rendered: &str) -> String {
    let mut text = String::new();
    for (file, source) in &fixture.files {
        text.push_str(&format!("=== {file} ===\n{source}"));
        if !source.ends_with('\n') {
            text.push('\n');
        }
    }
    let summary = Summary::new(
        outcome.stats.files,
        outcome.stats.packages,
        &outcome.diagnostics,
    );
    text.push_str("=== output ===\n");
    text.push_str(rendered);
    text.push_str(&summary.closing_line());
    text.push('\n');
    text
}
