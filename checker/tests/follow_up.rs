//! The `follow_up.*` rules judged on hand-built IR: limits counted on the
//! worst path through branches, loops and called actions; each mistake
//! reported once; literal options checked; the plan's follow-up entries.

use crate::support;

use jadpo_compiler::diag::Diagnostic;
use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::*;
use support::B;

fn event(b: &mut B, name: &str, fields: &[(&str, Option<u64>)]) -> EventId {
    let span = b.span();
    let fields = fields
        .iter()
        .map(|(n, max)| EventField {
            name: Name::new(n),
            max_json_bytes: *max,
            span,
        })
        .collect();
    b.p.events.push(Event {
        owner: Owner::App,
        qualified: name.into(),
        fields,
        span,
        ty: jadpo_compiler::ir::TypeId(0),
    });
    EventId(b.p.events.len() as u32 - 1)
}

fn opt(b: &mut B, key: &str, value: OptionValue) -> EmitOption {
    let span = b.span();
    EmitOption {
        key: Name::new(key),
        key_span: span,
        value,
        span,
        value_span: span,
    }
}

fn emit(b: &mut B, ev: EventId, options: Vec<EmitOption>) -> Node {
    let span = b.span();
    Node::Emit(Emit {
        span,
        head: span,
        event: ev,
        fields: vec![],
        options,
    })
}

fn emits(b: &mut B, ev: EventId, n: usize) -> Vec<Node> {
    (0..n).map(|_| emit(b, ev, vec![])).collect()
}

fn unique(b: &mut B, states: Option<&[&str]>) -> EmitOption {
    let mut items = vec![(Name::new("by_args"), OptionValue::Bool(true), b.span())];
    if let Some(states) = states {
        let list = states
            .iter()
            .map(|s| (OptionValue::Str(s.to_string()), b.span()))
            .collect();
        items.push((Name::new("states"), OptionValue::List(list), b.span()));
    }
    opt(b, "unique", OptionValue::Record(items))
}

fn found(b: &B, code: &str) -> Vec<Diagnostic> {
    b.check()
        .diagnostics
        .into_iter()
        .filter(|d| d.code == code)
        .collect()
}

fn small(b: &mut B) -> EventId {
    event(b, "Remind", &[("code", Some(98))])
}

// ------------------------------------------------------------ too_many

#[test]
fn seventeen_emits_on_one_path_are_too_many_and_each_is_labelled() {
    let mut b = B::new();
    b.configured();
    let ev = small(&mut b);
    let body = emits(&mut b, ev, 17);
    b.action("remind_all", body);
    let d = found(&b, "follow_up.too_many");
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].related.len(), 17);
    assert!(
        d[0].related[16].message.starts_with("follow-up 17:"),
        "{}",
        d[0].related[16].message
    );
    assert!(d[0].summary.contains("17 follow-ups"), "{}", d[0].summary);
}

#[test]
fn sixteen_emits_are_allowed() {
    let mut b = B::new();
    b.configured();
    let ev = small(&mut b);
    let body = emits(&mut b, ev, 16);
    b.action("remind_all", body);
    assert!(
        b.check().diagnostics.is_empty(),
        "{:#?}",
        b.check().diagnostics
    );
}

#[test]
fn branches_count_the_path_with_most_emits_not_the_sum() {
    let mut b = B::new();
    b.configured();
    let ev = small(&mut b);
    let left = emits(&mut b, ev, 10);
    let right = emits(&mut b, ev, 12);
    let branch = b.if_else(left, right);
    let mut body = vec![branch];
    body.extend(emits(&mut b, ev, 4));
    b.action("remind_some", body);
    assert!(found(&b, "follow_up.too_many").is_empty());
    let right = emits(&mut b, ev, 13);
    let left = emits(&mut b, ev, 1);
    let branch = b.if_else(left, right);
    let mut body = vec![branch];
    body.extend(emits(&mut b, ev, 4));
    b.action("remind_more", body);
    let d = found(&b, "follow_up.too_many");
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(d[0].summary.contains("`remind_more`"));
}

#[test]
fn emits_of_called_actions_count_on_the_callers_path() {
    let mut b = B::new();
    b.configured();
    let ev = small(&mut b);
    let inner = emits(&mut b, ev, 9);
    let helper = b.action("helper", inner);
    let body = vec![b.run(helper), b.run(helper)];
    b.action("twice", body);
    let d = found(&b, "follow_up.too_many");
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(
        d[0].summary.contains("`twice` stages 18"),
        "{}",
        d[0].summary
    );
    assert_eq!(d[0].related.len(), 2);
    assert_eq!(
        d[0].related[0].message,
        "follow-ups 1 to 9: the call of `helper`"
    );
}

#[test]
fn a_callee_over_the_limit_is_reported_once_on_the_callee() {
    let mut b = B::new();
    b.configured();
    let ev = small(&mut b);
    let inner = emits(&mut b, ev, 17);
    let helper = b.action("helper", inner);
    let body = vec![b.run(helper)];
    b.action("caller", body);
    let d = found(&b, "follow_up.too_many");
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(d[0].summary.contains("`helper`"));
}

#[test]
fn emits_before_a_failure_still_count() {
    let mut b = B::new();
    b.configured();
    let ev = small(&mut b);
    let mut body = emits(&mut b, ev, 17);
    body.push(b.reject("PaymentRefused"));
    b.action("fails_late", body);
    assert_eq!(found(&b, "follow_up.too_many").len(), 1);
}

// ------------------------------------------------------------ in_loop

#[test]
fn an_emit_in_a_loop_without_max_is_in_loop_and_nothing_else() {
    let mut b = B::new();
    b.configured();
    let ev = event(&mut b, "Big", &[("body", Some(70_000))]);
    let inner = vec![emit(&mut b, ev, vec![])];
    let lp = b.for_loop(None, inner);
    b.action("fan_out", vec![lp]);
    let codes = b.codes();
    assert_eq!(
        codes.iter().filter(|c| **c == "follow_up.in_loop").count(),
        1,
        "{codes:?}"
    );
    assert!(!codes.contains(&"follow_up.too_many"));
}

#[test]
fn a_loop_calling_an_emitting_action_without_max_is_in_loop_at_the_call() {
    let mut b = B::new();
    b.configured();
    let ev = small(&mut b);
    let inner = emits(&mut b, ev, 1);
    let helper = b.action("helper", inner);
    let call = b.run(helper);
    let Node::Effect(e) = &call else {
        panic!("a call")
    };
    let call_span = e.span;
    let lp = b.for_loop(None, vec![call]);
    b.action("each", vec![lp]);
    let d = found(&b, "follow_up.in_loop");
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].span, call_span);
    assert!(d[0].summary.contains("`helper`"), "{}", d[0].summary);
}

#[test]
fn a_max_that_takes_the_path_past_sixteen_is_in_loop_not_too_many() {
    let mut b = B::new();
    b.configured();
    let ev = event(&mut b, "Big", &[("body", Some(8_000))]);
    let inner = emits(&mut b, ev, 1);
    let lp = b.for_loop(Some(20), inner);
    b.action("fan_out", vec![lp]);
    let codes = b.codes();
    assert_eq!(codes, vec!["follow_up.in_loop"], "{codes:?}");
    let d = found(&b, "follow_up.in_loop");
    assert!(d[0].summary.contains("20 follow-ups"), "{}", d[0].summary);
    assert!(d[0]
        .related
        .iter()
        .any(|l| l.message == "runs at most 20 times"));
}

#[test]
fn a_max_within_the_limit_is_allowed() {
    let mut b = B::new();
    b.configured();
    let ev = small(&mut b);
    let inner = emits(&mut b, ev, 4);
    let lp = b.for_loop(Some(4), inner);
    b.action("fan_out", vec![lp]);
    assert!(
        b.check().diagnostics.is_empty(),
        "{:#?}",
        b.check().diagnostics
    );
}

#[test]
fn nested_maxes_multiply() {
    let mut b = B::new();
    b.configured();
    let ev = small(&mut b);
    let inner = emits(&mut b, ev, 1);
    let lp = b.for_loop(Some(5), inner);
    let outer = b.for_loop(Some(4), vec![lp]);
    b.action("grid", vec![outer]);
    let d = found(&b, "follow_up.in_loop");
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(d[0].summary.contains("20 follow-ups"), "{}", d[0].summary);
}

// ------------------------------------------------------------ too_large

#[test]
fn one_emit_over_64_kib_is_too_large_with_the_sum_shown() {
    let mut b = B::new();
    b.configured();
    let ev = event(&mut b, "Big", &[("body", Some(70_000))]);
    let body = emits(&mut b, ev, 1);
    b.action("publish", body);
    let d = found(&b, "follow_up.too_large");
    assert_eq!(d.len(), 1, "{d:#?}");
    // 46 envelope + 5 kind + 9 queue + 2 + 7 ("body":) + 70000 + 2 + 2
    assert!(d[0].summary.contains("70,073 bytes"), "{}", d[0].summary);
    assert!(
        d[0].related[0].message.contains("(total 70,073)"),
        "{}",
        d[0].related[0].message
    );
}

#[test]
fn sizes_add_up_along_a_path_but_not_across_branches() {
    let mut b = B::new();
    b.configured();
    let ev = event(&mut b, "Half", &[("body", Some(40_000))]);
    let left = emits(&mut b, ev, 1);
    let right = emits(&mut b, ev, 1);
    let branch = b.if_else(left, right);
    b.action("either", vec![branch]);
    assert!(found(&b, "follow_up.too_large").is_empty());
    let body = emits(&mut b, ev, 2);
    b.action("both", body);
    let d = found(&b, "follow_up.too_large");
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(d[0].summary.contains("`both`"));
    assert_eq!(d[0].related.len(), 2);
}

#[test]
fn a_loop_max_within_sixteen_multiplies_the_size() {
    let mut b = B::new();
    b.configured();
    let ev = event(&mut b, "Chunk", &[("body", Some(8_000))]);
    let inner = emits(&mut b, ev, 1);
    let lp = b.for_loop(Some(10), inner);
    b.action("chunks", vec![lp]);
    let codes = b.codes();
    assert_eq!(codes, vec!["follow_up.too_large"], "{codes:?}");
    let d = found(&b, "follow_up.too_large");
    assert!(
        d[0].related[0].message.contains("10 × "),
        "{}",
        d[0].related[0].message
    );
}

#[test]
fn unbounded_fields_are_left_out_of_the_sum_and_warned() {
    let mut b = B::new();
    b.configured();
    let ev = event(&mut b, "Note", &[("text", None), ("code", Some(98))]);
    let body = emits(&mut b, ev, 1);
    b.action("note", body);
    let d = found(&b, "follow_up.unbounded");
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(d[0].summary.contains("`text`"), "{}", d[0].summary);
    assert!(found(&b, "follow_up.too_large").is_empty());
}

#[test]
fn unbounded_is_one_finding_per_emit_listing_every_field() {
    let mut b = B::new();
    b.configured();
    let ev = event(&mut b, "Note", &[("text", None), ("tags", None)]);
    let body = emits(&mut b, ev, 2);
    b.action("note", body);
    let d = found(&b, "follow_up.unbounded");
    assert_eq!(d.len(), 2, "{d:#?}");
    assert!(
        d[0].summary.contains("`text` and `tags`"),
        "{}",
        d[0].summary
    );
}

#[test]
fn unbounded_can_be_declined() {
    let mut b = B::new();
    b.configured();
    let ev = event(&mut b, "Note", &[("text", None)]);
    let body = emits(&mut b, ev, 1);
    let a = b.action("note", body);
    b.decline(a, "follow_up.unbounded");
    assert!(
        b.check().diagnostics.is_empty(),
        "{:#?}",
        b.check().diagnostics
    );
}

// ------------------------------------------------------------ invalid

fn invalid_with(options: impl FnOnce(&mut B) -> Vec<EmitOption>) -> Vec<Diagnostic> {
    let mut b = B::new();
    b.configured();
    let ev = small(&mut b);
    let opts = options(&mut b);
    let body = vec![emit(&mut b, ev, opts)];
    b.action("remind", body);
    found(&b, "follow_up.invalid")
}

#[test]
fn priority_and_max_attempts_out_of_range_are_invalid() {
    let d = invalid_with(|b| {
        vec![
            opt(b, "priority", OptionValue::Int(5)),
            opt(b, "max_attempts", OptionValue::Int(0)),
        ]
    });
    assert_eq!(d.len(), 2, "{d:#?}");
    assert!(d.iter().any(|d| d.summary.contains("`priority: 5`")));
    assert!(d.iter().any(|d| d.summary.contains("`max_attempts: 0`")));
}

#[test]
fn options_in_range_and_computed_options_are_accepted() {
    let d = invalid_with(|b| {
        vec![
            opt(b, "priority", OptionValue::Int(4)),
            opt(b, "max_attempts", OptionValue::Int(1000)),
            opt(b, "queue", OptionValue::Str("é".repeat(200))),
            opt(b, "run_at", OptionValue::Computed),
            opt(b, "tags", OptionValue::Computed),
        ]
    });
    assert!(d.is_empty(), "{d:#?}");
}

#[test]
fn long_queue_names_many_tags_and_nul_are_invalid() {
    let d = invalid_with(|b| {
        let tags = (0..21)
            .map(|i| (OptionValue::Str(format!("t{i}")), b.span()))
            .collect();
        let member = b.span();
        vec![
            opt(b, "queue", OptionValue::Str("q".repeat(201))),
            opt(b, "tags", OptionValue::List(tags)),
            opt(
                b,
                "metadata",
                OptionValue::Record(vec![(
                    Name::new("from"),
                    OptionValue::Str("a\0b".into()),
                    member,
                )]),
            ),
        ]
    });
    assert_eq!(d.len(), 3, "{d:#?}");
    assert!(d.iter().any(|d| d.summary.contains("201 characters")));
    assert!(d.iter().any(|d| d.summary.contains("21 tags")));
    assert!(d.iter().any(|d| d.summary.contains("NUL")));
}

#[test]
fn a_nul_in_a_literal_payload_field_is_invalid() {
    let mut b = B::new();
    b.configured();
    let ev = small(&mut b);
    let span = b.span();
    let at = b.span();
    let node = Node::Emit(Emit {
        span: at,
        head: at,
        event: ev,
        fields: vec![EmitField {
            name: Name::new("code"),
            span,
            value_span: span,
            literal: Some("x\0".into()),
        }],
        options: vec![],
    });
    b.action("remind", vec![node]);
    let d = found(&b, "follow_up.invalid");
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].span, span);
}

#[test]
fn unknown_unique_states_are_invalid() {
    let d = invalid_with(|b| vec![unique(b, Some(&["running", "done"]))]);
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(d[0].summary.contains("`done` is not a follow-up state"));
}

#[test]
fn an_event_name_over_200_characters_is_invalid_once() {
    let mut b = B::new();
    b.configured();
    let name = "E".repeat(201);
    let ev = event(&mut b, &name, &[]);
    let body = emits(&mut b, ev, 3);
    b.action("remind", body);
    let d = found(&b, "follow_up.invalid");
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(d[0].summary.contains("201 characters"));
}

// ------------------------------------------------------------ store_required

#[test]
fn an_emitting_action_without_store_or_events_store_is_reported() {
    let mut b = B::new();
    let ev = small(&mut b);
    let body = emits(&mut b, ev, 1);
    b.action("remind", body);
    assert_eq!(found(&b, "follow_up.store_required").len(), 1);
}

#[test]
fn a_write_or_an_events_store_gives_the_outbox_a_home() {
    let mut b = B::new();
    let ev = small(&mut b);
    let mut body = vec![b.write("Invoice", &[])];
    body.extend(emits(&mut b, ev, 1));
    b.action("remind", body);
    assert!(found(&b, "follow_up.store_required").is_empty());
    let mut b = B::new();
    b.configured();
    let ev = small(&mut b);
    let body = emits(&mut b, ev, 1);
    b.action("remind", body);
    assert!(found(&b, "follow_up.store_required").is_empty());
}

#[test]
fn a_called_action_commits_with_its_caller() {
    let mut b = B::new();
    let ev = small(&mut b);
    let inner = emits(&mut b, ev, 1);
    let helper = b.action("helper", inner);
    let body = vec![b.write("Invoice", &[]), b.run(helper)];
    b.action("caller", body);
    assert!(found(&b, "follow_up.store_required").is_empty());
    let body = vec![b.run(helper)];
    let bare = b.action("bare", body);
    b.subscriber(bare);
    let d = found(&b, "follow_up.store_required");
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(d[0].summary.contains("`bare`"));
}

#[test]
fn store_required_is_an_app_rule() {
    let mut b = B::new();
    let ev = small(&mut b);
    let body = emits(&mut b, ev, 1);
    b.pkg_action("remind", body);
    let d = b.check_package().diagnostics;
    assert!(
        d.iter().all(|d| d.code != "follow_up.store_required"),
        "{d:#?}"
    );
}

// ------------------------------------------------------------ self_collision

#[test]
fn a_subscriber_staging_its_trigger_with_unique_options_collides() {
    let mut b = B::new();
    b.configured();
    let u = unique(&mut b, None);
    let body = vec![emit(&mut b, EventId(0), vec![u])];
    let a = b.action("again", body);
    b.subscriber(a);
    let d = found(&b, "follow_up.self_collision");
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(d[0]
        .related
        .iter()
        .any(|l| l.message.contains("subscriber on_done")));
}

#[test]
fn other_emit_sites_with_the_same_unique_options_are_labelled() {
    let mut b = B::new();
    b.configured();
    let u = unique(&mut b, None);
    let body = vec![emit(&mut b, EventId(0), vec![u])];
    let a = b.action("again", body);
    b.subscriber(a);
    let u = unique(&mut b, None);
    let body = vec![emit(&mut b, EventId(0), vec![u])];
    b.action("start", body);
    let d = found(&b, "follow_up.self_collision");
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(
        d[0].related
            .iter()
            .any(|l| l.message.contains("also staged here")),
        "{:#?}",
        d[0].related
    );
}

#[test]
fn no_unique_or_states_without_running_and_completed_do_not_collide() {
    let mut b = B::new();
    b.configured();
    let body = vec![emit(&mut b, EventId(0), vec![])];
    let a = b.action("plain", body);
    b.subscriber(a);
    let u = unique(&mut b, Some(&["scheduled", "available"]));
    let body = vec![emit(&mut b, EventId(0), vec![u])];
    let c = b.action("waiting_only", body);
    b.subscriber(c);
    assert!(found(&b, "follow_up.self_collision").is_empty());
}

#[test]
fn self_collision_through_a_called_action_points_at_the_call() {
    let mut b = B::new();
    b.configured();
    let u = unique(&mut b, None);
    let inner = vec![emit(&mut b, EventId(0), vec![u])];
    let helper = b.action("helper", inner);
    let call = b.run(helper);
    let Node::Effect(e) = &call else {
        panic!("a call")
    };
    let call_span = e.span;
    let a = b.action("again", vec![call]);
    b.subscriber(a);
    let d = found(&b, "follow_up.self_collision");
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].span, call_span);
}

// ------------------------------------------------------------ lock_order

fn two_unique(b: &mut B, first: EventId, second: EventId) -> Vec<Node> {
    let u1 = unique(b, None);
    let u2 = unique(b, None);
    vec![emit(b, first, vec![u1]), emit(b, second, vec![u2])]
}

#[test]
fn opposite_orders_in_two_actions_are_reported_once() {
    let mut b = B::new();
    b.configured();
    let x = small(&mut b);
    let y = event(&mut b, "Receipt", &[("code", Some(98))]);
    let body = two_unique(&mut b, x, y);
    b.action("close", body);
    let body = two_unique(&mut b, y, x);
    b.action("refund", body);
    let body = two_unique(&mut b, y, x);
    b.action("refund_again", body);
    let d = found(&b, "follow_up.lock_order");
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(
        d[0].summary.contains("`close`") && d[0].summary.contains("`refund`"),
        "{}",
        d[0].summary
    );
    assert_eq!(d[0].related.len(), 3);
}

#[test]
fn the_same_order_or_non_unique_follow_ups_are_fine() {
    let mut b = B::new();
    b.configured();
    let x = small(&mut b);
    let y = event(&mut b, "Receipt", &[("code", Some(98))]);
    let body = two_unique(&mut b, x, y);
    b.action("close", body);
    let body = two_unique(&mut b, x, y);
    b.action("refund", body);
    let body = vec![emit(&mut b, y, vec![]), emit(&mut b, x, vec![])];
    b.action("plain", body);
    assert!(found(&b, "follow_up.lock_order").is_empty());
}

#[test]
fn opposite_queue_orders_are_reported() {
    let mut b = B::new();
    b.configured();
    let x = small(&mut b);
    let staged = |b: &mut B, q1: &str, q2: &str| {
        let o1 = vec![
            unique(b, None),
            opt(b, "queue", OptionValue::Str(q1.into())),
        ];
        let o2 = vec![
            unique(b, None),
            opt(b, "queue", OptionValue::Str(q2.into())),
        ];
        vec![emit(b, x, o1), emit(b, x, o2)]
    };
    let body = staged(&mut b, "billing", "mail");
    b.action("one", body);
    let body = staged(&mut b, "mail", "billing");
    b.action("two", body);
    let d = found(&b, "follow_up.lock_order");
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(d[0].summary.contains("queue `billing`"), "{}", d[0].summary);
}

#[test]
fn a_resource_taken_again_later_keeps_its_first_order() {
    let mut b = B::new();
    b.configured();
    let x = small(&mut b);
    let y = event(&mut b, "Receipt", &[("code", Some(98))]);
    let mut body = two_unique(&mut b, x, y);
    let again = unique(&mut b, None);
    body.push(emit(&mut b, x, vec![again]));
    b.action("close", body);
    let body = two_unique(&mut b, x, y);
    b.action("refund", body);
    assert!(found(&b, "follow_up.lock_order").is_empty());
}

// ------------------------------------------------------------ plan

#[test]
fn the_plan_lists_each_follow_up_with_options_and_size() {
    let mut b = B::new();
    b.configured();
    let ev = small(&mut b);
    let opts = vec![
        opt(&mut b, "priority", OptionValue::Int(2)),
        opt(&mut b, "run_at", OptionValue::Computed),
    ];
    let body = vec![emit(&mut b, ev, opts)];
    b.action("remind", body);
    let plan = b.check().plan.to_json();
    let fu = &plan["actions"][0]["follow_ups"][0];
    assert_eq!(fu["event"], "Remind", "{plan:#}");
    assert_eq!(fu["options"]["priority"]["value"], 2);
    assert_eq!(fu["options"]["priority"]["checked_at_staging"], false);
    assert_eq!(fu["options"]["run_at"]["checked_at_staging"], true);
    // 46 + 8 ("Remind") + 9 ("default") + 2 + 7 ("code":) + 98 + 2 + 2
    assert_eq!(fu["worst_case_bytes"], 174);
}

#[test]
fn the_envelope_constant_matches_its_json() {
    let empty = serde_json::json!({"kind": 0, "queue": 0, "args": 0, "metadata": 0, "tags": 0});
    let text = serde_json::to_string(&empty).unwrap_or_default();
    // Each of the five values above is one byte.
    assert_eq!(
        text.len() as u64 - 5,
        jadpo_checker::analysis::follow_up::size::ENVELOPE_BYTES
    );
}

// ------------------------------------------------------------ scale

#[test]
fn doubling_call_chains_are_judged_without_listing_paths() {
    let mut b = B::new();
    b.configured();
    let ev = small(&mut b);
    let body = emits(&mut b, ev, 1);
    let mut prev = b.action("level_0", body);
    for level in 1..=60 {
        let body = vec![b.run(prev), b.run(prev)];
        prev = b.action(&format!("level_{level}"), body);
    }
    // The rules and the analysis alone: the plan's step shape is not
    // judged here.
    let analysed = jadpo_checker::analysis::analyse(&b.p);
    let cx = jadpo_checker::Cx {
        program: &b.p,
        files: &b.files,
        scope: &jadpo_checker::Scope::App,
        analysed: &analysed,
    };
    let mut out = Vec::new();
    for check in [
        jadpo_checker::rules::follow_up::too_many::check_action,
        jadpo_checker::rules::follow_up::too_large::check_action,
        jadpo_checker::rules::follow_up::in_loop::check_action,
    ] {
        jadpo_checker::rules::Check::PerAction(check).run(&cx, &mut out);
    }
    let d: Vec<_> = out.into_iter().map(|f| f.diag).collect();
    // level_5 stages 32 and level_9 512 x 174 bytes; every level above is
    // over only because of them.
    assert_eq!(d.len(), 2, "{d:#?}");
    assert!(d[1].summary.contains("`level_9`"), "{}", d[1].summary);
    assert!(
        d[0].summary.contains("`level_5` stages 32"),
        "{}",
        d[0].summary
    );
    assert_eq!(d[0].related.len(), 2);
    assert!(
        d[0].related[1].message.starts_with("follow-ups 17 to 32"),
        "{}",
        d[0].related[1].message
    );
    let top = analysed.follow_ups.get(prev).map(|f| f.all.count.n);
    assert_eq!(top, Some(1u64 << 60));
}
