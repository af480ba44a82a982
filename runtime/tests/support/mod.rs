//! Shared by the runtime's tests: a provider package `pay` with a 1 hour
//! key window (so the margin is 6 minutes), variants of it that replay 5xx
//! answers or take a new key on them, an app around them, and helpers to
//! compile with code, plan, script fakes and run deliveries.

#![allow(dead_code)]

use std::collections::BTreeMap;

use jadpo_checker::plan::Plan;
use jadpo_checker::Scope;
use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::{ActionId, FailureId, OpId, Program};
use jadpo_compiler::load::loaders::MemLoader;
use jadpo_compiler::resolve::Lowering;
use jadpo_runtime::fake::{Fake, Script, Scripted};
use jadpo_runtime::store::MemStore;
use jadpo_runtime::value::{parse_instant, Instant, Value};
use jadpo_runtime::{CrashAt, Delivery, Outcome, Runtime};

pub fn pay_package(name: &str, extra: &str) -> String {
    format!(
        "package: {name}
version: 1.0.0
provider:
  idempotency:
    header: Idempotency-Key
    window: 1h
    in_use: {{ status: 409 }}
{extra}  timeout: 5s
  attempts: 3
operations:
  charges.create:
    request: ChargeReq
    answer: Charge
    changes: true
    idempotent: true
    failures: [Declined]
  tags.put:
    request: ChargeReq
    answer: Charge
    changes: true
    idempotent: true
    keyed: false
  receipts.send:
    request: ChargeReq
    answer: Charge
    changes: true
  charges.get:
    request: ChargeReq
    answer: Charge
    changes: false
"
    )
}

pub const PAY_TYPES: &str = "type ChargeReq = Object {
    order: Text { max_length: 64 }
    amount: Int
}

type Charge = Object {
    id: Text { max_length: 64 }
    amount: Int
}

failure Declined {
    kind: Rejected
    code: \"declined\"
}
";

pub const APP: &str = "application Shop {
    steps: { encryption_key: config.steps_key }
    events: { store: primary }
}

config ShopConfig {
    steps_key: Key { binding: \"STEPS_KEY\" secret: true }
}

type Key = Text { max_length: 128 }

store primary { kind: postgres }

entity Order {
    store: primary
    id: Text { max_length: 64 }
    charge: Text { max_length: 64 }
}

failure Refused {
    kind: Rejected
    code: \"refused\"
}

event Paid {
    order: Text { max_length: 64 }
}

type OrderReq = Object {
    id: Text { max_length: 64 }
    amount: Int
}
";

/// An app of `APP` plus `source`, with the packages `pay`, `pay_replays`
/// (`replays_failures: true`) and `pay_newkey` (and `new_key_on: answer`).
pub fn loader(source: &str) -> MemLoader {
    let mut m = MemLoader::new();
    m.insert(
        "app/jadpo.yaml",
        "app: shop\npackages: { pay: \"1\", pay_replays: \"1\", pay_newkey: \"1\" }\n".as_bytes(),
    );
    m.insert("app/app.jadpo", APP.as_bytes());
    m.insert("app/code.jadpo", source.as_bytes());
    for (name, extra) in [
        ("pay", ""),
        ("pay_replays", "    replays_failures: true\n"),
        (
            "pay_newkey",
            "    replays_failures: true\n    new_key_on: answer\n",
        ),
    ] {
        m.insert(
            format!("app/packages/{name}/package.yaml"),
            pay_package(name, extra).as_bytes(),
        );
        m.insert(
            format!("app/packages/{name}/types.jadpo"),
            PAY_TYPES.as_bytes(),
        );
    }
    m
}

/// A checked program with its code and plan.
pub struct App {
    pub program: Program,
    pub plan: Plan,
}

impl App {
    pub fn new(source: &str) -> App {
        App::from_loader(&loader(source), "app")
    }

    pub fn from_loader(loader: &dyn jadpo_compiler::load::Loader, root: &str) -> App {
        let compiled = jadpo_compiler::compile_with(loader, root, Lowering::Code);
        let program = compiled.program.expect("the app loads");
        let analysis = jadpo_checker::check(&program, &compiled.files, Scope::App);
        let errors: Vec<String> = compiled
            .diagnostics
            .iter()
            .chain(&analysis.diagnostics)
            .filter(|d| d.is_error())
            .map(|d| format!("[{}] {}", d.code, d.summary))
            .collect();
        assert!(errors.is_empty(), "the test app has errors: {errors:#?}");
        let plan = analysis.plan.app().cloned().expect("an app plan");
        App { program, plan }
    }

    pub fn runtime(&self) -> Runtime<'_> {
        Runtime::new(&self.program, &self.plan)
    }

    pub fn action(&self, name: &str) -> ActionId {
        let i = self
            .program
            .actions
            .iter()
            .position(|a| a.qualified == name)
            .unwrap_or_else(|| panic!("no action {name}"));
        ActionId(i as u32)
    }

    pub fn op(&self, qualified: &str) -> OpId {
        let i = self
            .program
            .operations
            .iter()
            .position(|o| o.qualified == qualified)
            .unwrap_or_else(|| panic!("no operation {qualified}"));
        OpId(i as u32)
    }

    pub fn failure(&self, qualified: &str) -> FailureId {
        let i = self
            .program
            .failures
            .iter()
            .position(|f| f.qualified == qualified)
            .unwrap_or_else(|| panic!("no failure {qualified}"));
        FailureId(i as u32)
    }

    /// A fake with each operation's answers.
    pub fn fake(&self, scripts: &[(&str, Vec<Scripted>)]) -> Fake {
        let mut map = BTreeMap::new();
        for (op, answers) in scripts {
            let replays = op.starts_with("pay_replays") || op.starts_with("pay_newkey");
            map.insert(
                self.op(op),
                Script {
                    answers: answers.clone(),
                    replays_failures: replays,
                },
            );
        }
        Fake::new(map)
    }
}

pub fn at(text: &str) -> Instant {
    parse_instant(text).expect("an instant")
}

pub const T0: &str = "2026-01-15T12:00:00Z";

pub fn text(s: &str) -> Value {
    Value::text(s)
}

pub fn rec(fields: &[(&str, Value)]) -> Value {
    Value::record(
        fields
            .iter()
            .map(|(n, v)| (Name::new(n), v.clone()))
            .collect(),
    )
}

/// A `Charge` answer.
pub fn charge(id: &str, amount: i64) -> Scripted {
    Scripted::Answer(rec(&[("id", text(id)), ("amount", Value::Int(amount))]))
}

pub fn order(id: &str, amount: i64) -> Value {
    rec(&[("id", text(id)), ("amount", Value::Int(amount))])
}

pub fn minutes(m: i64) -> i64 {
    m * 60_000
}

/// A delivery of `action(args)` starting at T0, with the steps key given.
pub fn delivery(app: &App, id: &str, action: &str, args: Vec<Value>) -> Delivery {
    let mut config = BTreeMap::new();
    config.insert(Name::new("steps_key"), text("a test steps key"));
    Delivery {
        id: id.to_string(),
        action: app.action(action),
        args,
        config,
        start: at(T0),
        attempts: 5,
        retry_after_ms: minutes(1),
        limits: Default::default(),
    }
}

/// Runs one delivery against a store and fake.
pub fn run(
    app: &App,
    d: &Delivery,
    store: &MemStore,
    fake: &mut Fake,
    crash: Option<CrashAt>,
) -> Outcome {
    app.runtime().deliver(d, store, store, fake, crash)
}
