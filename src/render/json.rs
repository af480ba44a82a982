//! Machine output: one JSON document for a whole check. The shape is
//! versioned by `schema_version` and documented in `docs/json-output.md`;
//! fields appear in the order of the structs below.

use super::{clamp, file_path, Summary};
use jadpo_compiler::diag::Diagnostic;
use jadpo_compiler::source::Files;
use jadpo_compiler::span::Span;
use serde::Serialize;

/// Bumped whenever a field changes meaning or is removed.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Serialize)]
struct Document<'a> {
    schema_version: u32,
    summary: Counts,
    diagnostics: Vec<JsonDiagnostic<'a>>,
}

#[derive(Serialize)]
struct Counts {
    files: usize,
    packages: usize,
    errors: usize,
    warnings: usize,
    /// Counted in `errors` and `warnings` but left out of `diagnostics`.
    #[serde(skip_serializing_if = "is_zero")]
    omitted: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[derive(Serialize)]
pub(crate) struct JsonDiagnostic<'a> {
    code: &'a str,
    severity: &'a str,
    summary: &'a str,
    location: Location<'a>,
    label: Option<&'a str>,
    related: Vec<Related<'a>>,
    reason: Option<&'a str>,
    fixes: Vec<JsonFix<'a>>,
    help: Option<&'a str>,
}

#[derive(Serialize)]
struct Related<'a> {
    message: &'a str,
    location: Location<'a>,
}

#[derive(Serialize)]
struct JsonFix<'a> {
    message: &'a str,
    edits: Vec<JsonEdit<'a>>,
}

#[derive(Serialize)]
struct JsonEdit<'a> {
    location: Location<'a>,
    replacement: &'a str,
}

/// File, byte range, and 1-based line/column of both ends. The end is
/// exclusive: the position just after the span. Columns count characters.
#[derive(Serialize)]
pub(crate) struct Location<'a> {
    file: &'a str,
    start_byte: usize,
    end_byte: usize,
    start_line: usize,
    start_column: usize,
    end_line: usize,
    end_column: usize,
}

/// The whole document, pretty-printed, ending with a newline.
pub fn render(files: &Files, diagnostics: &[Diagnostic], summary: Summary) -> String {
    let doc = document(files, diagnostics, summary);
    // Serializing these plain structs cannot fail.
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

/// [`render`] with one more top-level member: what `jadpo build` (`build`)
/// or `jadpo publish` (`publish`) did.
pub fn render_with(
    files: &Files,
    diagnostics: &[Diagnostic],
    summary: Summary,
    key: &str,
    value: serde_json::Value,
) -> String {
    let mut doc = serde_json::to_value(document(files, diagnostics, summary)).unwrap_or_default();
    if let serde_json::Value::Object(map) = &mut doc {
        map.insert(key.to_string(), value);
    }
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

fn document<'a>(files: &'a Files, diagnostics: &'a [Diagnostic], summary: Summary) -> Document<'a> {
    Document {
        schema_version: SCHEMA_VERSION,
        summary: Counts {
            files: summary.files,
            packages: summary.packages,
            errors: summary.errors,
            warnings: summary.warnings,
            omitted: summary.omitted,
        },
        diagnostics: diagnostics.iter().map(|d| diagnostic(files, d)).collect(),
    }
}

pub(crate) fn diagnostic<'a>(files: &'a Files, d: &'a Diagnostic) -> JsonDiagnostic<'a> {
    JsonDiagnostic {
        code: d.code,
        severity: d.severity.as_str(),
        summary: &d.summary,
        location: location(files, d.span),
        label: d.label.as_deref(),
        related: d
            .related
            .iter()
            .map(|r| Related {
                message: &r.message,
                location: location(files, r.span),
            })
            .collect(),
        reason: d.reason.as_deref(),
        fixes: d
            .fixes
            .iter()
            .map(|f| JsonFix {
                message: &f.message,
                edits: f
                    .edits
                    .iter()
                    .map(|e| JsonEdit {
                        location: location(files, e.span),
                        replacement: &e.replacement,
                    })
                    .collect(),
            })
            .collect(),
        help: d.help.as_deref(),
    }
}

pub(crate) fn location(files: &Files, span: Span) -> Location<'_> {
    let range = clamp(files, span);
    let (start, end) = super::span_positions(files, span);
    Location {
        file: file_path(files, span),
        start_byte: range.start,
        end_byte: range.end,
        start_line: start.line,
        start_column: start.column,
        end_line: end.line,
        end_column: end.column,
    }
}
