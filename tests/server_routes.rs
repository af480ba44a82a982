//! Routes over HTTP (design `server.md` section 16) on `jadpo dev`: every
//! bad request is a clear problem+json answer that stores nothing; a key
//! replays its stored answer byte for byte, refuses another body, and is
//! in use while its run's lease lives.

use jadpo_compiler::load::FsLoader;
use jadpo_compiler::resolve::Lowering;
use jadpo_runtime::store::schema::Schema;
use jadpo_runtime::store::{Queue, Rows};
use jadpo_server::store::sqlite::{Options, SqliteStore};

use crate::server_support::{scratch, start, BILLING, BODY};

fn problem(answer: &(u16, String, String), status: u16, code: &str) -> serde_json::Value {
    let (got, head, body) = answer;
    assert_eq!(*got, status, "{head}\n{body}");
    assert!(
        head.contains("content-type: application/problem+json"),
        "{head}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"));
    assert_eq!(doc["code"], code, "{body}");
    assert_eq!(doc["status"], status, "{body}");
    assert_eq!(doc["type"], "about:blank", "{body}");
    assert!(
        doc["title"].as_str().is_some_and(|t| !t.is_empty()),
        "{body}"
    );
    doc
}

fn post(path: &str, headers: &[(&str, &str)], content_type: &str, body: &[u8]) -> Vec<u8> {
    crate::server_support::request_bytes("POST", path, headers, content_type, body)
}

#[test]
fn every_bad_request_is_a_problem_that_stores_nothing() {
    let dir = scratch("routes-bad");
    let db = dir.join("dev.sqlite");
    let dev = start(&db, None);
    let json = "application/json";
    let key = [("idempotency-key", "k-bad")];
    let send = |bytes: Vec<u8>| dev.raw(&bytes).unwrap_or_else(|| panic!("no answer"));

    problem(
        &send(post("/subscriptions", &[], json, BODY.as_bytes())),
        400,
        "idempotency_key_missing",
    );
    problem(
        &send(post("/subscriptions", &key, json, b"{\"email\":")),
        400,
        "malformed_json",
    );
    let unknown = br#"{"email":"ada@example.com","price":"price_basic","payment_method":"pm_1","coupon":"x"}"#;
    let doc = problem(
        &send(post("/subscriptions", &key, json, unknown)),
        400,
        "invalid_request",
    );
    assert_eq!(doc["errors"][0]["pointer"], "/coupon", "{doc}");
    let bad_email = br#"{"email":"not an address","price":"price_basic","payment_method":"pm_1"}"#;
    let doc = problem(
        &send(post("/subscriptions", &key, json, bad_email)),
        422,
        "invalid_value",
    );
    assert_eq!(doc["errors"][0]["pointer"], "/email", "{doc}");
    let missing = br#"{"email":"ada@example.com"}"#;
    let doc = problem(
        &send(post("/subscriptions", &key, json, missing)),
        422,
        "invalid_value",
    );
    let pointers: Vec<&str> = doc["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["pointer"].as_str())
        .collect();
    assert_eq!(pointers, vec!["/price", "/payment_method"], "{doc}");
    problem(
        &send(post("/subscriptions", &key, "text/plain", BODY.as_bytes())),
        415,
        "unsupported_media_type",
    );
    let big = vec![b' '; 2 * 1024 * 1024];
    problem(
        &send(post("/subscriptions", &key, json, &big)),
        413,
        "body_too_large",
    );
    let long_key = "k".repeat(300);
    let long = [("idempotency-key", long_key.as_str())];
    problem(
        &send(post("/subscriptions", &long, json, BODY.as_bytes())),
        400,
        "idempotency_key_invalid",
    );
    let id = "x".repeat(300);
    let get = format!(
        "GET /subscriptions/{id} HTTP/1.1\r\nhost: x\r\nconnection: close\r\nauthorization: Bearer test-token\r\n\r\n"
    );
    let doc = problem(&send(get.into_bytes()), 400, "invalid_path");
    assert_eq!(doc["errors"][0]["pointer"], "/path/id", "{doc}");
    let get = "GET /subscriptions/sub_1 HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n";
    problem(&send(get.as_bytes().to_vec()), 401, "unauthorized");
    let nowhere = "GET /nowhere HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n";
    problem(&send(nowhere.as_bytes().to_vec()), 404, "not_found");
    let wrong = "DELETE /subscriptions HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n";
    let answer = send(wrong.as_bytes().to_vec());
    problem(&answer, 405, "method_not_allowed");
    assert!(answer.1.contains("allow: post"), "{}", answer.1);
    dev.stop();

    // Nothing was stored: no rows, no events, no effects; and the key the
    // bad requests carried is still free.
    let compiled = jadpo_compiler::compile_with(&FsLoader, BILLING, Lowering::Code);
    let program = compiled
        .program
        .unwrap_or_else(|| panic!("billing compiles"));
    let schema = Schema::of(&program, "primary", "billing");
    let options = Options {
        exclusive: false,
        ..Options::default()
    };
    let store = SqliteStore::open(&db, schema, options).unwrap_or_else(|e| panic!("{e}"));
    for i in 0..program.entities.len() {
        let e = jadpo_compiler::ir::EntityId(i as u32);
        assert!(store.select(e, &[]).unwrap_or_default().is_empty());
    }
    assert!(store.events(10).unwrap_or_default().is_empty());
    drop(store);
    let dev = start(&db, None);
    let (status, body) = dev
        .request("POST", "/subscriptions", &key, BODY)
        .unwrap_or_else(|| panic!("no answer"));
    assert_eq!((status, body.as_str()), (200, "\"sub_1\""));
    dev.stop();
}

#[test]
fn a_key_replays_its_answer_refuses_another_body_and_is_in_use_while_its_run_lives() {
    let dir = scratch("routes-keys");
    let db = dir.join("dev.sqlite");
    let dev = start(&db, None);
    let key = [("idempotency-key", "k-1")];
    let first = dev
        .raw(&post(
            "/subscriptions",
            &key,
            "application/json",
            BODY.as_bytes(),
        ))
        .unwrap_or_else(|| panic!("no answer"));
    let again = dev
        .raw(&post(
            "/subscriptions",
            &key,
            "application/json",
            BODY.as_bytes(),
        ))
        .unwrap_or_else(|| panic!("no answer"));
    assert_eq!(first.0, 200);
    assert_eq!((again.0, &again.2), (first.0, &first.2), "byte for byte");
    assert!(again.1.contains("idempotent-replayed: true"), "{}", again.1);
    assert!(!first.1.contains("idempotent-replayed"), "{}", first.1);
    let other = br#"{"email":"bob@example.com","price":"price_basic","payment_method":"pm_1"}"#;
    let reused = dev
        .raw(&post("/subscriptions", &key, "application/json", other))
        .unwrap_or_else(|| panic!("no answer"));
    problem(&reused, 422, "idempotency_key_reused");
    dev.stop();

    // A run killed mid-way keeps its lease (30 s here): the retry is told
    // to wait, not run a second time beside it.
    let dir = scratch("routes-in-use");
    let db = dir.join("dev.sqlite");
    let mut dev = crate::server_support::start_with(&db, Some("subscribe:2:before_send"), "30");
    let _ = dev.request(
        "POST",
        "/subscriptions",
        &[("idempotency-key", "k-2")],
        BODY,
    );
    assert!(dev.died(), "the crash hook did not strike");
    let dev = crate::server_support::start_with(&db, None, "30");
    let busy = dev
        .raw(&post(
            "/subscriptions",
            &[("idempotency-key", "k-2")],
            "application/json",
            BODY.as_bytes(),
        ))
        .unwrap_or_else(|| panic!("no answer"));
    problem(&busy, 409, "idempotency_key_in_use");
    assert!(busy.1.contains("retry-after: 1"), "{}", busy.1);
    dev.stop();
}
