//! The chumsky parser over lexer tokens: tokens to [`crate::ast`], with error
//! recovery. Parsing never fails; it returns the AST and its diagnostics.
//!
//! Layout: [`common`] holds token-level helpers and recovery parsers,
//! [`types`], [`exprs`], [`stmts`] and [`items`] the grammar, and [`errors`]
//! is the one place where chumsky's errors become our diagnostics.

mod common;
mod errors;
mod exprs;
mod fast;
mod items;
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

fn split_token(token: &Token) -> (&TokenKind, &Span) {
    (&token.kind, &token.span)
}

/// Stack for parsing one file. The grammar recurses once per nested block
/// or bracket, and in a debug build chumsky uses tens of kilobytes per level:
/// 40 nested `if`s overflowed the 2 MB stack of a rayon thread. With this
/// much, the deepest nesting the lexer lets through (`lexer::MAX_DEPTH`)
/// parses in any build. Only the pages used are ever committed.
const PARSER_STACK: usize = 256 * 1024 * 1024;

/// Parses one file, on a thread of its own with a [`PARSER_STACK`] stack.
pub fn parse_file(file: FileId, text: &str) -> (SourceFileAst, Vec<Diagnostic>) {
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

/// Parses one file on the current thread.
fn parse_here(file: FileId, text: &str) -> (SourceFileAst, Vec<Diagnostic>) {
    let lexed = lexer::lex(file, text);
    let end = text.len() as u32;
    let eoi = Span::new(file, end, end);
    if let Some(items) = fast::parse(text, lexed.tokens.as_slice().map(eoi, split_token)) {
        let ast = SourceFileAst { file, items };
        return (ast, lexed.diagnostics);
    }
    let input = lexed.tokens.as_slice().map(eoi, split_token);
    let (items, errs) = items::file(common::Src { text })
        .parse(input)
        .into_output_errors();
    let mut diags = lexed.diagnostics;
    diags.extend(errors::convert_all(
        errs,
        &lexed.tokens,
        text,
        lexed.quiet_from,
    ));
    let ast = SourceFileAst {
        file,
        items: items.unwrap_or_default(),
    };
    (ast, diags)
}

/// Parses the given files (in parallel), returning ASTs in the order given and
/// appending diagnostics in that same order.
pub fn parse_files(
    files: &Files,
    ids: &[FileId],
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<SourceFileAst> {
    // One pool of big-stack threads for the whole batch: a thread per file
    // cost more than parsing small files. Without a pool, a thread per file.
    let parse_all = || -> Vec<(SourceFileAst, Vec<Diagnostic>)> {
        ids.par_iter()
            .map(|&id| parse_here(id, &files.get(id).text))
            .collect()
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .thread_name(|i| format!("jadpo-parse-{i}"))
        .stack_size(PARSER_STACK)
        .build();
    let results = match pool {
        Ok(pool) => pool.install(parse_all),
        Err(_) => ids
            .par_iter()
            .map(|&id| parse_file(id, &files.get(id).text))
            .collect(),
    };
    let mut asts = Vec::with_capacity(results.len());
    for (ast, diags) in results {
        asts.push(ast);
        diagnostics.extend(diags);
    }
    asts
}
