//! Divergence, leases, the commit transaction, faults and the crash matrix.

use crate::support;

use jadpo_checker::plan::Point;
use jadpo_runtime::eval::Divergence;
use jadpo_runtime::fake::Scripted;
use jadpo_runtime::record::{StepRow, StoredRecord};
use jadpo_runtime::store::{
    Commit, CommitError, Commits, DeliveryState, Fenced, Items, Lease, MemStore, Queue, Records,
    Result as StoreResult, Rows, Write,
};
use jadpo_runtime::value::Value;
use jadpo_runtime::{CrashAt, End};
use support::*;

const TWO: &str = "
decline step.late_failure \"tests\"
action pay_twice(req: OrderReq) fails pay.Declined -> Text {
    var a = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: req.amount })
    var b = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: req.amount + 1 })
    return b.id
}";

/// Runs attempt 1 of `first` with step 2 lost and one attempt only, so the
/// record keeps step 1 answered and step 2 in doubt; then delivers again
/// under `second`'s code, into the same store.
fn rerun_under(first: &str, second: &str) -> End {
    let a = App::new(first);
    let mut d = delivery(&a, "test:diverge:1", "pay_twice", vec![order("o1", 10)]);
    d.attempts = 1;
    let store = MemStore::new();
    let mut fake = a.fake(&[(
        "pay.charges.create",
        vec![
            charge("ch_1", 10),
            Scripted::Lost(Box::new(charge("ch_2", 11))),
        ],
    )]);
    let out = run(&a, &d, &store, &mut fake, None);
    assert!(matches!(out.end, End::RetryLater(_)), "{out:#?}");
    let b = App::new(second);
    let d = delivery(&b, "test:diverge:1", "pay_twice", vec![order("o1", 10)]);
    let mut fake = b.fake(&[
        (
            "pay.charges.create",
            vec![charge("ch_1", 10), charge("ch_2", 11)],
        ),
        ("pay.tags.put", vec![charge("t_1", 10)]),
    ]);
    let out = run(&b, &d, &store, &mut fake, None);
    assert_eq!(fake.effects().len(), 0, "nothing is sent before it is held");
    out.end
}

#[test]
fn a_rerun_whose_step_is_another_operation_is_held() {
    let second = "
decline step.late_failure \"tests\"
action pay_twice(req: OrderReq) fails pay.Declined -> Text {
    var a = attempt pay.tags.put(pay.ChargeReq { order: req.id amount: req.amount })
    var b = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: req.amount + 1 })
    return b.id
}";
    let End::Held(Divergence {
        step, operation, ..
    }) = rerun_under(TWO, second)
    else {
        panic!("should be held");
    };
    assert_eq!((step, operation.as_str()), (1, "pay.charges.create"));
}

#[test]
fn a_rerun_whose_request_differs_names_the_fields_that_differ() {
    let second = "
decline step.late_failure \"tests\"
action pay_twice(req: OrderReq) fails pay.Declined -> Text {
    var a = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: req.amount * 2 })
    var b = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: req.amount + 1 })
    return b.id
}";
    let End::Held(Divergence { step, fields, .. }) = rerun_under(TWO, second) else {
        panic!("should be held");
    };
    assert_eq!(step, 1);
    assert_eq!(fields, ["amount"]);
}

#[test]
fn a_rerun_that_ends_before_a_recorded_step_is_held() {
    let second = "
decline step.late_failure \"tests\"
action pay_twice(req: OrderReq) fails pay.Declined -> Text {
    var a = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: req.amount })
    if req.amount > 5 {
        return a.id
    }
    var b = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: req.amount + 1 })
    return b.id
}";
    let End::Held(Divergence { step, why, .. }) = rerun_under(TWO, second) else {
        panic!("should be held");
    };
    assert_eq!(step, 2);
    assert!(why.contains("recorded"), "{why}");
}

#[test]
fn a_record_cannot_switch_from_replayed_steps_to_a_single_call() {
    let second = "
action pay_twice(req: OrderReq) fails pay.Declined -> Text {
    var a = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: req.amount })
    return a.id
}";
    let End::Held(Divergence { why, .. }) = rerun_under(TWO, second) else {
        panic!("should be held");
    };
    assert!(why.contains("kept as steps"), "{why}");
}

/// A store that hands everything to a `MemStore`, with a hook before each
/// step write and each commit: what another runner does meanwhile.
struct Hooked<'a> {
    inner: &'a MemStore,
    before_step: &'a dyn Fn(&MemStore, &StoredRecord),
    before_commit: &'a dyn Fn(&MemStore, &Commit),
}

impl Records for Hooked<'_> {
    fn record(&self, d: &str) -> StoreResult<Option<StoredRecord>> {
        self.inner.record(d)
    }
    fn put_step(
        &self,
        d: &str,
        lease: &Lease,
        r: &StoredRecord,
        step: &StepRow,
    ) -> Result<(), Fenced> {
        (self.before_step)(self.inner, r);
        self.inner.put_step(d, lease, r, step)
    }
    fn truncate_steps(&self, d: &str, lease: &Lease, position: u32) -> Result<(), Fenced> {
        self.inner.truncate_steps(d, lease, position)
    }
}

impl Rows for Hooked<'_> {
    fn select(
        &self,
        e: jadpo_compiler::ir::EntityId,
        f: &[(jadpo_compiler::intern::Name, Value)],
    ) -> StoreResult<Vec<jadpo_runtime::store::Row>> {
        self.inner.select(e, f)
    }
}

impl Commits for Hooked<'_> {
    fn commit(&self, c: &Commit, lease: &Lease) -> Result<(), CommitError> {
        (self.before_commit)(self.inner, c);
        self.inner.commit(c, lease)
    }
}

#[test]
fn a_runner_whose_lease_lapsed_stops_before_sending_another_step() {
    let app = App::new(TWO);
    let d = delivery(&app, "test:lease:1", "pay_twice", vec![order("o1", 10)]);
    let store = MemStore::new();
    let mut fake = app.fake(&[(
        "pay.charges.create",
        vec![charge("ch_1", 10), charge("ch_2", 11)],
    )]);
    // The runner holds the lease it took; another runner takes the
    // delivery before step 2 is recorded.
    let stolen = std::cell::Cell::new(false);
    let steal = |m: &MemStore, r: &StoredRecord| {
        if !stolen.get() && r.steps.len() == 2 {
            stolen.set(true);
            let _ = m.take("test:lease:1", 1000, at(T0));
        }
    };
    let hooked = Hooked {
        inner: &store,
        before_step: &steal,
        before_commit: &|_, _| {},
    };
    let out = app.runtime().deliver(&d, &hooked, &store, &mut fake, None);
    assert_eq!(out.end, End::LeaseLost, "{out:#?}");
    assert_eq!(
        fake.effects_of("pay.charges.create"),
        1,
        "step 2 was never sent"
    );
}

const SAVE: &str = "
decline step.late_failure \"tests\"
action save(req: OrderReq) fails pay.Declined, Refused -> Text {
    var a = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: 1 })
    var b = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: 2 })
    attempt create Order { id: req.id charge: b.id } conflict: Refused
    emit Paid { order: req.id } with { unique: { by_args: true } }
    return b.id
}";

fn order_entity(app: &App) -> jadpo_compiler::ir::EntityId {
    let i = app
        .program
        .entities
        .iter()
        .position(|e| e.qualified == "Order");
    jadpo_compiler::ir::EntityId(i.unwrap_or(0) as u32)
}

#[test]
fn a_duplicate_unique_follow_up_is_skipped_and_the_commit_lands() {
    let app = App::new(SAVE);
    let store = MemStore::new();
    let script = || {
        app.fake(&[(
            "pay.charges.create",
            vec![charge("ch_1", 1), charge("ch_2", 2)],
        )])
    };
    let d1 = delivery(&app, "test:unique:1", "save", vec![order("o1", 1)]);
    let out = run(&app, &d1, &store, &mut script(), None);
    assert_eq!(out.end, End::Completed(text("ch_2")));
    // The same follow-up (same event and payload) from another order's
    // delivery that emits for o1 too: a different row, the same unique key.
    let app2 = App::new(
        "
decline step.late_failure \"tests\"
action again(req: OrderReq) fails pay.Declined -> Unit {
    var a = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: 1 })
    var b = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: 2 })
    emit Paid { order: \"o1\" } with { unique: { by_args: true } }
}",
    );
    let d2 = delivery(&app2, "test:unique:2", "again", vec![order("o2", 1)]);
    let mut fake = app2.fake(&[(
        "pay.charges.create",
        vec![charge("ch_1", 1), charge("ch_2", 2)],
    )]);
    let out = run(&app2, &d2, &store, &mut fake, None);
    assert_eq!(out.end, End::Completed(Value::Unit), "{out:#?}");
    assert!(
        store.handled("test:unique:2").unwrap_or(false),
        "the commit landed"
    );
    assert_eq!(store.outbox().len(), 1, "the duplicate was skipped");
}

#[test]
fn a_create_with_an_existing_key_fails_with_its_conflict_failure() {
    let app = App::new(SAVE);
    let store = MemStore::new();
    let d = delivery(&app, "test:conflict:1", "save", vec![order("o1", 1)]);
    let mut fake = app.fake(&[(
        "pay.charges.create",
        vec![charge("ch_1", 1), charge("ch_2", 2)],
    )]);
    assert!(matches!(
        run(&app, &d, &store, &mut fake, None).end,
        End::Completed(_)
    ));
    let d = delivery(&app, "test:conflict:2", "save", vec![order("o1", 1)]);
    let out = run(&app, &d, &store, &mut fake, None);
    let End::Failed(f) = &out.end else {
        panic!("{out:#?}");
    };
    assert_eq!(f.failure, app.failure("Refused"));
    assert_eq!(store.rows(order_entity(&app)).len(), 1);
}

#[test]
fn a_commit_that_meets_another_deliverys_commit_retries_later() {
    let app = App::new(SAVE);
    let store = MemStore::new();
    let entity = order_entity(&app);
    let raced = std::cell::Cell::new(false);
    // Another delivery commits the same key just before the first commit.
    let race = |m: &MemStore, c: &Commit| {
        if raced.replace(true) {
            return;
        }
        let other = m
            .take("other", 1000, at(T0))
            .ok()
            .flatten()
            .expect("a lease");
        let row = rec(&[("id", text("o1")), ("charge", text("ch_other"))]);
        let commit = Commit {
            delivery: "other".into(),
            at: c.at,
            writes: vec![Write::Create {
                entity,
                key: text("o1").canonical(),
                value: row,
            }],
            follow_ups: Vec::new(),
            steps: Vec::new(),
            response: None,
        };
        let _ = m.commit(&commit, &other);
    };
    let hooked = Hooked {
        inner: &store,
        before_step: &|_, _| {},
        before_commit: &race,
    };
    let d = delivery(&app, "test:race:1", "save", vec![order("o1", 1)]);
    let mut fake = app.fake(&[(
        "pay.charges.create",
        vec![charge("ch_1", 1), charge("ch_2", 2)],
    )]);
    let out = app.runtime().deliver(&d, &hooked, &store, &mut fake, None);
    // Attempt 1's commit conflicts; attempt 2 replays both steps and its
    // create now fails with the conflict failure.
    assert_eq!(out.attempts, 2, "{out:#?}");
    let End::Failed(f) = &out.end else {
        panic!("{out:#?}");
    };
    assert_eq!(f.failure, app.failure("Refused"));
    assert_eq!(fake.effects_of("pay.charges.create"), 2);
}

#[test]
fn a_constraint_broken_at_run_time_faults_and_commits_nothing() {
    let app = App::new(
        "
decline step.late_failure \"tests\"
action long(req: OrderReq) fails pay.Declined -> Unit {
    var a = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: 1 })
    var b = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: 2 })
    attempt create Order { id: req.id + req.id + req.id charge: b.id }
}",
    );
    let long = "x".repeat(30);
    let d = delivery(&app, "test:fault:1", "long", vec![order(&long, 1)]);
    let store = MemStore::new();
    let mut fake = app.fake(&[(
        "pay.charges.create",
        vec![charge("ch_1", 1), charge("ch_2", 2)],
    )]);
    let out = run(&app, &d, &store, &mut fake, None);
    let End::Faulted(why) = &out.end else {
        panic!("{out:#?}");
    };
    assert!(why.contains("max_length 64"), "{why}");
    assert!(store.rows(order_entity(&app)).is_empty());
    assert_eq!(
        store.items(false).unwrap_or_default()[0].outcome,
        DeliveryState::Fault
    );
    assert!(store.record_of(&d.id).is_some(), "the record is kept");
}

#[test]
fn an_answer_over_a_megabyte_is_a_fault_naming_the_step() {
    let app = App::new(TWO);
    let d = delivery(&app, "test:big:1", "pay_twice", vec![order("o1", 1)]);
    let big = "y".repeat(1_100_000);
    let mut fake = app.fake(&[(
        "pay.charges.create",
        vec![charge("ch_1", 1), charge(&big, 2)],
    )]);
    let out = run(&app, &d, &MemStore::new(), &mut fake, None);
    let End::Faulted(why) = &out.end else {
        panic!("{out:#?}");
    };
    assert!(why.contains("step 2"), "{why}");
    assert!(why.contains("1048576"), "{why}");
}

const FOUR: &str = "
decline step.late_failure \"tests\"
action four(req: OrderReq) fails pay.Declined -> Text {
    var a = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: req.amount })
    var b = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: req.amount + 1 })
    var c = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: req.amount + 2 })
    var d = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: req.amount + 3 })
    attempt create Order { id: req.id charge: d.id }
    emit Paid { order: req.id } with { unique: { by_args: true } }
    return d.id
}";

/// The end state a run leaves: the outcome, the rows, the outbox and the
/// fake's effects.
fn end_state(app: &App, crash: Option<CrashAt>) -> (End, Vec<Value>, usize, Vec<String>, bool) {
    let d = delivery(app, "test:matrix:1", "four", vec![order("o1", 10)]);
    let store = MemStore::new();
    let mut fake = app.fake(&[(
        "pay.charges.create",
        vec![
            charge("ch_1", 10),
            charge("ch_2", 11),
            charge("ch_3", 12),
            charge("ch_4", 13),
        ],
    )]);
    let out = run(app, &d, &store, &mut fake, crash);
    let mut effects: Vec<String> = fake
        .effects()
        .iter()
        .map(|e| format!("{} {:?} {:?}", e.operation, e.request, e.answer))
        .collect();
    effects.sort();
    (
        out.end,
        store.rows(order_entity(app)),
        store.outbox().len(),
        effects,
        out.crashed,
    )
}

#[test]
fn a_crash_at_each_point_of_each_step_resumes_to_the_same_end() {
    let app = App::new(FOUR);
    let clean = end_state(&app, None);
    assert_eq!(clean.0, End::Completed(text("ch_4")));
    assert_eq!(clean.3.len(), 4);
    let mut runs = 0;
    for step in 1..=4 {
        for point in Point::ALL {
            let crashed = end_state(&app, Some(CrashAt { step, point }));
            assert!(crashed.4, "the crash at step {step} {point:?} struck");
            assert_eq!(
                (&crashed.0, &crashed.1, crashed.2, &crashed.3),
                (&clean.0, &clean.1, clean.2, &clean.3),
                "a crash at step {step} {}",
                point.as_str()
            );
            runs += 1;
        }
    }
    assert_eq!(runs, 12);
}

#[test]
fn the_same_delivery_gives_the_same_listing_and_record_every_time() {
    let app = App::new(FOUR);
    let one = || {
        let mut d = delivery(&app, "test:same:1", "four", vec![order("o1", 10)]);
        d.attempts = 1;
        let store = MemStore::new();
        let mut fake = app.fake(&[(
            "pay.charges.create",
            vec![
                charge("ch_1", 10),
                charge("ch_2", 11),
                Scripted::Lost(Box::new(charge("ch_3", 12))),
            ],
        )]);
        let out = run(&app, &d, &store, &mut fake, None);
        format!("{:?}\n{:?}", out, store.record_of(&d.id))
    };
    let first = one();
    assert!(first.contains("Sealed"), "the record is kept");
    for _ in 0..3 {
        assert_eq!(one(), first);
    }
    let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build();
    if let Ok(pool) = pool {
        let all: Vec<String> = pool.install(|| {
            use rayon::prelude::*;
            (0..8).into_par_iter().map(|_| one()).collect()
        });
        assert!(all.iter().all(|r| *r == first));
    }
}
