//! The error path in proportion to the damage: a file the fast pass refused
//! is cut before every declaration word that starts a line outside any
//! bracket (where the full grammar's recovery stops too), each piece is
//! read by the fast grammar again, and only the pieces that fail, with one
//! good piece on each side, are read by the full grammar. Its errors are
//! the ones a parse of the whole file would give: a recovered error depends
//! only on what the full grammar saw since the last good declaration.
//!
//! When the full grammar does not come back in step with the fast one
//! after the damage (an item that swallows the next declarations), the
//! rest of the file from the damage on is read in one go; when nothing
//! fails on its own, [`parse`] gives up and the caller reads the whole
//! file.

use super::common::{Error, Src, ITEM_WORDS};
use super::{fast, items, split_token};
use crate::ast::Item;
use crate::intern::Name;
use crate::lexer::{starts_line, Token, TokenKind};
use crate::span::{FileId, Span};
use chumsky::input::Input;
use chumsky::Parser;
use rayon::prelude::*;
use std::ops::Range;

/// Tokens per group of pieces the fast pass reads in one go: a parse has a
/// fixed cost, and most groups have no error.
pub const GROUP_TOKENS: usize = 4096;

/// Groups read in parallel before their items are moved into the file's.
const BATCH_GROUPS: usize = 64;

/// Tokens the fast pass should read per parallel job, at least.
const JOB_TOKENS: usize = 32 * 1024;

/// The file's items and the full grammar's errors (none for a file without
/// syntax errors), or `None` when the pieces do not show where the error
/// is. Groups of pieces of about `group_tokens` tokens are read by the fast
/// pass in parallel; the pieces of a group that fails are read one by one.
pub fn parse<'src>(
    file: FileId,
    text: &'src str,
    strings: &'src [String],
    tokens: &'src [Token],
    group_tokens: usize,
) -> Option<(Vec<Item>, Vec<Error<'src>>)> {
    let cut = Cut {
        file,
        text,
        strings,
        tokens,
    };
    let pieces = cut.pieces();
    let groups = group(&pieces, group_tokens);
    let group_ranges: Vec<Range<usize>> =
        groups.iter().map(|g| cut.tokens_of(&pieces, g)).collect();
    // Good groups go straight into the file's vector, a batch at a time,
    // so that their own vectors never all live at once.
    let mut items: Vec<Item> = Vec::with_capacity(pieces.len());
    let mut offsets: Vec<Option<usize>> = Vec::with_capacity(groups.len());
    for batch in group_ranges.chunks(BATCH_GROUPS) {
        for read in cut.fast(batch) {
            match read {
                Some(mut got) => {
                    offsets.push(Some(items.len()));
                    items.append(&mut got);
                }
                None => offsets.push(None),
            }
        }
    }
    if offsets.iter().all(Option::is_some) {
        items.shrink_to_fit();
        return Some((items, Vec::new()));
    }
    // Each group's items on their own again for the repair below, from
    // the group before the first failing one on; the groups before it keep
    // theirs in `items`, which stands for the first group.
    let first = offsets.iter().position(Option::is_none).unwrap_or(0);
    let keep = first.saturating_sub(1).max(1);
    let mut read: Vec<Option<Vec<Item>>> = Vec::with_capacity(groups.len());
    for offset in offsets.get(keep..).unwrap_or(&[]).iter().rev() {
        read.push(offset.map(|start| items.split_off(start.min(items.len()))));
    }
    read.extend((1..keep.min(offsets.len())).map(|_| Some(Vec::new())));
    read.push(offsets.first().copied().flatten().map(|_| items));
    read.reverse();
    // Each piece of a failing group and of its neighbours on its own, so
    // that the good pieces around the damage have their own items; any
    // other good group stands for its pieces (its items go with its first
    // piece, as no run read by the full grammar reaches into it).
    let mut one_by_one = vec![false; groups.len()];
    for (index, items) in read.iter().enumerate() {
        if items.is_none() {
            let near = index.saturating_sub(1)..(index + 2).min(groups.len());
            one_by_one
                .get_mut(near)
                .into_iter()
                .flatten()
                .for_each(|m| *m = true);
        }
    }
    let mut by_piece: Vec<Option<Vec<Item>>> = Vec::with_capacity(pieces.len());
    for ((run, items), split) in groups.iter().zip(read).zip(one_by_one) {
        match items {
            Some(items) if !split => {
                by_piece.push(Some(items));
                by_piece.extend((run.start + 1..run.end).map(|_| Some(Vec::new())));
            }
            _ => by_piece.extend(cut.fast(pieces.get(run.clone()).unwrap_or(&[]))),
        }
    }
    cut.repair(&pieces, by_piece)
}

/// Consecutive pieces gathered into runs of at least `group_tokens` tokens.
fn group(pieces: &[Range<usize>], group_tokens: usize) -> Vec<Range<usize>> {
    let mut groups = Vec::new();
    let mut start = 0;
    let mut size = 0;
    for (index, piece) in pieces.iter().enumerate() {
        size += piece.len();
        if size >= group_tokens {
            groups.push(start..index + 1);
            start = index + 1;
            size = 0;
        }
    }
    if start < pieces.len() {
        groups.push(start..pieces.len());
    }
    groups
}

/// Whether `items` ends with the same declarations as `tail`.
fn ends_with(items: &[Item], tail: &[Item]) -> bool {
    let Some(start) = items.len().checked_sub(tail.len()) else {
        return false;
    };
    let got = items.get(start..).unwrap_or(&[]);
    format!("{got:?}") == format!("{tail:?}")
}

/// Runs of pieces to read with the full grammar, in order: each failing
/// run with one good piece before and after it, runs that would touch
/// merged into one.
fn bad_regions(read: &[Option<Vec<Item>>], first_bad: usize) -> Vec<Range<usize>> {
    let mut regions: Vec<Range<usize>> = Vec::new();
    for (index, piece) in read.iter().enumerate().skip(first_bad) {
        if piece.is_some() {
            continue;
        }
        let start = index.saturating_sub(1);
        let end = (index + 2).min(read.len());
        match regions.last_mut() {
            Some(last) if last.end >= start => last.end = end,
            _ => regions.push(start..end),
        }
    }
    regions
}

/// One file's tokens and how to cut and read them.
struct Cut<'src> {
    file: FileId,
    text: &'src str,
    strings: &'src [String],
    tokens: &'src [Token],
}

impl<'src> Cut<'src> {
    /// Token ranges that each start at a declaration word at the start of
    /// a line outside brackets (the first one at the file's start).
    fn pieces(&self) -> Vec<Range<usize>> {
        let words: Vec<Name> = ITEM_WORDS.iter().map(|w| Name::new(w)).collect();
        let mut starts = vec![0];
        let prefixes = [Name::new("decline"), Name::new("public")];
        let mut in_prefix = false;
        let mut depth = 0usize;
        for (index, token) in self.tokens.iter().enumerate() {
            match token.kind {
                TokenKind::LParen | TokenKind::LBrace | TokenKind::LBracket => {
                    // A body has begun: the prefixes, if any, are behind.
                    in_prefix &= !(depth == 0 && token.kind == TokenKind::LBrace);
                    depth += 1
                }
                TokenKind::RParen | TokenKind::RBrace | TokenKind::RBracket => {
                    depth = depth.saturating_sub(1)
                }
                TokenKind::Ident(name)
                    if depth == 0
                        && words.contains(&name)
                        && starts_line(self.text, token.span.start) =>
                {
                    // `decline` and `public` lines belong to the
                    // declaration below them.
                    let prefix = prefixes.contains(&name);
                    if index > 0 && !in_prefix {
                        starts.push(index);
                    }
                    in_prefix = prefix;
                }
                _ => {}
            }
        }
        let ends = starts.iter().skip(1).copied().chain([self.tokens.len()]);
        starts.iter().zip(ends).map(|(&s, e)| s..e).collect()
    }

    /// The end-of-input span of a range that ends before token `end`: where
    /// a parse of the whole file would see that token begin.
    fn eoi(&self, end: usize) -> Span {
        let at = match self.tokens.get(end) {
            Some(token) => token.span.start,
            None => self.text.len() as u32,
        };
        Span::new(self.file, at, at)
    }

    /// The file from the fast pass's pieces (`None` where a piece failed),
    /// with the full grammar over each failing run of pieces.
    fn repair(
        &self,
        pieces: &[Range<usize>],
        mut read: Vec<Option<Vec<Item>>>,
    ) -> Option<(Vec<Item>, Vec<Error<'src>>)> {
        let first_bad = read.iter().position(Option::is_none)?;
        // One allocation for the whole file; each piece is freed as soon
        // as its items moved.
        let good: usize = read.iter().flatten().map(Vec::len).sum();
        let regions = bad_regions(&read, first_bad);
        let mut next = 0;
        let mut items = Vec::new();
        // The first piece may hold the items of many before the damage:
        // take its vector rather than copy it.
        if regions.first().is_some_and(|r| r.start > 0) {
            items = std::mem::take(read.first_mut()?)?;
            next = 1;
        }
        items.reserve(good.saturating_sub(items.len()) + 16);
        let mut errors = Vec::new();
        for region in regions {
            for piece in read.get_mut(next..region.start).into_iter().flatten() {
                items.append(&mut std::mem::take(piece)?);
            }
            let (mut got, mut errs) = self.full(self.tokens_of(pieces, &region));
            // Back in step when the full grammar read the good piece after
            // the damage as the fast pass did.
            let in_step = region.end >= pieces.len() || {
                let last = read.get(region.end - 1)?.as_ref()?;
                ends_with(&got, last)
            };
            if !in_step {
                let rest = region.start..pieces.len();
                let (got, errs) = self.full(self.tokens_of(pieces, &rest));
                items.extend(got);
                errors.extend(errs);
                return Some((items, errors));
            }
            items.append(&mut got);
            errors.append(&mut errs);
            next = region.end;
        }
        for piece in read.get_mut(next..).into_iter().flatten() {
            items.append(&mut std::mem::take(piece)?);
        }
        Some((items, errors))
    }

    /// The fast pass over token ranges, in parallel, in order.
    fn fast(&self, ranges: &[Range<usize>]) -> Vec<Option<Vec<Item>>> {
        // Building the parser costs about as much as reading a few
        // thousand tokens, so each job gets many.
        let tokens: usize = ranges.iter().map(ExactSizeIterator::len).sum();
        let jobs = (tokens / JOB_TOKENS).clamp(1, 64);
        let per_job = ranges.len().div_ceil(jobs).max(1);
        let jobs: Vec<Vec<Option<Vec<Item>>>> = ranges
            .par_chunks(per_job)
            .map(|part| {
                fast::parse_ranges(self.text, self.strings, self.tokens, part, |end| {
                    self.eoi(end)
                })
            })
            .collect();
        jobs.into_iter().flatten().collect()
    }

    /// The tokens of a run of pieces.
    fn tokens_of(&self, pieces: &[Range<usize>], run: &Range<usize>) -> Range<usize> {
        let start = pieces.get(run.start).map_or(0, |p| p.start);
        let end = run
            .end
            .checked_sub(1)
            .and_then(|last| pieces.get(last))
            .map_or(self.tokens.len(), |p| p.end);
        start..end
    }

    /// The full grammar over a token range.
    fn full(&self, range: Range<usize>) -> (Vec<Item>, Vec<Error<'src>>) {
        let eoi = self.eoi(range.end);
        let slice = self.tokens.get(range).unwrap_or(&[]);
        let src = Src {
            text: self.text,
            strings: self.strings,
        };
        let (items, errors) = items::file(src)
            .parse(slice.map(eoi, split_token))
            .into_output_errors();
        (items.unwrap_or_default(), errors)
    }
}
