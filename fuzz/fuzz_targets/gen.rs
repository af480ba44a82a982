//! An `arbitrary`-driven generator of small Jadpo apps for the `check` fuzz
//! target. Names come from a small vocabulary that mostly resolves (the
//! stripe package, a fixed model file), so generated programs get past the
//! resolver into the step analyzer. Variant 0 of every recursive enum is a
//! leaf, so running out of input ends the recursion; printing also stops
//! nesting at `MAX_DEPTH`.

use arbitrary::Arbitrary;
use std::fmt::Write;

const MAX_DEPTH: usize = 6;

/// Declarations every generated app has.
const MODEL: &str = "\
application Fuzz {
    steps: { encryption_key: config.key }
    events: { store: primary }
}
config FuzzConfig { key: Key { binding: \"KEY\" secret: true } }
store primary { kind: postgres }
type Key = Text { max_length: 128 }
type Req = Object { email: stripe.Email  id: stripe.CustomerId  n: Int }
entity Row { store: primary  id: stripe.CustomerId  n: Int }
failure Refused { kind: Rejected code: \"refused\" }
event Happened { id: stripe.CustomerId }
";

const TYPES: &[&str] = &[
    "Unit", "Req", "Text", "Int", "Bool", "stripe.Email", "stripe.CustomerId",
    "stripe.Customer", "List<Text>", "Text?", "stripe.Price", "Happened",
];
const FAILURES: &[&str] = &[
    "Refused", "stripe.CardDeclined", "stripe.InvalidEmail", "stripe.ResourceMissing",
    "stripe.PriceMissing", "Unavailable", "NotFound", "Nope",
];
const CALLS: &[&str] = &[
    "stripe.customers.create(stripe.CustomerCreate { email: $ })",
    "stripe.prices.retrieve(stripe.PriceRef { id: $ })",
    "stripe.refunds.create(stripe.RefundCreate { charge: $ })",
    "stripe.subscriptions.cancel(stripe.SubscriptionRef { id: $ })",
    "stripe.customers.delete(stripe.CustomerRef { id: $ })",
    "stripe.invoices.list(stripe.InvoiceQuery { customer: $ })",
    "github.issues.create($)",
    "ai.generate(ai.Prompt { text: $ })",
    "stripe.subscribe_customer($)",
    "clock.now",
];
const FIELDS: &[&str] = &["id", "email", "n", "customer", "amount", "text", "nope"];
const OPS: &[&str] = &["==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "and", "or"];

#[derive(Arbitrary, Debug)]
pub struct App {
    actions: Vec<Action>,
    entries: Vec<Entry>,
}

#[derive(Arbitrary, Debug)]
struct Action {
    public: bool,
    decline: Option<u8>,
    params: Vec<u8>,
    fails: Option<Vec<u8>>,
    returns: u8,
    body: Vec<Stmt>,
}

#[derive(Arbitrary, Debug)]
enum Entry {
    Route { action: u8, key: bool, deadline: Option<u8>, input: u8 },
    Subscriber { action: u8 },
    Schedule { action: u8, hours: u8 },
    InlineRoute { body: Vec<Stmt> },
}

#[derive(Arbitrary, Debug)]
enum Stmt {
    Return(Option<Expr>),
    Var { name: u8, mutable: bool, ty: Option<u8>, value: Expr },
    Assign { name: u8, value: Expr },
    Attempt(Expr),
    If { cond: Expr, then: Vec<Stmt>, other: Option<Vec<Stmt>> },
    For { item: u8, items: Expr, max: Option<u8>, body: Vec<Stmt> },
    Reject(u8),
    Emit { id: Expr, queue: Option<u8>, priority: Option<u8>, unique: bool },
    Expr(Expr),
}

#[derive(Arbitrary, Debug)]
enum Expr {
    Var(u8),
    Int(i64),
    Str(u8),
    Bool(bool),
    None,
    Duration(u16),
    Field(Box<Expr>, u8),
    Call(u8, Box<Expr>),
    ActionCall(u8, Vec<Expr>),
    Attempt(Box<Expr>),
    Binary(u8, Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    List(Vec<Expr>),
    Req(Box<Expr>),
    Match(Box<Expr>, Vec<Arm>),
    Create(Box<Expr>, Option<u8>),
    Update(Box<Expr>, Option<u8>),
    Delete(Box<Expr>, Option<u8>),
}

#[derive(Arbitrary, Debug)]
enum Arm {
    Success(u8, Expr),
    Failure(u8, Expr),
    Reject(u8, u8),
    Propagate(u8),
}

fn pick<'a>(list: &[&'a str], i: u8) -> &'a str {
    list[i as usize % list.len()]
}

fn var(i: u8) -> String {
    match i % 4 {
        0 => "request".to_string(),
        n => format!("v{n}"),
    }
}

impl App {
    /// The app's files: `jadpo.yaml` is added by the caller.
    pub fn files(&self) -> Vec<(String, String)> {
        let mut actions = String::new();
        let count = self.actions.len().max(1) as u8;
        for (i, a) in self.actions.iter().take(8).enumerate() {
            a.print(&mut actions, i, count);
        }
        let mut entries = String::new();
        for e in self.entries.iter().take(6) {
            e.print(&mut entries, count);
        }
        vec![
            ("src/model.jadpo".to_string(), MODEL.to_string()),
            ("src/actions.jadpo".to_string(), actions),
            ("src/entries.jadpo".to_string(), entries),
        ]
    }
}

impl Action {
    fn print(&self, out: &mut String, index: usize, count: u8) {
        if let Some(d) = self.decline {
            let code = pick(&["step.late_failure", "step.unkeyed", "effect.call_in_loop", "nope.x"], d);
            let _ = writeln!(out, "decline {code} \"fuzzed\"");
        }
        let public = if self.public { "public " } else { "" };
        let params: Vec<String> = self
            .params
            .iter()
            .take(3)
            .enumerate()
            .map(|(i, t)| {
                let name = if i == 0 { "request".to_string() } else { format!("p{i}") };
                format!("{name}: {}", pick(TYPES, *t))
            })
            .collect();
        let _ = write!(out, "{public}action a{index}({})", params.join(", "));
        if let Some(fails) = &self.fails {
            let names: Vec<&str> = fails.iter().take(4).map(|f| pick(FAILURES, *f)).collect();
            let _ = write!(out, " fails {}", names.join(", "));
        }
        let _ = writeln!(out, " -> {} {{", pick(TYPES, self.returns));
        stmts(out, &self.body, 1, count);
        out.push_str("}\n\n");
    }
}

impl Entry {
    fn print(&self, out: &mut String, count: u8) {
        match self {
            Entry::Route { action, key, deadline, input } => {
                let _ = writeln!(out, "route POST /r{} {{\n    auth: none", action % count);
                if *key {
                    out.push_str("    idempotency_key: required\n");
                }
                if let Some(d) = deadline {
                    let _ = writeln!(out, "    deadline: {d}s");
                }
                let _ = writeln!(
                    out,
                    "    input: {}\n    output: Unit\n    run: a{}(input)\n}}",
                    pick(TYPES, *input),
                    action % count
                );
            }
            Entry::Subscriber { action } => {
                let _ = writeln!(out, "subscriber s{0} on Happened {{ run: a{0}(event) }}", action % count);
            }
            Entry::Schedule { action, hours } => {
                let _ = writeln!(out, "schedule t{0} every {1}h {{ run: a{0}() }}", action % count, hours);
            }
            Entry::InlineRoute { body } => {
                out.push_str("route POST /inline {\n    auth: none\n    input: Req\n    output: Unit\n    action: {\n");
                stmts(out, body, 2, count);
                out.push_str("    }\n}\n");
            }
        }
    }
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("    ");
    }
}

fn stmts(out: &mut String, list: &[Stmt], depth: usize, count: u8) {
    for s in list.iter().take(12) {
        indent(out, depth);
        stmt(out, s, depth, count);
        out.push('\n');
    }
}

fn block(out: &mut String, list: &[Stmt], depth: usize, count: u8) {
    out.push_str("{\n");
    if depth < MAX_DEPTH {
        stmts(out, list, depth + 1, count);
    }
    indent(out, depth);
    out.push('}');
}

fn stmt(out: &mut String, s: &Stmt, depth: usize, count: u8) {
    let e = |e: &Expr| expr(e, depth, count);
    match s {
        Stmt::Return(None) => out.push_str("return"),
        Stmt::Return(Some(v)) => {
            let _ = write!(out, "return {}", e(v));
        }
        Stmt::Var { name, mutable, ty, value } => {
            let m = if *mutable { "mut " } else { "" };
            let ty = ty.map(|t| format!(": {}", pick(TYPES, t))).unwrap_or_default();
            let _ = write!(out, "var {m}{}{ty} = {}", var(*name), e(value));
        }
        Stmt::Assign { name, value } => {
            let _ = write!(out, "{} = {}", var(*name), e(value));
        }
        Stmt::Attempt(v) => {
            let _ = write!(out, "attempt {}", e(v));
        }
        Stmt::If { cond, then, other } => {
            let _ = write!(out, "if {} ", e(cond));
            block(out, then, depth, count);
            if let Some(other) = other {
                out.push_str(" else ");
                block(out, other, depth, count);
            }
        }
        Stmt::For { item, items, max, body } => {
            let _ = write!(out, "for {} in {}", var(*item), e(items));
            if let Some(m) = max {
                let _ = write!(out, " max {m}");
            }
            out.push(' ');
            block(out, body, depth, count);
        }
        Stmt::Reject(f) => {
            let _ = write!(out, "reject {}", pick(FAILURES, *f));
        }
        Stmt::Emit { id, queue, priority, unique } => {
            let _ = write!(out, "emit Happened {{ id: {} }}", e(id));
            if queue.is_some() || priority.is_some() || *unique {
                out.push_str(" with {");
                if let Some(q) = queue {
                    let _ = write!(out, " queue: \"q{q}\"");
                }
                if let Some(p) = priority {
                    let _ = write!(out, " priority: {p}");
                }
                if *unique {
                    out.push_str(" unique: { by_args: true }");
                }
                out.push_str(" }");
            }
        }
        Stmt::Expr(v) => out.push_str(&e(v)),
    }
}

fn expr(x: &Expr, depth: usize, count: u8) -> String {
    if depth >= MAX_DEPTH {
        return "request".to_string();
    }
    let sub = |e: &Expr| expr(e, depth + 1, count);
    match x {
        Expr::Var(i) => var(*i),
        Expr::Int(n) => n.to_string(),
        Expr::Str(i) => pick(&["\"a@b.c\"", "\"\"", "\"cus_1\"", "\"\\n\\\"\"", "\"é\""], *i).to_string(),
        Expr::Bool(b) => b.to_string(),
        Expr::None => "none".to_string(),
        Expr::Duration(n) => format!("{n}ms"),
        Expr::Field(e, f) => format!("{}.{}", sub(e), pick(FIELDS, *f)),
        Expr::Call(c, arg) => pick(CALLS, *c).replace('$', &sub(arg)),
        Expr::ActionCall(a, args) => {
            let args: Vec<String> = args.iter().take(3).map(sub).collect();
            format!("a{}({})", a % count, args.join(", "))
        }
        Expr::Attempt(e) => format!("attempt {}", sub(e)),
        Expr::Binary(op, l, r) => format!("({} {} {})", sub(l), pick(OPS, *op), sub(r)),
        Expr::Not(e) => format!("not {}", sub(e)),
        Expr::List(items) => {
            let items: Vec<String> = items.iter().take(4).map(sub).collect();
            format!("[{}]", items.join(", "))
        }
        Expr::Req(e) => format!("Req {{ email: {0} id: {0} n: 1 }}", sub(e)),
        Expr::Match(e, arms) => {
            let mut s = format!("match {} {{\n", sub(e));
            for arm in arms.iter().take(4) {
                s.push_str(&arm_text(arm, depth + 1, count));
                s.push('\n');
            }
            s.push('}');
            s
        }
        Expr::Create(e, conflict) => {
            let c = conflict.map(|f| format!(" conflict: {}", pick(FAILURES, f))).unwrap_or_default();
            format!("create Row {{ id: {} n: 1 }}{c}", sub(e))
        }
        Expr::Update(e, missing) => {
            let m = missing.map(|f| format!(" missing: {}", pick(FAILURES, f))).unwrap_or_default();
            format!("update Row {{ where: id == {} set: {{ n: 2 }}{m} }}", sub(e))
        }
        Expr::Delete(e, missing) => {
            let m = missing.map(|f| format!(" missing: {}", pick(FAILURES, f))).unwrap_or_default();
            format!("delete Row {{ where: id == {}{m} }}", sub(e))
        }
    }
}

fn arm_text(arm: &Arm, depth: usize, count: u8) -> String {
    match arm {
        Arm::Success(v, e) => format!("success({}) => {}", var(*v), expr(e, depth, count)),
        Arm::Failure(f, e) => format!("failure {} => {}", pick(FAILURES, *f), expr(e, depth, count)),
        Arm::Reject(f, g) => format!("failure {} => reject {}", pick(FAILURES, *f), pick(FAILURES, *g)),
        Arm::Propagate(f) => format!("failure {} => propagate", pick(FAILURES, *f)),
    }
}
