//! One behaviour for every store: each case runs on MemStore (the test
//! runner's), SQLite in a temporary file, and Postgres when
//! `JADPO_TEST_PG` names a server. A store that differs fails here with
//! its name in the message.

use std::sync::Arc;

use jadpo_compiler::intern::Name;
use jadpo_runtime::store::{
    ClaimRequest, CommitError, DeliveryState, Fenced, Follow, KeyClaim, Lease, Next, Source, Store,
    StoredResponse, Write, ROUTE_QUEUE,
};
use jadpo_runtime::value::Value;

use crate::support::*;

pub(crate) fn kinds() -> Vec<Kind> {
    let mut out = vec![Kind::Mem, Kind::Sqlite];
    if let Some(url) = postgres_url() {
        out.push(Kind::Postgres(url));
    }
    out
}

/// Runs `case` on every store, naming the store when it fails.
fn each(case: &str, check: impl Fn(&str, Arc<dyn Store>)) {
    for kind in kinds() {
        let store = kind.open(case);
        let label = format!("{case} on {}", kind.label());
        check(&label, store);
    }
}

fn claim_all(store: &dyn Store, queues: &[&str], max: usize, lease_ms: u64) -> Vec<String> {
    store
        .claim(&ClaimRequest {
            queues: queues.iter().map(|q| q.to_string()).collect(),
            max,
            lease_ms,
            runner: "r1".into(),
            now: now(),
        })
        .expect("a claim")
        .into_iter()
        .map(|c| c.delivery.id)
        .collect()
}

/// What `runner` claims now with leases of `lease_ms`, one at most.
fn claim_one(store: &dyn Store, runner: &str, lease_ms: u64) -> Vec<jadpo_runtime::store::Claimed> {
    store
        .claim(&ClaimRequest {
            queues: vec![],
            max: 1,
            lease_ms,
            runner: runner.into(),
            now: now(),
        })
        .expect("a claim")
}

/// Enqueues `id` and takes its lease.
fn leased(store: &dyn Store, id: &str) -> Lease {
    let past = later(now(), -1000);
    store
        .enqueue(&[delivery(id, "default", 0, past)], now())
        .expect("enqueued");
    store
        .take(id, 60_000, now())
        .expect("taken")
        .expect("a delivery to take")
}

fn key(id: &str) -> Vec<u8> {
    text(id).canonical()
}

#[test]
fn a_record_reads_back_as_it_was_written() {
    each("records", |label, store| {
        let lease = leased(&*store, "d1");
        assert_eq!(store.record("d1").unwrap(), None, "{label}");
        let rec = record();
        store.put_step("d1", &lease, &rec, &step(1, false)).unwrap();
        store.put_step("d1", &lease, &rec, &step(2, true)).unwrap();
        let got = store.record("d1").unwrap().expect("a record");
        assert_eq!(got.steps, vec![step(1, false), step(2, true)], "{label}");
        assert_eq!(
            (got.build_id.as_str(), got.mode),
            ("b1", rec.mode),
            "{label}"
        );
        assert_eq!(got.started_at, rec.started_at, "{label}");
        // Rewriting step 1 removes step 2: the later step never happened.
        store.put_step("d1", &lease, &rec, &step(1, true)).unwrap();
        let got = store.record("d1").unwrap().expect("a record");
        assert_eq!(got.steps, vec![step(1, true)], "{label}");
        store.put_step("d1", &lease, &rec, &step(2, true)).unwrap();
        store.truncate_steps("d1", &lease, 2).unwrap();
        let got = store.record("d1").unwrap().expect("a record");
        assert_eq!(got.steps.len(), 1, "{label}");
    });
}

#[test]
fn a_stale_generation_writes_nothing() {
    each("fences", |label, store| {
        let old = leased(&*store, "d1");
        let rec = record();
        store.put_step("d1", &old, &rec, &step(1, true)).unwrap();
        let new = store.take("d1", 60_000, now()).unwrap().expect("taken");
        assert!(new.generation > old.generation, "{label}");
        let lost = store.put_step("d1", &old, &rec, &step(2, true));
        assert_eq!(lost, Err(Fenced::LeaseLost), "{label}");
        assert_eq!(
            store.truncate_steps("d1", &old, 1),
            Err(Fenced::LeaseLost),
            "{label}"
        );
        let write = Write::Create {
            entity: entity("Counter"),
            key: key("c1"),
            value: rec_counter(1, "c1"),
        };
        assert_eq!(
            store.commit(&commit_of("d1", vec![write]), &old),
            Err(CommitError::LeaseLost),
            "{label}"
        );
        assert_eq!(
            store.heartbeat("d1", &old, 1000, now()),
            Err(Fenced::LeaseLost),
            "{label}"
        );
        let next = Next::Retry {
            run_at: now(),
            why: "x".into(),
            counted: true,
            steps: Vec::new(),
        };
        assert_eq!(
            store.release("d1", &old, &next, now()),
            Err(Fenced::LeaseLost),
            "{label}"
        );
        let kept = store.record("d1").unwrap().expect("a record");
        assert_eq!(kept.steps, vec![step(1, true)], "{label}: nothing written");
        assert!(
            store.select(entity("Counter"), &[]).unwrap().is_empty(),
            "{label}"
        );
        assert!(!store.handled("d1").unwrap(), "{label}");
        // The new generation writes.
        store.put_step("d1", &new, &rec, &step(2, true)).unwrap();
    });
}

fn rec_counter(n: i64, label: &str) -> Value {
    rec(&[("n", Value::Int(n)), ("label", text(label))])
}

/// Counter's key is its first field, `n`.
fn counter_key(n: i64) -> Vec<u8> {
    Value::Int(n).canonical()
}

#[test]
fn every_column_kind_reads_back_as_written() {
    each("columns", |label, store| {
        let lease = leased(&*store, "d1");
        let with_note = order_noted("o2", 8, Some("handle with care"));
        let writes = vec![
            Write::Create {
                entity: entity("Order"),
                key: key("o1"),
                value: order("o1", 7),
            },
            Write::Create {
                entity: entity("Order"),
                key: key("o2"),
                value: with_note.clone(),
            },
        ];
        store.commit(&commit_of("d1", writes), &lease).unwrap();
        let rows = store.select(entity("Order"), &[]).unwrap();
        let values: Vec<&Value> = rows.iter().map(|r| &r.value).collect();
        assert_eq!(values, vec![&order("o1", 7), &with_note], "{label}");
        assert_eq!(rows[0].key, key("o1"), "{label}");
        // Filters compare typed values.
        let paid = store
            .select(entity("Order"), &[(Name::new("paid"), Value::Bool(true))])
            .unwrap();
        assert_eq!(paid.len(), 1, "{label}");
        assert_eq!(paid[0].key, key("o2"), "{label}");
        let by_amount = store
            .select(entity("Order"), &[(Name::new("amount"), Value::Int(7))])
            .unwrap();
        assert_eq!(by_amount.len(), 1, "{label}");
        assert!(store.handled("d1").unwrap(), "{label}");
        let row = store.delivery("d1").unwrap().expect("a row");
        assert_eq!(row.state, DeliveryState::Completed, "{label}");
    });
}

#[test]
fn a_commit_checks_the_versions_it_read_all_or_nothing() {
    each("versions", |label, store| {
        let lease = leased(&*store, "d1");
        let create = Write::Create {
            entity: entity("Counter"),
            key: counter_key(1),
            value: rec_counter(1, "one"),
        };
        store
            .commit(&commit_of("d1", vec![create.clone()]), &lease)
            .unwrap();
        let row = store.select(entity("Counter"), &[]).unwrap().remove(0);
        // d2 and d3 both read version v; d2 commits first.
        let l2 = leased(&*store, "d2");
        let l3 = leased(&*store, "d3");
        let update = |label: &str| Write::Update {
            entity: entity("Counter"),
            key: counter_key(1),
            version: row.version,
            value: rec_counter(1, label),
        };
        store
            .commit(&commit_of("d2", vec![update("two")]), &l2)
            .unwrap();
        // d3 also creates a second row: nothing of it lands.
        let other = Write::Create {
            entity: entity("Counter"),
            key: counter_key(2),
            value: rec_counter(2, "x"),
        };
        assert_eq!(
            store.commit(&commit_of("d3", vec![other, update("three")]), &l3),
            Err(CommitError::Conflict),
            "{label}"
        );
        let rows = store.select(entity("Counter"), &[]).unwrap();
        assert_eq!(
            rows.len(),
            1,
            "{label}: the conflicting commit wrote nothing"
        );
        assert_eq!(rows[0].value, rec_counter(1, "two"), "{label}");
        assert!(rows[0].version > row.version, "{label}");
        assert!(!store.handled("d3").unwrap(), "{label}");
        // A create over an existing key conflicts.
        let l4 = leased(&*store, "d4");
        assert_eq!(
            store.commit(&commit_of("d4", vec![create]), &l4),
            Err(CommitError::Conflict),
            "{label}"
        );
        // A delete at the current version removes the row.
        let current = store.select(entity("Counter"), &[]).unwrap().remove(0);
        let delete = Write::Delete {
            entity: entity("Counter"),
            key: counter_key(1),
            version: current.version,
        };
        store.commit(&commit_of("d4", vec![delete]), &l4).unwrap();
        assert!(
            store.select(entity("Counter"), &[]).unwrap().is_empty(),
            "{label}"
        );
    });
}

#[test]
fn a_commit_removes_the_record_and_keeps_the_steps_on_the_row() {
    each("commit-record", |label, store| {
        let lease = leased(&*store, "d1");
        store
            .put_step("d1", &lease, &record(), &step(1, true))
            .unwrap();
        let mut c = commit_of("d1", Vec::new());
        let summary = step(1, true);
        c.steps = vec![jadpo_runtime::store::StepSummary {
            position: 1,
            operation: summary.operation.clone(),
            state: "answered".into(),
            sent_at: summary.sent_at,
            key: summary.key.clone(),
        }];
        store.commit(&c, &lease).unwrap();
        assert_eq!(store.record("d1").unwrap(), None, "{label}");
        let row = store.delivery("d1").unwrap().expect("a row");
        assert_eq!(row.steps, c.steps, "{label}");
        assert!(row.ended_at.is_some(), "{label}");
        assert_eq!(row.lease_until, None, "{label}");
    });
}

fn follow(id: &str, unique: Option<&str>, subscribers: &[&str]) -> Follow {
    let at = later(now(), -1000);
    Follow {
        id: id.to_string(),
        event: "Paid".into(),
        payload: rec(&[("order", text("o1"))]),
        queue: "default".into(),
        priority: 0,
        max_attempts: 5,
        tags: vec!["billing".into()],
        run_at: at,
        metadata: rec(&[]),
        unique: unique.map(|k| (k.to_string(), blocking())),
        deliveries: subscribers
            .iter()
            .map(|s| {
                let mut d = delivery(&format!("d_{id}_{s}"), "default", 0, at);
                d.source = Source::Event { event: id.into() };
                d.subscriber = Some(s.to_string());
                d.unique = unique.map(|k| (k.to_string(), blocking()));
                d
            })
            .collect(),
    }
}

#[test]
fn a_commit_inserts_its_events_with_a_delivery_per_subscriber() {
    each("events", |label, store| {
        let lease = leased(&*store, "d1");
        let mut c = commit_of("d1", Vec::new());
        c.follow_ups = vec![follow("e1", None, &["mail", "ledger"])];
        store.commit(&c, &lease).unwrap();
        let events = store.events(10).unwrap();
        assert_eq!(events.len(), 1, "{label}");
        let mut want = c.follow_ups[0].clone();
        want.deliveries.sort_by(|a, b| a.id.cmp(&b.id));
        assert_eq!(events[0].follow, want, "{label}");
        assert_eq!(events[0].emitted_by, "d1", "{label}");
        for s in ["mail", "ledger"] {
            let d = store
                .delivery(&format!("d_e1_{s}"))
                .unwrap()
                .expect("a delivery");
            assert_eq!(d.state, DeliveryState::Available, "{label}");
            assert_eq!(d.subscriber.as_deref(), Some(s), "{label}");
            assert_eq!(d.source, Source::Event { event: "e1".into() }, "{label}");
        }
    });
}

#[test]
fn a_unique_follow_up_is_skipped_while_an_earlier_one_blocks() {
    each("unique", |label, store| {
        let l1 = leased(&*store, "d1");
        let mut c = commit_of("d1", Vec::new());
        // Two of one key in one commit: the first staged wins.
        c.follow_ups = vec![
            follow("e1", Some("k"), &["mail"]),
            follow("e2", Some("k"), &["mail"]),
        ];
        store.commit(&c, &l1).unwrap();
        let l2 = leased(&*store, "d2");
        let mut c2 = commit_of("d2", Vec::new());
        c2.follow_ups = vec![follow("e3", Some("k"), &["mail"])];
        store.commit(&c2, &l2).unwrap();
        let ids: Vec<String> = store
            .events(10)
            .unwrap()
            .into_iter()
            .map(|e| e.follow.id)
            .collect();
        assert_eq!(ids, vec!["e1"], "{label}");
        // e1's delivery ends failed: no longer blocking, the key is free.
        let claimed = store
            .take("d_e1_mail", 60_000, now())
            .unwrap()
            .expect("taken");
        let end = Next::End {
            state: DeliveryState::Failed,
            why: "declined".into(),
            steps: Vec::new(),
            response: None,
        };
        store.release("d_e1_mail", &claimed, &end, now()).unwrap();
        let l3 = leased(&*store, "d3");
        let mut c3 = commit_of("d3", Vec::new());
        c3.follow_ups = vec![follow("e4", Some("k"), &["mail"])];
        store.commit(&c3, &l3).unwrap();
        let ids: Vec<String> = store
            .events(10)
            .unwrap()
            .into_iter()
            .map(|e| e.follow.id)
            .collect();
        assert_eq!(ids, vec!["e1", "e4"], "{label}");
    });
}

/// A follow-up of `key` that blocks while its delivery is in `states`.
fn follow_blocking(id: &str, key: &str, states: &[DeliveryState]) -> Follow {
    let mut f = follow(id, Some(key), &["mail"]);
    f.unique = Some((key.into(), states.to_vec()));
    for d in &mut f.deliveries {
        d.unique = f.unique.clone();
    }
    f
}

/// Commits `id` (enqueued and taken) with `follow` staged; the events the
/// store keeps afterwards.
fn commit_following(store: &dyn Store, id: &str, follow: Follow) -> Vec<String> {
    let lease = leased(store, id);
    let mut c = commit_of(id, Vec::new());
    c.follow_ups = vec![follow];
    store.commit(&c, &lease).unwrap();
    store
        .events(10)
        .unwrap()
        .into_iter()
        .map(|e| e.follow.id)
        .collect()
}

#[test]
fn a_unique_claim_is_given_up_when_its_delivery_is_claimed_or_commits() {
    use DeliveryState::{Available, Running, Scheduled};
    each("unique-moves", |label, store| {
        // Blocking while waiting only: the dispatcher's claim gives it up.
        let waiting = [Scheduled, Available];
        commit_following(&*store, "d1", follow_blocking("e1", "w", &waiting));
        let kept = commit_following(&*store, "d2", follow_blocking("e2", "w", &waiting));
        assert_eq!(kept, ["e1"], "{label}");
        let claimed = claim_one(&*store, "r1", 60_000);
        assert_eq!(claimed[0].delivery.id, "d_e1_mail", "{label}");
        let kept = commit_following(&*store, "d3", follow_blocking("e3", "w", &waiting));
        assert_eq!(kept, ["e1", "e3"], "{label}: the claim kept blocking");
        // Blocking while waiting or running: the commit gives it up.
        let started = [Scheduled, Available, Running];
        commit_following(&*store, "d4", follow_blocking("e4", "s", &started));
        let claims = store
            .claim(&ClaimRequest {
                queues: vec![],
                max: 5,
                lease_ms: 60_000,
                runner: "r2".into(),
                now: now(),
            })
            .unwrap();
        let e4 = claims
            .iter()
            .find(|c| c.delivery.id == "d_e4_mail")
            .unwrap_or_else(|| panic!("{label}: e4's delivery was not claimed"));
        let kept = commit_following(&*store, "d5", follow_blocking("e5", "s", &started));
        assert_eq!(kept, ["e1", "e3", "e4"], "{label}: running blocks");
        store
            .commit(&commit_of("d_e4_mail", Vec::new()), &e4.lease)
            .unwrap();
        let kept = commit_following(&*store, "d6", follow_blocking("e6", "s", &started));
        assert_eq!(
            kept,
            ["e1", "e3", "e4", "e6"],
            "{label}: the commit kept blocking"
        );
    });
}

/// A route run whose delivery has a unique claim counts it from its
/// key's claim (it starts running) until its commit.
#[test]
fn a_route_runs_unique_claim_holds_from_its_key_to_its_commit() {
    use DeliveryState::{Available, Running};
    each("route-unique", |label, store| {
        let mut request = key_request("k1", 1, "r_1");
        request.delivery.unique = Some(("u".into(), vec![Running]));
        let claimed = store.claim_key(&request).unwrap();
        let KeyClaim::New { lease } = claimed else {
            panic!("{label}: {claimed:?}");
        };
        let blocking = [Available, Running];
        let kept = commit_following(&*store, "d1", follow_blocking("e1", "u", &blocking));
        assert!(
            kept.is_empty(),
            "{label}: the running route run did not block: {kept:?}"
        );
        store.commit(&commit_of("r_1", Vec::new()), &lease).unwrap();
        let kept = commit_following(&*store, "d2", follow_blocking("e2", "u", &blocking));
        assert_eq!(kept, ["e2"], "{label}: its commit kept blocking");
    });
}

#[test]
fn two_committers_of_one_unique_key_insert_one_event() {
    each("unique-race", |label, store| {
        let leases: Vec<(String, Lease)> = (0..8)
            .map(|i| {
                let id = format!("d{i}");
                let lease = leased(&*store, &id);
                (id, lease)
            })
            .collect();
        std::thread::scope(|s| {
            for (i, (id, lease)) in leases.iter().enumerate() {
                let store = store.clone();
                s.spawn(move || {
                    let mut c = commit_of(id, Vec::new());
                    c.follow_ups = vec![follow(&format!("e{i}"), Some("k"), &["mail"])];
                    store.commit(&c, lease).expect("a commit");
                });
            }
        });
        assert_eq!(store.events(20).unwrap().len(), 1, "{label}");
    });
}

#[test]
fn claims_take_due_deliveries_in_priority_run_at_id_order() {
    each("claim-order", |label, store| {
        let t = later(now(), -10_000);
        let future = later(now(), 3_600_000);
        let ds = vec![
            delivery("b", "default", 1, t),
            delivery("a", "default", 1, t),
            delivery("c", "default", 0, later(t, 5)),
            delivery("z", "default", 0, t),
            delivery("late", "default", -5, future),
            delivery("other", "mail", -9, t),
            delivery("route", ROUTE_QUEUE, -9, t),
        ];
        store.enqueue(&ds, now()).unwrap();
        // Inserting again is one delivery.
        store.enqueue(&ds[..1], now()).unwrap();
        assert_eq!(
            store.delivery("late").unwrap().unwrap().state,
            DeliveryState::Scheduled,
            "{label}"
        );
        let got = claim_all(&*store, &["default"], 3, 60_000);
        assert_eq!(got, vec!["z", "c", "a"], "{label}");
        let got = claim_all(&*store, &[], 10, 60_000);
        assert_eq!(
            got,
            vec!["other", "b"],
            "{label}: all queues but the runtime's"
        );
        assert!(claim_all(&*store, &[], 10, 60_000).is_empty(), "{label}");
        assert_eq!(
            claim_all(&*store, &[ROUTE_QUEUE], 10, 60_000),
            vec!["route"],
            "{label}"
        );
        let row = store.delivery("z").unwrap().unwrap();
        assert_eq!(
            (row.state, row.attempt, row.rescues),
            (DeliveryState::Running, 1, 0),
            "{label}"
        );
        assert_eq!(row.runner.as_deref(), Some("r1"), "{label}");
    });
}

#[test]
fn a_lapsed_lease_is_rescued_with_a_higher_generation() {
    each("rescue", |label, store| {
        store
            .enqueue(&[delivery("d1", "default", 0, later(now(), -1000))], now())
            .unwrap();
        let first = claim_one(&*store, "r1", 1);
        assert_eq!(first.len(), 1, "{label}");
        assert!(!first[0].rescued, "{label}");
        std::thread::sleep(std::time::Duration::from_millis(30));
        let second = claim_one(&*store, "r2", 60_000);
        assert_eq!(second.len(), 1, "{label}");
        assert!(second[0].rescued, "{label}");
        assert!(
            second[0].lease.generation > first[0].lease.generation,
            "{label}"
        );
        assert_eq!(
            (second[0].delivery.attempt, second[0].delivery.rescues),
            (1, 1),
            "{label}"
        );
        assert_eq!(
            store.put_step("d1", &first[0].lease, &record(), &step(1, true)),
            Err(Fenced::LeaseLost),
            "{label}"
        );
        // A live lease is not rescued.
        assert!(claim_all(&*store, &[], 1, 60_000).is_empty(), "{label}");
    });
}

#[test]
fn the_fifth_rescue_ends_the_delivery_fault() {
    each("rescues", |label, store| {
        store
            .enqueue(&[delivery("d1", "default", 0, later(now(), -1000))], now())
            .unwrap();
        let mut claimed = 0;
        for _ in 0..10 {
            claimed += claim_all(&*store, &[], 1, 1).len();
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        // One attempt and four rescues run; the fifth ends it.
        assert_eq!(claimed, 5, "{label}");
        let row = store.delivery("d1").unwrap().unwrap();
        assert_eq!(row.state, DeliveryState::Fault, "{label}");
        assert_eq!(
            row.reason.as_deref(),
            Some("its runner stopped 5 times"),
            "{label}"
        );
        let items = store.items(true).unwrap();
        assert_eq!(items.len(), 1, "{label}");
        assert_eq!(items[0].outcome, DeliveryState::Fault, "{label}");
    });
}

#[test]
fn a_release_retries_or_ends_with_an_item() {
    each("release", |label, store| {
        let lease = leased(&*store, "d1");
        let at = later(now(), 60_000);
        let retry = Next::Retry {
            run_at: at,
            why: "provider busy".into(),
            counted: true,
            steps: Vec::new(),
        };
        store.release("d1", &lease, &retry, now()).unwrap();
        let row = store.delivery("d1").unwrap().unwrap();
        assert_eq!(row.state, DeliveryState::Retryable, "{label}");
        assert_eq!(row.run_at, at, "{label}");
        assert_eq!(row.reason.as_deref(), Some("provider busy"), "{label}");
        assert_eq!(row.lease_until, None, "{label}");
        assert!(
            claim_all(&*store, &[], 5, 60_000).is_empty(),
            "{label}: not due"
        );
        assert!(store.items(false).unwrap().is_empty(), "{label}");
        let lease = store.take("d1", 60_000, now()).unwrap().unwrap();
        let end = Next::End {
            state: DeliveryState::OutcomeUnknown,
            why: "no answer".into(),
            steps: Vec::new(),
            response: None,
        };
        store.release("d1", &lease, &end, now()).unwrap();
        let row = store.delivery("d1").unwrap().unwrap();
        assert_eq!(row.state, DeliveryState::OutcomeUnknown, "{label}");
        assert!(row.ended_at.is_some(), "{label}");
        let items = store.items(true).unwrap();
        assert_eq!(items.len(), 1, "{label}");
        assert_eq!(
            (items[0].delivery.as_str(), items[0].reason.as_str()),
            ("d1", "no answer"),
            "{label}"
        );
        assert!(
            store
                .close_item("d1", "abandon by bob: refunded", now())
                .unwrap(),
            "{label}"
        );
        assert!(!store.close_item("d1", "again", now()).unwrap(), "{label}");
        assert!(store.items(true).unwrap().is_empty(), "{label}");
        let all = store.items(false).unwrap();
        assert_eq!(
            all[0].closed_by.as_deref(),
            Some("abandon by bob: refunded"),
            "{label}"
        );
    });
}

#[test]
fn an_uncounted_retry_leaves_the_attempt_count() {
    each("uncounted", |label, store| {
        store
            .enqueue(&[delivery("d1", "default", 0, later(now(), -1000))], now())
            .unwrap();
        let claimed = store
            .claim(&ClaimRequest {
                queues: vec![],
                max: 1,
                lease_ms: 60_000,
                runner: "r1".into(),
                now: now(),
            })
            .unwrap()
            .remove(0);
        assert_eq!(claimed.delivery.attempt, 1, "{label}");
        let retry = Next::Retry {
            run_at: now(),
            why: "shutting down".into(),
            counted: false,
            steps: Vec::new(),
        };
        store.release("d1", &claimed.lease, &retry, now()).unwrap();
        assert_eq!(store.delivery("d1").unwrap().unwrap().attempt, 0, "{label}");
    });
}

#[test]
fn route_keys_run_once_and_replay() {
    each("route-keys", |label, store| {
        let first = store.claim_key(&key_request("k1", 1, "r_1")).unwrap();
        let KeyClaim::New { lease } = first else {
            panic!("{label}: {first:?}");
        };
        // Its delivery is running under the claim's lease.
        let d = store.delivery("r_1").unwrap().expect("its delivery");
        assert_eq!(d.state, DeliveryState::Running, "{label}");
        assert_eq!(d.lease_generation, lease.generation, "{label}");
        assert_eq!(d.lease_until, Some(lease.until), "{label}");
        assert_eq!(
            store.claim_key(&key_request("k1", 1, "r_2")).unwrap(),
            KeyClaim::InUse,
            "{label}"
        );
        assert_eq!(
            store.claim_key(&key_request("k1", 2, "r_3")).unwrap(),
            KeyClaim::Reused,
            "{label}"
        );
        assert!(store.delivery("r_2").unwrap().is_none(), "{label}");
        // Another principal's key of the same text is its own.
        let mut other = key_request("k1", 1, "r_4");
        other.principal = "bob".into();
        assert!(
            matches!(store.claim_key(&other).unwrap(), KeyClaim::New { .. }),
            "{label}"
        );
        let response = StoredResponse {
            status: 201,
            headers: vec![("content-type".into(), "application/json".into())],
            body: vec![9, 8, 7],
        };
        let mut c = commit_of("r_1", Vec::new());
        c.response = Some(response.clone());
        store.commit(&c, &lease).unwrap();
        assert_eq!(
            store.claim_key(&key_request("k1", 1, "r_5")).unwrap(),
            KeyClaim::Replay(response),
            "{label}"
        );
    });
}

#[test]
fn an_interrupted_request_is_taken_over_by_its_retry() {
    each("route-takeover", |label, store| {
        let KeyClaim::New { lease } = store.claim_key(&key_request("k1", 1, "r_1")).unwrap() else {
            panic!("{label}: not new");
        };
        store
            .put_step("r_1", &lease, &record(), &step(1, true))
            .unwrap();
        store
            .release_key("POST /orders", "alice", "k1", &lease)
            .unwrap();
        let again = store.claim_key(&key_request("k1", 1, "r_2")).unwrap();
        let KeyClaim::TakenOver {
            delivery,
            lease: new,
        } = again
        else {
            panic!("{label}: {again:?}");
        };
        assert_eq!(delivery, "r_1", "{label}");
        assert!(new.generation > lease.generation, "{label}");
        assert_eq!(
            store.put_step("r_1", &lease, &record(), &step(2, true)),
            Err(Fenced::LeaseLost),
            "{label}"
        );
        // The record carries over to the new runner.
        assert_eq!(
            store.record("r_1").unwrap().unwrap().steps.len(),
            1,
            "{label}"
        );
    });
}

#[test]
fn a_route_run_that_ended_without_an_answer_is_not_run_again() {
    each("route-ended", |label, store| {
        let KeyClaim::New { lease } = store.claim_key(&key_request("k1", 1, "r_1")).unwrap() else {
            panic!("{label}: not new");
        };
        let end = Next::End {
            state: DeliveryState::OutcomeUnknown,
            why: "no answer".into(),
            steps: Vec::new(),
            response: None,
        };
        store.release("r_1", &lease, &end, now()).unwrap();
        let again = store.claim_key(&key_request("k1", 1, "r_2")).unwrap();
        assert_eq!(
            again,
            KeyClaim::Ended {
                delivery: "r_1".into(),
                state: DeliveryState::OutcomeUnknown
            },
            "{label}"
        );
        let row = store.delivery("r_1").unwrap().unwrap();
        assert_eq!(row.lease_generation, lease.generation, "{label}: not taken");
    });
}

#[test]
fn a_heartbeat_extends_the_lease() {
    each("heartbeat", |label, store| {
        let lease = leased(&*store, "d1");
        let extended = store.heartbeat("d1", &lease, 120_000, now()).unwrap();
        assert_eq!(extended.generation, lease.generation, "{label}");
        assert!(extended.until > lease.until, "{label}");
        let row = store.delivery("d1").unwrap().unwrap();
        assert_eq!(row.lease_until, Some(extended.until), "{label}");
    });
}

#[test]
fn a_commit_that_fails_halfway_leaves_nothing() {
    each("halfway", |label, store| {
        if label.ends_with("memory") {
            // MemStore stores any entity: there is no failing write.
            return;
        }
        let lease = leased(&*store, "d1");
        store
            .put_step("d1", &lease, &record(), &step(1, true))
            .unwrap();
        let mut c = commit_of(
            "d1",
            vec![
                Write::Create {
                    entity: entity("Counter"),
                    key: counter_key(1),
                    value: rec_counter(1, "one"),
                },
                Write::Create {
                    entity: jadpo_compiler::ir::EntityId(99),
                    key: counter_key(2),
                    value: rec_counter(2, "two"),
                },
            ],
        );
        c.follow_ups = vec![follow("e1", Some("k"), &["mail"])];
        let Err(CommitError::Store(e)) = store.commit(&c, &lease) else {
            panic!("{label}: the commit went through");
        };
        assert!(e.to_string().starts_with("store `primary`"), "{label}: {e}");
        assert!(
            store.select(entity("Counter"), &[]).unwrap().is_empty(),
            "{label}"
        );
        assert!(store.events(10).unwrap().is_empty(), "{label}");
        assert!(!store.handled("d1").unwrap(), "{label}");
        assert!(
            store.record("d1").unwrap().is_some(),
            "{label}: the record stays"
        );
        assert_eq!(
            store.delivery("d1").unwrap().unwrap().state,
            DeliveryState::Running,
            "{label}"
        );
        // The store goes on: the same delivery commits what fits.
        c.writes.truncate(1);
        store.commit(&c, &lease).unwrap();
        assert!(store.handled("d1").unwrap(), "{label}");
    });
}

fn park(store: &dyn Store, id: &str, answered: bool) -> Lease {
    let lease = leased(store, id);
    store
        .put_step(id, &lease, &record(), &step(1, true))
        .unwrap();
    store
        .put_step(id, &lease, &record(), &step(2, answered))
        .unwrap();
    let end = Next::End {
        state: DeliveryState::OutcomeUnknown,
        why: "step 2 in doubt".into(),
        steps: Vec::new(),
        response: None,
    };
    store.release(id, &lease, &end, now()).unwrap();
    lease
}

#[test]
fn a_parked_delivery_is_retried_under_the_next_key_once_checked() {
    use jadpo_runtime::record::RowState;
    use jadpo_runtime::store::Operated;
    each("op-retry", |label, store| {
        let before = park(&*store, "d_1", false);
        let refused = store.retry("d_1", false, "ann", now()).unwrap();
        let Operated::Refused(why) = refused else {
            panic!("{label}: retried without --not-done");
        };
        assert!(why.contains("step 2 of d_1 is in doubt"), "{label}: {why}");
        assert_eq!(
            store.retry("d_1", true, "ann", now()).unwrap(),
            Operated::Done,
            "{label}"
        );
        let row = store.delivery("d_1").unwrap().unwrap();
        assert_eq!(row.state, DeliveryState::Available, "{label}");
        assert!(row.lease_generation > before.generation, "{label}");
        assert_eq!(row.attempt, 0, "{label}");
        let rec = store.record("d_1").unwrap().unwrap();
        let s2 = rec.steps.iter().find(|s| s.position == 2).unwrap();
        assert_eq!(s2.key_generation, 1, "{label}");
        assert_eq!(
            s2.key.as_deref(),
            Some(jadpo_runtime::record::step_key("d_1", 2, 1).as_str()),
            "{label}"
        );
        assert!(matches!(s2.state, RowState::Sent { .. }), "{label}");
        // Step 1 is untouched; the item is closed, saying who did what.
        assert_eq!(rec.steps[0], step(1, true), "{label}");
        let item = store.items(false).unwrap().remove(0);
        assert_eq!(
            item.closed_by.as_deref(),
            Some("retry --not-done by ann"),
            "{label}"
        );
        // A second operator retrying at once is refused, clearly.
        let Operated::Refused(why) = store.retry("d_1", true, "bob", now()).unwrap() else {
            panic!("{label}: retried twice");
        };
        assert!(
            why.contains("only an ended delivery is retried"),
            "{label}: {why}"
        );
    });
}

#[test]
fn retry_is_refused_on_a_completed_delivery_and_not_done_without_a_doubt() {
    use jadpo_runtime::store::Operated;
    each("op-refuse", |label, store| {
        let lease = leased(&*store, "d_1");
        store.commit(&commit_of("d_1", Vec::new()), &lease).unwrap();
        let Operated::Refused(why) = store.retry("d_1", false, "ann", now()).unwrap() else {
            panic!("{label}: retried a completed delivery");
        };
        assert!(why.contains("is completed"), "{label}: {why}");
        park(&*store, "d_2", true);
        let Operated::Refused(why) = store.retry("d_2", true, "ann", now()).unwrap() else {
            panic!("{label}: --not-done without a doubt");
        };
        assert!(why.contains("no step in doubt"), "{label}: {why}");
        assert_eq!(
            store.retry("d_2", false, "ann", now()).unwrap(),
            Operated::Done,
            "{label}"
        );
        let Operated::Refused(why) = store.retry("nope", false, "ann", now()).unwrap() else {
            panic!("{label}: retried nothing");
        };
        assert!(why.contains("no delivery nope"), "{label}: {why}");
    });
}

#[test]
fn abandon_ends_it_keeps_the_steps_and_stores_a_routes_answer() {
    use jadpo_runtime::store::Operated;
    each("op-abandon", |label, store| {
        let KeyClaim::New { lease } = store.claim_key(&key_request("k1", 1, "r_1")).unwrap() else {
            panic!("{label}: not new");
        };
        store
            .put_step("r_1", &lease, &record(), &step(1, false))
            .unwrap();
        let end = Next::End {
            state: DeliveryState::OutcomeUnknown,
            why: "in doubt".into(),
            steps: Vec::new(),
            response: None,
        };
        store.release("r_1", &lease, &end, now()).unwrap();
        let answer = StoredResponse {
            status: 500,
            headers: vec![],
            body: b"abandoned".to_vec(),
        };
        let done = store
            .abandon("r_1", "refunded by hand", "bob", Some(&answer), now())
            .unwrap();
        assert_eq!(done, Operated::Done, "{label}");
        let row = store.delivery("r_1").unwrap().unwrap();
        assert_eq!(row.state, DeliveryState::Abandoned, "{label}");
        assert!(store.handled("r_1").unwrap(), "{label}");
        assert_eq!(
            store.record("r_1").unwrap().unwrap().steps.len(),
            1,
            "{label}"
        );
        assert_eq!(
            store.claim_key(&key_request("k1", 1, "r_2")).unwrap(),
            KeyClaim::Replay(answer),
            "{label}"
        );
        let item = store.items(false).unwrap().remove(0);
        assert_eq!(
            item.closed_by.as_deref(),
            Some("abandon by bob: refunded by hand"),
            "{label}"
        );
        let Operated::Refused(why) = store.abandon("r_1", "x", "ann", None, now()).unwrap() else {
            panic!("{label}: abandoned twice");
        };
        assert!(why.contains("abandoned already"), "{label}: {why}");
    });
}

#[test]
fn operators_list_find_by_prefix_and_read_unfinished_records() {
    use jadpo_runtime::store::ListFilter;
    each("op-list", |label, store| {
        park(&*store, "d_a1", false);
        let lease = leased(&*store, "d_a2");
        store
            .commit(&commit_of("d_a2", Vec::new()), &lease)
            .unwrap();
        leased(&*store, "dxa3");
        let all = store
            .list(&ListFilter {
                limit: 10,
                ..ListFilter::default()
            })
            .unwrap();
        assert_eq!(all.len(), 3, "{label}");
        let not_done: Vec<String> = store
            .list(&ListFilter {
                not_done: true,
                limit: 10,
                ..ListFilter::default()
            })
            .unwrap()
            .into_iter()
            .map(|d| d.id)
            .collect();
        assert!(
            !not_done.contains(&"d_a2".to_string()),
            "{label}: {not_done:?}"
        );
        let parked = store
            .list(&ListFilter {
                state: Some(DeliveryState::OutcomeUnknown),
                limit: 10,
                ..ListFilter::default()
            })
            .unwrap();
        assert_eq!(parked.len(), 1, "{label}");
        // `_` is no wildcard: `d_a` does not find `dxa3`.
        assert_eq!(
            store.ids_starting("d_a", 5).unwrap(),
            vec!["d_a1", "d_a2"],
            "{label}"
        );
        let open: Vec<String> = store
            .unfinished()
            .unwrap()
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert_eq!(open, vec!["d_a1"], "{label}");
    });
}

#[test]
fn retention_keeps_answers_29_days_and_drops_them_on_day_31_keeping_the_steps() {
    use jadpo_runtime::store::{Retention, StepSummary};
    const DAY: i64 = 86_400_000;
    each("retention", |label, store| {
        // A parked delivery: its answers are the record's.
        let lease = leased(&*store, "d_1");
        store
            .put_step("d_1", &lease, &record(), &step(1, true))
            .unwrap();
        let summary = StepSummary {
            position: 1,
            operation: "pay.op1".into(),
            state: "answered".into(),
            sent_at: now(),
            key: Some("key1".into()),
        };
        let end = Next::End {
            state: DeliveryState::OutcomeUnknown,
            why: "in doubt".into(),
            steps: vec![summary.clone()],
            response: None,
        };
        store.release("d_1", &lease, &end, now()).unwrap();
        // A completed one, and an answered route claim.
        let l2 = leased(&*store, "d_2");
        store.commit(&commit_of("d_2", Vec::new()), &l2).unwrap();
        let KeyClaim::New { lease: l3 } = store.claim_key(&key_request("k1", 1, "r_1")).unwrap()
        else {
            panic!("{label}: not new");
        };
        let mut c = commit_of("r_1", Vec::new());
        c.response = Some(StoredResponse {
            status: 200,
            headers: vec![],
            body: vec![1],
        });
        store.commit(&c, &l3).unwrap();

        let keep = Retention::default();
        let day = |n: i64| later(now(), n * DAY);
        let early = store.prune(day(0), keep, 1000).unwrap();
        assert_eq!(early.total(), 0, "{label}: {early:?}");
        let next_day = store.prune(later(day(1), 60_000), keep, 1000).unwrap();
        assert_eq!(
            (next_day.deliveries, next_day.claims),
            (2, 1),
            "{label}: {next_day:?}"
        );
        assert!(store.delivery("d_2").unwrap().is_none(), "{label}");
        assert!(!store.handled("d_2").unwrap(), "{label}");
        assert!(
            matches!(
                store.claim_key(&key_request("k1", 2, "r_9")).unwrap(),
                KeyClaim::New { .. }
            ),
            "{label}: the key is free again"
        );
        assert!(
            store.record("d_1").unwrap().is_some(),
            "{label}: day 1 keeps the answers"
        );

        let day29 = store.prune(day(29), keep, 1000).unwrap();
        assert_eq!(day29.answers, 0, "{label}");
        assert!(
            store.record("d_1").unwrap().is_some(),
            "{label}: day 29 keeps the answers"
        );
        let day31 = store.prune(day(31), keep, 1000).unwrap();
        assert_eq!(day31.answers, 1, "{label}");
        assert!(
            store.record("d_1").unwrap().is_none(),
            "{label}: day 31 drops the answers"
        );
        let row = store.delivery("d_1").unwrap().unwrap();
        assert_eq!(row.steps, vec![summary], "{label}: the step list stays");
        // (r_9's claim, open since day 0, lapsed on day 29: its item too.)
        let items = store.items(false).unwrap();
        let d1 = items.iter().find(|i| i.delivery == "d_1");
        assert!(
            d1.is_some_and(|i| i.answers_dropped_at.is_some()),
            "{label}: {items:?}"
        );

        assert_eq!(
            store.forget("d_1").unwrap(),
            jadpo_runtime::store::Operated::Done,
            "{label}"
        );
        assert!(store.delivery("d_1").unwrap().is_none(), "{label}");
        assert!(
            store
                .items(false)
                .unwrap()
                .iter()
                .all(|i| i.delivery != "d_1"),
            "{label}"
        );
    });
}

#[test]
fn an_open_route_claim_lapses_after_a_day_and_its_record_becomes_an_item() {
    use jadpo_runtime::store::Retention;
    const DAY: i64 = 86_400_000;
    each("claim-lapse", |label, store| {
        // A run whose client never came back: retryable, the claim open.
        let KeyClaim::New { lease } = store.claim_key(&key_request("k1", 1, "r_1")).unwrap() else {
            panic!("{label}: not new");
        };
        store
            .put_step("r_1", &lease, &record(), &step(1, true))
            .unwrap();
        let retry = Next::Retry {
            run_at: now(),
            why: "unavailable".into(),
            counted: true,
            steps: Vec::new(),
        };
        store.release("r_1", &lease, &retry, now()).unwrap();
        // One still running under a live lease is left alone.
        let KeyClaim::New { .. } = store.claim_key(&key_request("k2", 1, "r_2")).unwrap() else {
            panic!("{label}: not new");
        };
        let keep = Retention::default();
        let hour23 = store
            .prune(later(now(), 23 * 3_600_000), keep, 1000)
            .unwrap();
        assert_eq!(hour23.lapsed, 0, "{label}: {hour23:?}");
        let mut live = key_request("k2", 1, "r_3");
        live.now = later(now(), DAY + 60_000);
        let r2 = store.take("r_2", 3 * DAY as u64, live.now).unwrap();
        assert!(r2.is_some(), "{label}");
        let day = store.prune(later(now(), DAY + 60_000), keep, 1000).unwrap();
        assert_eq!(day.lapsed, 1, "{label}: {day:?}");
        let row = store.delivery("r_1").unwrap().unwrap();
        assert_eq!(row.state, DeliveryState::RetryLater, "{label}");
        assert!(row.lease_generation > lease.generation, "{label}: fenced");
        let items = store.items(true).unwrap();
        assert!(
            items
                .iter()
                .any(|i| i.delivery == "r_1" && i.outcome == DeliveryState::RetryLater),
            "{label}: {items:?}"
        );
        assert!(store.record("r_1").unwrap().is_some(), "{label}: kept");
        let mut again = key_request("k1", 1, "r_4");
        again.now = later(now(), DAY + 120_000);
        assert!(
            matches!(store.claim_key(&again).unwrap(), KeyClaim::New { .. }),
            "{label}: the key is free again"
        );
        assert_eq!(
            store.claim_key(&live).unwrap(),
            KeyClaim::InUse,
            "{label}: the live claim stays"
        );
    });
}

/// Design section 17: every record write of a shared store first extends
/// the delivery's lease where its generation matches, so a runner that
/// writes keeps its lease between heartbeats and is not rescued. (The
/// memory store serves one test process, whose leases lapse only as the
/// tests' clock says.)
#[test]
fn a_record_write_extends_the_lease() {
    each("fenced-extends", |label, store| {
        if label.ends_with("memory") {
            return;
        }
        store
            .enqueue(&[delivery("d1", "default", 0, later(now(), -1000))], now())
            .unwrap();
        let lease = claim_one(&*store, "r1", 1_000)[0].lease;
        std::thread::sleep(std::time::Duration::from_millis(700));
        store
            .put_step("d1", &lease, &record(), &step(1, true))
            .unwrap_or_else(|e| panic!("{label}: {e:?}"));
        // The extended end reads back as a time (Postgres writes it from
        // the database's clock in the stores' format).
        let row = store.delivery("d1").unwrap().unwrap();
        assert!(
            row.lease_until.is_some_and(|until| until > lease.until),
            "{label}: {:?} after {:?}",
            row.lease_until,
            lease.until
        );
        // Past the first lease's end, within the one the write extended.
        std::thread::sleep(std::time::Duration::from_millis(700));
        assert!(
            claim_all(&*store, &[], 1, 60_000).is_empty(),
            "{label}: a runner that wrote its record was rescued"
        );
    });
}

/// A delivery claimed in its home store `home`, whose action keeps its
/// record in `away` (design section 14.5).
fn claimed_home(home: &dyn Store, id: &str) -> jadpo_runtime::store::Claimed {
    let past = later(now(), -1000);
    home.enqueue(&[delivery(id, "default", 0, past)], now())
        .expect("enqueued");
    claim_one(home, "r1", 60_000).pop().expect("a claim")
}

#[test]
fn an_adopted_copy_runs_at_its_claims_generation() {
    use jadpo_runtime::store::{Adopted, ADOPTED_QUEUE};
    for kind in kinds() {
        let label = format!("adoption on {}", kind.label());
        let (home, away) = (kind.open("adopt_home"), kind.open("adopt_away"));
        let c = claimed_home(&*home, "d1");
        assert_eq!(
            away.adopt(&c.delivery, &c.lease),
            Ok(Adopted::Running),
            "{label}"
        );
        let copy = away.delivery("d1").unwrap().expect("a copy");
        assert_eq!(copy.queue, ADOPTED_QUEUE, "{label}");
        assert_eq!(copy.state, DeliveryState::Running, "{label}");
        assert_eq!(copy.lease_generation, c.lease.generation, "{label}");
        // No dispatcher serves the copies, nor rescues them.
        assert!(claim_all(&*away, &[], 10, 1).is_empty(), "{label}");
        let rec = record();
        away.put_step("d1", &c.lease, &rec, &step(1, true)).unwrap();
        // The same generation again, as a slow runner's: nothing moves.
        assert_eq!(
            away.adopt(&c.delivery, &c.lease),
            Ok(Adopted::Stale),
            "{label}"
        );
        // A later claim adopts at its generation: the earlier one is fenced.
        let later_lease = home.take("d1", 60_000, now()).unwrap().expect("taken");
        let adopted = away.adopt(&c.delivery, &later_lease);
        assert_eq!(adopted, Ok(Adopted::Running), "{label}");
        let lost = away.put_step("d1", &c.lease, &rec, &step(2, true));
        assert_eq!(lost, Err(Fenced::LeaseLost), "{label}");
        assert_eq!(
            away.adopt(&c.delivery, &c.lease),
            Ok(Adopted::Stale),
            "{label}"
        );
        let mut commit = commit_of("d1", Vec::new());
        commit.steps = vec![summary(1)];
        away.commit(&commit, &later_lease).expect("committed");
        // Once committed, any claim learns it landed, with its steps.
        let third = home.take("d1", 60_000, now()).unwrap().expect("taken");
        assert_eq!(
            away.adopt(&c.delivery, &third),
            Ok(Adopted::Handled(vec![summary(1)])),
            "{label}"
        );
        assert!(away.handled("d1").unwrap(), "{label}");
    }
}

#[test]
fn a_commit_elsewhere_completes_the_home_row_without_an_item() {
    for kind in kinds() {
        let label = format!("completed elsewhere on {}", kind.label());
        let home = kind.open("elsewhere");
        let c = claimed_home(&*home, "d1");
        let next = Next::Completed {
            steps: vec![summary(1)],
        };
        let stale = Lease {
            generation: c.lease.generation + 1,
            ..c.lease
        };
        assert_eq!(
            home.release("d1", &stale, &next, now()),
            Err(Fenced::LeaseLost),
            "{label}"
        );
        home.release("d1", &c.lease, &next, now()).unwrap();
        let row = home.delivery("d1").unwrap().expect("the row");
        assert_eq!(row.state, DeliveryState::Completed, "{label}");
        assert_eq!(row.steps, vec![summary(1)], "{label}");
        assert_eq!(row.lease_until, None, "{label}");
        assert!(row.ended_at.is_some(), "{label}");
        assert!(home.items(false).unwrap().is_empty(), "{label}");
        assert!(claim_all(&*home, &[], 10, 1).is_empty(), "{label}");
    }
}

fn summary(position: u32) -> jadpo_runtime::store::StepSummary {
    jadpo_runtime::store::StepSummary {
        position,
        operation: "stripe.charges.create".into(),
        state: "answered".into(),
        sent_at: jadpo_runtime::value::Instant(1_750_000_000_123_456_789),
        key: None,
    }
}
