//! Narrowing of optionals (design section 3): inside `if x != none { }`,
//! and in the `else` of `if x == none { }`, the local `x` of type `T?` is a
//! `T`. Conditions joined by `and` narrow their `then` side, by `or` their
//! `else` side, and `not` swaps the two.

use crate::ast::{self, BinOp, ExprKind, UnOp};

use super::body::{Cx, Narrow};
use super::tables::Ty;
use super::Resolver;

impl Resolver<'_, '_> {
    /// The locals a condition proves are not `none`: when it holds, and
    /// when it does not.
    pub(super) fn narrowings(&self, cx: &Cx, cond: &ast::Expr) -> (Vec<Narrow>, Vec<Narrow>) {
        match &cond.kind {
            ExprKind::Binary(op @ (BinOp::Ne | BinOp::Eq), l, r) => {
                let Some(n) = self.compared_with_none(cx, l, r) else {
                    return Default::default();
                };
                if *op == BinOp::Ne {
                    (vec![n], Vec::new())
                } else {
                    (Vec::new(), vec![n])
                }
            }
            ExprKind::Binary(BinOp::And, l, r) => {
                let (mut yes, _) = self.narrowings(cx, l);
                yes.extend(self.narrowings(cx, r).0);
                (yes, Vec::new())
            }
            ExprKind::Binary(BinOp::Or, l, r) => {
                let (_, mut no) = self.narrowings(cx, l);
                no.extend(self.narrowings(cx, r).1);
                (Vec::new(), no)
            }
            ExprKind::Unary(UnOp::Not, inner) => {
                let (yes, no) = self.narrowings(cx, inner);
                (no, yes)
            }
            _ => Default::default(),
        }
    }

    /// `x != none` or `none != x`, `x` an optional local.
    fn compared_with_none(&self, cx: &Cx, l: &ast::Expr, r: &ast::Expr) -> Option<Narrow> {
        let local = match (&l.kind, &r.kind) {
            (ExprKind::Path(p), ExprKind::None) | (ExprKind::None, ExprKind::Path(p)) => {
                match p.segments.as_slice() {
                    [one] => cx.local(one.name)?,
                    _ => return None,
                }
            }
            _ => return None,
        };
        let Ty::Optional(inner) = self.base_of(&local.ty) else {
            return None;
        };
        Some(Narrow {
            name: local.name,
            slot: local.slot,
            ty: (**inner).clone(),
        })
    }
}
