//! The one place where chumsky's errors become our diagnostics: "found X,
//! expected Y" turns into a summary in the author's terms, the smallest span,
//! a reason and a fix. Targeted mistakes (missing `-> R`, `=` for `==`, a
//! stray `else`, over-deep nesting) arrive as custom tags from the grammar.

use super::common::{tag, Error, MAX_CHAIN};
use crate::diag::{Diagnostic, Edit};
use crate::lexer::{starts_line, Token, TokenKind, MAX_DEPTH};
use crate::span::Span;
use chumsky::error::{RichPattern, RichReason};

/// Converts the parser's errors, dropping those that repeat a lexer
/// diagnostic (`quiet_from`, error tokens) or an earlier error at the same place.
pub fn convert_all(
    errors: Vec<Error<'_>>,
    tokens: &[Token],
    text: &str,
    quiet_from: Option<u32>,
) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = Vec::new();
    for error in errors {
        if quiet_from.is_some_and(|q| error.span().start >= q) {
            continue;
        }
        // An error token was diagnosed by the lexer; what fails right at it
        // or right after it follows from that mistake.
        let after_error =
            previous_token(tokens, error.span().start).is_some_and(|t| t.kind == TokenKind::Error);
        if error.found() == Some(&TokenKind::Error) || after_error {
            continue;
        }
        let diag = convert(&error, tokens, text);
        let repeated = out
            .iter()
            .any(|d| d.span.start == diag.span.start && d.code == diag.code);
        if !repeated {
            out.push(diag);
        }
    }
    out
}

fn convert(error: &Error<'_>, tokens: &[Token], text: &str) -> Diagnostic {
    let span = *error.span();
    match error.reason() {
        RichReason::Custom(message) => custom(message, span),
        RichReason::ExpectedFound { expected, found } => {
            let expected = describe_expected(expected);
            expected_found(&expected, found.as_deref(), span, tokens, text)
        }
    }
}

fn custom(message: &str, span: Span) -> Diagnostic {
    match message {
        tag::MISSING_RETURN | tag::MISSING_RETURN_FUNCTION => missing_return(message, span),
        tag::ASSIGN_IN_CONDITION => Diagnostic::error(
            "syntax.assign_in_condition",
            span,
            "a condition compares with `==`, not `=`",
        )
        .with_label("this `=` assigns")
        .with_reason("`=` gives a variable a new value; a condition needs a comparison")
        .with_edit_fix(
            "write `==` to compare",
            vec![Edit {
                span,
                replacement: "==".to_string(),
            }],
        ),
        tag::TWO_STATEMENTS => two_statements(span),
        tag::STRAY_ELSE => Diagnostic::error(
            "syntax.stray_else",
            span,
            "this `else` has no `if` before it",
        )
        .with_label("no `if` ends right before this `else`")
        .with_reason("`else` must follow the `}` of an `if` block directly: `if cond { } else { }`")
        .with_fix("move the `else` right after the `}` of its `if`, or remove it"),
        tag::TOO_DEEP => Diagnostic::error(
            "syntax.too_deep",
            span,
            format!("this expression nests more than {MAX_DEPTH} levels deep"),
        )
        .with_label("too many operators in one chain")
        .with_reason(format!(
            "Jadpo reads at most {MAX_DEPTH} chained operators or nested parts in one expression"
        ))
        .with_fix("split the expression into several `var`s"),
        tag::TOO_MANY_ELSE_IFS => Diagnostic::error(
            "syntax.too_deep",
            span,
            format!("this `if` has more than {MAX_CHAIN} `else if` branches"),
        )
        .with_label("one `else if` too many")
        .with_reason(format!(
            "Jadpo reads at most {MAX_CHAIN} `else if` branches after one `if`"
        ))
        .with_fix("use a `match`, or split the chain over several functions"),
        other => Diagnostic::error("syntax.expected", span, other.to_string())
            .with_reason("this part could not be read"),
    }
}

const CONTINUATIONS: [&str; 3] = ["an operator", "`.`", "`(`"];

fn missing_return(message: &str, span: Span) -> Diagnostic {
    let what = if message == tag::MISSING_RETURN {
        "action"
    } else {
        "function"
    };
    Diagnostic::error(
        "syntax.missing_return",
        span,
        format!("expected `->` and the return type after the {what}'s parameters"),
    )
    .with_label("the body starts here, but the header has no `-> Type`")
    .with_reason(format!(
        "every {what} declares what it returns; one that returns nothing declares `-> Unit`"
    ))
    .with_edit_fix(
        format!("add `-> Unit` if the {what} returns nothing"),
        vec![Edit {
            span: Span::new(span.file, span.start, span.start),
            replacement: "-> Unit ".to_string(),
        }],
    )
}

/// The expected patterns in the author's words, labels first, without repeats.
fn describe_expected(expected: &[RichPattern<'_, TokenKind>]) -> Vec<String> {
    let mut labels = Vec::new();
    let mut tokens = Vec::new();
    for pattern in expected {
        let (text, is_label) = match pattern {
            RichPattern::Label(label) => (label.to_string(), true),
            RichPattern::Token(tok) => (tok.describe(), false),
            RichPattern::EndOfInput => ("the end of the file".to_string(), false),
            _ => continue,
        };
        let list = if is_label { &mut labels } else { &mut tokens };
        if !list.contains(&text) {
            list.push(text);
        }
    }
    labels.extend(tokens);
    // Ways to continue an expression are noise when a clear end was expected.
    let structural = ["`,`", "`)`", "`]`", "`}`", "`{`"];
    if labels.iter().any(|l| structural.contains(&l.as_str())) {
        labels.retain(|l| !CONTINUATIONS.contains(&l.as_str()));
    }
    if labels.len() > 5 {
        labels.truncate(5);
    }
    labels
}

/// "a, b or c"
fn one_of(items: &[String]) -> String {
    match items {
        [] => "something else".to_string(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {}", init.join(", "), last),
    }
}

fn previous_token(tokens: &[Token], at: u32) -> Option<&Token> {
    let index = tokens.partition_point(|t| t.span.start < at);
    index.checked_sub(1).and_then(|i| tokens.get(i))
}

fn describe_prev(tok: &Token) -> String {
    match &tok.kind {
        TokenKind::Ident(name) => format!("`{name}`"),
        other => other.describe(),
    }
}

fn expected_found(
    expected: &[String],
    found: Option<&TokenKind>,
    span: Span,
    tokens: &[Token],
    text: &str,
) -> Diagnostic {
    let found_text = found.map_or("the end of the file".to_string(), TokenKind::describe);
    if expected.iter().any(|e| e == tag::END_OF_LINE) {
        return statement_continues(&found_text, span);
    }
    let prev = previous_token(tokens, span.start);
    let wanted = one_of(expected);
    let summary = match prev {
        Some(prev) => format!("expected {wanted} after {}", describe_prev(prev)),
        None => format!("expected {wanted}"),
    };
    // When the unexpected token is on a later line, point at the end of the
    // line where the missing part belongs.
    let on_later_line = found.is_none() || starts_line(text, span.start);
    let (span, label) = match prev {
        Some(prev) if on_later_line => (prev.span, format!("expected {wanted} after this")),
        _ => (span, format!("found {found_text}")),
    };
    let first = expected.first().cloned().unwrap_or_else(|| wanted.clone());
    let reason = if on_later_line {
        format!("the line ends here without {wanted}, and what follows cannot complete it")
    } else {
        format!("{found_text} cannot stand here; Jadpo needs {wanted} at this point")
    };
    Diagnostic::error("syntax.expected", span, summary)
        .with_label(label)
        .with_reason(reason)
        .with_fix(format!("write {first} here"))
}

/// `var a = 1 var b = 2`: a statement ends at the end of its line.
fn two_statements(span: Span) -> Diagnostic {
    Diagnostic::error(
        "syntax.two_statements",
        span,
        "two statements on one line: a second statement starts here",
    )
    .with_label("a new statement starts here")
    .with_reason("a statement ends at the end of its line; there are no semicolons to separate two on one line")
    .with_fix("put this statement on its own line")
}

fn statement_continues(found_text: &str, span: Span) -> Diagnostic {
    Diagnostic::error(
        "syntax.expected",
        span,
        format!("expected the end of the statement, found {found_text}"),
    )
    .with_label("the statement should end before this")
    .with_reason("a statement ends at the end of its line; this does not continue it with an operator, `.` or `(`")
    .with_fix("put it on its own line, or join it to the statement with an operator")
}
