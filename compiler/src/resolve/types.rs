//! Types: resolving type expressions and declarations, constraints, and the
//! nominal "accepts" relation (design section 2).

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use crate::ast::{self, ExprKind, Item, SettingValue, TypeExprKind};
use crate::diag::{nearest, Diagnostic};
use crate::ir::{self, Owner};
use crate::span::Span;

use super::lookup::Found;
use super::tables::{prelude_type, Bounds, Decl, FieldDef, Prelude, Prim, Ty, TypeKind};
use super::{Builder, Resolver, Tables};

impl<'a> Resolver<'_, 'a> {
    /// The kind an item with a [`Builder::kind_target`] defines.
    fn item_kind(&mut self, unit: Owner, item: &ast::Item) -> TypeKind {
        match item {
            Item::Type(t) => self.type_def_kind(unit, &t.def),
            Item::Event(e) => TypeKind::Record(self.field_defs(unit, &e.fields)),
            Item::Route(r) => TypeKind::Record(self.route_path_fields(r)),
            _ => TypeKind::Pending,
        }
    }

    fn type_def_kind(&mut self, unit: Owner, def: &ast::TypeExpr) -> TypeKind {
        match &def.kind {
            TypeExprKind::Enum(variants) => {
                let mut names = Vec::new();
                for (i, v) in variants.iter().enumerate() {
                    if let Some(first) = variants[..i].iter().find(|p| p.name == v.name) {
                        self.report_duplicate("enum variant", *v, first.span);
                        continue;
                    }
                    names.push(v.name);
                }
                TypeKind::Enum(names)
            }
            TypeExprKind::Object(fields) => TypeKind::Record(self.field_defs(unit, fields)),
            TypeExprKind::Error => TypeKind::Pending,
            _ => TypeKind::Alias(self.resolve_type(unit, def)),
        }
    }

    pub(super) fn field_defs<'f>(
        &mut self,
        unit: Owner,
        fields: impl IntoIterator<Item = &'f ast::FieldDecl>,
    ) -> Vec<FieldDef> {
        let mut out: Vec<FieldDef> = Vec::new();
        for f in fields {
            if let Some(first) = out.iter().find(|o| o.name == f.name.name) {
                let first = first.span;
                self.report_duplicate("field", f.name, first);
                continue;
            }
            let ty = self.resolve_type(unit, &f.ty);
            out.push(FieldDef {
                name: f.name.name,
                ty,
                optional: f.optional,
                span: f.name.span,
            });
        }
        out
    }

    fn entity_store(&mut self, unit: Owner, field: &ast::FieldDecl) -> Option<crate::intern::Name> {
        let TypeExprKind::Named { path, .. } = &field.ty.kind else {
            return None;
        };
        let [one] = path.segments.as_slice() else {
            self.report_unknown("name.unknown_store", "store", path.span, &path.text(), &[]);
            return None;
        };
        if self.unit(unit).stores.contains_key(&one.name) {
            return Some(one.name);
        }
        let cands: Vec<String> = self
            .unit(unit)
            .stores
            .keys()
            .map(|n| n.as_str().to_string())
            .collect();
        self.report_unknown(
            "name.unknown_store",
            "store",
            one.span,
            one.name.as_str(),
            &cands,
        );
        None
    }

    /// Reads a config entry's `binding:`/`secret:`/`default:`.
    fn config_settings(&mut self, settings: &[ast::Setting]) -> ConfigSettings {
        let mut out = ConfigSettings::default();
        self.check_setting_repeats(settings.iter());
        for s in settings {
            self.check_config_setting(s);
            let text = match &s.value {
                SettingValue::Expr(e) => match &e.kind {
                    ExprKind::Str(t) => Some(t.to_string()),
                    ExprKind::Int(n) => Some(n.to_string()),
                    ExprKind::Bool(b) => Some(b.to_string()),
                    _ => None,
                },
                _ => None,
            };
            match s.key.name.as_str() {
                "secret" => {
                    out.secret = matches!(&s.value, SettingValue::Expr(e) if matches!(e.kind, ExprKind::Bool(true)))
                }
                "binding" => out.binding = text,
                "default" => out.default = text,
                _ => self.report_unknown_key(
                    s.key,
                    "config entry setting",
                    &["binding", "secret", "default"],
                ),
            }
        }
        out
    }

    pub(super) fn report_unknown_key(&mut self, key: ast::Ident, what: &str, known: &[&str]) {
        let written = key.name.as_str();
        let mut d = Diagnostic::error(
            "name.unknown_setting",
            key.span,
            format!("unknown {what} `{written}`"),
        )
        .with_label(format!("not a {what}"))
        .with_reason(format!("the known ones are: {}", known.join(", ")));
        match nearest(written, known.iter().copied()) {
            Some(near) => d = d.with_did_you_mean(key.span, near),
            None => d = d.with_fix(format!("remove `{written}`")),
        }
        self.error(d);
    }

    /// Resolves a type as written in a field, parameter or result.
    pub(super) fn resolve_type(&mut self, unit: Owner, t: &ast::TypeExpr) -> Ty {
        match &t.kind {
            TypeExprKind::Named {
                path,
                args,
                constraints,
            } => {
                let base = self.resolve_named_type(unit, path, args);
                if constraints.is_empty() || base.is_error() {
                    return base;
                }
                let bounds = self.parse_bounds(unit, &base, constraints);
                Ty::Bounded(Box::new(base), Arc::new(bounds))
            }
            TypeExprKind::Optional(inner) => match self.resolve_type(unit, inner) {
                Ty::Error => Ty::Error,
                ty => Ty::Optional(Box::new(ty)),
            },
            TypeExprKind::Enum(_) | TypeExprKind::Object(_) => {
                let d = Diagnostic::error(
                    "type.anonymous",
                    t.span,
                    "an `Enum` or `Object` must be declared as a named type",
                )
                .with_reason("types are nominal: values are checked against a declared name")
                .with_fix("declare it with `type Name = ...` and use the name here");
                self.error(d);
                Ty::Error
            }
            TypeExprKind::Error => Ty::Error,
        }
    }

    /// A type named by a path, as `resolve_type` resolves a named type
    /// without constraints.
    pub(super) fn resolve_named_type(
        &mut self,
        unit: Owner,
        path: &ast::Path,
        args: &[ast::TypeExpr],
    ) -> Ty {
        // Prelude names are single segments, matched by their interned
        // name: a large app's headers name a type hundreds of thousands of
        // times.
        let prelude = match path.segments.as_slice() {
            [one] => prelude_type(one.name),
            _ => None,
        };
        if prelude == Some(Prelude::List) {
            return match args {
                [one] => match self.resolve_type(unit, one) {
                    Ty::Error => Ty::Error,
                    ty => Ty::List(Box::new(ty)),
                },
                _ => {
                    self.report_type_args(path, 1, args.len());
                    Ty::Error
                }
            };
        }
        if let Some(Prelude::Prim(p)) = prelude {
            if !args.is_empty() {
                self.report_type_args(path, 0, args.len());
            }
            return Ty::Prim(p);
        }
        if !args.is_empty() {
            self.report_type_args(path, 0, args.len());
        }
        match self.lookup_decl(unit, path) {
            Found::Yes(d) => match d.as_type() {
                Some(t) => Ty::Named(t),
                None => {
                    self.report_wrong_kind(path, d, "a type");
                    Ty::Error
                }
            },
            Found::Silent => Ty::Error,
            Found::UnknownPackage(p) => {
                self.report_unknown_package(unit, p);
                Ty::Error
            }
            Found::No => {
                let text = path.text();
                let near = self.suggestion("name.unknown_type", unit, &text, |t| {
                    let mut cands = t.decl_candidates(unit, |d| d.as_type().is_some());
                    cands.extend(Prim::ALL.iter().map(|p| p.as_str().to_string()));
                    cands.push("List".to_string());
                    cands
                });
                self.report_unknown_near("name.unknown_type", "type", path.span, &text, near);
                Ty::Error
            }
        }
    }

    fn report_type_args(&mut self, path: &ast::Path, wanted: usize, given: usize) {
        let d = Diagnostic::error(
            "type.arity",
            path.span,
            format!(
                "`{}` takes {wanted} type argument(s), {given} given",
                path.text()
            ),
        )
        .with_fix(if wanted == 1 {
            "write `List<T>`".to_string()
        } else {
            format!("remove the type arguments after `{}`", path.text())
        });
        self.error(d);
    }

    fn parse_bounds(&mut self, unit: Owner, base: &Ty, settings: &[ast::Setting]) -> Bounds {
        let _ = unit;
        let found = self.base_of(base);
        if let Ty::Named(id) = found {
            if matches!(self.types[*id].kind, TypeKind::Pending) {
                self.unresolved_base.store(true, Relaxed);
            }
        }
        let allowed: &[&str] = match found {
            Ty::Prim(Prim::Text) => &["min_length", "max_length", "pattern", "format"],
            Ty::Prim(Prim::Int) | Ty::Prim(Prim::Decimal) => &["min", "max"],
            Ty::List(_) => &["min_length", "max_length"],
            _ => &[],
        };
        let mut b = Bounds::default();
        for s in settings {
            let key = s.key.name.as_str();
            if !allowed.contains(&key) {
                self.report_bad_constraint(s.key, base, allowed);
                continue;
            }
            let SettingValue::Expr(e) = &s.value else {
                self.report_constraint_value(s);
                continue;
            };
            if !self.set_bound(&mut b, key, e) {
                self.report_constraint_value(s);
            }
        }
        self.check_bounds(&b, settings);
        b
    }

    /// Constraints that contradict each other or cannot be read: `min`
    /// above `max`, `min_length` above `max_length`, a pattern that is not
    /// a regular expression.
    fn check_bounds(&mut self, b: &Bounds, settings: &[ast::Setting]) {
        let at = |key: &str| {
            settings
                .iter()
                .find(|s| s.key.name.as_str() == key)
                .map(|s| (s.value.span(), s.key.span))
        };
        if let (Some(lo), Some(hi)) = (b.min, b.max) {
            if lo > hi {
                self.report_contradiction(at("max"), at("min"), "min", "max");
            }
        }
        if let (Some(lo), Some(hi)) = (b.min_length, b.max_length) {
            if lo > hi {
                self.report_contradiction(
                    at("max_length"),
                    at("min_length"),
                    "min_length",
                    "max_length",
                );
            }
        }
        if let (Some(p), Some((span, _))) = (&b.pattern, at("pattern")) {
            if let Err(why) = crate::pattern::compile(p) {
                let d = Diagnostic::error(
                    "type.constraint_value",
                    span,
                    format!("this `pattern:` is not a regular expression: {why}"),
                )
                .with_reason("values of the type are matched against the pattern, when compiling for literals and when running for computed values")
                .with_fix("correct the pattern (escape `\\` and brackets inside the string)");
                self.error(d);
            }
        }
    }

    fn report_contradiction(
        &mut self,
        hi: Option<(Span, Span)>,
        lo: Option<(Span, Span)>,
        lo_key: &str,
        hi_key: &str,
    ) {
        let (Some((hi_span, _)), Some((lo_span, _))) = (hi, lo) else {
            return;
        };
        let d = Diagnostic::error(
            "type.constraint_value",
            hi_span,
            format!("`{hi_key}` is below `{lo_key}`: no value fits this type"),
        )
        .with_related(lo_span, format!("`{lo_key}` is set here"))
        .with_fix(format!("make `{lo_key}` at most `{hi_key}`"));
        self.error(d);
    }

    fn set_bound(&self, b: &mut Bounds, key: &str, e: &ast::Expr) -> bool {
        match key {
            "min" | "max" => {
                let Some(v) = number_value(e) else {
                    return false;
                };
                if key == "min" {
                    b.min = Some(v);
                } else {
                    b.max = Some(v);
                }
            }
            "min_length" | "max_length" => {
                let ExprKind::Int(n) = e.kind else {
                    return false;
                };
                let Ok(n) = u64::try_from(n) else {
                    return false;
                };
                if key == "min_length" {
                    b.min_length = Some(n);
                } else {
                    b.max_length = Some(n);
                }
            }
            "pattern" => {
                let ExprKind::Str(s) = &e.kind else {
                    return false;
                };
                b.pattern = Some(s.clone());
            }
            _ => {
                let text = match &e.kind {
                    ExprKind::Path(p) => p.text(),
                    ExprKind::Str(s) => s.clone(),
                    _ => return false,
                };
                if text != "email" {
                    return false;
                }
                b.email = true;
            }
        }
        true
    }

    fn report_bad_constraint(&mut self, key: ast::Ident, base: &Ty, allowed: &[&str]) {
        let written = key.name.as_str();
        let on = self.type_name(base, Owner::App);
        let mut d = Diagnostic::error(
            "type.unknown_constraint",
            key.span,
            format!("`{written}` is not a constraint of `{on}`"),
        );
        d = if allowed.is_empty() {
            d.with_reason(format!("`{on}` takes no constraints"))
                .with_fix("remove the constraint")
        } else {
            d.with_reason(format!("`{on}` takes: {}", allowed.join(", ")))
        };
        if let Some(near) = nearest(written, allowed.iter().copied()) {
            d = d.with_did_you_mean(key.span, near);
        }
        self.error(d);
    }

    fn report_constraint_value(&mut self, s: &ast::Setting) {
        if matches!(&s.value, SettingValue::Expr(e) if matches!(e.kind, ExprKind::Error)) {
            return;
        }
        let key = s.key.name.as_str();
        let wanted = match key {
            "min" | "max" => "a number",
            "min_length" | "max_length" => "a whole number, 0 or more",
            "pattern" => "a string",
            _ => "`email`",
        };
        let d = Diagnostic::error(
            "type.constraint_value",
            s.value.span(),
            format!("`{key}` needs {wanted}"),
        )
        .with_fix(format!("write {wanted} after `{key}:`"));
        self.error(d);
    }
}

impl<'a> Builder<'a> {
    /// Second pass: the definitions of types, events, entities and config
    /// entries, now that every name is known, in declaration order. An
    /// item that judged a constraint against a type not defined yet
    /// (`type Short = Code { max_length: 3 }` before `type Code = Text`,
    /// or in a file read earlier) is resolved again once every definition
    /// is in, its first diagnostics dropped, so the outcome does not
    /// depend on the order of declarations or files.
    pub(super) fn resolve_type_defs(&mut self) {
        let mut again = Vec::new();
        for u in 0..self.units.len() {
            let owner = self.units[u].owner;
            for file in self.unit_asts[u].clone() {
                for item in &file.items {
                    let mark = self.diags.len();
                    self.unresolved_base.store(false, Relaxed);
                    self.resolve_type_def(owner, item);
                    if self.unresolved_base.load(Relaxed) {
                        self.diags.truncate(mark);
                        again.push((owner, item));
                    }
                }
            }
        }
        for (owner, item) in again {
            cov_mark::hit!(type_defs_resolved_again);
            self.resolve_type_def(owner, item);
        }
        self.check_alias_cycles();
        self.compute_event_sizes();
    }

    fn resolve_type_def(&mut self, owner: Owner, item: &'a ast::Item) {
        match self.kind_target(owner, item) {
            Some(id) => self.types[id].kind = self.rx().item_kind(owner, item),
            None => self.resolve_def_item(owner, item),
        }
    }

    /// The type whose kind `item` defines: a type's, an event's, or a
    /// route's path parameters (`None`: it defines no kind, or it is a
    /// duplicate).
    fn kind_target(&self, unit: Owner, item: &ast::Item) -> Option<ir::TypeId> {
        match item {
            Item::Type(t) => match self.own_decl(unit, t.name) {
                Some(Decl::Type(id)) => Some(id),
                _ => None,
            },
            Item::Event(e) => match self.own_decl(unit, e.name) {
                Some(Decl::Event(_, id)) => Some(id),
                _ => None,
            },
            Item::Route(r) => self
                .route_path_of
                .get(&super::collect::route_key(r))
                .copied(),
            _ => None,
        }
    }

    fn resolve_def_item(&mut self, unit: Owner, item: &ast::Item) {
        match item {
            Item::Failure(f) => self.resolve_failure_def(unit, f),
            Item::Store(s) => self.rx().check_store(s),
            Item::Entity(e) => {
                let Some(Decl::Entity(eid, id)) = self.own_decl(unit, e.name) else {
                    return;
                };
                self.rx().check_entity_store(e);
                let (store, fields): (Vec<_>, Vec<_>) = e
                    .fields
                    .iter()
                    .partition(|f| f.name.name == super::tables::words().store);
                let defs = self.rx().field_defs(unit, fields);
                self.types[id].kind = TypeKind::Record(defs);
                if let Some(s) = store.first() {
                    let store = self.rx().entity_store(unit, s);
                    self.prog.entities[eid].store = store;
                }
            }
            Item::Config(c) => {
                for f in &c.fields {
                    self.resolve_config_entry(unit, f);
                }
            }
            _ => {}
        }
    }

    /// The declaration a name in this unit's own table stands for, only when
    /// this very identifier declared it (a duplicate is skipped).
    fn own_decl(&self, unit: Owner, name: ast::Ident) -> Option<Decl> {
        match self.unit(unit).decls.get(&name.name) {
            Some((d, span)) if *span == name.span => Some(*d),
            _ => None,
        }
    }

    /// `steps_key: StepsKey { binding: "STEPS_KEY" secret: true }`
    fn resolve_config_entry(&mut self, unit: Owner, f: &ast::FieldDecl) {
        match self.unit(unit).config.get(&f.name.name) {
            Some(e) if e.span == f.name.span => {}
            _ => return,
        }
        let (ty, secret) = match &f.ty.kind {
            TypeExprKind::Named {
                path,
                args,
                constraints,
            } => {
                let bare = ast::TypeExpr {
                    kind: TypeExprKind::Named {
                        path: path.clone(),
                        args: args.clone(),
                        constraints: Vec::new(),
                    },
                    span: path.span,
                };
                let ty = self.rx().resolve_type(unit, &bare);
                (ty, self.rx().config_settings(constraints))
            }
            _ => (
                self.rx().resolve_type(unit, &f.ty),
                ConfigSettings::default(),
            ),
        };
        if let Some(e) = self.unit_mut(unit).config.get_mut(&f.name.name) {
            e.ty = if f.optional {
                Ty::Optional(Box::new(ty))
            } else {
                ty
            };
            e.secret = secret.secret;
            e.binding = secret.binding;
            e.default = secret.default;
        }
    }

    /// The worst-case JSON size of each event field.
    fn compute_event_sizes(&mut self) {
        for u in 0..self.units.len() {
            let owner = self.units[u].owner;
            // Each event's sizes land at its own index: the order is moot.
            let decls: Vec<(ir::EventId, super::tables::TypeId)> = self.units[u]
                .decls
                .values_unordered()
                .filter_map(|(d, _)| match d {
                    Decl::Event(e, t) => Some((*e, *t)),
                    _ => None,
                })
                .collect();
            let _ = owner;
            for (e, t) in decls {
                let TypeKind::Record(fields) = &self.types[t].kind else {
                    continue;
                };
                let lowered: Vec<ir::EventField> = fields
                    .iter()
                    .map(|f| ir::EventField {
                        name: f.name,
                        max_json_bytes: super::size::max_json_bytes(&self.t, &f.ty, f.optional),
                        span: f.span,
                    })
                    .collect();
                self.prog.events[e].fields = lowered;
            }
        }
    }
}

fn number_value(e: &ast::Expr) -> Option<f64> {
    match &e.kind {
        ExprKind::Int(n) => Some(*n as f64),
        ExprKind::Decimal(s) => s.parse().ok(),
        ExprKind::Unary(ast::UnOp::Neg, inner) => number_value(inner).map(|v| -v),
        _ => None,
    }
}

impl<'a> Tables<'a> {
    fn type_table(&self) -> ir::Types<'_> {
        ir::Types(&self.types)
    }

    /// The primitive a type is built on, looking through declared aliases.
    pub(super) fn prim_of(&self, ty: &Ty) -> Option<Prim> {
        self.type_table().prim_of(ty)
    }

    /// The structural base of a type: declared aliases and bounds removed.
    pub(super) fn base_of<'t>(&'t self, ty: &'t Ty) -> &'t Ty {
        ir::Types(&self.types).base_of(ty)
    }

    /// Every set of bounds that applies to a value of this type, outermost
    /// first.
    pub(super) fn bounds_of<'t>(&'t self, ty: &'t Ty) -> impl Iterator<Item = &'t Bounds> + 't {
        ir::Types(&self.types).bounds_of(ty)
    }

    /// Whether a value of type `actual` may be used where `expected` is
    /// wanted. Types are nominal; a declared type's value is accepted where
    /// its structure (a primitive, a list) is expected.
    pub(super) fn accepts(&self, expected: &Ty, actual: &Ty) -> bool {
        let (e, a) = (expected.unbounded(), actual.unbounded());
        match (e, a) {
            (Ty::Error, _) | (_, Ty::Error) => true,
            (Ty::Optional(_), Ty::NoneValue) => true,
            (Ty::Optional(ei), Ty::Optional(ai)) => self.accepts(ei, ai),
            (Ty::Optional(ei), _) => self.accepts(ei, a),
            (Ty::Named(t), Ty::Named(u)) => t == u,
            (Ty::Named(_), _) => false,
            (_, Ty::Named(_)) => {
                let base = self.base_of(a);
                !matches!(base, Ty::Named(_)) && self.accepts(e, base)
            }
            (Ty::Prim(Prim::Decimal), Ty::Prim(Prim::Int)) => true,
            (Ty::Prim(p), Ty::Prim(q)) => p == q,
            (Ty::List(ei), Ty::List(ai)) => self.accepts(ei, ai),
            _ => false,
        }
    }
}

/// What a config entry's settings say.
#[derive(Default)]
struct ConfigSettings {
    secret: bool,
    /// The environment variable, from `binding: "STEPS_KEY"`.
    binding: Option<String>,
    /// `default:` as text, when it is a literal.
    default: Option<String>,
}
