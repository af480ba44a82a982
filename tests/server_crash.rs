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

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use jadpo_compiler::load::FsLoader;
use jadpo_compiler::resolve::Lowering;
use jadpo_runtime::store::schema::Schema;
use jadpo_runtime::store::{Queue, Rows};
use jadpo_server::store::sqlite::{Options, SqliteStore};

const BILLING: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/billing");
/// `sha256("test-token")`: the API key GET /subscriptions/{id} is read with.
const KEYS: &str = "tester:4c5dc9b7708905f77f5e5d16316b5dfb425e68cb326dcd55a860e90a7707031e";
const BODY: &str = r#"{"email":"ada@example.com","price":"price_basic","payment_method":"pm_1"}"#;

struct Dev {
    child: Child,
    port: u16,
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("jadpo-crash-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    dir
}

/// Starts `jadpo dev` on `db`, with a crash point when given; waits (at
/// most 30 s) until it serves.
fn start(db: &Path, crash: Option<&str>) -> Dev {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_jadpo"));
    cmd.args(["dev", BILLING, "--listen", "127.0.0.1:0", "--no-reload"])
        .args(["--format", "json", "--lease", "1", "--db"])
        .arg(db)
        .env("JADPO_API_KEYS", KEYS)
        .env_remove("JADPO_CRASH_AT")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(c) = crash {
        cmd.env("JADPO_CRASH_AT", c);
    }
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run jadpo dev: {e}"));
    let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if send.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        let Ok(line) = receive.recv_timeout(Duration::from_millis(100)) else {
            continue;
        };
        if let Some(port) = line
            .split("http://127.0.0.1:")
            .nth(1)
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|p| p.parse().ok())
        {
            // Keep draining its output so it never blocks on a full pipe.
            std::thread::spawn(move || while receive.recv().is_ok() {});
            return Dev { child, port };
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("jadpo dev did not start within 30 s");
}

impl Dev {
    /// One request; `None` when the connection broke (the process died).
    fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Option<(u16, String)> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(20))).ok()?;
        let mut text = format!(
            "{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
            body.len()
        );
        for (k, v) in headers {
            text.push_str(&format!("{k}: {v}\r\n"));
        }
        text.push_str("\r\n");
        text.push_str(body);
        s.write_all(text.as_bytes()).ok()?;
        let mut out = String::new();
        s.read_to_string(&mut out).ok()?;
        let status = out.split(' ').nth(1)?.parse().ok()?;
        let body = out.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
        Some((status, body))
    }

    /// Waits (at most 20 s) for the process to end by itself.
    fn died(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// SIGTERM, then at most 15 s for a clean exit.
    fn stop(mut self) {
        #[cfg(unix)]
        // SAFETY: kill(2) on our own child's pid.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Dev {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

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
    let mut journal = db.as_os_str().to_owned();
    journal.push(".fakes.jsonl");
    let text = std::fs::read_to_string(PathBuf::from(journal)).unwrap_or_default();
    let mut acted = Vec::new();
    let mut per_key: BTreeMap<(String, String), u32> = BTreeMap::new();
    for line in text.lines() {
        let Ok(j) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if j["acted"] != true {
            continue;
        }
        let op = j["operation"].as_str().unwrap_or("").to_string();
        let key = j["key"].as_str().unwrap_or("").to_string();
        acted.push(op.clone());
        *per_key.entry((op, key)).or_default() += 1;
    }
    acted.sort();
    let repeated = per_key
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(k, _)| k)
        .collect();
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
    // Four runs at a time: each has its own store and port.
    for chunk in cases.chunks(4) {
        let results: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = chunk
                .iter()
                .map(|(step, point)| {
                    let name = format!("{label}-{step}-{point}");
                    s.spawn(move || (name.clone(), run(through, Some((*step, point)), &name)))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| panic!("a run panicked")))
                .collect()
        });
        for (name, (crashed, repeated)) in results {
            assert!(
                repeated.is_empty(),
                "{name}: a charge was repeated: {repeated:?}"
            );
            assert_eq!(
                crashed, clean,
                "{name}: the crashed run ended unlike the clean run"
            );
        }
    }
}

#[test]
fn a_route_killed_at_every_step_boundary_resumes_without_repeating_a_charge() {
    matrix(Through::Route, "route");
}

#[test]
fn a_subscriber_killed_at_every_step_boundary_resumes_without_repeating_a_charge() {
    matrix(Through::Subscriber, "subscriber");
}
