//! Calls and writes: callee resolution (functions, actions, operations),
//! argument checks, purity, and how each effect's failures are handled
//! (`attempt`, an exhaustive `match`, or neither).

use std::borrow::Cow;

use crate::ast::{self, ExprKind};
use crate::diag::{nearest, Diagnostic, Edit};
use crate::intern::Name;
use crate::ir::{self, ActionId, FailureId, OpId, Owner, PkgId};
use crate::span::Span;

use super::body::{BodyKind, Cx, Escape, Label, Typed, Why};
use super::lookup::Found;
use super::tables::{Callable, FnId, Ty};
use super::Resolver;
use crate::ir::code;

/// An effect whose arguments are checked, waiting for its handling.
pub(super) struct Pending<'t> {
    pub span: Span,
    pub target: ir::Target,
    /// Failures other than `Unavailable`/`RateLimited`: read in place in
    /// the callee's signature, or a write's own.
    pub failures: Cow<'t, [FailureId]>,
    /// The effect can also fail with `Unavailable` and `RateLimited`.
    pub transient: bool,
    pub ty: Ty,
    /// How the author writes the callee, for messages.
    pub label: Label,
    /// `None` when the resolution lowers no code, or once taken.
    pub code: Option<code::Fallible>,
}

impl Pending<'_> {
    /// The effect as code, before its handling (taken: asked for once).
    pub fn take_code(&mut self, at: Span) -> code::Expr {
        match self.code.take() {
            Some(c) => code::Expr::new(code::ExprKind::Fallible(Box::new(c)), at),
            None => code::Expr::error(at),
        }
    }
}

pub(super) enum Outcome<'t> {
    Effect(Pending<'t>),
    /// Not an effect.
    Pure(Typed),
    /// An effect in a function body (already reported as impure).
    Impure(Typed),
    /// The callee could not be resolved (already reported).
    Failed,
}

enum Callee {
    Op(OpId),
    Action(ActionId),
    Function(FnId),
    Silent,
}

impl<'r> Resolver<'r, '_> {
    /// Checks a call or write, returning it as a pending effect.
    pub(super) fn effect_target(
        &mut self,
        cx: &mut Cx,
        e: &ast::Expr,
        out: &mut ir::Block,
    ) -> Outcome<'r> {
        match &e.kind {
            ExprKind::Call { callee, args } => {
                let outcome = self.call(cx, e.span, callee, args, out);
                if let Outcome::Effect(p) = &outcome {
                    cx.called |= matches!(p.target, ir::Target::Op(_) | ir::Target::Action(_));
                }
                outcome
            }
            ExprKind::Create { .. } | ExprKind::Update { .. } | ExprKind::Delete { .. } => {
                let outcome = self.write(cx, e, out);
                match outcome {
                    Outcome::Effect(p)
                        if self.impure(cx, "purity.write", e.span, "write to a store") =>
                    {
                        Outcome::Impure(Typed::error(e.span).with_ty(p.ty))
                    }
                    other => other,
                }
            }
            ExprKind::Query {
                mode,
                entity,
                settings,
            } => self.query(cx, e.span, *mode, entity, settings, out),
            _ => Outcome::Pure(self.expr(cx, e, None, out)),
        }
    }

    /// A call or write used without `attempt` or `match`.
    pub(super) fn plain_effect(
        &mut self,
        cx: &mut Cx,
        e: &ast::Expr,
        out: &mut ir::Block,
    ) -> Typed {
        match self.effect_target(cx, e, out) {
            Outcome::Effect(mut p) => {
                let fallible = !p.failures.is_empty() || matches!(p.target, ir::Target::Op(_));
                if fallible {
                    self.report_unhandled(cx, &p);
                    cx.excused.extend(p.failures.iter().copied());
                }
                let code = p.take_code(e.span);
                out.nodes.push(ir::Node::Effect(ir::Effect {
                    span: p.span,
                    target: p.target,
                    handling: ir::Handling::Unhandled,
                }));
                Typed { ty: p.ty, code }
            }
            Outcome::Pure(t) | Outcome::Impure(t) => t,
            Outcome::Failed => Typed::error(e.span),
        }
    }

    fn report_unhandled(&mut self, cx: &Cx, p: &Pending) {
        let mut names: Vec<String> = p
            .failures
            .iter()
            .map(|f| self.failure_name(*f, cx.unit))
            .collect();
        if p.transient {
            names.push("Unavailable".to_string());
            names.push("RateLimited".to_string());
        }
        let start = Span {
            end: p.span.start,
            ..p.span
        };
        let in_function = cx.kind.pure();
        let mut d = Diagnostic::error(
            "failure.unhandled",
            p.span,
            format!("`{}` can fail, and its failures are not handled", p.label),
        )
        .with_label(format!("can fail with {}", names.join(", ")));
        if in_function {
            d = d
                .with_reason("a function cannot fail: each failure of what it computes is handled in place")
                .with_fix("handle each failure with `match ... { success(v) => v  failure F => fallback }`");
        } else {
            d = d
                .with_reason("every call that can fail must be under `attempt` (pass its failures on) or a `match` that handles each failure")
                .with_edit_fix(
                    "pass its failures on with `attempt`",
                    vec![Edit {
                        span: start,
                        replacement: "attempt ".to_string(),
                    }],
                )
                .with_fix("or handle each failure with `match ... { success(v) => v  failure F => ... }`");
        }
        self.error(d);
    }

    /// `attempt e`
    pub(super) fn attempt_expr(
        &mut self,
        cx: &mut Cx,
        span: Span,
        inner: &ast::Expr,
        out: &mut ir::Block,
    ) -> Typed {
        match self.effect_target(cx, inner, out) {
            Outcome::Effect(mut p) => {
                if cx.kind.pure() {
                    self.report_attempt_in_function(cx.kind, span, inner.span, &p);
                }
                for f in p.failures.iter() {
                    cx.escapes.push(Escape {
                        failure: *f,
                        span: p.span,
                        why: Why::Attempt(p.label.clone()),
                    });
                }
                let fallible = p.take_code(inner.span);
                let code = self
                    .typed(Ty::Error, span, || {
                        code::ExprKind::Attempt(Box::new(fallible))
                    })
                    .code;
                out.nodes.push(ir::Node::Effect(ir::Effect {
                    span: p.span,
                    target: p.target,
                    handling: ir::Handling::Attempt(span),
                }));
                Typed { ty: p.ty, code }
            }
            Outcome::Pure(t) => {
                if !t.ty.is_error() && !matches!(inner.kind, ExprKind::Error) {
                    let keyword = Span {
                        end: inner.span.start,
                        ..span
                    };
                    let d = Diagnostic::error(
                        "failure.nothing_to_attempt",
                        keyword,
                        "`attempt` needs a call or write that can fail",
                    )
                    .with_related(inner.span, "this cannot fail")
                    .with_edit_fix(
                        "remove `attempt`",
                        vec![Edit {
                            span: keyword,
                            replacement: String::new(),
                        }],
                    );
                    self.error(d);
                }
                t
            }
            Outcome::Impure(t) => t,
            Outcome::Failed => {
                cx.uncertain = true;
                Typed::error(span)
            }
        }
    }

    /// `attempt` in a function: a function has no failures to pass on.
    fn report_attempt_in_function(&mut self, kind: BodyKind, span: Span, inner: Span, p: &Pending) {
        let keyword = Span {
            end: inner.start,
            ..span
        };
        let d = Diagnostic::error(
            "purity.attempt",
            keyword,
            format!(
                "{} cannot pass on the failures of `{}`",
                kind.noun(),
                p.label
            ),
        )
        .with_label("passes failures on")
        .with_reason("functions are pure and cannot fail; what they compute is handled in place")
        .with_fix(
            "handle each failure with `match ... { success(v) => v  failure F => fallback }`",
        );
        self.error(d);
    }

    fn call(
        &mut self,
        cx: &mut Cx,
        span: Span,
        callee: &ast::Expr,
        args: &[ast::Expr],
        out: &mut ir::Block,
    ) -> Outcome<'r> {
        let ExprKind::Path(path) = &callee.kind else {
            self.field_values_only_exprs(cx, args, out);
            if !matches!(callee.kind, ExprKind::Error) {
                let d = Diagnostic::error("type.not_callable", callee.span, "only functions, actions and operations can be called")
                    .with_fix("call a function or action by name, or an operation as `package.operation(request)`");
                self.error(d);
            }
            return Outcome::Failed;
        };
        if names_type(path) {
            return self.validated(cx, span, path, args, out);
        }
        // The tables outlive this resolver: signatures are read in place.
        let t = self.t;
        match self.callee(cx, path) {
            Callee::Function(f) => {
                cx.reads.functions.push(f);
                let sig = &t.functions[f];
                let label = Label::of(path);
                let args = self.check_args(cx, span, &label, Params::Sig(&sig.params), args, out);
                Outcome::Pure(
                    self.typed(sig.ret.clone(), span, || code::ExprKind::Function(f, args)),
                )
            }
            Callee::Action(a) => {
                cx.reads.actions.push(a);
                let sig = &t.actions[a];
                let label = Label::of(path);
                let args = self.check_args(cx, span, &label, Params::Sig(&sig.params), args, out);
                if self.impure(cx, "purity.action_call", span, "call an action") {
                    return Outcome::Impure(Typed::error(span).with_ty(sig.ret.clone()));
                }
                if sig.fails_unknown {
                    cx.uncertain = true;
                }
                Outcome::Effect(Pending {
                    span: path.span,
                    target: ir::Target::Action(a),
                    failures: Cow::Borrowed(&sig.fails),
                    transient: true,
                    ty: sig.ret.clone(),
                    label,
                    code: self.lower(|| {
                        Some(code::Fallible::Action {
                            action: a,
                            args,
                            site: path.span,
                        })
                    }),
                })
            }
            Callee::Op(op) => {
                let sig = &t.op_sigs[op];
                let label = Label::of(path);
                let mut args =
                    self.check_args(cx, span, &label, Params::One(&sig.request), args, out);
                if self.impure(cx, "purity.outside_call", span, "make an outside call") {
                    return Outcome::Impure(Typed::error(span).with_ty(sig.answer.clone()));
                }
                let request = args.pop().unwrap_or_else(|| code::Expr::error(span));
                Outcome::Effect(Pending {
                    span: path.span,
                    target: ir::Target::Op(op),
                    failures: Cow::Borrowed(&sig.failures),
                    transient: true,
                    ty: sig.answer.clone(),
                    label,
                    code: self.lower(|| {
                        Some(code::Fallible::Op {
                            op,
                            request,
                            site: path.span,
                        })
                    }),
                })
            }
            Callee::Silent => {
                self.field_values_only_exprs(cx, args, out);
                Outcome::Failed
            }
        }
    }

    /// `Unavailable` and `RateLimited` from the standard library.
    pub(super) fn is_transient(&self, f: FailureId) -> bool {
        let f = self.prog.failure(f);
        f.owner == Owner::Stdlib && f.kind.is_transient()
    }

    pub(super) fn field_values_only_exprs(
        &mut self,
        cx: &mut Cx,
        args: &[ast::Expr],
        out: &mut ir::Block,
    ) {
        for a in args {
            self.expr(cx, a, None, out);
        }
    }

    /// Arity and argument types.
    pub(super) fn check_args(
        &mut self,
        cx: &mut Cx,
        span: Span,
        name: &dyn std::fmt::Display,
        params: Params<'_>,
        args: &[ast::Expr],
        out: &mut ir::Block,
    ) -> Vec<code::Expr> {
        let mut code: Vec<code::Expr> = Vec::new();
        for (i, a) in args.iter().enumerate() {
            let value = self.expr(cx, a, params.get(i), out);
            if self.code {
                code.push(value.code);
            }
        }
        // A call the parser could not read fully holds an error node: its
        // argument count is not the author's.
        let unreadable = args.iter().any(|a| matches!(a.kind, ExprKind::Error));
        if params.len() == args.len() || unreadable {
            return code;
        }
        let at = match args.get(params.len()) {
            Some(extra) => extra.span,
            None => span,
        };
        let d = Diagnostic::error(
            "type.arity",
            at,
            format!(
                "`{name}` takes {} argument(s), {} given",
                params.len(),
                args.len()
            ),
        )
        .with_fix(if args.len() > params.len() {
            "remove the extra arguments".to_string()
        } else {
            "pass the missing arguments".to_string()
        });
        self.error(d);
        code
    }

    fn callee(&mut self, cx: &mut Cx, path: &ast::Path) -> Callee {
        match path.segments.as_slice() {
            [] => Callee::Silent,
            [one] => match self.unit(cx.unit).callables.get(&one.name) {
                Some((Callable::Action(a), _)) => Callee::Action(*a),
                Some((Callable::Function(f), _)) => Callee::Function(*f),
                None => {
                    let unit = cx.unit;
                    let near =
                        self.suggestion("name.unknown_action", unit, one.name.as_str(), |t| {
                            callable_candidates(t, unit)
                        });
                    self.report_unknown_near(
                        "name.unknown_action",
                        "action or function",
                        one.span,
                        one.name.as_str(),
                        near,
                    );
                    Callee::Silent
                }
            },
            [pkg, rest @ ..] => match self.package_seen(cx.unit, pkg) {
                Found::Yes(p) => self.package_callee(cx.unit, p, path, rest),
                Found::Silent => Callee::Silent,
                Found::UnknownPackage(p) => {
                    self.report_unknown_package(cx.unit, p);
                    Callee::Silent
                }
                Found::No => Callee::Silent,
            },
        }
    }

    fn package_callee(
        &mut self,
        unit: Owner,
        p: PkgId,
        path: &ast::Path,
        rest: &[ast::Ident],
    ) -> Callee {
        let op_name: Vec<&str> = rest.iter().map(|s| s.name.as_str()).collect();
        let op_name = op_name.join(".");
        let pu = Owner::Package(p);
        if let Some(op) = self.unit(pu).ops.get(&op_name) {
            return Callee::Op(*op);
        }
        if let [one] = rest {
            match self.unit(pu).callables.get(&one.name).map(|c| c.0) {
                Some(Callable::Action(a)) if pu == unit || self.prog.action(a).public => {
                    return Callee::Action(a)
                }
                Some(Callable::Function(f)) if pu == unit => return Callee::Function(f),
                Some(Callable::Action(a)) => {
                    self.report_private_action(path, a);
                    return Callee::Silent;
                }
                _ => {}
            }
        }
        let pkg = self.pkg_name(p);
        let mut cands: Vec<String> = self
            .unit(pu)
            .ops
            .keys()
            .map(|k| format!("{pkg}.{k}"))
            .collect();
        let ops_list: Vec<String> = self.unit(pu).ops.keys().cloned().collect();
        for (n, (c, _)) in &self.unit(pu).callables {
            if let Callable::Action(a) = c {
                if pu == unit || self.prog.action(*a).public {
                    cands.push(format!("{pkg}.{n}"));
                }
            }
        }
        let span = match (rest.first(), rest.last()) {
            (Some(f), Some(l)) => f.span.to(l.span),
            _ => path.span,
        };
        let written = path.text();
        let mut d = Diagnostic::error(
            "name.unknown_operation",
            span,
            format!("`{pkg}` has no operation or action `{op_name}`"),
        )
        .with_label(format!("not an operation of `{pkg}`"))
        .with_reason(format!("`{pkg}`'s operations: {}", ops_list.join(", ")));
        if let Some(near) = nearest(&written, cands.iter().map(String::as_str)) {
            let tail = near
                .strip_prefix(&format!("{pkg}."))
                .unwrap_or(near)
                .to_string();
            d = d.with_edit_fix(
                format!("did you mean `{near}`?"),
                vec![Edit {
                    span,
                    replacement: tail,
                }],
            );
        }
        self.error(d);
        Callee::Silent
    }

    fn report_private_action(&mut self, path: &ast::Path, a: ActionId) {
        let d = Diagnostic::error(
            "name.private_action",
            path.span,
            format!("`{}` is not a public action", path.text()),
        )
        .with_related(self.prog.action(a).name_span, "declared without `public` here")
        .with_reason("an app sees a package's types, failures and operations, and of its actions only `public action`s")
        .with_fix("call one of the package's public actions, or its operations");
        self.error(d);
    }

    /// `create`, `update` and `delete`.
    fn write(&mut self, cx: &mut Cx, e: &ast::Expr, out: &mut ir::Block) -> Outcome<'r> {
        let (entity, kind) = match &e.kind {
            ExprKind::Create { entity, .. } => (entity, ir::WriteKind::Create),
            ExprKind::Update { entity, .. } => (entity, ir::WriteKind::Update),
            ExprKind::Delete { entity, .. } => (entity, ir::WriteKind::Delete),
            _ => return Outcome::Failed,
        };
        let found = self.find_entity(cx.unit, entity);
        let entity_id = found.map(|(id, _)| id);
        let fields = found.and_then(|(_, t)| self.record_of(t));
        let ty = found.map_or(Ty::Error, |(_, t)| Ty::Named(t));
        let mut named: Vec<Option<&ast::Path>> = Vec::new();
        let mut keyed_by_input = false;
        let lowered = match &e.kind {
            ExprKind::Create {
                fields: inits,
                conflict,
                ..
            } => {
                // The key is the entity's first declared field.
                let key = fields.and_then(|defs| defs.first()).map(|d| d.name);
                keyed_by_input = inits
                    .iter()
                    .find(|f| Some(f.name.name) == key)
                    .is_some_and(|f| super::body::from_input(cx, &f.value));
                let code = match &fields {
                    Some(defs) => self.check_inits(cx, entity.span, &ty, defs, inits, out),
                    None => {
                        self.field_values_only(cx, inits, out);
                        Vec::new()
                    }
                };
                named.push(conflict.as_deref());
                Lowered::Create(code)
            }
            ExprKind::Update {
                filter,
                set,
                missing,
                conflict,
                ..
            } => {
                let filter = self.where_fields(cx, &ty, fields, filter, entity_id, out);
                let set = self.set_fields(cx, &ty, fields, set, out);
                named.push(missing.as_deref());
                named.push(conflict.as_deref());
                Lowered::Update(filter, set)
            }
            ExprKind::Delete {
                filter, missing, ..
            } => {
                let filter = self.where_fields(cx, &ty, fields, filter, entity_id, out);
                named.push(missing.as_deref());
                Lowered::Delete(filter)
            }
            _ => return Outcome::Failed,
        };
        let mut failures: Vec<(FailureId, Span)> = Vec::new();
        let mut slots: Vec<Option<FailureId>> = Vec::new();
        let mut unresolved = false;
        for path in named {
            let found = path.and_then(|p| self.find_failure(cx.unit, p));
            match (path, found) {
                (Some(p), Some(f)) => failures.push((f, p.span)),
                (Some(_), None) => unresolved = true,
                _ => {}
            }
            slots.push(found);
        }
        let Some((entity_id, _)) = found else {
            return Outcome::Failed;
        };
        if unresolved {
            cx.uncertain = true;
        }
        let result = if kind == ir::WriteKind::Delete {
            Ty::unit()
        } else {
            ty
        };
        let first = slots.first().copied().flatten();
        let second = slots.get(1).copied().flatten();
        let write = match lowered {
            Lowered::Create(fields) => code::Write::Create {
                entity: entity_id,
                fields,
                conflict: first,
            },
            Lowered::Update(filter, set) => code::Write::Update {
                entity: entity_id,
                filter,
                set,
                missing: first,
                conflict: second,
            },
            Lowered::Delete(filter) => code::Write::Delete {
                entity: entity_id,
                filter,
                missing: first,
            },
        };
        Outcome::Effect(Pending {
            // `create Entity`: the smallest span that names the write.
            span: Span::new(e.span.file, e.span.start, entity.span.end.max(e.span.start)),
            failures: Cow::Owned(failures.iter().map(|(f, _)| *f).collect()),
            target: ir::Target::Write(ir::Write {
                kind,
                entity: entity_id,
                failures,
                keyed_by_input,
                read_first: cx.read_first.contains(&entity_id),
            }),
            transient: false,
            ty: result,
            label: write_label(kind, entity),
            code: self.lower(|| Some(code::Fallible::Write(write))),
        })
    }

    /// `where: field == value` of an update or delete.
    fn where_fields(
        &mut self,
        cx: &mut Cx,
        ty: &Ty,
        defs: Option<&[super::tables::FieldDef]>,
        filter: &ast::WhereClause,
        entity: Option<ir::EntityId>,
        out: &mut ir::Block,
    ) -> Vec<(Name, code::Expr)> {
        let value = self.entity_field(cx, ty, defs, (filter.field, &filter.value), out);
        if let Some(entity) = entity {
            cx.reads.queries.push((entity, vec![filter.field.name]));
        }
        self.lower(|| vec![(filter.field.name, value)])
    }

    /// A value for an entity's field, checked against the field's type.
    pub(super) fn entity_field(
        &mut self,
        cx: &mut Cx,
        ty: &Ty,
        defs: Option<&[super::tables::FieldDef]>,
        (field, value): (ast::Ident, &ast::Expr),
        out: &mut ir::Block,
    ) -> code::Expr {
        let want = defs
            .and_then(|d| d.iter().find(|f| f.name == field.name))
            .map(|f| f.ty.clone());
        if want.is_none() {
            if let Some(defs) = defs {
                let cands: Vec<String> = defs.iter().map(|d| d.name.as_str().to_string()).collect();
                let owner = self.type_name(ty, cx.unit);
                let declared = self.declared_at(ty);
                self.report_unknown_field(
                    (&owner, declared),
                    field.span,
                    field.name.as_str(),
                    &cands,
                );
            }
        }
        self.expr(cx, value, want.as_ref(), out).code
    }

    fn set_fields(
        &mut self,
        cx: &mut Cx,
        ty: &Ty,
        defs: Option<&[super::tables::FieldDef]>,
        set: &[ast::FieldInit],
        out: &mut ir::Block,
    ) -> Vec<(Name, code::Expr)> {
        let mut code = Vec::new();
        for f in set {
            let value = self.entity_field(cx, ty, defs, (f.name, &f.value), out);
            if self.code {
                code.push((f.name.name, value));
            }
        }
        code
    }
}

/// A write's own parts, lowered before its failures are known.
enum Lowered {
    Create(Vec<(Name, code::Expr)>),
    Update(Vec<(Name, code::Expr)>, Vec<(Name, code::Expr)>),
    Delete(Vec<(Name, code::Expr)>),
}

/// Whether a called path names a type (`stripe.Amount(x)`, `Text(n)`): a
/// validated construction, not a call.
fn names_type(path: &ast::Path) -> bool {
    path.last().is_some_and(|last| {
        last.name
            .as_str()
            .starts_with(|c: char| c.is_ascii_uppercase())
    })
}

/// A callee's parameter types.
#[derive(Clone, Copy)]
pub(super) enum Params<'p> {
    /// An action's or function's parameters.
    Sig(&'p [(Name, Ty, Span)]),
    /// An operation's request.
    One(&'p Ty),
}

impl<'p> Params<'p> {
    fn get(self, i: usize) -> Option<&'p Ty> {
        match self {
            Params::Sig(params) => params.get(i).map(|p| &p.1),
            Params::One(ty) => (i == 0).then_some(ty),
        }
    }

    fn len(self) -> usize {
        match self {
            Params::Sig(params) => params.len(),
            Params::One(_) => 1,
        }
    }
}

/// The label of a write (`create Order`).
fn write_label(kind: ir::WriteKind, entity: &ast::Path) -> Label {
    Label::prefixed(write_word(kind), entity)
}

fn write_word(kind: ir::WriteKind) -> &'static str {
    match kind {
        ir::WriteKind::Create => "create",
        ir::WriteKind::Update => "update",
        ir::WriteKind::Delete => "delete",
    }
}

/// Every action, function and operation a unit can call, as written.
fn callable_candidates(t: &super::Tables<'_>, unit: Owner) -> Vec<String> {
    let u = t.unit(unit);
    let mut out: Vec<String> = u.callables.keys().map(|n| n.as_str().to_string()).collect();
    for (pname, p) in &u.sees {
        let pu = t.unit(Owner::Package(*p));
        for op in pu.ops.keys() {
            out.push(format!("{pname}.{op}"));
        }
        for (n, (c, _)) in &pu.callables {
            if let Callable::Action(a) = *c {
                if t.prog.action(a).public {
                    out.push(format!("{pname}.{n}"));
                }
            }
        }
    }
    out
}
