//! The step rules judged on hand-built IR: each rule fires where the design
//! says, through branches and package actions, and stays quiet otherwise.

use crate::support;

use support::B;

fn charges(b: &mut B, n: usize) -> Vec<jadpo_compiler::ir::Node> {
    (0..n).map(|_| b.call("stripe.charges.create")).collect()
}

#[test]
fn nine_changing_calls_in_sequence_are_too_many() {
    let mut b = B::new();
    b.configured();
    let body = charges(&mut b, 9);
    let a = b.action("bill", body);
    b.subscriber(a);
    let out = b.check();
    let d: Vec<_> = out
        .diagnostics
        .iter()
        .filter(|d| d.code == "step.too_many")
        .collect();
    assert_eq!(d.len(), 1, "{:#?}", out.diagnostics);
    assert_eq!(d[0].related.len(), 9);
    assert!(
        d[0].related[8].message.starts_with("step 9:"),
        "{}",
        d[0].related[8].message
    );
}

#[test]
fn eight_changing_calls_are_allowed() {
    let mut b = B::new();
    b.configured();
    let body = charges(&mut b, 8);
    let a = b.action("bill", body);
    b.subscriber(a);
    assert!(!b.codes().contains(&"step.too_many"));
}

#[test]
fn branches_take_the_longest_path_not_the_sum() {
    let mut b = B::new();
    b.configured();
    let left = charges(&mut b, 5);
    let right = charges(&mut b, 5);
    let branch = b.if_else(left, right);
    let a = b.action("bill", vec![branch]);
    b.subscriber(a);
    assert!(!b.codes().contains(&"step.too_many"));
}

#[test]
fn calls_inside_package_actions_count_and_are_named() {
    let mut b = B::new();
    b.configured();
    let inner = vec![
        b.pkg_call("stripe.customers.create"),
        b.pkg_call("stripe.payment_methods.attach"),
        b.pkg_call("stripe.subscriptions.create"),
    ];
    let sub = b.pkg_action("subscribe_customer", inner);
    let mut body = charges(&mut b, 6);
    body.push(b.run(sub));
    let a = b.action("bill", body);
    b.subscriber(a);
    let out = b.check();
    let d = out
        .diagnostics
        .iter()
        .find(|d| d.code == "step.too_many")
        .expect("too_many");
    assert!(d.summary.contains("9 changing calls"), "{}", d.summary);
    let last = &d.related[8];
    assert!(
        last.message.contains("in `stripe.subscribe_customer`"),
        "{}",
        last.message
    );
    // The label sits at the app's call of the package action.
    assert_eq!(last.span.file, b.app);
}

#[test]
fn an_early_return_ends_the_path() {
    let mut b = B::new();
    b.configured();
    let mut then_nodes = charges(&mut b, 5);
    then_nodes.push(b.ret());
    let branch = b.if_else(then_nodes, vec![]);
    let mut body = vec![branch];
    body.extend(charges(&mut b, 5));
    let a = b.action("bill", body);
    b.subscriber(a);
    assert!(!b.codes().contains(&"step.too_many"));
}

#[test]
fn unkeyed_call_after_charge_on_one_path() {
    let mut b = B::new();
    b.configured();
    let body = vec![
        b.call("stripe.charges.create"),
        b.call("github.issues.create"),
    ];
    let a = b.action("bill", body);
    b.subscriber(a);
    let out = b.check();
    let d = out
        .diagnostics
        .iter()
        .find(|d| d.code == "step.unkeyed")
        .expect("unkeyed");
    assert!(d.summary.contains("github.issues.create"));
    assert!(d
        .related
        .iter()
        .any(|l| l.message.contains("stripe.charges.create")));
}

#[test]
fn unkeyed_call_in_other_branch_is_fine() {
    let mut b = B::new();
    b.configured();
    let left = vec![
        b.call("stripe.charges.create"),
        b.call("stripe.customers.create"),
    ];
    let right = vec![b.call("github.issues.create")];
    let branch = b.if_else(left, right);
    let a = b.action("bill", vec![branch]);
    b.subscriber(a);
    assert!(!b.codes().contains(&"step.unkeyed"));
}

#[test]
fn unkeyed_call_alone_is_fine() {
    let mut b = B::new();
    let body = vec![
        b.call("stripe.prices.retrieve"),
        b.call("github.issues.create"),
    ];
    let a = b.action("notify", body);
    b.subscriber(a);
    assert_eq!(b.codes(), Vec::<&str>::new());
}

#[test]
fn multi_step_action_from_unkeyed_route_and_schedule() {
    let mut b = B::new();
    b.configured();
    let body = charges(&mut b, 2);
    let inner = b.action("bill", body);
    let outer_body = vec![b.run(inner)];
    let outer = b.action("handle", outer_body);
    b.route(outer, false, None);
    b.schedule(inner);
    b.route(inner, true, None);
    b.subscriber(inner);
    let out = b.check();
    let ctx: Vec<_> = out
        .diagnostics
        .iter()
        .filter(|d| d.code == "step.context")
        .collect();
    assert_eq!(ctx.len(), 2, "{:#?}", ctx);
    assert!(
        ctx.iter()
            .any(|d| d.summary.contains("`handle`, which calls `bill`")),
        "{:#?}",
        ctx
    );
    for d in ctx {
        assert!(d
            .fixes
            .iter()
            .any(|f| f.message.contains("idempotency_key: required")));
        assert!(d.fixes.iter().any(|f| f.message.contains("subscriber")));
    }
}

#[test]
fn call_in_loop_reported_once_per_loop() {
    let mut b = B::new();
    b.configured();
    let inner_loop_body = vec![b.call("stripe.prices.retrieve")];
    let inner_loop = b.for_loop(Some(3), inner_loop_body);
    let loop_body = vec![b.call("stripe.prices.retrieve"), inner_loop];
    let l = b.for_loop(Some(10), loop_body);
    let body = vec![b.call("stripe.charges.create"), l];
    let a = b.action("bill", body);
    b.subscriber(a);
    let codes = b.codes();
    assert_eq!(
        codes
            .iter()
            .filter(|c| **c == "effect.call_in_loop")
            .count(),
        1,
        "{codes:?}"
    );
}

#[test]
fn reads_in_loops_are_fine_without_changing_calls() {
    let mut b = B::new();
    let loop_body = vec![b.call("stripe.prices.retrieve")];
    let l = b.for_loop(None, loop_body);
    let a = b.action("sync", vec![l]);
    b.subscriber(a);
    assert_eq!(b.codes(), Vec::<&str>::new());
}

#[test]
fn loop_in_called_action_without_changes_is_reported_at_the_call() {
    let mut b = B::new();
    b.configured();
    let loop_body = vec![b.call("stripe.prices.retrieve")];
    let l = b.for_loop(None, loop_body);
    let reader = b.action("read_all", vec![l]);
    let body = vec![b.call("stripe.charges.create"), b.run(reader)];
    let a = b.action("bill", body);
    b.subscriber(a);
    let out = b.check();
    let d: Vec<_> = out
        .diagnostics
        .iter()
        .filter(|d| d.code == "effect.call_in_loop")
        .collect();
    assert_eq!(d.len(), 1);
    assert!(d[0].summary.contains("`read_all`"));
}

#[test]
fn write_before_call_on_some_path() {
    let mut b = B::new();
    b.configured();
    let w = b.write("Invoice", &[]);
    let branch = b.if_else(vec![w], vec![]);
    let body = vec![branch, b.call("stripe.prices.retrieve")];
    let a = b.action("bill", body);
    b.subscriber(a);
    assert_eq!(b.codes(), vec!["effect.call_after_write"]);
}

#[test]
fn emit_before_call_through_a_called_action() {
    let mut b = B::new();
    b.configured();
    let e = b.emit();
    let helper = b.action("announce", vec![e]);
    let body = vec![b.run(helper), b.call("stripe.prices.retrieve")];
    let a = b.action("bill", body);
    b.subscriber(a);
    assert_eq!(b.codes(), vec!["effect.call_after_write"]);
}

#[test]
fn write_after_calls_is_fine() {
    let mut b = B::new();
    let body = vec![
        b.call("stripe.prices.retrieve"),
        b.write("Invoice", &[]),
        b.emit(),
    ];
    let a = b.action("bill", body);
    b.subscriber(a);
    assert_eq!(b.codes(), Vec::<&str>::new());
}

#[test]
fn recursion_that_calls_out_is_reported_once() {
    let mut b = B::new();
    // Placeholders, patched below to call each other.
    let a = b.action("ping", vec![]);
    let c = b.action("pong", vec![]);
    let ping_body = vec![b.call("stripe.prices.retrieve"), b.run(c)];
    let pong_body = vec![b.run(a)];
    b.p.actions[a].body.nodes = ping_body;
    b.p.actions[c].body.nodes = pong_body;
    b.subscriber(a);
    assert_eq!(b.codes(), vec!["effect.recursion"]);
}

#[test]
fn recursion_without_outside_calls_is_fine() {
    let mut b = B::new();
    let a = b.action("ping", vec![]);
    let body = vec![b.run(a)];
    b.p.actions[a].body.nodes = body;
    assert_eq!(b.codes(), Vec::<&str>::new());
}

#[test]
fn large_output_after_a_change() {
    let mut b = B::new();
    let before = vec![
        b.call("stripe.invoices.list"),
        b.call("stripe.charges.create"),
    ];
    let ok = b.action("fine", before);
    b.subscriber(ok);
    assert_eq!(b.codes(), Vec::<&str>::new());
    let after = vec![
        b.call("stripe.charges.create"),
        b.call("stripe.invoices.list"),
    ];
    let bad = b.action("late_list", after);
    b.subscriber(bad);
    assert_eq!(b.codes(), vec!["step.large_output"]);
}

#[test]
fn store_and_key_required_for_multi_step_actions() {
    let mut b = B::new();
    let body = charges(&mut b, 2);
    let a = b.action("bill", body);
    b.subscriber(a);
    let codes: Vec<_> = b
        .codes()
        .into_iter()
        .filter(|c| *c != "step.late_failure")
        .collect();
    assert_eq!(
        codes,
        vec!["step.encryption_key_required", "step.store_required"]
    );
    let mut b2 = B::new();
    b2.configured();
    let body = charges(&mut b2, 2);
    let a = b2.action("bill", body);
    b2.subscriber(a);
    assert_eq!(b2.codes(), vec!["step.late_failure"]);
}

#[test]
fn writing_a_store_keeps_the_record() {
    let mut b = B::new();
    b.p.app.encryption_key = Some(jadpo_compiler::ir::EncryptionKey {
        span: b.span(),
        name: jadpo_compiler::intern::Name::new("steps_key"),
        secret: true,
        config_span: None,
    });
    let mut body = charges(&mut b, 2);
    body.push(b.write("Invoice", &[]));
    let a = b.action("bill", body);
    b.subscriber(a);
    assert_eq!(b.codes(), vec!["step.late_failure"]);
}

#[test]
fn late_failure_points_after_the_first_change() {
    let mut b = B::new();
    b.configured();
    let sub = b.call_match(
        "stripe.subscriptions.create",
        vec![
            (None, vec![], "value"),
            (Some("stripe.CardDeclined"), vec![], "reject PaymentRefused"),
            (Some("stripe.PriceMissing"), vec![], "value"),
        ],
    );
    let body = vec![
        b.call("stripe.customers.create"),  // its own failures are not late
        sub,                                // reject: late; PriceMissing value: handled
        b.call("stripe.prices.retrieve"),   // read after the change: late
        b.write("Invoice", &["Duplicate"]), // a write naming a failure: late
    ];
    let a = b.action("bill", body);
    b.subscriber(a);
    let out = b.check();
    let d: Vec<_> = out
        .diagnostics
        .iter()
        .filter(|d| d.code == "step.late_failure")
        .collect();
    assert_eq!(d.len(), 1, "{:#?}", out.diagnostics);
    // first change + 3 points
    assert_eq!(d[0].related.len(), 4, "{:#?}", d[0].related);
    assert_eq!(d[0].fixes.len(), 3);
}

#[test]
fn late_failure_already_undone_and_transient_are_not_late() {
    let mut b = B::new();
    b.configured();
    let body = vec![
        b.call("stripe.customers.create"),
        b.call("stripe.customers.delete"), // ResourceMissing is already_undone
        b.call("stripe.invoices.list"),    // only transient failures (but a step: large)
    ];
    let a = b.action("bill", body);
    b.subscriber(a);
    assert!(!b.codes().contains(&"step.late_failure"), "{:?}", b.codes());
}

#[test]
fn late_failure_through_a_package_surface() {
    let mut b = B::new();
    b.configured();
    let inner = vec![
        b.pkg_call("stripe.customers.create"),
        b.pkg_call("stripe.payment_methods.attach"),
    ];
    let sub = b.pkg_action("subscribe_customer", inner);
    let a_body = vec![b.run(sub)];
    let a = b.action("bill", a_body);
    b.subscriber(a);
    let out = b.check();
    let d = out
        .diagnostics
        .iter()
        .find(|d| d.code == "step.late_failure")
        .expect("late");
    assert!(
        d.related
            .iter()
            .any(|l| l.message.contains("stripe.subscribe_customer")),
        "{:#?}",
        d
    );
    // Handled by a match arm yielding a value: no finding.
    let mut b = B::new();
    b.configured();
    let inner = vec![
        b.pkg_call("stripe.customers.create"),
        b.pkg_call("stripe.payment_methods.attach"),
    ];
    let sub = b.pkg_action("subscribe_customer", inner);
    let m = b.action_match(
        sub,
        vec![
            (None, vec![], "value"),
            (Some("stripe.CardDeclined"), vec![], "value"),
            (Some("stripe.ResourceMissing"), vec![], "value"),
        ],
    );
    let a = b.action("bill", vec![m]);
    b.subscriber(a);
    assert!(!b.codes().contains(&"step.late_failure"), "{:?}", b.codes());
}

#[test]
fn declines_suppress_warnings_and_are_checked() {
    let mut b = B::new();
    b.configured();
    let body = vec![
        b.call("stripe.customers.create"),
        b.reject("PaymentRefused"),
    ];
    let a = b.action("bill", body);
    b.decline(a, "step.late_failure");
    b.subscriber(a);
    assert_eq!(b.codes(), Vec::<&str>::new());
    let quiet = b.action("quiet", vec![]);
    b.decline(quiet, "step.late_failure");
    b.decline(quiet, "step.too_many");
    b.decline(quiet, "step.late_failur");
    let out = b.check();
    let mut codes: Vec<_> = out.diagnostics.iter().map(|d| d.code).collect();
    codes.sort();
    assert_eq!(
        codes,
        vec!["decline.not_a_warning", "decline.unused", "decline.unused"]
    );
    assert!(out.diagnostics.iter().any(|d| d
        .fixes
        .iter()
        .any(|f| f.message.contains("step.late_failure"))));
}

#[test]
fn deadline_sum_shows_each_call() {
    let mut b = B::new();
    let l_body = vec![b.call("stripe.prices.retrieve")];
    let l = b.for_loop(Some(3), l_body);
    let body = vec![b.call("ai.generate"), l];
    let a = b.action("summarise", body);
    b.route(a, true, Some(150_000));
    assert_eq!(b.codes(), Vec::<&str>::new(), "150s is not past 150s");
    b.route(a, true, Some(149_000));
    let out = b.check();
    let d = out
        .diagnostics
        .iter()
        .find(|d| d.code == "route.calls_past_deadline")
        .expect("deadline");
    // 60s x 2 = 2m, plus 3 x (5s x 2) = 30s.
    assert!(d.summary.contains("can take 150s"), "{}", d.summary);
    assert_eq!(d.related.len(), 2);
    assert!(
        d.related[0]
            .message
            .contains("`ai.generate`: 1m x 2 attempts = 2m"),
        "{}",
        d.related[0].message
    );
    assert!(
        d.related[1].message.contains("3 times in a loop = 30s"),
        "{}",
        d.related[1].message
    );
    assert!(
        d.reason
            .as_deref()
            .unwrap_or("")
            .contains("2m + 30s = 150s"),
        "{:?}",
        d.reason
    );
}

#[test]
fn deadline_within_budget_is_fine() {
    let mut b = B::new();
    let body = vec![b.call("ai.generate")];
    let a = b.action("summarise", body);
    b.route(a, false, Some(120_000));
    assert_eq!(b.codes(), Vec::<&str>::new());
    b.route(a, false, Some(119_000));
    assert_eq!(b.codes(), vec!["route.calls_past_deadline"]);
}

#[test]
fn package_scope_checks_package_actions_only() {
    let mut b = B::new();
    let inner: Vec<_> = (0..9)
        .map(|_| b.pkg_call("stripe.charges.create"))
        .collect();
    let _sub = b.pkg_action("charge_many", inner);
    let app_body = vec![
        b.call("stripe.charges.create"),
        b.call("github.issues.create"),
    ];
    let _app = b.action("app_action", app_body);
    let pkg = b.check_package();
    let codes: Vec<_> = pkg.diagnostics.iter().map(|d| d.code).collect();
    assert!(codes.contains(&"step.too_many"), "{codes:?}");
    assert!(!codes.contains(&"step.unkeyed"), "{codes:?}");
    assert!(
        !codes.contains(&"step.encryption_key_required"),
        "{codes:?}"
    );
    let surface = &pkg.plan.to_json()["actions"][0];
    assert_eq!(surface["changing_calls"], 9);
    // The app check does not report the package's own finding.
    let app_codes = b.codes();
    assert!(!app_codes.contains(&"step.too_many"), "{app_codes:?}");
}
