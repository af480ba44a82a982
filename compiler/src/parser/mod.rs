//! The chumsky parser over lexer tokens: tokens to [`crate::ast`], with error
//! recovery. Parsing never fails; it returns the AST and its diagnostics.
//!
//! Layout: [`common`] holds token-level helpers and recovery parsers,
//! [`types`], [`exprs`], [`stmts`] and [`items`] the grammar, and [`errors`]
//! is the one place where chumsky's errors become our diagnostics.

mod common;
mod depth;

pub use common::MAX_CHAIN;
pub use depth::MAX_TREE_DEPTH;
mod errors;
mod exprs;
mod fast;
mod items;
mod split;
mod stmts;
mod types;

use crate::ast::SourceFileAst;
use crate::diag::Diagnostic;
use crate::lexer::{self, Token, TokenKind};
use crate::source::Files;
use crate::span::{FileId, Span};
use chumsky::input::Input;
use chumsky::Parser;
use rayon::prelude::*;

/// Lets chumsky build our spans directly: the context is the file.
impl chumsky::span::Span for Span {
    type Context = FileId;
    type Offset = u32;

    fn new(file: FileId, range: std::ops::Range<u32>) -> Self {
        // chumsky may build an empty span as `next start..previous end`.
        let end = range.end.max(range.start);
        Span::new(file, range.start, end)
    }

    fn context(&self) -> FileId {
        self.file
    }

    fn start(&self) -> u32 {
        self.start
    }

    fn end(&self) -> u32 {
        self.end
    }
}

/// The error type of the grammar in this module: full errors for diagnostics.
/// [`fast`] compiles the same grammar with an error type that costs nothing.
type PError<'src> = chumsky::error::Rich<'src, TokenKind, Span>;

/// Whether the grammar is compiled for [`fast`]: there, a few productions
/// take quicker routes that accept a subset of the same input (see
/// `exprs::fast_chain`); whatever they refuse, the full grammar reads.
const FAST: bool = false;

fn split_token(token: &Token) -> (&TokenKind, &Span) {
    (&token.kind, &token.span)
}

/// Stack for parsing one file. The grammar recurses once per nested block
/// or bracket, and in a debug build chumsky uses tens of kilobytes per level:
/// 40 nested `if`s overflowed the 2 MB stack of a rayon thread. With this
/// much, the deepest nesting the lexer lets through (`lexer::MAX_DEPTH`)
/// parses in any build. Only the pages used are ever committed.
const PARSER_STACK: usize = 256 * 1024 * 1024;

/// The pool of big-stack threads every parse runs on, built once: a pool
/// (or a thread) per call cost more than parsing small files, and a
/// thread that lives on keeps its caches of names warm. `None` when no
/// thread could be started.
fn parse_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("jadpo-parse-{i}"))
            .stack_size(PARSER_STACK)
            .build()
            .ok()
    })
    .as_ref()
}

/// Runs `f` on the parse pool's big-stack threads, where [`parse_file`]
/// parses in place: work over many files (`jadpo fmt`) that parses each
/// belongs there, not on another pool waiting for this one.
pub fn install<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    match parse_pool() {
        Some(pool) => pool.install(f),
        None => f(),
    }
}

/// Parses one file on a thread with a [`PARSER_STACK`] stack.
pub fn parse_file(file: FileId, text: &str) -> (SourceFileAst, Vec<Diagnostic>) {
    if let Some(pool) = parse_pool() {
        return pool.install(|| parse_here(file, text));
    }
    std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("jadpo-parse".to_string())
            .stack_size(PARSER_STACK)
            .spawn_scoped(scope, || parse_here(file, text));
        match spawned {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            // No thread to be had: parse on this one's stack.
            Err(_) => parse_here(file, text),
        }
    })
}

/// Parses one file on the current thread: the fast pass over the whole
/// file, and on a syntax error the fast pass over the file's pieces with
/// the full grammar over the pieces it refuses (see [`split`]). (Reading
/// the pieces first was about a fifth slower on a 50 MB file without
/// errors.)
fn parse_here(file: FileId, text: &str) -> (SourceFileAst, Vec<Diagnostic>) {
    let (ast, diags, _) = parse_lexed(file, text);
    (ast, diags)
}

/// Parses one file, keeping its comments' `(start, end)` (for the
/// formatter), on the parse pool as [`parse_file`] does.
pub fn parse_with_comments(
    file: FileId,
    text: &str,
) -> (SourceFileAst, Vec<Diagnostic>, Vec<(u32, u32)>) {
    install(|| parse_lexed(file, text))
}

fn parse_lexed(file: FileId, text: &str) -> (SourceFileAst, Vec<Diagnostic>, Vec<(u32, u32)>) {
    let mut lexed = lexer::lex(file, text);
    let comments = std::mem::take(&mut lexed.comments);
    let (ast, diags) = parse_tokens(file, text, lexed);
    (ast, diags, comments)
}

fn parse_tokens(file: FileId, text: &str, lexed: lexer::Lexed) -> (SourceFileAst, Vec<Diagnostic>) {
    let end = text.len() as u32;
    let eoi = Span::new(file, end, end);
    let tokens = lexed.tokens.as_slice().map(eoi, split_token);
    if let Some(mut items) = fast::parse(text, &lexed.strings, tokens) {
        let mut diags = lexed.diagnostics;
        depth::bound(&mut items, &mut diags);
        let ast = SourceFileAst { file, items };
        return (ast, diags);
    }
    let read = split::parse(
        file,
        text,
        &lexed.strings,
        &lexed.tokens,
        split::GROUP_TOKENS,
    );
    let (items, errs) = match read {
        Some(read) => read,
        None => whole_full(text, &lexed.strings, &lexed.tokens, eoi),
    };
    finish(file, text, &lexed, items, errs)
}

/// The full grammar over the whole file: what [`split`] must agree with,
/// and where it falls back to.
fn whole_full<'src>(
    text: &'src str,
    strings: &'src [String],
    tokens: &'src [Token],
    eoi: Span,
) -> (Vec<crate::ast::Item>, Vec<PError<'src>>) {
    let (items, errs) = items::file(common::Src { text, strings })
        .parse(tokens.map(eoi, split_token))
        .into_output_errors();
    (items.unwrap_or_default(), errs)
}

/// The AST and diagnostics from the full grammar's items and errors.
fn finish(
    file: FileId,
    text: &str,
    lexed: &lexer::Lexed,
    mut items: Vec<crate::ast::Item>,
    errs: Vec<PError<'_>>,
) -> (SourceFileAst, Vec<Diagnostic>) {
    let mut diags = lexed.diagnostics.clone();
    diags.extend(errors::convert_all(
        errs,
        &lexed.tokens,
        text,
        lexed.quiet_from,
    ));
    depth::bound(&mut items, &mut diags);
    (SourceFileAst { file, items }, diags)
}

/// Parses one file with the full grammar over the whole file, never the
/// fast pass or [`split`]: the reference the split error path is tested
/// against.
#[doc(hidden)]
pub fn parse_whole_full(file: FileId, text: &str) -> (SourceFileAst, Vec<Diagnostic>) {
    let lexed = lexer::lex(file, text);
    let end = text.len() as u32;
    let eoi = Span::new(file, end, end);
    let (items, errs) = whole_full(text, &lexed.strings, &lexed.tokens, eoi);
    finish(file, text, &lexed, items, errs)
}

/// The size of the groups [`parse_file`] splits a file with a syntax error
/// into.
#[doc(hidden)]
pub const GROUP_TOKENS: usize = split::GROUP_TOKENS;

/// Whether the split path read `text` and found errors (rather than
/// giving up and leaving the file to the full grammar): the differential
/// test counts these to know the path it tests was taken.
#[doc(hidden)]
pub fn split_found_errors(file: FileId, text: &str, group_tokens: usize) -> bool {
    let lexed = lexer::lex(file, text);
    let read = split::parse(file, text, &lexed.strings, &lexed.tokens, group_tokens);
    read.is_some_and(|(_, errors)| !errors.is_empty())
}

/// Both grammars on `text`: the fast one's items (`None` when it refused
/// the text), and the full one's items and error count, the items as
/// `Debug` text. The fast grammar must read only what the full one reads
/// without errors, into the same tree.
#[doc(hidden)]
pub fn both_grammars(text: &str) -> (Option<String>, String, usize) {
    let file = FileId(0);
    let lexed = lexer::lex(file, text);
    let end = text.len() as u32;
    let eoi = Span::new(file, end, end);
    let fast = fast::parse(
        text,
        &lexed.strings,
        lexed.tokens.as_slice().map(eoi, split_token),
    )
    .map(|items| format!("{items:?}"));
    let (items, errs) = whole_full(text, &lexed.strings, &lexed.tokens, eoi);
    (fast, format!("{items:?}"), errs.len())
}

/// Parses one file the way [`parse_file`] does, with the fast pass reading
/// groups of pieces of about `group_tokens` tokens.
#[doc(hidden)]
pub fn parse_split(
    file: FileId,
    text: &str,
    group_tokens: usize,
) -> (SourceFileAst, Vec<Diagnostic>) {
    let lexed = lexer::lex(file, text);
    let end = text.len() as u32;
    let eoi = Span::new(file, end, end);
    let read = split::parse(file, text, &lexed.strings, &lexed.tokens, group_tokens);
    let (items, errs) = match read {
        Some(read) => read,
        None => whole_full(text, &lexed.strings, &lexed.tokens, eoi),
    };
    finish(file, text, &lexed, items, errs)
}

/// Parses the given files (in parallel), returning ASTs in the order given and
/// appending diagnostics in that same order.
pub fn parse_files(
    files: &Files,
    ids: &[FileId],
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<SourceFileAst> {
    let results = parse_each(files, ids);
    let mut asts = Vec::with_capacity(results.len());
    for (ast, diags) in results {
        asts.push(ast);
        diagnostics.extend(diags);
    }
    asts
}

/// Parses the given files in parallel on the parse pool, each with its own
/// diagnostics, in the order given. One `install` for all files: calling
/// [`parse_file`] per file from another pool's threads makes each waiting
/// thread run further files on top of its own stack, which overflowed a
/// rayon thread's 2 MB at 2,500 files (the language server's cold open of
/// a 1M-line app).
pub fn parse_each(files: &Files, ids: &[FileId]) -> Vec<(SourceFileAst, Vec<Diagnostic>)> {
    let parse_all = || -> Vec<(SourceFileAst, Vec<Diagnostic>)> {
        ids.par_iter()
            .map(|&id| parse_here(id, &files.get(id).text))
            .collect()
    };
    match parse_pool() {
        Some(pool) => pool.install(parse_all),
        // Without a pool, a thread per file.
        None => ids
            .par_iter()
            .map(|&id| parse_file(id, &files.get(id).text))
            .collect(),
    }
}
