//! Expressions: names, fields, literals against constrained types,
//! constructions, lists and operators. Calls, `attempt`, `match` and writes
//! are in `calls.rs`.

use crate::ast::{self, BinOp, ExprKind, UnOp};
use crate::diag::Diagnostic;
use crate::ir::{self, Owner};
use crate::span::Span;

use super::body::{BodyKind, Cx, Typed};
use super::lookup::Found;
use super::tables::{FieldDef, Prim, Ty, TypeId, TypeKind};
use super::Resolver;
use crate::ir::code;

/// The code's operator for a source operator.
fn code_op(op: BinOp) -> code::BinOp {
    match op {
        BinOp::Eq => code::BinOp::Eq,
        BinOp::Ne => code::BinOp::Ne,
        BinOp::Lt => code::BinOp::Lt,
        BinOp::Le => code::BinOp::Le,
        BinOp::Gt => code::BinOp::Gt,
        BinOp::Ge => code::BinOp::Ge,
        BinOp::Add => code::BinOp::Add,
        BinOp::Sub => code::BinOp::Sub,
        BinOp::Mul => code::BinOp::Mul,
        BinOp::Div => code::BinOp::Div,
        BinOp::And => code::BinOp::And,
        BinOp::Or => code::BinOp::Or,
    }
}

/// A literal as the constraint checks see it.
enum Lit<'e> {
    Int(i64),
    Decimal(f64),
    Text(&'e str),
}

impl<'a> Resolver<'_, 'a> {
    /// Checks an expression, lowering the effects it contains into `out`,
    /// and checks its type against `expected` when given.
    pub(super) fn expr(
        &mut self,
        cx: &mut Cx,
        e: &ast::Expr,
        expected: Option<&Ty>,
        out: &mut ir::Block,
    ) -> Typed {
        let found = self.expr_inner(cx, e, expected, out);
        if let Some(exp) = expected {
            if !self.accepts(exp, &found.ty) {
                match self.base_of(&found.ty) {
                    Ty::Optional(inner) if self.accepts(exp, inner) => {
                        self.report_optional_use(cx.unit, e.span, exp, &found.ty)
                    }
                    _ => self.report_mismatch(cx.unit, e.span, exp, &found.ty),
                }
                return Typed {
                    ty: Ty::Error,
                    code: found.code,
                };
            }
        }
        found
    }

    fn expr_inner(
        &mut self,
        cx: &mut Cx,
        e: &ast::Expr,
        expected: Option<&Ty>,
        out: &mut ir::Block,
    ) -> Typed {
        let span = e.span;
        let typed = |ty: Ty, kind: code::ExprKind| Typed::new(ty, kind, span);
        match &e.kind {
            ExprKind::Int(n) => {
                let ty = self.literal(cx, span, Lit::Int(*n), Prim::Int, expected);
                typed(ty, code::ExprKind::Int(*n))
            }
            ExprKind::Decimal(s) => {
                let v = s.parse().unwrap_or(0.0);
                let ty = self.literal(cx, span, Lit::Decimal(v), Prim::Decimal, expected);
                self.typed(ty, span, || code::ExprKind::Decimal(s.as_str().into()))
            }
            ExprKind::Str(s) => {
                let ty = self.literal(cx, span, Lit::Text(s), Prim::Text, expected);
                self.typed(ty, span, || code::ExprKind::Text(s.as_str().into()))
            }
            ExprKind::Bool(b) => typed(Ty::Prim(Prim::Bool), code::ExprKind::Bool(*b)),
            ExprKind::None => typed(Ty::NoneValue, code::ExprKind::None),
            ExprKind::Duration(n, unit) => {
                let ms = i64::try_from(super::entries::duration_ms(*n, *unit)).unwrap_or(i64::MAX);
                typed(Ty::Prim(Prim::Duration), code::ExprKind::Duration(ms))
            }
            ExprKind::Path(p) => self.path_expr(cx, p, expected),
            ExprKind::Field(base, field) => {
                let base = self.expr(cx, base, None, out);
                let ty = self.field_of(cx.unit, &base.ty, *field);
                self.typed(ty, span, || {
                    code::ExprKind::Field(Box::new(base.code), vec![field.name])
                })
            }
            ExprKind::Call { .. }
            | ExprKind::Create { .. }
            | ExprKind::Update { .. }
            | ExprKind::Delete { .. }
            | ExprKind::Query { .. } => self.plain_effect(cx, e, out),
            ExprKind::Construct { ty, fields } => self.construct(cx, span, ty, fields, out),
            ExprKind::List(items) => self.list_expr(cx, span, items, expected, out),
            ExprKind::Unary(op, inner) => self.unary(cx, e, *op, inner, expected, out),
            ExprKind::Binary(op, l, r) => self.binary(cx, span, *op, l, r, out),
            ExprKind::Attempt(inner) => self.attempt_expr(cx, span, inner, out),
            ExprKind::Match { scrutinee, arms } => {
                self.match_expr(cx, span, scrutinee, arms, expected, out)
            }
            ExprKind::Count { kind, path } => self.count_expr(cx, span, *kind, path),
            ExprKind::Reject(r) => {
                let (rej, code) = self.reject(cx, r, out);
                if let Some(rej) = rej {
                    out.nodes.push(ir::Node::Reject(rej));
                }
                match code {
                    Some(c) => self.typed(Ty::Error, span, || code::ExprKind::Reject(c)),
                    None => Typed::error(span),
                }
            }
            ExprKind::Propagate => {
                let d = Diagnostic::error(
                    "failure.propagate_outside_match",
                    span,
                    "`propagate` is only allowed as a `match` arm",
                )
                .with_reason("`propagate` passes on the failure a `failure F =>` arm matched")
                .with_fix("use `attempt` on the call to pass all its failures on");
                self.error(d);
                Typed::error(span)
            }
            ExprKind::Block(b) => {
                let (block, code) = self.scoped_block(cx, b, &[]);
                out.nodes.extend(block.nodes);
                self.typed(Ty::unit(), span, || code::ExprKind::Block(code))
            }
            ExprKind::Error => Typed::error(span),
        }
    }

    pub(super) fn report_mismatch(&mut self, unit: Owner, span: Span, expected: &Ty, found: &Ty) {
        let (exp, got) = (self.type_name(expected, unit), self.type_name(found, unit));
        let mut d = Diagnostic::error(
            "type.mismatch",
            span,
            format!("expected `{exp}`, found `{got}`"),
        )
        .with_label(format!("this is a `{got}`"));
        let (pe, pf) = (self.prim_of(expected), self.prim_of(found));
        if pe.is_some() && pe == pf {
            d = d.with_reason(format!(
                "types are nominal: a `{got}` is not a `{exp}`, even though both are `{}`",
                pe.map_or("", Prim::as_str)
            ));
        }
        d = d.with_fix(format!("pass a `{exp}` value here"));
        self.error(d);
    }

    /// A literal is accepted where a type built on its primitive is
    /// expected, and checked against that type's constraints.
    fn literal(
        &mut self,
        cx: &Cx,
        span: Span,
        lit: Lit<'_>,
        prim: Prim,
        expected: Option<&Ty>,
    ) -> Ty {
        let Some(exp) = expected else {
            return Ty::Prim(prim);
        };
        let target = match exp.unbounded() {
            Ty::Optional(inner) => inner.as_ref(),
            _ => exp,
        };
        let fits = match self.prim_of(target) {
            Some(p) => p == prim || (p == Prim::Decimal && prim == Prim::Int),
            None => false,
        };
        if !fits {
            return Ty::Prim(prim);
        }
        self.check_literal(cx.unit, span, &lit, target);
        exp.clone()
    }

    fn check_literal(&mut self, unit: Owner, span: Span, lit: &Lit<'_>, ty: &Ty) {
        let tables = self.t;
        for b in tables.bounds_of(ty) {
            let problem = match lit {
                Lit::Int(n) => number_problem(*n as f64, b.min, b.max),
                Lit::Decimal(v) => number_problem(*v, b.min, b.max),
                Lit::Text(s) => text_problem(s, b),
            };
            if let Some(problem) = problem {
                let name = self.type_name(ty, unit);
                let d = Diagnostic::error(
                    "type.constraint",
                    span,
                    format!("this value does not fit `{name}`: {problem}"),
                )
                .with_reason(format!("a literal used as a `{name}` is checked against its constraints when compiling"))
                .with_fix("change the value to fit the type's constraints");
                self.error(d);
                return;
            }
        }
    }

    fn path_expr(&mut self, cx: &mut Cx, p: &ast::Path, expected: Option<&Ty>) -> Typed {
        let Some(first) = p.segments.first().copied() else {
            return Typed::error(p.span);
        };
        let rest = p.segments.get(1..).unwrap_or(&[]);
        if let Some(local) = cx.local(first.name) {
            let start = Typed::new(
                local.ty.clone(),
                code::ExprKind::Local(local.slot),
                first.span,
            );
            return self.walk_fields(cx.unit, start, rest);
        }
        match first.name.as_str() {
            "config" if !rest.is_empty() => return self.config_expr(cx, rest),
            "clock" if !rest.is_empty() => return self.clock_expr(cx, rest),
            _ => {}
        }
        if let Some(found) = self.enum_value(cx, p, expected) {
            return found;
        }
        let mut cands = cx.local_names();
        cands.push("config".to_string());
        cands.push("clock".to_string());
        let mut d = self.unknown_diag(
            "name.unknown_variable",
            "variable",
            first.span,
            first.name.as_str(),
            &cands,
        );
        if let Some(note) = &cx.entry_values {
            d = d.with_help(note.text());
        }
        self.error(d);
        cx.uncertain = true;
        Typed::error(p.span)
    }

    /// `base.a.b`: each field read in turn.
    pub(super) fn walk_fields(&mut self, unit: Owner, at: Typed, rest: &[ast::Ident]) -> Typed {
        let Some(last) = rest.last() else {
            return at;
        };
        let mut ty = at.ty;
        for seg in rest {
            if ty.is_error() {
                break;
            }
            ty = self.field_of(unit, &ty, *seg);
        }
        let span = at.code.span.to(last.span);
        self.typed(ty, span, || {
            let names = rest.iter().map(|s| s.name).collect();
            code::ExprKind::Field(Box::new(at.code), names)
        })
    }

    fn config_expr(&mut self, cx: &mut Cx, rest: &[ast::Ident]) -> Typed {
        let Some((entry, more)) = rest.split_first() else {
            return Typed::error(Span::default());
        };
        let found = self
            .unit(cx.unit)
            .config
            .get(&entry.name)
            .map(|c| c.ty.clone());
        match found {
            Some(ty) => {
                cx.reads.config.push(entry.name);
                let at = Typed::new(ty, code::ExprKind::Config(entry.name), entry.span);
                self.walk_fields(cx.unit, at, more)
            }
            None => {
                let cands: Vec<String> = self
                    .unit(cx.unit)
                    .config
                    .keys()
                    .map(|n| n.as_str().to_string())
                    .collect();
                self.report_unknown(
                    "name.unknown_config",
                    "config entry",
                    entry.span,
                    entry.name.as_str(),
                    &cands,
                );
                Typed::error(entry.span)
            }
        }
    }

    fn clock_expr(&mut self, cx: &mut Cx, rest: &[ast::Ident]) -> Typed {
        let Some((what, more)) = rest.split_first() else {
            return Typed::error(Span::default());
        };
        if what.name.as_str() == "now" {
            let at = Typed::new(Ty::Prim(Prim::Instant), code::ExprKind::ClockNow, what.span);
            return self.walk_fields(cx.unit, at, more);
        }
        self.report_unknown(
            "name.unknown_field",
            "clock value",
            what.span,
            what.name.as_str(),
            &["now".to_string()],
        );
        Typed::error(what.span)
    }

    /// `Tier.basic`, `pkg.Tier.basic`, or a bare `basic` where a `Tier` is
    /// expected. `None` when the path is not an enum value at all.
    fn enum_value(&mut self, cx: &Cx, p: &ast::Path, expected: Option<&Ty>) -> Option<Typed> {
        let variant_of =
            |t, name| Typed::new(Ty::Named(t), code::ExprKind::Variant(t, name), p.span);
        if let ([one], Some(exp)) = (p.segments.as_slice(), expected) {
            if let Some((t, variants)) = self.enum_of(exp) {
                if variants.contains(&one.name) {
                    return Some(variant_of(t, one.name));
                }
            }
        }
        let (variant, ty_segs) = p.segments.split_last()?;
        if ty_segs.is_empty() {
            return None;
        }
        let ty_path = ast::Path {
            segments: ty_segs.to_vec(),
            span: ty_segs.first()?.span.to(ty_segs.last()?.span),
        };
        let Found::Yes(decl) = self.lookup_decl(cx.unit, &ty_path) else {
            return None;
        };
        let t = decl.as_type()?;
        let (_, variants) = self.enum_of(&Ty::Named(t))?;
        if variants.contains(&variant.name) {
            return Some(variant_of(t, variant.name));
        }
        let cands: Vec<String> = variants.iter().map(|v| v.as_str().to_string()).collect();
        self.report_unknown(
            "name.unknown_variant",
            "variant",
            variant.span,
            variant.name.as_str(),
            &cands,
        );
        Some(Typed::error(p.span))
    }

    /// `value.field`, with "did you mean" among the record's fields.
    pub(super) fn field_of(&mut self, unit: Owner, ty: &Ty, field: ast::Ident) -> Ty {
        if ty.is_error() {
            return Ty::Error;
        }
        if let Ty::Optional(inner) = self.base_of(ty) {
            let inner = (**inner).clone();
            if self.record_fields(&inner).is_some() {
                self.report_optional_field(unit, field, ty);
                return Ty::Error;
            }
        }
        let Some((t, fields)) = self.record_fields(ty) else {
            let name = self.type_name(ty, unit);
            let d = Diagnostic::error(
                "type.no_fields",
                field.span,
                format!("a `{name}` has no field `{}`", field.name),
            )
            .with_reason(format!("`{name}` is not a record"))
            .with_fix("use the value itself, or a record type's field");
            self.error(d);
            return Ty::Error;
        };
        if let Some(f) = fields.iter().find(|f| f.name == field.name) {
            return f.ty.clone();
        }
        let cands: Vec<String> = fields.iter().map(|f| f.name.as_str().to_string()).collect();
        let owner = self.type_name(&Ty::Named(t), unit);
        let declared = self.declared_at(&Ty::Named(t));
        self.report_unknown_field((&owner, declared), field.span, field.name.as_str(), &cands);
        Ty::Error
    }

    fn report_optional_field(&mut self, unit: Owner, field: ast::Ident, ty: &Ty) {
        let name = self.type_name(ty, unit);
        let d = Diagnostic::error(
            "type.optional",
            field.span,
            format!(
                "`{name}` may be `none`: its field `{}` cannot be read here",
                field.name
            ),
        )
        .with_label("read from a value that may be `none`")
        .with_reason(format!(
            "a `{name}` is not a `{}`; it is one only where a condition has ruled `none` out",
            name.trim_end_matches('?')
        ))
        .with_fix(
            "read it inside `if value != none { ... }` (or in the `else` of `if value == none`)",
        );
        self.error(d);
    }

    /// A `T?` used where a `T` is expected: the fix is the narrowing.
    pub(super) fn report_optional_use(
        &mut self,
        unit: Owner,
        span: Span,
        expected: &Ty,
        found: &Ty,
    ) {
        let (exp, got) = (self.type_name(expected, unit), self.type_name(found, unit));
        let d = Diagnostic::error(
            "type.optional",
            span,
            format!("expected `{exp}`, found `{got}`, which may be `none`"),
        )
        .with_label(format!("this is a `{got}`"))
        .with_reason(format!(
            "a `{got}` is not a `{exp}`; it is one only where a condition has ruled `none` out"
        ))
        .with_fix(
            "use it inside `if value != none { ... }` (or in the `else` of `if value == none`)",
        );
        self.error(d);
    }

    /// `Type { field: value }`
    fn construct(
        &mut self,
        cx: &mut Cx,
        span: Span,
        path: &ast::Path,
        fields: &[ast::FieldInit],
        out: &mut ir::Block,
    ) -> Typed {
        let ty = self.resolve_named_type(cx.unit, path, &[]);
        let Ty::Named(t) = ty else {
            self.field_values_only(cx, fields, out);
            if !ty.is_error() {
                self.report_not_record(cx.unit, path.span, &ty);
            }
            return Typed::error(span);
        };
        match self.record_of(t) {
            Some(defs) => {
                let code = self.check_inits(cx, path.span, &Ty::Named(t), defs, fields, out);
                self.typed(Ty::Named(t), span, || code::ExprKind::Construct {
                    ty: t,
                    fields: code,
                })
            }
            None => {
                self.field_values_only(cx, fields, out);
                self.report_not_record(cx.unit, path.span, &Ty::Named(t));
                Typed::error(span)
            }
        }
    }

    fn report_not_record(&mut self, unit: Owner, span: Span, ty: &Ty) {
        let name = self.type_name(ty, unit);
        let d = Diagnostic::error(
            "type.not_a_record",
            span,
            format!("`{name}` is not a record and cannot be built with `{{ }}`"),
        )
        .with_fix(format!("write a `{name}` value directly"));
        self.error(d);
    }

    /// Checks the values of fields whose target is unknown, for their effects
    /// and names only.
    pub(super) fn field_values_only(
        &mut self,
        cx: &mut Cx,
        fields: &[ast::FieldInit],
        out: &mut ir::Block,
    ) {
        for f in fields {
            self.expr(cx, &f.value, None, out);
        }
    }

    /// Field initialisers against a record type's declared fields.
    pub(super) fn check_inits(
        &mut self,
        cx: &mut Cx,
        at: Span,
        ty: &Ty,
        defs: &[FieldDef],
        fields: &[ast::FieldInit],
        out: &mut ir::Block,
    ) -> Vec<(crate::intern::Name, code::Expr)> {
        let owner = self.type_name(ty, cx.unit);
        let declared = self.declared_at(ty);
        self.check_fields(cx, at, (&owner, declared), defs, fields, out)
    }

    /// Field initialisers against declared fields (of a record, or of a
    /// failure given by `reject`): unknown, repeated, mistyped and missing
    /// fields. Returns each given field's code.
    pub(super) fn check_fields(
        &mut self,
        cx: &mut Cx,
        at: Span,
        (owner, declared): (&str, Option<Span>),
        defs: &[FieldDef],
        fields: &[ast::FieldInit],
        out: &mut ir::Block,
    ) -> Vec<(crate::intern::Name, code::Expr)> {
        let mut code = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            if let Some(first) = fields[..i].iter().find(|g| g.name.name == f.name.name) {
                self.report_duplicate("field", f.name, first.name.span);
                self.expr(cx, &f.value, None, out);
                continue;
            }
            match defs.iter().find(|d| d.name == f.name.name) {
                Some(def) => {
                    let value = self.expr(cx, &f.value, Some(&def.ty), out);
                    if self.code {
                        code.push((f.name.name, value.code));
                    }
                }
                None => {
                    self.expr(cx, &f.value, None, out);
                    let cands: Vec<String> =
                        defs.iter().map(|d| d.name.as_str().to_string()).collect();
                    let name = f.name.name.as_str();
                    self.report_unknown_field((owner, declared), f.name.span, name, &cands);
                }
            }
        }
        let missing: Vec<&FieldDef> = defs
            .iter()
            .filter(|d| !d.optional && !fields.iter().any(|f| f.name.name == d.name))
            .collect();
        // In a file the parser had to recover, a field may have been
        // dropped with its broken line: what is missing is not judged.
        let unreadable = self.unreadable(at)
            || fields
                .iter()
                .any(|f| matches!(f.value.kind, ExprKind::Error));
        if missing.is_empty() || unreadable {
            return code;
        }
        let names: Vec<String> = missing.iter().map(|d| format!("`{}`", d.name)).collect();
        let mut d = Diagnostic::error(
            "type.missing_field",
            at,
            format!("`{owner}` needs {}", names.join(", ")),
        )
        .with_label(format!("missing {}", names.join(", ")))
        .with_reason("only fields marked `optional` may be left out")
        .with_fix(format!("add {}", names.join(", ")));
        for m in missing {
            d = d.with_related(m.span, format!("`{}` is declared here", m.name));
        }
        self.error(d);
        code
    }

    fn list_expr(
        &mut self,
        cx: &mut Cx,
        span: Span,
        items: &[ast::Expr],
        expected: Option<&Ty>,
        out: &mut ir::Block,
    ) -> Typed {
        let elem_expected = expected.and_then(|e| match self.base_of(e) {
            Ty::List(inner) => Some((**inner).clone()),
            Ty::Optional(inner) => match self.base_of(inner) {
                Ty::List(i) => Some((**i).clone()),
                _ => None,
            },
            _ => None,
        });
        let mut first: Option<Ty> = None;
        let mut code = Vec::new();
        for item in items {
            let t = match (&elem_expected, &first) {
                (Some(want), _) => self.expr(cx, item, Some(want), out),
                (None, Some(want)) => {
                    let want = want.clone();
                    let t = self.expr_inner(cx, item, Some(&want), out);
                    if !self.accepts(&want, &t.ty) {
                        self.report_list_mix(cx.unit, item.span, &want, &t.ty);
                    }
                    t
                }
                (None, None) => self.expr(cx, item, None, out),
            };
            if first.is_none() && !t.ty.is_error() {
                first = Some(t.ty);
            }
            if self.code {
                code.push(t.code);
            }
        }
        let ty = match (expected, elem_expected) {
            (Some(exp), Some(_)) => {
                self.check_list_length(cx, span, items.len(), exp);
                exp.clone()
            }
            _ => Ty::List(Box::new(first.unwrap_or(Ty::Error))),
        };
        self.typed(ty, span, || code::ExprKind::List(code))
    }

    fn report_list_mix(&mut self, unit: Owner, span: Span, first: &Ty, found: &Ty) {
        let (f, g) = (self.type_name(first, unit), self.type_name(found, unit));
        let d = Diagnostic::error(
            "type.mismatch",
            span,
            format!("a list holds items of one type: the first is a `{f}`, this is a `{g}`"),
        )
        .with_label(format!("this is a `{g}`"))
        .with_fix(format!("make every item a `{f}`, or use separate lists"));
        self.error(d);
    }

    fn check_list_length(&mut self, cx: &Cx, span: Span, n: usize, exp: &Ty) {
        let n = n as u64;
        let too_many = self
            .bounds_of(exp)
            .filter_map(|b| b.max_length)
            .find(|m| n > *m);
        if let Some(max) = too_many {
            let d = Diagnostic::error(
                "type.constraint",
                span,
                format!(
                    "this list has {n} items, more than the {max} `{}` allows",
                    self.type_name(exp, cx.unit)
                ),
            )
            .with_fix(format!("keep at most {max} items"));
            self.error(d);
        }
    }

    fn unary(
        &mut self,
        cx: &mut Cx,
        e: &ast::Expr,
        op: UnOp,
        inner: &ast::Expr,
        expected: Option<&Ty>,
        out: &mut ir::Block,
    ) -> Typed {
        let span = e.span;
        match op {
            UnOp::Not => {
                let v = self.expr(cx, inner, Some(&Ty::Prim(Prim::Bool)), out);
                self.typed(Ty::Prim(Prim::Bool), span, || {
                    code::ExprKind::Not(Box::new(v.code))
                })
            }
            UnOp::Neg => match &inner.kind {
                ExprKind::Int(n) => {
                    let n = n.saturating_neg();
                    let ty = self.literal(cx, span, Lit::Int(n), Prim::Int, expected);
                    Typed::new(ty, code::ExprKind::Int(n), span)
                }
                ExprKind::Decimal(s) => {
                    let v: f64 = s.parse().unwrap_or(0.0);
                    let ty = self.literal(cx, span, Lit::Decimal(-v), Prim::Decimal, expected);
                    self.typed(ty, span, || code::ExprKind::Decimal(format!("-{s}").into()))
                }
                _ => {
                    let v = self.expr(cx, inner, None, out);
                    let ty = match self.prim_of(&v.ty) {
                        Some(p @ (Prim::Int | Prim::Decimal | Prim::Duration)) => Ty::Prim(p),
                        None if v.ty.is_error() => Ty::Error,
                        _ => self.report_operator(cx.unit, span, "-", &v.ty, None),
                    };
                    self.typed(ty, span, || code::ExprKind::Neg(Box::new(v.code)))
                }
            },
        }
    }

    fn binary(
        &mut self,
        cx: &mut Cx,
        span: Span,
        op: BinOp,
        l: &ast::Expr,
        r: &ast::Expr,
        out: &mut ir::Block,
    ) -> Typed {
        let (ty, lc, rc) = match op {
            BinOp::And | BinOp::Or => {
                let b = Ty::Prim(Prim::Bool);
                let lv = self.expr(cx, l, Some(&b), out);
                // `x != none and x.id == y`: the right side sees what the
                // left side proves.
                let (when_true, when_false) = self.narrowings(cx, l);
                let narrowed = if op == BinOp::And {
                    when_true
                } else {
                    when_false
                };
                cx.scopes.push(Vec::new());
                for n in narrowed {
                    cx.bind_slot(n.name, n.ty, false, n.slot);
                }
                let rv = self.expr(cx, r, Some(&b), out);
                cx.scopes.pop();
                (b, lv.code, rv.code)
            }
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                let lv = self.expr(cx, l, None, out);
                let rv = self.expr_inner(cx, r, Some(&lv.ty), out);
                self.check_comparison(cx, op, r.span, &lv.ty, &rv.ty);
                (Ty::Prim(Prim::Bool), lv.code, rv.code)
            }
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div => {
                let lv = self.expr(cx, l, None, out);
                let rv = self.expr(cx, r, None, out);
                let ty = self.arithmetic(cx.unit, l.span.to(r.span), op, &lv.ty, &rv.ty);
                (ty, lv.code, rv.code)
            }
        };
        self.typed(ty, span, || {
            code::ExprKind::Binary(code_op(op), Box::new(lc), Box::new(rc))
        })
    }

    /// Both sides of a comparison are of one type; `<`-like comparisons
    /// need an ordered one, and only an optional is compared with `none`.
    fn check_comparison(&mut self, cx: &Cx, op: BinOp, at: Span, lt: &Ty, rt: &Ty) {
        if lt.is_error() || rt.is_error() {
            return;
        }
        let equality = matches!(op, BinOp::Eq | BinOp::Ne);
        let none_side = matches!(lt, Ty::NoneValue) || matches!(rt, Ty::NoneValue);
        if none_side {
            let other = if matches!(lt, Ty::NoneValue) { rt } else { lt };
            let optional = matches!(self.base_of(other), Ty::Optional(_) | Ty::NoneValue);
            if !optional || !equality {
                self.report_none_comparison(cx, at, other);
            }
            return;
        }
        if !self.accepts(lt, rt) && !self.accepts(rt, lt) {
            self.report_mismatch(cx.unit, at, lt, rt);
            return;
        }
        let ordered = matches!(
            self.prim_of(lt),
            Some(Prim::Int | Prim::Decimal | Prim::Text | Prim::Instant | Prim::Duration)
        );
        if !equality && !ordered {
            let d = Diagnostic::error(
                "type.operator",
                at,
                format!("`{}` values cannot be ordered", self.type_name(lt, cx.unit)),
            )
            .with_reason("`<`, `<=`, `>` and `>=` compare numbers, texts, instants and durations")
            .with_fix("compare with `==` or `!=`, or compare a field that is ordered");
            self.error(d);
        }
    }

    fn report_none_comparison(&mut self, cx: &Cx, at: Span, other: &Ty) {
        let name = self.type_name(other, cx.unit);
        let d = Diagnostic::error("type.mismatch", at, format!("a `{name}` is never `none`"))
            .with_reason(
                "only an optional value (`T?`) is compared with `none`, and only with `==` or `!=`",
            )
            .with_fix("remove the comparison, or declare the value as optional");
        self.error(d);
    }

    fn arithmetic(&mut self, unit: Owner, span: Span, op: BinOp, lt: &Ty, rt: &Ty) -> Ty {
        if lt.is_error() || rt.is_error() {
            return Ty::Error;
        }
        for side in [lt, rt] {
            if let Ty::Optional(inner) = self.base_of(side) {
                let inner = (**inner).clone();
                self.report_optional_use(unit, span, &inner, side);
                return Ty::Error;
            }
        }
        use Prim::*;
        let add_sub = matches!(op, BinOp::Add | BinOp::Sub);
        let result = match (self.prim_of(lt), self.prim_of(rt)) {
            (Some(Int), Some(Int)) => Some(Int),
            (Some(Int | Decimal), Some(Int | Decimal)) => Some(Decimal),
            (Some(Instant), Some(Duration)) if add_sub => Some(Instant),
            (Some(Instant), Some(Instant)) if op == BinOp::Sub => Some(Duration),
            (Some(Duration), Some(Duration)) if add_sub => Some(Duration),
            (Some(Duration), Some(Int)) if !add_sub => Some(Duration),
            (Some(Text), Some(Text)) if op == BinOp::Add => Some(Text),
            _ => None,
        };
        match result {
            Some(p) => Ty::Prim(p),
            None => {
                let sym = match op {
                    BinOp::Add => "+",
                    BinOp::Sub => "-",
                    BinOp::Mul => "*",
                    _ => "/",
                };
                self.report_operator(unit, span, sym, lt, Some(rt))
            }
        }
    }

    fn report_operator(
        &mut self,
        unit: Owner,
        span: Span,
        sym: &str,
        lt: &Ty,
        rt: Option<&Ty>,
    ) -> Ty {
        let l = self.type_name(lt, unit);
        let summary = match rt {
            Some(rt) => format!(
                "`{sym}` cannot combine `{l}` and `{}`",
                self.type_name(rt, unit)
            ),
            None => format!("`{sym}` cannot apply to `{l}`"),
        };
        let d = Diagnostic::error("type.operator", span, summary)
            .with_reason(
                "arithmetic works on Int and Decimal, Instant with Duration, and `+` joins Text",
            )
            .with_fix("convert the values to compatible types first, e.g. `Text(n)` to join a number to a text");
        self.error(d);
        Ty::Error
    }

    /// Purity: a function may not make outside calls, call actions, write or
    /// emit. Returns true when the body is a function (already reported).
    pub(super) fn impure(&mut self, cx: &Cx, code: &'static str, span: Span, what: &str) -> bool {
        if !cx.kind.pure() {
            return false;
        }
        let noun = cx.kind.noun();
        let mut d = Diagnostic::error(code, span, format!("{noun} cannot {what}"));
        d = if cx.kind == BodyKind::Test {
            d.with_reason("a test's expressions are pure; actions run as deliveries of `call` and `deliver` statements")
                .with_fix("run the action with `call name(args)`, or `var x = call name(args)` for its answer")
        } else {
            d.with_reason("functions are pure: no outside calls, action calls, writes or emits")
                .with_fix(
                    "make this an action, or move the effect into the action that calls the function",
                )
        };
        self.error(d);
        true
    }
}

impl<'r> Resolver<'r, '_> {
    /// An enum type and its variants, read in place in the tables.
    fn enum_of(&self, ty: &Ty) -> Option<(TypeId, &'r [crate::intern::Name])> {
        let target = match ty.unbounded() {
            Ty::Optional(inner) => inner.unbounded(),
            other => other,
        };
        let Ty::Named(t) = target else { return None };
        let tables = self.t;
        match &tables.types[*t].kind {
            TypeKind::Enum(v) => Some((*t, v)),
            _ => None,
        }
    }
}

fn number_problem(v: f64, min: Option<f64>, max: Option<f64>) -> Option<String> {
    if let Some(m) = min.filter(|m| v < *m) {
        return Some(format!("it is below the minimum {m}"));
    }
    if let Some(m) = max.filter(|m| v > *m) {
        return Some(format!("it is above the maximum {m}"));
    }
    None
}

fn text_problem(s: &str, b: &super::tables::Bounds) -> Option<String> {
    let n = s.chars().count() as u64;
    if let Some(m) = b.max_length.filter(|m| n > *m) {
        return Some(format!("it has {n} characters, more than max_length {m}"));
    }
    if let Some(m) = b.min_length.filter(|m| n < *m) {
        return Some(format!("it has {n} characters, fewer than min_length {m}"));
    }
    if b.email && !crate::pattern::is_email(s) {
        return Some("it is not an email address".to_string());
    }
    if let Some(p) = &b.pattern {
        if !crate::pattern::matches(p, s).unwrap_or(true) {
            return Some(format!("it does not match the pattern `{p}`"));
        }
    }
    None
}
