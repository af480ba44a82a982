//! `textDocument/formatting`: the `jadpo fmt` layout of an open document,
//! as one edit covering only what changes (the cursor stays put elsewhere).

use super::text::LineIndex;
use jadpo_compiler::printer::{format_source, FormatError};
use lsp_types::TextEdit;

/// The edits that format `text`, or why it cannot be formatted.
pub fn formatting(text: &str) -> Result<Vec<TextEdit>, String> {
    let formatted = match format_source(text) {
        Ok(formatted) => formatted,
        Err(FormatError::Syntax(diags)) => {
            let at = diags.first().map_or(0, |d| d.span.start as usize);
            let pos = LineIndex::new(text).position(at);
            return Err(format!(
                "not formatted: the file has a syntax error at {}:{}",
                pos.line + 1,
                pos.character + 1
            ));
        }
        Err(FormatError::Unstable(why)) => {
            return Err(format!("not formatted: {why} (a bug in jadpo fmt)"))
        }
    };
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
    fn the_edit_covers_only_the_change() {
        assert_eq!(changed_middle("abcXdef", "abcYYdef"), (3, 4, 5));
        assert_eq!(changed_middle("same", "same"), (4, 4, 4));
        assert_eq!(changed_middle("é1", "é2"), (2, 3, 3));
    }
}
