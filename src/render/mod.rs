//! Renderers turn our [`Diagnostic`] model into text. Byte offsets become
//! line and column here and nowhere else.
//!
//! [`human`] draws source frames (the only user of ariadne); [`json`] writes
//! one machine-readable document; [`sarif`] writes SARIF 2.1.0 for code
//! scanning; [`github`] writes GitHub Actions workflow-command annotations.

pub mod excerpt;
pub mod github;
pub mod human;
pub mod json;
pub mod sarif;

use jadpo_compiler::diag::{Diagnostic, Severity};
use jadpo_compiler::source::Files;
use jadpo_compiler::span::Span;

/// Diagnostics printed per file; the rest are counted, not printed (a
/// binary file or a line of 2,000 stray `;` would otherwise print
/// gigabytes). The counts in the summary stay whole.
pub const MAX_PER_FILE: usize = 100;

/// The diagnostics to print, in their order: at most [`MAX_PER_FILE`] per
/// file, and how many were left out.
pub fn shown(diagnostics: &[Diagnostic]) -> (std::borrow::Cow<'_, [Diagnostic]>, usize) {
    let mut per_file: std::collections::HashMap<_, usize> = std::collections::HashMap::new();
    let mut kept = Vec::new();
    for d in diagnostics {
        let seen = per_file.entry(d.span.file).or_insert(0);
        *seen += 1;
        if *seen <= MAX_PER_FILE {
            kept.push(d);
        }
    }
    let omitted = diagnostics.len() - kept.len();
    if omitted == 0 {
        return (std::borrow::Cow::Borrowed(diagnostics), 0);
    }
    let kept: Vec<Diagnostic> = kept.into_iter().cloned().collect();
    (std::borrow::Cow::Owned(kept), omitted)
}

/// Counts for the closing line and the JSON summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub files: usize,
    pub packages: usize,
    pub errors: usize,
    pub warnings: usize,
    /// Diagnostics counted but not printed (see [`shown`]).
    pub omitted: usize,
}

impl Summary {
    pub fn new(files: usize, packages: usize, diagnostics: &[Diagnostic]) -> Self {
        let errors = diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        Summary {
            files,
            packages,
            errors,
            warnings: diagnostics.len() - errors,
            omitted: 0,
        }
    }

    pub fn with_omitted(self, omitted: usize) -> Self {
        Summary { omitted, ..self }
    }

    /// The line saying how many diagnostics were not printed, if any.
    pub fn omitted_line(&self) -> Option<String> {
        (self.omitted > 0).then(|| {
            format!(
                "{} not shown: at most {MAX_PER_FILE} are printed per file; fix those and check again",
                plural(self.omitted, "more diagnostic")
            )
        })
    }

    /// `checked 14 files, 3 packages: 0 errors, 1 warning`
    pub fn closing_line(&self) -> String {
        format!(
            "checked {}, {}: {}",
            plural(self.files, "file"),
            plural(self.packages, "package"),
            self.counts()
        )
    }

    /// `0 errors, 1 warning`
    pub fn counts(&self) -> String {
        format!(
            "{}, {}",
            plural(self.errors, "error"),
            plural(self.warnings, "warning")
        )
    }
}

/// `1 file`, `2 files`.
/// What a terminal would obey rather than show: C0 controls but the tab
/// and line feed, DEL, C1 controls, and the bidirectional controls that
/// reorder what follows them (Trojan Source).
pub fn is_hostile(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// A one-column picture of a hostile character: `␛` for ESC (the Control
/// Pictures block for C0 and DEL), `�` for the others; `None` for any
/// other character.
pub fn picture(c: char) -> Option<char> {
    if !is_hostile(c) {
        return None;
    }
    Some(match c as u32 {
        n @ 0..=0x1f => char::from_u32(0x2400 + n).unwrap_or('\u{fffd}'),
        0x7f => '\u{2421}',
        _ => '\u{fffd}',
    })
}

/// `text` with each hostile character written as a Rust-style escape
/// (`\u{1b}`): for names and messages printed outside a source frame
/// (a test's name, a failure's message).
pub fn escape_hostile(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(is_hostile) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_hostile(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

pub fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

pub use jadpo_compiler::source::Position;

/// A span clamped into its file, on character boundaries, with `start <= end`.
/// Renderers never trust a span: a bad one must not crash the output.
pub fn clamp(files: &Files, span: Span) -> std::ops::Range<usize> {
    let Some(file) = files.try_get(span.file) else {
        return 0..0;
    };
    let text = &file.text;
    let end = floor_boundary(text, span.end as usize);
    let start = floor_boundary(text, span.start as usize).min(end);
    start..end
}

/// `offset` clamped into `text` and moved back to a character boundary.
pub(crate) fn floor_boundary(text: &str, offset: usize) -> usize {
    let mut at = offset.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Markdown as plain text, for readers that show no Markdown (a terminal,
/// a plain-text hover, SARIF's `help.text`): `#` and `##` headings
/// underlined, `###` headings as lines, code blocks indented four spaces,
/// quotes as lines, and no code or emphasis marks.
pub fn plain_text(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut in_code = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            out.push_str("    ");
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let clean = line.replace('`', "").replace("**", "");
        let (text, under) = if let Some(h) = clean.strip_prefix("### ") {
            (h, None)
        } else if let Some(h) = clean.strip_prefix("## ") {
            (h, Some('-'))
        } else if let Some(h) = clean.strip_prefix("# ") {
            (h, Some('='))
        } else {
            (clean.strip_prefix("> ").unwrap_or(&clean), None)
        };
        out.push_str(text);
        out.push('\n');
        if let Some(c) = under {
            out.extend(std::iter::repeat_n(c, text.chars().count()));
            out.push('\n');
        }
    }
    out
}

/// The 1-based position of a byte offset in a text that is not one of the
/// check's files (clamped into the text); a file's own position comes from
/// its line index (`SourceFile::position`).
pub fn position(text: &str, offset: usize) -> Position {
    jadpo_compiler::source::LineIndex::new(text).position(text, offset)
}

/// The 1-based start and exclusive end positions of a span (clamped).
pub fn span_positions(files: &Files, span: Span) -> (Position, Position) {
    let range = clamp(files, span);
    let Some(file) = files.try_get(span.file) else {
        return (position("", 0), position("", 0));
    };
    (file.position(range.start), file.position(range.end))
}

/// The text of a span's file, or `""` for a bad id.
pub fn file_text(files: &Files, span: Span) -> &str {
    files.try_get(span.file).map_or("", |f| &f.text)
}

/// A file's path as CI tools want it, with `/`: the project-relative path
/// with `root` in front (the app's folder from the repository root, see
/// `locate::ci_root`; or an absolute folder outside any repository).
/// Paths of bundled files (`<bundled>/...`) and absolute paths are left as
/// they are.
pub fn repo_path(root: &str, path: &str) -> String {
    let path = path.replace('\\', "/");
    let root = root.replace('\\', "/");
    let root = root.trim_start_matches("./").trim_end_matches('/');
    if path.starts_with('<') || path.starts_with('/') || root.is_empty() || root == "." {
        return path;
    }
    let joined = normalize(&format!("{root}/{path}"));
    if root.starts_with('/') {
        return format!("/{joined}");
    }
    joined
}

/// Folds `.` and `a/..` segments; leading `..` segments stay.
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    parts.join("/")
}

/// The path shown for a span's file, or `<unknown file>` for a bad id.
pub fn file_path(files: &Files, span: Span) -> &str {
    files
        .try_get(span.file)
        .map_or("<unknown file>", |f| &f.path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closing_line_uses_singular_for_one() {
        let s = Summary {
            files: 1,
            packages: 3,
            errors: 0,
            warnings: 1,
            omitted: 0,
        };
        assert_eq!(
            s.closing_line(),
            "checked 1 file, 3 packages: 0 errors, 1 warning"
        );
    }

    #[test]
    fn plain_text_underlines_headings_and_indents_code() {
        let doc =
            "# a.b: x\n\n## Why\n\nUse `attempt` **now**.\n\n```jadpo\nvar x = 1\n```\n> quoted\n";
        assert_eq!(
            plain_text(doc),
            "a.b: x\n======\n\nWhy\n---\n\nUse attempt now.\n\n    var x = 1\nquoted\n"
        );
    }

    #[test]
    fn repo_path_puts_a_relative_root_in_front() {
        assert_eq!(
            repo_path("examples/billing/", "src/a.jadpo"),
            "examples/billing/src/a.jadpo"
        );
        assert_eq!(repo_path(".", "src/a.jadpo"), "src/a.jadpo");
        assert_eq!(
            repo_path("./app", "../registry/x/package.yaml"),
            "registry/x/package.yaml"
        );
        assert_eq!(repo_path("/abs/app", "src/a.jadpo"), "/abs/app/src/a.jadpo");
        assert_eq!(repo_path("/abs/app", "../reg/p.yaml"), "/abs/reg/p.yaml");
        assert_eq!(repo_path("", "src/a.jadpo"), "src/a.jadpo");
        assert_eq!(
            repo_path("app", "<bundled>/stripe/package.yaml"),
            "<bundled>/stripe/package.yaml"
        );
    }
}
