//! Action and function headers, and bodies: statements checked and lowered to
//! [`crate::ir::Block`]s in evaluation order.

use std::collections::BTreeSet;

use crate::ast::{self, SettingValue, StmtKind};
use crate::diag::Diagnostic;
use crate::intern::Name;
use crate::ir::code::{self, Local as Slot};
use crate::ir::{self, ActionId, FailureId, Owner};
use crate::span::Span;

use super::tables::{Ty, TypeKind};
use super::Resolver;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BodyKind {
    Action,
    /// A route's inline `action: { }`: it has no `fails` clause to judge.
    RouteAction,
    Function,
    /// A test's body: pure like a function; actions run by `call`.
    Test,
}

impl BodyKind {
    /// Pure: no outside calls, action calls, writes, emits, reads of the
    /// store, `reject` or `attempt`.
    pub fn pure(self) -> bool {
        matches!(self, BodyKind::Function | BodyKind::Test)
    }

    /// How a message names the body: "a function", "a test".
    pub fn noun(self) -> &'static str {
        match self {
            BodyKind::Test => "a test",
            _ => "a function",
        }
    }
}

#[derive(Clone, Debug)]
pub(super) struct Local {
    pub name: Name,
    pub ty: Ty,
    pub mutable: bool,
    pub slot: Slot,
}

/// What checking an expression gives: its type and its code.
#[derive(Debug)]
pub(super) struct Typed {
    pub ty: Ty,
    pub code: code::Expr,
}

impl Typed {
    /// A checked expression whose code is already built (or a leaf that
    /// costs nothing to keep).
    pub fn new(ty: Ty, kind: code::ExprKind, span: Span) -> Typed {
        Typed {
            ty,
            code: code::Expr::new(kind, span),
        }
    }

    /// Code that could not be resolved (already reported).
    pub fn error(span: Span) -> Typed {
        Typed {
            ty: Ty::Error,
            code: code::Expr::error(span),
        }
    }

    pub fn with_ty(self, ty: Ty) -> Typed {
        Typed { ty, ..self }
    }
}

/// Whether `e` is computed from the body's parameters and constants alone
/// (literals, config, the locals in [`Cx::inputs`], fields of them,
/// operators, constructions and validated constructions of them): the
/// same input gives the same value. A call, a query, `clock.now` or a
/// mutable variable is not.
pub(super) fn from_input(cx: &Cx, e: &ast::Expr) -> bool {
    use ast::ExprKind as K;
    match &e.kind {
        K::Int(_) | K::Decimal(_) | K::Str(_) | K::Bool(_) | K::None | K::Duration(..) => true,
        K::Path(path) => match path.segments.first() {
            Some(first) => match cx.local(first.name) {
                Some(local) => cx.inputs.contains(&local.slot.0),
                None => first.name.as_str() != "clock",
            },
            None => false,
        },
        K::Field(inner, _) | K::Unary(_, inner) => from_input(cx, inner),
        K::Binary(_, l, r) => from_input(cx, l) && from_input(cx, r),
        K::Construct { fields, .. } => fields.iter().all(|f| from_input(cx, &f.value)),
        K::List(items) => items.iter().all(|i| from_input(cx, i)),
        // `T(e)`: a validated construction names a type.
        K::Call { callee, args } => {
            let validated = matches!(&callee.kind, K::Path(p) if p.segments.last().is_some_and(|s| s.name.as_str().starts_with(|c: char| c.is_ascii_uppercase())));
            validated && args.iter().all(|a| from_input(cx, a))
        }
        _ => false,
    }
}

/// A failure that escapes the body, and where it comes from.
#[derive(Clone, Debug)]
pub(super) struct Escape {
    pub failure: FailureId,
    pub span: Span,
    pub why: Why,
}

/// Why a failure escapes, worded only when a diagnostic needs it.
#[derive(Clone, Debug)]
pub(super) enum Why {
    /// `attempt` on a call or write, labelled as the author writes it.
    Attempt(Label),
    /// `reject F`, with `F` as written.
    Rejected(Label),
    /// A `failure F => propagate` arm.
    Propagated,
}

/// An action's resolved header.
#[derive(Clone)]
pub(super) struct Header {
    pub params: std::sync::Arc<[(Name, Ty, Span)]>,
    pub ret: Ty,
    /// `fails` entries that resolved, as written.
    pub fails: Vec<(FailureId, Span)>,
    /// The same failures without their spans.
    pub fail_ids: std::sync::Arc<[FailureId]>,
    /// Some `fails` entry did not resolve.
    pub unknown: bool,
}

/// The state of one body being checked.
pub(super) struct Cx {
    pub unit: Owner,
    pub kind: BodyKind,
    pub scopes: Vec<Vec<Local>>,
    pub ret: Ty,
    pub escapes: Vec<Escape>,
    /// Failures of calls already reported as unhandled: never judged missing
    /// or stale in `fails`.
    pub excused: BTreeSet<FailureId>,
    /// Something in the body could not be resolved: `fails` is not judged.
    pub uncertain: bool,
    /// Local slots given out so far.
    pub slots: u32,
    /// In an entry point's `run:`, which values it provides (for a name
    /// that is none of them).
    pub entry_values: Option<EntryNote>,
    /// The config entries and functions the body uses.
    pub reads: ir::Reads,
    /// Slots whose values come from the body's parameters and constants
    /// alone (parameters, and `var`s computed from them).
    pub inputs: BTreeSet<u32>,
    /// An outside call or an action call has been lowered.
    pub called: bool,
    /// Entities queried before the first outside or action call.
    pub read_first: Vec<crate::ir::EntityId>,
}

impl Cx {
    pub fn new(unit: Owner, kind: BodyKind, ret: Ty) -> Self {
        Cx {
            unit,
            kind,
            scopes: vec![Vec::new()],
            ret,
            escapes: Vec::new(),
            excused: BTreeSet::new(),
            uncertain: false,
            slots: 0,
            entry_values: None,
            reads: ir::Reads::default(),
            inputs: BTreeSet::new(),
            called: false,
            read_first: Vec::new(),
        }
    }

    /// Binds a name to a new slot in the innermost scope.
    pub fn bind(&mut self, name: Name, ty: Ty, mutable: bool) -> Slot {
        let slot = Slot(self.slots);
        self.slots += 1;
        self.bind_slot(name, ty, mutable, slot);
        slot
    }

    /// Binds a name to an existing slot: a narrowed optional (`if x != none`).
    pub fn bind_slot(&mut self, name: Name, ty: Ty, mutable: bool, slot: Slot) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.push(Local {
                name,
                ty,
                mutable,
                slot,
            });
        }
    }

    pub fn local(&self, name: Name) -> Option<&Local> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .find(|l| l.name == name)
    }

    pub fn in_current_scope(&self, name: Name) -> bool {
        self.scopes
            .last()
            .is_some_and(|s| s.iter().any(|l| l.name == name))
    }

    /// The body's reads, each once, in order.
    pub fn take_reads(&mut self) -> ir::Reads {
        let mut reads = std::mem::take(&mut self.reads);
        reads.config.sort();
        reads.config.dedup();
        reads.functions.sort();
        reads.functions.dedup();
        reads.actions.sort();
        reads.actions.dedup();
        reads.queries.sort();
        reads.queries.dedup();
        reads
    }

    pub fn local_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .scopes
            .iter()
            .flatten()
            .map(|l| l.name.as_str().to_string())
            .collect();
        names.sort();
        names.dedup();
        names
    }
}

impl<'a> Resolver<'_, 'a> {
    /// A checked expression; its code is built only when the resolution
    /// lowers code ([`super::Lowering::Code`]).
    pub(super) fn typed(&self, ty: Ty, span: Span, kind: impl FnOnce() -> code::ExprKind) -> Typed {
        if !self.code {
            return Typed {
                ty,
                code: code::Expr::error(span),
            };
        }
        Typed::new(ty, kind(), span)
    }

    /// Code built only when the resolution lowers code.
    pub(super) fn lower<T: Default>(&self, build: impl FnOnce() -> T) -> T {
        if self.code {
            build()
        } else {
            T::default()
        }
    }

    pub(super) fn params(&mut self, unit: Owner, params: &[ast::Param]) -> Vec<(Name, Ty, Span)> {
        let mut out: Vec<(Name, Ty, Span)> = Vec::with_capacity(params.len());
        for p in params {
            if let Some((_, _, first)) = out.iter().find(|(n, _, _)| *n == p.name.name) {
                let first = *first;
                self.report_duplicate("parameter", p.name, first);
                continue;
            }
            let ty = self.resolve_type(unit, &p.ty);
            out.push((p.name.name, ty, p.name.span));
        }
        out
    }

    /// An action's parameters, result and `fails` clause.
    pub(super) fn action_header(&mut self, unit: Owner, decl: &ast::ActionDecl) -> Header {
        let params = self.params(unit, &decl.params);
        let ret = self.resolve_type(unit, &decl.returns);
        let mut fails: Vec<(FailureId, Span)> = Vec::new();
        let mut unknown = false;
        for path in decl.fails.iter().flat_map(|f| f.failures.iter()) {
            let Some(f) = self.find_failure(unit, path) else {
                unknown = true;
                continue;
            };
            if let Some((_, first)) = fails.iter().find(|(g, _)| *g == f) {
                let first = *first;
                self.report_fails_repeat(path, first);
                continue;
            }
            if self.prog.failure(f).kind.is_transient()
                && self.prog.failure(f).owner == Owner::Stdlib
            {
                self.report_transient_in_fails(decl, path);
                continue;
            }
            fails.push((f, path.span));
        }
        Header {
            params: params.into(),
            ret,
            fail_ids: fails.iter().map(|(f, _)| *f).collect(),
            fails,
            unknown,
        }
    }

    /// A route's inline action takes its `input:` and returns its `output:`.
    pub(super) fn route_action_header(
        &mut self,
        route: &ast::RouteDecl,
    ) -> (Vec<(Name, Ty, Span)>, Ty) {
        let mut params = Vec::new();
        let mut ret = Ty::unit();
        for s in &route.settings {
            let SettingValue::Expr(e) = &s.value else {
                continue;
            };
            match s.key.name.as_str() {
                "input" => {
                    let ty = self.setting_type(Owner::App, e);
                    params.push((Name::new("input"), ty, s.key.span));
                }
                "output" => ret = self.setting_type(Owner::App, e),
                _ => {}
            }
        }
        let key = super::collect::route_key(route);
        if let (Some(&t), Some(s)) = (
            self.route_path_of.get(&key),
            route
                .settings
                .iter()
                .find(|s| s.key.name == super::tables::words().path),
        ) {
            params.push((Name::new("path"), Ty::Named(t), s.key.span));
        }
        (params, ret)
    }

    /// A type named by a setting (`input: SubscriptionRequested`).
    pub(super) fn setting_type(&mut self, unit: Owner, e: &ast::Expr) -> Ty {
        match &e.kind {
            ast::ExprKind::Path(path) => self.resolve_named_type(unit, path, &[]),
            ast::ExprKind::Error => Ty::Error,
            _ => {
                let d =
                    Diagnostic::error("type.expected_type", e.span, "expected a type name here")
                        .with_fix("name a declared type, such as `SubscriptionRequested`");
                self.error(d);
                Ty::Error
            }
        }
    }

    fn report_fails_repeat(&mut self, path: &ast::Path, first: Span) {
        let d = Diagnostic::error(
            "failure.repeated_in_fails",
            path.span,
            format!("`{}` is listed twice in `fails`", path.text()),
        )
        .with_related(first, "first listed here")
        .with_fix("remove the repeated entry");
        self.error(d);
    }

    fn report_transient_in_fails(&mut self, decl: &ast::ActionDecl, path: &ast::Path) {
        let edit = self.fails_entry_removal(decl, path.span);
        let d = Diagnostic::error(
            "failure.transient_in_fails",
            path.span,
            format!("`{}` is never listed in `fails`", path.text()),
        )
        .with_reason("`Unavailable` and `RateLimited` can come from any outside call and always pass through; `fails` lists only the failures the action decides on")
        .with_edit_fix(format!("remove `{}`", path.text()), edit);
        self.error(d);
    }

    /// A body's parameters bound to its first slots.
    fn bind_params(cx: &mut Cx, params: &[(Name, Ty, Span)]) {
        for (name, ty, _) in params {
            let slot = cx.bind(*name, ty.clone(), false);
            cx.inputs.insert(slot.0);
        }
    }

    /// Checks an action's body and lowers it.
    pub(super) fn action_body(
        &mut self,
        id: ActionId,
        decl: &ast::ActionDecl,
    ) -> (ir::Block, code::Body, ir::Reads) {
        let t = self.t;
        let Some(sig) = t.actions.get(id) else {
            return Default::default();
        };
        let mut cx = Cx::new(sig.unit, BodyKind::Action, sig.ret.clone());
        Self::bind_params(&mut cx, &sig.params);
        let mut out = ir::Block::default();
        let stmts = self.stmts(&mut cx, &decl.body.stmts, &mut out);
        self.check_ends(&cx, &decl.body, decl.returns.span, decl.name);
        if !sig.fails_unknown && !cx.uncertain && !self.unreadable(decl.span) {
            self.judge_fails(id, decl, &cx);
        }
        let body = self.lower(|| code::Body {
            stmts,
            locals: cx.slots,
        });
        (out, body, cx.take_reads())
    }

    /// Checks a route's inline action; returns its lowered body, its code
    /// and the failures that escape it (its `fails`), or `None` without one.
    pub(super) fn route_action_body(
        &mut self,
        route: &ast::RouteDecl,
        id: ActionId,
    ) -> Option<RouteBody> {
        let block = route.settings.iter().find_map(|s| match &s.value {
            SettingValue::Block(b) if s.key.name == super::tables::words().action => Some(b),
            _ => None,
        })?;
        let t = self.t;
        let sig = t.actions.get(id)?;
        let mut cx = Cx::new(Owner::App, BodyKind::RouteAction, sig.ret.clone());
        Self::bind_params(&mut cx, &sig.params);
        let mut out = ir::Block::default();
        let stmts = self.stmts(&mut cx, &block.stmts, &mut out);
        let mut fails: Vec<(FailureId, Span)> = Vec::new();
        for e in &cx.escapes {
            if !fails.iter().any(|(f, _)| *f == e.failure) {
                fails.push((e.failure, e.span));
            }
        }
        let code = self.lower(|| code::Body {
            stmts,
            locals: cx.slots,
        });
        let reads = cx.take_reads();
        Some(RouteBody {
            block: out,
            code,
            fails,
            reads,
        })
    }

    /// Checks a function's body (functions have no effects to lower).
    pub(super) fn function_body(&mut self, i: ir::FnId) -> (code::Body, ir::Reads) {
        let t = self.t;
        let Some(sig) = t.functions.get(i) else {
            return Default::default();
        };
        let Some(decl) = sig.decl else {
            return Default::default();
        };
        let mut cx = Cx::new(sig.unit, BodyKind::Function, sig.ret.clone());
        Self::bind_params(&mut cx, &sig.params);
        let mut out = ir::Block::default();
        let stmts = self.stmts(&mut cx, &decl.body.stmts, &mut out);
        self.check_ends(&cx, &decl.body, decl.returns.span, decl.name);
        let body = self.lower(|| code::Body {
            stmts,
            locals: cx.slots,
        });
        (body, cx.take_reads())
    }

    /// A body with a result other than `Unit` must end every path with
    /// `return` (or `reject`).
    fn check_ends(&mut self, cx: &Cx, body: &ast::Block, ret_span: Span, name: ast::Ident) {
        if self.is_unit(&cx.ret)
            || cx.ret.is_error()
            || terminates(&body.stmts)
            || self.unreadable(body.span)
        {
            return;
        }
        let d = Diagnostic::error(
            "type.missing_return",
            name.span,
            format!(
                "`{}` can end without returning a `{}`",
                name.name,
                self.type_name(&cx.ret, cx.unit)
            ),
        )
        .with_related(ret_span, "the result is declared here")
        .with_related(body.span, "a path through this body ends without `return`")
        .with_fix("end every path with `return value`, or declare `-> Unit`");
        self.error(d);
    }

    pub(super) fn is_unit(&self, ty: &Ty) -> bool {
        matches!(self.base_of(ty), Ty::Prim(super::tables::Prim::Unit))
    }

    pub(super) fn stmts(
        &mut self,
        cx: &mut Cx,
        stmts: &[ast::Stmt],
        out: &mut ir::Block,
    ) -> Vec<code::Stmt> {
        let mut code = Vec::new();
        for s in stmts {
            if let Some(kind) = self.stmt(cx, s, out) {
                if self.code {
                    code.push(code::Stmt { kind, span: s.span });
                }
            }
        }
        code
    }

    /// A block with its own scope.
    pub(super) fn scoped_block(
        &mut self,
        cx: &mut Cx,
        b: &ast::Block,
        narrowed: &[Narrow],
    ) -> (ir::Block, Vec<code::Stmt>) {
        let mut out = ir::Block::default();
        cx.scopes.push(Vec::new());
        for n in narrowed {
            cx.bind_slot(n.name, n.ty.clone(), false, n.slot);
        }
        let code = self.stmts(cx, &b.stmts, &mut out);
        cx.scopes.pop();
        (out, code)
    }

    fn stmt(&mut self, cx: &mut Cx, s: &ast::Stmt, out: &mut ir::Block) -> Option<code::StmtKind> {
        let kind = match &s.kind {
            StmtKind::Var {
                mutable,
                name,
                ty,
                value,
            } => self.var_stmt(cx, *mutable, *name, ty.as_ref(), value, out),
            StmtKind::Assign { target, value } => self.assign_stmt(cx, *target, value, out)?,
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => self.if_stmt(cx, s.span, cond, then_block, else_block.as_ref(), out),
            StmtKind::For {
                item,
                iterable,
                max,
                body,
            } => self.for_stmt(cx, s.span, *item, iterable, max.as_ref(), body, out),
            StmtKind::Return(value) => self.return_stmt(cx, s.span, value.as_ref(), out),
            StmtKind::Reject(r) => {
                let (rej, code) = self.reject(cx, r, out);
                if let Some(rej) = rej {
                    out.nodes.push(ir::Node::Reject(rej));
                }
                code::StmtKind::Reject(code?)
            }
            StmtKind::Emit(e) => code::StmtKind::Emit(self.emit_stmt(cx, e, out)?),
            StmtKind::Expr(e) => code::StmtKind::Expr(self.expr(cx, e, None, out).code),
            StmtKind::Error => return None,
        };
        Some(kind)
    }

    fn var_stmt(
        &mut self,
        cx: &mut Cx,
        mutable: bool,
        name: ast::Ident,
        ty: Option<&ast::TypeExpr>,
        value: &ast::Expr,
        out: &mut ir::Block,
    ) -> code::StmtKind {
        let declared = ty.map(|t| self.resolve_type(cx.unit, t));
        let found = self.expr(cx, value, declared.as_ref(), out);
        if cx.local(name.name).is_some() {
            self.report_rebound(cx, name);
        }
        let ty = declared.unwrap_or(found.ty);
        let input = !mutable && from_input(cx, value);
        let slot = cx.bind(name.name, ty, mutable);
        if input {
            cx.inputs.insert(slot.0);
        }
        code::StmtKind::Set(slot, found.code)
    }

    /// `var x` where `x` is already visible: in this block or an enclosing
    /// one (a sibling block may bind the name again).
    fn report_rebound(&mut self, cx: &Cx, name: ast::Ident) {
        let here = cx.in_current_scope(name.name);
        let summary = if here {
            format!("`{}` is already declared in this block", name.name)
        } else {
            format!("`{}` is already declared in an enclosing block", name.name)
        };
        let d = Diagnostic::error("name.duplicate", name.span, summary)
            .with_reason("a `var` is visible to the end of its block, nested blocks included; declaring it again would hide the first")
            .with_fix(format!(
                "use `var mut {}` and assign with `{} = ...`, or choose another name",
                name.name, name.name
            ));
        self.error(d);
    }

    fn assign_stmt(
        &mut self,
        cx: &mut Cx,
        target: ast::Ident,
        value: &ast::Expr,
        out: &mut ir::Block,
    ) -> Option<code::StmtKind> {
        let local = cx.local(target.name).cloned();
        let expected = local.as_ref().map(|l| l.ty.clone());
        let value = self.expr(cx, value, expected.as_ref(), out);
        match local {
            None => {
                let cands = cx.local_names();
                self.report_unknown(
                    "name.unknown_variable",
                    "variable",
                    target.span,
                    target.name.as_str(),
                    &cands,
                );
                None
            }
            Some(l) if !l.mutable => {
                let d = Diagnostic::error(
                    "name.immutable",
                    target.span,
                    format!(
                        "`{}` cannot be assigned: it was not declared with `var mut`",
                        target.name
                    ),
                )
                .with_fix(format!("declare it with `var mut {}`", target.name));
                self.error(d);
                None
            }
            Some(l) => Some(code::StmtKind::Set(l.slot, value.code)),
        }
    }

    fn if_stmt(
        &mut self,
        cx: &mut Cx,
        span: Span,
        cond: &ast::Expr,
        then_block: &ast::Block,
        else_block: Option<&ast::Block>,
        out: &mut ir::Block,
    ) -> code::StmtKind {
        let cond_code = self
            .expr(cx, cond, Some(&Ty::Prim(super::tables::Prim::Bool)), out)
            .code;
        let (when_true, when_false) = self.narrowings(cx, cond);
        let (then_ir, then_code) = self.scoped_block(cx, then_block, &when_true);
        let (else_ir, else_code) = match else_block {
            Some(b) => self.scoped_block(cx, b, &when_false),
            None => Default::default(),
        };
        out.nodes.push(ir::Node::If {
            span,
            then_block: then_ir,
            else_block: else_ir,
        });
        code::StmtKind::If {
            cond: cond_code,
            then_block: then_code,
            else_block: else_code,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn for_stmt(
        &mut self,
        cx: &mut Cx,
        span: Span,
        item: ast::Ident,
        iterable: &ast::Expr,
        max: Option<&ast::IntLit>,
        body: &ast::Block,
        out: &mut ir::Block,
    ) -> code::StmtKind {
        let items = self.expr(cx, iterable, None, out);
        let elem = match self.base_of(&items.ty) {
            Ty::List(inner) => (**inner).clone(),
            Ty::Error => Ty::Error,
            _ => {
                let d = Diagnostic::error(
                    "type.not_a_list",
                    iterable.span,
                    format!(
                        "`for` needs a list, found `{}`",
                        self.type_name(&items.ty, cx.unit)
                    ),
                )
                .with_fix("iterate over a `List<T>` value");
                self.error(d);
                Ty::Error
            }
        };
        let last = max.map_or(iterable.span, |m| m.span);
        let head = Span::new(span.file, span.start, last.end);
        let max = max.and_then(|m| self.loop_max(m));
        if cx.local(item.name).is_some() {
            self.report_rebound(cx, item);
        }
        cx.scopes.push(Vec::new());
        let slot = cx.bind(item.name, elem, false);
        let (body_ir, body_code) = self.scoped_block(cx, body, &[]);
        cx.scopes.pop();
        out.nodes.push(ir::Node::Loop {
            span,
            head,
            max,
            body: body_ir,
        });
        code::StmtKind::For {
            item: slot,
            items: items.code,
            max,
            body: body_code,
        }
    }

    fn loop_max(&mut self, m: &ast::IntLit) -> Option<u32> {
        match u32::try_from(m.value) {
            Ok(n) if n > 0 => Some(n),
            _ => {
                let d = Diagnostic::error(
                    "type.loop_max",
                    m.span,
                    "`max` needs a whole number of 1 or more",
                )
                .with_fix("write `max 10` (at most how many items the loop runs for)");
                self.error(d);
                None
            }
        }
    }

    fn return_stmt(
        &mut self,
        cx: &mut Cx,
        span: Span,
        value: Option<&ast::Expr>,
        out: &mut ir::Block,
    ) -> code::StmtKind {
        let unit_ret = self.is_unit(&cx.ret);
        let code = match value {
            Some(v) if unit_ret && !cx.ret.is_error() => {
                let value = self.expr(cx, v, None, out);
                let d = Diagnostic::error(
                    "type.return_value_in_unit",
                    v.span,
                    "this returns a value, but the result is declared `-> Unit`",
                )
                .with_fix("remove the value, or declare the result type");
                self.error(d);
                Some(value.code)
            }
            Some(v) => {
                let ret = cx.ret.clone();
                Some(self.expr(cx, v, Some(&ret), out).code)
            }
            None if !unit_ret && !cx.ret.is_error() => {
                let d = Diagnostic::error(
                    "type.missing_return_value",
                    span,
                    format!(
                        "`return` needs a `{}` value here",
                        self.type_name(&cx.ret, cx.unit)
                    ),
                )
                .with_fix("write `return value`");
                self.error(d);
                None
            }
            None => None,
        };
        out.nodes.push(ir::Node::Return(span));
        code::StmtKind::Return(code)
    }

    /// `reject F { fields }`: F must be a failure, given each of its fields;
    /// the failure escapes.
    pub(super) fn reject(
        &mut self,
        cx: &mut Cx,
        r: &ast::RejectExpr,
        out: &mut ir::Block,
    ) -> (Option<ir::Reject>, Option<code::Reject>) {
        let given = r.fields.as_deref().unwrap_or(&[]);
        let Some(failure) = self.find_failure(cx.unit, &r.failure) else {
            self.field_values_only(cx, given, out);
            cx.uncertain = true;
            return (None, None);
        };
        let t = self.t;
        let defs = &t.prog.failure(failure).fields;
        let label = self.failure_name(failure, cx.unit);
        let declared = t.prog.failure(failure).span;
        let fields = self.check_fields(cx, r.failure.span, (&label, declared), defs, given, out);
        if cx.kind.pure() {
            let noun = cx.kind.noun();
            let d = Diagnostic::error("purity.reject", r.span, format!("{noun} cannot `reject`"))
                .with_reason(
                    "functions are pure and have no `fails`; only actions end with a failure",
                )
                .with_fix("make this an action, or return a value the caller checks");
            self.error(d);
            return (None, None);
        }
        cx.escapes.push(super::body::Escape {
            failure,
            span: r.failure.span,
            why: Why::Rejected(Label::of(&r.failure)),
        });
        let rej = ir::Reject {
            span: r.span,
            failure,
        };
        let code = code::Reject {
            failure,
            fields,
            span: r.span,
        };
        (Some(rej), Some(code))
    }
}

/// A body's lowered route action: its effect tree, code and the failures
/// that escape it.
#[derive(Clone, Debug)]
pub(super) struct RouteBody {
    pub block: ir::Block,
    pub code: code::Body,
    pub fails: Vec<(FailureId, Span)>,
    pub reads: ir::Reads,
}

/// A local known not to be `none` inside a branch.
#[derive(Clone, Debug)]
pub(super) struct Narrow {
    pub name: Name,
    pub slot: Slot,
    pub ty: Ty,
}

impl<'r> Resolver<'r, '_> {
    /// The record fields of a type declared as a record (an object, an
    /// event, an entity), for constructions; read in place in the tables.
    pub(super) fn record_of(
        &self,
        t: super::tables::TypeId,
    ) -> Option<&'r [super::tables::FieldDef]> {
        let tables = self.t;
        match &tables.types[t].kind {
            TypeKind::Record(f) => Some(f),
            _ => None,
        }
    }
}

/// Whether every path through these statements ends in `return` or `reject`.
pub(super) fn terminates(stmts: &[ast::Stmt]) -> bool {
    stmts.iter().any(|s| match &s.kind {
        StmtKind::Return(_) | StmtKind::Reject(_) | StmtKind::Error => true,
        StmtKind::If {
            then_block,
            else_block: Some(e),
            ..
        } => terminates(&then_block.stmts) && terminates(&e.stmts),
        StmtKind::Expr(e) => expr_terminates(e),
        _ => false,
    })
}

/// A `match` whose every arm rejects, propagates or returns ends the path.
fn expr_terminates(e: &ast::Expr) -> bool {
    match &e.kind {
        ast::ExprKind::Match { arms, .. } => {
            !arms.is_empty()
                && arms.iter().all(|a| match &a.body.kind {
                    ast::ExprKind::Reject(_) | ast::ExprKind::Propagate => true,
                    ast::ExprKind::Block(b) => terminates(&b.stmts),
                    _ => false,
                })
        }
        ast::ExprKind::Reject(_) => true,
        _ => false,
    }
}

/// How the author writes a callee (`stripe.customers.create`) or a write
/// (`create Order`). Made for every call checked, so it keeps the names and
/// spells them only when a message needs it.
#[derive(Clone, Debug)]
pub(super) struct Label {
    /// The words before the name: `create`, `query required`.
    prefix: Option<&'static str>,
    names: Names,
}

/// A path's names: inline when short (every callee of a valid call).
#[derive(Clone, Debug)]
enum Names {
    Inline([Option<Name>; 4]),
    Spilled(std::rc::Rc<[Name]>),
}

impl Label {
    pub(super) fn of(path: &ast::Path) -> Label {
        let names = match path.segments.as_slice() {
            segs if segs.len() <= 4 => {
                let mut inline = [None; 4];
                for (slot, seg) in inline.iter_mut().zip(segs) {
                    *slot = Some(seg.name);
                }
                Names::Inline(inline)
            }
            segs => Names::Spilled(segs.iter().map(|s| s.name).collect()),
        };
        Label {
            prefix: None,
            names,
        }
    }

    pub(super) fn prefixed(prefix: &'static str, path: &ast::Path) -> Label {
        Label {
            prefix: Some(prefix),
            ..Label::of(path)
        }
    }
}

impl std::fmt::Display for Label {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(prefix) = self.prefix {
            write!(f, "{prefix} ")?;
        }
        let (inline, spilled): (&[Option<Name>], &[Name]) = match &self.names {
            Names::Inline(names) => (names, &[]),
            Names::Spilled(names) => (&[], names),
        };
        let all = inline.iter().flatten().chain(spilled);
        for (i, name) in all.enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            f.write_str(name.as_str())?;
        }
        Ok(())
    }
}

/// The names an entry point provides to `run:` (at most two: a route's
/// `input` and `path`), as its note says them.
#[derive(Clone, Copy)]
pub(super) struct EntryNote {
    pub what: &'static str,
    pub shown: [Option<Name>; 2],
}

impl EntryNote {
    pub fn text(&self) -> String {
        let names: Vec<String> = self
            .shown
            .iter()
            .flatten()
            .map(|name| {
                if *name == super::tables::words().path {
                    "`path.<placeholder>`".to_string()
                } else {
                    format!("`{name}`")
                }
            })
            .collect();
        match names.as_slice() {
            [] => format!("{} provides no values to `run:`", self.what),
            _ => format!("{} provides {} to `run:`", self.what, names.join(" and ")),
        }
    }
}
