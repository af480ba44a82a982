//! Text positions for the editor: LSP speaks lines and UTF-16 code units,
//! the compiler speaks byte offsets. Also applies incremental edits.

use lsp_types::{Position, Range};

/// One text with its line index (`jadpo_compiler::source::LineIndex`, the
/// one byte-to-line conversion), for converting LSP positions.
pub struct LineIndex<'a> {
    text: &'a str,
    lines: jadpo_compiler::source::LineIndex,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        LineIndex {
            text,
            lines: jadpo_compiler::source::LineIndex::new(text),
        }
    }

    /// The byte offset of an LSP position; positions past the end of a line
    /// or of the text are clamped to it, as the protocol asks.
    pub fn offset(&self, pos: Position) -> usize {
        let Some(start) = self.lines.line_start(pos.line as usize) else {
            return self.text.len();
        };
        let end = self.line_end(pos.line as usize);
        let line = self.text.get(start..end).unwrap_or("");
        let mut units = 0u32;
        for (i, c) in line.char_indices() {
            if units >= pos.character {
                return start + i;
            }
            units += c.len_utf16() as u32;
        }
        end
    }

    /// The LSP position of a byte offset (clamped to the text, and moved
    /// back to a character boundary).
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.lines.line(offset);
        let start = self.lines.line_start(line).unwrap_or(0);
        let character = self
            .text
            .get(start..offset)
            .unwrap_or("")
            .chars()
            .map(|c| c.len_utf16() as u32)
            .sum();
        Position::new(line as u32, character)
    }

    pub fn range(&self, start: usize, end: usize) -> Range {
        Range::new(self.position(start), self.position(end))
    }

    /// End of line `line`, before its `\n` (and a `\r` before that).
    fn line_end(&self, line: usize) -> usize {
        let end = match self.lines.line_start(line + 1) {
            Some(next) => next - 1,
            None => self.text.len(),
        };
        let start = self.lines.line_start(line).unwrap_or(0);
        if end > start && self.text.as_bytes().get(end - 1) == Some(&b'\r') {
            end - 1
        } else {
            end
        }
    }

    /// The byte offset where line `line` starts (the text's end past it).
    pub fn line_start(&self, line: usize) -> usize {
        self.lines.line_start(line).unwrap_or(self.text.len())
    }
}

/// The LSP positions of chosen byte offsets in one text, found in one pass
/// over the text up to the last of them (the newlines counted between
/// offsets): much cheaper than a [`LineIndex`] of the whole text when a
/// file has a few spans to show. Offsets are clamped and moved back to a
/// character boundary as [`LineIndex::position`] does.
pub struct Positions {
    /// By offset as asked, sorted.
    found: Vec<(usize, Position)>,
}

impl Positions {
    pub fn new(text: &str, offsets: impl IntoIterator<Item = usize>) -> Self {
        let mut asked: Vec<usize> = offsets.into_iter().collect();
        asked.sort_unstable();
        asked.dedup();
        let bytes = text.as_bytes();
        // A carriage return may end a line alone (the lexer reports it):
        // the full index counts those.
        if bytes.contains(&b'\r') {
            let index = LineIndex::new(text);
            let found = asked.into_iter().map(|o| (o, index.position(o))).collect();
            return Positions { found };
        }
        let (mut at, mut line, mut line_start) = (0, 0u32, 0);
        let mut found = Vec::with_capacity(asked.len());
        for raw in asked {
            let mut offset = raw.min(text.len());
            while !text.is_char_boundary(offset) {
                offset -= 1;
            }
            let seen = bytes.get(at..offset).unwrap_or(&[]);
            let newlines = newlines(seen);
            if newlines > 0 {
                line += newlines as u32;
                line_start = seen
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(line_start, |i| at + i + 1);
            }
            at = offset.max(at);
            let character = text
                .get(line_start..offset)
                .unwrap_or("")
                .chars()
                .map(|c| c.len_utf16() as u32)
                .sum();
            found.push((raw, Position::new(line, character)));
        }
        Positions { found }
    }

    /// The position of an offset given to [`Positions::new`] (the start of
    /// the text for any other).
    pub fn position(&self, offset: usize) -> Position {
        match self.found.binary_search_by_key(&offset, |(o, _)| *o) {
            Ok(i) => self
                .found
                .get(i)
                .map_or_else(Position::default, |(_, p)| *p),
            Err(_) => Position::default(),
        }
    }

    pub fn range(&self, start: usize, end: usize) -> Range {
        Range::new(self.position(start), self.position(end))
    }
}

/// How many `\n` bytes `bytes` holds. Counted in blocks of 64 with a byte
/// counter each, which compiles to wide compares (a `usize` count per
/// byte does not, and this runs over every file with findings per edit).
fn newlines(bytes: &[u8]) -> usize {
    let mut blocks = bytes.chunks_exact(64);
    let mut count = 0;
    for block in &mut blocks {
        let found = block
            .iter()
            .fold(0u8, |n, &b| n.wrapping_add(u8::from(b == b'\n')));
        count += usize::from(found);
    }
    count + blocks.remainder().iter().filter(|&&b| b == b'\n').count()
}

/// Applies one `didChange` content change: a range edit, or the whole text
/// when `range` is absent.
pub fn apply_change(text: &mut String, range: Option<Range>, new_text: &str) {
    let Some(range) = range else {
        *text = new_text.to_string();
        return;
    };
    let index = LineIndex::new(text);
    let start = index.offset(range.start);
    let end = index.offset(range.end).max(start);
    text.replace_range(start..end, new_text);
}

/// The indentation (spaces and tabs) at the start of the line holding `offset`.
pub fn indent_at(text: &str, offset: usize) -> &str {
    let start = line_start_of(text, offset);
    let line = text.get(start..).unwrap_or("");
    let width = line.len() - line.trim_start_matches([' ', '\t']).len();
    line.get(..width).unwrap_or("")
}

/// The byte offset of the start of the line holding `offset`.
pub fn line_start_of(text: &str, offset: usize) -> usize {
    text.get(..offset.min(text.len()))
        .and_then(|before| before.rfind('\n'))
        .map_or(0, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_round_trip() {
        // `é` is 2 bytes and 1 unit; `😀` is 4 bytes and 2 units.
        let text = "ab\né😀x\r\nlast";
        let index = LineIndex::new(text);
        assert_eq!(index.offset(Position::new(1, 0)), 3);
        assert_eq!(index.offset(Position::new(1, 1)), 5);
        assert_eq!(index.offset(Position::new(1, 3)), 9);
        assert_eq!(index.offset(Position::new(1, 99)), 10);
        assert_eq!(index.offset(Position::new(9, 0)), text.len());
        assert_eq!(index.position(9), Position::new(1, 3));
        assert_eq!(index.position(12), Position::new(2, 0));
        assert_eq!(index.position(6), Position::new(1, 1));
    }

    /// `Positions` must give what `LineIndex` gives, for every offset
    /// (inside characters and past the end included), asked in any order.
    #[test]
    fn positions_equal_the_line_index() {
        let text = "ab\né😀x\r\nlast\n\n☕ end";
        let index = LineIndex::new(text);
        let all: Vec<usize> = (0..text.len() + 3).rev().collect();
        let positions = Positions::new(text, all.iter().copied());
        for &offset in &all {
            assert_eq!(
                positions.position(offset),
                index.position(offset),
                "{offset}"
            );
        }
        let long = "a\nbc\n".repeat(40);
        assert_eq!(newlines(long.as_bytes()), 80);
        assert_eq!(
            newlines(&long.as_bytes()[1..130]),
            long[1..130].matches('\n').count()
        );
        let some = Positions::new(text, [14, 3, 9]);
        for offset in [3, 9, 14] {
            assert_eq!(some.position(offset), index.position(offset), "{offset}");
        }
    }

    #[test]
    fn applies_range_edits() {
        let mut text = String::from("héllo\nworld");
        let range = Range::new(Position::new(0, 1), Position::new(1, 0));
        apply_change(&mut text, Some(range), "i ");
        assert_eq!(text, "hi world");
        apply_change(&mut text, None, "new");
        assert_eq!(text, "new");
    }
}
