//! The step runtime against design section 9, one test per rule: the
//! record, replay, time, a step in doubt, attempts, the mismatch answer,
//! divergence, leases, the commit and the operator item.

use crate::support;

use jadpo_compiler::intern::Name;
use jadpo_runtime::eval::Divergence;
use jadpo_runtime::fake::Scripted;
use jadpo_runtime::record::RowState;
use jadpo_runtime::store::{DeliveryState, Items, MemStore, Queue};
use jadpo_runtime::value::{Instant, Value};
use jadpo_runtime::End;
use support::*;

pub const FOUR: &str = "
decline step.late_failure \"tests\"
action four(req: OrderReq) fails pay.Declined -> Text {
    var a = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: req.amount })
    var b = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: req.amount + 1 })
    var c = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: req.amount + 2 })
    var d = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: req.amount + 3 })
    attempt create Order { id: req.id charge: d.id }
    emit Paid { order: req.id } with { unique: { by_args: true } }
    return d.id
}

decline step.late_failure \"tests\"
action two(req: OrderReq) fails pay.Declined -> Text {
    var a = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: req.amount })
    var b = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: req.amount + 1 })
    return b.id
}
";

fn charges() -> Vec<Scripted> {
    vec![
        charge("ch_1", 10),
        charge("ch_2", 11),
        charge("ch_3", 12),
        charge("ch_4", 13),
    ]
}

#[test]
fn a_clean_run_commits_its_writes_outbox_and_removes_the_record() {
    let app = App::new(FOUR);
    let d = delivery(&app, "test:four:1", "four", vec![order("o1", 10)]);
    let store = MemStore::new();
    let mut fake = app.fake(&[("pay.charges.create", charges())]);
    let out = run(&app, &d, &store, &mut fake, None);
    assert_eq!(out.end, End::Completed(text("ch_4")));
    assert_eq!(out.attempts, 1);
    let states: Vec<&str> = out.steps.iter().map(|s| s.state).collect();
    assert_eq!(states, ["answered"; 4]);
    assert_eq!(out.steps[3].detail, "ch_4");
    assert_eq!(fake.effects_of("pay.charges.create"), 4);
    let order_entity = app
        .program
        .entities
        .iter()
        .position(|e| e.qualified == "Order");
    let rows = store.rows(jadpo_compiler::ir::EntityId(
        order_entity.unwrap_or(0) as u32
    ));
    assert_eq!(
        rows,
        vec![rec(&[("id", text("o1")), ("charge", text("ch_4"))])]
    );
    assert_eq!(store.outbox().len(), 1);
    assert_eq!(store.outbox()[0].follow.event, "Paid");
    assert!(
        store.record_of(&d.id).is_none(),
        "the record is removed in the commit"
    );
    assert!(store.handled(&d.id).unwrap_or(false));
    assert!(store.items(false).unwrap_or_default().is_empty());
}

#[test]
fn a_rerun_replays_answered_steps_without_sending_them() {
    let app = App::new(FOUR);
    let d = delivery(&app, "test:replay:1", "four", vec![order("o1", 10)]);
    let store = MemStore::new();
    // Step 3's answer is lost: attempt 1 ends retry-later with steps 1
    // and 2 answered and step 3 in doubt; attempt 2 replays 1 and 2.
    let mut fake = app.fake(&[(
        "pay.charges.create",
        vec![
            charge("ch_1", 10),
            charge("ch_2", 11),
            Scripted::Lost(Box::new(charge("ch_3", 12))),
            charge("ch_4", 13),
        ],
    )]);
    let out = run(&app, &d, &store, &mut fake, None);
    assert_eq!(out.end, End::Completed(text("ch_4")));
    assert_eq!(out.attempts, 2);
    let states: Vec<&str> = out.steps.iter().map(|s| s.state).collect();
    assert_eq!(states, ["replayed", "replayed", "answered", "answered"]);
    // Five sends: four new ones and step 3 again under its key.
    assert_eq!(fake.sends.get("pay.charges.create"), Some(&5));
    assert_eq!(fake.effects_of("pay.charges.create"), 4);
}

/// Window 1h, margin 6m: a step in doubt is sent again under its key only
/// before 54 minutes have passed since its first send.
#[test]
fn a_step_in_doubt_is_resent_inside_its_window_and_parks_past_it() {
    let app = App::new(FOUR);
    let script = || {
        vec![
            charge("ch_1", 10),
            Scripted::Lost(Box::new(charge("ch_2", 11))),
        ]
    };
    let mut d = delivery(&app, "test:window:1", "two", vec![order("o1", 10)]);
    d.retry_after_ms = minutes(50);
    let store = MemStore::new();
    let mut fake = app.fake(&[("pay.charges.create", script())]);
    let out = run(&app, &d, &store, &mut fake, None);
    assert_eq!(out.end, End::Completed(text("ch_2")), "{out:#?}");
    assert_eq!(fake.effects_of("pay.charges.create"), 2);
    assert_eq!(out.steps[1].state, "answered");

    d.retry_after_ms = minutes(55);
    d.id = "test:window:2".into();
    let store = MemStore::new();
    let mut fake = app.fake(&[("pay.charges.create", script())]);
    let out = run(&app, &d, &store, &mut fake, None);
    let End::Parked { step, why } = &out.end else {
        panic!("should park: {out:#?}");
    };
    assert_eq!(*step, 2);
    assert!(why.contains("window"), "{why}");
    assert_eq!(out.steps[1].state, "in doubt");
    assert_eq!(
        store.items(false).unwrap_or_default().len(),
        1,
        "an operator item is kept"
    );
    assert_eq!(
        store.items(false).unwrap_or_default()[0].outcome,
        DeliveryState::OutcomeUnknown
    );
}

#[test]
fn clock_now_is_the_first_attempts_start_on_every_rerun() {
    let app = App::new(
        "
decline step.late_failure \"tests\"
action stamped(req: OrderReq) fails pay.Declined -> Instant {
    var a = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: 1 })
    var b = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: 2 })
    return clock.now
}",
    );
    let mut d = delivery(&app, "test:clock:1", "stamped", vec![order("o1", 10)]);
    d.retry_after_ms = minutes(10);
    let store = MemStore::new();
    let mut fake = app.fake(&[(
        "pay.charges.create",
        vec![
            charge("ch_1", 1),
            Scripted::Lost(Box::new(charge("ch_2", 2))),
        ],
    )]);
    let out = run(&app, &d, &store, &mut fake, None);
    assert_eq!(out.attempts, 2);
    assert_eq!(out.last_start, Instant(at(T0).0 + 10 * 60 * 1_000_000_000));
    assert_eq!(out.end, End::Completed(Value::Instant(at(T0))));
}

#[test]
fn a_transient_failure_ends_the_attempt_and_the_call_is_sent_again() {
    let app = App::new(FOUR);
    let d = delivery(&app, "test:transient:1", "two", vec![order("o1", 10)]);
    let store = MemStore::new();
    // Three sends of step 2 answer `Unavailable` (its 3 attempts): the
    // attempt ends retry-later, and the next one sends step 2 afresh.
    let mut fake = app.fake(&[(
        "pay.charges.create",
        vec![
            charge("ch_1", 10),
            Scripted::Unavailable,
            Scripted::Unavailable,
            Scripted::Unavailable,
            charge("ch_2", 11),
        ],
    )]);
    let out = run(&app, &d, &store, &mut fake, None);
    assert_eq!(out.end, End::Completed(text("ch_2")), "{out:#?}");
    assert_eq!(out.attempts, 2);
    assert_eq!(fake.effects_of("pay.charges.create"), 2);
}

#[test]
fn in_use_is_waited_on_within_attempts_then_ends_the_attempt() {
    let app = App::new(FOUR);
    let mut d = delivery(&app, "test:in_use:1", "two", vec![order("o1", 10)]);
    d.attempts = 1;
    let store = MemStore::new();
    let mut fake = app.fake(&[(
        "pay.charges.create",
        vec![charge("ch_1", 10), Scripted::InUse],
    )]);
    let out = run(&app, &d, &store, &mut fake, None);
    let End::RetryLater(why) = &out.end else {
        panic!("{out:#?}");
    };
    assert!(why.contains("in use"), "{why}");
    // Step 2 was sent its 3 attempts, never more; it never failed.
    assert_eq!(fake.sends.get("pay.charges.create"), Some(&4));
    assert_eq!(
        store.items(false).unwrap_or_default()[0].outcome,
        DeliveryState::RetryLater
    );
}

#[test]
fn a_5xx_on_a_keyed_step_is_resent_unless_the_provider_replays_it() {
    let source = "
decline step.late_failure \"tests\"
action plain(req: OrderReq) fails pay.Declined -> Text {
    var a = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: 1 })
    var b = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: 2 })
    return b.id
}

decline step.late_failure \"tests\"
action replayed(req: OrderReq) fails pay_replays.Declined -> Text {
    var a = attempt pay_replays.charges.create(pay_replays.ChargeReq { order: req.id amount: 1 })
    var b = attempt pay_replays.charges.create(pay_replays.ChargeReq { order: req.id amount: 2 })
    return b.id
}

decline step.late_failure \"tests\"
action new_key(req: OrderReq) fails pay_newkey.Declined -> Text {
    var a = attempt pay_newkey.charges.create(pay_newkey.ChargeReq { order: req.id amount: 1 })
    var b = attempt pay_newkey.charges.create(pay_newkey.ChargeReq { order: req.id amount: 2 })
    return b.id
}";
    let app = App::new(source);
    let script = || vec![charge("ch_1", 1), Scripted::ServerError, charge("ch_2", 2)];

    // Without replays_failures: the 5xx is in doubt, resent under its key.
    let d = delivery(&app, "test:5xx:1", "plain", vec![order("o1", 1)]);
    let mut fake = app.fake(&[("pay.charges.create", script())]);
    let out = run(&app, &d, &MemStore::new(), &mut fake, None);
    assert_eq!(out.end, End::Completed(text("ch_2")), "{out:#?}");

    // With replays_failures: the provider repeats the 5xx for the key until
    // its window ends, so the step parks.
    let d = delivery(&app, "test:5xx:2", "replayed", vec![order("o1", 1)]);
    let mut fake = app.fake(&[("pay_replays.charges.create", script())]);
    let out = run(&app, &d, &MemStore::new(), &mut fake, None);
    let End::Parked { step, why } = &out.end else {
        panic!("{out:#?}");
    };
    assert_eq!(*step, 2);
    assert!(why.contains("5xx"), "{why}");

    // With new_key_on: answer, it is sent again under the next generation.
    let d = delivery(&app, "test:5xx:3", "new_key", vec![order("o1", 1)]);
    let mut fake = app.fake(&[("pay_newkey.charges.create", script())]);
    let store = MemStore::new();
    let out = run(&app, &d, &store, &mut fake, None);
    assert_eq!(out.end, End::Completed(text("ch_2")), "{out:#?}");
    assert_eq!(fake.effects_of("pay_newkey.charges.create"), 2);
}

#[test]
fn the_mismatch_answer_holds_the_delivery_as_diverged() {
    let app = App::new(FOUR);
    let d = delivery(&app, "test:mismatch:1", "two", vec![order("o1", 10)]);
    let store = MemStore::new();
    // Another runner (here: a hand-made call) used step 1's key with
    // another request first.
    let mut fake = app.fake(&[(
        "pay.charges.create",
        vec![charge("ch_x", 99), charge("ch_1", 10)],
    )]);
    let key = jadpo_runtime::record::step_key(&d.id, 1, 0);
    let other = order("other", 99);
    let call = jadpo_runtime::provider::Call {
        op: app.op("pay.charges.create"),
        operation: "pay.charges.create",
        request: &other,
        fingerprint: other.fingerprint(),
        key: Some(&key),
        repeat_safe: false,
        changes: true,
        step: Some(1),
    };
    jadpo_runtime::provider::Provider::send(&mut fake, &call);
    let out = run(&app, &d, &store, &mut fake, None);
    let End::Held(Divergence { step, why, .. }) = &out.end else {
        panic!("{out:#?}");
    };
    assert_eq!(*step, 1);
    assert!(why.contains("different request"), "{why}");
}

#[test]
fn a_read_answered_5xx_is_retried_then_fails_unavailable() {
    let app = App::new(
        "
action read(req: OrderReq) -> Bool {
    return match pay.charges.get(pay.ChargeReq { order: req.id amount: 1 }) {
        success(c) => true
        failure Unavailable => false
    }
}",
    );
    let d = delivery(&app, "test:read:1", "read", vec![order("o1", 1)]);
    let mut fake = app.fake(&[("pay.charges.get", vec![Scripted::ServerError])]);
    let out = run(&app, &d, &MemStore::new(), &mut fake, None);
    assert_eq!(out.end, End::Completed(Value::Bool(false)));
    assert_eq!(fake.sends.get("pay.charges.get"), Some(&3));
}

/// One unkeyed changing call, alone in its action.
const RECEIPT: &str = "
action receipt(req: OrderReq) -> Text {
    var r = attempt pay.receipts.send(pay.ChargeReq { order: req.id amount: 1 })
    return r.id
}";

#[test]
fn the_lone_unkeyed_call_parks_when_in_doubt() {
    let app = App::new(RECEIPT);
    let d = delivery(&app, "test:unkeyed:1", "receipt", vec![order("o1", 1)]);
    let mut fake = app.fake(&[(
        "pay.receipts.send",
        vec![Scripted::Lost(Box::new(charge("r_1", 1)))],
    )]);
    let store = MemStore::new();
    let out = run(&app, &d, &store, &mut fake, None);
    let End::Parked { step, .. } = &out.end else {
        panic!("{out:#?}");
    };
    assert_eq!(*step, 1);
    assert_eq!(
        fake.effects_of("pay.receipts.send"),
        1,
        "it acted once, never twice"
    );
    // A single call keeps dispatch metadata only: no fingerprint, no answer.
    let record = store.record_of(&d.id).expect("kept");
    assert_eq!(record.mode, jadpo_runtime::record::Mode::Dispatch);
    assert!(record.steps.iter().all(|s| s.fingerprint.is_none()));
}

/// `spec/package-manifest.md`, "What `attempts` counts": the provider's
/// `attempts: 3` never repeats a changing call answered 5xx within an
/// attempt, so an unkeyed one cannot act twice.
#[test]
fn an_unkeyed_changing_call_answered_5xx_is_never_sent_again() {
    let app = App::new(RECEIPT);
    assert_eq!(app.program.op(app.op("pay.receipts.send")).attempts, 3);
    let d = delivery(&app, "test:unkeyed:5xx", "receipt", vec![order("o1", 1)]);
    let mut fake = app.fake(&[(
        "pay.receipts.send",
        vec![Scripted::ServerError, charge("r_2", 1)],
    )]);
    let out = run(&app, &d, &MemStore::new(), &mut fake, None);
    let End::Parked { step, .. } = &out.end else {
        panic!("{out:#?}");
    };
    assert_eq!(*step, 1);
    assert_eq!(fake.sends.get("pay.receipts.send"), Some(&1), "sent once");
}

#[test]
fn a_keyed_false_step_in_doubt_is_sent_again_as_it_is() {
    let app = App::new(
        "
decline step.late_failure \"tests\"
action tagged(req: OrderReq) fails pay.Declined -> Text {
    var a = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: 1 })
    var t = attempt pay.tags.put(pay.ChargeReq { order: req.id amount: 2 })
    return t.id
}",
    );
    let d = delivery(&app, "test:put:1", "tagged", vec![order("o1", 1)]);
    let mut fake = app.fake(&[
        ("pay.charges.create", vec![charge("ch_1", 1)]),
        (
            "pay.tags.put",
            vec![Scripted::Lost(Box::new(charge("t_1", 2))), charge("t_1", 2)],
        ),
    ]);
    let out = run(&app, &d, &MemStore::new(), &mut fake, None);
    assert_eq!(out.end, End::Completed(text("t_1")), "{out:#?}");
    // The same request again to a `keyed: false` operation is no new effect.
    assert_eq!(fake.effects_of("pay.tags.put"), 1);
}

#[test]
fn answers_are_recorded_encrypted() {
    let app = App::new(FOUR);
    let mut d = delivery(&app, "test:sealed:1", "two", vec![order("o1", 10)]);
    d.attempts = 1;
    let store = MemStore::new();
    let mut fake = app.fake(&[(
        "pay.charges.create",
        vec![
            charge("ch_secret_1", 10),
            Scripted::Lost(Box::new(charge("ch_2", 11))),
        ],
    )]);
    let out = run(&app, &d, &store, &mut fake, None);
    assert!(matches!(out.end, End::RetryLater(_)), "{out:#?}");
    let record = store.record_of(&d.id).expect("kept");
    let RowState::Answered(sealed) = &record.steps[0].state else {
        panic!("step 1 answered");
    };
    let plain = String::from_utf8_lossy(&sealed.ciphertext);
    assert!(!plain.contains("ch_secret_1"));
    assert!(record.steps[0].fingerprint.is_some());
    assert_eq!(record.steps[0].key.as_ref().map(String::len), Some(64));
    let _ = Name::new("x");
}

#[test]
fn a_call_that_did_not_act_is_not_in_doubt() {
    // The lone unkeyed call: `Unavailable` three times (its attempts) says
    // it did not act, so the next attempt sends it again instead of
    // parking it as outcome_unknown.
    let app = App::new(RECEIPT);
    let d = delivery(&app, "test:did_not_act:1", "receipt", vec![order("o1", 1)]);
    let mut fake = app.fake(&[(
        "pay.receipts.send",
        vec![
            Scripted::Unavailable,
            Scripted::RateLimited,
            Scripted::Unavailable,
            charge("r_1", 1),
        ],
    )]);
    let out = run(&app, &d, &MemStore::new(), &mut fake, None);
    assert_eq!(out.end, End::Completed(text("r_1")), "{out:#?}");
    assert_eq!(out.attempts, 2);
    assert_eq!(fake.effects_of("pay.receipts.send"), 1);
}
