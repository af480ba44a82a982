//! `jadpo serve` from a bundle (design `server.md` section 13): it refuses
//! to start, naming the cause, without its bindings, on a bundle that does
//! not match its plan, or as a second process on one SQLite file; two
//! processes share one Postgres store (run through
//! `scripts/with-postgres.sh`; skipped without it).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::server_support::{scratch, spawn, Dev, BILLING, BODY, KEYS};

fn build(out: &Path) {
    crate::server_support::jadpo_build(Path::new(BILLING), out);
}

fn serve(bundle: &Path, store: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_jadpo"));
    cmd.arg("serve")
        .arg(bundle)
        .args(["--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0"])
        .args(["--lease", "1", "--fakes", "dev"])
        .env("JADPO_STORE_PRIMARY", store)
        .env("STEPS_KEY", "serve-test-key")
        .env("BASIC_PRICE", "price_basic")
        .env("JADPO_API_KEYS", KEYS)
        .env_remove("JADPO_CRASH_AT");
    cmd
}

#[test]
fn serve_refuses_to_start_and_names_the_cause() {
    let dir = scratch("serve-refusals");
    let bundle = dir.join("build");
    build(&bundle);
    let store = format!("sqlite:{}", dir.join("app.sqlite").display());

    let mut no_key = serve(&bundle, &store);
    no_key.env_remove("STEPS_KEY");
    let why = spawn(no_key).err().unwrap_or_default();
    assert!(why.contains("`steps_key` (set STEPS_KEY)"), "{why}");

    let mut no_store = serve(&bundle, &store);
    no_store.env_remove("JADPO_STORE_PRIMARY");
    let why = spawn(no_store).err().unwrap_or_default();
    assert!(why.contains("JADPO_STORE_PRIMARY is not set"), "{why}");

    let mut wrong = serve(&bundle, &store);
    wrong.args(["--expect-build", "0000"]);
    let why = spawn(wrong).err().unwrap_or_default();
    assert!(why.contains("not the expected 0000"), "{why}");

    // One SQLite file serves one process.
    let first = spawn(serve(&bundle, &store)).unwrap_or_else(|e| panic!("{e}"));
    let why = spawn(serve(&bundle, &store)).err().unwrap_or_default();
    assert!(why.contains("another jadpo server"), "{why}");
    first.stop();

    // A bundle edited after its build is refused.
    let file = bundle.join("app.bundle");
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    std::fs::write(&file, text.replace("price_basic", "price_other"))
        .unwrap_or_else(|e| panic!("{e}"));
    let why = spawn(serve(&bundle, &store)).err().unwrap_or_default();
    assert!(why.contains("does not match its checksum"), "{why}");
}

fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "{what} within 20 s");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn two_processes_share_one_postgres_store() {
    let url = match std::env::var("JADPO_TEST_PG") {
        Ok(v) if v.starts_with("postgres") => v,
        Ok(v) if v == "required" => panic!("JADPO_TEST_PG=required, but no server"),
        _ => {
            eprintln!("skipped: no Postgres (run through scripts/with-postgres.sh to test it)");
            return;
        }
    };
    let dir = scratch("serve-two");
    let bundle = dir.join("build");
    build(&bundle);
    let a: Dev = spawn(serve(&bundle, &url)).unwrap_or_else(|e| panic!("{e}"));
    let b: Dev = spawn(serve(&bundle, &url)).unwrap_or_else(|e| panic!("{e}"));
    // A keyed request answered by one process replays from the other.
    let key = [("idempotency-key", "shared-1")];
    let refund = r#"{"charge":"ch_1"}"#;
    let first = a
        .request("POST", "/refunds", &key, refund)
        .unwrap_or_else(|| panic!("no answer"));
    assert_eq!(first, (200, "true".to_string()));
    let again = b
        .request("POST", "/refunds", &key, refund)
        .unwrap_or_else(|| panic!("no answer"));
    assert_eq!(again, first);
    // An event staged through one process is delivered by either, once.
    let staged = a
        .request("POST", "/subscriptions/requests", &[], BODY)
        .unwrap_or_else(|| panic!("no answer"));
    assert_eq!(staged.0, 202, "{}", staged.1);
    let auth = [("authorization", "Bearer test-token")];
    let shown = wait_for("the subscription is stored", || {
        b.request("GET", "/subscriptions/sub_1", &auth, "")
            .filter(|(s, _)| *s == 200)
    });
    assert!(shown.1.contains("cus_1"), "{}", shown.1);
    a.stop();
    b.stop();
}
