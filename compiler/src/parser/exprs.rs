//! Grammar for expressions: literals, paths, constructions, calls, operators
//! by precedence (`or` < `and` < `not` < comparisons < `+ -` < `* /` <
//! unary `-` < postfix), `attempt`, `match`, and the writes `create`,
//! `update` and `delete`.

use super::common::{
    any_word, exact, ident, kw, on_same_line, path, punct, skip_line, tag, word, Error, Extra,
    Present, Src, Tokens, MAX_CHAIN,
};
use super::types::P;
use crate::ast::{
    BinOp, Block, CountKind, Expr, ExprKind, FieldInit, Ident, MatchArm, Path, Pattern, QueryMode,
    RejectExpr, UnOp, WhereClause,
};
use crate::intern::Name;
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
        .collect::<Present<_>>()
        .map(|present| exact(present.0))
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

/// A left fold of `lhs (op rhs)*` as it is read: up to [`MAX_CHAIN`]
/// operators nest; past that only where the chain was cut and where it
/// ends are kept, and [`Chain::finish`] refuses it as [`fold_binary`] does.
struct Chain {
    expr: Expr,
    operators: usize,
    /// The operator past the limit, and the last operand's end.
    cut: Option<(Span, Span)>,
}

impl Chain {
    fn start(lhs: Expr) -> Chain {
        Chain {
            expr: lhs,
            operators: 0,
            cut: None,
        }
    }

    fn push(mut self, op: BinOp, span: Span, rhs: Expr) -> Chain {
        self.operators += 1;
        if self.operators > MAX_CHAIN {
            let at = self.cut.map_or(span, |(at, _)| at);
            self.cut = Some((at, rhs.span));
            return self;
        }
        let lhs = self.expr;
        self.expr = Expr {
            span: lhs.span.to(rhs.span),
            kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
        };
        self
    }

    fn finish(self, emitter: &mut chumsky::input::Emitter<super::common::Error<'_>>) -> Expr {
        match self.cut {
            None => self.expr,
            Some((at, end)) => {
                emitter.emit(Error::custom(at, tag::TOO_DEEP));
                error_expr(self.expr.span.to(end))
            }
        }
    }
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
    if repeat {
        // Folded as it is read, so a chain past the limit keeps only its
        // spans, never millions of operands.
        return lower
            .map(Chain::start)
            .foldl(tail.repeated(), |chain, ((op, span), rhs)| {
                chain.push(op, span, rhs)
            })
            .validate(|chain, _, emitter| chain.finish(emitter))
            .boxed();
    }
    let rest = tail
        .map(|((op, span), rhs)| vec![(op, span, rhs)])
        .or_not()
        .map(Option::unwrap_or_default)
        .boxed();
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
    if super::FAST {
        return fast_chain(src, expr, block);
    }
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

/// A prefix operator of the fast grammar, in the order they may stack.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Prefix {
    Attempt,
    Not,
    Neg,
}

type Operand = (Vec<(Span, Prefix)>, Expr);

/// The expression grammar for the fast pass: one flat
/// `operand (operator operand)*` read, then folded by precedence, instead
/// of a chain of eight precedence levels that each move every operand.
///
/// It builds the same tree as [`expr`] and accepts a subset of its input:
/// a shape the levels would read differently (`a < b < c`, `a == not b`,
/// `x + attempt y`) or a chain longer than [`MAX_CHAIN`] is refused with
/// an error, and then the whole file is read again by the full grammar.
fn fast_chain<'src, I: Tokens<'src>>(
    src: Src<'src>,
    expr: P<'src, I, Expr>,
    block: P<'src, I, Block>,
) -> P<'src, I, Expr> {
    let atom = fast_atom(src, expr.clone(), block);
    let postfix = postfix(expr, atom);
    let prefix = select! {
        TokenKind::Kw(Keyword::Attempt) = e => (e.span(), Prefix::Attempt),
        TokenKind::Kw(Keyword::Not) = e => (e.span(), Prefix::Not),
        TokenKind::Minus = e => (e.span(), Prefix::Neg),
    };
    let operand = prefix.repeated().collect::<Vec<_>>().then(postfix);
    let operator = select! {
        TokenKind::Kw(Keyword::Or) = e => (BinOp::Or, e.span()),
        TokenKind::Kw(Keyword::And) = e => (BinOp::And, e.span()),
        TokenKind::EqEq = e => (BinOp::Eq, e.span()),
        TokenKind::NotEq = e => (BinOp::Ne, e.span()),
        TokenKind::Le = e => (BinOp::Le, e.span()),
        TokenKind::Ge = e => (BinOp::Ge, e.span()),
        TokenKind::Lt = e => (BinOp::Lt, e.span()),
        TokenKind::Gt = e => (BinOp::Gt, e.span()),
        TokenKind::Plus = e => (BinOp::Add, e.span()),
        TokenKind::Minus = e => (BinOp::Sub, e.span()),
        TokenKind::Star = e => (BinOp::Mul, e.span()),
        TokenKind::Slash = e => (BinOp::Div, e.span()),
    };
    operand
        .clone()
        // One past the limit is enough to refuse the chain: a longer one
        // is not collected (16 million tokens took 2.3 GB), and the
        // operator after it fails this pass, so the full grammar reads it.
        .then(
            operator
                .then(operand)
                .repeated()
                .at_most(MAX_CHAIN + 1)
                .collect::<Vec<_>>(),
        )
        .validate(|(first, rest), _, emitter| {
            let at = first.1.span;
            fold_chain(first, rest).unwrap_or_else(|| {
                emitter.emit(Error::custom(at, tag::TOO_DEEP));
                error_expr(at)
            })
        })
        .labelled("an expression")
        .boxed()
}

/// Folds a flat chain by precedence; `None` when the precedence levels
/// would not read it this way.
fn fold_chain(first: Operand, rest: Vec<((BinOp, Span), Operand)>) -> Option<Expr> {
    if rest.len() > MAX_CHAIN || !prefixes_fit(&first.0, None) {
        return None;
    }
    if rest.is_empty() {
        // The common case: one operand; its prefixes apply in order.
        let (prefixes, inner) = first;
        return Some(wrap(prefixes, inner));
    }
    if !rest
        .iter()
        .all(|((op, _), (p, _))| prefixes_fit(p, Some(*op)))
    {
        return None;
    }
    let mut climb = Climb {
        first: Some(first),
        rest,
        next: 0,
    };
    let attempts = climb.take_prefixes(Prefix::Attempt);
    let tree = climb.or()?;
    Some(wrap(attempts, tree))
}

/// Whether an operand's prefixes read as the levels read them: in the
/// order `attempt* not* -*`, `attempt` only on the first operand and
/// `not` only on the first or after `and`/`or`.
fn prefixes_fit(prefixes: &[(Span, Prefix)], after: Option<BinOp>) -> bool {
    if prefixes.is_empty() {
        return true;
    }
    if prefixes.len() > MAX_CHAIN || !prefixes.is_sorted_by_key(|(_, p)| *p) {
        return false;
    }
    let Some(op) = after else {
        return true;
    };
    let has = |what| prefixes.iter().any(|(_, p)| *p == what);
    let after_logic = matches!(op, BinOp::And | BinOp::Or);
    !has(Prefix::Attempt) && (after_logic || !has(Prefix::Not))
}

/// Applies prefix operators (outermost first) to `inner`.
fn wrap(prefixes: Vec<(Span, Prefix)>, inner: Expr) -> Expr {
    if prefixes.is_empty() {
        return inner;
    }
    prefixes
        .into_iter()
        .rev()
        .fold(inner, |inner, (span, op)| Expr {
            span: span.to(inner.span),
            kind: match op {
                Prefix::Attempt => ExprKind::Attempt(Box::new(inner)),
                Prefix::Not => ExprKind::Unary(UnOp::Not, Box::new(inner)),
                Prefix::Neg => ExprKind::Unary(UnOp::Neg, Box::new(inner)),
            },
        })
}

/// Precedence climbing over a validated chain: `first`, then each
/// operator with the operand after it. `next` is the index of the next
/// operator, and so of the operand before it (0 is `first`).
struct Climb {
    first: Option<Operand>,
    rest: Vec<((BinOp, Span), Operand)>,
    next: usize,
}

impl Climb {
    fn peek(&self) -> Option<BinOp> {
        self.rest.get(self.next).map(|((op, _), _)| *op)
    }

    /// The operand before operator `next`, unless already taken.
    fn current(&mut self) -> Option<&mut Operand> {
        match self.next.checked_sub(1) {
            None => self.first.as_mut(),
            Some(i) => self.rest.get_mut(i).map(|(_, operand)| operand),
        }
    }

    /// Takes the current operand, leaving an empty one in its place.
    fn take(&mut self) -> Option<Operand> {
        match self.next.checked_sub(1) {
            None => self.first.take(),
            Some(i) => {
                let (_, operand) = self.rest.get_mut(i)?;
                let span = operand.1.span;
                Some(std::mem::replace(operand, (Vec::new(), error_expr(span))))
            }
        }
    }

    /// Removes the leading prefixes of kind `what` from the current operand.
    fn take_prefixes(&mut self, what: Prefix) -> Vec<(Span, Prefix)> {
        let Some((prefixes, _)) = self.current() else {
            return Vec::new();
        };
        let count = prefixes.iter().take_while(|(_, p)| *p == what).count();
        if count == 0 {
            return Vec::new();
        }
        prefixes.drain(..count).collect()
    }

    fn binary(&mut self, lhs: Expr, next: fn(&mut Self) -> Option<Expr>) -> Option<Expr> {
        let op = self.peek()?;
        self.next += 1;
        let rhs = next(self)?;
        Some(Expr {
            span: lhs.span.to(rhs.span),
            kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
        })
    }

    fn or(&mut self) -> Option<Expr> {
        let mut lhs = self.and()?;
        while self.peek() == Some(BinOp::Or) {
            lhs = self.binary(lhs, Self::and)?;
        }
        Some(lhs)
    }

    fn and(&mut self) -> Option<Expr> {
        let mut lhs = self.not()?;
        while self.peek() == Some(BinOp::And) {
            lhs = self.binary(lhs, Self::not)?;
        }
        Some(lhs)
    }

    fn not(&mut self) -> Option<Expr> {
        let nots = self.take_prefixes(Prefix::Not);
        let inner = self.compare()?;
        Some(wrap(nots, inner))
    }

    fn compare(&mut self) -> Option<Expr> {
        let is_compare = |op: Option<BinOp>| {
            matches!(
                op,
                Some(BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge)
            )
        };
        let mut lhs = self.sum()?;
        if is_compare(self.peek()) {
            lhs = self.binary(lhs, Self::sum)?;
            // Comparisons do not chain: `a < b < c` is an error.
            if is_compare(self.peek()) {
                return None;
            }
        }
        Some(lhs)
    }

    fn sum(&mut self) -> Option<Expr> {
        let mut lhs = self.product()?;
        while matches!(self.peek(), Some(BinOp::Add | BinOp::Sub)) {
            lhs = self.binary(lhs, Self::product)?;
        }
        Some(lhs)
    }

    fn product(&mut self) -> Option<Expr> {
        let mut lhs = self.unary()?;
        while matches!(self.peek(), Some(BinOp::Mul | BinOp::Div)) {
            lhs = self.binary(lhs, Self::unary)?;
        }
        Some(lhs)
    }

    fn unary(&mut self) -> Option<Expr> {
        let (prefixes, inner) = self.take()?;
        if prefixes.iter().any(|(_, p)| *p != Prefix::Neg) {
            return None;
        }
        Some(wrap(prefixes, inner))
    }
}

/// [`atom`] for the fast pass: a path is read once and becomes a
/// construction when `{ fields }` follow an UpperCamelCase name (the full
/// grammar tries a construction first and reads the path again if that fails).
fn fast_atom<'src, I: Tokens<'src>>(
    src: Src<'src>,
    expr: P<'src, I, Expr>,
    block: P<'src, I, Block>,
) -> P<'src, I, Expr> {
    let fields = field_inits(src, expr.clone()).boxed();
    let path_parser = path();
    let construct_fields = fields.clone();
    let path_or_construct = custom(move |inp| {
        let path = inp.parse(&path_parser)?;
        if starts_upper(&path) {
            let before = inp.save();
            match inp.parse(&construct_fields) {
                Ok(fields) => {
                    let ty = Box::new(path);
                    return Ok(ExprKind::Construct { ty, fields });
                }
                Err(_) => inp.rewind(before),
            }
        }
        Ok(ExprKind::Path(path))
    });
    // `propagate` outside a match arm is read, so the resolver can say
    // where it belongs instead of a bare syntax error.
    let propagate = kw(Keyword::Propagate).to(ExprKind::Propagate);
    let kind = choice((
        literal(src),
        propagate,
        count(src),
        paren(expr.clone()),
        list(expr.clone()),
        match_expr(src, expr.clone(), block),
        writes(src, expr, fields),
        path_or_construct,
    ));
    kind.map_with(|kind, e| Expr {
        kind,
        span: e.span(),
    })
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
        .map(exact)
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

fn literal<'src, I: Tokens<'src>>(
    src: Src<'src>,
) -> impl Parser<'src, I, ExprKind, Extra<'src>> + Clone {
    select! {
        TokenKind::Int(v) => ExprKind::Int(v.get() as i64),
        TokenKind::Decimal = e => ExprKind::Decimal(src.slice(e.span()).to_string()),
        TokenKind::Str(value) = e => ExprKind::Str(src.string(value, e.span())),
        TokenKind::Duration(amount, unit) => ExprKind::Duration(amount.get(), unit),
        TokenKind::Kw(Keyword::True) => ExprKind::Bool(true),
        TokenKind::Kw(Keyword::False) => ExprKind::Bool(false),
        TokenKind::Kw(Keyword::None) => ExprKind::None,
        TokenKind::Error => ExprKind::Error,
    }
    .labelled("a value")
}

fn paren<'src, I: Tokens<'src>>(
    expr: P<'src, I, Expr>,
) -> impl Parser<'src, I, ExprKind, Extra<'src>> + Clone {
    expr.map(|e| e.kind)
        .delimited_by(just(TokenKind::LParen), just(TokenKind::RParen))
        .recover_with(via_parser(nested_delimiters(
            TokenKind::LParen,
            TokenKind::RParen,
            [
                (TokenKind::LBrace, TokenKind::RBrace),
                (TokenKind::LBracket, TokenKind::RBracket),
            ],
            |_| ExprKind::Error,
        )))
}

fn list<'src, I: Tokens<'src>>(
    expr: P<'src, I, Expr>,
) -> impl Parser<'src, I, ExprKind, Extra<'src>> + Clone {
    expr.separated_by(just(TokenKind::Comma))
        .allow_trailing()
        .collect::<Vec<_>>()
        .map(exact)
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
        )))
}

fn atom<'src, I: Tokens<'src>>(
    src: Src<'src>,
    expr: P<'src, I, Expr>,
    block: P<'src, I, Block>,
) -> P<'src, I, Expr> {
    let fields = field_inits(src, expr.clone()).boxed();
    let construct = path()
        .filter(starts_upper)
        .then(fields.clone())
        .map(|(ty, fields)| ExprKind::Construct {
            ty: Box::new(ty),
            fields,
        });
    let plain_path = path().map(ExprKind::Path);
    // `propagate` outside a match arm is read, so the resolver can say
    // where it belongs instead of a bare syntax error.
    let propagate = kw(Keyword::Propagate).to(ExprKind::Propagate);
    let kind = choice((
        literal(src),
        propagate,
        count(src),
        paren(expr.clone()),
        list(expr.clone()),
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
        reject(src, expr.clone()).map(|r| ExprKind::Reject(Box::new(r))),
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
                .collect::<Present<_>>()
                .map(|present| exact(present.0))
                .delimited_by(just(TokenKind::LBrace), just(TokenKind::RBrace)),
        )
        .map(|(scrutinee, arms)| ExprKind::Match {
            scrutinee: Box::new(scrutinee),
            arms,
        })
}

/// `stored E`, `sent pkg.op`, `emitted Ev` (the counts of tests), the
/// name on the same line as the word.
fn count<'src, I: Tokens<'src>>(
    src: Src<'src>,
) -> impl Parser<'src, I, ExprKind, Extra<'src>> + Clone {
    // One token test for the three words: this is tried before every
    // name an expression starts with.
    let (stored, sent, emitted) = (Name::new("stored"), Name::new("sent"), Name::new("emitted"));
    select! {
        TokenKind::Ident(n) if n == stored => CountKind::Stored,
        TokenKind::Ident(n) if n == sent => CountKind::Sent,
        TokenKind::Ident(n) if n == emitted => CountKind::Emitted,
    }
    .then_ignore(on_same_line(src))
    .then(path())
    .map(|(kind, path)| ExprKind::Count {
        kind,
        path: Box::new(path),
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
            .map(Box::new)
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
    let entity = || path().labelled("an entity").map(Box::new);
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
                        .ignore_then(fields.clone()),
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
    let mode = choice((
        word("optional").to(QueryMode::Optional),
        word("required").to(QueryMode::Required),
        word("many").to(QueryMode::Many),
    ))
    .labelled("`optional`, `required` or `many`");
    let query = word("query")
        .ignore_then(mode)
        .then(entity())
        .then(fields)
        .map(|((mode, entity), settings)| ExprKind::Query {
            mode,
            entity,
            settings,
        });
    choice((create, update, delete, query))
}
