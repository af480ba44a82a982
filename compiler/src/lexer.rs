//! The logos lexer: source text to a flat vector of compact tokens.
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
//!
//! All of this happens in one pass: each token flows through four small
//! stages (read, merge route paths, limit type arguments, balance) that
//! keep only the state they need, and only the last one writes the single
//! token vector. A token is 24 bytes and `Copy`: payloads that would need
//! the heap (string values, route paths, decimals) are read from the
//! source text by their span, or from [`Lexed::strings`] when a string had
//! escapes to decode.

use crate::ast::DurationUnit;
use crate::diag::Diagnostic;
use crate::intern::Name;
use crate::span::{FileId, Span};
use logos::Logos;

/// Runs of invalid characters reported per file; a binary file would
/// otherwise bury every other finding.
const MAX_INVALID_RUNS: usize = 20;

/// Lexical diagnostics kept per file; past it they are counted and named
/// in one more (a file of 16 million `;` took 21 GB as one each).
const MAX_READ_DIAGS: usize = 10_000;

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

/// A 64-bit number stored as two `u32` halves, so a token stays 4-byte
/// aligned and 24 bytes long.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Wide([u32; 2]);

impl Wide {
    pub fn new(value: u64) -> Wide {
        Wide([value as u32, (value >> 32) as u32])
    }

    pub fn get(self) -> u64 {
        u64::from(self.0[0]) | (u64::from(self.0[1]) << 32)
    }
}

impl std::fmt::Debug for Wide {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.get())
    }
}

/// Where a string token's value is: [`StrValue::RAW`] when it is the text
/// between the quotes as written, else an index into [`Lexed::strings`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StrValue(u32);

impl StrValue {
    pub const RAW: StrValue = StrValue(u32::MAX);
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenKind {
    Ident(Name),
    Kw(Keyword),
    /// A whole number; always fits in an `i64` (larger ones are reported).
    Int(Wide),
    /// A decimal literal; its text is the token's span (`12.50`).
    Decimal,
    /// A string literal; see [`string_value`] for its decoded value.
    Str(StrValue),
    Duration(Wide, DurationUnit),
    /// A route path; its text is the token's span: `/subscriptions/{id}`.
    RoutePath,
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
            TokenKind::Int(_) | TokenKind::Decimal => "a number".to_string(),
            TokenKind::Str(_) => "a string".to_string(),
            TokenKind::Duration(..) => "a duration".to_string(),
            TokenKind::RoutePath => "a route path".to_string(),
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

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
}

/// The lexer's result: tokens with balanced delimiters, its diagnostics, and
/// the offset from which later parser diagnostics are noise.
#[derive(Debug, Default)]
pub struct Lexed {
    pub tokens: Vec<Token>,
    /// Decoded values of the strings that had escapes (see [`StrValue`]).
    pub strings: Vec<String>,
    pub diagnostics: Vec<Diagnostic>,
    /// When delimiters could not be repaired with confidence, parser
    /// diagnostics at or after this offset follow from that one mistake and
    /// are dropped.
    pub quiet_from: Option<u32>,
    /// `(start, end)` of every `//` comment, in order: the parser never
    /// sees them; the formatter keeps them.
    pub comments: Vec<(u32, u32)>,
}

/// The value of a string token whose span is `span`.
pub fn string_value<'a>(
    text: &'a str,
    strings: &'a [String],
    value: StrValue,
    span: Span,
) -> &'a str {
    if value == StrValue::RAW {
        let inner = span.start.saturating_add(1) as usize..span.end.saturating_sub(1) as usize;
        return text.get(inner).unwrap_or("");
    }
    strings.get(value.0 as usize).map_or("", String::as_str)
}

/// The raw token classes logos recognises; payloads are read afterwards.
#[derive(Logos, Clone, Copy, Debug, PartialEq)]
enum Raw {
    /// Whitespace, dropped by the reader. Not a logos `skip`: logos skips
    /// by recursing once per skipped run, so a few thousand comment lines
    /// in a row overflowed the stack.
    #[regex(r"[ \t\r\n\f]+")]
    Space,
    /// A `//` comment, dropped. It runs to the end of its line, never
    /// further: greedy is intended. A carriage return ends it too, as it
    /// ends the line in an editor (a lone one is reported).
    #[regex(r"//[^\r\n]*", allow_greedy = true)]
    Comment,
    #[regex("[A-Za-z_][A-Za-z0-9_]*")]
    Word,
    #[token("var", |_| Keyword::Var)]
    #[token("mut", |_| Keyword::Mut)]
    #[token("if", |_| Keyword::If)]
    #[token("else", |_| Keyword::Else)]
    #[token("for", |_| Keyword::For)]
    #[token("return", |_| Keyword::Return)]
    #[token("reject", |_| Keyword::Reject)]
    #[token("emit", |_| Keyword::Emit)]
    #[token("attempt", |_| Keyword::Attempt)]
    #[token("match", |_| Keyword::Match)]
    #[token("propagate", |_| Keyword::Propagate)]
    #[token("create", |_| Keyword::Create)]
    #[token("update", |_| Keyword::Update)]
    #[token("delete", |_| Keyword::Delete)]
    #[token("true", |_| Keyword::True)]
    #[token("false", |_| Keyword::False)]
    #[token("none", |_| Keyword::None)]
    #[token("and", |_| Keyword::And)]
    #[token("or", |_| Keyword::Or)]
    #[token("not", |_| Keyword::Not)]
    Kw(Keyword),
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
    let mut lexer = Lexer::new(file, text);
    lexer.read_all();
    lexer.finish()
}

/// True when only spaces and tabs stand between the start of the line and `pos`.
pub fn starts_line(text: &str, pos: u32) -> bool {
    let bytes = text.as_bytes();
    let end = (pos as usize).min(bytes.len());
    for byte in bytes.iter().take(end).rev() {
        match byte {
            b'\n' => return true,
            // A lone carriage return ends a line (a CR LF's is read at its
            // line feed first).
            b'\r' => return true,
            b' ' | b'\t' | b'\x0c' => {}
            _ => return false,
        }
    }
    true
}

/// A small direct-mapped cache of the names of one file in front of the
/// shared interner: a file repeats few distinct names, and the interner's
/// big table costs a cache miss or two per lookup.
struct NameCache<'t> {
    slots: Vec<Option<(&'t str, Name)>>,
}

impl<'t> NameCache<'t> {
    fn new(text_len: usize) -> Self {
        let slots = (text_len / 16).clamp(64, 4096).next_power_of_two();
        NameCache {
            slots: vec![None; slots],
        }
    }

    fn get(&mut self, word: &'t str) -> Name {
        let index = word_hash(word.as_bytes()) & (self.slots.len() - 1);
        let Some(slot) = self.slots.get_mut(index) else {
            return Name::new(word);
        };
        match slot {
            Some((cached, name)) if *cached == word => *name,
            _ => {
                let name = Name::new(word);
                *slot = Some((word, name));
                name
            }
        }
    }
}

/// FxHash of a word, its high bits folded down.
fn word_hash(word: &[u8]) -> usize {
    let mut hash = word.len() as u64;
    for chunk in word.chunks(8) {
        let mut bytes = [0u8; 8];
        bytes.iter_mut().zip(chunk).for_each(|(b, c)| *b = *c);
        hash = (hash.rotate_left(5) ^ u64::from_le_bytes(bytes))
            .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    (hash >> 32) as usize
}

/// A token on its way through the stages, with what the reader knows
/// about its line (so no stage scans the text backwards).
#[derive(Clone, Copy)]
struct Lt {
    kind: TokenKind,
    span: Span,
    /// Only whitespace stands before it on its line.
    starts_line: bool,
    /// Offset of the start of its line.
    line_start: u32,
}

/// A run of invalid characters not yet reported.
#[derive(Clone, Copy)]
struct BadRun {
    start: u32,
    end: u32,
    starts_line: bool,
    line_start: u32,
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

/// An over-deep bracket region being skipped.
struct Skip {
    first: Span,
    depth: usize,
    end: u32,
}

/// The one-pass lexer. Stages, in order: [`Lexer::read_all`] (logos,
/// payloads, invalid characters), [`Lexer::merge`] (route paths),
/// [`Lexer::limit`] (deep type arguments), [`Lexer::balance`] (brackets).
struct Lexer<'t> {
    file: FileId,
    text: &'t str,
    strings: Vec<String>,
    /// Diagnostics of each stage, joined in stage order at the end.
    read_diags: Vec<Diagnostic>,
    limit_diags: Vec<Diagnostic>,
    balance_diags: Vec<Diagnostic>,
    // Reader.
    invalid_runs: usize,
    /// Lexical diagnostics dropped past [`MAX_READ_DIAGS`].
    dropped: usize,
    bad_run: Option<BadRun>,
    line_clean: bool,
    line_start: u32,
    names: NameCache<'t>,
    // Route path merging: the word `route`, the last two kinds it passed
    // on, and the path being built.
    route: Name,
    merged_last: [Option<TokenKind>; 2],
    route_path: Option<Lt>,
    // Type argument limit.
    angle_depth: usize,
    cut: Option<Span>,
    limited_last_ident: bool,
    // Balancing.
    out: Vec<Token>,
    stack: Vec<Open>,
    suspect: Option<Suspect>,
    skip: Option<Skip>,
    comments: Vec<(u32, u32)>,
}

impl<'t> Lexer<'t> {
    fn new(file: FileId, text: &'t str) -> Self {
        Lexer {
            file,
            text,
            strings: Vec::new(),
            read_diags: Vec::new(),
            limit_diags: Vec::new(),
            balance_diags: Vec::new(),
            invalid_runs: 0,
            dropped: 0,
            bad_run: None,
            line_clean: true,
            line_start: 0,
            names: NameCache::new(text.len()),
            route: Name::new("route"),
            merged_last: [None, None],
            route_path: None,
            angle_depth: 0,
            cut: None,
            limited_last_ident: false,
            // About one token per five bytes of source; untouched capacity
            // of a big allocation costs no memory.
            out: Vec::with_capacity(text.len() / 4 + 1),
            stack: Vec::new(),
            suspect: None,
            skip: None,
            comments: Vec::new(),
        }
    }

    fn span(&self, start: usize, end: usize) -> Span {
        Span::new(self.file, start as u32, end as u32)
    }

    fn read_all(&mut self) {
        let mut lexer = Raw::lexer(self.text);
        while let Some(result) = lexer.next() {
            let range = lexer.span();
            match result {
                // Whitespace never ended a run of invalid characters (it
                // used to be skipped inside logos), so it does not here.
                Ok(Raw::Space) => {
                    let slice = lexer.slice().as_bytes();
                    // A lone carriage return ends a line in every editor:
                    // it does here too (and is reported).
                    if let Some(nl) = slice.iter().rposition(|&b| b == b'\n' || b == b'\r') {
                        self.line_clean = true;
                        self.line_start = (range.start + nl + 1) as u32;
                    }
                    if slice.contains(&b'\r') {
                        self.hostile(range.start, lexer.slice());
                    }
                }
                Ok(Raw::Comment) => {
                    self.hostile(range.start, lexer.slice());
                    self.comments.push((range.start as u32, range.end as u32));
                }
                Ok(raw) => {
                    if self.bad_run.is_some() {
                        self.flush_bad_run();
                    }
                    let span = self.span(range.start, range.end);
                    if let Some(kind) = self.cook(raw, lexer.slice(), span) {
                        self.read(kind, span);
                    }
                }
                Err(()) => self.invalid(lexer.slice(), range),
            }
            if self.read_diags.len() > 2 * MAX_READ_DIAGS {
                self.dropped += self.read_diags.len() - MAX_READ_DIAGS;
                self.read_diags.truncate(MAX_READ_DIAGS);
            }
        }
        self.flush_bad_run();
        if self.read_diags.len() > MAX_READ_DIAGS {
            self.dropped += self.read_diags.len() - MAX_READ_DIAGS;
            self.read_diags.truncate(MAX_READ_DIAGS);
        }
        if self.dropped > 0 {
            // At the first one listed, so it is among those shown.
            let at = self.read_diags.first().map_or(self.span(0, 0), |d| d.span);
            self.read_diags.push(
                Diagnostic::error(
                    "syntax.too_many_mistakes",
                    at,
                    format!(
                        "{} more lexical mistakes in this file are not listed",
                        self.dropped
                    ),
                )
                .with_label("the first of them")
                .with_reason(format!(
                    "Jadpo lists at most {MAX_READ_DIAGS} lexical mistakes per file; a file with more is most likely not Jadpo source"
                ))
                .with_fix("fix the mistakes listed, or check that this is the file you meant"),
            );
        }
    }

    /// Reports each run of characters in `slice` (at byte `at`) that a
    /// reader would not see as the tool reads them: a carriage return that
    /// does not end a CRLF line end, a control character, a bidirectional
    /// control. Outside comments, strings and whitespace the reader refuses
    /// them as invalid characters already.
    fn hostile(&mut self, at: usize, slice: &str) {
        let bytes = slice.as_bytes();
        let suspect =
            |b: &u8| (*b < 0x20 && *b != b'\t' && *b != b'\n') || matches!(b, 0x7f | 0xc2 | 0xe2);
        if !bytes.iter().any(suspect) {
            return;
        }
        let mut run: Option<(usize, usize, char)> = None;
        for (i, c) in slice.char_indices() {
            let lone_cr = c == '\r' && self.text.as_bytes().get(at + i + 1) != Some(&b'\n');
            let bad = lone_cr || (c != '\r' && is_control_character(c));
            match (bad, &mut run) {
                (true, Some((_, end, _))) if *end == i => *end = i + c.len_utf8(),
                (true, _) => {
                    if let Some((s, e, first)) = run.take() {
                        self.read_diags
                            .push(control_character(self.span(at + s, at + e), first));
                    }
                    run = Some((i, i + c.len_utf8(), c));
                }
                (false, _) => {}
            }
        }
        if let Some((s, e, first)) = run {
            self.read_diags
                .push(control_character(self.span(at + s, at + e), first));
        }
    }

    /// Passes a read token on, noting its line.
    fn read(&mut self, kind: TokenKind, span: Span) {
        let tok = Lt {
            kind,
            span,
            starts_line: self.line_clean,
            line_start: self.line_start,
        };
        self.line_clean = false;
        self.merge(tok);
    }

    fn invalid(&mut self, slice: &str, range: std::ops::Range<usize>) {
        let span = self.span(range.start, range.end);
        if slice.contains('\0') {
            self.flush_bad_run();
            self.nul(span);
            self.read(TokenKind::Error, span);
            return;
        }
        match &mut self.bad_run {
            Some(run) if run.end == span.start => run.end = span.end,
            _ => {
                self.flush_bad_run();
                self.bad_run = Some(BadRun {
                    start: span.start,
                    end: span.end,
                    starts_line: self.line_clean,
                    line_start: self.line_start,
                });
                self.line_clean = false;
            }
        }
    }

    /// Reports a NUL byte; a run of them is one diagnostic (a binary file
    /// would otherwise print one frame per byte).
    fn nul(&mut self, span: Span) {
        match self.read_diags.last_mut() {
            Some(last) if last.code == "syntax.nul_byte" && last.span.end == span.start => {
                last.span.end = span.end;
                last.summary = "the file contains a run of NUL bytes".to_string();
                last.label = Some("NUL bytes here".to_string());
            }
            _ => self.read_diags.push(nul_byte(span)),
        }
    }

    /// Reports a run of invalid characters and leaves an error token in its
    /// place, so the parser does not report the same mistake again.
    fn flush_bad_run(&mut self) {
        let Some(run) = self.bad_run.take() else {
            return;
        };
        let span = Span::new(self.file, run.start, run.end);
        self.merge(Lt {
            kind: TokenKind::Error,
            span,
            starts_line: run.starts_line,
            line_start: run.line_start,
        });
        if self.invalid_runs >= MAX_INVALID_RUNS {
            return;
        }
        self.invalid_runs += 1;
        let shown: String = self
            .text
            .get(span.range())
            .unwrap_or("?")
            .chars()
            .take(16)
            .collect();
        self.read_diags.push(invalid_characters(&shown, span));
    }

    /// Turns a raw token into a token kind, reporting lexical mistakes.
    fn cook(&mut self, raw: Raw, slice: &'t str, span: Span) -> Option<TokenKind> {
        if raw == Raw::Word {
            return Some(TokenKind::Ident(self.names.get(slice)));
        }
        if matches!(raw, Raw::Str | Raw::UnterminatedStr) {
            self.hostile(span.start as usize, slice);
        }
        let diags = &mut self.read_diags;
        Some(match raw {
            Raw::Kw(kw) => TokenKind::Kw(kw),
            Raw::Int => TokenKind::Int(Wide::new(parse_int(slice, span, diags) as u64)),
            Raw::Decimal => TokenKind::Decimal,
            Raw::Duration => duration(slice, span, diags),
            Raw::BadNumber => {
                diags.push(bad_number(slice, span));
                TokenKind::Error
            }
            Raw::Str => {
                let inner = slice.get(1..slice.len().saturating_sub(1)).unwrap_or("");
                if !inner.contains(['\\', '\0']) {
                    return Some(TokenKind::Str(StrValue::RAW));
                }
                let value = decode_string(inner, span.start + 1, span, diags);
                TokenKind::Str(self.keep_string(value))
            }
            Raw::UnterminatedStr => {
                diags.push(unterminated(span));
                let inner = slice.get(1..).unwrap_or("");
                let inner = inner.strip_suffix('\\').unwrap_or(inner);
                let value = decode_string(inner, span.start + 1, span, diags);
                TokenKind::Str(self.keep_string(value))
            }
            Raw::Semicolon => {
                diags.push(semicolon(span));
                return None;
            }
            other => punct(other),
        })
    }

    fn keep_string(&mut self, value: String) -> StrValue {
        self.strings.push(value);
        StrValue((self.strings.len() - 1) as u32)
    }

    /// Stage 2: merges the adjacent tokens after `route METHOD` that start
    /// with `/` into one route path token.
    fn merge(&mut self, tok: Lt) {
        if let Some(path) = &mut self.route_path {
            if tok.span.start == path.span.end {
                path.span = path.span.to(tok.span);
                return;
            }
            if let Some(path) = self.route_path.take() {
                self.pass_merged(path);
            }
        }
        let route = self.route;
        let after_method = matches!(self.merged_last[0], Some(TokenKind::Ident(n)) if n == route)
            && matches!(self.merged_last[1], Some(TokenKind::Ident(_)));
        if after_method && tok.kind == TokenKind::Slash {
            self.route_path = Some(Lt {
                kind: TokenKind::RoutePath,
                ..tok
            });
            return;
        }
        self.pass_merged(tok);
    }

    fn pass_merged(&mut self, tok: Lt) {
        self.merged_last = [self.merged_last[1], Some(tok.kind)];
        self.limit(tok);
    }

    /// Stage 3: cuts off `List<List<...` nested deeper than [`MAX_DEPTH`]
    /// on one line: a `<` right after a name opens a level, `>` closes one.
    /// The rest of the line becomes one error token. (Comparisons also
    /// count, but the count restarts on every line, so only a line of
    /// hundreds of them could trip it.)
    fn limit(&mut self, tok: Lt) {
        if let Some(span) = self.cut {
            if !tok.starts_line {
                self.cut = Some(span.to(tok.span));
                return;
            }
            self.cut = None;
            self.pass_limited(Lt {
                kind: TokenKind::Error,
                span,
                starts_line: false,
                line_start: tok.line_start,
            });
        }
        if tok.starts_line {
            self.angle_depth = 0;
        }
        match tok.kind {
            TokenKind::Lt if self.limited_last_ident => self.angle_depth += 1,
            TokenKind::Gt => self.angle_depth = self.angle_depth.saturating_sub(1),
            _ => {}
        }
        if self.angle_depth > MAX_DEPTH {
            self.limit_diags.push(too_deep(tok.span));
            self.cut = Some(tok.span);
            self.angle_depth = 0;
            return;
        }
        self.pass_limited(tok);
    }

    fn pass_limited(&mut self, tok: Lt) {
        self.limited_last_ident = matches!(tok.kind, TokenKind::Ident(_));
        self.balance(tok);
    }

    /// Stage 4: balances delimiters and cuts off over-deep nesting (see the
    /// module docs).
    fn balance(&mut self, tok: Lt) {
        if let Some(skip) = &mut self.skip {
            skip.end = tok.span.end;
            if closer_of(tok.kind).is_some() {
                skip.depth += 1;
            } else if is_closer(tok.kind) {
                skip.depth -= 1;
                if skip.depth == 0 {
                    self.end_skip();
                }
            }
            return;
        }
        let token = Token {
            kind: tok.kind,
            span: tok.span,
        };
        if let Some(closer) = closer_of(tok.kind) {
            if self.stack.len() >= MAX_DEPTH {
                self.skip = Some(Skip {
                    first: tok.span,
                    depth: 1,
                    end: tok.span.end,
                });
                return;
            }
            self.stack.push(Open {
                closer,
                span: tok.span,
                indent: self.indent(tok.line_start),
            });
            self.out.push(token);
        } else if is_closer(tok.kind) {
            self.close(token, tok);
        } else {
            self.out.push(token);
        }
    }

    /// Replaces the skipped region with one error token.
    fn end_skip(&mut self) {
        if let Some(skip) = self.skip.take() {
            self.balance_diags.push(too_deep(skip.first));
            self.out.push(Token {
                kind: TokenKind::Error,
                span: Span::new(self.file, skip.first.start, skip.end),
            });
        }
    }

    /// Width of the indentation of the line starting at `line_start`.
    fn indent(&self, line_start: u32) -> usize {
        let line = self.text.get(line_start as usize..).unwrap_or("");
        line.bytes()
            .take_while(|&b| b == b' ' || b == b'\t')
            .count()
    }

    fn close(&mut self, tok: Token, meta: Lt) {
        let Some(pos) = self.stack.iter().rposition(|o| o.closer == tok.kind) else {
            match self.stack.pop() {
                // Likely a typo: read it as the closer the open bracket needs.
                Some(open) => {
                    self.balance_diags.push(mismatched_close(&open, &tok));
                    self.out.push(Token {
                        kind: open.closer,
                        span: tok.span,
                    });
                }
                None => self.balance_diags.push(unmatched_close(&tok)),
            }
            return;
        };
        // Every opener above the match was never closed.
        while self.stack.len() > pos + 1 {
            if let Some(open) = self.stack.pop() {
                self.balance_diags.push(unclosed(&open, self.file));
                self.push_synthetic(open.closer, tok.span.start);
            }
        }
        if let Some(open) = self.stack.pop() {
            self.note_suspect(&open, &tok, meta);
        }
        self.out.push(tok);
    }

    fn note_suspect(&mut self, open: &Open, tok: &Token, meta: Lt) {
        if self.suspect.is_some() || tok.kind != TokenKind::RBrace {
            return;
        }
        if meta.starts_line && self.indent(meta.line_start) < open.indent {
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

    /// Flushes every stage and closes what is still open.
    fn finish(mut self) -> Lexed {
        if let Some(path) = self.route_path.take() {
            self.pass_merged(path);
        }
        if let Some(span) = self.cut.take() {
            self.pass_limited(Lt {
                kind: TokenKind::Error,
                span,
                starts_line: false,
                line_start: 0,
            });
        }
        let quiet_from = if self.skip.is_some() {
            // The over-deep region ran to the end of the file: the unclosed
            // openers are part of that one mistake.
            self.end_skip();
            self.close_silently();
            None
        } else {
            self.close_at_end()
        };
        let mut diagnostics = self.read_diags;
        diagnostics.append(&mut self.limit_diags);
        diagnostics.append(&mut self.balance_diags);
        Lexed {
            tokens: self.out,
            strings: self.strings,
            diagnostics,
            quiet_from,
            comments: self.comments,
        }
    }

    /// Closes what is still open at the end of the file; returns the offset
    /// after which parser diagnostics are noise, if any.
    fn close_at_end(&mut self) -> Option<u32> {
        if self.stack.is_empty() {
            return None;
        }
        let one_brace = self.stack.len() == 1
            && self.stack.first().map(|o| o.closer) == Some(TokenKind::RBrace);
        if let (true, Some(suspect)) = (one_brace, self.suspect.take()) {
            // The mis-indented `}` most likely closes the outer block; the
            // inner block it was matched with is the one missing its `}`.
            let open = Open {
                closer: TokenKind::RBrace,
                span: suspect.opener,
                indent: 0,
            };
            self.balance_diags.push(unclosed(&open, self.file));
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
            self.balance_diags.push(unclosed(&open, self.file));
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
}

fn closer_of(kind: TokenKind) -> Option<TokenKind> {
    match kind {
        TokenKind::LParen => Some(TokenKind::RParen),
        TokenKind::LBrace => Some(TokenKind::RBrace),
        TokenKind::LBracket => Some(TokenKind::RBracket),
        _ => None,
    }
}

fn is_closer(kind: TokenKind) -> bool {
    matches!(
        kind,
        TokenKind::RParen | TokenKind::RBrace | TokenKind::RBracket
    )
}

fn invalid_characters(shown: &str, span: Span) -> Diagnostic {
    let what = if shown.chars().count() == 1 {
        format!("the character `{}`", shown.escape_debug())
    } else {
        format!("the characters `{}`", shown.escape_debug())
    };
    Diagnostic::error(
        "syntax.invalid_character",
        span,
        format!("{what} cannot appear in Jadpo source"),
    )
    .with_label("not part of the language")
    .with_reason("outside strings and comments, Jadpo uses only letters, digits, `_`, whitespace and its operators and brackets")
    .with_fix("remove it, or put it inside a string or a `//` comment")
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
    TokenKind::Duration(Wide::new(amount), unit)
}

/// A control character other than the tab and the line end (NUL has its
/// own code), DEL, a C1 control, or a bidirectional control that reorders
/// what follows it.
fn is_control_character(c: char) -> bool {
    (c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\0' | '\x0c'))
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `syntax.control_character`: text that shows otherwise than it reads.
fn control_character(span: Span, first: char) -> Diagnostic {
    let code = format!("U+{:04X}", first as u32);
    let (summary, label, reason) = match first {
        '\r' => (
            "a carriage return that does not end a line".to_string(),
            "a lone carriage return".to_string(),
            "editors show what follows it on a new line; a comment before it would hide that code from a reader, so Jadpo ends the line there too and refuses the file until it is fixed".to_string(),
        ),
        '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => (
            format!("a bidirectional control character ({code}) reorders how this text shows"),
            "an invisible character that reorders the text after it".to_string(),
            "the code a reader sees is not the code Jadpo reads (\"Trojan Source\"); no source needs one outside a string's escape".to_string(),
        ),
        _ => (
            format!("a control character ({code}) in the source"),
            "an invisible control character".to_string(),
            "a terminal or editor obeys it instead of showing it, so the text shows otherwise than it reads".to_string(),
        ),
    };
    let escape = format!("\\u{{{:x}}}", first as u32);
    Diagnostic::error("syntax.control_character", span, summary)
        .with_label(label)
        .with_reason(reason)
        .with_fix(if first == '\r' {
            "end lines with a line feed (or CR LF), and remove the lone carriage return".to_string()
        } else {
            format!("remove it; in a string, write it as the escape `{escape}`")
        })
}

fn nul_byte(span: Span) -> Diagnostic {
    Diagnostic::error("syntax.nul_byte", span, "the file contains a NUL byte")
        .with_label("NUL byte here")
        .with_reason("a NUL byte is never valid in Jadpo source; it usually means a binary file or a broken encoding")
        .with_fix("remove the byte, or write `\\u{0}` inside a string if the value is meant")
}

fn number_too_large(span: Span) -> Diagnostic {
    Diagnostic::error("syntax.number_too_large", span, "this number is too large")
        .with_label("does not fit in 64 bits")
        .with_reason("whole numbers in Jadpo are 64-bit: at most 9223372036854775807")
        .with_fix("use a smaller number")
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
            Some((_, 'u')) => match unicode_escape(&mut chars, inner.len()) {
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

/// Reads `{hex}` after `\u`; on failure returns the offset where the bad
/// escape ends (at most `len`, the body's length, when the body ends first).
fn unicode_escape(
    chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
    len: usize,
) -> Result<char, usize> {
    let mut end = chars.peek().map_or(len, |(i, _)| *i);
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
