//! The logos lexer: source text to a flat vector of tokens with `u32` spans.
//!
//! Lexing never fails. Besides splitting the text, the lexer settles every
//! problem that can be judged from tokens alone, so the parser sees a clean
//! stream and one mistake gives one diagnostic:
//! - invalid characters and NUL bytes are reported and become one
//!   [`TokenKind::Error`]; semicolons are reported and dropped;
//! - an unterminated string is reported and kept (its text up to the line end);
//! - delimiters are balanced: an unmatched closer is reported and dropped, an
//!   unclosed opener is reported and a zero-width closer is inserted;
//! - nesting deeper than [`MAX_DEPTH`] is reported once and the over-deep
//!   region becomes a single [`TokenKind::Error`] token.
//!
//! A route path (`route POST /subscriptions/{id} {`) is lexed as ordinary
//! tokens and then merged into one [`TokenKind::RoutePath`].

use crate::ast::DurationUnit;
use crate::diag::Diagnostic;
use crate::intern::Name;
use crate::span::{FileId, Span};
use logos::Logos;

/// Runs of invalid characters reported per file; a binary file would
/// otherwise bury every other finding.
const MAX_INVALID_RUNS: usize = 20;

/// Deepest nesting of `(`, `[` and `{` accepted; deeper input gets `syntax.too_deep`.
pub const MAX_DEPTH: usize = 256;

/// Words that can never be a name. Item words (`action`, `store`, `event`, ...)
/// and clause words (`fails`, `in`, `max`, `with`, ...) stay [`TokenKind::Ident`]
/// because they are also used as setting keys and names (`store: primary`,
/// `run: subscribe(event)`); the parser matches them by text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Keyword {
    Var,
    Mut,
    If,
    Else,
    For,
    Return,
    Reject,
    Emit,
    Attempt,
    Match,
    Propagate,
    Create,
    Update,
    Delete,
    True,
    False,
    None,
    And,
    Or,
    Not,
}

impl Keyword {
    fn from_word(word: &str) -> Option<Keyword> {
        Some(match word {
            "var" => Keyword::Var,
            "mut" => Keyword::Mut,
            "if" => Keyword::If,
            "else" => Keyword::Else,
            "for" => Keyword::For,
            "return" => Keyword::Return,
            "reject" => Keyword::Reject,
            "emit" => Keyword::Emit,
            "attempt" => Keyword::Attempt,
            "match" => Keyword::Match,
            "propagate" => Keyword::Propagate,
            "create" => Keyword::Create,
            "update" => Keyword::Update,
            "delete" => Keyword::Delete,
            "true" => Keyword::True,
            "false" => Keyword::False,
            "none" => Keyword::None,
            "and" => Keyword::And,
            "or" => Keyword::Or,
            "not" => Keyword::Not,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Keyword::Var => "var",
            Keyword::Mut => "mut",
            Keyword::If => "if",
            Keyword::Else => "else",
            Keyword::For => "for",
            Keyword::Return => "return",
            Keyword::Reject => "reject",
            Keyword::Emit => "emit",
            Keyword::Attempt => "attempt",
            Keyword::Match => "match",
            Keyword::Propagate => "propagate",
            Keyword::Create => "create",
            Keyword::Update => "update",
            Keyword::Delete => "delete",
            Keyword::True => "true",
            Keyword::False => "false",
            Keyword::None => "none",
            Keyword::And => "and",
            Keyword::Or => "or",
            Keyword::Not => "not",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    Ident(Name),
    Kw(Keyword),
    Int(i64),
    /// A decimal literal as written (`12.50`).
    Decimal(Name),
    /// A string literal with escapes decoded.
    Str(String),
    Duration(u64, DurationUnit),
    /// A route path as written: `/subscriptions/{id}`.
    RoutePath(String),
    EqEq,
    NotEq,
    Lt,
    Le,
    Gt,
    Ge,
    Plus,
    Minus,
    Star,
    Slash,
    Assign,
    LParen,
    RParen,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    Comma,
    Dot,
    Colon,
    Question,
    Pipe,
    FatArrow,
    Arrow,
    /// Stands for a region the lexer already diagnosed (nesting too deep).
    /// The parser accepts it wherever an item, statement, type or
    /// expression may stand and reports nothing about it.
    Error,
}

impl TokenKind {
    /// How the token is named in messages: "`{`", "the name `x`", "a string".
    pub fn describe(&self) -> String {
        match self {
            TokenKind::Ident(name) => format!("the name `{name}`"),
            TokenKind::Kw(kw) => format!("`{}`", kw.as_str()),
            TokenKind::Int(_) | TokenKind::Decimal(_) => "a number".to_string(),
            TokenKind::Str(_) => "a string".to_string(),
            TokenKind::Duration(..) => "a duration".to_string(),
            TokenKind::RoutePath(_) => "a route path".to_string(),
            TokenKind::Error => "a part that could not be read".to_string(),
            other => format!("`{}`", other.punct_text()),
        }
    }

    /// The text of a punctuation token; empty for other tokens.
    pub fn punct_text(&self) -> &'static str {
        match self {
            TokenKind::EqEq => "==",
            TokenKind::NotEq => "!=",
            TokenKind::Lt => "<",
            TokenKind::Le => "<=",
            TokenKind::Gt => ">",
            TokenKind::Ge => ">=",
            TokenKind::Plus => "+",
            TokenKind::Minus => "-",
            TokenKind::Star => "*",
            TokenKind::Slash => "/",
            TokenKind::Assign => "=",
            TokenKind::LParen => "(",
            TokenKind::RParen => ")",
            TokenKind::LBrace => "{",
            TokenKind::RBrace => "}",
            TokenKind::LBracket => "[",
            TokenKind::RBracket => "]",
            TokenKind::Comma => ",",
            TokenKind::Dot => ".",
            TokenKind::Colon => ":",
            TokenKind::Question => "?",
            TokenKind::Pipe => "|",
            TokenKind::FatArrow => "=>",
            TokenKind::Arrow => "->",
            _ => "",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
}

/// The lexer's result: tokens with balanced delimiters, its diagnostics, and
/// the offset from which later parser diagnostics are noise.
#[derive(Debug, Default)]
pub struct Lexed {
    pub tokens: Vec<Token>,
    pub diagnostics: Vec<Diagnostic>,
    /// When delimiters could not be repaired with confidence, parser
    /// diagnostics at or after this offset follow from that one mistake and
    /// are dropped.
    pub quiet_from: Option<u32>,
}

/// The raw token classes logos recognises; payloads are read afterwards.
#[derive(Logos, Clone, Copy, Debug, PartialEq)]
enum Raw {
    /// Whitespace and `//` comments, dropped by [`raw_tokens`]. Not logos
    /// `skip`s: logos skips by recursing once per skipped run, so a few
    /// thousand comment lines in a row overflowed the stack. A comment runs
    /// to the end of its line, never further: greedy is intended.
    #[regex(r"[ \t\r\n\f]+")]
    #[regex(r"//[^\n]*", allow_greedy = true)]
    Trivia,
    #[regex("[A-Za-z_][A-Za-z0-9_]*")]
    Word,
    #[regex("[0-9]+")]
    Int,
    #[regex(r"[0-9]+\.[0-9]+")]
    Decimal,
    #[regex("[0-9]+(ms|s|m|h|d)", priority = 10)]
    Duration,
    #[regex("[0-9]+[A-Za-z_][A-Za-z0-9_]*", priority = 3)]
    BadNumber,
    #[regex(r#""([^"\\\n]|\\[^\n])*""#)]
    Str,
    #[regex(r#""([^"\\\n]|\\[^\n])*\\?"#)]
    UnterminatedStr,
    #[token("==")]
    EqEq,
    #[token("!=")]
    NotEq,
    #[token("<")]
    Lt,
    #[token("<=")]
    Le,
    #[token(">")]
    Gt,
    #[token(">=")]
    Ge,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("=")]
    Assign,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token(",")]
    Comma,
    #[token(".")]
    Dot,
    #[token(":")]
    Colon,
    #[token("?")]
    Question,
    #[token("|")]
    Pipe,
    #[token("=>")]
    FatArrow,
    #[token("->")]
    Arrow,
    #[token(";")]
    Semicolon,
}

/// Lexes one file.
pub fn lex(file: FileId, text: &str) -> Lexed {
    let mut diags = Vec::new();
    let raw = raw_tokens(file, text, &mut diags);
    let merged = merge_route_paths(raw, text);
    let limited = limit_type_arguments(merged, text, &mut diags);
    let mut lexed = balance(limited, file, text, &mut diags);
    lexed.diagnostics = diags;
    lexed
}

/// True when only spaces and tabs stand between the start of the line and `pos`.
pub fn starts_line(text: &str, pos: u32) -> bool {
    let bytes = text.as_bytes();
    let mut i = (pos as usize).min(bytes.len());
    while i > 0 {
        match bytes[i - 1] {
            b'\n' => return true,
            b' ' | b'\t' | b'\r' | b'\x0c' => i -= 1,
            _ => return false,
        }
    }
    true
}

/// Width of the indentation of the line holding `pos`.
fn indent_of(text: &str, pos: u32) -> usize {
    let before = text.get(..pos as usize).unwrap_or("");
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = text.get(line_start..).unwrap_or("");
    line.len() - line.trim_start_matches([' ', '\t']).len()
}

fn raw_tokens(file: FileId, text: &str, diags: &mut Vec<Diagnostic>) -> Vec<Token> {
    let mut out = Vec::with_capacity(text.len() / 4 + 1);
    let mut lexer = Raw::lexer(text);
    // A run of invalid characters is one mistake: remember where it started.
    let mut bad_run: Option<(u32, u32)> = None;
    while let Some(result) = lexer.next() {
        let range = lexer.span();
        let span = Span::new(file, range.start as u32, range.end as u32);
        let slice = lexer.slice();
        match result {
            // Trivia never ended a run of invalid characters (it used to be
            // skipped inside logos), so it does not flush one here either.
            Ok(Raw::Trivia) => {}
            Ok(raw) => {
                flush_bad_run(&mut bad_run, file, text, diags, &mut out);
                if let Some(kind) = cook(raw, slice, span, diags) {
                    out.push(Token { kind, span });
                }
            }
            Err(()) => {
                if slice.contains('\0') {
                    flush_bad_run(&mut bad_run, file, text, diags, &mut out);
                    diags.push(nul_byte(span));
                    out.push(Token {
                        kind: TokenKind::Error,
                        span,
                    });
                    continue;
                }
                bad_run = match bad_run {
                    Some((start, end)) if end == span.start => Some((start, span.end)),
                    Some(_) => {
                        flush_bad_run(&mut bad_run, file, text, diags, &mut out);
                        Some((span.start, span.end))
                    }
                    None => Some((span.start, span.end)),
                };
            }
        }
    }
    flush_bad_run(&mut bad_run, file, text, diags, &mut out);
    out
}

/// Reports a run of invalid characters and leaves an error token in its
/// place, so the parser does not report the same mistake again.
fn flush_bad_run(
    run: &mut Option<(u32, u32)>,
    file: FileId,
    text: &str,
    diags: &mut Vec<Diagnostic>,
    out: &mut Vec<Token>,
) {
    if let Some((start, end)) = run.take() {
        out.push(Token {
            kind: TokenKind::Error,
            span: Span::new(file, start, end),
        });
        let reported = diags
            .iter()
            .filter(|d| d.code == "syntax.invalid_character")
            .count();
        if reported >= MAX_INVALID_RUNS {
            return;
        }
        let span = Span::new(file, start, end);
        let shown: String = text
            .get(span.range())
            .unwrap_or("?")
            .chars()
            .take(16)
            .collect();
        let shown = shown.as_str();
        let what = if shown.chars().count() == 1 {
            format!("the character `{}`", shown.escape_debug())
        } else {
            format!("the characters `{}`", shown.escape_debug())
        };
        diags.push(
            Diagnostic::error(
                "syntax.invalid_character",
                span,
                format!("{what} cannot appear in Jadpo source"),
            )
            .with_label("not part of the language")
            .with_reason("outside strings and comments, Jadpo uses only letters, digits, `_`, whitespace and its operators and brackets")
            .with_fix("remove it, or put it inside a string or a `//` comment"),
        );
    }
}

fn nul_byte(span: Span) -> Diagnostic {
    Diagnostic::error("syntax.nul_byte", span, "the file contains a NUL byte")
        .with_label("NUL byte here")
        .with_reason("a NUL byte is never valid in Jadpo source; it usually means a binary file or a broken encoding")
        .with_fix("remove the byte, or write `\\u{0}` inside a string if the value is meant")
}

/// Turns a raw token into a token kind, reporting lexical mistakes.
fn cook(raw: Raw, slice: &str, span: Span, diags: &mut Vec<Diagnostic>) -> Option<TokenKind> {
    Some(match raw {
        Raw::Word => match Keyword::from_word(slice) {
            Some(kw) => TokenKind::Kw(kw),
            None => TokenKind::Ident(Name::new(slice)),
        },
        Raw::Int => TokenKind::Int(parse_int(slice, span, diags)),
        Raw::Decimal => TokenKind::Decimal(Name::new(slice)),
        Raw::Duration => duration(slice, span, diags),
        Raw::BadNumber => {
            diags.push(bad_number(slice, span));
            TokenKind::Error
        }
        Raw::Str => {
            let inner = slice.get(1..slice.len().saturating_sub(1)).unwrap_or("");
            TokenKind::Str(decode_string(inner, span.start + 1, span, diags))
        }
        Raw::UnterminatedStr => {
            diags.push(unterminated(span));
            let inner = slice.get(1..).unwrap_or("");
            let inner = inner.strip_suffix('\\').unwrap_or(inner);
            TokenKind::Str(decode_string(inner, span.start + 1, span, diags))
        }
        Raw::Semicolon => {
            diags.push(semicolon(span));
            return None;
        }
        other => punct(other),
    })
}

fn punct(raw: Raw) -> TokenKind {
    match raw {
        Raw::EqEq => TokenKind::EqEq,
        Raw::NotEq => TokenKind::NotEq,
        Raw::Lt => TokenKind::Lt,
        Raw::Le => TokenKind::Le,
        Raw::Gt => TokenKind::Gt,
        Raw::Ge => TokenKind::Ge,
        Raw::Plus => TokenKind::Plus,
        Raw::Minus => TokenKind::Minus,
        Raw::Star => TokenKind::Star,
        Raw::Slash => TokenKind::Slash,
        Raw::Assign => TokenKind::Assign,
        Raw::LParen => TokenKind::LParen,
        Raw::RParen => TokenKind::RParen,
        Raw::LBrace => TokenKind::LBrace,
        Raw::RBrace => TokenKind::RBrace,
        Raw::LBracket => TokenKind::LBracket,
        Raw::RBracket => TokenKind::RBracket,
        Raw::Comma => TokenKind::Comma,
        Raw::Dot => TokenKind::Dot,
        Raw::Colon => TokenKind::Colon,
        Raw::Question => TokenKind::Question,
        Raw::Pipe => TokenKind::Pipe,
        Raw::FatArrow => TokenKind::FatArrow,
        Raw::Arrow => TokenKind::Arrow,
        _ => TokenKind::Error,
    }
}

fn parse_int(slice: &str, span: Span, diags: &mut Vec<Diagnostic>) -> i64 {
    match slice.parse::<i64>() {
        Ok(v) => v,
        Err(_) => {
            diags.push(number_too_large(span));
            0
        }
    }
}

fn number_too_large(span: Span) -> Diagnostic {
    Diagnostic::error("syntax.number_too_large", span, "this number is too large")
        .with_label("does not fit in 64 bits")
        .with_reason("whole numbers in Jadpo are 64-bit: at most 9223372036854775807")
        .with_fix("use a smaller number")
}

fn duration(slice: &str, span: Span, diags: &mut Vec<Diagnostic>) -> TokenKind {
    let digits_end = slice
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(slice.len());
    let (digits, unit) = slice.split_at(digits_end);
    let unit = match unit {
        "ms" => DurationUnit::Ms,
        "s" => DurationUnit::S,
        "m" => DurationUnit::M,
        "h" => DurationUnit::H,
        _ => DurationUnit::D,
    };
    let amount = match digits.parse::<u64>() {
        Ok(v) => v,
        Err(_) => {
            diags.push(number_too_large(span));
            0
        }
    };
    TokenKind::Duration(amount, unit)
}

fn bad_number(slice: &str, span: Span) -> Diagnostic {
    let digits_end = slice
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(slice.len());
    let suffix = slice.get(digits_end..).unwrap_or("");
    Diagnostic::error(
        "syntax.invalid_number",
        span,
        format!("`{suffix}` is not a duration unit"),
    )
    .with_label("a number cannot be followed by letters")
    .with_reason("a number followed by letters is read as a duration, and durations use the units `ms`, `s`, `m`, `h` and `d`")
    .with_fix("write a duration such as `500ms`, `10s`, `5m`, `24h` or `7d`, or put a space between the number and the name")
}

fn unterminated(span: Span) -> Diagnostic {
    Diagnostic::error(
        "syntax.unterminated_string",
        span,
        "this string is never closed",
    )
    .with_label("the string starts here and runs to the end of the line")
    .with_reason("a string must end with `\"` on the line where it starts")
    .with_fix("add the closing `\"`")
}

fn semicolon(span: Span) -> Diagnostic {
    Diagnostic::error("syntax.semicolon", span, "Jadpo does not use `;`")
        .with_label("remove the `;`")
        .with_reason(
            "statements and declarations end at the end of the line; there are no semicolons",
        )
        .with_edit_fix(
            "remove the `;`",
            vec![crate::diag::Edit {
                span,
                replacement: String::new(),
            }],
        )
}

/// Decodes the escapes of a string body starting at byte `base`.
fn decode_string(inner: &str, base: u32, whole: Span, diags: &mut Vec<Diagnostic>) -> String {
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\0' {
            let at = base + i as u32;
            diags.push(nul_byte(Span::new(whole.file, at, at + 1)));
            continue;
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        let start = base + i as u32;
        match chars.next() {
            Some((_, 'n')) => out.push('\n'),
            Some((_, 't')) => out.push('\t'),
            Some((_, 'r')) => out.push('\r'),
            Some((_, '"')) => out.push('"'),
            Some((_, '\\')) => out.push('\\'),
            Some((_, 'u')) => match unicode_escape(&mut chars) {
                Ok(c) => out.push(c),
                Err(end) => diags.push(invalid_escape(whole, start, base + end as u32, true)),
            },
            Some((j, other)) => {
                let end = base + (j + other.len_utf8()) as u32;
                diags.push(invalid_escape(whole, start, end, false));
            }
            None => diags.push(invalid_escape(whole, start, start + 1, false)),
        }
    }
    out
}

/// Reads `{hex}` after `\u`; on failure returns the offset where the bad escape ends.
fn unicode_escape(
    chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
) -> Result<char, usize> {
    let mut end = chars.peek().map_or(usize::MAX, |(i, _)| *i);
    match chars.peek() {
        Some((_, '{')) => {
            chars.next();
        }
        _ => return Err(end),
    }
    let mut value: u32 = 0;
    let mut digits = 0;
    for (i, c) in chars.by_ref() {
        end = i + c.len_utf8();
        if c == '}' {
            if digits == 0 {
                return Err(end);
            }
            return char::from_u32(value).ok_or(end);
        }
        let Some(d) = c.to_digit(16) else {
            return Err(end);
        };
        digits += 1;
        if digits > 6 {
            return Err(end);
        }
        value = value * 16 + d;
    }
    Err(end)
}

fn invalid_escape(whole: Span, start: u32, end: u32, unicode: bool) -> Diagnostic {
    let end = end.clamp(start + 1, whole.end.max(start + 1));
    let span = Span::new(whole.file, start, end);
    let summary = if unicode {
        "this `\\u` escape is not a valid character"
    } else {
        "this escape is not known"
    };
    Diagnostic::error("syntax.invalid_escape", span, summary)
        .with_label("invalid escape")
        .with_reason("strings know the escapes `\\\"`, `\\\\`, `\\n`, `\\t`, `\\r` and `\\u{...}` with 1 to 6 hex digits naming a Unicode scalar value")
        .with_fix("write `\\\\` for a backslash, or use one of the known escapes")
}

/// Merges the adjacent tokens after `route METHOD` that start with `/` into
/// one route path token.
fn merge_route_paths(tokens: Vec<Token>, text: &str) -> Vec<Token> {
    let route = Name::new("route");
    let mut out: Vec<Token> = Vec::with_capacity(tokens.len());
    let mut iter = tokens.into_iter().peekable();
    while let Some(tok) = iter.next() {
        let after_method = out.len() >= 2
            && matches!(out[out.len() - 2].kind, TokenKind::Ident(n) if n == route)
            && matches!(out[out.len() - 1].kind, TokenKind::Ident(_));
        if !(after_method && tok.kind == TokenKind::Slash) {
            out.push(tok);
            continue;
        }
        let mut span = tok.span;
        while let Some(next) = iter.peek() {
            if next.span.start != span.end {
                break;
            }
            span = span.to(next.span);
            iter.next();
        }
        let path = text.get(span.range()).unwrap_or("/").to_string();
        out.push(Token {
            kind: TokenKind::RoutePath(path),
            span,
        });
    }
    out
}

/// Cuts off `List<List<...` nested deeper than [`MAX_DEPTH`] on one line: a
/// `<` right after a name opens a level, `>` closes one. The rest of the
/// line becomes one error token. (Comparisons also count, but the count
/// restarts on every line, so only a line of hundreds of them could trip it.)
fn limit_type_arguments(tokens: Vec<Token>, text: &str, diags: &mut Vec<Diagnostic>) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::with_capacity(tokens.len());
    let mut depth = 0usize;
    let mut cut: Option<Span> = None;
    for tok in tokens {
        let new_line = starts_line(text, tok.span.start);
        if let Some(span) = cut {
            if !new_line {
                cut = Some(span.to(tok.span));
                continue;
            }
            out.push(Token {
                kind: TokenKind::Error,
                span,
            });
            cut = None;
        }
        if new_line {
            depth = 0;
        }
        let after_name = matches!(
            out.last(),
            Some(Token {
                kind: TokenKind::Ident(_),
                ..
            })
        );
        match tok.kind {
            TokenKind::Lt if after_name => depth += 1,
            TokenKind::Gt => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth > MAX_DEPTH {
            diags.push(too_deep(tok.span));
            cut = Some(tok.span);
            depth = 0;
            continue;
        }
        out.push(tok);
    }
    if let Some(span) = cut {
        out.push(Token {
            kind: TokenKind::Error,
            span,
        });
    }
    out
}

fn closer_of(kind: &TokenKind) -> Option<TokenKind> {
    match kind {
        TokenKind::LParen => Some(TokenKind::RParen),
        TokenKind::LBrace => Some(TokenKind::RBrace),
        TokenKind::LBracket => Some(TokenKind::RBracket),
        _ => None,
    }
}

fn is_closer(kind: &TokenKind) -> bool {
    matches!(
        kind,
        TokenKind::RParen | TokenKind::RBrace | TokenKind::RBracket
    )
}

struct Open {
    closer: TokenKind,
    span: Span,
    indent: usize,
}

/// A `}` on its own line, less indented than the line of the `{` it closed:
/// the likeliest place for a missing `}`.
struct Suspect {
    opener: Span,
    out_index: usize,
    at: u32,
}

struct Balancer<'t> {
    file: FileId,
    text: &'t str,
    out: Vec<Token>,
    stack: Vec<Open>,
    suspect: Option<Suspect>,
    diags: Vec<Diagnostic>,
}

/// Balances delimiters and cuts off over-deep nesting (see the module docs).
fn balance(tokens: Vec<Token>, file: FileId, text: &str, diags: &mut Vec<Diagnostic>) -> Lexed {
    let mut b = Balancer {
        file,
        text,
        out: Vec::with_capacity(tokens.len() + 1),
        stack: Vec::new(),
        suspect: None,
        diags: Vec::new(),
    };
    let mut iter = tokens.into_iter();
    while let Some(tok) = iter.next() {
        if let Some(closer) = closer_of(&tok.kind) {
            if b.stack.len() >= MAX_DEPTH {
                if b.skip_too_deep(tok, &mut iter) {
                    // The over-deep region ran to the end of the file: the
                    // unclosed openers are part of that one mistake.
                    b.close_silently();
                    diags.append(&mut b.diags);
                    return b.finish(None);
                }
                continue;
            }
            let indent = indent_of(text, tok.span.start);
            b.stack.push(Open {
                closer,
                span: tok.span,
                indent,
            });
            b.out.push(tok);
        } else if is_closer(&tok.kind) {
            b.close(tok);
        } else {
            b.out.push(tok);
        }
    }
    let quiet_from = b.close_at_end();
    diags.append(&mut b.diags);
    b.finish(quiet_from)
}

impl Balancer<'_> {
    fn finish(self, quiet_from: Option<u32>) -> Lexed {
        Lexed {
            tokens: self.out,
            diagnostics: Vec::new(),
            quiet_from,
        }
    }

    fn close(&mut self, tok: Token) {
        let Some(pos) = self.stack.iter().rposition(|o| o.closer == tok.kind) else {
            match self.stack.pop() {
                // Likely a typo: read it as the closer the open bracket needs.
                Some(open) => {
                    self.diags.push(mismatched_close(&open, &tok));
                    self.out.push(Token {
                        kind: open.closer,
                        span: tok.span,
                    });
                }
                None => self.diags.push(unmatched_close(&tok)),
            }
            return;
        };
        // Every opener above the match was never closed.
        while self.stack.len() > pos + 1 {
            if let Some(open) = self.stack.pop() {
                self.diags.push(unclosed(&open, self.file));
                self.push_synthetic(open.closer, tok.span.start);
            }
        }
        if let Some(open) = self.stack.pop() {
            self.note_suspect(&open, &tok);
        }
        self.out.push(tok);
    }

    fn note_suspect(&mut self, open: &Open, tok: &Token) {
        if self.suspect.is_some() || tok.kind != TokenKind::RBrace {
            return;
        }
        if starts_line(self.text, tok.span.start)
            && indent_of(self.text, tok.span.start) < open.indent
        {
            self.suspect = Some(Suspect {
                opener: open.span,
                out_index: self.out.len(),
                at: tok.span.start,
            });
        }
    }

    fn push_synthetic(&mut self, kind: TokenKind, at: u32) {
        self.out.push(Token {
            kind,
            span: Span::new(self.file, at, at),
        });
    }

    /// Closes what is still open at the end of the file; returns the offset
    /// after which parser diagnostics are noise, if any.
    fn close_at_end(&mut self) -> Option<u32> {
        if self.stack.is_empty() {
            return None;
        }
        let one_brace = self.stack.len() == 1
            && self.stack.first().map(|o| &o.closer) == Some(&TokenKind::RBrace);
        if let (true, Some(suspect)) = (one_brace, self.suspect.take()) {
            // The mis-indented `}` most likely closes the outer block; the
            // inner block it was matched with is the one missing its `}`.
            let open = Open {
                closer: TokenKind::RBrace,
                span: suspect.opener,
                indent: 0,
            };
            self.diags.push(unclosed(&open, self.file));
            let synthetic = Token {
                kind: TokenKind::RBrace,
                span: Span::new(self.file, suspect.at, suspect.at),
            };
            self.out.insert(suspect.out_index, synthetic);
            self.stack.clear();
            return None;
        }
        let quiet_from = self.stack.first().map(|o| o.span.start);
        let end = self.text.len() as u32;
        while let Some(open) = self.stack.pop() {
            self.diags.push(unclosed(&open, self.file));
            self.push_synthetic(open.closer, end);
        }
        quiet_from
    }

    fn close_silently(&mut self) {
        let end = self.text.len() as u32;
        while let Some(open) = self.stack.pop() {
            self.push_synthetic(open.closer, end);
        }
    }

    /// Replaces the region opened by `first` (up to its matching closer) with
    /// one error token. Returns true when the region reaches the end of file.
    fn skip_too_deep(&mut self, first: Token, iter: &mut impl Iterator<Item = Token>) -> bool {
        let mut depth = 1usize;
        let mut end = first.span.end;
        let mut reached_end = true;
        for tok in iter.by_ref() {
            end = tok.span.end;
            if closer_of(&tok.kind).is_some() {
                depth += 1;
            } else if is_closer(&tok.kind) {
                depth -= 1;
                if depth == 0 {
                    reached_end = false;
                    break;
                }
            }
        }
        let span = Span::new(self.file, first.span.start, end);
        self.diags.push(too_deep(first.span));
        self.out.push(Token {
            kind: TokenKind::Error,
            span,
        });
        reached_end
    }
}

fn unmatched_close(tok: &Token) -> Diagnostic {
    let text = tok.kind.punct_text();
    let opener = match tok.kind {
        TokenKind::RParen => "(",
        TokenKind::RBracket => "[",
        _ => "{",
    };
    Diagnostic::error(
        "syntax.unmatched_close",
        tok.span,
        format!("this `{text}` has no matching `{opener}`"),
    )
    .with_label("nothing to close here")
    .with_reason(format!(
        "every `{text}` closes the nearest `{opener}` that is still open, and none is open here"
    ))
    .with_fix(format!(
        "remove this `{text}`, or add the `{opener}` it is meant to close"
    ))
}

fn mismatched_close(open: &Open, tok: &Token) -> Diagnostic {
    let wanted = open.closer.punct_text();
    let found = tok.kind.punct_text();
    Diagnostic::error(
        "syntax.mismatched_close",
        tok.span,
        format!("expected `{wanted}` here, found `{found}`"),
    )
    .with_label(format!("this `{found}` closes nothing that is open"))
    .with_related(
        open.span,
        format!("this is the bracket still open, closed by `{wanted}`"),
    )
    .with_reason("brackets close in the reverse order they were opened")
    .with_edit_fix(
        format!("write `{wanted}`"),
        vec![crate::diag::Edit {
            span: tok.span,
            replacement: wanted.to_string(),
        }],
    )
}

fn unclosed(open: &Open, file: FileId) -> Diagnostic {
    let closer = open.closer.punct_text();
    let opener = match open.closer {
        TokenKind::RParen => "(",
        TokenKind::RBracket => "[",
        _ => "{",
    };
    let span = Span::new(file, open.span.start, open.span.end);
    Diagnostic::error(
        "syntax.unclosed",
        span,
        format!("this `{opener}` is never closed"),
    )
    .with_label(format!("opened here, no matching `{closer}`"))
    .with_reason(format!("every `{opener}` needs a matching `{closer}`; without it the rest of the file is read as part of this one"))
    .with_fix(format!("add the `{closer}` where this part ends"))
}

fn too_deep(span: Span) -> Diagnostic {
    Diagnostic::error(
        "syntax.too_deep",
        span,
        format!("brackets nest more than {MAX_DEPTH} levels deep here"),
    )
    .with_label("this bracket is one level too deep")
    .with_reason(format!(
        "Jadpo reads at most {MAX_DEPTH} nested `(`, `[`, `{{` and `<`; deeper code is not read"
    ))
    .with_fix("split the expression into several `var`s or move part of it into a function")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<TokenKind> {
        lex(FileId(0), text)
            .tokens
            .into_iter()
            .map(|t| t.kind)
            .collect()
    }

    #[test]
    fn durations_and_numbers() {
        assert_eq!(
            kinds("500ms 10s 5m 24h 7d 12 1.5"),
            vec![
                TokenKind::Duration(500, DurationUnit::Ms),
                TokenKind::Duration(10, DurationUnit::S),
                TokenKind::Duration(5, DurationUnit::M),
                TokenKind::Duration(24, DurationUnit::H),
                TokenKind::Duration(7, DurationUnit::D),
                TokenKind::Int(12),
                TokenKind::Decimal(Name::new("1.5")),
            ]
        );
    }

    #[test]
    fn route_path_is_one_token() {
        let k = kinds("route POST /subscriptions/{id} {\n}");
        assert_eq!(
            k[2],
            TokenKind::RoutePath("/subscriptions/{id}".to_string())
        );
        assert_eq!(k[3], TokenKind::LBrace);
        assert_eq!(k.len(), 5);
    }

    #[test]
    fn escapes_are_decoded() {
        let k = kinds(r#""a\"b\\c\n\t\u{1F600}""#);
        assert_eq!(k, vec![TokenKind::Str("a\"b\\c\n\t\u{1F600}".to_string())]);
    }

    #[test]
    fn many_comment_lines_in_a_row_do_not_overflow_the_stack() {
        // Regression (found by tests/hostile.rs): comments and whitespace
        // were logos skips, which recurse once per skipped run, and ~8,000
        // comment lines overflowed the stack of a debug build.
        let text = format!(
            "{}x // last\n",
            "// a comment line\n   \t\n".repeat(200_000)
        );
        assert_eq!(kinds(&text), vec![TokenKind::Ident(Name::new("x"))]);
    }
}
