//! The real crash matrix (design `server.md` section 25): every multi-step
//! delivery of `examples/billing`, through a route (`POST /subscriptions`,
//! run in the request) and through a subscriber (`POST
//! /subscriptions/requests`, run by the dispatcher), with `jadpo dev`
//! SIGKILLed at each step's three points (`JADPO_CRASH_AT`, the
//! `crash-hooks` build the tests use), then restarted on the same store:
//! the route's client sends its request again under the same key, the
//! subscriber's delivery is rescued once its lease lapses. Each run must
//! end as the clean run does: the same answer, the same rows, the same
//! events, and no (operation, key) the fake provider acted on twice.
//! Everything listens on 127.0.0.1; every wait is bounded.

use std::path::Path;
use std::time::{Duration, Instant};

use jadpo_compiler::load::FsLoader;
use jadpo_compiler::resolve::Lowering;
use jadpo_runtime::store::schema::Schema;
use jadpo_runtime::store::{Queue, Rows};
use jadpo_server::store::sqlite::{Options, SqliteStore};

use crate::server_support::{scratch, start, Dev, BILLING, BODY};

/// The route's client: sends until it has an answer that is not "in
/// use" or "later" (at most 20 s).
fn subscribe(dev: &Dev, key: &str) -> (u16, String) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let got = dev.request("POST", "/subscriptions", &[("idempotency-key", key)], BODY);
        match got {
            Some((409 | 503, _)) | None if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(100));
            }
            Some(answer) => return answer,
            None => panic!("no answer within 20 s"),
        }
    }
}

/// Waits (at most 20 s) until the subscription is stored.
fn stored(dev: &Dev) -> (u16, String) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let got = dev.request(
            "GET",
            "/subscriptions/sub_1",
            &[("authorization", "Bearer test-token")],
            "",
        );
        match got {
            Some((200, body)) => return (200, body),
            _ if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(100)),
            other => panic!("the subscription was not stored within 20 s: {other:?}"),
        }
    }
}

/// What a run leaves: the answer, the rows, the events' kinds, the
/// operations the fake acted on (sorted), and the (operation, key) pairs
/// it acted on more than once.
#[derive(Debug, PartialEq)]
struct Left {
    answer: (u16, String),
    rows: Vec<String>,
    events: Vec<String>,
    acted: Vec<String>,
}

fn left(db: &Path, answer: (u16, String)) -> (Left, Vec<(String, String)>) {
    let compiled = jadpo_compiler::compile_with(&FsLoader, BILLING, Lowering::Code);
    let program = compiled
        .program
        .unwrap_or_else(|| panic!("billing compiles"));
    let schema = Schema::of(&program, "primary", "billing");
    let options = Options {
        exclusive: false,
        ..Options::default()
    };
    let store = SqliteStore::open(db, schema, options).unwrap_or_else(|e| panic!("{e}"));
    let mut rows = Vec::new();
    for (i, _) in program.entities.iter().enumerate() {
        let e = jadpo_compiler::ir::EntityId(i as u32);
        for r in store.select(e, &[]).unwrap_or_else(|e| panic!("{e}")) {
            rows.push(String::from_utf8_lossy(&r.value.canonical()).into_owned());
        }
    }
    rows.sort();
    let mut events: Vec<String> = store
        .events(1000)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|e| e.follow.event)
        .collect();
    events.sort();
    let (acted, repeated) = crate::server_support::effects(db);
    (
        Left {
            answer,
            rows,
            events,
            acted,
        },
        repeated,
    )
}

#[derive(Clone, Copy)]
enum Through {
    Route,
    Subscriber,
}

/// One run: clean when `crash` is `None`.
fn run(through: Through, crash: Option<(u32, &str)>, name: &str) -> (Left, Vec<(String, String)>) {
    let dir = scratch(name);
    let db = dir.join("dev.sqlite");
    let action = match through {
        Through::Route => "subscribe",
        Through::Subscriber => "subscribe_requested",
    };
    let spec = crash.map(|(step, point)| format!("{action}:{step}:{point}"));
    let mut dev = start(&db, spec.as_deref());
    let first = match through {
        Through::Route => dev.request(
            "POST",
            "/subscriptions",
            &[("idempotency-key", "k-1")],
            BODY,
        ),
        Through::Subscriber => dev.request("POST", "/subscriptions/requests", &[], BODY),
    };
    if crash.is_some() {
        assert!(dev.died(), "{name}: the crash hook did not strike");
        let _ = first;
        dev = start(&db, None);
    }
    let answer = match through {
        Through::Route => subscribe(&dev, "k-1"),
        Through::Subscriber => stored(&dev),
    };
    dev.stop();
    left(&db, answer)
}

fn matrix(through: Through, label: &str) {
    let (clean, repeated) = run(through, None, &format!("{label}-clean"));
    assert!(
        repeated.is_empty(),
        "{label}: the clean run repeated {repeated:?}"
    );
    assert_eq!(clean.acted.len(), 3, "{label}: {clean:?}");
    let points = ["before_send", "after_send_before_record", "after_record"];
    let cases: Vec<(u32, &str)> = (1..=3)
        .flat_map(|s| points.iter().map(move |p| (s, *p)))
        .collect();
    crate::server_support::crashed_runs_end_as_clean(
        &cases,
        |(step, point)| format!("{label}-{step}-{point}"),
        |(step, point), name| run(through, Some((*step, point)), name),
        &clean,
    );
}

#[test]
fn a_route_killed_at_every_step_boundary_resumes_without_repeating_a_charge() {
    matrix(Through::Route, "route");
}

#[test]
fn a_subscriber_killed_at_every_step_boundary_resumes_without_repeating_a_charge() {
    matrix(Through::Subscriber, "subscriber");
}
