//! Grammar for blocks and statements. A statement ends at the end of its
//! line (or the block's `}`); a broken statement skips to the next line and
//! becomes [`StmtKind::Error`].

use super::common::{
    exact, ident, kw, on_same_line, path, rest_of_line, skip_line, statement_end, tag, word, Error,
    Extra, Src, Tokens, MAX_CHAIN,
};
use super::exprs::{field_inits, reject};
use super::types::P;
use crate::ast::{
    BinOp, Block, EmitStmt, Expr, ExprKind, IntLit, Setting, Stmt, StmtKind, TypeExpr,
};
use crate::lexer::{Keyword, TokenKind};
use crate::span::Span;
use chumsky::prelude::*;

/// The pieces of the grammar statements are built from.
pub struct Parts<'src, I: Tokens<'src>> {
    pub expr: P<'src, I, Expr>,
    pub block: P<'src, I, Block>,
    pub settings: P<'src, I, Vec<Setting>>,
    pub bare_type: P<'src, I, TypeExpr>,
}

/// `{ statements }`
pub fn block<'src, I: Tokens<'src>>(src: Src<'src>, parts: Parts<'src, I>) -> P<'src, I, Block> {
    let stmt = statement(src, &parts)
        .then_ignore(statement_end(src))
        .labelled("a statement")
        .recover_with(via_parser(skip_line(src).map(|span| Stmt {
            kind: StmtKind::Error,
            span,
        })));
    stmt.repeated()
        .collect::<Vec<_>>()
        .map(exact)
        .delimited_by(just(TokenKind::LBrace), just(TokenKind::RBrace))
        .map_with(|stmts, e| Block {
            stmts,
            span: e.span(),
        })
        .boxed()
}

fn statement<'src, I: Tokens<'src>>(src: Src<'src>, parts: &Parts<'src, I>) -> P<'src, I, Stmt> {
    let expr = parts.expr.clone();
    let var = kw(Keyword::Var)
        .ignore_then(kw(Keyword::Mut).or_not())
        .then(ident())
        .then(
            just(TokenKind::Colon)
                .ignore_then(parts.bare_type.clone())
                .or_not(),
        )
        .then_ignore(just(TokenKind::Assign))
        .then(expr.clone())
        .map(|(((mutable, name), ty), value)| StmtKind::Var {
            mutable: mutable.is_some(),
            name,
            ty,
            value,
        });
    let assign = ident()
        .then_ignore(just(TokenKind::Assign))
        .then(expr.clone())
        .map(|(target, value)| StmtKind::Assign { target, value });
    let for_loop = kw(Keyword::For)
        .ignore_then(ident())
        .then_ignore(word("in"))
        .then(expr.clone())
        .then(word("max").ignore_then(int_lit()).or_not())
        .then(parts.block.clone())
        .map(|(((item, iterable), max), body)| StmtKind::For {
            item,
            iterable,
            max,
            body,
        });
    let ret = kw(Keyword::Return)
        .ignore_then(on_same_line(src).ignore_then(expr.clone()).or_not())
        .map(StmtKind::Return);
    let emit = kw(Keyword::Emit)
        .ignore_then(path().labelled("the event to emit"))
        .then(field_inits(src, expr.clone()))
        .then(word("with").ignore_then(parts.settings.clone()).or_not())
        .map_with(|((event, fields), options), e| {
            StmtKind::Emit(EmitStmt {
                event,
                fields,
                options,
                span: e.span(),
            })
        });
    let stray_else =
        kw(Keyword::Else)
            .then(rest_of_line(src))
            .validate(|(else_span, _), _, emitter| {
                emitter.emit(Error::custom(else_span, tag::STRAY_ELSE));
                StmtKind::Error
            });
    choice((
        var,
        if_stmt(src, expr.clone(), parts.block.clone()).map(|(kind, _)| kind),
        for_loop,
        ret,
        reject(src, expr.clone()).map(StmtKind::Reject),
        emit,
        stray_else,
        assign,
        expr.map(StmtKind::Expr),
    ))
    .map_with(|kind, e| Stmt {
        kind,
        span: e.span(),
    })
    .boxed()
}

fn int_lit<'src, I: Tokens<'src>>() -> impl Parser<'src, I, IntLit, Extra<'src>> + Clone {
    select! { TokenKind::Int(value) = e => IntLit { value: value.get() as i64, span: e.span() } }
        .labelled("a whole number")
}

/// `if cond { } [else { } | else if ...]`, with its span. Writing `=` for
/// `==` in the condition is reported and read as `==`.
///
/// `else if` branches are read as a list, not by recursion, and a chain of
/// more than [`MAX_CHAIN`] of them is `syntax.too_deep`: a recursive grammar
/// overflowed the stack on a long chain, and every later phase walks the
/// nested tree it becomes.
fn if_stmt<'src, I: Tokens<'src>>(
    src: Src<'src>,
    expr: P<'src, I, Expr>,
    block: P<'src, I, Block>,
) -> impl Parser<'src, I, (StmtKind, Span), Extra<'src>> + Clone {
    let _ = src;
    let cond = expr
        .clone()
        .then(
            just(TokenKind::Assign)
                .map_with(|_, e| e.span())
                .then(expr.clone())
                .or_not(),
        )
        .validate(|(lhs, assign), _, emitter| match assign {
            None => lhs,
            Some((eq_span, rhs)) => {
                emitter.emit(Error::custom(eq_span, tag::ASSIGN_IN_CONDITION));
                Expr {
                    span: lhs.span.to(rhs.span),
                    kind: ExprKind::Binary(BinOp::Eq, Box::new(lhs), Box::new(rhs)),
                }
            }
        });
    let else_if = kw(Keyword::Else)
        .ignore_then(kw(Keyword::If))
        .then(cond.clone())
        .then(block.clone());
    kw(Keyword::If)
        .ignore_then(cond)
        .then(block.clone())
        .then(else_if.repeated().collect::<Vec<_>>())
        .then(kw(Keyword::Else).ignore_then(block).or_not())
        .validate(|(((cond, then_block), else_ifs), last), e, emitter| {
            let span: Span = e.span();
            if else_ifs.len() > MAX_CHAIN {
                let at = else_ifs
                    .get(MAX_CHAIN)
                    .map_or(span, |((if_span, _), _)| *if_span);
                emitter.emit(Error::custom(at, tag::TOO_MANY_ELSE_IFS));
                return (StmtKind::Error, span);
            }
            // Each `else if` becomes an `if` alone in the enclosing else
            // block, spanning from its `if` to the end of the chain.
            let mut else_block = last;
            for ((if_span, cond), then_block) in else_ifs.into_iter().rev() {
                let inner = Span::new(span.file, if_span.start, span.end);
                let stmt = Stmt {
                    kind: StmtKind::If {
                        cond,
                        then_block,
                        else_block,
                    },
                    span: inner,
                };
                else_block = Some(Block {
                    stmts: vec![stmt],
                    span: inner,
                });
            }
            let kind = StmtKind::If {
                cond,
                then_block,
                else_block,
            };
            (kind, span)
        })
}
