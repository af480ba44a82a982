//! `deliveries show` for every way a delivery ends (design `server.md`
//! section 19), each reached by a real run of `jadpo dev` on a copy of
//! the billing example: failed (a declined card), fault (a second
//! subscription under the fakes' one id), retry_later (a subscriber's
//! delivery with `max_attempts: 1` whose call is unavailable), abandoned,
//! and diverged (a record resumed by a build whose step 1 sends another
//! request). Each listing is snapshotted, and each JSON document, `list`'s
//! too, is validated against its schema in `spec/`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::server_support::{
    copy_billing, dev_at, dev_with, jadpo_at, scratch, steady, text, BODY,
};

/// A copy of the billing example with a fixture whose Stripe fakes stop
/// after `customers.create` (every later call is unavailable), and
/// subscription requests that give their subscriber one attempt.
fn app(dir: &Path) -> PathBuf {
    let app = copy_billing(dir, "billing");
    let fixture = r#"fixture no_attach {
    config: { steps_key: "test-only-key" basic_price: "price_basic" }
    fake stripe {
        prices.retrieve => stripe.Price { id: "price_basic" amount: 900 currency: "eur" }
        customers.create => stripe.Customer { id: "cus_1" email: "ada@example.com" }
    }
}
"#;
    std::fs::write(app.join("tests/operators.jadpo"), fixture).unwrap_or_else(|e| panic!("{e}"));
    edit(
        &app.join("src/subscribe.jadpo"),
        "        payment_method: request.payment_method\n    }\n}",
        "        payment_method: request.payment_method\n    } with {\n        max_attempts: 1\n    }\n}",
    );
    app
}

fn edit(file: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{e}"));
    assert!(text.contains(from), "{} has no `{from}`", file.display());
    std::fs::write(file, text.replacen(from, to, 1)).unwrap_or_else(|e| panic!("{e}"));
}

/// Checks `doc` against `spec/SCHEMA_FILE`.
pub fn validate(schema_file: &str, doc: &serde_json::Value) {
    let read = |name: &str| -> serde_json::Value {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("spec")
            .join(name);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    let list = jsonschema::Resource::from_contents(read("deliveries-list.schema.json"))
        .unwrap_or_else(|e| panic!("{e}"));
    let validator = jsonschema::options()
        .with_resource(
            "https://jadpo.dev/schemas/deliveries-list.schema.json",
            list,
        )
        .build(&read(schema_file))
        .unwrap_or_else(|e| panic!("invalid schema {schema_file}: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{schema_file}: {errors:#?}\n{doc:#}");
}

/// The deliveries `list --format json` gives, checked against its schema.
fn listed(app: &Path, db: &Path) -> Vec<serde_json::Value> {
    let out = jadpo_at(app, db, &["deliveries", "list", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&out)));
    validate("deliveries-list.schema.json", &doc);
    doc["deliveries"].as_array().cloned().unwrap_or_default()
}

/// The id of the one delivery of `action` in `state`, waiting at most 20 s
/// for it (a subscriber's runs after its route answered).
fn ended(app: &Path, db: &Path, action: &str, state: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let all = listed(app, db);
        let ids: Vec<&str> = all
            .iter()
            .filter(|d| d["action"] == action && d["state"] == state)
            .filter_map(|d| d["id"].as_str())
            .collect();
        if let [one] = ids.as_slice() {
            return one.to_string();
        }
        assert!(
            Instant::now() < deadline,
            "no single {action} in {state}: {all:#?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// `show` in both formats: the listing made steady, after the JSON is
/// validated and agrees with it.
fn shown(app: &Path, db: &Path, id: &str) -> String {
    let out = jadpo_at(app, db, &["deliveries", "show", &id[..10]]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let json = jadpo_at(app, db, &["deliveries", "show", id, "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&json)));
    validate("deliveries-show.schema.json", &doc);
    let listing = text(&out);
    assert!(
        listing.contains(doc["outcome"].as_str().unwrap_or("?")),
        "{listing}\n{doc:#}"
    );
    steady(&listing, id)
}

fn post(server: &crate::server_support::Dev, key: &str) -> (u16, String) {
    server
        .request("POST", "/subscriptions", &[("idempotency-key", key)], BODY)
        .unwrap_or_else(|| panic!("no answer"))
}

#[test]
fn every_ending_is_shown_with_its_steps_and_the_commands_that_settle_it() {
    let dir = scratch("operators-outcomes");
    let app = app(&dir);
    let db = dir.join("dev.sqlite");

    // failed: Stripe declines the card at step 2.
    let server = dev_at(&app, &db, "declined_card");
    assert_eq!(post(&server, "order-1").0, 422);
    server.stop();
    let failed = ended(&app, &db, "subscribe", "failed");
    insta::assert_snapshot!("deliveries_show_failed", shown(&app, &db, &failed));

    // fault: the fakes answer `sub_1` again, and `Subscription` has no
    // `conflict:` for a second row with that key.
    let server = dev_at(&app, &db, "dev");
    assert_eq!(post(&server, "order-2").0, 200);
    let (status, body) = post(&server, "order-3");
    assert_eq!(status, 500, "{body}");
    server.stop();
    let fault = ended(&app, &db, "subscribe", "fault");
    insta::assert_snapshot!("deliveries_show_fault", shown(&app, &db, &fault));

    // retry_later: the subscriber's one attempt finds `subscribe_customer`
    // unavailable.
    let server = dev_at(&app, &db, "no_attach");
    let (status, body) = server
        .request("POST", "/subscriptions/requests", &[], BODY)
        .unwrap_or_else(|| panic!("no answer"));
    assert_eq!(status, 202, "{body}");
    let later = ended(&app, &db, "subscribe_requested", "retry_later");
    server.stop();
    insta::assert_snapshot!("deliveries_show_retry_later", shown(&app, &db, &later));

    // abandoned and diverged: two runs parked by Stripe's 500 at step 2.
    let server = dev_at(&app, &db, "stripe_down");
    let mut parked: Vec<String> = Vec::new();
    for key in ["order-4", "order-5"] {
        assert_eq!(post(&server, key).0, 503);
        assert_eq!(post(&server, key).0, 500);
        let new: Vec<String> = listed(&app, &db)
            .iter()
            .filter(|d| d["state"] == "outcome_unknown")
            .filter_map(|d| d["id"].as_str().map(str::to_string))
            .filter(|id| !parked.contains(id))
            .collect();
        assert_eq!(new.len(), 1, "{new:?}");
        parked.extend(new);
    }
    server.stop();
    let done = jadpo_at(
        &app,
        &db,
        &[
            "deliveries",
            "abandon",
            &parked[0],
            "--reason",
            "tidied up in Stripe",
        ],
    );
    assert_eq!(done.status.code(), Some(0), "{}", text(&done));
    insta::assert_snapshot!("deliveries_show_abandoned", shown(&app, &db, &parked[0]));

    // The next build sends another customer's email at step 1: the
    // retried record no longer matches it and is held.
    let retried = jadpo_at(
        &app,
        &db,
        &["deliveries", "retry", &parked[1], "--not-done"],
    );
    assert_eq!(retried.status.code(), Some(0), "{}", text(&retried));
    edit(
        &app.join("src/subscribe.jadpo"),
        "stripe.CustomerCreate { email: request.email }",
        "stripe.CustomerCreate { email: \"billing@example.com\" }",
    );
    let server = dev_at(&app, &db, "dev");
    let _ = post(&server, "order-5");
    let diverged = ended(&app, &db, "subscribe", "diverged");
    server.stop();
    assert_eq!(diverged, parked[1]);
    insta::assert_snapshot!("deliveries_show_diverged", shown(&app, &db, &diverged));
}

/// The scrape of `/metrics`.
fn scrape(server: &crate::server_support::Dev) -> String {
    let (status, text) = server
        .request("GET", "/metrics", &[], "")
        .unwrap_or_else(|| panic!("no answer"));
    assert_eq!(status, 200, "{text}");
    text
}

#[test]
fn the_alert_fires_after_alert_after_on_a_record_no_operator_holds() {
    let dir = scratch("operators-alert-after");
    let app = app(&dir);
    let db = dir.join("dev.sqlite");
    // `subscribe` ends retry-later at step 2: a record, no operator item.
    let server = dev_with(&app, &db, "no_attach", &["--alert-after", "1s"]);
    assert_eq!(post(&server, "order-1").0, 503);
    std::thread::sleep(Duration::from_millis(1500));
    let text = scrape(&server);
    server.stop();
    assert!(
        text.contains("jadpo_alert{alert=\"unfinished\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("jadpo_operator_items{outcome=\"outcome_unknown\"} 0"),
        "{text}"
    );
    // Each send is timed by operation and result; the schedule's tick was
    // claimed from its queue.
    assert!(
        text.contains("jadpo_step_duration_seconds_count{operation=\"stripe.customers.create\",result=\"answered\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("jadpo_step_duration_seconds_count{operation=\"stripe.payment_methods.attach\",result=\"unavailable\"}"),
        "{text}"
    );
    assert!(
        text.contains("jadpo_delivery_lag_seconds_count{queue=\"default\"} 1"),
        "{text}"
    );

    // The same record under the default hour does not fire.
    let server = dev_at(&app, &db, "no_attach");
    let text = scrape(&server);
    server.stop();
    assert!(
        text.contains("jadpo_alert{alert=\"unfinished\"} 0"),
        "{text}"
    );
}

#[test]
fn keep_completed_prunes_completed_deliveries_after_its_duration() {
    let dir = scratch("operators-keep-completed");
    let app = app(&dir);
    let db = dir.join("dev.sqlite");
    let server = dev_at(&app, &db, "dev");
    assert_eq!(post(&server, "order-1").0, 200);
    server.stop();
    let completed = |db: &Path| {
        listed(&app, db)
            .iter()
            .filter(|d| d["action"] == "subscribe" && d["state"] == "completed")
            .count()
    };
    assert_eq!(completed(&db), 1);
    // Kept for the default 24 h across a restart...
    let server = dev_at(&app, &db, "dev");
    std::thread::sleep(Duration::from_millis(1200));
    server.stop();
    assert_eq!(completed(&db), 1);
    // ...and pruned by the maintenance role once older than 1 s.
    let server = dev_with(&app, &db, "dev", &["--keep-completed", "1s"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while completed(&db) > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    server.stop();
    assert_eq!(completed(&db), 0);
}

#[test]
fn a_reload_that_strands_a_parked_run_says_so() {
    let dir = scratch("operators-reload");
    let app = app(&dir);
    let db = dir.join("dev.sqlite");
    let server = dev_with(&app, &db, "stripe_down", &["reload"]);
    assert_eq!(post(&server, "order-1").0, 503);
    assert_eq!(post(&server, "order-1").0, 500);
    let parked = ended(&app, &db, "subscribe", "outcome_unknown");
    // The next build makes a second customer before attaching the card:
    // the record's step 2 (`payment_methods.attach`) is no step there.
    edit(
        &app.join("src/subscribe.jadpo"),
        "    attempt stripe.payment_methods.attach(",
        "    attempt stripe.customers.create(stripe.CustomerCreate { email: request.email })\n    attempt stripe.payment_methods.attach(",
    );
    let said = server.wait_for("as diverged", 20);
    let all = server.stop_with_lines();
    let said = said.unwrap_or_else(|| panic!("no warning about the stranded record:\n{all}"));
    let text = said.join("\n");
    assert!(
        text.contains("holds 1 unfinished record as diverged"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "{parked}  subscribe: step 2 (`stripe.payment_methods.attach`) is no step there in the build"
        )),
        "{text}"
    );
}

/// A route's commit that stages an event wakes this process's dispatcher:
/// with its poll set to 10 minutes, the subscriber's delivery still runs
/// at once; and `jadpo dev` stops promptly with its default lease.
#[test]
fn a_routes_event_starts_its_subscriber_at_once() {
    let dir = scratch("operators-route-wakes");
    let app = app(&dir);
    let db = dir.join("dev.sqlite");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_jadpo"));
    cmd.arg("dev")
        .arg(&app)
        .args(["--listen", "127.0.0.1:0", "--no-reload", "--format", "json"])
        .args(["--fakes", "dev", "--db"])
        .arg(&db)
        .env("JADPO_API_KEYS", crate::server_support::KEYS)
        .env("JADPO_TEST_POLL_MS", "600000")
        .env_remove("JADPO_CRASH_AT");
    let server = crate::server_support::spawn(cmd).unwrap_or_else(|e| panic!("{e}"));
    // Let the start's claims (the schedule's tick) pass.
    std::thread::sleep(Duration::from_millis(500));
    let (status, body) = server
        .request("POST", "/subscriptions/requests", &[], BODY)
        .unwrap_or_else(|| panic!("no answer"));
    assert_eq!(status, 202, "{body}");
    let ran = server.wait_for("subscribe_requested", 10);
    // With the default 30 s lease, nothing running, a stop is prompt (the
    // heartbeat thread slept a third of a lease: 10 s).
    let stopping = Instant::now();
    server.stop();
    assert!(ran.is_some(), "the subscriber's delivery did not run");
    assert!(
        stopping.elapsed() < Duration::from_secs(5),
        "jadpo dev took {:?} to stop",
        stopping.elapsed()
    );
}
