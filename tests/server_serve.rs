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

    // A Postgres store that is not there is named with the cause.
    let gone = dir.join("no-socket-here");
    let unreachable = format!("postgresql:///db?host={}", gone.display());
    let why = spawn(serve(&bundle, &unreachable))
        .err()
        .unwrap_or_default();
    assert!(
        why.contains("store `primary` cannot be reached")
            && why.contains("No such file or directory"),
        "{why}"
    );

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

/// `--migrate check` refuses any change and `auto` makes the additive
/// ones; a build the store cannot take is refused by name either way,
/// with the command that lists the rest.
#[test]
fn serve_sets_its_store_up_or_refuses_a_build_it_cannot_take() {
    let dir = scratch("serve-migrate");
    let bundle = dir.join("build");
    build(&bundle);
    let store = format!("sqlite:{}", dir.join("app.sqlite").display());
    let mut check = serve(&bundle, &store);
    check.args(["--migrate", "check"]);
    let why = spawn(check).err().unwrap_or_default();
    assert!(why.contains("`--migrate check` applies none"), "{why}");
    assert!(why.contains("`jadpo db status --app APP_DIR`"), "{why}");

    let first = spawn(serve(&bundle, &store)).unwrap_or_else(|e| panic!("{e}"));
    let set_up = first.wait_for("store primary: created table subscription", 20);
    first.stop();
    assert!(set_up.is_some(), "the start said what it set up");
    let mut check = serve(&bundle, &store);
    check.args(["--migrate", "check"]);
    spawn(check).unwrap_or_else(|e| panic!("{e}")).stop();

    let app = crate::server_support::copy_billing(&dir, "billing");
    let model = app.join("src/model.jadpo");
    let text = std::fs::read_to_string(&model).unwrap_or_default();
    let changed = text.replace(
        "    id: stripe.SubscriptionId\n    customer: stripe.CustomerId\n",
        "    customer: stripe.CustomerId\n    id: stripe.SubscriptionId\n",
    );
    assert_ne!(changed, text);
    std::fs::write(&model, changed).unwrap_or_else(|e| panic!("{e}"));
    let other = dir.join("other-build");
    crate::server_support::jadpo_build(&app, &other);
    let why = spawn(serve(&other, &store)).err().unwrap_or_default();
    assert!(
        why.contains("`Subscription`'s key (its first field) was `id`"),
        "{why}"
    );
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

/// Section 24: `--tls-cert`/`--tls-key` answer HTTPS with rustls, a client
/// that trusts the certificate gets the route's answer, and a file that is
/// no certificate is refused at start, named.
#[test]
fn serve_answers_https_with_its_certificate() {
    let dir = scratch("serve-tls");
    let bundle = dir.join("build");
    build(&bundle);
    let store = format!("sqlite:{}", dir.join("app.sqlite").display());
    let made = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()])
        .unwrap_or_else(|e| panic!("{e}"));
    let cert = dir.join("cert.pem");
    let key = dir.join("key.pem");
    std::fs::write(&cert, made.cert.pem()).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&key, made.signing_key.serialize_pem()).unwrap_or_else(|e| panic!("{e}"));

    let mut bad = serve(&bundle, &store);
    bad.arg("--tls-cert").arg(&key).arg("--tls-key").arg(&key);
    let why = spawn(bad).err().unwrap_or_default();
    assert!(
        why.contains("--tls-cert") && why.contains("certificate"),
        "{why}"
    );

    let mut cmd = serve(&bundle, &store);
    cmd.arg("--tls-cert").arg(&cert).arg("--tls-key").arg(&key);
    let server = spawn(cmd).unwrap_or_else(|e| panic!("{e}"));
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::blocking::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(made.cert.pem().as_bytes())
            .unwrap_or_else(|e| panic!("{e}"))])
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let url = format!("https://127.0.0.1:{}/subscriptions/requests", server.port);
    let answer = client
        .post(&url)
        .header("content-type", "application/json")
        .body(BODY)
        .send()
        .map(|r| r.status().as_u16());
    // Plain HTTP on the TLS port gets no answer.
    let plain = server.request("POST", "/subscriptions/requests", &[], BODY);
    server.stop();
    assert_eq!(answer.ok(), Some(202));
    assert_eq!(plain, None);
}

/// `jadpo serve --fakes` sends the provider calls over HTTP to a fake
/// provider server on loopback, as `jadpo dev` does, and says where it is:
/// the refund a route made is in that server's effects.
#[test]
fn serve_fakes_answer_behind_the_fake_provider_server() {
    let dir = scratch("serve-fake-server");
    let bundle = dir.join("build");
    build(&bundle);
    let store = format!("sqlite:{}", dir.join("app.sqlite").display());
    let server = spawn(serve(&bundle, &store)).unwrap_or_else(|e| panic!("{e}"));
    let answer = server.request(
        "POST",
        "/refunds",
        &[("idempotency-key", "fake-server-1")],
        r#"{"charge":"ch_1"}"#,
    );
    assert_eq!(answer, Some((200, "true".to_string())));
    let lines = server
        .wait_for("fake providers at http://127.0.0.1:", 10)
        .unwrap_or_else(|| panic!("serve did not say where its fakes answer"));
    let port: u16 = lines
        .first()
        .and_then(|l| l.split("http://127.0.0.1:").nth(1))
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {lines:?}"));
    let bytes = crate::server_support::request_bytes("GET", "/__jadpo/effects", &[], "", b"");
    let (status, _, effects) = crate::server_support::raw_to(port, &bytes)
        .unwrap_or_else(|| panic!("the fake provider server did not answer"));
    assert_eq!(status, 200, "{effects}");
    assert!(effects.contains("stripe.refunds.create"), "{effects}");
    server.stop();
}
