//! Declarations, tests and fixtures.

use super::{Layout, Printer};
use crate::ast::*;
use std::fmt::Write;

impl Printer<'_> {
    pub(super) fn item(&mut self, item: &Item) {
        let end = item.span().end;
        match item {
            Item::Application(a) => self.named_settings("application", a.name, &a.settings, end),
            Item::Config(c) => self.named_fields("config", c.name, &c.fields, end),
            Item::Store(s) => self.named_settings("store", s.name, &s.settings, end),
            Item::Type(t) => {
                let _ = write!(self.out, "type {} = ", t.name.name);
                self.type_expr(&t.def, true);
            }
            Item::Entity(e) => self.named_fields("entity", e.name, &e.fields, end),
            Item::Failure(f) => self.failure(f),
            Item::Event(e) => self.named_fields("event", e.name, &e.fields, end),
            Item::Action(a) => self.action(a),
            Item::Function(f) => {
                let _ = write!(self.out, "function {}", f.name.name);
                self.params(&f.params);
                let broken = !self.header_fits(None, &f.returns);
                self.header_break(broken);
                self.out.push_str("-> ");
                self.type_expr(&f.returns, false);
                self.body_after_header(&f.body, broken);
            }
            Item::Route(r) => {
                let _ = write!(self.out, "route {} {} ", r.method.name, r.path);
                self.settings(&r.settings, end);
            }
            Item::Subscriber(s) => {
                let _ = write!(self.out, "subscriber {} on ", s.name.name);
                self.path(&s.event);
                self.out.push(' ');
                self.settings(&s.settings, end);
            }
            Item::Schedule(s) => {
                let _ = write!(self.out, "schedule {} every ", s.name.name);
                self.expr_before_brace(&s.every);
                self.out.push(' ');
                self.settings(&s.settings, end);
            }
            Item::Fixture(f) => self.fixture(f),
            Item::Test(t) => self.test(t),
            Item::Error(_) => self
                .out
                .push_str("// (a declaration that could not be read)"),
        }
    }

    /// `key: value` of a setting.
    fn setting(&mut self, s: &Setting) {
        let _ = write!(self.out, "{}: ", s.key.name);
        match &s.value {
            SettingValue::Expr(e) => self.expr(e),
            SettingValue::Record(inner, span) => self.settings(inner, span.end),
            SettingValue::Block(b) => self.block(b),
        }
    }

    pub(super) fn settings(&mut self, settings: &[Setting], end: u32) {
        self.braced(settings, Layout::Fit, end, |s| s.span, &|p, s| p.setting(s));
    }

    fn fixture(&mut self, f: &FixtureDecl) {
        let _ = write!(self.out, "fixture {} {{", f.name.name);
        self.done(f.name.span.end + 1);
        self.nl();
        self.open = true;
        self.indent += 1;
        for s in &f.settings {
            self.lead(s.span.start);
            self.line_start();
            self.setting(s);
            self.done(s.span.end);
            self.nl();
        }
        for fake in &f.fakes {
            self.lead(fake.span.start);
            self.line_start();
            let _ = write!(self.out, "fake {} ", fake.package.name);
            let answers = fake.answers.as_slice();
            let opened = Some(fake.package.span.end + 1);
            self.broken(opened, answers, fake.span.end, |a| a.span, &|p, a| {
                p.path(&a.op);
                p.out.push_str(" => ");
                p.answer(&a.answer);
            });
            self.done(fake.span.end);
            self.nl();
        }
        self.close(f.span.end);
        self.indent -= 1;
        self.out.push('}');
    }

    fn answer(&mut self, a: &Answer) {
        match &a.kind {
            AnswerKind::Value(e) => self.expr(e),
            AnswerKind::Done => self.out.push_str("done"),
            AnswerKind::InUse => self.out.push_str("in_use"),
            AnswerKind::ServerError => self.out.push_str("server_error"),
            AnswerKind::Fail { failure, fields } => {
                self.out.push_str("fail ");
                self.path(failure);
                if let Some(fields) = fields {
                    self.out.push(' ');
                    self.field_inits(fields, a.span.end);
                }
            }
            AnswerKind::Lost(inner) => {
                self.out.push_str("lost ");
                self.answer(inner);
            }
        }
    }

    fn test(&mut self, t: &TestDecl) {
        self.out.push_str("test ");
        self.string(&t.name.value, t.name.span);
        let mut header_end = t.name.span.end;
        if let Some(u) = t.using {
            let _ = write!(self.out, " using {}", u.name);
            header_end = u.span.end;
        }
        self.out.push(' ');
        let body = t.body.as_slice();
        self.broken(
            Some(header_end + 1),
            body,
            t.span.end,
            |s| s.span,
            &|p, s| p.test_stmt(s),
        );
    }

    fn test_stmt(&mut self, s: &TestStmt) {
        match &s.kind {
            TestStmtKind::Var { name, value } => {
                let _ = write!(self.out, "var {} = ", name.name);
                self.expr(value);
            }
            TestStmtKind::Assert(e) => {
                self.out.push_str("assert ");
                self.expr(e);
            }
            TestStmtKind::Advance(e) => {
                self.out.push_str("advance clock by ");
                self.expr(e);
            }
            TestStmtKind::Delivery(d) => self.delivery(d),
            TestStmtKind::Error => self.out.push_str("// (a statement that could not be read)"),
        }
    }

    fn delivery(&mut self, d: &DeliveryStmt) {
        if let Some(b) = d.bind {
            let _ = write!(self.out, "var {} = ", b.name);
        }
        match &d.target {
            DeliveryTarget::Call { action, args } => {
                let _ = write!(self.out, "call {}", action.name);
                self.delimited('(', ')', args, d.span.end);
            }
            DeliveryTarget::Deliver { event, to } => {
                self.out.push_str("deliver ");
                self.expr(event);
                if let Some(to) = to {
                    let _ = write!(self.out, " to {}", to.name);
                }
            }
        }
        match &d.expect {
            Expect::Complete => {}
            Expect::Fails(p) => {
                self.out.push_str(" fails ");
                self.path(p);
            }
            Expect::Ends(o) => {
                let _ = write!(self.out, " ends {}", o.name);
            }
        }
    }

    fn named_settings(&mut self, word: &str, name: Ident, settings: &[Setting], end: u32) {
        let _ = write!(self.out, "{word} {} ", name.name);
        self.settings(settings, end);
    }

    fn failure(&mut self, f: &FailureDecl) {
        let _ = write!(self.out, "failure {} ", f.name.name);
        let span = |e: &FailureEntry| match e {
            FailureEntry::Setting(s) => s.span,
            FailureEntry::Field(f) => f.span,
        };
        self.braced(
            &f.entries,
            Layout::Broken,
            f.span.end,
            span,
            &|p, entry| match entry {
                FailureEntry::Setting(s) => {
                    let _ = write!(p.out, "{}: ", s.key.name);
                    if let SettingValue::Expr(e) = &s.value {
                        p.expr(e);
                    }
                }
                FailureEntry::Field(field) => p.field(field, true),
            },
        );
    }

    fn named_fields(&mut self, word: &str, name: Ident, fields: &[FieldDecl], end: u32) {
        let _ = write!(self.out, "{word} {} ", name.name);
        self.fields(fields, true, end);
    }

    fn field(&mut self, f: &FieldDecl, constraints: bool) {
        let _ = write!(self.out, "{}: ", f.name.name);
        self.type_expr(&f.ty, constraints);
        if f.optional {
            self.out.push_str(" optional");
        }
    }

    pub(super) fn fields(&mut self, fields: &[FieldDecl], constraints: bool, end: u32) {
        self.braced(fields, Layout::Broken, end, |f| f.span, &|p, f| {
            p.field(f, constraints)
        });
    }

    fn action(&mut self, a: &ActionDecl) {
        for (i, d) in a.declines.iter().enumerate() {
            if i > 0 {
                self.lead(d.span.start);
            }
            self.out.push_str("decline ");
            self.path(&d.code);
            self.out.push(' ');
            self.string(&d.reason.value, d.reason.span);
            self.done(d.span.end);
            self.nl();
        }
        if !a.declines.is_empty() {
            self.lead(a.public.unwrap_or(a.name.span).start);
        }
        if a.public.is_some() {
            self.out.push_str("public ");
        }
        let _ = write!(self.out, "action {}", a.name.name);
        self.params(&a.params);
        let broken = !self.header_fits(a.fails.as_ref(), &a.returns);
        if let Some(fails) = &a.fails {
            self.header_break(broken);
            self.out.push_str("fails ");
            for (i, f) in fails.failures.iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                self.path(f);
            }
        }
        self.header_break(broken);
        self.out.push_str("-> ");
        self.type_expr(&a.returns, false);
        self.body_after_header(&a.body, broken);
    }

    /// Does `fails ... -> R {` still fit on the header's line?
    fn header_fits(&self, fails: Option<&FailsClause>, returns: &TypeExpr) -> bool {
        let room = super::WIDTH.saturating_sub(self.column());
        let mut p = Printer::trial(room);
        if let Some(fails) = fails {
            p.out.push_str(" fails ");
            for (i, f) in fails.failures.iter().enumerate() {
                if i > 0 {
                    p.out.push_str(", ");
                }
                p.path(f);
            }
        }
        p.out.push_str(" -> ");
        p.type_expr(returns, false);
        p.out.push_str(" {");
        !p.over()
    }

    /// A long header puts `fails` and `->` on lines of their own, one level
    /// in, and the body's `{` on the next line.
    fn header_break(&mut self, broken: bool) {
        if broken {
            self.out.push('\n');
            self.indent += 1;
            self.line_start();
            self.indent -= 1;
        } else {
            self.out.push(' ');
        }
    }

    fn body_after_header(&mut self, body: &Block, broken: bool) {
        if broken {
            self.out.push('\n');
            self.line_start();
        } else {
            self.out.push(' ');
        }
        self.block(body);
    }

    fn params(&mut self, params: &[Param]) {
        self.out.push('(');
        for (i, p) in params.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            let _ = write!(self.out, "{}: ", p.name.name);
            self.type_expr(&p.ty, true);
        }
        self.out.push(')');
    }

    /// A type; `constraints` says whether `{ ... }` after a named type is
    /// read as its constraints where this type stands.
    pub(super) fn type_expr(&mut self, t: &TypeExpr, constraints: bool) {
        match &t.kind {
            TypeExprKind::Named {
                path,
                args,
                constraints: given,
            } => {
                self.path(path);
                if !args.is_empty() {
                    self.out.push('<');
                    for (i, a) in args.iter().enumerate() {
                        if i > 0 {
                            self.out.push_str(", ");
                        }
                        self.type_expr(a, constraints);
                    }
                    self.out.push('>');
                }
                if constraints && !given.is_empty() {
                    self.out.push(' ');
                    self.settings(given, t.span.end);
                }
            }
            TypeExprKind::Enum(names) => {
                self.out.push_str("Enum {");
                for n in names {
                    let _ = write!(self.out, " {}", n.name);
                }
                self.out.push_str(" }");
            }
            TypeExprKind::Object(fields) => {
                self.out.push_str("Object ");
                self.fields(fields, constraints, t.span.end);
            }
            TypeExprKind::Optional(inner) => {
                self.type_expr(inner, constraints);
                self.out.push('?');
            }
            TypeExprKind::Error => self.out.push('§'),
        }
    }
}
