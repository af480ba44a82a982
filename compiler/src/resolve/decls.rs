//! The settings of declarations (design section 2): a store's `kind:`, an
//! entity's `store:`, a failure's `kind:`, `code:` and fields, a config
//! entry's `binding:` and `secret:`, and alias chains that loop back on
//! themselves. Each setting is given once, and a declaration has only the
//! settings the design shows.

use crate::ast::{self, ExprKind, SettingValue};
use crate::diag::Diagnostic;
use crate::index::IndexVec;
use crate::ir::{FailureId, Owner};
use crate::span::Span;

use super::tables::{Decl, TypeId, TypeKind};
use super::{Builder, Resolver};

/// The kinds of store an app may declare.
const STORE_KINDS: [&str; 2] = ["postgres", "sqlite"];

impl<'a> Builder<'a> {
    /// `failure F { kind: K code: "c" field: Type }`: its code and fields.
    pub(super) fn resolve_failure_def(&mut self, unit: Owner, f: &ast::FailureDecl) {
        let Some((Decl::Failure(id), span)) = self.unit(unit).decls.get(&f.name.name).copied()
        else {
            return;
        };
        if span != f.name.span {
            return;
        }
        let mut rx = self.rx();
        let code = rx.failure_code(f);
        let defs = rx.field_defs(unit, f.fields());
        rx.check_setting_repeats(f.settings());
        let failure = &mut self.prog.failures[id];
        failure.code = code;
        failure.fields = defs;
        let _: FailureId = id;
    }

    /// Alias chains that come back to where they started (`type A = B`,
    /// `type B = A`): reported once per cycle, at its first declaration.
    pub(super) fn check_alias_cycles(&mut self) {
        let mut reported: IndexVec<TypeId, bool> = vec![false; self.types.len()].into();
        for start in self.types.ids() {
            let Some(cycle) = self.alias_cycle(start) else {
                continue;
            };
            if cycle.iter().any(|t| reported[*t]) {
                continue;
            }
            for t in &cycle {
                reported[*t] = true;
            }
            self.report_alias_cycle(&cycle);
        }
    }

    /// The types of the alias cycle `start` begins, when it begins one.
    fn alias_cycle(&self, start: TypeId) -> Option<Vec<TypeId>> {
        let mut chain = vec![start];
        let mut at = start;
        loop {
            let TypeKind::Alias(inner) = &self.types.get(at)?.kind else {
                return None;
            };
            let super::tables::Ty::Named(next) = inner.unbounded() else {
                return None;
            };
            if *next == start {
                return Some(chain);
            }
            if chain.contains(next) || chain.len() > self.types.len() {
                return None;
            }
            chain.push(*next);
            at = *next;
        }
    }

    fn report_alias_cycle(&mut self, cycle: &[TypeId]) {
        let names: Vec<String> = cycle
            .iter()
            .map(|t| format!("`{}`", self.types[*t].name))
            .collect();
        let mut spans = cycle
            .iter()
            .filter_map(|t| self.types[*t].span)
            .collect::<Vec<Span>>();
        spans.sort();
        let Some((first, rest)) = spans.split_first() else {
            return;
        };
        let mut d = Diagnostic::error(
            "type.cycle",
            *first,
            format!("these types are defined in a circle: {}", names.join(" -> ")),
        )
        .with_label("this alias comes back to itself")
        .with_reason("an alias names the type it stands for; a chain of aliases that comes back to its start stands for nothing")
        .with_fix("define one of them as a primitive, an `Object` or an `Enum`");
        for s in rest {
            d = d.with_related(*s, "part of the circle");
        }
        self.error(d);
        for t in cycle {
            self.types[*t].kind = TypeKind::Pending;
        }
    }
}

impl<'a> Resolver<'_, 'a> {
    /// A failure's `code:` text; a missing or non-text code is reported.
    fn failure_code(&mut self, f: &ast::FailureDecl) -> String {
        let Some(setting) = f
            .settings()
            .find(|s| s.key.name == super::tables::words().code)
        else {
            let d = Diagnostic::error(
                "name.missing_setting",
                f.name.span,
                format!("failure `{}` does not say its `code:`", f.name.name),
            )
            .with_label("the setting is missing")
            .with_reason("the code is the stable name callers and clients see, e.g. in a route's error answer")
            .with_fix(format!(
                "add `code: \"{}\"`",
                snake_case(f.name.name.as_str())
            ));
            self.error(d);
            return String::new();
        };
        match &setting.value {
            SettingValue::Expr(ast::Expr {
                kind: ExprKind::Str(text),
                ..
            }) => text.clone(),
            SettingValue::Expr(ast::Expr {
                kind: ExprKind::Error,
                ..
            }) => String::new(),
            v => {
                self.report_setting_value(setting.key, v, "a text such as `\"payment_refused\"`");
                String::new()
            }
        }
    }

    /// A setting given twice in one declaration.
    pub(super) fn check_setting_repeats<'s>(
        &mut self,
        settings: impl Iterator<Item = &'s ast::Setting>,
    ) {
        let settings: Vec<&ast::Setting> = settings.collect();
        for (i, s) in settings.iter().enumerate() {
            if let Some(first) = settings[..i].iter().find(|o| o.key.name == s.key.name) {
                self.report_duplicate("setting", s.key, first.key.span);
            }
        }
    }

    /// `store primary { kind: postgres }`
    pub(super) fn check_store(&mut self, s: &ast::StoreDecl) {
        self.check_setting_repeats(s.settings.iter());
        let mut kind = None;
        for setting in &s.settings {
            if setting.key.name.as_str() != "kind" {
                self.report_unknown_key(setting.key, "store setting", &["kind"]);
                continue;
            }
            kind.get_or_insert(setting);
        }
        let Some(kind) = kind else {
            let d = Diagnostic::error(
                "name.missing_setting",
                s.name.span,
                format!("store `{}` does not say its `kind:`", s.name.name),
            )
            .with_label("the setting is missing")
            .with_reason("the kind decides how records, rows and the outbox are kept")
            .with_fix("add `kind: postgres` (or `kind: sqlite`)");
            self.error(d);
            return;
        };
        let written = match &kind.value {
            SettingValue::Expr(ast::Expr {
                kind: ExprKind::Path(p),
                ..
            }) if p.segments.len() == 1 => p.text(),
            SettingValue::Expr(ast::Expr {
                kind: ExprKind::Error,
                ..
            }) => return,
            _ => String::new(),
        };
        if STORE_KINDS.contains(&written.as_str()) {
            return;
        }
        let mut d = Diagnostic::error(
            "type.setting_value",
            kind.value.span(),
            "a store's `kind:` is `postgres` or `sqlite`",
        )
        .with_label("not a kind of store");
        if let Some(near) = crate::diag::nearest(&written, STORE_KINDS.iter().copied()) {
            d = d.with_did_you_mean(kind.value.span(), near);
        } else {
            d = d.with_fix("write `kind: postgres` or `kind: sqlite`");
        }
        self.error(d);
    }

    /// An entity names the store it lives in.
    pub(super) fn check_entity_store(&mut self, e: &ast::EntityDecl) {
        let stores: Vec<&ast::FieldDecl> = e
            .fields
            .iter()
            .filter(|f| f.name.name == super::tables::words().store)
            .collect();
        if let [first, second, ..] = stores.as_slice() {
            self.report_duplicate("setting", second.name, first.name.span);
        }
        if stores.is_empty() {
            let d = Diagnostic::error(
                "name.missing_setting",
                e.name.span,
                format!("entity `{}` does not say its `store:`", e.name.name),
            )
            .with_label("the setting is missing")
            .with_reason("an entity's rows live in one store, which its writes and queries use")
            .with_fix("add `store: primary` (the name of a declared store) as its first line");
            self.error(d);
        }
    }

    /// A config entry's `binding:` is text and its `secret:` a Bool.
    pub(super) fn check_config_setting(&mut self, s: &ast::Setting) {
        let SettingValue::Expr(e) = &s.value else {
            return self.report_setting_value(s.key, &s.value, "a value");
        };
        let ok = match s.key.name.as_str() {
            "binding" => matches!(e.kind, ExprKind::Str(_) | ExprKind::Error),
            "secret" => matches!(e.kind, ExprKind::Bool(_) | ExprKind::Error),
            _ => true,
        };
        if ok {
            return;
        }
        let wanted = match s.key.name.as_str() {
            "binding" => "the name of the environment variable, as text: `\"STEPS_KEY\"`",
            _ => "`true` or `false`",
        };
        self.report_setting_value(s.key, &s.value, wanted);
    }
}

/// `PaymentRefused` as `payment_refused`.
fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}
