//! Validated construction (design section 3, "Computed values"): `T(e)`
//! turns a value of T's primitive into the declared type T. A literal is
//! checked when compiling and cannot fail; a computed value is checked when
//! the code runs and fails with `InvalidValue`. `Text(e)` writes a number,
//! flag, id, instant or duration as text and never fails.

use std::borrow::Cow;

use crate::ast::{self, ExprKind};
use crate::diag::Diagnostic;
use crate::ir::code;
use crate::ir::{self, FailureKind};
use crate::span::Span;

use super::body::Label;
use super::body::{Cx, Typed};
use super::calls::{Outcome, Pending};
use super::tables::{Prim, Ty};
use super::Resolver;

/// The primitives `Text(e)` writes as text.
const WRITTEN_AS_TEXT: [Prim; 7] = [
    Prim::Int,
    Prim::Decimal,
    Prim::Bool,
    Prim::Uuid,
    Prim::Instant,
    Prim::Duration,
    Prim::Text,
];

impl<'r> Resolver<'r, '_> {
    /// `T(e)` where `T` names a type.
    pub(super) fn validated(
        &mut self,
        cx: &mut Cx,
        span: Span,
        path: &ast::Path,
        args: &[ast::Expr],
        out: &mut ir::Block,
    ) -> Outcome<'r> {
        let target = self.resolve_named_type(cx.unit, path, &[]);
        let [arg] = args else {
            self.field_values_only_exprs(cx, args, out);
            self.report_validate_arity(path, span, args);
            return Outcome::Failed;
        };
        if target.is_error() {
            self.expr(cx, arg, None, out);
            return Outcome::Failed;
        }
        if target == Ty::Prim(Prim::Text) {
            return Outcome::Pure(self.text_of(cx, span, arg, out));
        }
        let Some(prim) = self.prim_of(&target) else {
            self.expr(cx, arg, None, out);
            self.report_not_validatable(cx, path, &target);
            return Outcome::Failed;
        };
        if matches!(target, Ty::Prim(_)) {
            // `Int(n)`: a primitive has no constraints to check.
            return Outcome::Pure(self.expr(cx, arg, Some(&target), out));
        }
        if is_literal(arg) {
            let value = self.expr(cx, arg, Some(&target), out);
            let ty = target.clone();
            return Outcome::Pure(self.typed(target, span, || code::ExprKind::Validate {
                ty,
                value: Box::new(value.code),
                literal: true,
            }));
        }
        let value = self.expr(cx, arg, Some(&Ty::Prim(prim)), out);
        let invalid = self.prog.standard_failure(FailureKind::InvalidValue);
        Outcome::Effect(Pending {
            span: path.span,
            target: ir::Target::Check(ir::Check {
                failure: invalid,
                query: None,
            }),
            failures: Cow::Owned(vec![invalid]),
            transient: false,
            ty: target.clone(),
            label: Label::of(path),
            code: self.lower(|| {
                Some(code::Fallible::Validate {
                    ty: target,
                    value: value.code,
                })
            }),
        })
    }

    /// `Text(e)`
    fn text_of(&mut self, cx: &mut Cx, span: Span, arg: &ast::Expr, out: &mut ir::Block) -> Typed {
        let value = self.expr(cx, arg, None, out);
        let fits = value.ty.is_error()
            || self
                .prim_of(&value.ty)
                .is_some_and(|p| WRITTEN_AS_TEXT.contains(&p));
        if !fits {
            let found = self.type_name(&value.ty, cx.unit);
            let d = Diagnostic::error(
                "type.mismatch",
                arg.span,
                format!("`Text(...)` cannot write a `{found}` as text"),
            )
            .with_label(format!("this is a `{found}`"))
            .with_reason(
                "`Text(e)` writes an Int, Decimal, Bool, Uuid, Instant or Duration as text",
            )
            .with_fix("pass one of those, or a field of this value that is one");
            self.error(d);
        }
        self.typed(Ty::Prim(Prim::Text), span, || {
            code::ExprKind::TextOf(Box::new(value.code))
        })
    }

    fn report_validate_arity(&mut self, path: &ast::Path, span: Span, args: &[ast::Expr]) {
        let at = args.get(1).map_or(span, |a| a.span);
        let d = Diagnostic::error(
            "type.arity",
            at,
            format!(
                "`{}(...)` takes one value, {} given",
                path.text(),
                args.len()
            ),
        )
        .with_reason(
            "a validated construction turns one value of the type's primitive into the type",
        )
        .with_fix(format!("write `{}(value)`", path.text()));
        self.error(d);
    }

    fn report_not_validatable(&mut self, cx: &Cx, path: &ast::Path, target: &Ty) {
        let name = self.type_name(target, cx.unit);
        let mut d = Diagnostic::error(
            "type.not_validatable",
            path.span,
            format!("`{name}` is not built on a primitive, so `{name}(...)` cannot build it"),
        )
        .with_label("not built on a primitive")
        .with_reason("`T(e)` turns a value of T's primitive (Text, Int, Decimal, ...) into T");
        d = if self.record_fields(target).is_some() {
            d.with_fix(format!("build the record with `{name} {{ field: value }}`"))
        } else {
            d.with_fix(format!("write a `{name}` value directly"))
        };
        self.error(d);
    }
}

/// A literal, checked against the type when compiling.
fn is_literal(e: &ast::Expr) -> bool {
    match &e.kind {
        ExprKind::Int(_) | ExprKind::Decimal(_) | ExprKind::Str(_) | ExprKind::Bool(_) => true,
        ExprKind::Unary(ast::UnOp::Neg, inner) => {
            matches!(inner.kind, ExprKind::Int(_) | ExprKind::Decimal(_))
        }
        _ => false,
    }
}
