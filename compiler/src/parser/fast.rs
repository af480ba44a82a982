//! The grammar again, compiled with [`Quick`], an error type of size zero.
//! chumsky skips all error bookkeeping for such a type, so a file without
//! syntax errors parses several times faster. When this pass reports any
//! error, [`super::parse_file`] parses the file again with full errors (the
//! grammar's output does not depend on the error type, only the reports do).
//!
//! The grammar files are included here a second time by path; their
//! `super::PError` is [`Quick`] here and chumsky's `Rich` in [`super`].
//! With [`FAST`] set, expressions are read by one flat chain folded by
//! precedence, and a path is read once before deciding whether `{ ... }`
//! makes it a construction; both accept a subset of what the full grammar
//! accepts and build the same tree (`parser::tests` compares them).

// The copies are private and only `items::file` is called.
#![allow(dead_code)]
// Loading the grammar files twice is the point of this module.
#![allow(clippy::duplicate_mod)]

use crate::ast::Item;
use crate::span::Span;
use chumsky::error::LabelError;
use chumsky::input::Input;
use chumsky::util::MaybeRef;
use chumsky::Parser;

#[path = "common.rs"]
mod common;
#[path = "exprs.rs"]
mod exprs;
#[path = "items.rs"]
mod items;
#[path = "stmts.rs"]
mod stmts;
#[path = "types.rs"]
mod types;

type PError<'src> = Quick;

/// See `super::FAST`.
const FAST: bool = true;

/// An error that only says "this failed".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Quick;

impl Quick {
    /// Mirrors `Rich::custom`, which the grammar calls for its own errors.
    pub fn custom<M>(_span: Span, _message: M) -> Self {
        Quick
    }
}

impl<'a, I: Input<'a>> chumsky::error::Error<'a, I> for Quick {}

impl<'a, I: Input<'a>, L> LabelError<'a, I, L> for Quick {
    fn expected_found<E: IntoIterator<Item = L>>(
        _expected: E,
        _found: Option<MaybeRef<'a, I::Token>>,
        _span: I::Span,
    ) -> Self {
        Quick
    }
}

/// The file's items, or `None` when the file has a syntax error.
pub fn parse<'src>(
    text: &'src str,
    strings: &'src [String],
    input: impl common::Tokens<'src>,
) -> Option<Vec<Item>> {
    let (items, errors) = items::file(common::Src { text, strings })
        .parse(input)
        .into_output_errors();
    if errors.is_empty() {
        items
    } else {
        None
    }
}

/// The items of each token range of `tokens`, or `None` for a range with a
/// syntax error. One parser serves all ranges: building it costs more than
/// parsing a small declaration. `eoi` gives the end-of-input span of the
/// range ending at a token index.
pub fn parse_ranges<'src>(
    text: &'src str,
    strings: &'src [String],
    tokens: &'src [crate::lexer::Token],
    ranges: &[std::ops::Range<usize>],
    eoi: impl Fn(usize) -> Span,
) -> Vec<Option<Vec<Item>>> {
    let parser = items::file(common::Src { text, strings });
    ranges
        .iter()
        .map(|range| {
            let slice = tokens.get(range.clone()).unwrap_or(&[]);
            let input = slice.map(eoi(range.end), super::split_token);
            let (items, errors) = parser.parse(input).into_output_errors();
            if errors.is_empty() {
                items
            } else {
                None
            }
        })
        .collect()
}
