//! Entry points (`route`, `subscriber`, `schedule`) and `application`
//! settings, resolved and lowered to [`crate::ir::Entry`] and
//! [`crate::ir::AppSettings`].

use crate::ast::{self, ExprKind, Item, SettingValue};
use crate::diag::Diagnostic;
use crate::intern::Name;
use crate::ir::{self, ActionId, EntryKind, Owner};
use crate::span::{FileId, Span};

use super::body::{BodyKind, Cx};
use super::calls::Params;
use super::reuse::{entry_spans, Memo, Reuse};
use super::tables::{words, Callable, Ty};
use super::{Builder, Resolver};
use rayon::prelude::*;

const ROUTE_KEYS: [&str; 7] = [
    "auth",
    "idempotency_key",
    "deadline",
    "input",
    "output",
    "run",
    "action",
];
const APP_KEYS: [&str; 2] = ["steps", "events"];

impl<'a> Builder<'a> {
    pub(super) fn resolve_application(&mut self) {
        let Some(app) = self.application else { return };
        self.prog.app.span = Some(app.name.span);
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
        let path = match &item.value {
            SettingValue::Expr(ast::Expr {
                kind: ExprKind::Path(p),
                ..
            }) => p,
            v => {
                return self.rx().report_setting_value(
                    item.key,
                    v,
                    "a config entry such as `config.steps_key`",
                )
            }
        };
        let [first, entry] = path.segments.as_slice() else {
            return self.rx().report_setting_value(
                item.key,
                &item.value,
                "a config entry such as `config.steps_key`",
            );
        };
        if first.name.as_str() != "config" {
            return self.rx().report_setting_value(
                item.key,
                &item.value,
                "a config entry such as `config.steps_key`",
            );
        }
        let found = self.unit(Owner::App).config.get(&entry.name).cloned();
        match found {
            Some(c) => {
                self.prog.app.encryption_key = Some(ir::EncryptionKey {
                    span: path.span,
                    secret: c.secret,
                    config_span: Some(c.span),
                });
            }
            None => {
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
            }
        }
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
    /// added in source order with their diagnostics; with `reuse`, keeps
    /// what still holds of the last resolution's.
    pub(super) fn resolve_entries(&mut self, mut reuse: Option<&mut Reuse<'_>>) {
        let items: Vec<(Owner, &'a Item)> = self
            .units
            .iter()
            .zip(&self.unit_asts)
            .flat_map(|(u, asts)| {
                asts.iter()
                    .flat_map(move |file| file.items.iter().map(move |item| (u.owner, item)))
            })
            .filter(|(_, item)| entry_file(item).is_some())
            .collect();
        let files: Vec<FileId> = items
            .iter()
            .map(|(_, item)| entry_file(item).unwrap_or_default())
            .collect();
        let kept: Vec<bool> = match reuse.as_deref() {
            Some(r) => files
                .iter()
                .enumerate()
                .map(|(i, f)| r.entry_holds(i, *f))
                .collect(),
            None => vec![false; items.len()],
        };
        let todo: Vec<&(Owner, &'a Item)> = items
            .iter()
            .zip(&kept)
            .filter(|(_, k)| !**k)
            .map(|(item, _)| item)
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
        let mut memos = Vec::new();
        self.prog.entries.reserve(items.len());
        for (i, file) in files.iter().enumerate() {
            let (entry, mut diags, memo) = match (kept[i], reuse.as_deref_mut()) {
                (true, Some(r)) => {
                    r.cache.reused += 1;
                    let (memo, entry) = r.take_entry(i);
                    (entry, memo.diags.clone(), Some(memo))
                }
                (_, r) => {
                    let Some((entry, diags)) = done.next() else {
                        continue;
                    };
                    let memo = r.map(|r| {
                        r.cache.computed += 1;
                        entry_memo(*file, entry.as_ref(), &diags)
                    });
                    (entry, diags, memo)
                }
            };
            if let Some(memo) = memo {
                let slot = entry.as_ref().map(|_| self.prog.entries.len() as u32);
                memos.push((memo, slot));
            }
            self.diags.append(&mut diags);
            self.prog.entries.extend(entry);
        }
        if let Some(r) = reuse {
            r.cache.set_entries(memos);
        }
    }
}

/// The file of an entry point (`None` for other declarations).
fn entry_file(item: &Item) -> Option<FileId> {
    match item {
        Item::Route(r) => Some(r.span.file),
        Item::Subscriber(s) => Some(s.span.file),
        Item::Schedule(s) => Some(s.span.file),
        _ => None,
    }
}

fn entry_memo(file: FileId, entry: Option<&ir::Entry>, diags: &[Diagnostic]) -> Memo {
    let mut spans = Vec::new();
    if let Some(e) = entry {
        entry_spans(e, &mut spans);
    }
    Memo::new(file, &spans, diags)
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

    fn report_setting_value(&mut self, key: ast::Ident, v: &SettingValue, wanted: &str) {
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

    fn route(&mut self, r: &ast::RouteDecl) -> ir::Entry {
        let inline = self
            .route_action_of
            .get(&super::collect::route_key(r))
            .copied();
        let label = format!("route {} {}", r.method.name, r.path);
        let mut key_required = false;
        let (mut key_span, mut deadline_ms, mut deadline_span) = (None, None, None);
        let (mut input, mut output) = (None, None);
        let mut run: Option<&ast::Setting> = None;
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
                "auth" | "input" | "output" => {}
                _ => self.report_unknown_key(s.key, "route setting", &ROUTE_KEYS),
            }
        }
        let kind = EntryKind::Route {
            method: r.method.name.as_str().to_string(),
            path: r.path.clone(),
            key_required,
            key_span,
            deadline_ms,
            deadline_span,
        };
        let span = r.method.span.to(r.path_span);
        let (action, run_span) = match (inline, run) {
            (Some(id), Some(s)) => (Some(id), s.value.span()),
            (_, Some(s)) => {
                let mut locals = Vec::new();
                if let Some(t) = input {
                    locals.push((words().input, t));
                }
                let action = self.run_setting(s, &locals, output.as_ref());
                (action, s.value.span())
            }
            (_, None) => {
                self.report_missing_run(span, "route");
                (None, span)
            }
        };
        ir::Entry {
            kind,
            label,
            span,
            run_span,
            action,
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
            return Some(duration_ms(*n, *unit));
        }
        self.report_setting_value(s.key, &s.value, "a duration such as `60s`");
        None
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
        let mut locals = Vec::new();
        if let Some((_, t)) = event {
            locals.push((words().event, Ty::Named(t)));
        } else {
            locals.push((words().event, Ty::Error));
        }
        let (action, run_span) = self.entry_run(s.name.span, "subscriber", &s.settings, &locals);
        ir::Entry {
            kind: EntryKind::Subscriber {
                event: event.map(|e| e.0),
            },
            label: format!("subscriber {}", s.name.name),
            span: s.name.span,
            run_span,
            action,
        }
    }

    fn schedule(&mut self, s: &ast::ScheduleDecl) -> ir::Entry {
        if !matches!(s.every.kind, ExprKind::Duration(..) | ExprKind::Error) {
            let d = Diagnostic::error(
                "type.setting_value",
                s.every.span,
                "`every` needs a duration such as `1h`",
            )
            .with_fix("write a duration after `every`");
            self.error(d);
        }
        let (action, run_span) = self.entry_run(s.name.span, "schedule", &s.settings, &[]);
        ir::Entry {
            kind: EntryKind::Schedule,
            label: format!("schedule {}", s.name.name),
            span: s.name.span,
            run_span,
            action,
        }
    }

    /// The `run:` of a subscriber or schedule (their only setting).
    fn entry_run(
        &mut self,
        span: Span,
        what: &str,
        settings: &[ast::Setting],
        locals: &[(Name, Ty)],
    ) -> (Option<ActionId>, Span) {
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
            Some(s) => (self.run_setting(s, locals, None), s.value.span()),
            None => {
                self.report_missing_run(span, what);
                (None, span)
            }
        }
    }

    /// `run: action(args)`: an app action, called with matching arguments.
    fn run_setting(
        &mut self,
        s: &ast::Setting,
        locals: &[(Name, Ty)],
        output: Option<&Ty>,
    ) -> Option<ActionId> {
        let SettingValue::Expr(e) = &s.value else {
            self.report_setting_value(
                s.key,
                &s.value,
                "a call of an app action, such as `subscribe(input)`",
            );
            return None;
        };
        let ExprKind::Call { callee, args } = &e.kind else {
            self.report_setting_value(
                s.key,
                &s.value,
                "a call of an app action, such as `subscribe(input)`",
            );
            return None;
        };
        let mut cx = Cx::new(Owner::App, BodyKind::RouteAction, Ty::unit());
        for (n, t) in locals {
            cx.bind(*n, t.clone(), false);
        }
        let mut sink = ir::Block::default();
        let id = self.run_callee(callee)?;
        // The tables outlive this resolver: the signature is read in place.
        let t = self.t;
        let sig = &t.actions[id.0 as usize];
        let label = &t.prog.action(id).qualified;
        self.check_args(
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
        Some(id)
    }

    fn run_callee(&mut self, callee: &ast::Expr) -> Option<ActionId> {
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
        let cands: Vec<String> = self
            .unit(Owner::App)
            .callables
            .iter()
            .filter(|(_, (c, _))| matches!(c, Callable::Action(_)))
            .map(|(n, _)| n.as_str().to_string())
            .collect();
        self.report_unknown(
            "name.unknown_action",
            "app action",
            path.span,
            &path.text(),
            &cands,
        );
        None
    }
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
