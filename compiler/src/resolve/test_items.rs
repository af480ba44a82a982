//! Tests and fixtures (design `testing.md` section 8): resolved and
//! type-checked like any other item, after the entry points (a `deliver`
//! needs the subscribers). Test bodies are pure expressions plus the
//! deliveries `jadpo test` runs; none of the step rules see them.

use std::collections::HashMap;

use crate::ast::{self, AnswerKind, CountKind, TestStmtKind};
use crate::diag::Diagnostic;
use crate::index::IndexVec;
use crate::intern::Name;
use crate::ir::code::{self, Local};
use crate::ir::test::{
    AnswerCode, Count, Delivery, DeliveryTarget, Ending, Expect, Fake, FakeAnswer, Fixture,
    FixtureId, Test, TestStep, TestStepKind, DEFAULT_ATTEMPTS, DEFAULT_RETRY_AFTER_MS,
};
use crate::ir::{self, ActionId, EntryKind, EventId, FailureId, OpId, Owner, PkgId};
use crate::span::Span;

use super::body::{BodyKind, Cx, Typed};
use super::calls::Params;
use super::lookup::{suggest, Found};
use super::tables::{Callable, Prim, Ty};
use super::{Builder, Resolver};

pub const FIXTURE_SETTINGS: [&str; 4] = ["clock", "config", "retry_after", "attempts"];

/// The most attempts a fixture may give a delivery.
const MAX_ATTEMPTS: i64 = 100;

/// A resolved fixture and the config names it gives, for the tests using it.
struct Given {
    fixture: Fixture,
    config: Vec<Name>,
    /// Some `config:` key named no entry (already reported): what is
    /// missing is then not judged, as the key was likely meant for it.
    unknown_config: bool,
}

impl<'a> Builder<'a> {
    pub(super) fn resolve_tests(&mut self) {
        self.t.resolve_tests(&mut self.diags);
    }
}

impl<'a> super::Tables<'a> {
    /// The tests and fixtures of `fixture_decls` and `test_decls` (taken),
    /// into the program, reporting into `diags`.
    pub(super) fn resolve_tests(&mut self, diags: &mut Vec<Diagnostic>) {
        let fixture_decls = std::mem::take(&mut self.fixture_decls);
        let test_decls = std::mem::take(&mut self.test_decls);
        let mut by_name: HashMap<Name, (FixtureId, Span)> = HashMap::new();
        let mut given: IndexVec<FixtureId, Given> = IndexVec::new();
        for f in &fixture_decls {
            let mut rx = Resolver::new(self, diags);
            if let Some((_, first)) = by_name.get(&f.name.name) {
                rx.report_duplicate("fixture", f.name, *first);
                continue;
            }
            let id = given.push(rx.fixture(f));
            by_name.insert(f.name.name, (id, f.name.span));
        }
        let mut names: HashMap<&str, Span> = HashMap::new();
        let mut tests = Vec::with_capacity(test_decls.len());
        for t in &test_decls {
            let mut rx = Resolver::new(self, diags);
            if let Some(first) = names.get(t.name.value.as_str()) {
                rx.report_duplicate_test(t, *first);
            }
            names.entry(t.name.value.as_str()).or_insert(t.name.span);
            let fixtures = Fixtures {
                by_name: &by_name,
                given: &given,
            };
            tests.push(rx.test(t, fixtures));
        }
        self.prog.fixtures = given.into_iter().map(|g| g.fixture).collect();
        self.prog.tests = tests;
    }
}

#[derive(Clone, Copy)]
struct Fixtures<'f> {
    by_name: &'f HashMap<Name, (FixtureId, Span)>,
    given: &'f IndexVec<FixtureId, Given>,
}

impl<'a> Resolver<'_, 'a> {
    fn report_duplicate_test(&mut self, t: &ast::TestDecl, first: Span) {
        let d = Diagnostic::error(
            "test.duplicate_name",
            t.name.span,
            format!("two tests are named \"{}\"", t.name.value),
        )
        .with_label("second test with this name")
        .with_related(first, "first declared here")
        .with_reason("`jadpo test` names each test in its output and `--filter`, and a delivery's id is built from the name")
        .with_fix("give one of the two tests another name");
        self.error(d);
    }

    fn fixture(&mut self, f: &ast::FixtureDecl) -> Given {
        self.check_setting_repeats(f.settings.iter());
        let mut fixture = Fixture {
            name: f.name.name,
            span: f.name.span,
            clock: None,
            config: Vec::new(),
            retry_after_ms: DEFAULT_RETRY_AFTER_MS,
            attempts: DEFAULT_ATTEMPTS,
            fakes: Vec::new(),
        };
        let mut config = Vec::new();
        let before = self.diags.len();
        for s in &f.settings {
            self.fixture_setting(s, &mut fixture, &mut config);
        }
        let unknown_config = self.diags[before..]
            .iter()
            .any(|d| d.code == "test.config_unknown");
        let mut faked: HashMap<PkgId, Span> = HashMap::new();
        for fake in &f.fakes {
            // Answers are code: kept only when the resolution lowers it.
            if let (Some(fake), true) = (self.fake(fake, &mut faked), self.code) {
                fixture.fakes.push(fake);
            }
        }
        Given {
            fixture,
            config,
            unknown_config,
        }
    }

    fn fixture_setting(&mut self, s: &ast::Setting, fixture: &mut Fixture, config: &mut Vec<Name>) {
        let value = match &s.value {
            ast::SettingValue::Expr(e) => Some(e),
            _ => None,
        };
        match (s.key.name.as_str(), value) {
            ("clock", Some(e)) => fixture.clock = self.clock_setting(e),
            ("retry_after", Some(e)) => {
                if let Some(ms) = self.positive_duration(e, "test.fixture_value", "retry_after:") {
                    fixture.retry_after_ms = ms;
                }
            }
            ("attempts", Some(e)) => {
                if let Some(n) = self.attempts_setting(e) {
                    fixture.attempts = n;
                }
            }
            ("config", None) => {
                if let ast::SettingValue::Record(entries, _) = &s.value {
                    self.check_setting_repeats(entries.iter());
                    for entry in entries {
                        if let Some((name, value)) = self.config_value(entry) {
                            config.push(name);
                            if self.code {
                                fixture.config.push((name, value));
                            }
                        }
                    }
                }
            }
            (key, _) if FIXTURE_SETTINGS.contains(&key) => {
                let wanted = match key {
                    "config" => "`{ name: value ... }`",
                    "clock" => "an RFC 3339 time in quotes",
                    "retry_after" => "a duration such as `1m`",
                    _ => "a whole number",
                };
                self.report_setting_value(s.key, &s.value, wanted);
            }
            _ => self.report_unknown_key(s.key, "fixture setting", &FIXTURE_SETTINGS),
        }
    }

    /// `clock: "2026-01-15T12:00:00Z"`
    fn clock_setting(&mut self, e: &ast::Expr) -> Option<String> {
        let text = match &e.kind {
            ast::ExprKind::Str(s) => s.as_str(),
            _ => "",
        };
        let rfc3339 = &time::format_description::well_known::Rfc3339;
        if time::OffsetDateTime::parse(text, rfc3339).is_ok() {
            return Some(text.to_string());
        }
        let d = Diagnostic::error(
            "test.fixture_value",
            e.span,
            "`clock:` is not an RFC 3339 time",
        )
        .with_label("expected a time such as \"2026-01-15T12:00:00Z\"")
        .with_reason("the test clock starts at this instant; it needs a date, a time and an offset")
        .with_fix("write the time in quotes with its offset, e.g. \"2026-01-15T12:00:00Z\"");
        self.error(d);
        None
    }

    /// `retry_after: 1m`, `advance clock by 1h`: a duration above zero.
    fn positive_duration(&mut self, e: &ast::Expr, code: &'static str, what: &str) -> Option<i64> {
        if let ast::ExprKind::Duration(n, unit) = e.kind {
            let ms = super::entries::duration_ms(n, unit);
            if ms > 0 {
                return Some(i64::try_from(ms).unwrap_or(i64::MAX));
            }
        }
        let d = Diagnostic::error(
            code,
            e.span,
            format!("`{what}` needs a duration above zero"),
        )
        .with_label("expected a duration such as `1m` or `30s`")
        .with_reason("time passes in a test only by this much; zero or another kind of value would not move the clock")
        .with_fix("write a duration above zero, such as `1m`");
        self.error(d);
        None
    }

    /// `attempts: 5`
    fn attempts_setting(&mut self, e: &ast::Expr) -> Option<u32> {
        if let ast::ExprKind::Int(n) = e.kind {
            if (1..=MAX_ATTEMPTS).contains(&n) {
                return u32::try_from(n).ok();
            }
        }
        let d = Diagnostic::error(
            "test.fixture_value",
            e.span,
            format!("`attempts:` needs a whole number from 1 to {MAX_ATTEMPTS}"),
        )
        .with_label("not a number of attempts")
        .with_reason("every delivery of the test makes at most this many attempts")
        .with_fix("write a number such as `5`");
        self.error(d);
        None
    }

    /// One `name: value` of `config: { }`, checked against the app's entry.
    fn config_value(&mut self, s: &ast::Setting) -> Option<(Name, code::Expr)> {
        let t = self.t;
        let entry = t.unit(self.test_owner).config.get(&s.key.name);
        let mut cx = Cx::new(self.test_owner, BodyKind::Test, Ty::unit());
        let mut out = ir::Block::default();
        let ast::SettingValue::Expr(e) = &s.value else {
            self.report_setting_value(s.key, &s.value, "a literal or a construction");
            return None;
        };
        let Some(entry) = entry else {
            self.expr(&mut cx, e, None, &mut out);
            self.report_config_unknown(s.key);
            return None;
        };
        let value = self.expr(&mut cx, e, Some(&entry.ty), &mut out);
        Some((s.key.name, value.code))
    }

    fn report_config_unknown(&mut self, key: ast::Ident) {
        let names: Vec<String> = self
            .unit(self.test_owner)
            .config
            .iter()
            .map(|(n, _)| n.as_str().to_string())
            .collect();
        let mut d = Diagnostic::error(
            "test.config_unknown",
            key.span,
            format!("the app has no config entry `{}`", key.name),
        )
        .with_label("not an entry of the app's `config { }`");
        d = if names.is_empty() {
            d.with_reason("the app declares no `config { }`")
                .with_fix("remove this value, or declare the entry in the app's `config { }`")
        } else {
            d.with_reason(format!("the app's config entries: {}", names.join(", ")))
        };
        if let Some(near) = suggest(key.name.as_str(), &names) {
            d = d.with_did_you_mean(key.span, near);
        }
        self.error(d);
    }
}

impl<'a> Resolver<'_, 'a> {
    /// `fake stripe { op => ANSWER ... }`
    fn fake(&mut self, f: &ast::FakeDecl, faked: &mut HashMap<PkgId, Span>) -> Option<Fake> {
        let p = self.faked_package(f.package)?;
        if let Some(first) = faked.get(&p) {
            let first = *first;
            self.report_duplicate("fake", f.package, first);
            return None;
        }
        faked.insert(p, f.package.span);
        let mut answers = Vec::new();
        for line in &f.answers {
            let Some(op) = self.faked_op(p, &line.op) else {
                continue;
            };
            if let Some(answer) = self.answer(op, &line.answer, false) {
                answers.push(FakeAnswer {
                    op,
                    answer,
                    span: line.span,
                });
            }
        }
        Some(Fake {
            package: p,
            answers,
        })
    }

    /// The package a `fake` names: one the app requires, or the stdlib's `ai`.
    fn faked_package(&mut self, name: ast::Ident) -> Option<PkgId> {
        if let Some(p) = self.unit(self.test_owner).sees.get(&name.name) {
            return Some(*p);
        }
        let seen = self.unit(self.test_owner).sees.keys();
        let seen: Vec<String> = seen.map(|n| n.as_str().to_string()).collect();
        let mut d = Diagnostic::error(
            "test.fake_package",
            name.span,
            format!("the app does not require a package `{}`", name.name),
        )
        .with_label("no such package to fake")
        .with_reason(format!(
            "a fixture fakes the providers the app calls; the packages it sees: {}",
            seen.join(", ")
        ));
        d = match suggest(name.name.as_str(), &seen) {
            Some(near) => d.with_did_you_mean(name.span, near),
            None => d.with_fix(format!(
                "require `{}` under `packages:` in `jadpo.yaml`, or remove this fake",
                name.name
            )),
        };
        self.error(d);
        None
    }

    /// `customers.create` in `fake stripe { }`.
    fn faked_op(&mut self, p: PkgId, path: &ast::Path) -> Option<OpId> {
        let written = path.text();
        let unit = self.unit(Owner::Package(p));
        if let Some(op) = unit.ops.get(&written) {
            return Some(*op);
        }
        let cands: Vec<String> = unit.ops.keys().cloned().collect();
        let pkg = self.pkg_name(p);
        let d = self
            .unknown_diag(
                "name.unknown_operation",
                "operation",
                path.span,
                &written,
                &cands,
            )
            .with_reason(format!("`{pkg}`'s operations: {}", cands.join(", ")));
        self.error(d);
        None
    }

    /// An answer checked against the operation it answers; `inside_lost`
    /// for the answer of `lost ANSWER`.
    fn answer(&mut self, op: OpId, a: &ast::Answer, inside_lost: bool) -> Option<AnswerCode> {
        let t = self.t;
        let o = t.prog.op(op);
        let mut cx = Cx::new(self.test_owner, BodyKind::Test, Ty::unit());
        let mut out = ir::Block::default();
        match &a.kind {
            AnswerKind::Value(e) => {
                if self.is_unit(&o.answer) {
                    self.expr(&mut cx, e, None, &mut out);
                    self.report_impossible(
                        op,
                        a.span,
                        "a value",
                        "it has no `answer:`; answer `done`",
                    );
                    return None;
                }
                let v = self.expr(&mut cx, e, Some(&o.answer), &mut out);
                Some(AnswerCode::Value(v.code))
            }
            AnswerKind::Done if !self.is_unit(&o.answer) => {
                let ty = self.type_name(&o.answer, self.test_owner);
                let why = format!("it answers `{ty}`; give a `{ty} {{ ... }}`");
                self.report_impossible(op, a.span, "`done`", &why);
                None
            }
            AnswerKind::Done => Some(AnswerCode::Done),
            AnswerKind::Fail { failure, fields } => {
                self.fail_answer(&mut cx, op, failure, fields.as_deref().unwrap_or(&[]))
            }
            AnswerKind::Lost(inner) => self.lost_answer(op, a, inner, inside_lost),
            AnswerKind::InUse => self.in_use_answer(op, a.span),
            AnswerKind::ServerError => Some(AnswerCode::ServerError),
        }
    }

    fn lost_answer(
        &mut self,
        op: OpId,
        a: &ast::Answer,
        inner: &ast::Answer,
        inside_lost: bool,
    ) -> Option<AnswerCode> {
        let word = match inner.kind {
            AnswerKind::Lost(_) => Some("`lost`"),
            AnswerKind::InUse => Some("`in_use`"),
            AnswerKind::ServerError => Some("`server_error`"),
            _ => None,
        };
        if let (Some(word), false) = (word, inside_lost) {
            let why = "`lost` is an answer the provider keeps but never delivers; only a value, `done` or `fail F` can be kept";
            self.report_impossible(op, a.span, &format!("`lost` around {word}"), why);
            return None;
        }
        let kept = self.answer(op, inner, true)?;
        Some(AnswerCode::Lost(Box::new(kept)))
    }

    fn in_use_answer(&mut self, op: OpId, span: Span) -> Option<AnswerCode> {
        let t = self.t;
        let o = t.prog.op(op);
        let facts = t.prog.package(o.package).idempotency.as_ref();
        if !o.keyed {
            self.report_impossible(
                op,
                span,
                "`in_use`",
                "the operation is not sent with a key, so the provider has no key to find in use",
            );
            return None;
        }
        if facts.is_none_or(|f| f.in_use.is_none()) {
            let pkg = t.prog.package(o.package).name;
            let why = format!("`{pkg}`'s package.yaml declares no `in_use:` answer");
            self.report_impossible(op, span, "`in_use`", &why);
            return None;
        }
        Some(AnswerCode::InUse)
    }

    fn fail_answer(
        &mut self,
        cx: &mut Cx,
        op: OpId,
        path: &ast::Path,
        fields: &[ast::FieldInit],
    ) -> Option<AnswerCode> {
        let mut out = ir::Block::default();
        let Some(failure) = self.find_failure(self.test_owner, path) else {
            self.field_values_only(cx, fields, &mut out);
            return None;
        };
        let t = self.t;
        let o = t.prog.op(op);
        if !o.failures.contains(&failure) && !self.is_transient(failure) {
            self.field_values_only(cx, fields, &mut out);
            let names: Vec<String> = o
                .failures
                .iter()
                .map(|f| self.failure_name(*f, self.test_owner))
                .collect();
            let d = Diagnostic::error(
                "test.impossible_failure",
                path.span,
                format!("`{}` cannot fail with `{}`", o.qualified, path.text()),
            )
            .with_label("not one of the operation's failures")
            .with_related(o.span, "its `failures:` are declared here")
            .with_reason(format!(
                "a fake answers as the provider could: with one of the operation's failures ({}) or `Unavailable` / `RateLimited`",
                if names.is_empty() { "it declares none".to_string() } else { names.join(", ") }
            ))
            .with_fix("answer with one of those failures");
            self.error(d);
            return None;
        }
        let defs = &t.prog.failure(failure).fields;
        let label = self.failure_name(failure, self.test_owner);
        let declared = t.prog.failure(failure).span;
        let fields = self.check_fields(cx, path.span, (&label, declared), defs, fields, &mut out);
        Some(AnswerCode::Fail { failure, fields })
    }

    /// An answer the operation cannot give.
    fn report_impossible(&mut self, op: OpId, span: Span, what: &str, why: &str) {
        let o = self.t.prog.op(op);
        let d = Diagnostic::error(
            "test.impossible_answer",
            span,
            format!("`{}` cannot answer {what}", o.qualified),
        )
        .with_label("not an answer this operation can give")
        .with_related(o.span, "the operation is declared here")
        .with_reason(why.to_string())
        .with_fix("answer as the operation's `answer:`, `failures:` and its package's idempotency facts allow");
        self.error(d);
    }
}

/// A test being resolved: its body's context and what it reaches.
struct TestCx {
    cx: Cx,
    reached: Vec<ActionId>,
}

impl<'a> Resolver<'_, 'a> {
    fn test(&mut self, t: &ast::TestDecl, fixtures: Fixtures<'_>) -> Test {
        let fixture = t.using.and_then(|u| self.using(u, fixtures));
        let mut tc = TestCx {
            cx: Cx::new(self.test_owner, BodyKind::Test, Ty::unit()),
            reached: Vec::new(),
        };
        let mut steps = Vec::with_capacity(t.body.len());
        for s in &t.body {
            if let Some(kind) = self.test_step(&mut tc, s) {
                steps.push(TestStep { kind, span: s.span });
            }
        }
        let fixture_given = fixture.map(|f| &fixtures.given[f]);
        let given = fixture_given.map_or(&[][..], |g| &g.config[..]);
        if fixture_given.is_some_and(|g| g.unknown_config) {
            return self.finish_test(t, fixture, steps, tc);
        }
        self.check_config_given(t, &tc, given, fixture_given);
        self.finish_test(t, fixture, steps, tc)
    }

    fn finish_test(
        &self,
        t: &ast::TestDecl,
        fixture: Option<FixtureId>,
        steps: Vec<TestStep>,
        tc: TestCx,
    ) -> Test {
        Test {
            name: t.name.value.clone(),
            span: t.name.span,
            owner: self.test_owner,
            fixture,
            steps: self.lower(|| steps),
            locals: tc.cx.slots,
        }
    }

    fn using(&mut self, u: ast::Ident, fixtures: Fixtures<'_>) -> Option<FixtureId> {
        if let Some((id, _)) = fixtures.by_name.get(&u.name) {
            return Some(*id);
        }
        let cands: Vec<String> = fixtures
            .given
            .iter()
            .map(|g| g.fixture.name.as_str().to_string())
            .collect();
        self.report_unknown(
            "test.unknown_fixture",
            "fixture",
            u.span,
            u.name.as_str(),
            &cands,
        );
        None
    }

    fn test_step(&mut self, tc: &mut TestCx, s: &ast::TestStmt) -> Option<TestStepKind> {
        let mut out = ir::Block::default();
        let cx = &mut tc.cx;
        match &s.kind {
            TestStmtKind::Var { name, value } => {
                let v = self.expr(cx, value, None, &mut out);
                let slot = self.bind_var(cx, *name, v.ty);
                Some(TestStepKind::Set(slot, v.code))
            }
            TestStmtKind::Assert(e) => {
                let v = self.expr(cx, e, Some(&Ty::Prim(Prim::Bool)), &mut out);
                Some(TestStepKind::Assert(v.code))
            }
            TestStmtKind::Advance(e) => {
                let ms = self.positive_duration(e, "test.advance", "advance clock by")?;
                let span = e.span;
                Some(TestStepKind::Advance(code::Expr {
                    kind: code::ExprKind::Duration(ms),
                    span,
                }))
            }
            TestStmtKind::Delivery(d) => self.delivery(tc, d).map(TestStepKind::Deliver),
            TestStmtKind::Error => None,
        }
    }

    fn bind_var(&mut self, cx: &mut Cx, name: ast::Ident, ty: Ty) -> Local {
        if cx.local(name.name).is_some() {
            let d = Diagnostic::error(
                "name.duplicate",
                name.span,
                format!("`{}` is already declared in this test", name.name),
            )
            .with_reason(
                "a test's `var`s are visible to its end; declaring one again would hide the first",
            )
            .with_fix("choose another name");
            self.error(d);
        }
        cx.bind(name.name, ty, false)
    }

    fn delivery(&mut self, tc: &mut TestCx, d: &ast::DeliveryStmt) -> Option<Delivery> {
        let (target, actions, ret) = match &d.target {
            ast::DeliveryTarget::Call { action, args } => {
                let (a, args) = self.called_action(&mut tc.cx, *action, args)?;
                let ret = self.t.actions[a].ret.clone();
                (
                    DeliveryTarget::Call { action: a, args },
                    vec![(a, None)],
                    ret,
                )
            }
            ast::DeliveryTarget::Deliver { event, to } => {
                let (target, actions) = self.delivered(&mut tc.cx, event, *to)?;
                (target, actions, Ty::unit())
            }
        };
        let expect = self.expect(&d.expect, &actions)?;
        tc.reached.extend(actions.iter().map(|(a, _)| *a));
        let bind = d.bind.map(|name| self.bind_var(&mut tc.cx, name, ret));
        Some(Delivery {
            bind,
            target,
            expect,
        })
    }

    /// `call f(args)`: an app action and its arguments.
    fn called_action(
        &mut self,
        cx: &mut Cx,
        name: ast::Ident,
        args: &[ast::Expr],
    ) -> Option<(ActionId, Vec<code::Expr>)> {
        let t = self.t;
        let mut out = ir::Block::default();
        match t
            .unit(self.test_owner)
            .callables
            .get(&name.name)
            .map(|c| c.0)
        {
            Some(Callable::Action(a)) => {
                let sig = &t.actions[a];
                let code = self.check_args(
                    cx,
                    name.span,
                    &name.name,
                    Params::Sig(&sig.params),
                    args,
                    &mut out,
                );
                Some((a, code))
            }
            Some(Callable::Function(_)) => {
                self.field_values_only_exprs(cx, args, &mut out);
                let d = Diagnostic::error(
                    "test.not_an_action",
                    name.span,
                    format!("`{}` is a function; `call` runs an action", name.name),
                )
                .with_label("a function, not an action")
                .with_reason("`call` runs an app action as a delivery, with its steps and record; a function is pure and is called in an expression")
                .with_fix(format!("write `var x = {}(...)` to compute the function's value", name.name));
                self.error(d);
                None
            }
            None => {
                self.field_values_only_exprs(cx, args, &mut out);
                let cands = t.unit(self.test_owner).action_names();
                self.report_unknown(
                    "name.unknown_action",
                    "app action",
                    name.span,
                    name.name.as_str(),
                    &cands,
                );
                None
            }
        }
    }

    /// `deliver Ev { ... } [to NAME]`: the event and the subscribers it runs.
    #[allow(clippy::type_complexity)]
    fn delivered(
        &mut self,
        cx: &mut Cx,
        event: &ast::Expr,
        to: Option<ast::Ident>,
    ) -> Option<(DeliveryTarget, Vec<(ActionId, Option<Name>)>)> {
        let mut out = ir::Block::default();
        let payload: Typed = self.expr(cx, event, None, &mut out);
        if payload.ty.is_error() {
            return None;
        }
        let Some(ev) = self.event_of(&payload.ty) else {
            let ty = self.type_name(&payload.ty, self.test_owner);
            let d = Diagnostic::error(
                "test.not_an_event",
                event.span,
                format!("`deliver` needs an event; this is a `{ty}`"),
            )
            .with_label("not an event")
            .with_reason("`deliver` hands an event to its subscribers")
            .with_fix("build an event, such as `deliver SubscriptionRequested { ... }`");
            self.error(d);
            return None;
        };
        let entries = self.subscribers(ev, event.span, to)?;
        let actions = entries
            .iter()
            .filter_map(|i| {
                let e = &self.prog.entries[*i];
                Some((e.action?, e.subscriber_name().map(Name::new)))
            })
            .collect();
        let target = DeliveryTarget::Deliver {
            event: ev,
            payload: payload.code,
            entries,
        };
        Some((target, actions))
    }

    fn event_of(&self, ty: &Ty) -> Option<EventId> {
        let Ty::Named(t) = ty else {
            return None;
        };
        self.prog
            .events
            .iter()
            .position(|e| e.ty == *t)
            .map(|i| EventId(i as u32))
    }

    /// The subscribers of `ev` (only `to`'s when given), as entry indexes.
    fn subscribers(&mut self, ev: EventId, at: Span, to: Option<ast::Ident>) -> Option<Vec<usize>> {
        let all: Vec<usize> = self
            .prog
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| matches!(e.kind, EntryKind::Subscriber { event: Some(x) } if x == ev))
            .filter(|(_, e)| e.action.is_some())
            .map(|(i, _)| i)
            .collect();
        let event = self.prog.event(ev).qualified.clone();
        if all.is_empty() {
            let d = Diagnostic::error(
                "test.no_subscriber",
                at,
                format!("no subscriber runs on `{event}`"),
            )
            .with_label("delivered to nobody")
            .with_reason("`deliver` makes one delivery per subscriber of the event; with none, the statement would test nothing")
            .with_fix(format!("declare `subscriber NAME {{ event: {event} run: ... }}`, or `call` the action directly"));
            self.error(d);
            return None;
        }
        let Some(to) = to else {
            return Some(all);
        };
        let names: Vec<String> = all
            .iter()
            .filter_map(|i| self.prog.entries[*i].subscriber_name().map(str::to_string))
            .collect();
        if let Some(pos) = names.iter().position(|n| n == to.name.as_str()) {
            return Some(vec![all[pos]]);
        }
        let mut d = self.unknown_diag(
            "test.unknown_subscriber",
            &format!("subscriber of `{event}`"),
            to.span,
            to.name.as_str(),
            &names,
        );
        d = d.with_reason(format!("`{event}`'s subscribers: {}", names.join(", ")));
        self.error(d);
        None
    }

    /// `fails F` / `ends OUTCOME`, checked against every action delivered.
    fn expect(&mut self, e: &ast::Expect, actions: &[(ActionId, Option<Name>)]) -> Option<Expect> {
        match e {
            ast::Expect::Complete => Some(Expect::Complete),
            ast::Expect::Ends(word) => {
                match Ending::ALL.iter().find(|(_, s)| *s == word.name.as_str()) {
                    Some((ending, _)) => Some(Expect::Ends(*ending)),
                    None => {
                        let names: Vec<String> =
                            Ending::ALL.iter().map(|(_, s)| s.to_string()).collect();
                        let d = self.unknown_diag("test.unknown_outcome", "outcome", word.span, word.name.as_str(), &names)
                        .with_reason("a delivery ends `outcome_unknown` (parked), `diverged` (held), `retry_later` (still retry-later after its last attempt) or `fault`");
                        self.error(d);
                        None
                    }
                }
            }
            ast::Expect::Fails(path) => {
                let f = self.find_failure(self.test_owner, path)?;
                for (a, subscriber) in actions {
                    if !self.prog.action(*a).fails.iter().any(|(x, _)| *x == f) {
                        self.report_action_cannot_fail(path, f, *a, *subscriber);
                        return None;
                    }
                }
                Some(Expect::Fails(f))
            }
        }
    }

    fn report_action_cannot_fail(
        &mut self,
        path: &ast::Path,
        f: FailureId,
        a: ActionId,
        subscriber: Option<Name>,
    ) {
        let action = self.prog.action(a);
        let failure = self.failure_name(f, self.test_owner);
        let whose = match subscriber {
            Some(s) => format!("subscriber `{s}`'s action `{}`", action.qualified),
            None => format!("`{}`", action.qualified),
        };
        let mut d = Diagnostic::error(
            "test.impossible_failure",
            path.span,
            format!("{whose} cannot fail with `{failure}`"),
        )
        .with_label("not in the action's `fails`")
        .with_related(action.name_span, "the action is declared here");
        d = if self.is_transient(f) {
            d.with_reason(format!(
                "`{failure}` never ends a delivery failed: it ends the attempt retry-later"
            ))
            .with_fix("expect `ends retry_later`, or give the fixture fewer failing answers")
        } else {
            d.with_reason("a delivery ends failed only with a failure of its action's `fails`")
                .with_fix("expect one of the action's failures, or add this one to its `fails`")
        };
        self.error(d);
    }
}

impl<'a> Resolver<'_, 'a> {
    /// `test.config_missing`: a config entry read by code the test reaches
    /// that its fixture does not give (the steps encryption key excepted).
    fn check_config_given(
        &mut self,
        t: &ast::TestDecl,
        tc: &TestCx,
        given: &[Name],
        fixture: Option<&Given>,
    ) {
        let mut needed: Vec<(Name, ActionId)> = Vec::new();
        let mut seen_actions: IndexVec<ActionId, bool> =
            vec![false; self.prog.actions.len()].into();
        let mut seen_fns: IndexVec<ir::FnId, bool> = vec![false; self.prog.functions.len()].into();
        let mut todo: Vec<(ActionId, ActionId)> = tc.reached.iter().map(|a| (*a, *a)).collect();
        let mut fns = Vec::new();
        while let Some((a, root)) = todo.pop() {
            let Some(seen) = seen_actions.get_mut(a) else {
                continue;
            };
            if std::mem::replace(seen, true) {
                continue;
            }
            let reads = &self.prog.action(a).reads;
            needed.extend(reads.config.iter().map(|c| (*c, root)));
            todo.extend(reads.actions.iter().map(|x| (*x, root)));
            fns.extend(reads.functions.iter().map(|f| (*f, root)));
            while let Some((f, root)) = fns.pop() {
                let Some(seen) = seen_fns.get_mut(f) else {
                    continue;
                };
                if std::mem::replace(seen, true) {
                    continue;
                }
                let reads = &self.prog.function(f).reads;
                needed.extend(reads.config.iter().map(|c| (*c, root)));
                fns.extend(reads.functions.iter().map(|g| (*g, root)));
            }
        }
        let key = self.prog.app.encryption_key.as_ref().map(|k| k.name);
        let mut missing: Vec<(Name, ActionId)> = needed
            .into_iter()
            .filter(|(n, _)| !given.contains(n) && Some(*n) != key)
            .collect();
        missing.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
        missing.dedup_by_key(|m| m.0);
        if missing.is_empty() {
            return;
        }
        let names: Vec<String> = missing.iter().map(|(n, _)| format!("`{n}`")).collect();
        let at = t.using.map_or(t.name.span, |u| u.span);
        let mut d = Diagnostic::error(
            "test.config_missing",
            at,
            format!("the test's fixture gives no value for {}", names.join(", ")),
        )
        .with_label("read by code this test runs");
        for (n, a) in &missing {
            let action = self.prog.action(*a);
            d = d.with_related(
                action.name_span,
                format!("`{}` reaches `config.{n}`", action.qualified),
            );
        }
        if let Some(f) = fixture {
            d = d.with_related(f.fixture.span, "the fixture is declared here");
        }
        let example: Vec<String> = missing.iter().map(|(n, _)| format!("{n}: ...")).collect();
        d = d
            .with_reason("tests never read the environment: every config entry the reached code reads comes from the fixture's `config:`")
            .with_fix(format!("add `config: {{ {} }}` to the fixture", example.join(" ")));
        self.error(d);
    }

    /// `stored E`, `sent pkg.op`, `emitted Ev`.
    pub(super) fn count_expr(
        &mut self,
        cx: &Cx,
        span: Span,
        kind: CountKind,
        path: &ast::Path,
    ) -> Typed {
        let int = Ty::Prim(Prim::Int);
        if cx.kind != BodyKind::Test {
            let d = Diagnostic::error(
                "test.count_outside_test",
                span,
                format!("`{} {}` counts only in a test", kind.as_str(), path.text()),
            )
            .with_label("a test's count")
            .with_reason("`stored`, `sent` and `emitted` count what a test's deliveries did; an action or function has no such record")
            .with_fix("query the store with `query many` in an action, or move the check into a test");
            self.error(d);
            return Typed::error(span).with_ty(int);
        }
        if kind == CountKind::Stored && cx.unit != Owner::App {
            let d = Diagnostic::error(
                "test.stored_in_package",
                span,
                "a package's test cannot count `stored` rows",
            )
            .with_label("counts rows of a store")
            .with_reason("a package has no store of its own: its tests run against the runtime's in-memory record store and outbox only")
            .with_fix("count what the package's actions did with `sent pkg.op` or `emitted Ev`, or test the rows in an app");
            self.error(d);
            return Typed::error(span).with_ty(int);
        }
        let count = match kind {
            CountKind::Stored => self
                .find_entity(cx.unit, path)
                .map(|(e, _)| Count::Stored(e)),
            CountKind::Emitted => self
                .find_event(cx.unit, path)
                .map(|(e, _)| Count::Emitted(e)),
            CountKind::Sent => self.sent_op(cx, path).map(Count::Sent),
        };
        match count {
            Some(c) => self.typed(int, span, || code::ExprKind::Count(c)),
            None => Typed::error(span).with_ty(int),
        }
    }

    fn sent_op(&mut self, cx: &Cx, path: &ast::Path) -> Option<OpId> {
        let [pkg, rest @ ..] = path.segments.as_slice() else {
            return None;
        };
        let p = match self.package_seen(cx.unit, pkg) {
            Found::Yes(p) => p,
            Found::UnknownPackage(p) => {
                self.report_unknown_package(cx.unit, p);
                return None;
            }
            _ => {
                let d = Diagnostic::error(
                    "name.unknown_operation",
                    path.span,
                    format!("`sent` counts an operation; `{}` is not one", path.text()),
                )
                .with_fix("name a changing operation, such as `sent stripe.customers.create`");
                self.error(d);
                return None;
            }
        };
        let rest_path = ast::Path {
            segments: rest.to_vec(),
            span: match (rest.first(), rest.last()) {
                (Some(f), Some(l)) => f.span.to(l.span),
                _ => path.span,
            },
        };
        let op = self.faked_op(p, &rest_path)?;
        let o = self.prog.op(op);
        if !o.changes {
            let d = Diagnostic::error(
                "test.sent_read",
                path.span,
                format!(
                    "`{}` is a read; `sent` counts effects of changing operations",
                    o.qualified
                ),
            )
            .with_label("`changes: false` in its package.yaml")
            .with_related(o.span, "declared here")
            .with_reason("a read acts on nothing at the provider, so it has no effects to count")
            .with_fix("count a changing operation, or assert on the value the read returned");
            self.error(d);
            return None;
        }
        Some(op)
    }
}
