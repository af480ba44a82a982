//! The renderers on hand-made diagnostics, independent of the compiler:
//! human frames with related labels across files (a `.jadpo` source and a
//! `package.yaml`), the `= reason/fix/help` lines, and the JSON document.

use jadpo::render::{human, json, Summary};
use jadpo_compiler::diag::{Diagnostic, Edit};
use jadpo_compiler::source::{Files, Unit};
use jadpo_compiler::span::{FileId, Span};

const APP: &str = "\
action refund(charge: stripe.ChargeId) -> Unit {
    attempt stripe.refunds.create(stripe.RefundCreate { charge: charge })
    attempt postmark.email.send(postmark.Email { to: \"ops@example.com\" })
}
";

const PACKAGE: &str = "\
package: postmark
version: 1.0.0
operations:
  email.send:
    request: Email
    changes: true
";

fn files() -> Files {
    let mut files = Files::new();
    files.add("src/refund.jadpo", APP, Unit::App);
    files.add(
        "<bundled>/postmark/package.yaml",
        PACKAGE,
        Unit::Package("postmark".into()),
    );
    files
}

fn span_of(files: &Files, file: u32, needle: &str) -> Span {
    let text = &files.get(FileId(file)).text;
    let start = text.find(needle).unwrap_or(0) as u32;
    Span::new(FileId(file), start, start + needle.len() as u32)
}

fn unkeyed(files: &Files) -> Diagnostic {
    Diagnostic::error(
        "step.unkeyed",
        span_of(files, 0, "postmark.email.send"),
        "`postmark.email.send` cannot be repeated safely, and this action makes 2 changing calls",
    )
    .with_label("not idempotent: a retry may send the email twice")
    .with_related(
        span_of(files, 0, "stripe.refunds.create"),
        "first changing call",
    )
    .with_related(
        span_of(files, 1, "email.send"),
        "declared without `idempotent: true`",
    )
    .with_reason("a step that cannot be repeated may run twice when the action resumes")
    .with_edit_fix(
        "move the email to a subscriber of an event",
        vec![Edit {
            span: span_of(files, 0, "attempt postmark"),
            replacement: "emit".into(),
        }],
    )
    .with_help("see `jadpo explain step.unkeyed`")
}

fn late(files: &Files) -> Diagnostic {
    Diagnostic::warning(
        "step.late_failure",
        span_of(files, 0, "refund"),
        "`refund` can fail after its first changing call",
    )
    .with_reason("line one of the reason\nline two of the reason")
}

#[test]
fn human_output_shows_frames_across_files_and_explanations() {
    let files = files();
    let out = human::render_all(&files, &[unkeyed(&files), late(&files)], false);
    insta::assert_snapshot!(out);
}

#[test]
fn colour_is_only_used_when_asked() {
    let files = files();
    let plain = human::render(&files, &unkeyed(&files), false);
    let coloured = human::render(&files, &unkeyed(&files), true);
    assert!(!plain.contains('\u{1b}'), "plain output has escape codes");
    assert!(
        coloured.contains('\u{1b}'),
        "coloured output has no escape codes"
    );
}

#[test]
fn bad_spans_are_drawn_without_crashing() {
    let files = files();
    let spans = [
        Span::new(FileId(0), 40, 10),
        Span::new(FileId(0), 9_999, 10_000),
        Span::new(FileId(7), 0, 1),
        Span::new(FileId(0), 0, 0),
    ];
    for span in spans {
        let d = Diagnostic::error("name.unknown", span, "odd span");
        let out = human::render(&files, &d, false);
        assert!(out.starts_with("error[name.unknown]: odd span"), "{out}");
        let summary = Summary::new(1, 0, std::slice::from_ref(&d));
        let doc: serde_json::Value = serde_json::from_str(&json::render(&files, &[d], summary))
            .unwrap_or_else(|e| panic!("json does not parse: {e}"));
        assert_eq!(doc["summary"]["errors"], 1);
    }
}

#[test]
fn json_output_has_positions_related_locations_and_edits() {
    let files = files();
    let diags = [unkeyed(&files), late(&files)];
    let summary = Summary::new(1, 1, &diags);
    insta::assert_snapshot!(json::render(&files, &diags, summary));
}
