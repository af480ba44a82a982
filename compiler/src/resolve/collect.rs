//! First pass: every declaration's name, in any file and any order, into its
//! unit's tables, with duplicates reported against the first declaration.

use crate::ast::{self, Ident, Item, SettingValue};
use crate::diag::{nearest, Diagnostic};
use crate::intern::Name;
use crate::ir::{self, FailureKind, Owner};
use crate::span::Span;

use super::tables::{
    ActionSig, Callable, ConfigEntry, Decl, FnId, FnSig, Ty, TypeDef, TypeId, TypeKind,
};
use super::{Builder, Resolver};

impl<'a> Builder<'a> {
    pub(super) fn collect_all(&mut self) {
        self.reserve();
        for u in 0..self.units.len() {
            let owner = self.units[u].owner;
            let asts = self.unit_asts[u].clone();
            for file in asts {
                for (index, item) in file.items.iter().enumerate() {
                    self.item_at = Some((file.file, index as u32));
                    self.collect_item(owner, item);
                }
            }
        }
    }

    /// Sizes the tables for the declarations to come: a large app would
    /// otherwise grow (and copy) them many times over.
    fn reserve(&mut self) {
        let (mut all_types, mut all_actions) = (0, 0);
        for u in 0..self.units.len() {
            let (mut decls, mut callables) = (0, 0);
            for item in self.unit_asts[u].iter().flat_map(|f| f.items.iter()) {
                match item {
                    Item::Type(_) | Item::Entity(_) | Item::Event(_) => decls += 1,
                    Item::Failure(_) => decls += 1,
                    Item::Action(_) | Item::Function(_) => callables += 1,
                    _ => {}
                }
                if matches!(item, Item::Action(_)) {
                    all_actions += 1;
                }
                if matches!(item, Item::Type(_) | Item::Entity(_) | Item::Event(_)) {
                    all_types += 1;
                }
            }
            self.units[u].decls.reserve(decls);
            self.units[u].callables.reserve(callables);
        }
        self.types.reserve(all_types);
        self.actions.reserve(all_actions);
        self.prog.actions.reserve(all_actions);
    }

    fn collect_item(&mut self, unit: Owner, item: &'a Item) {
        match item {
            Item::Application(a) => self.collect_application(unit, a),
            Item::Config(c) => {
                for f in &c.fields {
                    self.collect_config(unit, f);
                }
            }
            Item::Store(s) => self.collect_store(unit, s),
            Item::Type(t) => {
                if self.is_duplicate_decl(unit, t.name) {
                    return;
                }
                let ty = self.new_type(unit, t.name);
                self.declare(unit, t.name, Decl::Type(ty));
            }
            Item::Entity(e) => self.collect_entity(unit, e),
            Item::Failure(f) => self.collect_failure(unit, f),
            Item::Event(e) => self.collect_event(unit, e),
            Item::Action(a) => self.collect_action(unit, a),
            Item::Function(f) => self.collect_function(unit, f),
            Item::Route(r) => self.collect_route(unit, r),
            // Only the tests of what is checked: a required package's
            // belong to whoever tests that package.
            Item::Fixture(f) if unit == self.test_owner => {
                self.fixture_decls.push(f);
                self.tests_at.extend(self.item_at);
            }
            Item::Test(t) if unit == self.test_owner => {
                self.test_decls.push(t);
                self.tests_at.extend(self.item_at);
            }
            Item::Subscriber(_) | Item::Schedule(_) | Item::Error(_) => {}
            Item::Fixture(_) | Item::Test(_) => {}
        }
    }

    fn collect_application(&mut self, unit: Owner, a: &'a ast::Application) {
        if unit != Owner::App {
            let d = Diagnostic::error(
                "name.misplaced_application",
                a.name.span,
                "a package cannot declare `application`",
            )
            .with_reason("application settings belong to the app that uses the package")
            .with_fix("move these settings to the app");
            self.error(d);
            return;
        }
        match self.application {
            Some(first) => self
                .rx()
                .report_duplicate("application", a.name, first.name.span),
            None => self.application = Some(a),
        }
    }

    fn collect_config(&mut self, unit: Owner, f: &'a ast::FieldDecl) {
        if let Some(first) = self.unit(unit).config.get(&f.name.name) {
            let first = first.span;
            self.rx().report_duplicate("config entry", f.name, first);
            return;
        }
        let entry = ConfigEntry {
            ty: Ty::Error,
            secret: false,
            binding: None,
            default: None,
            span: f.name.span,
        };
        self.unit_mut(unit).config.insert(f.name.name, entry);
    }

    fn collect_store(&mut self, unit: Owner, s: &'a ast::StoreDecl) {
        if let Some(first) = self.unit(unit).stores.get(&s.name.name) {
            let first = *first;
            self.rx().report_duplicate("store", s.name, first);
            return;
        }
        self.unit_mut(unit).stores.insert(s.name.name, s.name.span);
    }

    fn collect_entity(&mut self, unit: Owner, e: &'a ast::EntityDecl) {
        if self.is_duplicate_decl(unit, e.name) {
            return;
        }
        let ty = self.new_type(unit, e.name);
        let id = ir::EntityId(self.prog.entities.len() as u32);
        let qualified = self.qualify(unit, e.name.name.as_str(), Owner::App);
        self.prog.entities.push(ir::Entity {
            owner: unit,
            qualified,
            store: None,
            span: e.name.span,
            ty,
        });
        self.declare(unit, e.name, Decl::Entity(id, ty));
    }

    fn collect_event(&mut self, unit: Owner, e: &'a ast::EventDecl) {
        if self.is_duplicate_decl(unit, e.name) {
            return;
        }
        let ty = self.new_type(unit, e.name);
        let id = ir::EventId(self.prog.events.len() as u32);
        let qualified = self.qualify(unit, e.name.name.as_str(), Owner::App);
        self.prog.events.push(ir::Event {
            owner: unit,
            qualified,
            fields: Vec::new(),
            span: e.name.span,
            ty,
        });
        self.declare(unit, e.name, Decl::Event(id, ty));
    }

    fn collect_failure(&mut self, unit: Owner, f: &'a ast::FailureDecl) {
        if self.is_duplicate_decl(unit, f.name) {
            return;
        }
        let kind = self.failure_kind(f);
        let id = ir::FailureId(self.prog.failures.len() as u32);
        let qualified = self.qualify(unit, f.name.name.as_str(), Owner::App);
        self.prog.failures.push(ir::Failure {
            owner: unit,
            qualified,
            kind,
            span: Some(f.name.span),
            code: String::new(),
            fields: Vec::new(),
        });
        self.declare(unit, f.name, Decl::Failure(id));
    }

    /// The `kind:` of a failure declaration; reports a missing or unknown one.
    fn failure_kind(&mut self, f: &ast::FailureDecl) -> FailureKind {
        let Some(setting) = f
            .settings()
            .find(|s| s.key.name == super::tables::words().kind)
        else {
            let d = Diagnostic::error(
                "failure.missing_kind",
                f.name.span,
                format!("failure `{}` does not say its kind", f.name.name),
            )
            .with_reason("every failure has one of the standard kinds, which decides how callers and the runtime treat it")
            .with_fix("add `kind: Rejected` (or another standard kind)");
            self.error(d);
            return FailureKind::InternalFault;
        };
        let SettingValue::Expr(expr) = &setting.value else {
            return self.unknown_kind(setting.value.span(), "");
        };
        let ast::ExprKind::Path(path) = &expr.kind else {
            if matches!(expr.kind, ast::ExprKind::Error) {
                return FailureKind::InternalFault;
            }
            return self.unknown_kind(expr.span, "");
        };
        let text = path.text();
        match FailureKind::ALL.into_iter().find(|k| k.as_str() == text) {
            Some(k) => k,
            None => self.unknown_kind(path.span, &text),
        }
    }

    fn unknown_kind(&mut self, span: Span, written: &str) -> FailureKind {
        let kinds: Vec<String> = FailureKind::ALL
            .iter()
            .map(|k| k.as_str().to_string())
            .collect();
        let mut d = Diagnostic::error(
            "failure.unknown_kind",
            span,
            format!("`{written}` is not a standard failure kind"),
        )
        .with_reason(format!("the standard kinds are {}", kinds.join(" ")));
        if let Some(near) = nearest(written, kinds.iter().map(String::as_str)) {
            d = d.with_did_you_mean(span, near);
        }
        self.error(d);
        FailureKind::InternalFault
    }

    fn collect_action(&mut self, unit: Owner, a: &'a ast::ActionDecl) {
        if self.is_duplicate_callable(unit, a.name) {
            return;
        }
        let qualified = self.qualify(unit, a.name.name.as_str(), Owner::App);
        let declines = declines(a);
        let spans = (a.span, a.name.span);
        let id = self.new_action(unit, (a.name.name, qualified), spans, Some(a));
        self.prog.actions[id].public = a.public.is_some();
        self.prog.actions[id].declines = declines;
        self.unit_mut(unit)
            .callables
            .insert(a.name.name, (Callable::Action(id), a.name.span));
    }

    fn collect_function(&mut self, unit: Owner, f: &'a ast::FunctionDecl) {
        if self.is_duplicate_callable(unit, f.name) {
            return;
        }
        let id = FnId(self.functions.len() as u32);
        let params = self.no_params.clone();
        self.functions.push(FnSig {
            unit,
            decl: Some(f),
            params,
            ret: Ty::Error,
        });
        self.unit_mut(unit)
            .callables
            .insert(f.name.name, (Callable::Function(id), f.name.span));
    }

    /// A route with `path: { }` gets a synthetic record type for its path
    /// parameters; one with `action: { }` a synthetic action named after it.
    fn collect_route(&mut self, unit: Owner, r: &'a ast::RouteDecl) {
        let fact = route_fact(r);
        if fact.path {
            let id = TypeId(self.types.len() as u32);
            let name = Name::new(&format!("path of route {} {}", r.method.name, r.path));
            self.types.push(TypeDef {
                owner: unit,
                name,
                kind: TypeKind::Pending,
                span: None,
            });
            self.route_path_of.insert(route_key(r), id);
        }
        let Some(action_key) = fact.action else {
            return;
        };
        let label = format!("route {} {}", r.method.name, r.path);
        let qualified = self.qualify(unit, &label, Owner::App);
        let name = Name::new(&label);
        let id = self.new_action(unit, (name, qualified), (r.span, action_key), None);
        self.route_actions.push((r, id));
        self.route_action_of.insert(route_key(r), id);
    }

    fn new_action(
        &mut self,
        unit: Owner,
        (name, qualified): (Name, String),
        (span, name_span): (Span, Span),
        decl: Option<&'a ast::ActionDecl>,
    ) -> ir::ActionId {
        let id = ir::ActionId(self.prog.actions.len() as u32);
        self.prog.actions.push(ir::Action {
            owner: unit,
            name,
            qualified,
            public: false,
            span,
            name_span,
            fails: Vec::new(),
            declines: Vec::new(),
            body: ir::Block::default(),
            revision: ir::Revision::UNKNOWN,
            params: Vec::new(),
            ret: Ty::unit(),
            code: ir::code::Body::default(),
            reads: ir::Reads::default(),
        });
        let (params, fails) = (self.no_params.clone(), self.no_fails.clone());
        self.at.push(self.item_at);
        self.actions.push(ActionSig {
            unit,
            decl,
            params,
            ret: Ty::unit(),
            fails,
            fails_unknown: false,
        });
        id
    }

    fn new_type(&mut self, unit: Owner, name: Ident) -> TypeId {
        let id = TypeId(self.types.len() as u32);
        self.types.push(TypeDef {
            owner: unit,
            name: name.name,
            kind: TypeKind::Pending,
            span: Some(name.span),
        });
        id
    }

    fn declare(&mut self, unit: Owner, name: Ident, decl: Decl) {
        self.unit_mut(unit)
            .decls
            .insert(name.name, (decl, name.span));
    }

    fn is_duplicate_decl(&mut self, unit: Owner, name: Ident) -> bool {
        let first = self.unit(unit).decls.get(&name.name).map(|(_, s)| *s);
        let std = if unit == Owner::Stdlib {
            None
        } else {
            self.unit(Owner::Stdlib)
                .decls
                .get(&name.name)
                .map(|(_, s)| *s)
        };
        match (first, std) {
            (Some(first), _) => {
                if unit == Owner::Stdlib && first == Span::default() {
                    // The stdlib's sources may restate a built-in failure.
                    return true;
                }
                self.rx().report_duplicate("declaration", name, first);
                true
            }
            (None, Some(_)) => {
                self.report_shadows_std(name);
                true
            }
            (None, None) => {
                if super::tables::prelude_type(name.name).is_some() {
                    self.report_shadows_std(name);
                    return true;
                }
                false
            }
        }
    }

    fn is_duplicate_callable(&mut self, unit: Owner, name: Ident) -> bool {
        match self.unit(unit).callables.get(&name.name).map(|(_, s)| *s) {
            Some(first) => {
                self.rx()
                    .report_duplicate("action or function", name, first);
                true
            }
            None => false,
        }
    }

    fn report_shadows_std(&mut self, name: Ident) {
        let d = Diagnostic::error(
            "name.duplicate",
            name.span,
            format!("`{}` is already a standard name", name.name),
        )
        .with_label("this hides a prelude type or standard failure")
        .with_reason("prelude types and standard failure kinds are visible everywhere; a declaration with the same name would make them ambiguous")
        .with_fix("choose another name");
        self.error(d);
    }
}

impl Resolver<'_, '_> {
    pub(super) fn report_duplicate(&mut self, what: &str, name: Ident, first: Span) {
        let d = Diagnostic::error(
            "name.duplicate",
            name.span,
            format!("`{}` is declared twice", name.name),
        )
        .with_label(format!("second {what} named `{}`", name.name))
        .with_related(first, "first declared here")
        .with_reason("every name in a scope must refer to exactly one declaration")
        .with_fix("rename or remove one of the two declarations");
        self.error(d);
    }
}

/// Identifies a route declaration by its address (for lookups only: never
/// iterated, so addresses cannot reach the output).
pub(super) fn route_key(r: &ast::RouteDecl) -> usize {
    std::ptr::from_ref(r) as usize
}

/// What a route declares beyond its method and path: path parameters (a
/// `path:` setting), and an inline action (the key of its `action:`
/// setting).
#[derive(Clone, Copy, Debug)]
struct RouteFact {
    path: bool,
    action: Option<Span>,
}

/// What a route's settings declare.
fn route_fact(r: &ast::RouteDecl) -> RouteFact {
    let words = super::tables::words();
    RouteFact {
        path: r.settings.iter().any(|s| s.key.name == words.path),
        action: r
            .settings
            .iter()
            .find(|s| s.key.name == words.action)
            .map(|s| s.key.span),
    }
}

/// An action's `declines` entries, as the IR holds them.
fn declines(a: &ast::ActionDecl) -> Vec<ir::Decline> {
    a.declines
        .iter()
        .map(|d| ir::Decline {
            code: d.code.text(),
            reason: d.reason.value.clone(),
            span: d.span,
        })
        .collect()
}
