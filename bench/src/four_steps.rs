//! The benchmark app of the runtime and the test runner: a package `pay`
//! with one keyed changing operation (24 h window), and an action `four`
//! making four changing calls (four steps, twelve crash points), a write
//! and an emit.

use jadpo_compiler::load::loaders::MemLoader;

const MANIFEST: &str = "app: bench\npackages: { pay: { path: pay } }\n";
const PACKAGE: &str = "package: pay
version: 1.0.0
provider:
  idempotency:
    header: Idempotency-Key
    window: 24h
  timeout: 5s
  attempts: 2
operations:
  charges.create:
    request: ChargeReq
    answer: Charge
    changes: true
    idempotent: true
";
const TYPES: &str = "type ChargeReq = Object {
    order: Text { max_length: 64 }
    amount: Int
}

type Charge = Object {
    id: Text { max_length: 64 }
    amount: Int
}
";
const APP: &str = "application Bench {
    steps: { encryption_key: config.steps_key }
    events: { store: primary }
}

config BenchConfig {
    steps_key: Key { binding: \"STEPS_KEY\" secret: true }
}

type Key = Text { max_length: 128 }

store primary { kind: postgres }

entity Order {
    store: primary
    id: Text { max_length: 64 }
    charge: Text { max_length: 64 }
}

event Paid {
    order: Text { max_length: 64 }
}

type OrderReq = Object {
    id: Text { max_length: 64 }
    amount: Int
}

action four(req: OrderReq) -> Text {
    var a = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: req.amount })
    var b = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: req.amount + 1 })
    var c = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: req.amount + 2 })
    var d = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: req.amount + 3 })
    attempt create Order { id: req.id charge: d.id }
    emit Paid { order: req.id }
    return d.id
}
";

/// The app at `b/`, with `extra` as another source file.
pub fn loader(extra: &str) -> MemLoader {
    let mut loader = MemLoader::new();
    loader.insert("b/jadpo.yaml", MANIFEST.as_bytes());
    loader.insert("b/app.jadpo", APP.as_bytes());
    loader.insert("b/pay/package.yaml", PACKAGE.as_bytes());
    loader.insert("b/pay/types.jadpo", TYPES.as_bytes());
    if !extra.is_empty() {
        loader.insert("b/tests.jadpo", extra.as_bytes());
    }
    loader
}
