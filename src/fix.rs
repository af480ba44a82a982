//! `jadpo check --fix` and `--diff`: the fixes the registry marks safe
//! (`registry::SAFE_FIXES`), applied to the app's own files. A file with a
//! syntax error is never touched; a fix whose edits overlap another's is
//! left for the next run; every write is atomic and refuses links.

use crate::check::Outcome;
use crate::write::rewrite_source;
use jadpo_compiler::diag::{Diagnostic, Edit};
use jadpo_compiler::span::FileId;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One file's fixes: its text before and after.
pub struct FileFix {
    /// The file's path as the check shows it (relative to the app).
    pub path: String,
    pub before: String,
    pub after: String,
    /// The findings whose fixes it applies.
    pub fixed: usize,
}

/// The safe fixes of `outcome`'s findings, by file, in path order.
pub fn safe_fixes(outcome: &Outcome) -> Vec<FileFix> {
    let broken: BTreeSet<FileId> = outcome
        .diagnostics
        .iter()
        .filter(|d| d.code.starts_with("syntax."))
        .map(|d| d.span.file)
        .collect();
    let mut by_file: BTreeMap<FileId, Vec<&Edit>> = BTreeMap::new();
    for d in &outcome.diagnostics {
        if let Some(edits) = safe_edits(d) {
            let file = d.span.file;
            if !broken.contains(&file) && edits.iter().all(|e| e.span.file == file) {
                by_file.entry(file).or_default().extend(edits);
            }
        }
    }
    let mut out: Vec<FileFix> = by_file
        .into_iter()
        .filter_map(|(file, edits)| {
            let source = outcome.files.get(file);
            // Only the app's own files: never the bundled packages or the
            // standard library (shown as `<bundled>/...`).
            if source.path.starts_with('<') || source.path.split('/').any(|p| p == "..") {
                return None;
            }
            let (after, fixed) = apply(&source.text, edits);
            (fixed > 0).then(|| FileFix {
                path: source.path.clone(),
                before: source.text.to_string(),
                after,
                fixed,
            })
        })
        .collect();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// The edits of `d`'s first fix, when its code's fix is safe.
fn safe_edits(d: &Diagnostic) -> Option<&[Edit]> {
    if !jadpo_checker::registry::fix_is_safe(d.code) {
        return None;
    }
    d.fixes
        .iter()
        .find(|f| !f.edits.is_empty())
        .map(|f| f.edits.as_slice())
}

/// `text` with the edits applied; an edit overlapping an earlier one is
/// skipped. Returns the text and how many edits were applied.
fn apply(text: &str, mut edits: Vec<&Edit>) -> (String, usize) {
    edits.sort_by_key(|e| (e.span.start, e.span.end));
    let mut out = String::with_capacity(text.len());
    let mut at = 0usize;
    let mut applied = 0;
    for e in edits {
        let (start, end) = whole_line(text, e);
        let valid = start >= at
            && end <= text.len()
            && text.is_char_boundary(start)
            && text.is_char_boundary(end);
        if !valid {
            continue;
        }
        out.push_str(&text[at..start]);
        out.push_str(&e.replacement);
        at = end;
        applied += 1;
    }
    out.push_str(&text[at..]);
    (out, applied)
}

/// An edit's range; a deletion that would leave its line blank takes the
/// line (and its line break) with it.
fn whole_line(text: &str, e: &Edit) -> (usize, usize) {
    let (start, end) = (e.span.start as usize, e.span.end as usize);
    if !e.replacement.is_empty() || end > text.len() || start > end {
        return (start, end);
    }
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[end..].find('\n').map_or(text.len(), |i| end + i + 1);
    let blank = |s: &str| {
        s.chars()
            .all(|c| c == ' ' || c == '\t' || c == '\r' || c == '\n')
    };
    if blank(&text[line_start..start]) && blank(&text[end..line_end]) {
        (line_start, line_end)
    } else {
        (start, end)
    }
}

/// What writing the fixes did: the fixes written, and each file that
/// could not be written with the reason (the others are still written).
pub struct Written<'f> {
    pub written: Vec<&'f FileFix>,
    pub failed: Vec<String>,
}

/// Writes each fixed file under `root`, keeping its mode and owner, and
/// leaving a file that changed since the check read it.
pub fn write_fixes<'f>(root: &str, fixes: &'f [FileFix]) -> Written<'f> {
    let mut out = Written {
        written: Vec::new(),
        failed: Vec::new(),
    };
    for fix in fixes {
        let path = Path::new(root).join(&fix.path);
        match rewrite_source(&path, fix.before.as_bytes(), fix.after.as_bytes()) {
            Ok(()) => out.written.push(fix),
            Err(e) => out.failed.push(format!(
                "cannot write {}: {e}; left as it is",
                path.display()
            )),
        }
    }
    out
}

/// Why no fix may be applied to `outcome`, if one may not: a fix is safe
/// only when every error left is one a safe fix removes. An error such as
/// an operation's typo can hide a warning, so its `decline` reads as unused
/// and removing it would lose the decline and its reason.
pub fn blocked(outcome: &Outcome) -> Option<String> {
    let errors = outcome
        .diagnostics
        .iter()
        .filter(|d| d.is_error() && !jadpo_checker::registry::fix_is_safe(d.code))
        .count();
    (errors > 0).then(|| {
        format!(
            "no fix applied: the app has {} without a safe fix, which may hide what the fixes judge; fix {} first",
            crate::render::plural(errors, "error"),
            if errors == 1 { "it" } else { "them" }
        )
    })
}

/// The fixes as a unified diff (`--diff`), paths as the check shows them.
pub fn unified_diff(fixes: &[FileFix]) -> String {
    let mut out = String::new();
    for fix in fixes {
        let diff = similar::TextDiff::from_lines(&fix.before, &fix.after);
        let a = format!("a/{}", fix.path);
        let b = format!("b/{}", fix.path);
        out.push_str(
            &diff
                .unified_diff()
                .context_radius(3)
                .header(&a, &b)
                .to_string(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use jadpo_compiler::span::Span;

    fn edit(start: u32, end: u32, with: &str) -> Edit {
        Edit {
            span: Span::new(FileId(0), start, end),
            replacement: with.to_string(),
        }
    }

    #[test]
    fn overlapping_edits_are_left_for_the_next_run() {
        let (a, b, c) = (edit(0, 3, "X"), edit(2, 5, "Y"), edit(6, 7, ""));
        assert_eq!(apply("abcdefg", vec![&c, &b, &a]), ("Xdef".to_string(), 2));
    }

    #[test]
    fn a_deletion_that_empties_its_line_takes_the_line() {
        let text = "a\n  decline x \"y\"\nb\n";
        let gone = edit(4, 17, "");
        assert_eq!(apply(text, vec![&gone]), ("a\nb\n".to_string(), 1));
        let part = edit(4, 11, "");
        assert_eq!(apply(text, vec![&part]).0, "a\n   x \"y\"\nb\n");
    }
}
