//! Prints an [`ast`](crate::ast) back to canonical Jadpo source: the layout
//! `jadpo fmt` writes (`spec/formatting.md`). Four-space indentation, one
//! statement, field, arm or setting per line where the form is broken, and
//! parentheses exactly where precedence or a following `{` needs them.
//! Parsing the printed text gives the same tree up to spans (the round-trip
//! property tested in `tests/properties.rs`).
//!
//! Given the source text ([`format_source`]), the printer also keeps its
//! comments and blank lines: a comment is printed before the first node that
//! starts after it, or at the end of the line where the token before it was
//! printed when it trailed that token; at most one blank line is kept where
//! the author left one between two items, statements, fields or settings.
//! Without the source ([`print_file`]) there are no comments, and items are
//! separated by one blank line.
//!
//! `Error` nodes print as `§`, a character the lexer reports and reads back
//! as an error token; a statement or declaration that could not be read
//! prints as a comment. [`format_source`] never prints those: it refuses a
//! file with a syntax error.

mod exprs;
mod format;
mod items;

use crate::ast::*;
use crate::span::Span;
use std::fmt::Write;

pub use format::{format_source, format_unchecked, same_program, FormatError, WIDTH};

/// The canonical source of a whole file, without its comments.
pub fn print_file(ast: &SourceFileAst) -> String {
    let mut p = Printer::new("", Vec::new());
    p.file(ast);
    p.out
}

/// The canonical source of one expression.
pub fn print_expr(expr: &Expr) -> String {
    let mut p = Printer::new("", Vec::new());
    p.expr(expr);
    p.out
}

/// The canonical source of a string literal's value, quotes included.
pub fn quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// How a `{ ... }` list is laid out.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// One entry per line, always (blocks, fields, arms).
    Broken,
    /// On one line when it fits the width, has no comment inside and the
    /// author did not break it after `{`; else one entry per line.
    Fit,
}

struct Printer<'s> {
    out: String,
    indent: usize,
    /// The source being formatted; empty when printing a bare tree.
    src: &'s str,
    /// The source's comments, `(start, end)`, in order.
    comments: Vec<(u32, u32)>,
    /// The first comment not printed yet.
    next: usize,
    /// The end of the source printed so far.
    last_end: u32,
    /// Just after an opening `{`: no blank line before the first entry.
    open: bool,
    /// Trial printing (is it short enough for one line?): stops once the
    /// text passes `limit`.
    limit: usize,
}

impl<'s> Printer<'s> {
    fn new(src: &'s str, comments: Vec<(u32, u32)>) -> Self {
        Printer {
            out: String::new(),
            indent: 0,
            src,
            comments,
            next: 0,
            last_end: 0,
            open: true,
            limit: usize::MAX,
        }
    }

    /// A printer for trying a form on one line, `room` characters at most.
    fn trial(room: usize) -> Printer<'static> {
        let mut p = Printer::new("", Vec::new());
        p.limit = room;
        p
    }

    fn over(&self) -> bool {
        self.out.len() > self.limit
    }

    fn file(&mut self, ast: &SourceFileAst) {
        for (i, item) in ast.items.iter().enumerate() {
            let span = item.span();
            if self.src.is_empty() && i > 0 {
                self.out.push('\n');
            }
            self.lead(span.start);
            self.item(item);
            self.done(span.end);
            self.nl();
        }
        self.rest();
    }

    fn line_start(&mut self) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
    }

    /// The column the next character is printed at.
    fn column(&self) -> usize {
        let line = self.out.rfind('\n').map_or(0, |i| i + 1);
        self.out[line..].chars().count()
    }

    /// A string literal as the author wrote it (escapes kept), or quoted
    /// afresh when there is no source.
    fn string(&mut self, value: &str, span: Span) {
        match self.src.get(span.start as usize..span.end as usize) {
            Some(written) if written.starts_with('"') => self.out.push_str(written),
            _ => self.out.push_str(&quote(value)),
        }
    }

    fn path(&mut self, path: &Path) {
        for (i, s) in path.segments.iter().enumerate() {
            if i > 0 {
                self.out.push('.');
            }
            self.out.push_str(s.name.as_str());
        }
    }

    fn done(&mut self, end: u32) {
        self.last_end = self.last_end.max(end);
    }

    fn comment_text(&self, (start, end): (u32, u32)) -> &'s str {
        self.src
            .get(start as usize..end as usize)
            .unwrap_or("")
            .trim_end()
    }

    fn pending(&self) -> Option<(u32, u32)> {
        self.comments.get(self.next).copied()
    }

    /// Ends a line. A comment that trailed the last printed source on its
    /// line stays at the end of this one, and so does the first comment the
    /// line passed over (inside a form printed on one line).
    fn nl(&mut self) {
        if let Some(c) = self.pending() {
            let same_line = c.0 >= self.last_end
                && !self
                    .src
                    .get(self.last_end as usize..c.0 as usize)
                    .unwrap_or("\n")
                    .contains('\n');
            if c.0 < self.last_end || same_line {
                self.out.push(' ');
                self.out.push_str(self.comment_text(c));
                self.next += 1;
                self.done(c.1);
            }
        }
        // Any further comment the line passed over waits for the next
        // entry, which prints it on a line of its own at its indentation.
        self.out.push('\n');
        self.open = false;
    }

    /// Was there a blank line in the source between `from` and `to`?
    fn blank_between(&self, from: u32, to: u32) -> bool {
        let gap = self.src.get(from as usize..to as usize).unwrap_or("");
        // A line wholly inside the gap (between two of its line breaks)
        // holding only spaces.
        let mut parts = gap.split('\n');
        parts.next();
        let mut previous: Option<&str> = None;
        for part in parts {
            if previous.is_some_and(|p| p.trim().is_empty()) {
                return true;
            }
            previous = Some(part);
        }
        false
    }

    /// Before an entry starting at `start`: the comments above it, each on
    /// its own line, and the author's blank lines (one at most) between.
    fn lead(&mut self, start: u32) {
        let mut from = self.last_end;
        loop {
            let c = self.pending().filter(|c| c.0 < start);
            let to = c.map_or(start, |c| c.0);
            if !self.open && self.blank_between(from, to) {
                self.out.push('\n');
            }
            let Some(c) = c else { break };
            self.own_line(c);
            from = c.1;
        }
        self.open = false;
    }

    /// The next comment, on a line of its own.
    fn own_line(&mut self, c: (u32, u32)) {
        self.line_start();
        self.out.push_str(self.comment_text(c));
        self.out.push('\n');
        self.open = false;
        self.next += 1;
        self.done(c.1);
    }

    /// Before a closing `}` at `end`: the comments still inside.
    fn close(&mut self, end: u32) {
        let mut from = self.last_end;
        while let Some(c) = self.pending().filter(|c| c.0 < end) {
            if !self.open && self.blank_between(from, c.0) {
                self.out.push('\n');
            }
            self.own_line(c);
            from = c.1;
        }
    }

    /// The comments after the last item.
    fn rest(&mut self) {
        let end = u32::try_from(self.src.len()).unwrap_or(u32::MAX);
        self.close(end.saturating_add(1));
    }

    /// The `}` (or `close`) that ends a list whose last entry ends at
    /// `after`: the next character that is neither space, a `,` nor in a
    /// comment. `bound` when the source is not known.
    fn closer(&self, after: u32, close: u8, bound: u32) -> u32 {
        let bytes = self.src.as_bytes();
        let mut i = after as usize;
        while let Some(&byte) = bytes.get(i) {
            match byte {
                b' ' | b'\t' | b'\r' | b'\n' | b',' => i += 1,
                b'/' if bytes.get(i + 1) == Some(&b'/') => {
                    while bytes.get(i).is_some_and(|b| *b != b'\n') {
                        i += 1;
                    }
                }
                b if b == close => return i as u32,
                _ => break,
            }
        }
        bound
    }

    fn comment_before(&self, end: u32) -> bool {
        self.pending().is_some_and(|c| c.0 < end)
    }

    /// Where the `{` before `first` is in the source, if the source is known.
    fn open_brace(&self, first: u32) -> Option<u32> {
        let from = self.last_end.min(first) as usize;
        let gap = self.src.get(from..first as usize)?;
        gap.rfind('{').map(|i| (from + i) as u32)
    }

    /// `{ entries }`: on one line or broken, as `layout` says. `end` is where
    /// the list's `}` is (or a bound: the end of its construct).
    fn braced<T>(
        &mut self,
        entries: &[T],
        layout: Layout,
        end: u32,
        span: fn(&T) -> Span,
        entry: &dyn Fn(&mut Printer, &T),
    ) {
        let Some(first) = entries.first() else {
            self.out.push_str("{ }");
            return;
        };
        let start = span(first).start;
        let last = entries.last().map_or(start, |e| span(e).end);
        let end = self.closer(last, b'}', end);
        let brace = self.open_brace(start);
        let authored_broken = brace.is_some_and(|b| {
            self.src
                .get(b as usize..start as usize)
                .is_some_and(|gap| gap.contains('\n'))
        });
        if layout == Layout::Fit && !authored_broken && !self.comment_before(end) {
            if let Some(line) = self.one_line(entries, entry) {
                self.out.push_str(&line);
                self.done(end);
                return;
            }
        }
        self.broken(brace.map(|b| b + 1), entries, end, span, entry);
    }

    /// `{`, one entry per line, `}`: `opened` is where the source's `{`
    /// ends (a comment after it stays on its line), `end` its `}`.
    fn broken<T>(
        &mut self,
        opened: Option<u32>,
        entries: &[T],
        end: u32,
        span: fn(&T) -> Span,
        entry: &dyn Fn(&mut Printer, &T),
    ) {
        self.out.push('{');
        if let Some(at) = opened {
            self.done(at);
        }
        self.nl();
        self.open = true;
        self.indent += 1;
        for e in entries {
            let s = span(e);
            self.lead(s.start);
            self.line_start();
            entry(self, e);
            self.done(s.end);
            self.nl();
        }
        self.close(end);
        self.indent -= 1;
        self.line_start();
        self.out.push('}');
    }

    /// `{ a b }` when it fits on the current line.
    fn one_line<T>(&self, entries: &[T], entry: &dyn Fn(&mut Printer, &T)) -> Option<String> {
        let room = WIDTH.saturating_sub(self.column());
        let mut p = Printer::trial(room);
        p.out.push_str("{ ");
        for (i, e) in entries.iter().enumerate() {
            if i > 0 {
                p.out.push(' ');
            }
            entry(&mut p, e);
            if p.over() {
                return None;
            }
        }
        p.out.push_str(" }");
        (!p.over() && !p.out.contains('\n')).then_some(p.out)
    }

    /// `(a, b)` or `[a, b]`: on one line when it fits and holds no comment,
    /// else one per line with a trailing comma.
    fn delimited(&mut self, open: char, close: char, items: &[Expr], end: u32) {
        let Some(last) = items.last() else {
            self.out.push(open);
            self.out.push(close);
            return;
        };
        let end = self.closer(last.span.end, close as u8, end);
        if let [only] = items {
            if hugs(only) {
                // `f(T {` ... `})`: the one construction breaks itself.
                self.out.push(open);
                self.expr(only);
                self.out.push(close);
                self.done(end);
                return;
            }
        }
        if !self.comment_before(end) {
            let room = WIDTH.saturating_sub(self.column());
            let mut p = Printer::trial(room);
            p.out.push(open);
            p.exprs(items);
            p.out.push(close);
            if !p.over() && !p.out.contains('\n') {
                self.out.push_str(&p.out);
                self.done(end);
                return;
            }
        }
        self.out.push(open);
        self.nl();
        self.open = true;
        self.indent += 1;
        for item in items {
            self.lead(item.span.start);
            self.line_start();
            self.expr(item);
            self.out.push(',');
            self.done(item.span.end);
            self.nl();
        }
        self.close(end);
        self.indent -= 1;
        self.line_start();
        self.out.push(close);
    }
}

/// A lone argument that keeps to its parentheses when it breaks: a
/// construction, a list, a block-like write.
fn hugs(e: &Expr) -> bool {
    matches!(
        e.kind,
        ExprKind::Construct { .. } | ExprKind::List(_) | ExprKind::Create { .. }
    )
}
