//! `examples/billing`'s actions run against fakes with the outcomes design
//! section 9 prescribes; the plan's crash points drive the crash hook.

use crate::support;

use std::collections::BTreeMap;

use jadpo_checker::plan::Point;
use jadpo_compiler::intern::Name;
use jadpo_compiler::load::FsLoader;
use jadpo_runtime::fake::Scripted;
use jadpo_runtime::store::{DeliveryState, Items, MemStore};
use jadpo_runtime::value::Value;
use jadpo_runtime::{CrashAt, Delivery, End, Outcome};
use support::*;

fn billing() -> App {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/billing");
    App::from_loader(&FsLoader, root)
}

fn request() -> Value {
    rec(&[
        ("email", text("ada@example.com")),
        ("price", text("price_basic")),
        ("payment_method", text("pm_1")),
    ])
}

fn d(app: &App, id: &str, action: &str, args: Vec<Value>) -> Delivery {
    let mut config = BTreeMap::new();
    config.insert(Name::new("steps_key"), text("test-only-key"));
    config.insert(Name::new("basic_price"), text("price_basic"));
    Delivery {
        id: id.into(),
        action: app.action(action),
        args,
        config,
        start: at(T0),
        attempts: 5,
        retry_after_ms: minutes(1),
        limits: Default::default(),
    }
}

fn price() -> Scripted {
    Scripted::Answer(rec(&[
        ("id", text("price_basic")),
        ("amount", Value::Int(900)),
        ("currency", text("eur")),
    ]))
}

fn customer() -> Scripted {
    Scripted::Answer(rec(&[
        ("id", text("cus_1")),
        ("email", text("ada@example.com")),
    ]))
}

fn method() -> Scripted {
    Scripted::Answer(rec(&[("id", text("pm_1")), ("customer", text("cus_1"))]))
}

fn subscription() -> Scripted {
    Scripted::Answer(rec(&[
        ("id", text("sub_1")),
        ("customer", text("cus_1")),
        ("status", text("active")),
    ]))
}

fn happy(app: &App) -> jadpo_runtime::fake::Fake {
    app.fake(&[
        ("stripe.prices.retrieve", vec![price()]),
        ("stripe.customers.create", vec![customer()]),
        ("stripe.payment_methods.attach", vec![method()]),
        ("stripe.subscriptions.create", vec![subscription()]),
    ])
}

fn entity(app: &App, name: &str) -> jadpo_compiler::ir::EntityId {
    let i = app
        .program
        .entities
        .iter()
        .position(|e| e.qualified == name);
    jadpo_compiler::ir::EntityId(i.unwrap_or(0) as u32)
}

#[test]
fn subscribe_runs_three_keyed_steps_and_commits() {
    let app = billing();
    let store = MemStore::new();
    let mut fake = happy(&app);
    let out = run(
        &app,
        &d(&app, "test:subscribe:1", "subscribe", vec![request()]),
        &store,
        &mut fake,
        None,
    );
    assert_eq!(out.end, End::Completed(text("sub_1")), "{out:#?}");
    let listed: Vec<(u32, &str, &str, &str)> = out
        .steps
        .iter()
        .map(|s| (s.position, s.operation.as_str(), s.state, s.detail.as_str()))
        .collect();
    assert_eq!(
        listed,
        [
            (1, "stripe.customers.create", "answered", "cus_1"),
            (2, "stripe.payment_methods.attach", "answered", "pm_1"),
            (3, "stripe.subscriptions.create", "answered", "sub_1"),
        ],
        "the read before the first changing call is not a step"
    );
    assert_eq!(store.rows(entity(&app, "Subscription")).len(), 1);
    assert_eq!(store.outbox().len(), 1);
    assert_eq!(store.outbox()[0].follow.queue, "billing");
    assert_eq!(store.outbox()[0].follow.priority, 2);
}

#[test]
fn a_declined_subscription_rejects_payment_refused_and_writes_nothing() {
    let app = billing();
    let store = MemStore::new();
    let mut fake = app.fake(&[
        ("stripe.prices.retrieve", vec![price()]),
        ("stripe.customers.create", vec![customer()]),
        ("stripe.payment_methods.attach", vec![method()]),
        (
            "stripe.subscriptions.create",
            vec![Scripted::Fail {
                failure: app.failure("stripe.CardDeclined"),
                fields: Value::Unit,
            }],
        ),
    ]);
    let out = run(
        &app,
        &d(&app, "test:declined:1", "subscribe", vec![request()]),
        &store,
        &mut fake,
        None,
    );
    let End::Failed(f) = &out.end else {
        panic!("{out:#?}");
    };
    assert_eq!(f.failure, app.failure("PaymentRefused"));
    assert!(store.rows(entity(&app, "Subscription")).is_empty());
    assert!(store.outbox().is_empty());
    assert_eq!(
        store.items(false).unwrap_or_default()[0].outcome,
        DeliveryState::Failed
    );
}

#[test]
fn a_lost_subscription_is_resumed_under_the_same_key() {
    let app = billing();
    let store = MemStore::new();
    let mut fake = app.fake(&[
        ("stripe.prices.retrieve", vec![price()]),
        ("stripe.customers.create", vec![customer()]),
        ("stripe.payment_methods.attach", vec![method()]),
        (
            "stripe.subscriptions.create",
            vec![Scripted::Lost(Box::new(subscription()))],
        ),
    ]);
    let out = run(
        &app,
        &d(&app, "test:lost:1", "subscribe", vec![request()]),
        &store,
        &mut fake,
        None,
    );
    assert_eq!(out.end, End::Completed(text("sub_1")), "{out:#?}");
    assert_eq!(out.attempts, 2);
    assert_eq!(fake.effects_of("stripe.subscriptions.create"), 1);
    assert_eq!(fake.effects_of("stripe.customers.create"), 1);
    let states: Vec<&str> = out.steps.iter().map(|s| s.state).collect();
    assert_eq!(states, ["replayed", "replayed", "answered"]);
}

#[test]
fn a_stripe_5xx_parks_as_outcome_unknown() {
    let app = billing();
    let store = MemStore::new();
    let mut fake = app.fake(&[
        ("stripe.prices.retrieve", vec![price()]),
        ("stripe.customers.create", vec![customer()]),
        ("stripe.payment_methods.attach", vec![method()]),
        ("stripe.subscriptions.create", vec![Scripted::ServerError]),
    ]);
    let out = run(
        &app,
        &d(&app, "test:5xx:1", "subscribe", vec![request()]),
        &store,
        &mut fake,
        None,
    );
    let End::Parked { step, why } = &out.end else {
        panic!("{out:#?}");
    };
    assert_eq!(*step, 3);
    assert!(
        why.contains("5xx") && why.contains("2026-01-16T12:00:00"),
        "{why}"
    );
}

#[test]
fn a_charge_already_refunded_answers_false() {
    let app = billing();
    let mut fake = app.fake(&[(
        "stripe.refunds.create",
        vec![Scripted::Fail {
            failure: app.failure("stripe.ChargeAlreadyRefunded"),
            fields: Value::Unit,
        }],
    )]);
    let refund = rec(&[("charge", text("ch_1"))]);
    let out = run(
        &app,
        &d(&app, "test:refund:1", "refund_charge", vec![refund]),
        &MemStore::new(),
        &mut fake,
        None,
    );
    assert_eq!(out.end, End::Completed(Value::Bool(false)), "{out:#?}");
}

#[test]
fn half_of_one_cent_is_not_a_stripe_amount() {
    let app = billing();
    let refund = |paid: i64| rec(&[("charge", text("ch_1")), ("paid", Value::Int(paid))]);
    let answer = Scripted::Answer(rec(&[
        ("id", text("re_1")),
        ("charge", text("ch_1")),
        ("amount", Value::Int(450)),
        ("status", text("succeeded")),
    ]));
    let mut fake = app.fake(&[("stripe.refunds.create", vec![answer])]);
    let out = run(
        &app,
        &d(&app, "test:half:1", "refund_half", vec![refund(900)]),
        &MemStore::new(),
        &mut fake,
        None,
    );
    assert_eq!(out.end, End::Completed(Value::Bool(true)));
    let out = run(
        &app,
        &d(&app, "test:half:2", "refund_half", vec![refund(1)]),
        &MemStore::new(),
        &mut fake,
        None,
    );
    let End::Failed(f) = &out.end else {
        panic!("{out:#?}");
    };
    assert_eq!(f.failure, app.failure("InvalidValue"));
    assert_eq!(
        fake.effects_of("stripe.refunds.create"),
        1,
        "nothing was sent for 0 cents"
    );
}

#[test]
fn a_subscription_is_read_back_from_the_store() {
    let app = billing();
    let store = MemStore::new();
    let show = |store: &MemStore, n: u32| -> Outcome {
        let mut fake = happy(&app);
        let delivery = d(
            &app,
            &format!("test:show:{n}"),
            "show_subscription",
            vec![text("sub_1")],
        );
        run(&app, &delivery, store, &mut fake, None)
    };
    let End::Failed(f) = show(&store, 1).end else {
        panic!("no subscription yet");
    };
    assert_eq!(f.failure, app.failure("SubscriptionUnknown"));
    let mut fake = happy(&app);
    run(
        &app,
        &d(&app, "test:show:2", "subscribe", vec![request()]),
        &store,
        &mut fake,
        None,
    );
    let End::Completed(row) = show(&store, 3).end else {
        panic!("the row is there");
    };
    assert_eq!(
        row.as_record().map(|r| r.get(Name::new("customer"))),
        Some(text("cus_1"))
    );
}

#[test]
fn the_subscriber_path_runs_the_packages_steps_as_its_own() {
    let app = billing();
    let store = MemStore::new();
    let mut fake = app.fake(&[
        ("stripe.customers.create", vec![customer()]),
        (
            "stripe.payment_methods.attach",
            vec![Scripted::Lost(Box::new(method()))],
        ),
        ("stripe.subscriptions.create", vec![subscription()]),
    ]);
    let plan = app
        .runtime()
        .action_plan(app.action("subscribe_requested"))
        .cloned();
    let keyed: Vec<bool> = plan
        .map(|p| p.steps.iter().map(|s| s.keyed).collect())
        .unwrap_or_default();
    assert_eq!(keyed, [true, true, true]);
    let delivery = d(
        &app,
        "test:subscriber:1:start_subscription",
        "subscribe_requested",
        vec![request()],
    );
    let out = run(&app, &delivery, &store, &mut fake, None);
    assert_eq!(out.end, End::Completed(Value::Unit), "{out:#?}");
    assert_eq!(fake.effects().len(), 3);
    assert_eq!(store.rows(entity(&app, "Subscription")).len(), 1);
}

#[test]
fn the_plans_crash_points_resume_subscribe_to_the_same_end() {
    let app = billing();
    let plan = app
        .runtime()
        .action_plan(app.action("subscribe"))
        .cloned()
        .expect("planned");
    let end = |crash: Option<CrashAt>| {
        let store = MemStore::new();
        let mut fake = happy(&app);
        let out = run(
            &app,
            &d(&app, "test:crash:1", "subscribe", vec![request()]),
            &store,
            &mut fake,
            crash,
        );
        let mut effects: Vec<String> = fake
            .effects()
            .iter()
            .map(|e| format!("{} {:?}", e.operation, e.request))
            .collect();
        effects.sort();
        (
            out.end,
            store.rows(entity(&app, "Subscription")),
            store.outbox().len(),
            effects,
            out.crashed,
        )
    };
    let clean = end(None);
    let mut runs = 0;
    for cp in &plan.crash_points {
        // The plan's step ids count from 1; subscribe's three steps are
        // made in their listed order, so step id i is step number i.
        let crash = CrashAt {
            step: cp.step as u32,
            point: cp.point,
        };
        let crashed = end(Some(crash));
        assert!(crashed.4, "{cp:?} struck");
        assert_eq!(
            (&crashed.0, &crashed.1, crashed.2, &crashed.3),
            (&clean.0, &clean.1, clean.2, &clean.3),
            "{cp:?}"
        );
        runs += 1;
    }
    assert_eq!(runs, 9);
    assert!(plan
        .crash_points
        .iter()
        .any(|c| c.point == Point::AfterSendBeforeRecord));
}
