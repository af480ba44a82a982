//! Store reads (design section 3): `query optional E { where: ... }` is an
//! `E?`, `query required E { where: ... missing: F }` an `E` that fails
//! with F, and `query many E { where: ... limit: N }` a
//! `List<E> { max_length: N }`. A read of the store is no outside call: it
//! is never a step, and is allowed anywhere in an action, loops included;
//! never in a function.

use std::borrow::Cow;
use std::sync::Arc;

use crate::ast::{self, BinOp, ExprKind, QueryMode};
use crate::diag::Diagnostic;
use crate::intern::Name;
use crate::ir::code;
use crate::ir::{self, FailureId};
use crate::span::Span;

use super::body::Label;
use super::body::{BodyKind, Cx, Typed};
use super::calls::{Outcome, Pending};
use super::tables::{Bounds, FieldDef, Ty};
use super::Resolver;

/// The largest `limit:` of `query many`.
pub const MAX_LIMIT: i64 = 1000;

/// What a query's settings said.
#[derive(Default)]
struct Parts {
    filter: Vec<(Name, code::Expr)>,
    /// The fields of `where:`, whatever the lowering.
    fields: Vec<Name>,
    has_where: bool,
    missing: Option<FailureId>,
    missing_unresolved: bool,
    limit: Option<u32>,
    limit_given: bool,
}

impl<'r> Resolver<'r, '_> {
    pub(super) fn query(
        &mut self,
        cx: &mut Cx,
        span: Span,
        mode: QueryMode,
        entity: &ast::Path,
        settings: &[ast::FieldInit],
        out: &mut ir::Block,
    ) -> Outcome<'r> {
        let found = self.find_entity(cx.unit, entity);
        let defs = found.and_then(|(_, t)| self.record_of(t));
        let ty = found.map_or(Ty::Error, |(_, t)| Ty::Named(t));
        let parts = self.query_parts(cx, mode, &ty, defs, settings, out);
        if cx.kind.pure() {
            self.report_query_in_function(span, mode, cx.kind);
            return Outcome::Impure(Typed::error(span));
        }
        self.check_query_complete(span, entity, mode, &parts);
        let Some((entity_id, _)) = found else {
            return Outcome::Failed;
        };
        if !cx.called {
            cx.read_first.push(entity_id);
        }
        if !parts.fields.is_empty() {
            cx.reads.queries.push((entity_id, parts.fields.clone()));
        }
        let result = match mode {
            QueryMode::Optional => Ty::Optional(Box::new(ty)),
            QueryMode::Required => ty,
            QueryMode::Many => {
                let bounds = Bounds {
                    max_length: parts.limit.map(u64::from),
                    ..Bounds::default()
                };
                Ty::Bounded(Box::new(Ty::List(Box::new(ty))), Arc::new(bounds))
            }
        };
        let query = code::Query {
            mode: code_mode(mode),
            entity: entity_id,
            filter: parts.filter,
            missing: parts.missing,
            limit: parts.limit,
        };
        match (mode, parts.missing) {
            (QueryMode::Required, Some(missing)) => Outcome::Effect(Pending {
                span: Span::new(span.file, span.start, entity.span.end.max(span.start)),
                target: ir::Target::Check(ir::Check {
                    failure: missing,
                    query: Some(entity_id),
                }),
                failures: Cow::Owned(vec![missing]),
                transient: false,
                ty: result,
                label: Label::prefixed("query required", entity),
                code: self.lower(|| Some(code::Fallible::Query(query))),
            }),
            (QueryMode::Required, None) if parts.missing_unresolved => {
                cx.uncertain = true;
                Outcome::Failed
            }
            _ => Outcome::Pure(self.typed(result, span, || code::ExprKind::Query(Box::new(query)))),
        }
    }

    fn query_parts(
        &mut self,
        cx: &mut Cx,
        mode: QueryMode,
        ty: &Ty,
        defs: Option<&[FieldDef]>,
        settings: &[ast::FieldInit],
        out: &mut ir::Block,
    ) -> Parts {
        let mut parts = Parts::default();
        let allowed = allowed(mode);
        for (i, s) in settings.iter().enumerate() {
            if let Some(first) = settings[..i].iter().find(|o| o.name.name == s.name.name) {
                self.report_duplicate("setting", s.name, first.name.span);
                continue;
            }
            match s.name.name.as_str() {
                "where" => {
                    parts.has_where = true;
                    (parts.filter, parts.fields) = self.query_where(cx, ty, defs, &s.value, out);
                }
                "missing" if mode == QueryMode::Required => {
                    parts.missing = self.query_missing(cx, &s.value);
                    parts.missing_unresolved = parts.missing.is_none();
                }
                "limit" if mode == QueryMode::Many => {
                    parts.limit_given = true;
                    parts.limit = self.query_limit(&s.value);
                }
                _ => {
                    self.expr(cx, &s.value, None, out);
                    let what = format!("`query {}` setting", mode.as_str());
                    self.report_unknown_key(s.name, &what, allowed);
                }
            }
        }
        parts
    }

    /// `where: a == x and b == y`: fields of the entity, each compared with
    /// a value of its type.
    fn query_where(
        &mut self,
        cx: &mut Cx,
        ty: &Ty,
        defs: Option<&[FieldDef]>,
        value: &ast::Expr,
        out: &mut ir::Block,
    ) -> (Vec<(Name, code::Expr)>, Vec<Name>) {
        let mut conds: Vec<(ast::Ident, &ast::Expr)> = Vec::new();
        if !split_conditions(value, &mut conds) {
            if !matches!(value.kind, ExprKind::Error) {
                self.report_where_shape(value.span);
            }
            return (Vec::new(), Vec::new());
        }
        let mut filter = Vec::new();
        let mut fields = Vec::new();
        for (i, (field, v)) in conds.iter().enumerate() {
            if let Some((first, _)) = conds[..i].iter().find(|(f, _)| f.name == field.name) {
                self.report_duplicate("condition on the field", *field, first.span);
                continue;
            }
            let code = self.entity_field(cx, ty, defs, (*field, v), out);
            fields.push(field.name);
            if self.code {
                filter.push((field.name, code));
            }
        }
        (filter, fields)
    }

    fn query_missing(&mut self, cx: &Cx, value: &ast::Expr) -> Option<FailureId> {
        match &value.kind {
            ExprKind::Path(p) => self.find_failure(cx.unit, p),
            ExprKind::Error => None,
            _ => {
                let d = Diagnostic::error(
                    "type.setting_value",
                    value.span,
                    "`missing:` needs the failure to fail with when no row matches",
                )
                .with_fix("name a failure, such as `missing: SubscriptionUnknown`");
                self.error(d);
                None
            }
        }
    }

    fn query_limit(&mut self, value: &ast::Expr) -> Option<u32> {
        if let ExprKind::Int(n) = value.kind {
            if (1..=MAX_LIMIT).contains(&n) {
                return u32::try_from(n).ok();
            }
        }
        if matches!(value.kind, ExprKind::Error) {
            return None;
        }
        let d = Diagnostic::error(
            "type.query_limit",
            value.span,
            format!("`limit:` needs a whole number from 1 to {MAX_LIMIT}"),
        )
        .with_label("out of range")
        .with_reason("`query many` reads at most `limit` rows, so the list it gives has a known maximum length")
        .with_fix("write a literal such as `limit: 100`");
        self.error(d);
        None
    }

    /// The settings a query of this mode cannot do without.
    fn check_query_complete(&mut self, span: Span, entity: &ast::Path, mode: QueryMode, p: &Parts) {
        let head = Span::new(span.file, span.start, entity.span.end.max(span.start));
        let needs_where = mode != QueryMode::Many;
        if needs_where && !p.has_where {
            self.report_missing_query_setting(head, mode, "where", "where: id == value");
        }
        if mode == QueryMode::Required && p.missing.is_none() && !p.missing_unresolved {
            self.report_missing_query_setting(head, mode, "missing", "missing: NotFoundFailure");
        }
        if mode == QueryMode::Many && !p.limit_given {
            let d = Diagnostic::error(
                "type.query_limit",
                head,
                "`query many` needs a `limit:`",
            )
            .with_label("reads how many rows?")
            .with_reason("`query many` reads at most `limit` rows, so the list it gives has a known maximum length")
            .with_fix(format!("add `limit: 100` (from 1 to {MAX_LIMIT})"));
            self.error(d);
        }
    }

    fn report_missing_query_setting(
        &mut self,
        at: Span,
        mode: QueryMode,
        key: &str,
        example: &str,
    ) {
        let why = match key {
            "where" => "it reads the row whose fields match the condition",
            _ => "it fails with that failure when no row matches",
        };
        let d = Diagnostic::error(
            "name.missing_setting",
            at,
            format!("`query {}` needs `{key}:`", mode.as_str()),
        )
        .with_label(format!("no `{key}:` here"))
        .with_reason(format!("a `query {}` {why}", mode.as_str()))
        .with_fix(format!("add `{example}` inside its braces"));
        self.error(d);
    }

    fn report_where_shape(&mut self, at: Span) {
        let d = Diagnostic::error(
            "type.query_where",
            at,
            "`where:` compares fields of the entity with `==`, joined by `and`",
        )
        .with_label("not `field == value` conditions")
        .with_reason("a query reads the rows whose fields equal the given values")
        .with_fix("write `where: customer == customer.id and plan == price.id`");
        self.error(d);
    }

    fn report_query_in_function(&mut self, span: Span, mode: QueryMode, kind: BodyKind) {
        let d = Diagnostic::error(
            "purity.query",
            span,
            format!(
                "{} cannot read the store (`query {}`)",
                kind.noun(),
                mode.as_str()
            ),
        )
        .with_label("a store read")
        .with_reason("functions are pure: what they compute depends only on their arguments")
        .with_fix("read the rows in the action and pass them to the function");
        self.error(d);
    }
}

/// `a == x and b == y` as its `(field, value)` conditions; false when the
/// condition has another shape.
fn split_conditions<'e>(e: &'e ast::Expr, out: &mut Vec<(ast::Ident, &'e ast::Expr)>) -> bool {
    match &e.kind {
        ExprKind::Binary(BinOp::And, l, r) => split_conditions(l, out) && split_conditions(r, out),
        ExprKind::Binary(BinOp::Eq, l, r) => match &l.kind {
            ExprKind::Path(p) if p.segments.len() == 1 => match p.segments.first() {
                Some(field) => {
                    out.push((*field, r));
                    true
                }
                None => false,
            },
            _ => false,
        },
        _ => false,
    }
}

fn allowed(mode: QueryMode) -> &'static [&'static str] {
    match mode {
        QueryMode::Optional => &["where"],
        QueryMode::Required => &["where", "missing"],
        QueryMode::Many => &["where", "limit"],
    }
}

fn code_mode(mode: QueryMode) -> code::QueryMode {
    match mode {
        QueryMode::Optional => code::QueryMode::Optional,
        QueryMode::Required => code::QueryMode::Required,
        QueryMode::Many => code::QueryMode::Many,
    }
}
