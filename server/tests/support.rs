//! What the store tests share: an app whose entities hold every column
//! kind, the stores to hold to one behaviour (MemStore, SQLite in a
//! temporary file, Postgres when `JADPO_TEST_PG` names a server), and
//! builders of the data the interfaces carry.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::{EntityId, Program};
use jadpo_compiler::load::loaders::MemLoader;
use jadpo_compiler::resolve::Lowering;
use jadpo_runtime::record::{Doubt, Mode, RowState, Sealed, StepRow, StoredRecord};
use jadpo_runtime::store::schema::Schema;
use jadpo_runtime::store::{
    Commit, DeliveryState, KeyRequest, MemStore, NewDelivery, Source, Store, Write, ROUTE_QUEUE,
};
use jadpo_runtime::value::{Instant, Value};
use jadpo_server::store::sqlite::{Options, SqliteStore};
use jadpo_server::store::{Apply, OpenOptions};

/// An app `Shop` with a steps key and a store `primary`, without
/// entities: a test adds its own.
pub const SHOP_HEAD: &str = "
application Shop {
    steps: { encryption_key: config.steps_key }
}
config ShopConfig {
    steps_key: Key { binding: \"STEPS_KEY\" secret: true }
}
type Key = Text { max_length: 128 }
store primary { kind: postgres }
";

pub const SOURCE: &str = "
application Shop {
    steps: { encryption_key: config.steps_key }
    events: { store: primary }
}

config ShopConfig {
    steps_key: Key { binding: \"STEPS_KEY\" secret: true }
}

type Key = Text { max_length: 128 }

store primary { kind: postgres }

type Tier = Enum { basic pro }

type Meta = Object {
    a: Int
    b: Text
}

entity Order {
    store: primary
    id: Text { max_length: 64 }
    amount: Int
    paid: Bool
    total: Decimal
    at: Instant
    wait: Duration
    tier: Tier
    tags: List<Text>
    meta: Meta
    note: Text? optional
}

entity Counter {
    store: primary
    n: Int
    label: Text
}

event Paid {
    order: Text { max_length: 64 }
}
";

/// The test app's program (compiled once).
pub fn program() -> &'static Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM.get_or_init(|| program_of(SOURCE))
}

pub fn program_of(source: &str) -> Program {
    let mut m = MemLoader::new();
    m.insert("app/jadpo.yaml", "app: shop\n".as_bytes());
    m.insert("app/app.jadpo", source.as_bytes());
    program_in(&m)
}

/// The program of the app at `app` in `m`, which must have no errors.
pub fn program_in(m: &MemLoader) -> Program {
    let compiled = jadpo_compiler::compile_with(m, "app", Lowering::Code);
    let errors: Vec<String> = compiled
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| format!("[{}] {}", d.code, d.summary))
        .collect();
    assert!(errors.is_empty(), "the test app has errors: {errors:#?}");
    compiled.program.expect("a program")
}

pub fn entity(name: &str) -> EntityId {
    let i = program()
        .entities
        .iter()
        .position(|e| e.qualified == name)
        .unwrap_or_else(|| panic!("no entity {name}"));
    EntityId(i as u32)
}

/// The Postgres server the tests may use, from `JADPO_TEST_PG`
/// (`scripts/with-postgres.sh` sets it). Without one the Postgres tests
/// report themselves skipped; with `JADPO_TEST_PG=required` and no URL,
/// they fail.
pub fn postgres_url() -> Option<String> {
    match std::env::var("JADPO_TEST_PG") {
        Ok(v) if v == "required" => {
            panic!("JADPO_TEST_PG=required, but no server: run the tests through scripts/with-postgres.sh")
        }
        Ok(v) if v.starts_with("postgres") => Some(v),
        _ => {
            eprintln!("skipped: no Postgres (run through scripts/with-postgres.sh to test it)");
            None
        }
    }
}

/// A fresh folder for one test's files.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("jadpo-server-tests-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

/// One kind of store, made fresh for each case.
pub enum Kind {
    Mem,
    Sqlite,
    Postgres(String),
}

impl Kind {
    pub fn label(&self) -> &'static str {
        match self {
            Kind::Mem => "memory",
            Kind::Sqlite => "sqlite",
            Kind::Postgres(_) => "postgres",
        }
    }

    /// A fresh store for `case`, set up for `program`.
    pub fn open_for(&self, case: &str, program: &Program) -> Arc<dyn Store> {
        self.open_named(case, program, "primary")
    }

    /// A fresh store `name` of the app for `case`, set up for `program`.
    pub fn open_named(&self, case: &str, program: &Program, name: &str) -> Arc<dyn Store> {
        match self {
            Kind::Mem => Arc::new(MemStore::named(name)),
            Kind::Sqlite => {
                let dir = scratch(&format!("sqlite-{case}"));
                let schema = Schema::of(program, name, "shop");
                Arc::new(
                    SqliteStore::open(&dir.join("app.sqlite"), schema, Options::default())
                        .unwrap_or_else(|e| panic!("{case}: {e}")),
                )
            }
            Kind::Postgres(url) => {
                let app = format!("t{}_{case}", std::process::id());
                let schema = Schema::of(program, name, &app);
                jadpo_server::store::open(url, schema, OpenOptions::default())
                    .unwrap_or_else(|e| panic!("{case}: {e}"))
            }
        }
    }

    pub fn open(&self, case: &str) -> Arc<dyn Store> {
        self.open_for(case, program())
    }
}

pub fn now() -> Instant {
    jadpo_server::store::clock::now()
}

pub fn later(at: Instant, ms: i64) -> Instant {
    Instant(at.0 + i128::from(ms) * 1_000_000)
}

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

/// An `Order` with every column kind filled.
pub fn order(id: &str, amount: i64) -> Value {
    order_noted(id, amount, None)
}

/// An `Order`, with its optional `note` when given.
pub fn order_noted(id: &str, amount: i64, note: Option<&str>) -> Value {
    let mut fields = vec![
        ("id", text(id)),
        ("amount", Value::Int(amount)),
        ("paid", Value::Bool(amount % 2 == 0)),
        ("total", Value::Decimal("12.50".parse().expect("a decimal"))),
        (
            "at",
            Value::Instant(
                jadpo_runtime::value::parse_instant("2026-01-15T12:00:00.123456789Z")
                    .expect("a time"),
            ),
        ),
        ("wait", Value::Duration(90_000)),
        ("tier", Value::Enum(Name::new("pro"))),
        ("tags", Value::List(vec![text("a"), text("b")].into())),
        ("meta", rec(&[("a", Value::Int(1)), ("b", text("x"))])),
    ];
    if let Some(note) = note {
        fields.push(("note", text(note)));
    }
    rec(&fields)
}

/// A direct delivery of `queue` at `priority`, due at `run_at`.
pub fn delivery(id: &str, queue: &str, priority: i64, run_at: Instant) -> NewDelivery {
    NewDelivery {
        id: id.to_string(),
        source: Source::Direct,
        action: "charge".into(),
        subscriber: None,
        queue: queue.to_string(),
        priority,
        tags: vec!["t".into()],
        max_attempts: 5,
        run_at,
        args: b"{\"id\":\"o1\"}".to_vec(),
        build_id: "b1".into(),
        unique: None,
    }
}

pub fn record() -> StoredRecord {
    StoredRecord {
        format: jadpo_runtime::record::FORMAT,
        build_id: "b1".into(),
        shape_digest: "s1".into(),
        mode: Mode::Steps,
        started_at: jadpo_runtime::value::parse_instant("2026-01-15T12:00:00Z").expect("a time"),
        steps: Vec::new(),
    }
}

/// Step `position`: answered (sealed bytes) or in doubt after a 5xx.
pub fn step(position: u32, answered: bool) -> StepRow {
    StepRow {
        position,
        operation: format!("pay.op{position}"),
        fingerprint: Some([position as u8; 32]),
        field_fingerprints: vec![(Name::new("order"), [7u8; 32])],
        sent_at: jadpo_runtime::value::parse_instant("2026-01-15T12:00:01Z").expect("a time"),
        key_generation: 0,
        runner_generation: 1,
        key: Some(format!("key{position}")),
        state: if answered {
            RowState::Answered(Sealed {
                nonce: [position as u8; 24],
                ciphertext: vec![1, 2, 3, position as u8],
            })
        } else {
            RowState::Sent {
                doubt: Doubt::ServerError,
            }
        },
    }
}

pub fn blocking() -> Vec<DeliveryState> {
    vec![
        DeliveryState::Scheduled,
        DeliveryState::Available,
        DeliveryState::Running,
        DeliveryState::Retryable,
        DeliveryState::Completed,
    ]
}

/// `Apply` re-exported for the schema tests.
pub const AUTO: Apply = Apply::Auto;

/// A commit of `id` with `writes` and nothing else.
pub fn commit_of(id: &str, writes: Vec<Write>) -> Commit {
    Commit {
        delivery: id.to_string(),
        at: now(),
        writes,
        follow_ups: Vec::new(),
        steps: Vec::new(),
        response: None,
    }
}

/// A claim of route key `key` (route `POST /orders`, principal `alice`)
/// for a body of `fingerprint`, by delivery `id`.
pub fn key_request(key: &str, fingerprint: u8, id: &str) -> KeyRequest {
    let mut d = delivery(id, ROUTE_QUEUE, 0, now());
    d.source = Source::Route {
        route: "POST /orders".into(),
        principal: "alice".into(),
        key: key.into(),
    };
    KeyRequest {
        route: "POST /orders".into(),
        principal: "alice".into(),
        key: key.into(),
        fingerprint: [fingerprint; 32],
        delivery: d,
        lease_ms: 60_000,
        now: now(),
    }
}
