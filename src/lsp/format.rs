//! `textDocument/formatting`: the `jadpo fmt` layout of an open document,
//! as one edit covering only what changes (the cursor stays put elsewhere).
//! `textDocument/rangeFormatting`: the changes of that layout that touch
//! the selected lines, as long as applying only those keeps the program
//! and its comments (checked); else the whole document's.

use super::text::LineIndex;
use jadpo_compiler::printer::{format_source, same_program, FormatError};
use lsp_types::{Range, TextEdit};

/// The edits that format `text`, or why it cannot be formatted.
pub fn formatting(text: &str) -> Result<Vec<TextEdit>, String> {
    let formatted = formatted(text)?;
    if formatted == text {
        return Ok(Vec::new());
    }
    let (start, old_end, new_end) = changed_middle(text, &formatted);
    let index = LineIndex::new(text);
    Ok(vec![TextEdit {
        range: index.range(start, old_end),
        new_text: formatted[start..new_end].to_string(),
    }])
}

/// The edits that format the lines of `range` in `text`.
pub fn range_formatting(text: &str, range: Range) -> Result<Vec<TextEdit>, String> {
    let formatted = formatted(text)?;
    let first = range.start.line as usize;
    // A selection ending at the start of a line ends on the line before.
    let ends_early = range.end.character == 0 && range.end.line > range.start.line;
    let last = range.end.line as usize - usize::from(ends_early);
    let diff = similar::TextDiff::from_lines(text, &formatted);
    let new_lines: Vec<&str> = formatted.split_inclusive('\n').collect();
    // (old lines, new lines) of each change touching the selection.
    let hunks: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> = diff
        .ops()
        .iter()
        .filter(|op| op.tag() != similar::DiffTag::Equal)
        .map(|op| (op.old_range(), op.new_range()))
        .filter(|(old, _)| old.start <= last && first < old.end.max(old.start + 1))
        .collect();
    let index = LineIndex::new(text);
    // Each change as (old byte range, new text).
    let edits: Vec<(std::ops::Range<usize>, String)> = hunks
        .into_iter()
        .map(|(old, new)| {
            let bytes = index.line_start(old.start)..index.line_start(old.end);
            (bytes, new_lines[new].concat())
        })
        .collect();
    let mut partial = String::with_capacity(text.len());
    let mut at = 0;
    for (bytes, new_text) in &edits {
        partial.push_str(&text[at..bytes.start]);
        partial.push_str(new_text);
        at = bytes.end;
    }
    partial.push_str(&text[at..]);
    if !same_program(text, &partial) {
        return formatting(text);
    }
    Ok(edits
        .into_iter()
        .map(|(bytes, new_text)| TextEdit {
            range: index.range(bytes.start, bytes.end),
            new_text,
        })
        .collect())
}

/// The `jadpo fmt` layout of `text`, or why it has none.
fn formatted(text: &str) -> Result<String, String> {
    let limit = jadpo_compiler::load::MAX_SOURCES_BYTES;
    if text.len() as u64 > limit {
        return Err(format!(
            "not formatted: the file is {} MiB, more than Jadpo reads ({} MiB)",
            text.len() >> 20,
            limit >> 20
        ));
    }
    match format_source(text) {
        Ok(formatted) => Ok(formatted),
        Err(FormatError::Syntax(diags)) => {
            let at = diags.first().map_or(0, |d| d.span.start as usize);
            let pos = LineIndex::new(text).position(at);
            Err(format!(
                "not formatted: the file has a syntax error at {}:{}",
                pos.line + 1,
                pos.character + 1
            ))
        }
        Err(FormatError::Unstable(why)) => {
            Err(format!("not formatted: {why} (a bug in jadpo fmt)"))
        }
    }
}

/// The part of `old` that differs from `new`: `(start, end in old, end in
/// new)`, on character boundaries of both.
fn changed_middle(old: &str, new: &str) -> (usize, usize, usize) {
    let mut start = old
        .bytes()
        .zip(new.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !(old.is_char_boundary(start) && new.is_char_boundary(start)) {
        start -= 1;
    }
    let room = old.len().min(new.len()) - start;
    let mut suffix = old
        .bytes()
        .rev()
        .zip(new.bytes().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    while !(old.is_char_boundary(old.len() - suffix) && new.is_char_boundary(new.len() - suffix)) {
        suffix -= 1;
    }
    (start, old.len() - suffix, new.len() - suffix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_layout_must_keep_the_program_and_its_comments() {
        let before = "function f() -> Int {\n    return 1 // one\n}\n";
        assert!(same_program(
            before,
            "function f() -> Int { return 1 // one\n}\n"
        ));
        assert!(!same_program(
            before,
            "function f() -> Int {\n    return 2 // one\n}\n"
        ));
        assert!(!same_program(
            before,
            "function f() -> Int {\n    return 1\n}\n"
        ));
    }

    #[test]
    fn the_edit_covers_only_the_change() {
        assert_eq!(changed_middle("abcXdef", "abcYYdef"), (3, 4, 5));
        assert_eq!(changed_middle("same", "same"), (4, 4, 4));
        assert_eq!(changed_middle("é1", "é2"), (2, 3, 3));
    }
}
