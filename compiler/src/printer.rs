//! Prints an [`ast`](crate::ast) back to canonical Jadpo source: four-space
//! indentation, one statement or setting per line, commas between fields,
//! and parentheses exactly where precedence or a following `{` needs them.
//! Parsing the printed text gives the same tree up to spans (the round-trip
//! property tested in `tests/properties.rs`).
//!
//! `Error` nodes print as `§`, a character the lexer reports and reads back
//! as an error token; a statement or declaration that could not be read
//! prints as a comment. Comments and blank lines of the original are not in
//! the AST and are not reproduced.

use crate::ast::*;
use std::fmt::Write;

/// The canonical source of a whole file.
pub fn print_file(ast: &SourceFileAst) -> String {
    let mut p = Printer::default();
    for (i, item) in ast.items.iter().enumerate() {
        if i > 0 {
            p.out.push('\n');
        }
        p.item(item);
    }
    p.out
}

/// The canonical source of one expression.
pub fn print_expr(expr: &Expr) -> String {
    let mut p = Printer::default();
    p.expr(expr);
    p.out
}

/// The canonical source of a string literal's value, quotes included.
pub fn quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Binding strength of an expression, loosest first; the parser's levels.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Attempt,
    Or,
    And,
    Not,
    Compare,
    Sum,
    Product,
    Neg,
    Postfix,
}

fn level(e: &Expr) -> Level {
    match &e.kind {
        ExprKind::Attempt(_) => Level::Attempt,
        ExprKind::Unary(UnOp::Not, _) => Level::Not,
        ExprKind::Unary(UnOp::Neg, _) => Level::Neg,
        ExprKind::Binary(op, _, _) => binary_level(*op),
        _ => Level::Postfix,
    }
}

fn binary_level(op: BinOp) -> Level {
    match op {
        BinOp::Or => Level::Or,
        BinOp::And => Level::And,
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => Level::Compare,
        BinOp::Add | BinOp::Sub => Level::Sum,
        BinOp::Mul | BinOp::Div => Level::Product,
    }
}

fn binary_text(op: BinOp) -> &'static str {
    match op {
        BinOp::Eq => "==",
        BinOp::Ne => "!=",
        BinOp::Lt => "<",
        BinOp::Le => "<=",
        BinOp::Gt => ">",
        BinOp::Ge => ">=",
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::And => "and",
        BinOp::Or => "or",
    }
}

fn unit_text(unit: DurationUnit) -> &'static str {
    match unit {
        DurationUnit::Ms => "ms",
        DurationUnit::S => "s",
        DurationUnit::M => "m",
        DurationUnit::H => "h",
        DurationUnit::D => "d",
    }
}

/// Whether the last token of `e` is a path ending in an UpperCamelCase
/// segment: followed by `{`, it would be read as a construction.
fn ends_with_upper_path(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Path(path) => path.last().is_some_and(|s| {
            s.name
                .as_str()
                .starts_with(|c: char| c.is_ascii_uppercase())
        }),
        ExprKind::Binary(_, _, rhs) => ends_with_upper_path(rhs),
        ExprKind::Unary(_, inner) | ExprKind::Attempt(inner) => ends_with_upper_path(inner),
        _ => false,
    }
}

#[derive(Default)]
struct Printer {
    out: String,
    indent: usize,
}

impl Printer {
    fn line_start(&mut self) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
    }

    fn path(&mut self, path: &Path) {
        self.out.push_str(&path.text());
    }

    fn item(&mut self, item: &Item) {
        match item {
            Item::Application(a) => self.named_settings("application", a.name, &a.settings),
            Item::Config(c) => self.named_fields("config", c.name, &c.fields),
            Item::Store(s) => self.named_settings("store", s.name, &s.settings),
            Item::Type(t) => {
                let _ = write!(self.out, "type {} = ", t.name.name);
                self.type_expr(&t.def, true);
                self.out.push('\n');
            }
            Item::Entity(e) => self.named_fields("entity", e.name, &e.fields),
            Item::Failure(f) => self.failure(f),
            Item::Event(e) => self.named_fields("event", e.name, &e.fields),
            Item::Action(a) => self.action(a),
            Item::Function(f) => {
                let _ = write!(self.out, "function {}", f.name.name);
                self.params(&f.params);
                self.out.push_str(" -> ");
                self.type_expr(&f.returns, false);
                self.out.push(' ');
                self.block(&f.body);
                self.out.push('\n');
            }
            Item::Route(r) => {
                let _ = write!(self.out, "route {} {} ", r.method.name, r.path);
                self.settings(&r.settings);
                self.out.push('\n');
            }
            Item::Subscriber(s) => {
                let _ = write!(self.out, "subscriber {} on ", s.name.name);
                self.path(&s.event);
                self.out.push(' ');
                self.settings(&s.settings);
                self.out.push('\n');
            }
            Item::Schedule(s) => {
                let _ = write!(self.out, "schedule {} every ", s.name.name);
                self.expr_before_brace(&s.every);
                self.out.push(' ');
                self.settings(&s.settings);
                self.out.push('\n');
            }
            Item::Fixture(f) => self.fixture(f),
            Item::Test(t) => self.test(t),
            Item::Error(_) => self
                .out
                .push_str("// (a declaration that could not be read)\n"),
        }
    }

    fn fixture(&mut self, f: &crate::ast::FixtureDecl) {
        let _ = writeln!(self.out, "fixture {} {{", f.name.name);
        self.indent += 1;
        for s in &f.settings {
            self.line_start();
            let _ = write!(self.out, "{}: ", s.key.name);
            match &s.value {
                SettingValue::Expr(e) => self.expr(e),
                SettingValue::Record(inner, _) => self.settings(inner),
                SettingValue::Block(b) => self.block(b),
            }
            self.out.push('\n');
        }
        for fake in &f.fakes {
            self.line_start();
            let _ = writeln!(self.out, "fake {} {{", fake.package.name);
            self.indent += 1;
            for a in &fake.answers {
                self.line_start();
                self.path(&a.op);
                self.out.push_str(" => ");
                self.answer(&a.answer);
                self.out.push('\n');
            }
            self.indent -= 1;
            self.line_start();
            self.out.push_str("}\n");
        }
        self.indent -= 1;
        self.out.push_str("}\n");
    }

    fn answer(&mut self, a: &crate::ast::Answer) {
        use crate::ast::AnswerKind;
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
                    self.field_inits(fields);
                }
            }
            AnswerKind::Lost(inner) => {
                self.out.push_str("lost ");
                self.answer(inner);
            }
        }
    }

    fn test(&mut self, t: &crate::ast::TestDecl) {
        use crate::ast::{DeliveryTarget, Expect, TestStmtKind};
        let _ = write!(self.out, "test {}", quote(&t.name.value));
        if let Some(u) = t.using {
            let _ = write!(self.out, " using {}", u.name);
        }
        self.out.push_str(" {\n");
        self.indent += 1;
        for s in &t.body {
            self.line_start();
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
                TestStmtKind::Delivery(d) => {
                    if let Some(b) = d.bind {
                        let _ = write!(self.out, "var {} = ", b.name);
                    }
                    match &d.target {
                        DeliveryTarget::Call { action, args } => {
                            let _ = write!(self.out, "call {}(", action.name);
                            self.exprs(args);
                            self.out.push(')');
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
                TestStmtKind::Error => self.out.push_str("// (a statement that could not be read)"),
            }
            self.out.push('\n');
        }
        self.indent -= 1;
        self.out.push_str("}\n");
    }

    fn named_settings(&mut self, word: &str, name: Ident, settings: &[Setting]) {
        let _ = write!(self.out, "{word} {} ", name.name);
        self.settings(settings);
        self.out.push('\n');
    }

    fn failure(&mut self, f: &crate::ast::FailureDecl) {
        let _ = write!(self.out, "failure {} ", f.name.name);
        if f.entries.is_empty() {
            self.out.push_str("{ }\n");
            return;
        }
        self.out.push_str("{\n");
        self.indent += 1;
        for entry in &f.entries {
            self.line_start();
            match entry {
                crate::ast::FailureEntry::Setting(s) => {
                    let _ = write!(self.out, "{}: ", s.key.name);
                    if let SettingValue::Expr(e) = &s.value {
                        self.expr(e);
                    }
                }
                crate::ast::FailureEntry::Field(field) => {
                    let _ = write!(self.out, "{}: ", field.name.name);
                    self.type_expr(&field.ty, true);
                    if field.optional {
                        self.out.push_str(" optional");
                    }
                }
            }
            self.out.push('\n');
        }
        self.indent -= 1;
        self.line_start();
        self.out.push_str("}\n");
    }

    fn named_fields(&mut self, word: &str, name: Ident, fields: &[FieldDecl]) {
        let _ = write!(self.out, "{word} {} ", name.name);
        self.fields(fields, true);
        self.out.push('\n');
    }

    fn action(&mut self, a: &ActionDecl) {
        for d in &a.declines {
            self.out.push_str("decline ");
            self.path(&d.code);
            self.out.push(' ');
            self.out.push_str(&quote(&d.reason.value));
            self.out.push('\n');
        }
        if a.public.is_some() {
            self.out.push_str("public ");
        }
        let _ = write!(self.out, "action {}", a.name.name);
        self.params(&a.params);
        if let Some(fails) = &a.fails {
            self.out.push_str(" fails ");
            for (i, f) in fails.failures.iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                self.path(f);
            }
        }
        self.out.push_str(" -> ");
        self.type_expr(&a.returns, false);
        self.out.push(' ');
        self.block(&a.body);
        self.out.push('\n');
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
    fn type_expr(&mut self, t: &TypeExpr, constraints: bool) {
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
                    self.settings(given);
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
                self.fields(fields, constraints);
            }
            TypeExprKind::Optional(inner) => {
                self.type_expr(inner, constraints);
                self.out.push('?');
            }
            TypeExprKind::Error => self.out.push('§'),
        }
    }

    fn fields(&mut self, fields: &[FieldDecl], constraints: bool) {
        if fields.is_empty() {
            self.out.push_str("{ }");
            return;
        }
        self.out.push_str("{\n");
        self.indent += 1;
        for f in fields {
            self.line_start();
            let _ = write!(self.out, "{}: ", f.name.name);
            self.type_expr(&f.ty, constraints);
            if f.optional {
                self.out.push_str(" optional");
            }
            self.out.push('\n');
        }
        self.indent -= 1;
        self.line_start();
        self.out.push('}');
    }

    fn settings(&mut self, settings: &[Setting]) {
        if settings.is_empty() {
            self.out.push_str("{ }");
            return;
        }
        self.out.push_str("{\n");
        self.indent += 1;
        for s in settings {
            self.line_start();
            let _ = write!(self.out, "{}: ", s.key.name);
            match &s.value {
                SettingValue::Expr(e) => self.expr(e),
                SettingValue::Record(inner, _) => self.settings(inner),
                SettingValue::Block(b) => self.block(b),
            }
            self.out.push('\n');
        }
        self.indent -= 1;
        self.line_start();
        self.out.push('}');
    }

    fn block(&mut self, block: &Block) {
        if block.stmts.is_empty() {
            self.out.push_str("{ }");
            return;
        }
        self.out.push_str("{\n");
        self.indent += 1;
        for s in &block.stmts {
            self.line_start();
            self.stmt(s);
            self.out.push('\n');
        }
        self.indent -= 1;
        self.line_start();
        self.out.push('}');
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Var {
                mutable,
                name,
                ty,
                value,
            } => {
                self.out
                    .push_str(if *mutable { "var mut " } else { "var " });
                self.out.push_str(name.name.as_str());
                if let Some(ty) = ty {
                    self.out.push_str(": ");
                    self.type_expr(ty, false);
                }
                self.out.push_str(" = ");
                self.expr(value);
            }
            StmtKind::Assign { target, value } => {
                let _ = write!(self.out, "{} = ", target.name);
                self.expr(value);
            }
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => self.if_stmt(cond, then_block, else_block.as_ref()),
            StmtKind::For {
                item,
                iterable,
                max,
                body,
            } => {
                let _ = write!(self.out, "for {} in ", item.name);
                match max {
                    Some(max) => {
                        self.expr(iterable);
                        let _ = write!(self.out, " max {} ", max.value);
                    }
                    None => {
                        self.expr_before_brace(iterable);
                        self.out.push(' ');
                    }
                }
                self.block(body);
            }
            StmtKind::Return(None) => self.out.push_str("return"),
            StmtKind::Return(Some(e)) => {
                self.out.push_str("return ");
                self.expr(e);
            }
            StmtKind::Reject(r) => self.reject(r),
            StmtKind::Emit(e) => {
                self.out.push_str("emit ");
                self.path(&e.event);
                self.out.push(' ');
                self.field_inits(&e.fields);
                if let Some(options) = &e.options {
                    self.out.push_str(" with ");
                    self.settings(options);
                }
            }
            StmtKind::Expr(e) => self.expr(e),
            StmtKind::Error => self.out.push_str("// (a statement that could not be read)"),
        }
    }

    fn if_stmt(&mut self, cond: &Expr, then_block: &Block, else_block: Option<&Block>) {
        self.out.push_str("if ");
        self.expr_before_brace(cond);
        self.out.push(' ');
        self.block(then_block);
        let Some(else_block) = else_block else {
            return;
        };
        self.out.push_str(" else ");
        match else_block.stmts.as_slice() {
            [Stmt {
                kind:
                    StmtKind::If {
                        cond,
                        then_block,
                        else_block,
                    },
                ..
            }] => self.if_stmt(cond, then_block, else_block.as_ref()),
            _ => self.block(else_block),
        }
    }

    fn reject(&mut self, r: &RejectExpr) {
        self.out.push_str("reject ");
        self.path(&r.failure);
        if let Some(fields) = &r.fields {
            self.out.push(' ');
            self.field_inits(fields);
        }
    }

    fn field_inits(&mut self, fields: &[FieldInit]) {
        if fields.is_empty() {
            self.out.push_str("{ }");
            return;
        }
        self.out.push_str("{ ");
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            let _ = write!(self.out, "{}: ", f.name.name);
            self.expr(&f.value);
        }
        self.out.push_str(" }");
    }

    /// An expression followed by a `{` that is not its own: parenthesized
    /// when its last token would make the `{` start a construction.
    fn expr_before_brace(&mut self, e: &Expr) {
        if ends_with_upper_path(e) {
            self.out.push('(');
            self.expr(e);
            self.out.push(')');
        } else {
            self.expr(e);
        }
    }

    /// `e` where the grammar expects at least `min`, parenthesized if looser.
    fn operand(&mut self, e: &Expr, min: Level) {
        if level(e) < min {
            self.out.push('(');
            self.expr(e);
            self.out.push(')');
        } else {
            self.expr(e);
        }
    }

    /// Expressions separated by `, ` (arguments, list items).
    fn exprs(&mut self, items: &[Expr]) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.expr(item);
        }
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Int(v) => {
                let _ = write!(self.out, "{v}");
            }
            ExprKind::Decimal(text) => self.out.push_str(text),
            ExprKind::Str(s) => self.out.push_str(&quote(s)),
            ExprKind::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            ExprKind::None => self.out.push_str("none"),
            ExprKind::Duration(amount, unit) => {
                let _ = write!(self.out, "{amount}{}", unit_text(*unit));
            }
            ExprKind::Path(path) => self.path(path),
            ExprKind::Field(inner, name) => {
                // `a.b` would read back as one path: `(a).b` is a field.
                let path = matches!(inner.kind, ExprKind::Path(_));
                self.postfix_target(inner, !path);
                let _ = write!(self.out, ".{}", name.name);
            }
            ExprKind::Call { callee, args } => {
                self.postfix_target(callee, true);
                self.out.push('(');
                self.exprs(args);
                self.out.push(')');
            }
            ExprKind::Construct { ty, fields } => {
                self.path(ty);
                self.out.push(' ');
                self.field_inits(fields);
            }
            ExprKind::List(items) => {
                self.out.push('[');
                self.exprs(items);
                self.out.push(']');
            }
            ExprKind::Unary(UnOp::Not, inner) => {
                self.out.push_str("not ");
                let min = if level(inner) == Level::Not {
                    Level::Not
                } else {
                    Level::Compare
                };
                self.operand(inner, min);
            }
            ExprKind::Unary(UnOp::Neg, inner) => {
                self.out.push('-');
                // `- -x`: two minus signs, never read as one token.
                if matches!(inner.kind, ExprKind::Unary(UnOp::Neg, _)) {
                    self.out.push(' ');
                }
                let min = if level(inner) == Level::Neg {
                    Level::Neg
                } else {
                    Level::Postfix
                };
                self.operand(inner, min);
            }
            ExprKind::Binary(op, lhs, rhs) => self.binary(*op, lhs, rhs),
            ExprKind::Attempt(inner) => {
                self.out.push_str("attempt ");
                let min = if level(inner) == Level::Attempt {
                    Level::Attempt
                } else {
                    Level::Or
                };
                self.operand(inner, min);
            }
            ExprKind::Match { scrutinee, arms } => self.match_expr(scrutinee, arms),
            ExprKind::Create {
                entity,
                fields,
                conflict,
            } => {
                self.out.push_str("create ");
                self.path(entity);
                self.out.push(' ');
                self.field_inits(fields);
                if let Some(c) = conflict {
                    self.out.push_str(" conflict: ");
                    self.path(c);
                }
            }
            ExprKind::Update {
                entity,
                filter,
                set,
                missing,
                conflict,
            } => {
                self.out.push_str("update ");
                self.path(entity);
                self.out.push_str(" { ");
                self.where_clause(filter);
                self.out.push_str(" set: ");
                self.field_inits(set);
                self.clause("missing", missing.as_deref());
                self.clause("conflict", conflict.as_deref());
                self.out.push_str(" }");
            }
            ExprKind::Delete {
                entity,
                filter,
                missing,
            } => {
                self.out.push_str("delete ");
                self.path(entity);
                self.out.push_str(" { ");
                self.where_clause(filter);
                self.clause("missing", missing.as_deref());
                self.out.push_str(" }");
            }
            ExprKind::Count { kind, path } => {
                let _ = write!(self.out, "{} ", kind.as_str());
                self.path(path);
            }
            ExprKind::Query {
                mode,
                entity,
                settings,
            } => {
                let _ = write!(self.out, "query {} ", mode.as_str());
                self.path(entity);
                self.out.push(' ');
                self.field_inits(settings);
            }
            ExprKind::Reject(r) => self.reject(r),
            ExprKind::Propagate => self.out.push_str("propagate"),
            ExprKind::Block(b) => self.block(b),
            ExprKind::Error => self.out.push('§'),
        }
    }

    /// The target of `.name` or `(args)`: parenthesized unless it ends with
    /// a token that closes it (`)`, `]`, `}`, a literal), or is a path and
    /// `path_ok`. `create E { } conflict: F.x` would extend the path `F`.
    fn postfix_target(&mut self, e: &Expr, path_ok: bool) {
        let closed = match &e.kind {
            ExprKind::Path(_) => path_ok,
            ExprKind::Create { conflict, .. } => conflict.is_none(),
            ExprKind::Int(_)
            | ExprKind::Decimal(_)
            | ExprKind::Str(_)
            | ExprKind::Bool(_)
            | ExprKind::None
            | ExprKind::Duration(..)
            | ExprKind::Field(..)
            | ExprKind::Call { .. }
            | ExprKind::Construct { .. }
            | ExprKind::List(_)
            | ExprKind::Match { .. }
            | ExprKind::Update { .. }
            | ExprKind::Delete { .. }
            | ExprKind::Query { .. } => true,
            _ => false,
        };
        if closed {
            self.expr(e);
        } else {
            self.out.push('(');
            self.expr(e);
            self.out.push(')');
        }
    }

    fn binary(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr) {
        let at = binary_level(op);
        // Left-associative levels repeat on the left; comparisons do not
        // chain at all.
        let left_min = if at == Level::Compare { Level::Sum } else { at };
        let right_min = match at {
            Level::Or => Level::And,
            Level::And => Level::Not,
            Level::Compare => Level::Sum,
            Level::Sum => Level::Product,
            _ => Level::Neg,
        };
        self.operand(lhs, left_min);
        let _ = write!(self.out, " {} ", binary_text(op));
        self.operand(rhs, right_min);
    }

    fn where_clause(&mut self, w: &WhereClause) {
        let _ = write!(self.out, "where: {} == ", w.field.name);
        self.expr(&w.value);
    }

    fn clause(&mut self, word: &str, failure: Option<&Path>) {
        if let Some(f) = failure {
            let _ = write!(self.out, " {word}: ");
            self.path(f);
        }
    }

    fn match_expr(&mut self, scrutinee: &Expr, arms: &[MatchArm]) {
        self.out.push_str("match ");
        self.expr_before_brace(scrutinee);
        if arms.is_empty() {
            self.out.push_str(" { }");
            return;
        }
        self.out.push_str(" {\n");
        self.indent += 1;
        for arm in arms {
            self.line_start();
            match &arm.pattern {
                Pattern::Success(v) => {
                    let _ = write!(self.out, "success({})", v.name);
                }
                Pattern::Failure(f) => {
                    self.out.push_str("failure ");
                    self.path(f);
                }
            }
            self.out.push_str(" => ");
            self.expr(&arm.body);
            self.out.push('\n');
        }
        self.indent -= 1;
        self.line_start();
        self.out.push('}');
    }
}
