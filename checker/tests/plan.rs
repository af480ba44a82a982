//! The plan and the step-shape digest: what changes the digest and what
//! leaves it alone, step positions, crash points, determinism, and the
//! linear-time analysis of many sequential branches.

use crate::support;

use jadpo_compiler::ir::Node;
use serde_json::Value;
use support::B;

/// The plan entry of the app action named `name`.
fn action_plan(b: &B, name: &str) -> Value {
    let plan = b.check().plan.to_json();
    let actions = plan["actions"].as_array().cloned().unwrap_or_default();
    actions
        .into_iter()
        .find(|a| a["name"] == name)
        .expect("action in plan")
}

fn digest_of(build: impl Fn(&mut B) -> Vec<Node>) -> String {
    let mut b = B::new();
    b.configured();
    let body = build(&mut b);
    let a = b.action("subscribe", body);
    b.subscriber(a);
    action_plan(&b, "subscribe")["step_shape_digest"]
        .as_str()
        .expect("digest")
        .to_string()
}

fn three_steps(b: &mut B) -> Vec<Node> {
    vec![
        b.call("stripe.customers.create"),
        b.call("stripe.payment_methods.attach"),
        b.call("stripe.subscriptions.create"),
    ]
}

#[test]
fn digest_ignores_spans_writes_emits_and_code_after_the_last_step() {
    let base = digest_of(three_steps);
    // Spans (whitespace, comments, local names) move: same digest.
    let moved = digest_of(|b| {
        for _ in 0..7 {
            b.span();
        }
        three_steps(b)
    });
    assert_eq!(base, moved);
    let with_writes = digest_of(|b| {
        let mut v = three_steps(b);
        v.insert(1, b.emit());
        v.push(b.write("Invoice", &["Duplicate"]));
        v.push(b.ret());
        v
    });
    assert_eq!(base, with_writes);
    // A read before the first changing call is not a step.
    let read_first = digest_of(|b| {
        let mut v = vec![b.call("stripe.prices.retrieve")];
        v.extend(three_steps(b));
        v
    });
    assert_eq!(base, read_first);
    // Code without outside calls: an early return.
    let early_return = digest_of(|b| {
        let mut v = three_steps(b);
        let r = b.ret();
        let branch = b.if_else(vec![r], vec![]);
        v.insert(2, branch);
        v
    });
    assert_eq!(base, early_return);
}

#[test]
fn digest_ignores_failure_mappings() {
    let mapped = |end: &'static str| {
        move |b: &mut B| {
            let m = b.call_match(
                "stripe.subscriptions.create",
                vec![
                    (None, vec![], "value"),
                    (Some("stripe.CardDeclined"), vec![], end),
                    (Some("stripe.PriceMissing"), vec![], "value"),
                ],
            );
            vec![
                b.call("stripe.customers.create"),
                m,
                b.call("stripe.charges.create"),
            ]
        }
    };
    let a = digest_of(mapped("reject PaymentRefused"));
    let b = digest_of(mapped("value"));
    let c = digest_of(mapped("propagate"));
    assert_eq!(a, b);
    assert_eq!(a, c);
}

#[test]
fn digest_changes_when_steps_are_added_removed_or_reordered() {
    let base = digest_of(three_steps);
    let appended = digest_of(|b| {
        let mut v = three_steps(b);
        v.push(b.call("stripe.charges.create"));
        v
    });
    let removed = digest_of(|b| {
        let mut v = three_steps(b);
        v.pop();
        v
    });
    let reordered = digest_of(|b| {
        let mut v = three_steps(b);
        v.swap(1, 2);
        v
    });
    let read_step = digest_of(|b| {
        let mut v = three_steps(b);
        v.insert(1, b.call("stripe.prices.retrieve"));
        v
    });
    for other in [&appended, &removed, &reordered, &read_step] {
        assert_ne!(&base, other);
    }
}

#[test]
fn steps_carry_positions_keys_windows_and_crash_points() {
    let mut b = B::new();
    b.configured();
    let left = vec![b.call("stripe.customers.create")];
    let branch = b.if_else(left, vec![]);
    let body = vec![
        b.call("stripe.prices.retrieve"),
        branch,
        b.call("stripe.charges.create"),
        b.call("github.issues.create"),
    ];
    let a = b.action("bill", body);
    b.subscriber(a);
    let plan = action_plan(&b, "bill");
    let steps = plan["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 3, "{steps:#?}");
    assert_eq!(steps[0]["operation"], "stripe.customers.create");
    assert_eq!(
        steps[1]["positions"],
        serde_json::json!({ "first": 1, "last": 2 })
    );
    assert_eq!(
        steps[2]["positions"],
        serde_json::json!({ "first": 2, "last": 3 })
    );
    assert_eq!(steps[1]["window_ms"], 86_400_000);
    assert_eq!(steps[1]["margin_ms"], 3_600_000);
    assert_eq!(steps[1]["keyed"], true);
    assert_eq!(steps[2]["keyed"], false);
    assert_eq!(steps[2]["window_ms"], Value::Null);
    assert_eq!(plan["crash_points"].as_array().map(Vec::len), Some(9));
    assert_eq!(plan["changing_calls"], 3);
    assert_eq!(plan["step_shape"]["starts"], serde_json::json!([1, 2]));
    // Step ids count from 1, as every step number jadpo shows.
    assert_eq!(steps[0]["id"], 1);
    assert_eq!(plan["crash_points"][0]["step"], 1);
    assert_eq!(plan["record_store"]["store"], "primary");
    assert_eq!(plan["follow_ups"], serde_json::json!([]));
}

#[test]
fn package_steps_appear_in_the_app_plan_with_their_call_chain() {
    let mut b = B::new();
    b.configured();
    let inner = vec![
        b.pkg_call("stripe.customers.create"),
        b.pkg_call("stripe.subscriptions.create"),
    ];
    let sub = b.pkg_action("subscribe_customer", inner);
    let body = vec![b.run(sub)];
    let a = b.action("bill", body);
    b.subscriber(a);
    let plan = action_plan(&b, "bill");
    let steps = plan["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[1]["via"][0]["action"], "stripe.subscribe_customer");
    assert!(steps[1]["site"]
        .as_str()
        .unwrap_or("")
        .starts_with("<bundled>/stripe/"));
    assert!(steps[1]["via"][0]["site"]
        .as_str()
        .unwrap_or("")
        .starts_with("app.jadpo:"));
}

#[test]
fn plan_is_deterministic_and_has_a_build_id() {
    let build = || {
        let mut b = B::new();
        b.configured();
        let body = three_steps(&mut b);
        let a = b.action("subscribe", body);
        b.subscriber(a);
        b.check().plan.to_json().to_string()
    };
    let one = build();
    assert_eq!(one, build());
    let plan: Value = serde_json::from_str(&one).expect("json");
    assert_eq!(plan["build_id"].as_str().map(str::len), Some(64));
}

/// 60 sequential `if/else`, each branch holding a changing call: 2^60
/// paths, checked without listing them.
#[test]
fn sixty_sequential_branches_check_fast() {
    let mut b = B::new();
    b.configured();
    let mut body = Vec::new();
    for _ in 0..60 {
        let left = vec![b.call("stripe.charges.create")];
        let right = vec![b.call("stripe.customers.create")];
        body.push(b.if_else(left, right));
    }
    let a = b.action("wide", body);
    b.subscriber(a);
    let start = std::time::Instant::now();
    let out = b.check();
    let elapsed = start.elapsed();
    assert!(elapsed.as_secs_f64() < 2.0, "took {elapsed:?}");
    let d = out
        .diagnostics
        .iter()
        .find(|d| d.code == "step.too_many")
        .expect("too_many");
    assert!(d.summary.contains("60 changing calls"), "{}", d.summary);
}

/// `spec/plan.schema.json` lists exactly the fields the plan has, so the
/// documented schema cannot drift from what `jadpo build` writes.
#[test]
fn plan_fields_match_the_schema() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../spec/plan.schema.json");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("schema")).expect("json");
    let keys = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        k.sort();
        k
    };
    let mut b = B::new();
    b.configured();
    let body = three_steps(&mut b);
    let a = b.action("subscribe", body);
    b.subscriber(a);
    let plan = b.check().plan.to_json();
    let defs = &schema["$defs"];
    // `bundle` is written by `jadpo build --out` only.
    let mut written = keys(&plan);
    written.push("bundle".into());
    written.sort();
    assert_eq!(written, keys(&schema["oneOf"][0]["properties"]));
    let action = &plan["actions"][0];
    assert_eq!(keys(action), keys(&defs["action"]["properties"]));
    assert_eq!(keys(&action["steps"][0]), keys(&defs["step"]["properties"]));
    assert_eq!(
        keys(&action["step_shape"]),
        keys(&defs["step_shape"]["properties"])
    );
    let inner = vec![b.pkg_call("stripe.customers.create")];
    b.pkg_action("create_one", inner);
    let surface = b.check_package().plan.to_json();
    assert_eq!(keys(&surface), keys(&schema["oneOf"][1]["properties"]));
    assert_eq!(
        keys(&surface["actions"][0]),
        keys(&defs["surface"]["properties"])
    );
}

/// `plan::action` (the language server's hover plans one action at a time)
/// gives exactly that action's entry of the whole plan, and nothing for an
/// action outside the app.
#[test]
fn one_action_planned_alone_matches_the_whole_plan() {
    use jadpo_checker::{analysis, plan, Scope};
    use jadpo_compiler::ir::ActionId;
    let roots = [
        "../examples/billing",
        "../examples/mistakes",
        "../tests/fixtures/rules/step/too_many/pass_package_and_app_calls",
    ];
    for root in roots {
        let compiled = jadpo_compiler::compile(&jadpo_compiler::load::FsLoader, root);
        let program = compiled.program.expect("the app loads");
        let analysed = analysis::analyse(&program);
        let cx = jadpo_checker::Cx {
            program: &program,
            files: &compiled.files,
            scope: &Scope::App,
            analysed: &analysed,
        };
        let whole = plan::build(&cx).to_json();
        let listed = whole["actions"].as_array().cloned().unwrap_or_default();
        let mut planned = 0;
        for (i, action) in program.actions.iter().enumerate() {
            let alone = plan::action(&cx, ActionId(i as u32)).map(|a| plan::model::to_json(&a));
            let found = listed
                .iter()
                .find(|a| a["name"] == action.qualified.as_str());
            assert_eq!(alone.as_ref(), found, "{root}: {}", action.qualified);
            planned += usize::from(alone.is_some());
        }
        assert!(planned > 0 && planned < program.actions.len(), "{root}");
    }
}
