//! Statements and expressions.

use super::{Layout, Printer};
use crate::ast::*;
use crate::parser::MAX_CHAIN;
use std::fmt::Write;

/// Binding strength of an expression, loosest first; the parser's levels.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Attempt,
    Or,
    And,
    Not,
    Compare,
    Sum,
    Product,
    Neg,
    Postfix,
}

/// The least binding level a prefix operator's operand may have: its own
/// `level` when the operand repeats the operator (`not not x`, `- -x`,
/// `attempt attempt f()`), else `otherwise`.
fn chained(inner: &Expr, own: Level, otherwise: Level) -> Level {
    if level(inner) == own {
        own
    } else {
        otherwise
    }
}

fn level(e: &Expr) -> Level {
    match &e.kind {
        ExprKind::Attempt(_) => Level::Attempt,
        ExprKind::Unary(UnOp::Not, _) => Level::Not,
        ExprKind::Unary(UnOp::Neg, _) => Level::Neg,
        ExprKind::Binary(op, _, _) => binary_level(*op),
        _ => Level::Postfix,
    }
}

fn binary_level(op: BinOp) -> Level {
    match op {
        BinOp::Or => Level::Or,
        BinOp::And => Level::And,
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => Level::Compare,
        BinOp::Add | BinOp::Sub => Level::Sum,
        BinOp::Mul | BinOp::Div => Level::Product,
    }
}

fn binary_text(op: BinOp) -> &'static str {
    match op {
        BinOp::Eq => "==",
        BinOp::Ne => "!=",
        BinOp::Lt => "<",
        BinOp::Le => "<=",
        BinOp::Gt => ">",
        BinOp::Ge => ">=",
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::And => "and",
        BinOp::Or => "or",
    }
}

fn unit_text(unit: DurationUnit) -> &'static str {
    match unit {
        DurationUnit::Ms => "ms",
        DurationUnit::S => "s",
        DurationUnit::M => "m",
        DurationUnit::H => "h",
        DurationUnit::D => "d",
    }
}

/// Whether the last token of `e` is a path ending in an UpperCamelCase
/// segment: followed by `{`, it would be read as a construction.
fn ends_with_upper_path(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Path(path) => path.last().is_some_and(|s| {
            s.name
                .as_str()
                .starts_with(|c: char| c.is_ascii_uppercase())
        }),
        ExprKind::Binary(_, _, rhs) => ends_with_upper_path(rhs),
        ExprKind::Unary(_, inner) | ExprKind::Attempt(inner) => ends_with_upper_path(inner),
        _ => false,
    }
}

impl Printer<'_> {
    pub(super) fn block(&mut self, block: &Block) {
        if block.stmts.is_empty() && !self.comment_before(block.span.end) {
            self.out.push_str("{ }");
            self.done(block.span.end);
            return;
        }
        let stmts = block.stmts.as_slice();
        self.broken(
            Some(block.span.start + 1),
            stmts,
            block.span.end,
            |s| s.span,
            &|p, s| p.stmt(s),
        );
        self.done(block.span.end);
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Var {
                mutable,
                name,
                ty,
                value,
            } => {
                self.out
                    .push_str(if *mutable { "var mut " } else { "var " });
                self.out.push_str(name.name.as_str());
                if let Some(ty) = ty {
                    self.out.push_str(": ");
                    self.type_expr(ty, false);
                }
                self.out.push_str(" = ");
                self.expr(value);
            }
            StmtKind::Assign { target, value } => {
                let _ = write!(self.out, "{} = ", target.name);
                self.expr(value);
            }
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => self.if_stmt(cond, then_block, else_block.as_ref()),
            StmtKind::For {
                item,
                iterable,
                max,
                body,
            } => {
                let _ = write!(self.out, "for {} in ", item.name);
                match max {
                    Some(max) => {
                        self.expr(iterable);
                        let _ = write!(self.out, " max {} ", max.value);
                    }
                    None => {
                        self.expr_before_brace(iterable);
                        self.out.push(' ');
                    }
                }
                self.block(body);
            }
            StmtKind::Return(None) => self.out.push_str("return"),
            StmtKind::Return(Some(e)) => {
                self.out.push_str("return ");
                self.expr(e);
            }
            StmtKind::Reject(r) => self.reject(r),
            StmtKind::Emit(e) => {
                self.out.push_str("emit ");
                self.path(&e.event);
                self.out.push(' ');
                self.field_inits(&e.fields, e.span.end);
                if let Some(options) = &e.options {
                    self.out.push_str(" with ");
                    self.settings(options, e.span.end);
                }
            }
            StmtKind::Expr(e) => self.expr(e),
            StmtKind::Error => self.out.push_str("// (a statement that could not be read)"),
        }
    }

    fn if_stmt(&mut self, cond: &Expr, then_block: &Block, else_block: Option<&Block>) {
        self.out.push_str("if ");
        self.expr_before_brace(cond);
        self.out.push(' ');
        self.block(then_block);
        let Some(else_block) = else_block else {
            return;
        };
        self.out.push_str(" else ");
        match else_block.stmts.as_slice() {
            [Stmt {
                kind:
                    StmtKind::If {
                        cond,
                        then_block,
                        else_block,
                    },
                ..
            }] => self.if_stmt(cond, then_block, else_block.as_ref()),
            _ => self.block(else_block),
        }
    }

    fn reject(&mut self, r: &RejectExpr) {
        self.out.push_str("reject ");
        self.path(&r.failure);
        if let Some(fields) = &r.fields {
            self.out.push(' ');
            self.field_inits(fields, r.span.end);
        }
    }

    pub(super) fn field_inits(&mut self, fields: &[FieldInit], end: u32) {
        self.braced(fields, Layout::Fit, end, |f| f.span, &|p, f| {
            let _ = write!(p.out, "{}: ", f.name.name);
            p.expr(&f.value);
        });
    }

    /// An expression followed by a `{` that is not its own: parenthesized
    /// when its last token would make the `{` start a construction.
    pub(super) fn expr_before_brace(&mut self, e: &Expr) {
        if ends_with_upper_path(e) {
            self.out.push('(');
            self.expr(e);
            self.out.push(')');
        } else {
            self.expr(e);
        }
    }

    /// `e` where the grammar expects at least `min`, parenthesized if looser.
    fn operand(&mut self, e: &Expr, min: Level) {
        if level(e) < min {
            self.out.push('(');
            self.expr(e);
            self.out.push(')');
        } else {
            self.expr(e);
        }
    }

    /// Expressions separated by `, ` (arguments, list items).
    pub(super) fn exprs(&mut self, items: &[Expr]) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.expr(item);
            if self.over() {
                return;
            }
        }
    }

    pub(super) fn expr(&mut self, e: &Expr) {
        if self.over() {
            return;
        }
        match &e.kind {
            ExprKind::Int(v) => {
                let _ = write!(self.out, "{v}");
            }
            ExprKind::Decimal(text) => self.out.push_str(text),
            ExprKind::Str(s) => self.string(s, e.span),
            ExprKind::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            ExprKind::None => self.out.push_str("none"),
            ExprKind::Duration(amount, unit) => {
                let _ = write!(self.out, "{amount}{}", unit_text(*unit));
            }
            ExprKind::Path(path) => self.path(path),
            ExprKind::Field(inner, name) => {
                // `a.b` would read back as one path: `(a).b` is a field.
                let path = matches!(inner.kind, ExprKind::Path(_));
                self.postfix_target(inner, !path);
                let _ = write!(self.out, ".{}", name.name);
            }
            ExprKind::Call { callee, args } => {
                self.postfix_target(callee, true);
                self.delimited('(', ')', args, e.span.end);
            }
            ExprKind::Construct { ty, fields } => {
                self.path(ty);
                self.out.push(' ');
                self.field_inits(fields, e.span.end);
            }
            ExprKind::List(items) => self.delimited('[', ']', items, e.span.end),
            ExprKind::Unary(..) | ExprKind::Attempt(_) => self.prefixed(e),
            ExprKind::Binary(op, lhs, rhs) => self.binary(*op, lhs, rhs, 1),
            ExprKind::Match { scrutinee, arms } => self.match_expr(scrutinee, arms, e.span.end),
            ExprKind::Create {
                entity,
                fields,
                conflict,
            } => {
                self.out.push_str("create ");
                self.path(entity);
                self.out.push(' ');
                self.field_inits(fields, e.span.end);
                if let Some(c) = conflict {
                    self.out.push_str(" conflict: ");
                    self.path(c);
                }
            }
            ExprKind::Update {
                entity,
                filter,
                set,
                missing,
                conflict,
            } => {
                self.out.push_str("update ");
                self.path(entity);
                self.out.push_str(" { ");
                self.where_clause(filter);
                self.out.push_str(" set: ");
                self.field_inits(set, e.span.end);
                self.clause("missing", missing.as_deref());
                self.clause("conflict", conflict.as_deref());
                self.out.push_str(" }");
            }
            ExprKind::Delete {
                entity,
                filter,
                missing,
            } => {
                self.out.push_str("delete ");
                self.path(entity);
                self.out.push_str(" { ");
                self.where_clause(filter);
                self.clause("missing", missing.as_deref());
                self.out.push_str(" }");
            }
            ExprKind::Count { kind, path } => {
                let _ = write!(self.out, "{} ", kind.as_str());
                self.path(path);
            }
            ExprKind::Query {
                mode,
                entity,
                settings,
            } => {
                let _ = write!(self.out, "query {} ", mode.as_str());
                self.path(entity);
                self.out.push(' ');
                self.field_inits(settings, e.span.end);
            }
            ExprKind::Reject(r) => self.reject(r),
            ExprKind::Propagate => self.out.push_str("propagate"),
            ExprKind::Block(b) => self.block(b),
            ExprKind::Error => self.out.push('§'),
        }
    }

    /// The target of `.name` or `(args)`: parenthesized unless it ends with
    /// a token that closes it (`)`, `]`, `}`, a literal), or is a path and
    /// `path_ok`. `create E { } conflict: F.x` would extend the path `F`.
    fn postfix_target(&mut self, e: &Expr, path_ok: bool) {
        let closed = match &e.kind {
            ExprKind::Path(_) => path_ok,
            ExprKind::Create { conflict, .. } => conflict.is_none(),
            ExprKind::Int(_)
            | ExprKind::Decimal(_)
            | ExprKind::Str(_)
            | ExprKind::Bool(_)
            | ExprKind::None
            | ExprKind::Duration(..)
            | ExprKind::Field(..)
            | ExprKind::Call { .. }
            | ExprKind::Construct { .. }
            | ExprKind::List(_)
            | ExprKind::Match { .. }
            | ExprKind::Update { .. }
            | ExprKind::Delete { .. }
            | ExprKind::Query { .. } => true,
            _ => false,
        };
        if closed {
            self.expr(e);
        } else {
            self.out.push('(');
            self.expr(e);
            self.out.push(')');
        }
    }

    /// A run of one prefix operator (`not not x`, `- -x`, `attempt
    /// attempt f()`). The parser reads at most [`MAX_CHAIN`] in a row, so a
    /// longer run (the author's parentheses, which the tree does not keep)
    /// is split with parentheses again: the formatted file must parse.
    fn prefixed(&mut self, e: &Expr) {
        let mut node = e;
        let mut run = 0;
        loop {
            let (text, own, otherwise, inner) = match &node.kind {
                ExprKind::Unary(UnOp::Not, inner) => ("not ", Level::Not, Level::Compare, inner),
                ExprKind::Unary(UnOp::Neg, inner) => ("-", Level::Neg, Level::Postfix, inner),
                ExprKind::Attempt(inner) => ("attempt ", Level::Attempt, Level::Or, inner),
                _ => return self.expr(node),
            };
            self.out.push_str(text);
            run += 1;
            let same = level(inner) == own;
            // `- -x`: two minus signs, never read as one token.
            if same && own == Level::Neg {
                self.out.push(' ');
            }
            if !same {
                return self.operand(inner, chained(inner, own, otherwise));
            }
            if run == MAX_CHAIN {
                self.out.push('(');
                self.prefixed(inner);
                self.out.push(')');
                return;
            }
            node = inner;
        }
    }

    /// `lhs op rhs`, `run` the operators of its level above it on the
    /// left spine (itself included): past [`MAX_CHAIN`] the rest of the
    /// spine is parenthesized, as for [`Printer::prefixed`].
    fn binary(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr, run: usize) {
        let at = binary_level(op);
        // Left-associative levels repeat on the left; comparisons do not
        // chain at all.
        let left_min = if at == Level::Compare { Level::Sum } else { at };
        let right_min = match at {
            Level::Or => Level::And,
            Level::And => Level::Not,
            Level::Compare => Level::Sum,
            Level::Sum => Level::Product,
            _ => Level::Neg,
        };
        match &lhs.kind {
            ExprKind::Binary(l_op, l_lhs, l_rhs) if binary_level(*l_op) == at && left_min == at => {
                if run >= MAX_CHAIN {
                    self.out.push('(');
                    self.binary(*l_op, l_lhs, l_rhs, 1);
                    self.out.push(')');
                } else {
                    self.binary(*l_op, l_lhs, l_rhs, run + 1);
                }
            }
            _ => self.operand(lhs, left_min),
        }
        let _ = write!(self.out, " {} ", binary_text(op));
        self.operand(rhs, right_min);
    }

    fn where_clause(&mut self, w: &WhereClause) {
        let _ = write!(self.out, "where: {} == ", w.field.name);
        self.expr(&w.value);
    }

    fn clause(&mut self, word: &str, failure: Option<&Path>) {
        if let Some(f) = failure {
            let _ = write!(self.out, " {word}: ");
            self.path(f);
        }
    }

    fn match_expr(&mut self, scrutinee: &Expr, arms: &[MatchArm], end: u32) {
        self.out.push_str("match ");
        self.expr_before_brace(scrutinee);
        self.out.push(' ');
        self.braced(arms, Layout::Broken, end, |a| a.span, &|p, arm| {
            match &arm.pattern {
                Pattern::Success(v) => {
                    let _ = write!(p.out, "success({})", v.name);
                }
                Pattern::Failure(f) => {
                    p.out.push_str("failure ");
                    p.path(f);
                }
            }
            p.out.push_str(" => ");
            p.expr(&arm.body);
        });
    }
}
