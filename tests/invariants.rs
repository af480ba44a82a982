//! Invariants every fixture must keep, whatever it tests: checking never
//! panics; the output is the same bytes when folders are listed in reverse
//! and on one thread or several; every span lies inside its file on
//! character boundaries.

use crate::common;

use common::{all_fixtures, Fixture, ROOT};
use jadpo::check::{check_app, Outcome};
use jadpo::render::{human, json, Summary};
use jadpo_compiler::source::Files;
use jadpo_compiler::span::Span;

/// Human and JSON output together: what must not vary between runs.
fn output(outcome: &Outcome) -> String {
    let summary = Summary::new(
        outcome.stats.files,
        outcome.stats.packages,
        &outcome.diagnostics,
    );
    let mut text = human::render_all(&outcome.files, &outcome.diagnostics, false);
    text.push_str(&json::render(&outcome.files, &outcome.diagnostics, summary));
    text
}

fn on_threads(threads: usize, fixture: &Fixture, reverse: bool) -> String {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap_or_else(|e| panic!("cannot start {threads} threads: {e}"));
    let loader = fixture.loader(reverse);
    pool.install(|| output(&check_app(&loader, ROOT)))
}

#[test]
fn checking_never_panics() {
    let mut panicked = Vec::new();
    for fixture in all_fixtures() {
        if std::panic::catch_unwind(|| fixture.check()).is_err() {
            panicked.push(fixture.name());
        }
    }
    assert!(panicked.is_empty(), "checking panicked on: {panicked:?}");
}

#[test]
fn output_does_not_depend_on_listing_order_or_threads() {
    for fixture in all_fixtures() {
        let base = on_threads(1, &fixture, false);
        assert_eq!(
            base,
            on_threads(1, &fixture, true),
            "{}: output changes when folders are listed in reverse",
            fixture.name()
        );
        assert_eq!(
            base,
            on_threads(4, &fixture, false),
            "{}: output changes between 1 and 4 threads",
            fixture.name()
        );
    }
}

#[test]
fn every_span_lies_inside_its_file() {
    for fixture in all_fixtures() {
        let all = crate::common::everything(&fixture);
        for d in &all.diagnostics {
            for span in d.spans() {
                if let Err(problem) = span_problem(&all.files, span) {
                    panic!("{}: [{}] {}: {problem}", fixture.name(), d.code, d.summary);
                }
            }
        }
    }
}

/// Every span the resolved program holds (its declarations, bodies,
/// code, tests), found by the IR's one span walk, lies inside its file.
#[test]
fn every_program_span_lies_inside_its_file() {
    let mut checked = 0;
    for fixture in all_fixtures() {
        let all = jadpo::workspace::Workspace::once(
            std::path::PathBuf::from(ROOT),
            jadpo_compiler::resolve::Lowering::Code,
            jadpo_checker::Wanted::Nothing,
        )
        .run(&fixture.loader(false));
        let Some(mut program) = all.program else {
            continue;
        };
        for span in jadpo_compiler::ir::spans::spans_of(&mut program) {
            if let Err(problem) = span_problem(&all.files, span) {
                panic!("{}: a span of the program: {problem}", fixture.name());
            }
            checked += 1;
        }
    }
    assert!(checked > 10_000, "only {checked} spans walked");
}

fn span_problem(files: &Files, span: Span) -> Result<(), String> {
    if span.file.0 as usize >= files.len() {
        return Err(format!("span {span:?} names no file"));
    }
    let text = &files.get(span.file).text;
    let (start, end) = (span.start as usize, span.end as usize);
    if start > end || end > text.len() {
        return Err(format!(
            "span {start}..{end} outside a file of {} bytes",
            text.len()
        ));
    }
    if !text.is_char_boundary(start) || !text.is_char_boundary(end) {
        return Err(format!("span {start}..{end} splits a character"));
    }
    Ok(())
}
