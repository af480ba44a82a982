//! Human output: source frames drawn by ariadne (the only module that uses
//! it), followed by `= reason`, `= fix` and `= help` lines.

use super::{clamp, file_path};
use ariadne::{Color, Config, Fmt, IndexType, Label, Report, ReportKind};
use jadpo_compiler::diag::{Diagnostic, Severity};
use jadpo_compiler::source::Files;
use jadpo_compiler::span::Span;
use std::ops::Range;

/// Renders every diagnostic, each followed by a blank line.
pub fn render_all(files: &Files, diagnostics: &[Diagnostic], color: bool) -> String {
    let mut out = String::new();
    for d in diagnostics {
        out.push_str(&render(files, d, color));
        out.push('\n');
    }
    out
}

/// Renders one diagnostic: header, frame, then the explanation lines.
pub fn render(files: &Files, d: &Diagnostic, color: bool) -> String {
    let mut out = header(d, color);
    out.push_str(&frame(files, d, color));
    for line in explanation(d) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// `error[step.unkeyed]: summary`. Written here rather than by ariadne,
/// whose header puts the code first and colours custom kinds even when colour
/// is off.
fn header(d: &Diagnostic, color: bool) -> String {
    let kind = format!("{}[{}]", d.severity.as_str(), d.code);
    let summary = one_line(&d.summary);
    if color {
        format!("{}: {}\n", kind.fg(severity_color(d.severity)), summary)
    } else {
        format!("{kind}: {summary}\n")
    }
}

fn severity_color(severity: Severity) -> Color {
    match severity {
        Severity::Error => Color::Red,
        Severity::Warning => Color::Yellow,
    }
}

type AriadneSpan = (String, Range<usize>);

/// The source frame with the primary and related labels, without ariadne's
/// own header line.
fn frame(files: &Files, d: &Diagnostic, color: bool) -> String {
    let primary = display_span(files, d.span);
    let report = Report::build(report_kind(d.severity), primary)
        .with_config(
            Config::default()
                .with_color(color)
                .with_index_type(IndexType::Byte),
        )
        .with_labels(labels(files, d))
        .finish();
    let mut bytes = Vec::new();
    if report
        .write_for_stdout(ariadne::sources(sources_for(files, d)), &mut bytes)
        .is_err()
    {
        return String::new();
    }
    let text = String::from_utf8_lossy(&bytes);
    match text.split_once('\n') {
        Some((_, rest)) => rest.to_string(),
        None => String::new(),
    }
}

fn report_kind(severity: Severity) -> ReportKind<'static> {
    match severity {
        Severity::Error => ReportKind::Error,
        Severity::Warning => ReportKind::Warning,
    }
}

/// The primary label and the related ones, ordered by file (the primary's
/// first) and position: ariadne starts a new frame whenever a label goes
/// back to an earlier line, so this order keeps one frame per file.
fn labels(files: &Files, d: &Diagnostic) -> Vec<Label<AriadneSpan>> {
    // An empty message still draws the underline; `None` would draw nothing.
    let primary = (
        d.span,
        d.label.as_deref().unwrap_or(""),
        severity_color(d.severity),
    );
    let related = d
        .related
        .iter()
        .map(|r| (r.span, r.message.as_str(), Color::Blue));
    let mut all: Vec<_> = std::iter::once(primary).chain(related).collect();
    all.sort_by_key(|(span, _, _)| (span.file != d.span.file, span.file, span.start));
    all.into_iter()
        .map(|(span, message, color)| {
            Label::new(display_span(files, span))
                .with_message(one_line(message))
                .with_color(color)
        })
        .collect()
}

/// The files a diagnostic points into, for ariadne's source cache.
fn sources_for<'a>(files: &'a Files, d: &Diagnostic) -> Vec<(String, &'a str)> {
    let mut ids: Vec<_> = std::iter::once(d.span.file)
        .chain(d.related.iter().map(|r| r.span.file))
        .filter(|id| (id.0 as usize) < files.len())
        .collect();
    ids.sort();
    ids.dedup();
    ids.into_iter()
        .map(|id| {
            let f = files.get(id);
            (f.path.clone(), f.text.as_str())
        })
        .collect()
}

/// A span ariadne can draw: clamped into its file, and widened to one
/// character when empty so the frame still points somewhere.
fn display_span(files: &Files, span: Span) -> AriadneSpan {
    let path = file_path(files, span).to_string();
    let mut range = clamp(files, span);
    if range.is_empty() && (span.file.0 as usize) < files.len() {
        let text = &files.get(span.file).text;
        if let Some(c) = text[range.start..].chars().next() {
            range.end = range.start + c.len_utf8();
        }
    }
    (path, range)
}

/// `= reason: ...`, `= fix: ...` and `= help: ...` lines.
fn explanation(d: &Diagnostic) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(reason) = &d.reason {
        lines.push(equals_line("reason", reason));
    }
    for fix in &d.fixes {
        lines.push(equals_line("fix", &fix.message));
    }
    if let Some(help) = &d.help {
        lines.push(equals_line("help", help));
    }
    lines
}

/// One `= name: text` entry; continuation lines are indented under the text.
fn equals_line(name: &str, text: &str) -> String {
    let prefix = format!("   = {name}: ");
    let indent = " ".repeat(prefix.chars().count());
    let mut out = String::new();
    for (i, line) in text.trim_end().lines().enumerate() {
        if i == 0 {
            out.push_str(&prefix);
        } else {
            out.push('\n');
            out.push_str(&indent);
        }
        out.push_str(line);
    }
    out
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
