//! Postgres's own behaviour: an unreachable server is named, two
//! processes share one store (claims never overlap, a commit's deliveries
//! wake the other's dispatcher), a store set up by a newer jadpo is
//! refused, a store goes on after its connections were ended. The
//! conformance suite covers the rest.

use std::collections::BTreeSet;
use std::sync::Arc;

use jadpo_runtime::store::schema::Schema;
use jadpo_runtime::store::{ClaimRequest, ErrorKind, Store};
use jadpo_server::store::{open, Apply, OpenOptions};

use crate::support::*;

fn store(url: &str, app: &str) -> Arc<dyn Store> {
    let schema = Schema::of(program(), "primary", app);
    open(url, schema, OpenOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn an_unreachable_server_is_named() {
    let schema = Schema::of(program(), "primary", "shop");
    let started = std::time::Instant::now();
    let url = "postgresql:///postgres?host=/nonexistent/jadpo-socket&user=nobody";
    let Err(e) = open(url, schema, OpenOptions::default()) else {
        panic!("opened a server that does not exist");
    };
    assert_eq!(e.kind, ErrorKind::Unreachable, "{e}");
    assert!(
        e.to_string()
            .starts_with("store `primary` cannot be reached"),
        "{e}"
    );
    assert!(started.elapsed().as_secs() < 10);
}

#[test]
fn two_processes_never_claim_one_delivery() {
    let Some(url) = postgres_url() else { return };
    let app = format!("t{}_shared", std::process::id());
    let (a, b) = (store(&url, &app), store(&url, &app));
    let past = later(now(), -1000);
    let ds: Vec<_> = (0..200)
        .map(|i| delivery(&format!("d{i:03}"), "default", 0, past))
        .collect();
    a.enqueue(&ds, now()).unwrap();
    let claimed: Vec<Vec<String>> = std::thread::scope(|s| {
        let handles: Vec<_> = [a.clone(), b.clone(), a.clone(), b.clone()]
            .into_iter()
            .enumerate()
            .map(|(i, st)| {
                s.spawn(move || {
                    let mut got = Vec::new();
                    for _ in 0..100 {
                        let batch = st
                            .claim(&ClaimRequest {
                                queues: vec![],
                                max: 7,
                                lease_ms: 60_000,
                                runner: format!("r{i}"),
                                now: now(),
                            })
                            .unwrap();
                        if batch.is_empty() {
                            break;
                        }
                        got.extend(batch.into_iter().map(|c| c.delivery.id));
                    }
                    got
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let all: Vec<&String> = claimed.iter().flatten().collect();
    let unique: BTreeSet<&String> = all.iter().copied().collect();
    assert_eq!(all.len(), 200, "every delivery claimed once");
    assert_eq!(unique.len(), 200);
}

#[test]
fn a_store_set_up_by_a_newer_jadpo_is_refused() {
    let Some(url) = postgres_url() else { return };
    let app = format!("t{}_newer", std::process::id());
    drop(store(&url, &app));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        client
            .batch_execute(&format!(
                "INSERT INTO \"jadpo_{app}\".\"primary__jadpo_migration\" (version, applied_at) VALUES (999, '2030-01-01T00:00:00Z')"
            ))
            .await
            .unwrap();
    });
    let schema = Schema::of(program(), "primary", &app);
    let Err(e) = open(
        &url,
        schema,
        OpenOptions {
            apply: Apply::Auto,
            ..OpenOptions::default()
        },
    ) else {
        panic!("opened a newer store");
    };
    assert_eq!(e.kind, ErrorKind::NewerSchema, "{e}");
}

/// Design section 18: one process at a time leads the schedules (the
/// advisory lock on a connection of its own); it keeps leading while it
/// lives, and another takes over once it is gone.
#[test]
fn one_process_leads_the_schedules_and_another_takes_over() {
    let Some(url) = postgres_url() else { return };
    let app = format!("t{}_leader", std::process::id());
    let (a, b) = (store(&url, &app), store(&url, &app));
    assert!(a.lead_schedules(), "the first to ask leads");
    assert!(!b.lead_schedules(), "a second leader while the first lives");
    assert!(a.lead_schedules(), "the leader keeps leading");
    assert!(!b.lead_schedules());
    // Another app's schedules have a leader of their own.
    let other = store(&url, &format!("t{}_other", std::process::id()));
    assert!(other.lead_schedules());
    drop(a);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !b.lead_schedules() {
        assert!(
            std::time::Instant::now() < deadline,
            "no process took the lead within 10 s of the leader's end"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// The notices `store` LISTENs to, one message each.
fn listening(store: &dyn Store) -> std::sync::mpsc::Receiver<()> {
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    store
        .listen(Arc::new(move || {
            let _ = tx.send(());
        }))
        .unwrap();
    rx
}

/// Whether a notice comes within 100 ms of one of up to 50 deliveries
/// `by` enqueues (ids `from` and a count).
fn noticed(by: &dyn Store, notices: &std::sync::mpsc::Receiver<()>, from: &str) -> bool {
    let past = later(now(), -1000);
    (0..50).any(|i| {
        let d = delivery(&format!("{from}{i}"), "default", 0, past);
        by.enqueue(&[d], now()).unwrap();
        notices
            .recv_timeout(std::time::Duration::from_millis(100))
            .is_ok()
    })
}

#[test]
fn a_commit_that_inserts_deliveries_wakes_the_other_processes() {
    let Some(url) = postgres_url() else { return };
    let app = format!("t{}_notify", std::process::id());
    let (a, b) = (store(&url, &app), store(&url, &app));
    let rx = listening(&*a);
    let wait = std::time::Duration::from_millis(100);
    // The LISTEN starts on a connection of its own: an enqueue's notice
    // shows once it has (at most 5 s).
    let past = later(now(), -1000);
    let listening = noticed(&*b, &rx, "probe");
    assert!(listening, "no notice of an enqueue");
    b.enqueue(&[delivery("d1", "default", 0, past)], now())
        .unwrap();
    let lease = b.take("d1", 60_000, now()).unwrap().unwrap();
    std::thread::sleep(wait);
    while rx.try_recv().is_ok() {}
    let mut c = commit_of("d1", Vec::new());
    let mut mail = delivery("d_e1_mail", "default", 0, past);
    mail.subscriber = Some("mail".into());
    c.follow_ups = vec![jadpo_runtime::store::Follow {
        id: "e1".into(),
        event: "Paid".into(),
        payload: rec(&[]),
        queue: "default".into(),
        priority: 0,
        max_attempts: 5,
        tags: Vec::new(),
        run_at: past,
        metadata: rec(&[]),
        unique: None,
        deliveries: vec![mail],
    }];
    b.commit(&c, &lease).unwrap();
    assert!(
        rx.recv_timeout(std::time::Duration::from_secs(5)).is_ok(),
        "the commit's delivery woke no other process"
    );
}

/// Ends every connection of `app`'s store `primary` (as a restart would),
/// from a connection of its own; other tests' connections are left.
fn end_connections(url: &str, app: &str) {
    let name = jadpo_server::store::postgres::application_name(app, "primary");
    let ended = admin(
        url,
        &format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name = '{name}' AND pid <> pg_backend_pid()"
        ),
    );
    assert!(ended > 0, "no connection to end");
}

/// A store whose connections the server ended (a restart) goes on: each
/// operation after it gets a connection that answers, notices come again
/// once the LISTEN connection is open again, and the schedules' leader
/// takes its lock again.
#[test]
fn a_store_whose_connections_the_server_ended_goes_on() {
    let Some(url) = postgres_url() else { return };
    let app = format!("t{}_ended", std::process::id());
    let (a, b) = (store(&url, &app), store(&url, &app));
    let rx = listening(&*a);
    let past = later(now(), -1000);
    let wait = std::time::Duration::from_millis(100);
    let notices = |from: &str| noticed(&*b, &rx, from);
    assert!(notices("before"), "no notice before");
    assert!(a.lead_schedules(), "alone, it leads the schedules");
    // Every pooled connection is idle and open.
    a.delivery("before0").unwrap();
    end_connections(&url, &app);
    std::thread::sleep(std::time::Duration::from_millis(200));
    // Each operation runs on a connection of its own: none fails.
    for i in 0..20 {
        let d = delivery(&format!("after{i}"), "default", 0, past);
        a.enqueue(&[d], now())
            .unwrap_or_else(|e| panic!("operation {i} after the end: {e}"));
    }
    let lease = a.take("after0", 60_000, now()).unwrap().unwrap();
    a.commit(&commit_of("after0", Vec::new()), &lease).unwrap();
    // The LISTEN connection opens again, and notices come again.
    while rx.try_recv().is_ok() {}
    assert!(notices("again"), "no notice after the connections ended");
    // The schedules' leader takes its lock again on a new connection.
    let leads = (0..30).any(|_| {
        std::thread::sleep(wait);
        a.lead_schedules()
    });
    assert!(leads, "it no longer leads the schedules");
}

/// Runs `sql` on its own connection; how many rows it answered.
fn admin(url: &str, sql: &str) -> usize {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        let driver = tokio::spawn(connection);
        let answered = client.simple_query(sql).await.unwrap();
        drop(client);
        let _ = driver.await;
        answered
            .iter()
            .filter(|m| matches!(m, tokio_postgres::SimpleQueryMessage::Row(_)))
            .count()
    })
}

/// A commit's last statements go with its `COMMIT`: when one of them
/// fails, the whole commit is rolled back (its writes too, sent in the
/// round trip before), the lease still holds, and the store goes on: the
/// same commit lands once the cause is gone.
#[test]
fn a_commit_whose_last_statements_fail_keeps_nothing() {
    use jadpo_runtime::store::{DeliveryState, Write};
    let Some(url) = postgres_url() else { return };
    let app = format!("t{}_last", std::process::id());
    let s = store(&url, &app);
    let past = later(now(), -1000);
    s.enqueue(&[delivery("d_bad", "default", 0, past)], now())
        .unwrap();
    let lease = s.take("d_bad", 60_000, now()).unwrap().expect("taken");
    let handled = format!("\"jadpo_{app}\".\"primary__jadpo_handled\"");
    admin(
        &url,
        &format!("ALTER TABLE {handled} ADD CONSTRAINT no_bad CHECK (delivery <> 'd_bad')"),
    );
    let write = Write::Create {
        entity: entity("Counter"),
        key: jadpo_runtime::value::Value::Int(1).canonical(),
        value: rec(&[
            ("n", jadpo_runtime::value::Value::Int(1)),
            ("label", text("c1")),
        ]),
    };
    let commit = commit_of("d_bad", vec![write]);
    let failed = s.commit(&commit, &lease);
    assert!(failed.is_err(), "{failed:?}");
    assert!(s.select(entity("Counter"), &[]).unwrap().is_empty());
    assert!(!s.handled("d_bad").unwrap());
    let row = s.delivery("d_bad").unwrap().expect("the row");
    assert_eq!(row.state, DeliveryState::Running);
    admin(
        &url,
        &format!("ALTER TABLE {handled} DROP CONSTRAINT no_bad"),
    );
    s.commit(&commit, &lease).unwrap();
    assert_eq!(s.select(entity("Counter"), &[]).unwrap().len(), 1);
    assert!(s.handled("d_bad").unwrap());
}

/// A new Idempotency-Key's row and its delivery commit together: when the
/// delivery cannot be inserted (its id taken, which 128 random bits never
/// give), the key is not left claimed, and the next request claims it.
#[test]
fn a_new_keys_row_and_delivery_commit_together() {
    use jadpo_runtime::store::KeyClaim;
    let Some(url) = postgres_url() else { return };
    let app = format!("t{}_newkey", std::process::id());
    let s = store(&url, &app);
    s.enqueue(&[delivery("r_taken", "default", 0, now())], now())
        .unwrap();
    let refused = s.claim_key(&key_request("k1", 1, "r_taken"));
    assert!(refused.is_err(), "{refused:?}");
    let again = s.claim_key(&key_request("k1", 1, "r_fresh")).unwrap();
    assert!(matches!(again, KeyClaim::New { .. }), "{again:?}");
    let row = s.delivery("r_fresh").unwrap().expect("its delivery");
    assert_eq!(row.lease_generation, 1);
}
