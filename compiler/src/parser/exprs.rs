//! Grammar for expressions: literals, paths, constructions, calls, operators
//! by precedence (`or` < `and` < `not` < comparisons < `+ -` < `* /` <
//! unary `-` < postfix), `attempt`, `match`, and the writes `create`,
//! `update` and `delete`.

use super::common::{
    any_word, ident, kw, path, punct, skip_line, tag, word, Error, Extra, Src, Tokens, MAX_CHAIN,
};
use super::types::P;
use crate::ast::{
    BinOp, Block, Expr, ExprKind, FieldInit, Ident, MatchArm, Path, Pattern, RejectExpr, UnOp,
    WhereClause,
};
use crate::lexer::{Keyword, TokenKind};
use crate::span::Span;
use chumsky::prelude::*;

fn error_expr(span: Span) -> Expr {
    Expr {
        kind: ExprKind::Error,
        span,
    }
}

/// `{ field: value ... }` with optional commas; a broken field skips its line.
pub fn field_inits<'src, I: Tokens<'src>>(
    src: Src<'src>,
    expr: P<'src, I, Expr>,
) -> impl Parser<'src, I, Vec<FieldInit>, Extra<'src>> + Clone {
    let field = any_word()
        .then_ignore(just(TokenKind::Colon))
        .then(expr)
        .map_with(|(name, value), e| {
            Some(FieldInit {
                name,
                value,
                span: e.span(),
            })
        })
        .labelled("a field and its value");
    field
        .recover_with(via_parser(skip_line(src).to(None)))
        .then_ignore(just(TokenKind::Comma).or_not())
        .repeated()
        .collect::<Vec<_>>()
        .map(|fields| fields.into_iter().flatten().collect::<Vec<_>>())
        .delimited_by(just(TokenKind::LBrace), just(TokenKind::RBrace))
}

/// `reject F [{ field: value }]`
pub fn reject<'src, I: Tokens<'src>>(
    src: Src<'src>,
    expr: P<'src, I, Expr>,
) -> impl Parser<'src, I, RejectExpr, Extra<'src>> + Clone {
    kw(Keyword::Reject)
        .ignore_then(path().labelled("the failure to reject"))
        .then(field_inits(src, expr).or_not())
        .map_with(|(failure, fields), e| RejectExpr {
            failure,
            fields,
            span: e.span(),
        })
}

fn starts_upper(path: &Path) -> bool {
    path.last().is_some_and(|last| {
        last.name
            .as_str()
            .starts_with(|c: char| c.is_ascii_uppercase())
    })
}

/// Folds `lhs (op rhs)*` to the left, refusing chains too long to nest.
fn fold_binary(
    lhs: Expr,
    rest: Vec<(BinOp, Span, Expr)>,
    emitter: &mut chumsky::input::Emitter<super::common::Error<'_>>,
) -> Expr {
    if rest.len() > MAX_CHAIN {
        let at = rest.get(MAX_CHAIN).map_or(lhs.span, |(_, span, _)| *span);
        emitter.emit(Error::custom(at, tag::TOO_DEEP));
        let end = rest.last().map_or(lhs.span, |(_, _, rhs)| rhs.span);
        return error_expr(lhs.span.to(end));
    }
    rest.into_iter().fold(lhs, |lhs, (op, _, rhs)| Expr {
        span: lhs.span.to(rhs.span),
        kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
    })
}

/// Folds prefix operators onto their operand, refusing chains too long to nest.
fn fold_prefix(
    ops: Vec<(Span, Option<UnOp>)>,
    operand: Expr,
    emitter: &mut chumsky::input::Emitter<super::common::Error<'_>>,
) -> Expr {
    if ops.len() > MAX_CHAIN {
        let at = ops.get(MAX_CHAIN).map_or(operand.span, |(span, _)| *span);
        emitter.emit(Error::custom(at, tag::TOO_DEEP));
        let start = ops.first().map_or(operand.span, |(span, _)| *span);
        return error_expr(start.to(operand.span));
    }
    ops.into_iter()
        .rev()
        .fold(operand, |inner, (span, op)| Expr {
            span: span.to(inner.span),
            kind: match op {
                Some(op) => ExprKind::Unary(op, Box::new(inner)),
                None => ExprKind::Attempt(Box::new(inner)),
            },
        })
}

enum Postfix {
    Field(Ident),
    Call(Vec<Expr>, Span),
}

fn binary_ops<'src, I: Tokens<'src>>(
    ops: &'static [(TokenKind, BinOp)],
) -> impl Parser<'src, I, (BinOp, Span), Extra<'src>> + Clone {
    any().try_map(move |tok: TokenKind, span: Span| {
        ops.iter()
            .find(|(t, _)| *t == tok)
            .map(|(_, op)| (*op, span))
            .ok_or_else(|| {
                <super::common::Error<'src> as chumsky::error::LabelError<
                        'src,
                        I,
                        &'static str,
                    >>::expected_found(
                        ["an operator"],
                        Some(chumsky::util::MaybeRef::Val(tok)),
                        span,
                    )
            })
    })
}

/// One precedence level: `lower (op lower)*`, folded left.
fn level<'src, I: Tokens<'src>>(
    lower: P<'src, I, Expr>,
    ops: &'static [(TokenKind, BinOp)],
    repeat: bool,
) -> P<'src, I, Expr> {
    let tail = binary_ops(ops).then(lower.clone());
    let rest = if repeat {
        tail.map(|((op, span), rhs)| (op, span, rhs))
            .repeated()
            .collect::<Vec<_>>()
            .boxed()
    } else {
        tail.map(|((op, span), rhs)| vec![(op, span, rhs)])
            .or_not()
            .map(Option::unwrap_or_default)
            .boxed()
    };
    lower
        .then(rest)
        .validate(|(lhs, rest), _, emitter| fold_binary(lhs, rest, emitter))
        .boxed()
}

const OR: &[(TokenKind, BinOp)] = &[(TokenKind::Kw(Keyword::Or), BinOp::Or)];
const AND: &[(TokenKind, BinOp)] = &[(TokenKind::Kw(Keyword::And), BinOp::And)];
const COMPARE: &[(TokenKind, BinOp)] = &[
    (TokenKind::EqEq, BinOp::Eq),
    (TokenKind::NotEq, BinOp::Ne),
    (TokenKind::Le, BinOp::Le),
    (TokenKind::Ge, BinOp::Ge),
    (TokenKind::Lt, BinOp::Lt),
    (TokenKind::Gt, BinOp::Gt),
];
const SUM: &[(TokenKind, BinOp)] = &[
    (TokenKind::Plus, BinOp::Add),
    (TokenKind::Minus, BinOp::Sub),
];
const PRODUCT: &[(TokenKind, BinOp)] = &[
    (TokenKind::Star, BinOp::Mul),
    (TokenKind::Slash, BinOp::Div),
];

/// Prefix operators `ops` (each mapped by `op`) before `operand`.
fn prefixed<'src, I: Tokens<'src>>(
    prefix: impl Parser<'src, I, (Span, Option<UnOp>), Extra<'src>> + Clone + 'src,
    operand: P<'src, I, Expr>,
) -> P<'src, I, Expr> {
    prefix
        .repeated()
        .collect::<Vec<_>>()
        .then(operand)
        .validate(|(ops, operand), _, emitter| fold_prefix(ops, operand, emitter))
        .boxed()
}

/// The full expression grammar; `block` is the statement block parser.
pub fn expr<'src, I: Tokens<'src>>(
    src: Src<'src>,
    expr: P<'src, I, Expr>,
    block: P<'src, I, Block>,
) -> P<'src, I, Expr> {
    let atom = atom(src, expr.clone(), block);
    let postfix = postfix(expr.clone(), atom);
    let neg = prefixed(
        punct(TokenKind::Minus).map(|s| (s, Some(UnOp::Neg))),
        postfix,
    );
    let product = level(neg, PRODUCT, true);
    let sum = level(product, SUM, true);
    let compare = level(sum, COMPARE, false);
    let not = prefixed(kw(Keyword::Not).map(|s| (s, Some(UnOp::Not))), compare);
    let and = level(not, AND, true);
    let or = level(and, OR, true);
    prefixed(kw(Keyword::Attempt).map(|s| (s, None)), or)
        .labelled("an expression")
        .boxed()
}

fn postfix<'src, I: Tokens<'src>>(
    expr: P<'src, I, Expr>,
    atom: P<'src, I, Expr>,
) -> P<'src, I, Expr> {
    let args = expr
        .separated_by(just(TokenKind::Comma))
        .allow_trailing()
        .collect::<Vec<_>>()
        .delimited_by(just(TokenKind::LParen), just(TokenKind::RParen))
        .recover_with(via_parser(nested_delimiters(
            TokenKind::LParen,
            TokenKind::RParen,
            [
                (TokenKind::LBrace, TokenKind::RBrace),
                (TokenKind::LBracket, TokenKind::RBracket),
            ],
            |span| vec![error_expr(span)],
        )))
        .map_with(|args, e| Postfix::Call(args, e.span()));
    let field = just(TokenKind::Dot)
        .ignore_then(any_word())
        .map(Postfix::Field);
    atom.then(choice((args, field)).repeated().collect::<Vec<_>>())
        .validate(|(atom, ops), _, emitter| {
            if ops.len() > MAX_CHAIN {
                emitter.emit(Error::custom(atom.span, tag::TOO_DEEP));
                return error_expr(atom.span);
            }
            ops.into_iter().fold(atom, |inner, op| match op {
                Postfix::Field(name) => Expr {
                    span: inner.span.to(name.span),
                    kind: ExprKind::Field(Box::new(inner), name),
                },
                Postfix::Call(args, span) => Expr {
                    span: inner.span.to(span),
                    kind: ExprKind::Call {
                        callee: Box::new(inner),
                        args,
                    },
                },
            })
        })
        .boxed()
}

fn atom<'src, I: Tokens<'src>>(
    src: Src<'src>,
    expr: P<'src, I, Expr>,
    block: P<'src, I, Block>,
) -> P<'src, I, Expr> {
    let literal = select! {
        TokenKind::Int(v) => ExprKind::Int(v),
        TokenKind::Decimal(n) => ExprKind::Decimal(n.as_str().to_string()),
        TokenKind::Str(s) => ExprKind::Str(s),
        TokenKind::Duration(amount, unit) => ExprKind::Duration(amount, unit),
        TokenKind::Kw(Keyword::True) => ExprKind::Bool(true),
        TokenKind::Kw(Keyword::False) => ExprKind::Bool(false),
        TokenKind::Kw(Keyword::None) => ExprKind::None,
        TokenKind::Error => ExprKind::Error,
    }
    .labelled("a value");
    let paren = expr
        .clone()
        .map(|e| e.kind)
        .delimited_by(just(TokenKind::LParen), just(TokenKind::RParen))
        .recover_with(via_parser(nested_delimiters(
            TokenKind::LParen,
            TokenKind::RParen,
            [
                (TokenKind::LBrace, TokenKind::RBrace),
                (TokenKind::LBracket, TokenKind::RBracket),
            ],
            |_| ExprKind::Error,
        )));
    let list = expr
        .clone()
        .separated_by(just(TokenKind::Comma))
        .allow_trailing()
        .collect::<Vec<_>>()
        .delimited_by(just(TokenKind::LBracket), just(TokenKind::RBracket))
        .map(ExprKind::List)
        .recover_with(via_parser(nested_delimiters(
            TokenKind::LBracket,
            TokenKind::RBracket,
            [
                (TokenKind::LParen, TokenKind::RParen),
                (TokenKind::LBrace, TokenKind::RBrace),
            ],
            |_| ExprKind::Error,
        )));
    let fields = field_inits(src, expr.clone()).boxed();
    let construct = path()
        .filter(starts_upper)
        .then(fields.clone())
        .map(|(ty, fields)| ExprKind::Construct { ty, fields });
    let plain_path = path().map(ExprKind::Path);
    let kind = choice((
        literal,
        paren,
        list,
        match_expr(src, expr.clone(), block),
        writes(src, expr.clone(), fields),
        construct,
        plain_path,
    ));
    kind.map_with(|kind, e| Expr {
        kind,
        span: e.span(),
    })
    .boxed()
}

fn match_expr<'src, I: Tokens<'src>>(
    src: Src<'src>,
    expr: P<'src, I, Expr>,
    block: P<'src, I, Block>,
) -> impl Parser<'src, I, ExprKind, Extra<'src>> + Clone {
    let success = word("success")
        .ignore_then(ident().delimited_by(just(TokenKind::LParen), just(TokenKind::RParen)))
        .map(Pattern::Success);
    let failure = word("failure")
        .ignore_then(path().labelled("the failure to match"))
        .map(Pattern::Failure);
    let pattern = choice((success, failure))
        .map_with(|p, e| (p, e.span()))
        .labelled("`success(...)` or `failure F`");
    let body = choice((
        reject(src, expr.clone()).map(ExprKind::Reject),
        kw(Keyword::Propagate).to(ExprKind::Propagate),
        block.map(ExprKind::Block),
    ))
    .map_with(|kind, e| Expr {
        kind,
        span: e.span(),
    })
    .or(expr.clone());
    let arm = pattern
        .then_ignore(just(TokenKind::FatArrow))
        .then(body)
        .map_with(|((pattern, pattern_span), body), e| {
            Some(MatchArm {
                pattern,
                pattern_span,
                body,
                span: e.span(),
            })
        })
        .labelled("a match arm")
        .recover_with(via_parser(skip_line(src).to(None)));
    kw(Keyword::Match)
        .ignore_then(expr)
        .then(
            arm.then_ignore(just(TokenKind::Comma).or_not())
                .repeated()
                .collect::<Vec<_>>()
                .map(|arms| arms.into_iter().flatten().collect::<Vec<_>>())
                .delimited_by(just(TokenKind::LBrace), just(TokenKind::RBrace)),
        )
        .map(|(scrutinee, arms)| ExprKind::Match {
            scrutinee: Box::new(scrutinee),
            arms,
        })
}

/// `create`, `update` and `delete`.
fn writes<'src, I: Tokens<'src>>(
    src: Src<'src>,
    expr: P<'src, I, Expr>,
    fields: Boxed<'src, 'src, I, Vec<FieldInit>, Extra<'src>>,
) -> impl Parser<'src, I, ExprKind, Extra<'src>> + Clone {
    let _ = src;
    let clause = |name: &'static str| {
        word(name)
            .ignore_then(just(TokenKind::Colon))
            .ignore_then(path().labelled("a failure"))
    };
    let filter = word("where")
        .ignore_then(just(TokenKind::Colon))
        .ignore_then(any_word())
        .then_ignore(just(TokenKind::EqEq))
        .then(expr)
        .map_with(|(field, value), e| WhereClause {
            field,
            value,
            span: e.span(),
        });
    let entity = || path().labelled("an entity");
    let create = kw(Keyword::Create)
        .ignore_then(entity())
        .then(fields.clone())
        .then(clause("conflict").or_not())
        .map(|((entity, fields), conflict)| ExprKind::Create {
            entity,
            fields,
            conflict,
        });
    let update = kw(Keyword::Update)
        .ignore_then(entity())
        .then(
            filter
                .clone()
                .then(
                    word("set")
                        .ignore_then(just(TokenKind::Colon))
                        .ignore_then(fields),
                )
                .then(clause("missing").or_not())
                .then(clause("conflict").or_not())
                .delimited_by(just(TokenKind::LBrace), just(TokenKind::RBrace)),
        )
        .map(
            |(entity, (((filter, set), missing), conflict))| ExprKind::Update {
                entity,
                filter: Box::new(filter),
                set,
                missing,
                conflict,
            },
        );
    let delete = kw(Keyword::Delete)
        .ignore_then(entity())
        .then(
            filter
                .then(clause("missing").or_not())
                .delimited_by(just(TokenKind::LBrace), just(TokenKind::RBrace)),
        )
        .map(|(entity, (filter, missing))| ExprKind::Delete {
            entity,
            filter: Box::new(filter),
            missing,
        });
    choice((create, update, delete))
}
