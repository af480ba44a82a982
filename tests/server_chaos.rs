//! Several processes on one Postgres store (design `server.md` section
//! 25), run through `scripts/with-postgres.sh` and skipped without it:
//! chaos (500 orders on two processes, either of which is SIGKILLed 20
//! times at random while deliveries run, as the design asks), the zombie
//! (a process stopped past its lease, then let go, sends no effect
//! twice), and schedules (three processes make one delivery per tick).
//! The fakes share one journal, as one provider's state; every loop is
//! bounded in count and time; everything listens on 127.0.0.1.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use jadpo_compiler::load::FsLoader;
use jadpo_compiler::resolve::Lowering;
use jadpo_runtime::store::schema::Schema;
use jadpo_runtime::store::{ListFilter, Store};

use crate::server_support::{postgres, scratch, spawn, Dev};

/// Each test's app has a name of its own, so its Postgres schema
/// (`jadpo_<app>`) is its own: the tests run at once.
fn manifest(app: &str) -> String {
    format!("app: {app}\npackages: {{ pay: {{ path: pay }} }}\n")
}
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
const APP: &str = r#"application Chaos {
    steps: { encryption_key: config.steps_key }
    events: { store: primary }
}

config ChaosConfig {
    steps_key: Key { binding: "STEPS_KEY" secret: true }
}

type Key = Text { max_length: 128 }
type OrderId = Text { max_length: 64 }

store primary { kind: postgres }

entity Charge {
    store: primary
    id: OrderId
    charge: Text { max_length: 64 }
}

event OrderPlaced {
    id: OrderId
}

type OrderReq = Object {
    id: OrderId
}

action place(req: OrderReq) -> Unit {
    emit OrderPlaced { id: req.id }
    return
}

action pay(id: OrderId) -> Text {
    var a = attempt pay.charges.create(pay.ChargeReq { order: id amount: 1 })
    var b = attempt pay.charges.create(pay.ChargeReq { order: id amount: 2 })
    var c = attempt pay.charges.create(pay.ChargeReq { order: id amount: 3 })
    attempt create Charge { id: id charge: c.id }
    return c.id
}

action noop() -> Unit {
    return
}

route POST /orders {
    auth: none
    idempotency_key: required
    input: OrderReq
    output: Text
    run: pay(input.id)
}

route POST /orders/requests {
    auth: none
    input: OrderReq
    output: Unit
    run: place(input)
}

subscriber pay_placed on OrderPlaced {
    run: pay(event.id)
}

schedule tick every 1s {
    run: noop()
}
"#;
const FIXTURE: &str = r#"fixture dev {
    fake pay {
        charges.create => pay.Charge { id: "ch_1" amount: 1 }
    }
}
"#;

/// The chaos app named `name`, built into `dir/build`; the app's folder.
fn app(dir: &Path, name: &str) -> PathBuf {
    let root = dir.join("app");
    let manifest = manifest(name);
    for (path, text) in [
        ("jadpo.yaml", manifest.as_str()),
        ("app.jadpo", APP),
        ("pay/package.yaml", PACKAGE),
        ("pay/types.jadpo", TYPES),
        ("tests/dev.jadpo", FIXTURE),
    ] {
        let file = root.join(path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(&file, text).unwrap_or_else(|e| panic!("{e}"));
    }
    crate::server_support::jadpo_build(&root, &dir.join("build"));
    root
}

/// A `jadpo serve` of the build in `dir` on `url`.
fn serve(dir: &Path, url: &str, extra: &[(&str, &str)]) -> Dev {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_jadpo"));
    cmd.arg("serve")
        .arg(dir.join("build"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--metrics-listen",
            "",
            "--lease",
            "1",
        ])
        .args(["--concurrency", "4", "--fakes", "dev", "--fakes-journal"])
        .arg(dir.join("fakes.jsonl"))
        .env("JADPO_STORE_PRIMARY", url)
        .env("STEPS_KEY", "chaos-key")
        .env_remove("JADPO_CRASH_AT")
        .env_remove("JADPO_FAKE_DELAY_MS");
    for (k, v) in extra {
        cmd.env(k, v);
    }
    spawn(cmd).unwrap_or_else(|e| panic!("{e}"))
}

/// The store of app `name`, read as an operator reads it.
fn store(
    root: &Path,
    url: &str,
    name: &str,
) -> (jadpo_compiler::ir::Program, std::sync::Arc<dyn Store>) {
    let compiled = jadpo_compiler::compile_with(&FsLoader, &root.to_string_lossy(), Lowering::Code);
    let program = compiled
        .program
        .unwrap_or_else(|| panic!("the app compiles"));
    let schema = Schema::of(&program, "primary", name);
    let store = jadpo_server::store::open(url, schema, jadpo_server::store::OpenOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    (program, store)
}

/// (operation, key) pairs the fake acted on more than once, and how many
/// acted in all.
fn repeats(dir: &Path) -> (Vec<(String, String)>, usize) {
    let text = std::fs::read_to_string(dir.join("fakes.jsonl")).unwrap_or_default();
    let mut per: BTreeMap<(String, String), u32> = BTreeMap::new();
    let mut acted = 0;
    for line in text.lines() {
        let Ok(j) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if j["acted"] == true {
            acted += 1;
            let k = (
                j["operation"].as_str().unwrap_or("").to_string(),
                j["key"].as_str().unwrap_or("").to_string(),
            );
            *per.entry(k).or_default() += 1;
        }
    }
    let twice = per
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(k, _)| k)
        .collect();
    (twice, acted)
}

fn kill(dev: &mut Dev) {
    let _ = dev.child.kill();
    let _ = dev.child.wait();
}

#[test]
fn processes_killed_at_random_repeat_no_charge_and_finish_every_delivery() {
    let Some(url) = postgres() else { return };
    let dir = scratch("chaos");
    let root = app(&dir, "chaos");
    let mut procs = vec![serve(&dir, &url, &[]), serve(&dir, &url, &[])];
    const ORDERS: usize = 500;
    const KILLS: usize = 20;
    // A fixed sequence, not the clock: the run is the same each time.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let started = Instant::now();
    let mut kills = 0;
    for i in 0..ORDERS {
        let body = format!(r#"{{"id":"o{i:04}"}}"#);
        let target = (next() % 2) as usize;
        let sent = procs[target].request("POST", "/orders/requests", &[], &body);
        if sent.map(|(s, _)| s) != Some(202) {
            // The process died under the request: its event may or may
            // not be in; send it to the other, as a client would.
            let other = 1 - target;
            let again = procs[other].request("POST", "/orders/requests", &[], &body);
            assert_eq!(again.map(|(s, _)| s), Some(202), "order {i}");
        }
        if kills < KILLS && i % (ORDERS / KILLS) == 5 {
            let victim = (next() % 2) as usize;
            kill(&mut procs[victim]);
            procs[victim] = serve(&dir, &url, &[]);
            kills += 1;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the chaos run took over 120 s"
        );
    }
    assert_eq!(kills, KILLS);
    let (program, store) = store(&root, &url, "chaos");
    let charge = program
        .entities
        .iter()
        .position(|e| e.qualified == "Charge")
        .map(|i| jadpo_compiler::ir::EntityId(i as u32))
        .unwrap_or_else(|| panic!("no Charge"));
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let rows = store.select(charge, &[]).unwrap_or_default();
        let open = store
            .list(&ListFilter {
                not_done: true,
                action: Some("pay".into()),
                limit: 1000,
                ..ListFilter::default()
            })
            .unwrap_or_default();
        if rows.len() >= ORDERS && open.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "after 60 s, {} of {ORDERS} charges and {} deliveries not done: {:?}",
            rows.len(),
            open.len(),
            open.iter()
                .map(|d| (&d.id, d.state, &d.reason))
                .collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    for p in procs {
        p.stop();
    }
    let (twice, acted) = repeats(&dir);
    assert!(twice.is_empty(), "charges repeated: {twice:?}");
    assert_eq!(
        acted,
        ORDERS * 3,
        "each order charged three times, once per step"
    );
}

#[test]
fn a_zombie_woken_after_its_lease_sends_no_charge_twice() {
    let Some(url) = postgres() else { return };
    let dir = scratch("zombie");
    let root = app(&dir, "zombie");
    let slow = serve(&dir, &url, &[("JADPO_FAKE_DELAY_MS", "700")]);
    let fast = serve(&dir, &url, &[]);
    let key = [("idempotency-key", "z-1")];
    let body = r#"{"id":"z1"}"#;
    let slow_port = slow.port;
    let pid = slow.child.id() as i32;
    let zombie = std::thread::spawn(move || {
        let text = format!(
            "POST /orders HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\nidempotency-key: z-1\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        crate::server_support::raw_to(slow_port, text.as_bytes()).map(|(s, _, b)| (s, b))
    });
    // Step 1 is sent at about 0.7 s; stop it inside step 2's wait.
    std::thread::sleep(Duration::from_millis(1000));
    // SAFETY: kill(2) on our own child.
    unsafe {
        libc::kill(pid, libc::SIGSTOP);
    }
    std::thread::sleep(Duration::from_millis(1500));
    // Its lease lapsed: the client's resend to the other process takes
    // the delivery over and finishes it.
    let deadline = Instant::now() + Duration::from_secs(20);
    let answer = loop {
        let got = fast.request("POST", "/orders", &key, body);
        if let Some((200, text)) = &got {
            break text.clone();
        }
        assert!(
            Instant::now() < deadline,
            "no answer from the live process: {got:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(answer, "\"ch_1\"");
    // SAFETY: as above.
    unsafe {
        libc::kill(pid, libc::SIGCONT);
    }
    let woke = zombie
        .join()
        .unwrap_or_else(|_| panic!("the client panicked"));
    // The zombie's own answer is not a second run's: it lost its lease.
    assert_ne!(woke.as_ref().map(|(s, _)| *s), Some(500), "{woke:?}");
    std::thread::sleep(Duration::from_millis(500));
    slow.stop();
    fast.stop();
    let (twice, acted) = repeats(&dir);
    assert!(twice.is_empty(), "the zombie repeated a charge: {twice:?}");
    assert_eq!(acted, 3, "three steps acted once each");
    // Woken, it wrote nothing: the delivery's record is gone with its
    // commit, and no stale step brought it back.
    let (_, store) = store(&root, &url, "zombie");
    let left = store.unfinished().unwrap_or_default();
    assert!(
        left.is_empty(),
        "the zombie wrote after its lease: {:?}",
        left.iter().map(|(id, _)| id).collect::<Vec<_>>()
    );
}

#[test]
fn three_processes_make_one_delivery_per_tick() {
    let Some(url) = postgres() else { return };
    let dir = scratch("ticks");
    let root = app(&dir, "ticks");
    let procs: Vec<Dev> = (0..3).map(|_| serve(&dir, &url, &[])).collect();
    std::thread::sleep(Duration::from_secs(6));
    for p in procs {
        p.stop();
    }
    let (_, store) = store(&root, &url, "ticks");
    let ticks: Vec<i128> = store
        .list(&ListFilter {
            action: Some("noop".into()),
            limit: 1000,
            ..ListFilter::default()
        })
        .unwrap_or_default()
        .into_iter()
        .filter_map(|d| match d.source {
            jadpo_runtime::store::Source::Schedule { tick, .. } => Some(tick.0),
            _ => None,
        })
        .collect();
    let distinct: BTreeSet<i128> = ticks.iter().copied().collect();
    assert_eq!(distinct.len(), ticks.len(), "a tick made two deliveries");
    assert!(ticks.len() >= 4, "only {} ticks in 6 s", ticks.len());
    let first = distinct.iter().next().copied().unwrap_or(0);
    let last = distinct.iter().last().copied().unwrap_or(0);
    let expected = ((last - first) / 1_000_000_000 + 1) as usize;
    assert_eq!(
        distinct.len(),
        expected,
        "a tick was missed between the first and the last"
    );
}
