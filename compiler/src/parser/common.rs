//! Token-level helpers shared by the grammar: keywords, names, paths, line
//! positions, and the recovery parsers that skip a broken line or item.

use crate::ast::{Ident, Path};
use crate::intern::Name;
use crate::lexer::{starts_line, string_value, Keyword, StrValue, TokenKind};
use crate::span::Span;
use chumsky::error::LabelError;
use chumsky::input::ValueInput;
use chumsky::prelude::*;
use chumsky::util::MaybeRef;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

pub type Error<'src> = super::PError<'src>;
pub type Extra<'src> = extra::Err<Error<'src>>;

/// The token stream every grammar function is generic over.
pub trait Tokens<'src>: ValueInput<'src, Token = TokenKind, Span = Span> {}
impl<'src, T: ValueInput<'src, Token = TokenKind, Span = Span>> Tokens<'src> for T {}

/// The source text, needed to tell whether a token starts a line and to
/// read the values of strings, decimals and route paths.
#[derive(Clone, Copy)]
pub struct Src<'src> {
    pub text: &'src str,
    /// The lexer's decoded strings ([`crate::lexer::Lexed::strings`]).
    pub strings: &'src [String],
}

impl<'src> Src<'src> {
    /// The text of `span`.
    pub fn slice(self, span: Span) -> &'src str {
        self.text.get(span.range()).unwrap_or("")
    }

    /// The value of a string token.
    pub fn string(self, value: StrValue, span: Span) -> String {
        string_value(self.text, self.strings, value, span).to_string()
    }
}

/// Gives back the spare capacity of a vector of AST nodes: a vector grows
/// to at least four slots, so a one-statement block or a one-parameter
/// list kept three empty ones, which added up in a 50 MB file. Shrinking
/// in place is cheap.
pub fn exact<T>(mut items: Vec<T>) -> Vec<T> {
    items.shrink_to_fit();
    items
}

/// What a repeated parser read, without the `None`s its recovered parts
/// left: collected straight into one vector instead of a vector of
/// options flattened into a second one.
pub struct Present<T>(pub Vec<T>);

impl<T> Default for Present<T> {
    fn default() -> Self {
        Present(Vec::new())
    }
}

impl<T> chumsky::container::Container<Option<T>> for Present<T> {
    fn with_capacity(n: usize) -> Self {
        Present(Vec::with_capacity(n))
    }

    fn push(&mut self, item: Option<T>) {
        if let Some(item) = item {
            self.0.push(item);
        }
    }
}

/// Chains of operators or postfix operations longer than this are reported
/// as `syntax.too_deep`: they would build a tree too deep for later phases.
pub const MAX_CHAIN: usize = 256;

/// Custom error tags; `errors.rs` turns each into a full diagnostic.
pub mod tag {
    pub const MISSING_RETURN: &str = "missing_return";
    pub const MISSING_RETURN_FUNCTION: &str = "missing_return_function";
    pub const ASSIGN_IN_CONDITION: &str = "assign_in_condition";
    pub const STRAY_ELSE: &str = "stray_else";
    pub const TOO_DEEP: &str = "too_deep";
    pub const TOO_MANY_ELSE_IFS: &str = "too_many_else_ifs";
    pub const END_OF_LINE: &str = "the end of the line";
    pub const TWO_STATEMENTS: &str = "two_statements";
}

pub fn punct<'src, I: Tokens<'src>>(
    kind: TokenKind,
) -> impl Parser<'src, I, Span, Extra<'src>> + Clone {
    just(kind).map_with(|_, e| e.span())
}

pub fn kw<'src, I: Tokens<'src>>(
    keyword: Keyword,
) -> impl Parser<'src, I, Span, Extra<'src>> + Clone {
    just(TokenKind::Kw(keyword)).map_with(|_, e| e.span())
}

/// A contextual word such as `action`, `fails` or `where`, lexed as a name.
pub fn word<'src, I: Tokens<'src>>(
    text: &'static str,
) -> impl Parser<'src, I, Span, Extra<'src>> + Clone {
    let name = Name::new(text);
    select! { TokenKind::Ident(n) = e if n == name => e.span() }.labelled(quoted(text))
}

/// `` `text` `` as a `&'static str`: a label that costs no allocation each
/// time an alternative fails. Each distinct word is leaked once.
fn quoted(text: &'static str) -> &'static str {
    static QUOTED: OnceLock<Mutex<HashMap<&'static str, &'static str>>> = OnceLock::new();
    let mut map = QUOTED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    map.entry(text)
        .or_insert_with(|| Box::leak(format!("`{text}`").into_boxed_str()))
}

/// A name usable as a value: never a keyword.
pub fn ident<'src, I: Tokens<'src>>() -> impl Parser<'src, I, Ident, Extra<'src>> + Clone {
    select! { TokenKind::Ident(name) = e => Ident { name, span: e.span() } }.labelled("a name")
}

/// Any word, keywords included: setting keys, field names, `.member`.
pub fn any_word<'src, I: Tokens<'src>>() -> impl Parser<'src, I, Ident, Extra<'src>> + Clone {
    select! {
        TokenKind::Ident(name) = e => Ident { name, span: e.span() },
        TokenKind::Kw(k) = e => Ident { name: Name::new(k.as_str()), span: e.span() },
    }
    .labelled("a name")
}

/// `a.b.c`: a name followed by `.member`s.
pub fn path<'src, I: Tokens<'src>>() -> impl Parser<'src, I, Path, Extra<'src>> + Clone {
    ident()
        .then(
            just(TokenKind::Dot)
                .ignore_then(any_word())
                .repeated()
                .collect::<Vec<_>>(),
        )
        .map_with(|(first, rest), e| {
            let mut segments = Vec::with_capacity(rest.len() + 1);
            segments.push(first);
            segments.extend(rest);
            Path {
                segments,
                span: e.span(),
            }
        })
        .labelled("a name")
}

/// Succeeds, consuming nothing, when the next token starts a line.
pub fn at_line_start<'src, I: Tokens<'src>>(
    src: Src<'src>,
) -> impl Parser<'src, I, (), Extra<'src>> + Clone {
    any()
        .try_map(move |tok: TokenKind, span: Span| {
            if starts_line(src.text, span.start) {
                Ok(())
            } else {
                Err(
                    <Error<'src> as LabelError<'src, I, &'static str>>::expected_found(
                        [tag::END_OF_LINE],
                        Some(MaybeRef::Val(tok)),
                        span,
                    ),
                )
            }
        })
        .rewind()
}

/// Succeeds, consuming nothing, when the next token continues the line.
pub fn on_same_line<'src, I: Tokens<'src>>(
    src: Src<'src>,
) -> impl Parser<'src, I, (), Extra<'src>> + Clone {
    any()
        .try_map(move |tok: TokenKind, span: Span| {
            if starts_line(src.text, span.start) {
                Err(
                    <Error<'src> as LabelError<'src, I, &'static str>>::expected_found(
                        ["more on the same line"],
                        Some(MaybeRef::Val(tok)),
                        span,
                    ),
                )
            } else {
                Ok(())
            }
        })
        .rewind()
}

/// Where a statement may end: a new line, the block's `}`, or the file's end.
/// A second statement started on the same line (`var a = 1 var b = 2`) ends
/// the first too, reported once, so both statements are kept.
pub fn statement_end<'src, I: Tokens<'src>>(
    src: Src<'src>,
) -> impl Parser<'src, I, (), Extra<'src>> + Clone {
    let second = select! {
        TokenKind::Kw(
            Keyword::Var
                | Keyword::If
                | Keyword::For
                | Keyword::Return
                | Keyword::Reject
                | Keyword::Emit
                | Keyword::Attempt
                | Keyword::Match
        ) = e => e.span()
    }
    .rewind()
    .validate(|span, _, emitter| emitter.emit(Error::custom(span, tag::TWO_STATEMENTS)));
    choice((
        end(),
        just(TokenKind::RBrace).ignored().rewind(),
        at_line_start(src),
        second,
    ))
}

const DELIMITERS: [TokenKind; 6] = [
    TokenKind::LParen,
    TokenKind::RParen,
    TokenKind::LBrace,
    TokenKind::RBrace,
    TokenKind::LBracket,
    TokenKind::RBracket,
];

/// One token, or one whole bracket group (the lexer balanced them).
pub fn unit<'src, I: Tokens<'src>>() -> impl Parser<'src, I, (), Extra<'src>> + Clone {
    recursive(|unit| {
        let group = |open, close| {
            unit.clone()
                .repeated()
                .delimited_by(just(open), just(close))
        };
        choice((
            group(TokenKind::LParen, TokenKind::RParen),
            group(TokenKind::LBrace, TokenKind::RBrace),
            group(TokenKind::LBracket, TokenKind::RBracket),
            none_of(DELIMITERS).ignored(),
        ))
    })
}

/// Recovery for a line-based production (statement, setting, field, arm):
/// skips to the next line or the enclosing closer, returning what it skipped.
pub fn skip_line<'src, I: Tokens<'src>>(
    src: Src<'src>,
) -> impl Parser<'src, I, Span, Extra<'src>> + Clone {
    unit()
        .then(on_same_line(src).ignore_then(unit()).repeated())
        .map_with(|_, e| e.span())
}

/// The rest of the current line (possibly nothing), as a span.
pub fn rest_of_line<'src, I: Tokens<'src>>(
    src: Src<'src>,
) -> impl Parser<'src, I, Span, Extra<'src>> + Clone {
    on_same_line(src)
        .ignore_then(unit())
        .repeated()
        .map_with(|_, e| e.span())
}

/// The words that start a declaration; `split` cuts files before them.
pub const ITEM_WORDS: [&str; 14] = [
    "application",
    "config",
    "store",
    "type",
    "entity",
    "failure",
    "event",
    "public",
    "action",
    "function",
    "route",
    "subscriber",
    "schedule",
    "decline",
];

/// Succeeds, consuming nothing, on a declaration word at the start of a line.
fn at_item_start<'src, I: Tokens<'src>>(
    src: Src<'src>,
) -> impl Parser<'src, I, (), Extra<'src>> + Clone {
    let words: Vec<Name> = ITEM_WORDS.iter().map(|w| Name::new(w)).collect();
    any()
        .try_map(move |tok: TokenKind, span: Span| match tok {
            TokenKind::Ident(n) if words.contains(&n) && starts_line(src.text, span.start) => {
                Ok(())
            }
            other => Err(
                <Error<'src> as LabelError<'src, I, &'static str>>::expected_found(
                    ["a declaration"],
                    Some(MaybeRef::Val(other)),
                    span,
                ),
            ),
        })
        .rewind()
}

/// Recovery for a declaration: skips to the next declaration word that
/// starts a line, returning what it skipped.
/// An error token the lexer left at the start of a declaration, with the
/// rest of that declaration.
pub fn error_item<'src, I: Tokens<'src>>(
    src: Src<'src>,
) -> impl Parser<'src, I, Span, Extra<'src>> + Clone {
    just(TokenKind::Error)
        .then(at_item_start(src).not().ignore_then(unit()).repeated())
        .map_with(|_, e| e.span())
}

pub fn skip_item<'src, I: Tokens<'src>>(
    src: Src<'src>,
) -> impl Parser<'src, I, Span, Extra<'src>> + Clone {
    // A stray closer cannot reach here (the lexer balances brackets), but
    // skipping any token keeps the file parser from ever failing.
    let unit_or_any = unit().or(any().ignored());
    unit_or_any
        .clone()
        .then(at_item_start(src).not().ignore_then(unit_or_any).repeated())
        .map_with(|_, e| e.span())
}
