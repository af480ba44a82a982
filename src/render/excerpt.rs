//! The part of a file one frame shows: from the first labelled line to the
//! last, with any line longer than [`MAX_LINE_BYTES`] cut around its labels.
//! Ariadne indexes the whole source it is given, so handing it the file
//! would cost the file's size for every diagnostic, and a 400 KB line would
//! be printed whole in every frame that points into it.

use super::floor_boundary;
use std::ops::Range;

/// Lines longer than this (in bytes) are cut in frames.
pub const MAX_LINE_BYTES: usize = 400;
/// What a cut line keeps either side of its labels.
const CONTEXT_BYTES: usize = 80;
/// Marks where a cut line was shortened.
const ELLIPSIS: &str = "…";

/// The excerpt of one file, and where each kept piece of it came from.
pub struct Excerpt {
    /// The kept lines, after one empty line per line before them.
    pub text: String,
    /// The 0-based line number of the first kept line in the file.
    pub first_line: usize,
    /// Whether some line was cut (columns in ariadne's header are then the
    /// excerpt's, not the file's).
    pub cut: bool,
    /// Kept pieces in order: `(from, to, at, len)` puts the file's
    /// `from..to` at `at..at + len` in `text` (`len` differs for a
    /// character drawn as a picture).
    pieces: Vec<(usize, usize, usize, usize)>,
}

impl Excerpt {
    /// The lines of `text` that `ranges` (byte ranges on character
    /// boundaries) touch, and the lines between them.
    pub fn new(text: &str, ranges: &[Range<usize>]) -> Excerpt {
        let lo = ranges.iter().map(|r| r.start).min().unwrap_or(0);
        let hi = ranges.iter().map(|r| r.end).max().unwrap_or(0).max(lo);
        let first = text[..lo].rfind('\n').map_or(0, |i| i + 1);
        let last = text[hi..].find('\n').map_or(text.len(), |i| hi + i);
        let first_line = bytecount_newlines(&text[..first]);
        // Empty lines stand for the lines before, so ariadne numbers the
        // lines right (its display offset does not reach the gutter).
        let mut excerpt = Excerpt {
            text: "\n".repeat(first_line),
            first_line,
            cut: false,
            pieces: Vec::new(),
        };
        let mut start = first;
        loop {
            let end = text[start..last].find('\n').map_or(last, |i| start + i);
            excerpt.push_line(text, start..end, ranges);
            if end >= last {
                break;
            }
            excerpt.keep(text, end..end + 1);
            start = end + 1;
        }
        // The last line's newline too: ariadne draws a label that ends
        // there one column further.
        if last < text.len() {
            excerpt.keep(text, last..last + 1);
        }
        excerpt
    }

    /// Where the file's byte `offset` lies in the excerpt; offsets in a cut
    /// part go to the nearest kept piece before them.
    pub fn map(&self, offset: usize) -> usize {
        let i = self.pieces.partition_point(|(from, ..)| *from <= offset);
        match i.checked_sub(1).and_then(|i| self.pieces.get(i)) {
            // A picture stands for its whole character: an offset inside
            // it or at its end goes to the picture's start or end.
            Some(&(from, to, at, len)) if len != to - from => match offset >= to {
                true => at + len,
                false => at,
            },
            Some(&(from, to, at, _)) => at + offset.min(to) - from,
            None => self.pieces.first().map_or(0, |p| p.2),
        }
    }

    fn push_line(&mut self, text: &str, line: Range<usize>, ranges: &[Range<usize>]) {
        if line.len() <= MAX_LINE_BYTES {
            self.keep(text, line);
            return;
        }
        self.cut = true;
        let window = window(text, line.clone(), ranges);
        if window.start > line.start {
            self.text.push_str(ELLIPSIS);
        }
        let end = window.end;
        self.keep(text, window);
        if end < line.end {
            self.text.push_str(ELLIPSIS);
        }
    }

    /// Keeps `range` of `text`, each character a terminal would obey
    /// rather than show (an escape, a bell, a bidirectional override) as
    /// a piece of its own drawn as a visible picture of one column, so a
    /// hostile source cannot retitle the terminal or hide the output.
    fn keep(&mut self, text: &str, range: Range<usize>) {
        let mut from = range.start;
        for (i, c) in text[range.clone()].char_indices() {
            let Some(picture) = super::picture(c) else {
                continue;
            };
            let at = range.start + i;
            self.push_piece(text, from..at);
            self.pieces
                .push((at, at + c.len_utf8(), self.text.len(), picture.len_utf8()));
            self.text.push(picture);
            from = at + c.len_utf8();
        }
        self.push_piece(text, from..range.end);
    }

    fn push_piece(&mut self, text: &str, range: Range<usize>) {
        if range.is_empty() {
            return;
        }
        self.pieces
            .push((range.start, range.end, self.text.len(), range.len()));
        self.text.push_str(&text[range]);
    }
}

/// The part of a long line kept around the label ends that fall in it.
fn window(text: &str, line: Range<usize>, ranges: &[Range<usize>]) -> Range<usize> {
    let ends = ranges
        .iter()
        .flat_map(|r| [r.start, r.end])
        .filter(|o| line.contains(o) || *o == line.end);
    let (lo, hi) = ends.fold((usize::MAX, 0), |(lo, hi), o| (lo.min(o), hi.max(o)));
    let (start, end) = if lo == usize::MAX {
        (line.start, line.start + MAX_LINE_BYTES)
    } else {
        let start = lo.saturating_sub(CONTEXT_BYTES).max(line.start);
        let end = (hi + CONTEXT_BYTES).min(start + 2 * MAX_LINE_BYTES);
        (start, end)
    };
    floor_boundary(text, start)..floor_boundary(text, end.min(line.end))
}

fn bytecount_newlines(text: &str) -> usize {
    text.bytes().filter(|b| *b == b'\n').count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_drawn_as_pictures_and_spans_still_map() {
        let text = "a\u{1b}[8m b\u{202e}c\n";
        let e = Excerpt::new(text, std::slice::from_ref(&(0..text.len() - 1)));
        assert_eq!(e.text, "a\u{241b}[8m b\u{fffd}c\n");
        // `b` keeps its place after the wider pictures.
        let b = text.find('b').unwrap_or(0);
        assert_eq!(&e.text[e.map(b)..e.map(b) + 1], "b");
        let c = text.find('c').unwrap_or(0);
        assert_eq!(&e.text[e.map(c)..e.map(c) + 1], "c");
        // The end of a control character is the end of its picture.
        assert_eq!(e.map(2), 1 + '\u{241b}'.len_utf8());
        assert!(e.text.is_char_boundary(e.map(2)));
    }

    #[test]
    fn short_lines_are_kept_whole() {
        let text = "one\ntwo three\nfour\n";
        let e = Excerpt::new(text, std::slice::from_ref(&(4..7)));
        assert_eq!(e.text, "\ntwo three\n");
        assert_eq!(e.first_line, 1);
        assert!(!e.cut);
        assert_eq!(e.map(4), 1);
        assert_eq!(e.map(8), 5);
    }

    #[test]
    fn a_long_line_is_cut_around_its_label() {
        let text = format!("{};{}", "a".repeat(5000), "b".repeat(5000));
        let e = Excerpt::new(&text, std::slice::from_ref(&(5000..5001)));
        assert!(e.cut);
        assert!(e.text.len() < 2 * MAX_LINE_BYTES, "{}", e.text.len());
        assert!(e.text.starts_with(ELLIPSIS) && e.text.ends_with(ELLIPSIS));
        let at = e.map(5000);
        assert_eq!(&e.text[at..at + 1], ";");
    }

    #[test]
    fn lines_between_two_labels_are_kept() {
        let text = "a\nb\nc\nd\n";
        let e = Excerpt::new(text, &[0..1, 6..7]);
        assert_eq!(e.text, "a\nb\nc\nd\n");
        assert_eq!(e.map(6), 6);
    }
}
