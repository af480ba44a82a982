//! The test runner (design `testing.md` sections 8 to 10), one test per
//! rule: answers in order with the last repeating, kept keys using no
//! answer, `in_use` waited on, statements and their expectations,
//! `deliver` to each subscriber or one, the counts, the test clock, each
//! test's isolation, config from the fixture, and which deliveries the
//! crash matrix runs and how often.

use crate::support;

use jadpo_runtime::suite::{FailureKind, Options, Suite, TestReport};
use support::App;

const CODE: &str = r#"
action charge(o: OrderReq) fails pay.Declined -> pay.Charge {
    return attempt pay.charges.create(pay.ChargeReq { order: o.id amount: o.amount })
}

// Two changing calls: multi-step, two steps.
action charge_and_tag(o: OrderReq) fails pay.Declined -> Text {
    var c = attempt pay.charges.create(pay.ChargeReq { order: o.id amount: o.amount })
    attempt pay.tags.put(pay.ChargeReq { order: o.id amount: 0 })
    attempt create Order { id: o.id charge: c.id }
    emit Paid { order: o.id } with { unique: { } }
    return c.id
}

action replays(o: OrderReq) fails pay_replays.Declined -> Text {
    var c = attempt pay_replays.charges.create(pay_replays.ChargeReq { order: o.id amount: o.amount })
    attempt pay_replays.tags.put(pay_replays.ChargeReq { order: o.id amount: 0 })
    return c.id
}

action store_order(o: OrderReq) -> Unit {
    attempt create Order { id: o.id charge: "none" }
}

// A read after the first changing call: a step, sent again after a crash.
action charge_read_tag(o: OrderReq) fails pay.Declined -> Int {
    attempt pay.charges.create(pay.ChargeReq { order: o.id amount: o.amount })
    var seen = attempt pay.charges.get(pay.ChargeReq { order: o.id amount: 0 })
    attempt pay.tags.put(pay.ChargeReq { order: o.id amount: 0 })
    return seen.amount
}

action stamp() -> Instant {
    return clock.now
}

action key() -> Text {
    return config.steps_key
}

action first(p: Paid) -> Unit {
    attempt create Order { id: p.order charge: "first" }
}

action second(p: Paid) fails Refused -> Unit {
    if p.order == "refuse" {
        reject Refused
    }
}

subscriber on_paid_first on Paid {
    run: first(event)
}

subscriber on_paid_second on Paid {
    run: second(event)
}

function o(id: Text { max_length: 64 }) -> OrderReq {
    return OrderReq { id: id amount: 100 }
}
"#;

/// Runs the tests of an app of `CODE` plus `tests`.
fn reports(tests: &str, options: Options<'_>) -> Vec<TestReport> {
    let app = App::new(&format!("{CODE}\n{tests}"));
    Suite::new(&app.program, &app.plan).run(options)
}

fn one(tests: &str) -> TestReport {
    let mut all = reports(tests, Options::default());
    assert_eq!(all.len(), 1, "one test expected");
    all.remove(0)
}

fn assert_passes(r: &TestReport) {
    assert!(r.passed(), "test {:?} failed: {:#?}", r.name, r.failures);
}

#[test]
fn answers_are_used_in_order_and_the_last_repeats() {
    let r = one(r#"
fixture two {
    fake pay {
        charges.create => fail pay.Declined
        charges.create => pay.Charge { id: "ch_2" amount: 100 }
    }
}

test "in order" using two {
    call charge(o("a")) fails pay.Declined
    var b = call charge(o("b"))
    var c = call charge(o("c"))
    assert b.id == "ch_2"
    assert c.id == "ch_2"
    assert sent pay.charges.create == 2
}
"#);
    assert_passes(&r);
}

#[test]
fn a_kept_key_answers_without_using_an_answer() {
    let r = one(r#"
fixture lost_first {
    fake pay {
        charges.create => lost pay.Charge { id: "ch_1" amount: 100 }
        charges.create => pay.Charge { id: "ch_2" amount: 100 }
        charges.create => pay.Charge { id: "ch_3" amount: 100 }
        tags.put => pay.Charge { id: "tag" amount: 0 }
    }
}

test "resend under the kept key" using lost_first {
    var first = call charge_and_tag(o("a"))
    var second = call charge_and_tag(o("b"))
    assert first == "ch_1"
    assert second == "ch_2"
    assert sent pay.charges.create == 2
}
"#);
    assert_passes(&r);
    assert_eq!(
        r.crash_runs, 12,
        "two deliveries of two steps, three points each"
    );
}

#[test]
fn in_use_is_waited_on_and_never_a_failure() {
    let r = one(r#"
fixture busy {
    attempts: 2
    fake pay {
        charges.create => in_use
    }
}

test "key in use" using busy {
    call charge(o("a")) ends retry_later
    assert sent pay.charges.create == 0
}
"#);
    assert_passes(&r);
    assert_eq!(
        r.crash_runs, 0,
        "a delivery left retry-later is not in the matrix"
    );
}

#[test]
fn a_5xx_on_a_step_of_a_replaying_provider_parks_and_is_crash_tested() {
    let r = one(r#"
fixture down {
    fake pay_replays {
        charges.create => server_error
    }
}

test "parks" using down {
    call replays(o("a")) ends outcome_unknown
}
"#);
    assert_passes(&r);
    assert_eq!(r.crash_runs, 3, "one step sent, three points");
}

#[test]
fn a_delivery_that_ends_otherwise_fails_the_test_with_its_steps() {
    let r = one(r#"
fixture fine {
    fake pay {
        charges.create => pay.Charge { id: "ch_1" amount: 100 }
        tags.put => pay.Charge { id: "tag" amount: 0 }
    }
}

test "expects a decline" using fine {
    call charge_and_tag(o("a")) fails pay.Declined
    assert false
}
"#);
    assert_eq!(r.failures.len(), 1, "the test stops at its first failure");
    let f = &r.failures[0];
    assert_eq!(f.kind, FailureKind::Outcome);
    assert!(
        f.message
            .contains("to fail with `pay.Declined`; it completed"),
        "{}",
        f.message
    );
    assert_eq!(f.steps.len(), 2);
    assert_eq!(r.crash_runs, 0, "a failing test runs no crash matrix");
}

#[test]
fn an_unscripted_call_fails_the_test() {
    let r = one("test \"nothing scripted\" {\n    call charge(o(\"a\"))\n}\n");
    assert_eq!(r.failures[0].kind, FailureKind::Unscripted);
    assert!(r.failures[0]
        .message
        .contains("no answer scripted for `pay.charges.create`"));
}

#[test]
fn deliver_runs_each_subscriber_in_order_or_the_one_named() {
    let r = one(r#"
test "both subscribers" {
    deliver Paid { order: "p1" }
    assert stored Order == 1
    deliver Paid { order: "refuse" } to on_paid_second fails Refused
    assert stored Order == 1
    deliver Paid { order: "p2" } to on_paid_first
    assert stored Order == 2
}
"#);
    assert_passes(&r);
}

#[test]
fn counts_see_committed_rows_and_inserted_events_only() {
    let r = one(r#"
fixture fine {
    fake pay {
        charges.create => pay.Charge { id: "ch_1" amount: 100 }
        charges.create => fail pay.Declined
        charges.create => pay.Charge { id: "ch_3" amount: 100 }
        tags.put => pay.Charge { id: "tag" amount: 0 }
    }
}

test "counts" using fine {
    call charge_and_tag(o("a"))
    call charge_and_tag(o("b")) fails pay.Declined
    assert stored Order == 1
    assert emitted Paid == 1
    call store_order(o("a")) ends fault
    assert stored Order == 1
}
"#);
    assert_passes(&r);
}

#[test]
fn a_duplicate_unique_follow_up_is_skipped_and_not_counted() {
    let r = one(r#"
fixture fine {
    fake pay {
        charges.create => pay.Charge { id: "ch_1" amount: 100 }
        tags.put => pay.Charge { id: "tag" amount: 0 }
    }
}

test "unique" using fine {
    call charge_and_tag(o("a"))
    call store_order(o("x"))
    assert emitted Paid == 1
}
"#);
    assert_passes(&r);
}

#[test]
fn the_test_clock_starts_at_the_fixture_and_moves_by_retries_and_advance() {
    let r = one(r#"
fixture late {
    clock: "2026-03-01T09:00:00Z"
    retry_after: 5m
    fake pay {
        charges.create => lost pay.Charge { id: "ch_1" amount: 100 }
    }
}

// `charge` makes one changing call: no record, no crash runs, so the
// clock after its retried delivery is the same in every run.
test "clock" using late {
    var start = clock.now
    var at = call stamp()
    assert at == start
    call charge(o("a"))
    assert clock.now == start + 5m
    advance clock by 1h
    var later = call stamp()
    assert later == start + 65m
}
"#);
    assert_passes(&r);
}

#[test]
fn a_test_without_a_fixture_starts_at_the_default_clock() {
    let r = one(r#"
test "default clock" {
    var at = call stamp()
    advance clock by 1m
    assert at + 1m == clock.now
    assert at < clock.now
}
"#);
    assert_passes(&r);
}

#[test]
fn every_test_starts_with_empty_stores_and_fresh_fakes() {
    let all = reports(
        r#"
fixture fine {
    fake pay {
        charges.create => pay.Charge { id: "ch_1" amount: 100 }
        charges.create => pay.Charge { id: "ch_2" amount: 100 }
        tags.put => pay.Charge { id: "tag" amount: 0 }
    }
}

test "one" using fine {
    var id = call charge_and_tag(o("a"))
    assert id == "ch_1"
    assert stored Order == 1
}

test "two" using fine {
    var id = call charge_and_tag(o("a"))
    assert id == "ch_1"
    assert stored Order == 1
}
"#,
        Options::default(),
    );
    for r in &all {
        assert_passes(r);
    }
}

#[test]
fn config_comes_from_the_fixture() {
    let r = one(r#"
fixture keyed {
    config: { steps_key: "from the fixture" }
}

test "config" using keyed {
    var k = call key()
    assert k == "from the fixture"
    assert config.steps_key == "from the fixture"
}
"#);
    assert_passes(&r);
}

#[test]
fn filter_and_no_crash_select() {
    let tests = r#"
fixture fine {
    fake pay {
        charges.create => pay.Charge { id: "ch_1" amount: 100 }
        tags.put => pay.Charge { id: "tag" amount: 0 }
    }
}

test "alpha" using fine {
    call charge_and_tag(o("a"))
}

test "beta" using fine {
    call charge_and_tag(o("a"))
}
"#;
    let only = reports(
        tests,
        Options {
            filter: Some("bet"),
            ..Options::default()
        },
    );
    assert_eq!(only.len(), 1);
    assert_eq!((only[0].name.as_str(), only[0].crash_runs), ("beta", 6));
    let clean = reports(
        tests,
        Options {
            no_crash: true,
            ..Options::default()
        },
    );
    assert_eq!(clean.iter().map(|r| r.crash_runs).sum::<u32>(), 0);
}

#[test]
fn the_ai_capability_is_faked_like_a_package() {
    let r = one(r#"
action summarize(text: Text { max_length: 100 }) fails ai.ContentRefused -> Text {
    var c = attempt ai.generate(ai.Prompt { text: text })
    return c.text
}

fixture model {
    fake ai {
        generate => ai.Completion { text: "short" }
        generate => fail ai.ContentRefused
    }
}

test "summaries" using model {
    var s = call summarize("a long text")
    assert s == "short"
    call summarize("another") fails ai.ContentRefused
}
"#);
    assert_passes(&r);
}

#[test]
fn a_test_past_its_time_limit_fails_naming_where_it_stopped() {
    let app = App::new(&format!(
        "{CODE}\ntest \"slow\" {{\n    call stamp()\n    call stamp()\n}}\n"
    ));
    let options = Options {
        time_limit: Some(std::time::Duration::from_nanos(1)),
        ..Options::default()
    };
    let r = Suite::new(&app.program, &app.plan).run(options).remove(0);
    assert_eq!(r.failures.len(), 1);
    assert_eq!(r.failures[0].kind, FailureKind::TimeLimit);
    assert!(
        r.failures[0].message.contains("time limit of 1ns"),
        "{}",
        r.failures[0].message
    );
}

#[test]
fn a_recursive_function_in_a_test_expression_is_a_fault_not_a_hang() {
    let r = one(r#"
function forever(n: Int) -> Int {
    return forever(n + 1)
}

test "recursion" {
    var x = forever(0)
    assert x == 1
}
"#);
    assert_eq!(r.failures[0].kind, FailureKind::Fault);
    assert!(
        r.failures[0].message.contains("deep"),
        "{}",
        r.failures[0].message
    );
}

#[test]
fn a_read_step_sent_again_after_a_crash_is_no_effect() {
    let r = one(r#"
fixture read_step {
    fake pay {
        charges.create => pay.Charge { id: "ch_1" amount: 100 }
        charges.get => pay.Charge { id: "ch_1" amount: 100 }
        tags.put => pay.Charge { id: "tag" amount: 0 }
    }
}

test "a read after the first step" using read_step {
    var n = call charge_read_tag(o("a"))
    assert n == 100
    assert sent pay.charges.create == 1
}
"#);
    assert_passes(&r);
    assert_eq!(r.crash_runs, 9, "three steps, the read included");
}

#[test]
fn a_crash_run_keeps_the_clean_runs_time_line() {
    // The clean run's first delivery takes a retry (the tag's answer is
    // lost); a crash after that send resumes at once and completes a minute
    // earlier. The next statement must still start where the clean run's
    // did.
    let r = one(r#"
fixture lost_tag {
    clock: "2026-01-15T12:00:00Z"
    fake pay {
        charges.create => pay.Charge { id: "ch_1" amount: 100 }
        tags.put => lost pay.Charge { id: "tag" amount: 0 }
        tags.put => pay.Charge { id: "tag" amount: 0 }
    }
}

test "the time line" using lost_tag {
    var start = clock.now
    call charge_and_tag(o("a"))
    assert clock.now == start + 1m
    var at = call stamp()
    assert at == start + 1m
}
"#);
    assert_passes(&r);
    assert_eq!(r.crash_runs, 6);
}

#[test]
fn a_unit_action_that_completes_is_described_as_completed() {
    let r = one(r#"
test "expects a fault" {
    call store_order(o("a")) ends fault
}
"#);
    assert_eq!(r.failures[0].kind, FailureKind::Outcome);
    assert_eq!(
        r.failures[0].message,
        "expected `store_order` to end fault; it completed"
    );
}

#[test]
fn a_failing_crash_run_marks_the_first_step_whose_answer_differs() {
    // The read is answered 100 and then 200 under the same id: a crash
    // after its send makes the resend take the second answer. The two
    // listings read the same but for that step's answer.
    let r = one(r#"
fixture moving_read {
    fake pay {
        charges.create => pay.Charge { id: "ch_1" amount: 100 }
        charges.get => pay.Charge { id: "ch_1" amount: 100 }
        charges.get => pay.Charge { id: "ch_1" amount: 200 }
        tags.put => pay.Charge { id: "tag" amount: 0 }
    }
}

test "a moving read" using moving_read {
    call charge_read_tag(o("a"))
}
"#);
    assert_eq!(r.failures.len(), 1, "{:#?}", r.failures);
    let f = &r.failures[0];
    assert_eq!(f.kind, FailureKind::CrashRun);
    assert!(
        f.message.contains("step 2 after_send_before_record"),
        "{}",
        f.message
    );
    assert_eq!(f.differs_at, Some(2));
    let clean = jadpo_runtime::suite::marked_listing_lines(&f.steps, f.differs_at);
    let crashed = jadpo_runtime::suite::marked_listing_lines(&f.crash_steps, f.differs_at);
    assert!(clean[0].starts_with("  1  pay.charges.create"), "{clean:?}");
    assert!(
        clean[1].starts_with("> 2  pay.charges.get")
            && clean[1].ends_with(r#"(answer: {"amount":100,"id":"ch_1"})"#),
        "{clean:?}"
    );
    assert!(
        crashed[1].ends_with(r#"(answer: {"amount":200,"id":"ch_1"})"#),
        "{crashed:?}"
    );
    // The matrix stops at its first failing run: step 1 three times,
    // then step 2 before the send and after it.
    assert_eq!(r.crash_runs, 5);
}
