//! The step runtime against design section 9, one test per rule: the
//! record, replay, time, a step in doubt, attempts, the mismatch answer,
//! divergence, leases, the commit and the operator item. The rules that
//! are one delivery against scripted answers, judged by its end and its
//! counts, are rows of one table (`cases`), each named by its rule.

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

/// One unkeyed changing call, alone in its action.
const RECEIPT: &str = "
action receipt(req: OrderReq) -> Text {
    var r = attempt pay.receipts.send(pay.ChargeReq { order: req.id amount: 1 })
    return r.id
}";

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
fn a_lone_call_keeps_dispatch_metadata_only() {
    let app = App::new(RECEIPT);
    let d = delivery(&app, "test:unkeyed:1", "receipt", vec![order("o1", 1)]);
    let mut fake = app.fake(&[(
        "pay.receipts.send",
        vec![Scripted::Lost(Box::new(charge("r_1", 1)))],
    )]);
    let store = MemStore::new();
    let out = run(&app, &d, &store, &mut fake, None);
    assert!(matches!(out.end, End::Parked { .. }), "{out:#?}");
    // A single call keeps dispatch metadata only: no fingerprint, no answer.
    let record = store.record_of(&d.id).expect("kept");
    assert_eq!(record.mode, jadpo_runtime::record::Mode::Dispatch);
    assert!(record.steps.iter().all(|s| s.fingerprint.is_none()));
}

/// Two calls of one operation, with and without the provider's
/// `replays_failures` and `new_key_on: answer`.
const FIVE_XX: &str = "
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

/// A read that turns `Unavailable` into `false`.
const READ: &str = "
action read(req: OrderReq) -> Bool {
    return match pay.charges.get(pay.ChargeReq { order: req.id amount: 1 }) {
        success(c) => true
        failure Unavailable => false
    }
}";

/// A keyed call, then a call of a `keyed: false` operation.
const TAGGED: &str = "
decline step.late_failure \"tests\"
action tagged(req: OrderReq) fails pay.Declined -> Text {
    var a = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: 1 })
    var t = attempt pay.tags.put(pay.ChargeReq { order: req.id amount: 2 })
    return t.id
}";

/// How a delivery must end.
#[derive(Debug)]
enum Want {
    Text(&'static str),
    Bool(bool),
    /// Retry-later, the reason holding the words.
    RetryLater(&'static str),
    /// Parked at the step, the reason holding the words.
    Parked(u32, &'static str),
}

/// One delivery of `action` in `source` against scripted answers, and what
/// section 9 says of it: its end, and the sends, effects and attempts
/// counted (`None`: not judged).
struct Case {
    rule: &'static str,
    source: &'static str,
    action: &'static str,
    scripts: Vec<(&'static str, Vec<Scripted>)>,
    attempts: Option<u32>,
    want: Want,
    sends: Option<(&'static str, u32)>,
    effects: Option<(&'static str, usize)>,
    attempts_run: Option<u32>,
}

fn case(rule: &'static str, source: &'static str, action: &'static str, want: Want) -> Case {
    Case {
        rule,
        source,
        action,
        scripts: Vec::new(),
        attempts: None,
        want,
        sends: None,
        effects: None,
        attempts_run: None,
    }
}

impl Case {
    fn script(mut self, op: &'static str, answers: Vec<Scripted>) -> Case {
        self.scripts.push((op, answers));
        self
    }
    fn sends(mut self, op: &'static str, n: u32) -> Case {
        self.sends = Some((op, n));
        self
    }
    fn effects(mut self, op: &'static str, n: usize) -> Case {
        self.effects = Some((op, n));
        self
    }
}

fn cases() -> Vec<Case> {
    use Scripted::{InUse, Lost, RateLimited, ServerError, Unavailable};
    let create = "pay.charges.create";
    let receipt = "pay.receipts.send";
    vec![
        Case {
            attempts_run: Some(2),
            ..case(
                "a transient failure ends the attempt; the call is sent again",
                FOUR,
                "two",
                Want::Text("ch_2"),
            )
            .script(
                create,
                vec![
                    charge("ch_1", 10),
                    Unavailable,
                    Unavailable,
                    Unavailable,
                    charge("ch_2", 11),
                ],
            )
            .effects(create, 2)
        },
        Case {
            attempts: Some(1),
            ..case(
                "in_use is waited on within attempts, then ends the attempt",
                FOUR,
                "two",
                Want::RetryLater("in use"),
            )
            .script(create, vec![charge("ch_1", 10), InUse])
            .sends(create, 4)
        },
        case(
            "a 5xx on a keyed step is in doubt, sent again under its key",
            FIVE_XX,
            "plain",
            Want::Text("ch_2"),
        )
        .script(
            create,
            vec![charge("ch_1", 1), ServerError, charge("ch_2", 2)],
        ),
        case(
            "a provider that replays failures repeats the 5xx: the step parks",
            FIVE_XX,
            "replayed",
            Want::Parked(2, "5xx"),
        )
        .script(
            "pay_replays.charges.create",
            vec![charge("ch_1", 1), ServerError, charge("ch_2", 2)],
        ),
        case(
            "new_key_on: answer sends it again under the next generation",
            FIVE_XX,
            "new_key",
            Want::Text("ch_2"),
        )
        .script(
            "pay_newkey.charges.create",
            vec![charge("ch_1", 1), ServerError, charge("ch_2", 2)],
        )
        .effects("pay_newkey.charges.create", 2),
        case(
            "a read answered 5xx is retried, then fails Unavailable",
            READ,
            "read",
            Want::Bool(false),
        )
        .script("pay.charges.get", vec![ServerError])
        .sends("pay.charges.get", 3),
        case(
            "the lone unkeyed call parks when in doubt, having acted once",
            RECEIPT,
            "receipt",
            Want::Parked(1, ""),
        )
        .script(receipt, vec![Lost(Box::new(charge("r_1", 1)))])
        .effects(receipt, 1),
        case(
            "an unkeyed changing call answered 5xx is never sent again",
            RECEIPT,
            "receipt",
            Want::Parked(1, ""),
        )
        .script(receipt, vec![ServerError, charge("r_2", 1)])
        .sends(receipt, 1),
        case(
            "a keyed: false step in doubt is sent again as it is",
            TAGGED,
            "tagged",
            Want::Text("t_1"),
        )
        .script(create, vec![charge("ch_1", 1)])
        .script(
            "pay.tags.put",
            vec![Lost(Box::new(charge("t_1", 2))), charge("t_1", 2)],
        )
        .effects("pay.tags.put", 1),
        Case {
            attempts_run: Some(2),
            ..case(
                "a call that did not act is not in doubt: sent again next attempt",
                RECEIPT,
                "receipt",
                Want::Text("r_1"),
            )
            .script(
                receipt,
                vec![Unavailable, RateLimited, Unavailable, charge("r_1", 1)],
            )
            .effects(receipt, 1)
        },
    ]
}

/// Each answer of a provider, one delivery each, ends as section 9 says.
#[test]
fn each_answer_ends_its_delivery_as_the_design_says() {
    let mut failures = Vec::new();
    for (i, c) in cases().into_iter().enumerate() {
        let app = App::new(c.source);
        let mut d = delivery(
            &app,
            &format!("test:case:{i}"),
            c.action,
            vec![order("o1", 10)],
        );
        if let Some(n) = c.attempts {
            d.attempts = n;
        }
        let mut fake = app.fake(&c.scripts);
        let out = run(&app, &d, &MemStore::new(), &mut fake, None);
        let ended = match (&c.want, &out.end) {
            (Want::Text(t), End::Completed(v)) => *v == text(t),
            (Want::Bool(b), End::Completed(v)) => *v == Value::Bool(*b),
            (Want::RetryLater(words), End::RetryLater(why)) => why.contains(words),
            (Want::Parked(at, words), End::Parked { step, why }) => {
                step == at && why.contains(words)
            }
            _ => false,
        };
        let counted = [
            c.sends.is_none_or(|(op, n)| fake.sends.get(op) == Some(&n)),
            c.effects.is_none_or(|(op, n)| fake.effects_of(op) == n),
            c.attempts_run.is_none_or(|n| out.attempts == n),
        ];
        if !ended || counted.contains(&false) {
            failures.push(format!(
                "{}: wanted {:?}, sends {:?}, effects {:?}, attempts {:?}; got {:?}, sends {:?}, attempts {}",
                c.rule, c.want, c.sends, c.effects, c.attempts_run, out.end, fake.sends, out.attempts
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
