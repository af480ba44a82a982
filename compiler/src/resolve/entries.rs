//! Entry points (`route`, `subscriber`, `schedule`) and `application`
//! settings, resolved and lowered to [`crate::ir::Entry`] and
//! [`crate::ir::AppSettings`].

use crate::ast::{self, ExprKind, Item, SettingValue};
use crate::diag::Diagnostic;
use crate::intern::Name;
use crate::ir::{self, ActionId, EntryKind, Owner};
use crate::span::Span;

use super::body::{BodyKind, Cx, EntryNote};
use super::calls::Params;
use super::carry::Entries;
use super::tables::{words, Callable, ConfigEntry, FieldDef, Ty, TypeDef};
use super::{Builder, Resolver};
use crate::diag::nearest;
use crate::ir::code;
use rayon::prelude::*;

pub const ROUTE_KEYS: [&str; 8] = [
    "auth",
    "idempotency_key",
    "deadline",
    "input",
    "output",
    "path",
    "run",
    "action",
];
const METHODS: [&str; 5] = ["GET", "POST", "PUT", "PATCH", "DELETE"];
const APP_KEYS: [&str; 3] = ["steps", "events", "providers"];

impl<'a> Builder<'a> {
    pub(super) fn resolve_application(&mut self) {
        let Some(app) = self.application else { return };
        self.prog.app.span = Some(app.name.span);
        self.rx().check_setting_repeats(app.settings.iter());
        for s in &app.settings {
            match (s.key.name.as_str(), &s.value) {
                ("steps", SettingValue::Record(items, _)) => {
                    for item in items {
                        self.steps_setting(item);
                    }
                }
                ("events", SettingValue::Record(items, _)) => {
                    for item in items {
                        self.events_setting(item);
                    }
                }
                ("providers", v) => self.providers_setting(v, s.key),
                ("steps" | "events", v) => self.rx().report_setting_value(
                    s.key,
                    v,
                    "a record such as `{ store: primary }`",
                ),
                _ => self
                    .rx()
                    .report_unknown_key(s.key, "application setting", &APP_KEYS),
            }
        }
    }

    fn steps_setting(&mut self, item: &ast::Setting) {
        if item.key.name.as_str() != "encryption_key" {
            self.rx()
                .report_unknown_key(item.key, "`steps` setting", &["encryption_key"]);
            return;
        }
        if let Some((name, c)) = self.config_entry(item) {
            self.prog.app.encryption_key = Some(ir::EncryptionKey {
                span: item.value.span(),
                name,
                secret: c.secret,
                config_span: Some(c.span),
            });
        }
    }

    /// The config entry a setting names (`config.steps_key`), reported when
    /// the value is not one or names none.
    pub(super) fn config_entry(&mut self, item: &ast::Setting) -> Option<(Name, ConfigEntry)> {
        let wanted = "a config entry such as `config.steps_key`";
        let path = match &item.value {
            SettingValue::Expr(ast::Expr {
                kind: ExprKind::Path(p),
                ..
            }) => p,
            v => {
                self.rx().report_setting_value(item.key, v, wanted);
                return None;
            }
        };
        let [first, entry] = path.segments.as_slice() else {
            self.rx()
                .report_setting_value(item.key, &item.value, wanted);
            return None;
        };
        if first.name.as_str() != "config" {
            self.rx()
                .report_setting_value(item.key, &item.value, wanted);
            return None;
        }
        if let Some(c) = self.unit(Owner::App).config.get(&entry.name).cloned() {
            return Some((entry.name, c));
        }
        let cands: Vec<String> = self
            .unit(Owner::App)
            .config
            .keys()
            .map(|n| n.as_str().to_string())
            .collect();
        self.rx().report_unknown(
            "name.unknown_config",
            "config entry",
            entry.span,
            entry.name.as_str(),
            &cands,
        );
        None
    }

    fn events_setting(&mut self, item: &ast::Setting) {
        if item.key.name.as_str() != "store" {
            self.rx()
                .report_unknown_key(item.key, "`events` setting", &["store"]);
            return;
        }
        if let Some(store) = self.rx().store_name(&item.value) {
            self.prog.app.events_store = Some(store);
        }
    }

    /// Entry points, resolved in parallel (each reads only the tables) and
    /// added in source order with their diagnostics; those `carried` from
    /// the last resolution are taken as they were.
    pub(super) fn resolve_entries(&mut self, carried: Option<Entries<'_>>) {
        let items: Vec<(Owner, &'a Item)> = self
            .units
            .iter()
            .zip(&self.unit_asts)
            .flat_map(|(u, asts)| {
                asts.iter()
                    .flat_map(move |file| file.items.iter().map(move |item| (u.owner, item)))
            })
            .filter(|(_, item)| is_entry(item))
            .collect();
        let mut carried = match carried.filter(|_| !self.code) {
            Some(entries) => self.carry_entries(entries, &items),
            None => Vec::new(),
        };
        let is_carried = |i: usize| carried.get(i).is_some_and(Option::is_some);
        let todo: Vec<&(Owner, &'a Item)> = (items.iter().enumerate())
            .filter(|(i, _)| !is_carried(*i))
            .map(|(_, item)| item)
            .collect();
        let t = &self.t;
        let mut done = todo
            .par_iter()
            .with_min_len(64)
            .map(|(owner, item)| {
                let mut diags = Vec::new();
                let entry = Resolver::new(t, &mut diags).entry_item(*owner, item);
                (entry, diags)
            })
            .collect::<Vec<_>>()
            .into_iter();
        self.prog.entries.reserve(items.len());
        for i in 0..items.len() {
            let (entry, mut diags) = match carried.get_mut(i).and_then(Option::take) {
                Some(entry) => (Some(entry), Vec::new()),
                None => done.next().unwrap_or_default(),
            };
            self.diags.append(&mut diags);
            if let Some(entry) = entry {
                self.prog.entries.push(entry);
            }
        }
        let hashes: Vec<u64> = self.prog.entries.par_iter().map(key_hash).collect();
        self.check_entry_duplicates(&hashes);
    }

    /// The last resolution's entry points `entries` may carry, one per
    /// item of `items` (found and retyped on every thread).
    fn carry_entries(
        &self,
        mut entries: Entries<'_>,
        items: &[(Owner, &Item)],
    ) -> Vec<Option<ir::Entry>> {
        let found: Vec<Option<usize>> = items
            .par_iter()
            .map(|(owner, item)| match (owner, item) {
                (Owner::App, Item::Route(r)) => entries.find(r.method.span.to(r.path_span)),
                (Owner::App, Item::Subscriber(s)) => entries.find(s.name.span),
                (Owner::App, Item::Schedule(s)) => entries.find(s.name.span),
                _ => None,
            })
            .collect();
        let mut carried: Vec<Option<ir::Entry>> = found
            .into_iter()
            .map(|i| i.and_then(|i| entries.take(i)))
            .collect();
        let t = &self.t;
        let new_type = |old: &TypeDef| {
            let declared = t.unit(old.owner).decls.get(&old.name);
            match (declared, old.span) {
                (Some((decl, at)), Some(span)) if *at == span => decl.as_type(),
                _ => None,
            }
        };
        (carried.par_iter_mut().zip(items)).for_each(|(slot, (_, item))| {
            let path_type = match item {
                Item::Route(r) => t.route_path_of.get(&super::collect::route_key(r)).copied(),
                _ => None,
            };
            if slot
                .as_mut()
                .is_some_and(|e| !entries.retype(e, &new_type, path_type))
            {
                *slot = None;
            }
        });
        if carried.iter().any(Option::is_some) {
            cov_mark::hit!(carry_keeps_an_entry);
        }
        carried
    }

    /// Two routes with one method and path (placeholders compared by
    /// position), or two subscribers or schedules with one name.
    /// `hashes` holds each entry's [`key_hash`]. Entries are ordered by
    /// hash, then (only where hashes tie) by key, then by position, so the
    /// work stays `n log n` even if many keys share a hash; the first of
    /// each run of equal keys is the declaration the others repeat.
    fn check_entry_duplicates(&mut self, hashes: &[u64]) {
        let entries = &self.prog.entries;
        let mut order: Vec<(u64, usize)> = hashes.iter().copied().zip(0..).collect();
        order.sort_unstable_by(|(ha, a), (hb, b)| {
            ha.cmp(hb)
                .then_with(|| match (entries.get(*a), entries.get(*b)) {
                    (Some(x), Some(y)) => entry_key(x).cmp(&entry_key(y)),
                    _ => std::cmp::Ordering::Equal,
                })
                .then(a.cmp(b))
        });
        let mut found = Vec::new();
        let mut first: Option<(u64, &ir::Entry)> = None;
        for (hash, i) in order {
            let Some(e) = entries.get(i) else { continue };
            match first {
                Some((h, f)) if h == hash && entry_key(f) == entry_key(e) => {
                    found.push((i, e.kind.clone(), e.label.clone(), e.span, f.span));
                }
                _ => first = Some((hash, e)),
            }
        }
        found.sort_unstable_by_key(|(i, ..)| *i);
        for (_, kind, label, span, first) in found {
            let d = match kind {
                EntryKind::Route { .. } => Diagnostic::error(
                    "entry.duplicate_route",
                    span,
                    format!("`{label}` is declared twice"),
                )
                .with_label("the same method and path again")
                .with_related(first, "first declared here")
                .with_reason("a request is answered by one route: two with the same method and path (placeholders compared by position) would both match")
                .with_fix("remove one, or give it another path"),
                _ => Diagnostic::error("name.duplicate", span, format!("`{label}` is declared twice"))
                    .with_label("the same name again")
                    .with_related(first, "first declared here")
                    .with_reason("each delivery is named after its subscriber or schedule")
                    .with_fix("rename one of them"),
            };
            self.error(d);
        }
    }
}

/// What two entry points may not share: a route's method and path
/// (placeholders compared by position), or a subscriber's or schedule's
/// name. Borrowed: a large app has one per route and subscriber.
#[derive(PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Key<'e> {
    Route(&'e str, std::borrow::Cow<'e, str>),
    Named(&'e str),
}

fn entry_key(e: &ir::Entry) -> Key<'_> {
    match &e.kind {
        EntryKind::Route { method, path, .. } => Key::Route(method, path_shape(path)),
        _ => Key::Named(&e.label),
    }
}

/// A hash of an entry's [`Key`], the same in every run (it orders the
/// check, never the output): equal keys hash alike. A route's path is
/// hashed as its shape without building it, as a large app has one
/// route per action.
fn key_hash(e: &ir::Entry) -> u64 {
    use std::hash::Hasher;
    let mut h = crate::intern::FxHasher::default();
    match &e.kind {
        EntryKind::Route { method, path, .. } => {
            h.write(method.as_bytes());
            h.write_u8(0xff);
            // Byte by byte: two paths of one shape may split differently.
            let bytes = shape_pieces(path).flat_map(str::bytes);
            bytes.for_each(|b| h.write_u8(b));
        }
        _ => h.write(e.label.as_bytes()),
    }
    h.finish()
}

/// Whether `item` is an entry point.
fn is_entry(item: &Item) -> bool {
    matches!(
        item,
        Item::Route(_) | Item::Subscriber(_) | Item::Schedule(_)
    )
}

impl<'a> Resolver<'_, 'a> {
    /// A setting naming a store of the app.
    fn store_name(&mut self, v: &SettingValue) -> Option<(Name, Span)> {
        let one = match v {
            SettingValue::Expr(ast::Expr {
                kind: ExprKind::Path(p),
                ..
            }) if p.segments.len() == 1 => p.segments.first().copied()?,
            SettingValue::Expr(ast::Expr {
                kind: ExprKind::Error,
                ..
            }) => return None,
            other => {
                let d = Diagnostic::error(
                    "type.setting_value",
                    other.span(),
                    "expected the name of a store",
                )
                .with_fix("name a store declared with `store name { kind: postgres }`");
                self.error(d);
                return None;
            }
        };
        if self.unit(Owner::App).stores.contains_key(&one.name) {
            return Some((one.name, one.span));
        }
        let cands: Vec<String> = self
            .unit(Owner::App)
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

    pub(super) fn report_setting_value(&mut self, key: ast::Ident, v: &SettingValue, wanted: &str) {
        if matches!(
            v,
            SettingValue::Expr(ast::Expr {
                kind: ExprKind::Error,
                ..
            })
        ) {
            return;
        }
        let d = Diagnostic::error(
            "type.setting_value",
            v.span(),
            format!("`{}` needs {wanted}", key.name),
        )
        .with_label(format!("not {wanted}"))
        .with_fix(format!("write {wanted} after `{}:`", key.name));
        self.error(d);
    }

    fn entry_item(&mut self, unit: Owner, item: &Item) -> Option<ir::Entry> {
        let span = match item {
            Item::Route(r) => r.method.span,
            Item::Subscriber(s) => s.name.span,
            Item::Schedule(s) => s.name.span,
            _ => return None,
        };
        if unit != Owner::App {
            let d = Diagnostic::error("name.misplaced_entry", span, "a package cannot declare entry points")
                .with_reason("routes, subscribers and schedules belong to the app; a package offers actions and operations")
                .with_fix("move this entry point to the app and call the package's public action from it");
            self.error(d);
            return None;
        }
        let entry = match item {
            Item::Route(r) => self.route(r),
            Item::Subscriber(s) => self.subscriber(s),
            Item::Schedule(s) => self.schedule(s),
            _ => return None,
        };
        Some(entry)
    }

    /// The fields of a route's `path: { name: Type }`, one per entry.
    pub(super) fn route_path_fields(&mut self, r: &ast::RouteDecl) -> Vec<FieldDef> {
        let mut fields: Vec<FieldDef> = Vec::new();
        let Some(setting) = r
            .settings
            .iter()
            .find(|s| s.key.name == super::tables::words().path)
        else {
            return fields;
        };
        let SettingValue::Record(items, _) = &setting.value else {
            return fields;
        };
        for item in items {
            if let Some(first) = fields.iter().find(|f| f.name == item.key.name) {
                let first = first.span;
                self.report_duplicate("path parameter", item.key, first);
                continue;
            }
            let ty = match &item.value {
                SettingValue::Expr(e) => self.setting_type(Owner::App, e),
                v => {
                    self.report_setting_value(item.key, v, "a type name");
                    Ty::Error
                }
            };
            fields.push(FieldDef {
                name: item.key.name,
                ty,
                optional: false,
                span: item.key.span,
            });
        }
        fields
    }

    fn route(&mut self, r: &ast::RouteDecl) -> ir::Entry {
        let key = super::collect::route_key(r);
        let inline = self.route_action_of.get(&key).copied();
        let path_type = self.route_path_of.get(&key).copied();
        let label = format!("route {} {}", r.method.name, r.path);
        self.check_method(r.method);
        let (mut key_required, mut auth_required) = (false, false);
        let (mut key_span, mut deadline_ms, mut deadline_span) = (None, None, None);
        let (mut input, mut output) = (None, None);
        let mut run: Option<&ast::Setting> = None;
        let mut path_setting = None;
        for (i, s) in r.settings.iter().enumerate() {
            let key = s.key.name.as_str();
            if let Some(first) = r.settings[..i].iter().find(|o| o.key.name == s.key.name) {
                self.report_duplicate("setting", s.key, first.key.span);
                continue;
            }
            match key {
                "idempotency_key" => {
                    key_span = Some(s.span);
                    key_required = self.key_setting(s);
                }
                "deadline" => {
                    deadline_span = Some(s.value.span());
                    deadline_ms = self.duration_setting(s);
                }
                "auth" => auth_required = self.auth_setting(s),
                "path" => path_setting = Some(s),
                "input" | "output" if inline.is_none() => {
                    let ty = match &s.value {
                        SettingValue::Expr(e) => self.setting_type(Owner::App, e),
                        v => {
                            self.report_setting_value(s.key, v, "a type name");
                            Ty::Error
                        }
                    };
                    if key == "input" {
                        input = Some(ty)
                    } else {
                        output = Some(ty)
                    }
                }
                "run" | "action" => match run {
                    Some(first) => self.report_run_twice(s, first),
                    None => run = Some(s),
                },
                "input" | "output" => {}
                _ => self.report_unknown_key(s.key, "route setting", &ROUTE_KEYS),
            }
        }
        self.check_placeholders(r, path_setting, path_type);
        let kind = EntryKind::Route {
            method: r.method.name.as_str().to_string(),
            path: r.path.clone(),
            key_required,
            key_span,
            deadline_ms,
            deadline_span,
            auth_required,
            input: input.clone(),
            path_values: path_type.map(Ty::Named),
            output: output.clone(),
        };
        let span = r.method.span.to(r.path_span);
        let (action, run_span, run_args) = match (inline, run) {
            (Some(id), Some(s)) => (Some(id), s.value.span(), Vec::new()),
            (_, Some(s)) => {
                let values = EntryValues {
                    locals: vec![
                        input.map(|t| (words().input, t)),
                        path_type.map(|t| (words().path, Ty::Named(t))),
                    ],
                    what: "a route",
                };
                let (action, args) = self.run_setting(s, &values, output.as_ref());
                (action, s.value.span(), args)
            }
            (_, None) => {
                self.report_missing_run(span, "route");
                (None, span, Vec::new())
            }
        };
        ir::Entry {
            kind,
            label,
            span,
            run_span,
            action,
            run_args,
        }
    }

    fn check_method(&mut self, method: ast::Ident) {
        let written = method.name.as_str();
        if METHODS.contains(&written) {
            return;
        }
        let mut d = Diagnostic::error(
            "entry.unknown_method",
            method.span,
            format!("`{written}` is not an HTTP method a route can answer"),
        )
        .with_label("not an HTTP method")
        .with_reason(format!("a route's method is one of {}", METHODS.join(" ")));
        let upper = written.to_ascii_uppercase();
        match nearest(&upper, METHODS.iter().copied()) {
            Some(near) => d = d.with_did_you_mean(method.span, near),
            None => d = d.with_fix("write one of GET POST PUT PATCH DELETE"),
        }
        self.error(d);
    }

    /// Each `{name}` of the path has exactly one entry in `path: { }`, and
    /// each entry a placeholder.
    fn check_placeholders(
        &mut self,
        r: &ast::RouteDecl,
        setting: Option<&ast::Setting>,
        path_type: Option<super::tables::TypeId>,
    ) {
        let holes = placeholders(&r.path);
        let mut seen: Vec<&str> = Vec::new();
        for (i, (name, at)) in holes.iter().enumerate() {
            let span = Span::new(
                r.path_span.file,
                r.path_span.start + at,
                r.path_span.start + at + name.len() as u32 + 2,
            );
            let repeated_later = holes[i + 1..].iter().any(|(n, _)| n == name);
            if seen.contains(name) {
                let d = Diagnostic::error(
                    "entry.path_params",
                    span,
                    format!("the placeholder `{{{name}}}` appears twice in this path"),
                )
                .with_label("the same placeholder again")
                .with_reason("each placeholder names one segment of the path, read as `path.name`")
                .with_fix("give each placeholder its own name");
                self.error(d);
                continue;
            }
            seen.push(name);
            if repeated_later {
                // The repeat, reported at its second place, is this
                // placeholder's one mistake.
                continue;
            }
            let declared = path_type
                .and_then(|t| self.record_of(t))
                .is_some_and(|fields| fields.iter().any(|f| f.name.as_str() == *name));
            if !declared {
                let at_setting = setting.map(|s| s.key.span);
                let mut d = Diagnostic::error(
                    "entry.path_params",
                    span,
                    format!("the placeholder `{{{name}}}` has no entry in `path: {{ }}`"),
                )
                .with_label("no type declared for this segment")
                .with_reason("each placeholder's type is declared in `path: { name: Type }`, so the value is checked before the action runs")
                .with_fix(format!("add `path: {{ {name}: Text }}` (with the type of the segment)"));
                if let Some(s) = at_setting {
                    d = d.with_related(s, "the path parameters are declared here");
                }
                self.error(d);
            }
        }
        let Some(fields) = path_type.and_then(|t| self.record_of(t)) else {
            return;
        };
        for f in fields {
            if !holes.iter().any(|(n, _)| *n == f.name.as_str()) {
                let d = Diagnostic::error(
                    "entry.path_params",
                    f.span,
                    format!("`{}` is not a placeholder of the path `{}`", f.name, r.path),
                )
                .with_label("no `{...}` of the path has this name")
                .with_related(r.path_span, "the route's path")
                .with_fix(format!(
                    "add `{{{}}}` to the path, or remove this entry",
                    f.name
                ));
                self.error(d);
            }
        }
    }

    /// Whether `auth:` says `required`.
    fn auth_setting(&mut self, s: &ast::Setting) -> bool {
        match &s.value {
            SettingValue::Expr(ast::Expr {
                kind: ExprKind::Path(p),
                ..
            }) if is_word(p, "required") => true,
            SettingValue::Expr(ast::Expr {
                kind: ExprKind::None,
                ..
            }) => false,
            v => {
                self.report_setting_value(s.key, v, "`required` or `none`");
                false
            }
        }
    }

    fn key_setting(&mut self, s: &ast::Setting) -> bool {
        match &s.value {
            SettingValue::Expr(ast::Expr {
                kind: ExprKind::Path(p),
                ..
            }) if is_word(p, "required") => true,
            SettingValue::Expr(ast::Expr {
                kind: ExprKind::Path(p),
                ..
            }) if is_word(p, "optional") => false,
            v => {
                self.report_setting_value(s.key, v, "`required` or `optional`");
                false
            }
        }
    }

    fn duration_setting(&mut self, s: &ast::Setting) -> Option<u64> {
        if let SettingValue::Expr(ast::Expr {
            kind: ExprKind::Duration(n, unit),
            ..
        }) = &s.value
        {
            let ms = duration_ms(*n, *unit);
            if ms == 0 {
                self.report_zero_duration(s.value.span(), s.key.name.as_str());
                return None;
            }
            return Some(ms);
        }
        self.report_setting_value(s.key, &s.value, "a duration such as `60s`");
        None
    }

    fn report_zero_duration(&mut self, span: Span, what: &str) {
        let d = Diagnostic::error(
            "type.setting_value",
            span,
            format!("`{what}` needs a positive duration"),
        )
        .with_label("zero")
        .with_reason("a zero duration leaves no time at all")
        .with_fix("write a duration of 1 or more, such as `60s`");
        self.error(d);
    }

    fn report_run_twice(&mut self, s: &ast::Setting, first: &ast::Setting) {
        let d = Diagnostic::error(
            "name.duplicate",
            s.key.span,
            "an entry point has either `run:` or `action: { }`, not both",
        )
        .with_related(first.key.span, "already given here")
        .with_fix("keep one of the two");
        self.error(d);
    }

    fn report_missing_run(&mut self, span: Span, what: &str) {
        let d = Diagnostic::error(
            "name.missing_run",
            span,
            format!("this {what} does not say what it runs"),
        )
        .with_reason("an entry point runs an app action")
        .with_fix("add `run: action_name(...)`");
        self.error(d);
    }

    fn subscriber(&mut self, s: &ast::SubscriberDecl) -> ir::Entry {
        let event = self.find_event(Owner::App, &s.event);
        let ty = event.map_or(Ty::Error, |(_, t)| Ty::Named(t));
        let values = EntryValues {
            locals: vec![Some((words().event, ty))],
            what: "a subscriber",
        };
        let (action, run_span, run_args) =
            self.entry_run(s.name.span, "subscriber", &s.settings, &values);
        ir::Entry {
            kind: EntryKind::Subscriber {
                event: event.map(|e| e.0),
            },
            label: format!("subscriber {}", s.name.name),
            span: s.name.span,
            run_span,
            action,
            run_args,
        }
    }

    fn schedule(&mut self, s: &ast::ScheduleDecl) -> ir::Entry {
        match &s.every.kind {
            ExprKind::Duration(n, unit) if duration_ms(*n, *unit) == 0 => {
                self.report_zero_duration(s.every.span, "every")
            }
            ExprKind::Duration(..) | ExprKind::Error => {}
            _ => {
                let d = Diagnostic::error(
                    "type.setting_value",
                    s.every.span,
                    "`every` needs a duration such as `1h`",
                )
                .with_fix("write a duration after `every`");
                self.error(d);
            }
        }
        let values = EntryValues {
            locals: Vec::new(),
            what: "a schedule",
        };
        let (action, run_span, run_args) =
            self.entry_run(s.name.span, "schedule", &s.settings, &values);
        let every_ms = match &s.every.kind {
            ExprKind::Duration(n, unit) => duration_ms(*n, *unit),
            _ => 0,
        };
        ir::Entry {
            kind: EntryKind::Schedule { every_ms },
            label: format!("schedule {}", s.name.name),
            span: s.name.span,
            run_span,
            action,
            run_args,
        }
    }

    /// The `run:` of a subscriber or schedule (their only setting).
    fn entry_run(
        &mut self,
        span: Span,
        what: &str,
        settings: &[ast::Setting],
        values: &EntryValues,
    ) -> (Option<ActionId>, Span, Vec<code::Expr>) {
        let mut run = None;
        for s in settings {
            if s.key.name.as_str() != "run" {
                self.report_unknown_key(s.key, &format!("{what} setting"), &["run"]);
                continue;
            }
            match run {
                Some(first) => self.report_run_twice(s, first),
                None => run = Some(s),
            }
        }
        match run {
            Some(s) => {
                let (action, args) = self.run_setting(s, values, None);
                (action, s.value.span(), args)
            }
            None => {
                self.report_missing_run(span, what);
                (None, span, Vec::new())
            }
        }
    }

    /// `run: action(args)`: an app action, called with matching arguments
    /// over the values the entry provides.
    fn run_setting(
        &mut self,
        s: &ast::Setting,
        values: &EntryValues,
        output: Option<&Ty>,
    ) -> (Option<ActionId>, Vec<code::Expr>) {
        let wanted = "a call of an app action, such as `subscribe(input)`";
        let SettingValue::Expr(e) = &s.value else {
            self.report_setting_value(s.key, &s.value, wanted);
            return (None, Vec::new());
        };
        let ExprKind::Call { callee, args } = &e.kind else {
            self.report_setting_value(s.key, &s.value, wanted);
            return (None, Vec::new());
        };
        let mut cx = Cx::new(Owner::App, BodyKind::RouteAction, Ty::unit());
        for local in &values.locals {
            match local {
                Some((n, t)) => {
                    cx.bind(*n, t.clone(), false);
                }
                None => cx.slots += 1,
            }
        }
        cx.entry_values = Some(values.note());
        let mut sink = ir::Block::default();
        let Some(id) = self.run_callee(callee, args) else {
            self.field_values_only_exprs(&mut cx, args, &mut sink);
            return (None, Vec::new());
        };
        // The tables outlive this resolver: the signature is read in place.
        let t = self.t;
        let sig = &t.actions[id];
        let label = &t.prog.action(id).qualified;
        let code = self.check_args(
            &mut cx,
            e.span,
            label,
            Params::Sig(&sig.params),
            args,
            &mut sink,
        );
        if let Some(out) = output {
            if !self.accepts(out, &sig.ret) {
                let (o, r) = (
                    self.type_name(out, Owner::App),
                    self.type_name(&sig.ret, Owner::App),
                );
                let d = Diagnostic::error(
                    "type.mismatch",
                    e.span,
                    format!("the route's output is `{o}`, but this action returns `{r}`"),
                )
                .with_fix(format!(
                    "declare `output: {r}`, or run an action that returns `{o}`"
                ));
                self.error(d);
            }
        }
        (Some(id), code)
    }

    fn run_callee(&mut self, callee: &ast::Expr, args: &[ast::Expr]) -> Option<ActionId> {
        let ExprKind::Path(path) = &callee.kind else {
            return None;
        };
        if let [one] = path.segments.as_slice() {
            match self.unit(Owner::App).callables.get(&one.name).map(|c| c.0) {
                Some(Callable::Action(a)) => return Some(a),
                Some(Callable::Function(_)) => {
                    let d = Diagnostic::error(
                        "name.not_action",
                        one.span,
                        format!(
                            "`{}` is a function; an entry point runs an action",
                            one.name
                        ),
                    )
                    .with_fix("run an app action, which may call this function");
                    self.error(d);
                    return None;
                }
                None => {}
            }
        }
        if let [pkg, name] = path.segments.as_slice() {
            if let Some(a) = self.package_action(pkg, name) {
                self.report_package_run(path, a, args);
                return None;
            }
        }
        let cands = self.unit(Owner::App).action_names();
        self.report_unknown(
            "name.unknown_action",
            "app action",
            path.span,
            &path.text(),
            &cands,
        );
        None
    }

    /// `pkg.name` when it names an action of a package the app requires.
    fn package_action(&self, pkg: &ast::Ident, name: &ast::Ident) -> Option<ActionId> {
        let p = *self.unit(Owner::App).sees.get(&pkg.name)?;
        match self.unit(Owner::Package(p)).callables.get(&name.name) {
            Some((Callable::Action(a), _)) => Some(*a),
            _ => None,
        }
    }

    /// `run: stripe.subscribe_customer(input)`: a package action runs only
    /// inside an app action; the fix shows the wrapper.
    fn report_package_run(&mut self, path: &ast::Path, a: ActionId, args: &[ast::Expr]) {
        let t = self.t;
        let sig = &t.actions[a];
        let action = t.prog.action(a);
        let name = path.segments.last().map_or("", |s| s.name.as_str());
        let params: Vec<String> = sig
            .params
            .iter()
            .map(|(n, ty, _)| format!("{n}: {}", self.type_name(ty, Owner::App)))
            .collect();
        let names: Vec<String> = sig.params.iter().map(|(n, _, _)| n.to_string()).collect();
        let ret = self.type_name(&sig.ret, Owner::App);
        let fails: Vec<String> = sig
            .fails
            .iter()
            .map(|f| self.failure_name(*f, Owner::App))
            .collect();
        let fails = if fails.is_empty() {
            String::new()
        } else {
            format!(" fails {}", fails.join(", "))
        };
        let wrapper = format!(
            "action {name}({}){fails} -> {ret} {{\n    return attempt {}({})\n}}",
            params.join(", "),
            path.text(),
            names.join(", ")
        );
        let _ = args;
        let d = Diagnostic::error(
            "entry.package_action",
            path.span,
            format!("`{}` is a package action; an entry point runs an app action", path.text()),
        )
        .with_label("a package's action")
        .with_related(action.name_span, "declared in the package here")
        .with_reason("an entry point's delivery, record and follow-ups belong to an app action; a package action runs inside one")
        .with_fix(format!("declare an app action that calls it, and run that one:\n{wrapper}"));
        self.error(d);
    }
}

/// The values an entry point provides to its `run:` call, in slot order
/// (`None` for a slot the entry leaves empty).
pub(super) struct EntryValues {
    pub locals: Vec<Option<(Name, Ty)>>,
    pub what: &'static str,
}

impl EntryValues {
    /// Which names the entry provides, for the note on an unknown name in
    /// `run:` (written only if one is reported).
    fn note(&self) -> EntryNote {
        let mut shown = [None; 2];
        let provided = self.locals.iter().flatten();
        for (slot, (name, ty)) in shown.iter_mut().zip(provided) {
            let words = words();
            if *name == words.path || !ty.is_error() || *name == words.event {
                *slot = Some(*name);
            }
        }
        EntryNote {
            what: self.what,
            shown,
        }
    }
}

/// The `{name}` placeholders of a route path, with their offsets in it.
fn placeholders(path: &str) -> Vec<(&str, u32)> {
    let mut out = Vec::new();
    let mut rest = path;
    let mut at = 0u32;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        out.push((&rest[open + 1..open + close], at + open as u32));
        at += (open + close + 1) as u32;
        rest = &rest[open + close + 1..];
    }
    out
}

/// A route path with its placeholders blanked: two routes with the same
/// method and shape collide.
pub(super) fn path_shape(path: &str) -> std::borrow::Cow<'_, str> {
    if !path.contains(['{', '}']) {
        return std::borrow::Cow::Borrowed(path);
    }
    std::borrow::Cow::Owned(shape_pieces(path).collect())
}

/// The pieces of [`path_shape`], in order: `{}` for each placeholder,
/// and the text between them without a stray `}`.
fn shape_pieces(path: &str) -> impl Iterator<Item = &str> {
    path.split('{').enumerate().flat_map(|(i, piece)| {
        let outside = match i {
            0 => Some(piece),
            _ => piece.split_once('}').map(|(_, after)| after),
        };
        let open = (i > 0).then_some("{}");
        open.into_iter()
            .chain(outside.into_iter().flat_map(|text| text.split('}')))
    })
}

/// Whether a path is the single word `word`.
fn is_word(p: &ast::Path, word: &str) -> bool {
    matches!(p.segments.as_slice(), [one] if one.name.as_str() == word)
}

pub(super) fn duration_ms(n: u64, unit: ast::DurationUnit) -> u64 {
    let factor = match unit {
        ast::DurationUnit::Ms => 1,
        ast::DurationUnit::S => 1_000,
        ast::DurationUnit::M => 60_000,
        ast::DurationUnit::H => 3_600_000,
        ast::DurationUnit::D => 86_400_000,
    };
    n.saturating_mul(factor)
}
