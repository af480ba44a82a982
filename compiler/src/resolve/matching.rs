//! `match call(...) { success(v) => e  failure F => e | reject G | propagate }`:
//! exhaustiveness over the call's failures, and lowering of the arms.

use crate::ast::{self, ExprKind, Pattern};
use crate::diag::{Diagnostic, Edit};
use crate::ir::{self, FailureId};
use crate::span::Span;

use super::body::{Cx, Escape, Typed, Why};
use super::calls::{Outcome, Pending};
use super::tables::Ty;
use super::Resolver;
use crate::ir::code;

/// What checking the arms learned.
#[derive(Default)]
struct ArmsSeen {
    success: Option<Span>,
    named: Vec<(FailureId, Span)>,
    /// An arm named a failure that could not be resolved.
    unresolved: bool,
    /// Value arms: their type and span.
    values: Vec<(Ty, Span, bool)>,
}

impl<'a> Resolver<'_, 'a> {
    pub(super) fn match_expr(
        &mut self,
        cx: &mut Cx,
        span: Span,
        scrutinee: &ast::Expr,
        arms: &[ast::MatchArm],
        expected: Option<&Ty>,
        out: &mut ir::Block,
    ) -> Typed {
        let mut pending = match self.effect_target(cx, scrutinee, out) {
            Outcome::Effect(p) => p,
            Outcome::Pure(t) => {
                if !t.ty.is_error() && !matches!(scrutinee.kind, ExprKind::Error) {
                    let d = Diagnostic::error(
                        "failure.match_needs_call",
                        scrutinee.span,
                        "`match` needs a call or write that can fail",
                    )
                    .with_reason("a `match` handles the success and each failure of one call")
                    .with_fix("use `if` to branch on a value");
                    self.error(d);
                }
                self.arms_without_call(cx, arms);
                return Typed::error(span);
            }
            Outcome::Impure(_) => {
                self.arms_without_call(cx, arms);
                return Typed::error(span);
            }
            Outcome::Failed => {
                cx.uncertain = true;
                self.arms_without_call(cx, arms);
                return Typed::error(span);
            }
        };
        let mut seen = ArmsSeen::default();
        let mut lowered = Vec::new();
        let mut code_arms = Vec::new();
        for arm in arms {
            if let Some((a, c)) = self.arm(cx, &pending, arm, expected, &mut seen) {
                lowered.push(a);
                if self.code {
                    code_arms.push(c);
                }
            }
        }
        self.check_exhaustive(cx, span, scrutinee.span, &pending, &seen);
        let scrutinee_code = pending.take_code(scrutinee.span);
        out.nodes.push(ir::Node::Effect(ir::Effect {
            span: pending.span,
            target: pending.target.clone(),
            handling: ir::Handling::Match(lowered),
        }));
        let ty = self.match_type(cx, &seen);
        self.typed(ty, span, || code::ExprKind::Match {
            scrutinee: Box::new(scrutinee_code),
            arms: code_arms,
        })
    }

    /// Checks arm bodies when the matched call is unknown: names only.
    fn arms_without_call(&mut self, cx: &mut Cx, arms: &[ast::MatchArm]) {
        for arm in arms {
            cx.scopes.push(Vec::new());
            if let Pattern::Success(v) = &arm.pattern {
                cx.bind(v.name, Ty::Error, false);
            }
            let mut sink = ir::Block::default();
            self.arm_body(cx, None, &arm.body, None, &mut sink);
            cx.scopes.pop();
        }
    }

    fn arm(
        &mut self,
        cx: &mut Cx,
        p: &Pending,
        arm: &ast::MatchArm,
        expected: Option<&Ty>,
        seen: &mut ArmsSeen,
    ) -> Option<(ir::Arm, code::Arm)> {
        let mut body = ir::Block::default();
        cx.scopes.push(Vec::new());
        let (pattern, code_pattern) = match &arm.pattern {
            Pattern::Success(v) => {
                if let Some(first) = seen.success {
                    self.report_repeated_arm(arm.pattern_span, first, "success");
                }
                seen.success.get_or_insert(arm.pattern_span);
                let slot = cx.bind(v.name, p.ty.clone(), false);
                (
                    Some(ir::ArmPattern::Success),
                    Some(code::ArmPattern::Success(slot)),
                )
            }
            Pattern::Failure(path) => {
                let found = self.failure_pattern(cx, p, path, arm.pattern_span, seen);
                let code = found.map(|f| match f {
                    ir::ArmPattern::Failure(f) => code::ArmPattern::Failure(f),
                    ir::ArmPattern::Success => code::ArmPattern::Success(code::Local(0)),
                });
                (found, code)
            }
        };
        let failure = match pattern {
            Some(ir::ArmPattern::Failure(f)) => Some(f),
            _ => None,
        };
        let (end, ty, arm_code) = self.arm_body(cx, failure, &arm.body, expected, &mut body);
        cx.scopes.pop();
        if let Some(ty) = ty {
            let is_success = matches!(pattern, Some(ir::ArmPattern::Success));
            seen.values.push((ty, arm.body.span, is_success));
        }
        if matches!(arm.body.kind, ExprKind::Propagate) && failure.is_none() && pattern.is_some() {
            let d = Diagnostic::error(
                "failure.propagate_success",
                arm.body.span,
                "a `success` arm has no failure to propagate",
            )
            .with_fix("yield the value: `success(v) => v`");
            self.error(d);
        }
        let lowered = ir::Arm {
            span: arm.span,
            pattern: pattern?,
            body,
            end,
        };
        let code = code::Arm {
            pattern: code_pattern?,
            body: arm_code,
            span: arm.span,
        };
        Some((lowered, code))
    }

    fn failure_pattern(
        &mut self,
        cx: &mut Cx,
        p: &Pending,
        path: &ast::Path,
        span: Span,
        seen: &mut ArmsSeen,
    ) -> Option<ir::ArmPattern> {
        if matches!(path.segments.as_slice(), [one] if one.name.as_str() == "_") {
            let d = Diagnostic::error("failure.match_wildcard", path.span, "a `match` cannot have a wildcard failure arm")
                .with_reason("each failure is handled by name, so adding a failure to an operation shows every place that must decide about it")
                .with_fix("write one `failure F =>` arm for each failure the call can have");
            self.error(d);
            seen.unresolved = true;
            return None;
        }
        let Some(f) = self.find_failure(cx.unit, path) else {
            seen.unresolved = true;
            cx.uncertain = true;
            return None;
        };
        if let Some((_, first)) = seen.named.iter().find(|(g, _)| *g == f) {
            let first = *first;
            self.report_repeated_arm(span, first, &path.text());
            return None;
        }
        let possible = p.failures.contains(&f) || (p.transient && self.is_transient(f));
        if !possible {
            self.report_impossible_arm(cx, p, path);
            return None;
        }
        seen.named.push((f, span));
        Some(ir::ArmPattern::Failure(f))
    }

    /// Lowers an arm's body; returns how it ends, for a value its type, and
    /// its code.
    fn arm_body(
        &mut self,
        cx: &mut Cx,
        failure: Option<FailureId>,
        body: &ast::Expr,
        expected: Option<&Ty>,
        out: &mut ir::Block,
    ) -> (ir::ArmEnd, Option<Ty>, code::Expr) {
        let span = body.span;
        match &body.kind {
            ExprKind::Reject(r) => match self.reject(cx, r, out) {
                (Some(rej), Some(code)) => (
                    ir::ArmEnd::Reject(rej),
                    None,
                    code::Expr::new(code::ExprKind::Reject(code), span),
                ),
                _ => (ir::ArmEnd::Value, None, code::Expr::error(span)),
            },
            ExprKind::Propagate => {
                if let Some(f) = failure {
                    cx.escapes.push(Escape {
                        failure: f,
                        span,
                        why: Why::Propagated,
                    });
                }
                let code = code::Expr::new(code::ExprKind::Propagate, span);
                (ir::ArmEnd::Propagate(span), None, code)
            }
            ExprKind::Block(b) => {
                let (block, code) = self.scoped_block(cx, b, &[]);
                out.nodes.extend(block.nodes);
                let code = code::Expr::new(code::ExprKind::Block(code), span);
                (ir::ArmEnd::Value, None, code)
            }
            _ => {
                let value = self.expr(cx, body, expected, out);
                (ir::ArmEnd::Value, Some(value.ty), value.code)
            }
        }
    }

    fn match_type(&mut self, cx: &Cx, seen: &ArmsSeen) -> Ty {
        let base = seen
            .values
            .iter()
            .find(|v| v.2)
            .or_else(|| seen.values.iter().find(|v| !matches!(v.0, Ty::NoneValue)))
            .map(|v| v.0.clone());
        let Some(mut result) = base else {
            return if seen.values.is_empty() {
                Ty::Error
            } else {
                Ty::NoneValue
            };
        };
        for (ty, span, _) in &seen.values {
            if matches!(ty, Ty::NoneValue) {
                if !matches!(result, Ty::Optional(_) | Ty::Error) {
                    result = Ty::Optional(Box::new(result));
                }
            } else if !self.accepts(&result, ty) {
                self.report_mismatch(cx.unit, *span, &result, ty);
            }
        }
        result
    }

    fn check_exhaustive(
        &mut self,
        cx: &Cx,
        span: Span,
        scrutinee: Span,
        p: &Pending,
        seen: &ArmsSeen,
    ) {
        let head = Span {
            end: scrutinee.end,
            ..span
        };
        if seen.success.is_none() {
            let d = Diagnostic::error(
                "failure.match_missing_success",
                head,
                format!("this `match` on `{}` has no `success` arm", p.label),
            )
            .with_reason("a `match` handles the call's success and each of its failures")
            .with_fix("add `success(v) => v`");
            self.error(d);
        }
        if seen.unresolved || self.unreadable(span) {
            return;
        }
        let missing: Vec<FailureId> = p
            .failures
            .iter()
            .copied()
            .filter(|f| !seen.named.iter().any(|(g, _)| g == f))
            .collect();
        if missing.is_empty() {
            return;
        }
        let names: Vec<String> = missing
            .iter()
            .map(|f| self.failure_name(*f, cx.unit))
            .collect();
        let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        let arms: String = names
            .iter()
            .map(|n| format!("    failure {n} => propagate\n"))
            .collect();
        let close = Span {
            start: span.end.saturating_sub(1),
            end: span.end.saturating_sub(1),
            ..span
        };
        let d = Diagnostic::error(
            "failure.match_not_exhaustive",
            head,
            format!("this `match` does not handle {}", quoted.join(", ")),
        )
        .with_label(format!("`{}` can also fail with {}", p.label, quoted.join(", ")))
        .with_reason("a `match` names every failure the call can have (only `Unavailable` and `RateLimited` may be left out); there is no wildcard")
        .with_edit_fix("add an arm for each", vec![Edit { span: close, replacement: arms }]);
        self.error(d);
    }

    fn report_repeated_arm(&mut self, span: Span, first: Span, what: &str) {
        let d = Diagnostic::error(
            "failure.repeated_arm",
            span,
            format!("`{what}` is matched twice"),
        )
        .with_related(first, "first matched here")
        .with_fix("remove one of the two arms");
        self.error(d);
    }

    fn report_impossible_arm(&mut self, cx: &Cx, p: &Pending, path: &ast::Path) {
        let mut names: Vec<String> = p
            .failures
            .iter()
            .map(|f| format!("`{}`", self.failure_name(*f, cx.unit)))
            .collect();
        if p.transient {
            names.push("`Unavailable`".to_string());
            names.push("`RateLimited`".to_string());
        }
        let possible = if names.is_empty() {
            "nothing".to_string()
        } else {
            names.join(", ")
        };
        let d = Diagnostic::error(
            "failure.impossible_arm",
            path.span,
            format!("`{}` cannot fail with `{}`", p.label, path.text()),
        )
        .with_label("this failure never comes from this call")
        .with_reason(format!("`{}` can fail with {possible}", p.label))
        .with_fix("remove this arm");
        self.error(d);
    }
}
