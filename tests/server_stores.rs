//! Apps with several stores (design `server.md` section 14.5), run by
//! `jadpo dev`: the billing example with a second store, `ledger`, whose
//! `Welcome` rows a subscriber of `SubscriptionStarted` creates after one
//! changing call. The event and its delivery live in `primary` (where
//! `subscribe` commits); the subscriber's record, steps and commit live in
//! `ledger`. Killed at each point of its step, or between its commit in
//! `ledger` and its row's completion in `primary`, and restarted, it ends
//! as the clean run does, with no (operation, key) acted on twice. An action
//! writing both stores is refused by name before anything is made.
//! Everything listens on 127.0.0.1; every wait is bounded.

use std::path::{Path, PathBuf};
use std::process::Command;

use jadpo_compiler::load::FsLoader;
use jadpo_compiler::resolve::Lowering;
use jadpo_runtime::store::schema::Schema;
use jadpo_runtime::store::{ListFilter, Operate, Queue, Rows};
use jadpo_server::store::sqlite::{Options, SqliteStore};

use crate::server_support::{copy_billing, scratch, spawn, text, Dev, BODY, KEYS};

const LEDGER: &str = r#"
store ledger { kind: postgres }

// Kept in the second store: one per started subscription.
entity Welcome {
    store: ledger
    id: stripe.SubscriptionId
    customer: stripe.CustomerId
}

subscriber welcome_started on SubscriptionStarted {
    run: welcome(event)
}

action welcome(started: SubscriptionStarted) fails stripe.InvalidEmail -> Unit {
    var done = query optional Welcome { where: id == started.id }
    if done != none {
        return
    }
    var customer = attempt stripe.customers.create(stripe.CustomerCreate { email: "welcome@example.com" })
    attempt create Welcome { id: started.id customer: customer.id }
}
"#;

/// The billing example with store `ledger` and `extra` appended.
fn app_with(dir: &Path, name: &str, extra: &str) -> PathBuf {
    let app = copy_billing(dir, name);
    let source = app.join("src/app.jadpo");
    let text = std::fs::read_to_string(&source).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&source, format!("{text}{extra}")).unwrap_or_else(|e| panic!("{e}"));
    app
}

fn dev(app: &Path, db: &Path, crash: Option<&str>) -> Dev {
    crate::server_support::dev_crashing(app, db, "dev", &[], crash)
}

/// `jadpo deliveries list` of the app with both stores at `url`.
fn listed(app: &Path, url: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_jadpo"))
        .args(["deliveries", "list", "--app"])
        .arg(app)
        .env("JADPO_STORE_PRIMARY", url)
        .env("JADPO_STORE_LEDGER", url)
        .output()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The listing once it shows the welcome completed, or after 20 s.
fn listed_done(app: &Path, url: &str) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let said = String::from_utf8_lossy(&listed(app, url).stdout).into_owned();
        let done = said
            .lines()
            .any(|l| l.contains(" welcome ") && l.contains("completed"));
        if done || std::time::Instant::now() > deadline {
            return said;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// The welcome listed once, completed.
fn one_welcome_completed(said: &str) {
    let welcomes: Vec<&str> = said.lines().filter(|l| l.contains(" welcome ")).collect();
    assert_eq!(welcomes.len(), 1, "{said}");
    assert!(welcomes[0].contains("completed"), "{said}");
}

/// What a run leaves in both stores and at the fake provider.
#[derive(Debug, PartialEq)]
struct Left {
    rows: Vec<String>,
    events: Vec<String>,
    /// Each store's deliveries as operators see them: (action, state).
    deliveries: Vec<(String, String, String)>,
    acted: Vec<String>,
}

fn open(app: &Path, file: &Path, store: &str) -> SqliteStore {
    let compiled = jadpo_compiler::compile_with(&FsLoader, &app.to_string_lossy(), Lowering::Code);
    let program = compiled
        .program
        .unwrap_or_else(|| panic!("the app compiles"));
    let schema = Schema::of(&program, store, "billing");
    let options = Options {
        exclusive: false,
        ..Options::default()
    };
    SqliteStore::open(file, schema, options).unwrap_or_else(|e| panic!("{e}"))
}

fn left(app: &Path, db: &Path) -> (Left, Vec<(String, String)>) {
    let mut rows = Vec::new();
    let mut events = Vec::new();
    let mut deliveries = Vec::new();
    let mut welcomes = Vec::new();
    // Both stores live in the one dev file, each under its prefix.
    for name in ["primary", "ledger"] {
        let store = open(app, db, name);
        for i in 0..8u32 {
            let e = jadpo_compiler::ir::EntityId(i);
            for r in store.select(e, &[]).unwrap_or_default() {
                let row = String::from_utf8_lossy(&r.value.canonical()).into_owned();
                rows.push(format!("{name}: {row}"));
            }
        }
        for e in store.events(1000).unwrap_or_else(|e| panic!("{e}")) {
            events.push(format!("{name}: {}", e.follow.event));
        }
        let filter = ListFilter {
            not_done: false,
            state: None,
            action: None,
            since: None,
            limit: 100,
        };
        for d in store.list(&filter).unwrap_or_else(|e| panic!("{e}")) {
            if d.action != "check_basic_price" {
                let state = d.state.as_str().to_string();
                welcomes.extend((d.action == "welcome").then(|| d.id.clone()));
                deliveries.push((name.to_string(), d.action, state));
            }
        }
    }
    // The welcome's copy in the record store, which holds its marker.
    let ledger = open(app, db, "ledger");
    for id in welcomes {
        let copy = ledger.delivery(&id).unwrap_or_else(|e| panic!("{e}"));
        let copy = copy.map(|d| format!("{} {}", d.queue, d.state.as_str()));
        let handled = ledger.handled(&id).unwrap_or_else(|e| panic!("{e}"));
        let copy = format!("{} handled {handled}", copy.unwrap_or_default());
        deliveries.push(("ledger".into(), "welcome".into(), copy));
    }
    rows.sort();
    events.sort();
    deliveries.sort();
    let (acted, repeated) = crate::server_support::effects(db);
    let left = Left {
        rows,
        events,
        deliveries,
        acted,
    };
    (left, repeated)
}

/// One run, killed at `crash` (`welcome:1:before_send`) when given.
fn run(app: &Path, crash: Option<&str>, name: &str) -> (Left, Vec<(String, String)>) {
    let dir = scratch(name);
    let db = dir.join("dev.sqlite");
    let mut server = dev(app, &db, crash);
    let send = |server: &Dev| {
        let answer = server.request(
            "POST",
            "/subscriptions",
            &[("idempotency-key", "k-1")],
            BODY,
        );
        answer.map(|a| a.0)
    };
    let first = send(&server);
    if crash.is_some() {
        assert!(server.died(), "{name}: the crash hook did not strike");
        server = dev(app, &db, None);
    }
    // The route committed before the subscriber ran: its answer is
    // replayed when the kill cut it off.
    let answer = first.or_else(|| send(&server));
    assert_eq!(answer, Some(200), "{name}");
    // Not by its listing: killed between the stores, the welcome's commit
    // landed and the next claim completes its row without running it.
    let said = listed_done(app, &format!("sqlite:{}", db.display()));
    server.stop();
    assert!(
        said.lines()
            .any(|l| l.contains(" welcome ") && l.contains("completed")),
        "{name}: the welcome was not completed within 20 s:\n{said}"
    );
    if crash.is_none() {
        operators_see_each_delivery_once(app, &db);
        // One file holds both stores (design section 14).
        let files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{e}"))
            .flatten()
            .map(|f| f.file_name().to_string_lossy().into_owned())
            .filter(|f| f.ends_with(".sqlite"))
            .collect();
        assert_eq!(files, ["dev.sqlite"], "{name}");
    }
    left(app, &db)
}

#[test]
fn a_subscriber_writing_another_store_is_killed_at_each_point_and_resumes() {
    let app = app_with(&scratch("stores_app"), "stores_app", LEDGER);
    let (clean, repeated) = run(&app, None, "stores-clean");
    assert!(repeated.is_empty(), "the clean run repeated {repeated:?}");
    assert_eq!(clean.acted.len(), 4, "{clean:?}");
    let expected = vec![
        (
            "ledger".to_string(),
            "welcome".to_string(),
            "@adopted completed handled true".to_string(),
        ),
        ("primary".into(), "subscribe".into(), "completed".into()),
        ("primary".into(), "welcome".into(), "completed".into()),
    ];
    assert_eq!(clean.deliveries, expected, "{clean:?}");
    assert!(
        clean.rows.iter().any(|r| r.starts_with("ledger: ")),
        "{clean:?}"
    );
    assert!(
        clean.events.iter().all(|e| e.starts_with("primary: ")),
        "{clean:?}"
    );
    // Each point of the step, and between the record store's commit and
    // the home row's completion.
    let crashes = [
        "welcome:1:before_send",
        "welcome:1:after_send_before_record",
        "welcome:1:after_record",
        "between_stores",
    ];
    crate::server_support::crashed_runs_end_as_clean(
        &crashes,
        |crash| format!("stores-{}", crash.replace(':', "-")),
        |crash, name| run(&app, Some(crash), name),
        &clean,
    );
}

/// `jadpo deliveries list` reads both stores, and shows the welcome once,
/// as its home row (not its copy in the record store).
fn operators_see_each_delivery_once(app: &Path, db: &Path) {
    let out = listed(app, &format!("sqlite:{}", db.display()));
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{}", text(&out));
    one_welcome_completed(&said);
    assert!(said.lines().any(|l| l.contains(" subscribe ")), "{said}");
}

/// `jadpo serve` in two processes with both stores on one Postgres
/// (through `scripts/with-postgres.sh`; skipped without it): the
/// subscriber's delivery, inserted in `primary` by the route's commit, is
/// run by either process in `ledger`, once, and operators see it done.
#[test]
fn two_processes_run_an_app_of_two_stores_on_postgres() {
    let Some(url) = crate::server_support::postgres() else {
        return;
    };
    let dir = scratch("stores_serve");
    let app = app_with(&dir, "stores_serve", LEDGER);
    // copy_billing names it `stores_serve`: its own schema.
    let bundle = dir.join("build");
    crate::server_support::jadpo_build(&app, &bundle);
    let serve = || {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_jadpo"));
        cmd.arg("serve")
            .arg(&bundle)
            .args(["--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0"])
            .args(["--lease", "1", "--fakes", "dev"])
            .env("JADPO_STORE_PRIMARY", &url)
            .env("JADPO_STORE_LEDGER", &url)
            .env("STEPS_KEY", "serve-test-key")
            .env("BASIC_PRICE", "price_basic")
            .env("JADPO_API_KEYS", KEYS)
            .env_remove("JADPO_CRASH_AT");
        spawn(cmd).unwrap_or_else(|e| panic!("{e}"))
    };
    let (a, b) = (serve(), serve());
    let key = [("idempotency-key", "stores-1")];
    let answer = a.request("POST", "/subscriptions", &key, BODY);
    assert_eq!(answer.map(|a| a.0), Some(200));
    one_welcome_completed(&listed_done(&app, &url));
    a.stop();
    b.stop();
}

/// What `jadpo` says, exit status and both streams.
fn said(cmd: &mut Command) -> (Option<i32>, String) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{e}"));
    (out.status.code(), text(&out))
}

/// An operator's one `--store URL` is refused for an app of several
/// stores: it would name one of them.
#[test]
fn an_operators_one_store_url_is_refused_for_several_stores() {
    let app = app_with(&scratch("stores_one_url"), "stores_one_url", LEDGER);
    let mut list = Command::new(env!("CARGO_BIN_EXE_jadpo"));
    list.args(["deliveries", "list", "--app"])
        .arg(&app)
        .args(["--store", "sqlite:/nowhere.sqlite"]);
    let (code, text) = said(&mut list);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("--store gives one URL, and the app has 2 stores (ledger, primary)"),
        "{text}"
    );
}

/// A reload that moves an action's record store to another store asks for
/// a restart and keeps the running build: its deliveries' copies and
/// records are where the running build put them.
#[test]
fn a_reload_moving_a_record_store_asks_for_a_restart() {
    let dir = scratch("stores_reload");
    let app = app_with(&dir, "stores_reload", LEDGER);
    let db = dir.join("dev.sqlite");
    let server = crate::server_support::dev_with(&app, &db, "dev", &["reload"]);
    // The reloader reads the files' times once it runs: the edit comes
    // after that.
    std::thread::sleep(std::time::Duration::from_secs(1));
    let source = app.join("src/app.jadpo");
    let text = std::fs::read_to_string(&source).unwrap_or_else(|e| panic!("{e}"));
    let moved = text.replace("    store: ledger\n", "    store: primary\n");
    assert_ne!(moved, text);
    std::fs::write(&source, moved).unwrap_or_else(|e| panic!("{e}"));
    let note = server.wait_for("record store changed", 20);
    let all = server.stop_with_lines();
    assert!(note.is_some(), "no word of the moved record store:\n{all}");
    assert!(!all.contains("reloaded: build"), "{all}");
}

/// SQL on the test server at `url`, through `psql` (`with-postgres.sh`
/// puts the server's own first on the path).
fn psql(url: &str, sql: &str) {
    let out = Command::new("psql")
        .arg(url)
        .args(["-qc", sql])
        .output()
        .unwrap_or_else(|e| panic!("psql: {e}"));
    assert!(out.status.success(), "{sql}: {}", text(&out));
}

/// A store that goes down stops only what lives in it (through
/// `scripts/with-postgres.sh`; skipped without it). `ledger` on a
/// database of its own stops taking connections mid-run: a route of
/// `primary` still answers and commits, the dispatcher and the gauges say
/// `ledger` cannot be reached, and once it is back the welcome delivery
/// (whose record is `ledger`'s) runs.
#[test]
fn a_store_down_stops_only_what_lives_in_it() {
    let Some(url) = crate::server_support::postgres() else {
        return;
    };
    let db = format!("t{}_ledger_down", std::process::id());
    psql(&url, &format!("DROP DATABASE IF EXISTS {db}"));
    psql(&url, &format!("CREATE DATABASE {db}"));
    let ledger = url.replacen("/postgres?", &format!("/{db}?"), 1);
    assert_ne!(ledger, url, "the test server's URL names database postgres");
    let dir = scratch("stores_down");
    let app = app_with(&dir, "stores_down", LEDGER);
    let store = format!("ledger={ledger}");
    let server =
        crate::server_support::dev_with(&app, &dir.join("dev.sqlite"), "dev", &["--store", &store]);
    psql(
        &url,
        &format!("ALTER DATABASE {db} ALLOW_CONNECTIONS false"),
    );
    psql(
        &url,
        &format!("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{db}'"),
    );
    let key = [("idempotency-key", "down-1")];
    let answer = server.request("POST", "/subscriptions", &key, BODY);
    let claimed = server.wait_for("claiming failed: store `ledger` cannot be reached", 20);
    let gauges = server.wait_for("WARN the gauges keep their last values: store `ledger`", 20);
    psql(&url, &format!("ALTER DATABASE {db} ALLOW_CONNECTIONS true"));
    let welcomed = server.wait_for("committed: 1 write (Welcome)", 20);
    let all = server.stop_with_lines();
    psql(&url, &format!("DROP DATABASE IF EXISTS {db}"));
    assert_eq!(answer.map(|a| a.0), Some(200), "{all}");
    assert!(claimed.is_some() && gauges.is_some(), "{all}");
    assert!(
        welcomed.is_some(),
        "the ledger's delivery did not run once back:\n{all}"
    );
}
