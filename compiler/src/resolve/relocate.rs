//! Moving kept results with an edit that keeps the context (`patch.rs`).
//!
//! In the same context an edited file holds the same tokens outside its
//! action bodies, in the same order, each starting a line where it did;
//! only their offsets moved. Every result read from those tokens is then
//! the last one with its spans moved: a span's start is the start of a
//! token or of a body, its end the end of one, and each maps to the same
//! token's or body's place in the new text. A span that is neither (an
//! insertion point between two tokens, a place inside a body) has no
//! certain place: [`Moves::exact`] turns false, and the edit is resolved
//! the full way.

use std::sync::Arc;

use crate::diag::Diagnostic;
use crate::ir::spans::Spans;
use crate::ir::Program;
use crate::span::{FileId, Span};

use super::edit::{pieces, Piece};
use super::tables::UnitInfo;

/// Where the token and body boundaries of one file were and are.
struct Moved {
    file: FileId,
    /// Starts of tokens outside bodies and of bodies, in order.
    starts: (Vec<u32>, Vec<u32>),
    /// Their ends, in the same order.
    ends: (Vec<u32>, Vec<u32>),
}

/// How the spans of the changed files move.
pub(super) struct Moves {
    files: Vec<Moved>,
    /// False once a span had no certain place.
    pub exact: bool,
    /// Whether spans are moved, or only looked at (a first pass that
    /// finds whether every span has a place, before anything changes).
    pub apply: bool,
}

/// An entry of a shared list that carries a span.
pub(super) trait Spanned {
    fn span(&self) -> Span;
    fn span_mut(&mut self) -> &mut Span;
}

impl<A, B> Spanned for (A, B, Span) {
    fn span(&self) -> Span {
        self.2
    }
    fn span_mut(&mut self) -> &mut Span {
        &mut self.2
    }
}

impl<A> Spanned for (A, Span) {
    fn span(&self) -> Span {
        self.1
    }
    fn span_mut(&mut self) -> &mut Span {
        &mut self.1
    }
}

/// A file's text before and after the edit, with its bodies' spans.
pub(super) struct Change<'t> {
    pub file: FileId,
    pub old: (&'t str, &'t [(u32, u32)]),
    pub new: (&'t str, &'t [(u32, u32)]),
}

impl Moves {
    /// The moves of `changes`, or `None` when a file's tokens outside its
    /// bodies are not the same ones on the same lines.
    pub fn new(changes: &[Change<'_>]) -> Option<Moves> {
        let mut files = Vec::with_capacity(changes.len());
        for c in changes {
            let old = pieces(c.file, c.old.0, c.old.1, &mut |_, _| {});
            let new = pieces(c.file, c.new.0, c.new.1, &mut |_, _| {});
            let lines = |p: &[Piece]| p.iter().map(|p| p.line).collect::<Vec<_>>();
            if lines(&old) != lines(&new) {
                cov_mark::hit!(patch_finds_a_token_on_another_line);
                return None;
            }
            let both = |at: fn(&Piece) -> u32| {
                let list = |p: &[Piece]| p.iter().map(at).collect::<Vec<u32>>();
                (list(&old), list(&new))
            };
            files.push(Moved {
                file: c.file,
                starts: both(|p| p.start),
                ends: both(|p| p.end),
            });
        }
        files.sort_by_key(|m| m.file);
        Some(Moves {
            files,
            exact: true,
            apply: false,
        })
    }

    /// Whether `file` is one of the changed files.
    #[inline]
    pub fn touches(&self, file: FileId) -> bool {
        self.moved(file).is_some()
    }

    #[inline]
    fn moved(&self, file: FileId) -> Option<&Moved> {
        match self.files.as_slice() {
            [] => None,
            [one] => (one.file == file).then_some(one),
            many => many
                .binary_search_by_key(&file, |m| m.file)
                .ok()
                .and_then(|at| many.get(at)),
        }
    }

    /// Moves `span` with its file's edit.
    #[inline]
    pub fn span(&mut self, span: &mut Span) {
        if self.touches(span.file) {
            self.place(span);
        }
    }

    fn place(&mut self, span: &mut Span) {
        let Some(moved) = self.moved(span.file) else {
            return;
        };
        let place = |(old, new): &(Vec<u32>, Vec<u32>), offset: u32| {
            let i = old.binary_search(&offset).ok()?;
            new.get(i).copied()
        };
        let found = if span.start == span.end {
            // An empty span is a place before a token or after one; it
            // has one when both readings agree.
            match (
                place(&moved.starts, span.start),
                place(&moved.ends, span.end),
            ) {
                (Some(a), Some(b)) if a != b => None,
                (Some(a), _) | (None, Some(a)) => Some((a, a)),
                (None, None) => None,
            }
        } else {
            place(&moved.starts, span.start).zip(place(&moved.ends, span.end))
        };
        match found {
            Some((start, end)) if self.apply => (span.start, span.end) = (start, end),
            Some(_) => {}
            None => self.exact = false,
        }
    }

    /// Moves the spans of a shared list, copying it only when one of them
    /// is in a changed file.
    pub fn shared<T: Clone + Spanned>(&mut self, list: &mut Arc<[T]>) {
        if !list.iter().any(|item| self.touches(item.span().file)) {
            return;
        }
        if !self.apply {
            for item in list.iter() {
                self.span(&mut item.span());
            }
            return;
        }
        let mut items: Vec<T> = list.to_vec();
        for item in &mut items {
            self.span(item.span_mut());
        }
        *list = items.into();
    }

    pub fn diagnostic(&mut self, d: &mut Diagnostic) {
        d.spans_mut(&mut |s| self.span(s));
    }

    pub fn diagnostics<'d>(&mut self, diags: impl IntoIterator<Item = &'d mut Diagnostic>) {
        for d in diags {
            self.diagnostic(d);
        }
    }

    /// The tables' declarations: names, callables, stores, config entries.
    pub fn units(&mut self, units: &mut [UnitInfo]) {
        for unit in units {
            for (_, span) in unit.decls.values_mut() {
                self.span(span);
            }
            for (_, span) in unit.callables.values_mut() {
                self.span(span);
            }
            for span in unit.stores.values_mut() {
                self.span(span);
            }
            for entry in unit.config.values_mut() {
                self.span(&mut entry.span);
            }
        }
    }

    /// Everything of `program` outside action bodies (bodies of the
    /// changed files are checked again; `ir::spans` walks the rest).
    pub fn program(&mut self, p: &mut Program) {
        let files: Vec<FileId> = self.files.iter().map(|m| m.file).collect();
        let changed = |file: FileId| files.binary_search(&file).is_ok();
        p.spans_outside_bodies(changed, &mut |s| self.span(s));
    }
}
