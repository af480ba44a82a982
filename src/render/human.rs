//! Human output: source frames drawn by ariadne (the only module that uses
//! it), followed by `= reason`, `= fix` and `= help` lines.

use super::excerpt::Excerpt;
use super::{clamp, file_path};
use ariadne::{Color, Config, Fmt, IndexType, Label, Report, ReportKind};
use jadpo_compiler::diag::{Diagnostic, Severity};
use jadpo_compiler::load::loaders::normalize_shown;
use jadpo_compiler::source::Files;
use jadpo_compiler::span::{FileId, Span};
use std::collections::BTreeMap;
use std::ops::Range;

/// Renders every diagnostic, each followed by a blank line; file paths as
/// they are in `files` (relative to the checked folder).
pub fn render_all(files: &Files, diagnostics: &[Diagnostic], color: bool) -> String {
    render_all_from(files, diagnostics, color, "")
}

/// [`render_all`] with file paths shown from `base`, the checked folder as
/// the user named it, so a terminal can open them from where the user
/// stands (`examples/billing/src/app.jadpo`, not `src/app.jadpo`).
pub fn render_all_from(
    files: &Files,
    diagnostics: &[Diagnostic],
    color: bool,
    base: &str,
) -> String {
    let mut out = String::new();
    for d in diagnostics {
        out.push_str(&render_from(files, d, color, base));
        out.push('\n');
    }
    out
}

/// Renders one diagnostic: header, frame, then the explanation lines.
pub fn render(files: &Files, d: &Diagnostic, color: bool) -> String {
    render_from(files, d, color, "")
}

/// [`render`] with file paths shown from `base` (see [`render_all_from`]).
pub fn render_from(files: &Files, d: &Diagnostic, color: bool, base: &str) -> String {
    let mut out = header(d, color);
    // A manifest that does not exist has no text to frame; the summary
    // names where it was looked for.
    if d.code != "manifest.missing" {
        out.push_str(&frame(files, d, color, base));
    }
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
fn frame(files: &Files, d: &Diagnostic, color: bool, base: &str) -> String {
    let excerpts = Excerpts::new(files, d, base);
    let primary = excerpts.span(files, d.span);
    let report = Report::build(report_kind(d.severity), primary)
        .with_config(
            Config::default()
                .with_color(color)
                .with_index_type(IndexType::Byte),
        )
        .with_labels(labels(files, d, &excerpts))
        .finish();
    let mut bytes = Vec::new();
    if report
        .write_for_stdout(excerpts.cache(), &mut bytes)
        .is_err()
    {
        return String::new();
    }
    let text = String::from_utf8_lossy(&bytes);
    let Some((_, rest)) = text.split_once('\n') else {
        return String::new();
    };
    excerpts.fix_location(files, d.span, rest)
}

/// One [`Excerpt`] per file a diagnostic points into.
struct Excerpts {
    by_file: BTreeMap<FileId, (String, Excerpt)>,
}

impl Excerpts {
    fn new(files: &Files, d: &Diagnostic, base: &str) -> Excerpts {
        let mut ranges: BTreeMap<FileId, Vec<Range<usize>>> = BTreeMap::new();
        for span in std::iter::once(d.span).chain(d.related.iter().map(|r| r.span)) {
            if files.try_get(span.file).is_some() {
                ranges
                    .entry(span.file)
                    .or_default()
                    .push(display_range(files, span));
            }
        }
        let by_file = ranges
            .into_iter()
            .map(|(id, ranges)| {
                let f = files.get(id);
                (
                    id,
                    (shown_path(base, &f.path), Excerpt::new(&f.text, &ranges)),
                )
            })
            .collect();
        Excerpts { by_file }
    }

    /// A span as ariadne draws it: in its file's excerpt.
    fn span(&self, files: &Files, span: Span) -> AriadneSpan {
        let range = display_range(files, span);
        match self.by_file.get(&span.file) {
            Some((path, e)) => (path.clone(), e.map(range.start)..e.map(range.end)),
            None => (file_path(files, span).to_string(), range),
        }
    }

    fn cache(&self) -> impl ariadne::Cache<String> + '_ {
        let sources = self
            .by_file
            .values()
            .map(|(path, e)| (path.clone(), ariadne::Source::from(e.text.as_str())));
        let missing = |id: &String| -> Result<&str, String> { Err(format!("no source for {id}")) };
        ariadne::FnCache::new(missing).with_sources(sources.collect())
    }

    /// Ariadne's `path:line:col` counts in the excerpt; where that is not
    /// the file's position (a cut line, a lone carriage return above, which
    /// ends a line for editors but not for ariadne), the file's is put back.
    fn fix_location(&self, files: &Files, span: Span, frame: &str) -> String {
        let Some((path, e)) = self.by_file.get(&span.file) else {
            return frame.to_string();
        };
        let range = display_range(files, span);
        let real = files.get(span.file).position(range.start);
        let shown = super::position(&e.text, e.map(range.start));
        if (shown.line, shown.column) == (real.line, real.column) {
            return frame.to_string();
        }
        let wrong = format!("{path}:{}:{}", shown.line, shown.column);
        let right = format!("{path}:{}:{}", real.line, real.column);
        frame.replacen(&wrong, &right, 1)
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
fn labels(files: &Files, d: &Diagnostic, excerpts: &Excerpts) -> Vec<Label<AriadneSpan>> {
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
            Label::new(excerpts.span(files, span))
                .with_message(one_line(message))
                .with_color(color)
        })
        .collect()
}

/// A span ariadne can draw: clamped into its file, and widened to one
/// character when empty so the frame still points somewhere.
fn display_range(files: &Files, span: Span) -> Range<usize> {
    let mut range = clamp(files, span);
    if let Some(file) = files.try_get(span.file).filter(|_| range.is_empty()) {
        let text = &file.text;
        if let Some(c) = text[range.start..].chars().next() {
            range.end = range.start + c.len_utf8();
        }
    }
    range
}

/// `path` (relative to the checked folder) as seen from where the user
/// stands, with `a/..` folded (`/work/app/../shared/x`, a package beside
/// the app, is `/work/shared/x`); embedded files (`<bundled>/...`) and
/// absolute paths as they are.
fn shown_path(base: &str, path: &str) -> String {
    let base = base.trim_end_matches('/');
    if base.is_empty() || base == "." || path.starts_with('<') || path.starts_with('/') {
        return path.to_string();
    }
    normalize_shown(&format!("{base}/{path}"))
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
        out.push_str(&super::escape_hostile(line));
    }
    out
}

fn one_line(text: &str) -> String {
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    super::escape_hostile(&words).into_owned()
}
