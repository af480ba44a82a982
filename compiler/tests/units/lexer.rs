//! Moved from `src/lexer.rs`.

use jadpo_compiler::ast::DurationUnit;
use jadpo_compiler::intern::Name;
use jadpo_compiler::lexer::*;
use jadpo_compiler::span::FileId;

#[test]
fn starts_line_looks_back_over_blanks_only() {
    let text = "a\n  \tb c";
    assert!(starts_line(text, 0));
    assert!(starts_line(text, 2));
    assert!(starts_line(text, 5), "after spaces and a tab");
    assert!(!starts_line(text, 7), "after `b `");
    assert!(!starts_line(text, 1), "right after `a`");
    assert!(!starts_line(text, 99), "past the end: after `c`");
    assert!(starts_line("   ", 2), "blanks from the start of the text");
}

fn kinds(text: &str) -> Vec<TokenKind> {
    lex(FileId(0), text)
        .tokens
        .into_iter()
        .map(|t| t.kind)
        .collect()
}

#[test]
fn a_token_is_small() {
    assert_eq!(std::mem::size_of::<Token>(), 24);
}

#[test]
fn durations_and_numbers() {
    let wide = |v: u64| Wide::new(v);
    assert_eq!(
        kinds("500ms 10s 5m 24h 7d 12 1.5"),
        vec![
            TokenKind::Duration(wide(500), DurationUnit::Ms),
            TokenKind::Duration(wide(10), DurationUnit::S),
            TokenKind::Duration(wide(5), DurationUnit::M),
            TokenKind::Duration(wide(24), DurationUnit::H),
            TokenKind::Duration(wide(7), DurationUnit::D),
            TokenKind::Int(wide(12)),
            TokenKind::Decimal,
        ]
    );
    assert_eq!(
        kinds("9223372036854775807"),
        vec![TokenKind::Int(wide(i64::MAX as u64))]
    );
}

#[test]
fn keywords_and_names() {
    assert_eq!(
        kinds("var variable not_x or"),
        vec![
            TokenKind::Kw(Keyword::Var),
            TokenKind::Ident(Name::new("variable")),
            TokenKind::Ident(Name::new("not_x")),
            TokenKind::Kw(Keyword::Or),
        ]
    );
}

#[test]
fn route_path_is_one_token() {
    let text = "route POST /subscriptions/{id} {\n}";
    let tokens = lex(FileId(0), text).tokens;
    assert_eq!(tokens[2].kind, TokenKind::RoutePath);
    assert_eq!(&text[tokens[2].span.range()], "/subscriptions/{id}");
    assert_eq!(tokens[3].kind, TokenKind::LBrace);
    assert_eq!(tokens.len(), 5);
}

#[test]
fn escapes_are_decoded() {
    let text = r#""a\"b\\c\n\t\u{1F600}" "plain""#;
    let lexed = lex(FileId(0), text);
    let values: Vec<&str> = lexed
        .tokens
        .iter()
        .map(|t| match t.kind {
            TokenKind::Str(v) => string_value(text, &lexed.strings, v, t.span),
            _ => "?",
        })
        .collect();
    assert_eq!(values, vec!["a\"b\\c\n\t\u{1F600}", "plain"]);
}

#[test]
fn many_comment_lines_in_a_row_do_not_overflow_the_stack() {
    // Regression (found by tests/hostile/mod.rs): comments and whitespace
    // were logos skips, which recurse once per skipped run, and ~8,000
    // comment lines overflowed the stack of a debug build.
    let text = format!(
        "{}x // last\n",
        "// a comment line\n   \t\n".repeat(200_000)
    );
    assert_eq!(kinds(&text), vec![TokenKind::Ident(Name::new("x"))]);
}

#[test]
fn one_long_line_of_brackets_lexes_in_linear_time() {
    // Each `(` used to look back for the start of its line.
    let text = "f(x)".repeat(500_000);
    let start = std::time::Instant::now();
    assert_eq!(lex(FileId(0), &text).tokens.len(), 2_000_000);
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
}
