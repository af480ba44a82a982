//! One test per name/type/failure/purity error class: each source has exactly
//! one mistake, which must give exactly one diagnostic with the expected code
//! (no cascades). The rendered diagnostic is snapshotted.

use crate::resolve_support;

use resolve_support::{check_app, check_files, codes, render};

const PRELUDE: &str = r#"
store primary { kind: postgres }
type PlanCode = Text { max_length: 8 }
type Label = Text { max_length: 64 }
type Quantity = Int { min: 1 max: 100 }
type Tier = Enum { basic pro }
entity Plan {
    store: primary
    code: PlanCode
}
event PlanChosen {
    code: PlanCode
    note: Text? optional
}
failure PlanTaken { kind: Conflict code: "plan_taken" }
failure NoPlan { kind: NotFound code: "no_plan" }
"#;

/// Checks `body` (appended to the shared prelude) gives exactly one
/// diagnostic with `code`, and snapshots it.
fn one(name: &str, code: &str, body: &str) {
    let src = format!("{PRELUDE}{body}");
    let c = check_app(&src);
    assert_eq!(codes(&c), vec![code], "{name}:\n{}", render(&c));
    insta::assert_snapshot!(name, render(&c));
}

#[test]
fn prelude_alone_is_clean() {
    let c = check_app(PRELUDE);
    assert_eq!(render(&c), "");
}

#[test]
fn unknown_type_suggests_nearest() {
    one(
        "unknown_type",
        "name.unknown_type",
        "type X = Object { code: PlanCod }",
    );
}

#[test]
fn unknown_package_type_suggests_nearest() {
    one(
        "unknown_package_type",
        "name.unknown_type",
        "type X = Object { id: stripe.CustomerID }",
    );
}

#[test]
fn unknown_package() {
    one(
        "unknown_package",
        "name.unknown_package",
        "type X = Object { id: strpe.CustomerId }",
    );
}

#[test]
fn duplicate_type_points_at_both() {
    one("duplicate_type", "name.duplicate", "type Label = Text");
}

#[test]
fn unknown_field_of_record_suggests_nearest() {
    one(
        "unknown_field_access",
        "name.unknown_field",
        "action a(request: PlanChosen) -> PlanCode { return request.cdoe }",
    );
}

#[test]
fn unknown_variable_suggests_nearest() {
    one(
        "unknown_variable",
        "name.unknown_variable",
        "action a(request: PlanChosen) -> PlanCode { return reqest.code }",
    );
}

#[test]
fn unknown_failure_in_fails() {
    one(
        "unknown_failure",
        "name.unknown_failure",
        "action a() fails PlanTakn -> Unit { reject PlanTaken }",
    );
}

#[test]
fn unknown_event_in_emit() {
    one(
        "unknown_event",
        "name.unknown_event",
        "action a() -> Unit { emit PlanChose { code: \"x\" } }",
    );
}

#[test]
fn unknown_entity_in_write() {
    one(
        "unknown_entity",
        "name.unknown_entity",
        "action a() -> Unit { attempt create Plann { code: \"x\" } }",
    );
}

#[test]
fn unknown_store_on_entity() {
    one(
        "unknown_store",
        "name.unknown_store",
        "entity Other { store: primry  code: PlanCode }",
    );
}

#[test]
fn unknown_operation_lists_operations() {
    one(
        "unknown_operation",
        "name.unknown_operation",
        "action a() -> Unit { attempt stripe.customers.creat(stripe.CustomerCreate { email: \"a@b.co\" }) }",
    );
}

#[test]
fn unknown_action() {
    one(
        "unknown_action",
        "name.unknown_action",
        "action a() -> Unit { attempt bb() }\naction b() -> Unit { }",
    );
}

#[test]
fn private_package_action() {
    one(
        "private_action",
        "name.private_action",
        "action a() -> Unit { attempt stripe.internal_helper(\"cus_1\") }",
    );
}

#[test]
fn unknown_config_entry() {
    one(
        "unknown_config",
        "name.unknown_config",
        "config C { key: Text { binding: \"K\" secret: true } }\napplication App { steps: { encryption_key: config.kye } }",
    );
}

#[test]
fn unknown_application_setting() {
    one(
        "unknown_app_setting",
        "name.unknown_setting",
        "application App { event: { store: primary } }",
    );
}

#[test]
fn nominal_types_differ_even_on_same_primitive() {
    one(
        "nominal_mismatch",
        "type.mismatch",
        "action a(label: Label) -> Unit { attempt create Plan { code: label } }",
    );
}

#[test]
fn declared_type_accepted_where_primitive_expected() {
    let c = check_app(&format!("{PRELUDE}function f(t: Text) -> Text {{ return t }}\nfunction g(p: PlanCode) -> Text {{ return f(p) }}"));
    assert_eq!(render(&c), "");
}

#[test]
fn literal_checked_against_max_length() {
    one(
        "literal_too_long",
        "type.constraint",
        "action a() -> Unit { attempt create Plan { code: \"much-too-long\" } }",
    );
}

#[test]
fn literal_checked_against_min() {
    one(
        "literal_below_min",
        "type.constraint",
        "function f() -> Quantity { return 0 }",
    );
}

#[test]
fn literal_checked_against_email_format() {
    one(
        "literal_not_email",
        "type.constraint",
        "action a() fails stripe.CardDeclined, stripe.InvalidEmail -> Unit { attempt stripe.customers.create(stripe.CustomerCreate { email: \"nope\" }) }",
    );
}

#[test]
fn construction_missing_required_field() {
    one(
        "missing_field",
        "type.missing_field",
        "action a() -> Unit { emit PlanChosen { } }",
    );
}

#[test]
fn construction_unknown_field() {
    one(
        "construct_unknown_field",
        "name.unknown_field",
        "action a() -> Unit { emit PlanChosen { code: \"a\" nte: \"x\" } }",
    );
}

#[test]
fn optional_field_accepts_none() {
    let c = check_app(&format!(
        "{PRELUDE}action a() -> Unit {{ emit PlanChosen {{ code: \"a\" note: none }} }}"
    ));
    assert_eq!(render(&c), "");
}

#[test]
fn call_arity() {
    one(
        "arity",
        "type.arity",
        "function f(x: Int) -> Int { return x }\nfunction g() -> Int { return f(1, 2) }",
    );
}

#[test]
fn return_type_checked() {
    one(
        "return_type",
        "type.mismatch",
        "function f(x: Label) -> PlanCode { return x }",
    );
}

#[test]
fn missing_return() {
    one(
        "missing_return",
        "type.missing_return",
        "function f(x: Bool) -> Int { if x { return 1 } }",
    );
}

#[test]
fn unit_action_returns_value() {
    one(
        "unit_returns_value",
        "type.return_value_in_unit",
        "action a() -> Unit { return 1 }",
    );
}

#[test]
fn outside_call_needs_attempt_or_match() {
    one(
        "unhandled_call",
        "failure.unhandled",
        "action a() -> Unit { var p = stripe.prices.retrieve(stripe.PriceRef { id: \"p\" }) }",
    );
}

#[test]
fn match_must_name_every_failure() {
    one(
        "match_not_exhaustive",
        "failure.match_not_exhaustive",
        "action a() fails stripe.CardDeclined -> Unit {\n    match stripe.customers.create(stripe.CustomerCreate { email: \"a@b.co\" }) {\n        success(c) => c\n        failure stripe.CardDeclined => propagate\n    }\n}",
    );
}

#[test]
fn match_may_name_transient_failures() {
    let c = check_app(&format!(
        "{PRELUDE}action a() -> Unit {{\n    match stripe.prices.retrieve(stripe.PriceRef {{ id: \"p\" }}) {{\n        success(p) => p\n        failure stripe.PriceMissing => none\n        failure Unavailable => none\n    }}\n}}"
    ));
    assert_eq!(render(&c), "");
}

#[test]
fn match_arm_for_impossible_failure() {
    one(
        "impossible_arm",
        "failure.impossible_arm",
        "action a() -> Unit {\n    match stripe.prices.retrieve(stripe.PriceRef { id: \"p\" }) {\n        success(p) => p\n        failure stripe.PriceMissing => none\n        failure stripe.CardDeclined => none\n    }\n}",
    );
}

#[test]
fn fails_missing_entry_with_origin() {
    one(
        "fails_missing",
        "failure.missing_in_fails",
        "action a() -> Unit { attempt stripe.prices.retrieve(stripe.PriceRef { id: \"p\" }) }",
    );
}

#[test]
fn fails_stale_entry() {
    one(
        "fails_stale",
        "failure.stale_in_fails",
        "action a() fails PlanTaken, NoPlan -> Unit { reject PlanTaken }",
    );
}

#[test]
fn fails_lists_transient() {
    one(
        "fails_transient",
        "failure.transient_in_fails",
        "action a() fails Unavailable -> Unit { }",
    );
}

#[test]
fn write_fails_only_with_named_failures() {
    let c = check_app(&format!(
        "{PRELUDE}action a() fails PlanTaken -> Unit {{ attempt create Plan {{ code: \"a\" }} conflict: PlanTaken }}"
    ));
    assert_eq!(render(&c), "");
}

#[test]
fn action_call_fails_with_callee_fails() {
    let c = check_app(&format!(
        "{PRELUDE}action a() fails PlanTaken -> Unit {{ reject PlanTaken }}\naction b() fails PlanTaken -> Unit {{ attempt a() }}"
    ));
    assert_eq!(render(&c), "");
}

#[test]
fn function_makes_no_outside_call() {
    one(
        "purity_outside_call",
        "purity.outside_call",
        "function f() -> Unit { attempt stripe.prices.retrieve(stripe.PriceRef { id: \"p\" }) }",
    );
}

#[test]
fn function_does_not_emit() {
    one(
        "purity_emit",
        "purity.emit",
        "function f() -> Unit { emit PlanChosen { code: \"a\" } }",
    );
}

#[test]
fn function_does_not_write() {
    one(
        "purity_write",
        "purity.write",
        "function f() -> Unit { attempt create Plan { code: \"a\" } }",
    );
}

#[test]
fn unknown_emit_option() {
    one(
        "unknown_emit_option",
        "name.unknown_setting",
        "action a() -> Unit { emit PlanChosen { code: \"a\" } with { prority: 2 } }",
    );
}

#[test]
fn route_run_arguments_checked() {
    one(
        "route_run_args",
        "type.mismatch",
        "action take(l: Label) -> Unit { }\nroute POST /plans {\n    input: PlanChosen\n    run: take(input)\n}",
    );
}

#[test]
fn route_unknown_setting() {
    one(
        "route_unknown_setting",
        "name.unknown_setting",
        "action take(p: PlanChosen) -> Unit { }\nroute POST /plans {\n    input: PlanChosen\n    idempotency_kye: required\n    run: take(input)\n}",
    );
}

#[test]
fn subscriber_event_must_exist() {
    one(
        "subscriber_unknown_event",
        "name.unknown_event",
        "action take(p: PlanChosen) -> Unit { }\nsubscriber s on PlanChosn { run: take(event) }",
    );
}

#[test]
fn unknown_name_does_not_cascade() {
    // One unknown type: the parameter, its field access, the construction
    // and the `fails` judgement all stay silent.
    one(
        "no_cascade",
        "name.unknown_type",
        "action a(p: Missing) fails PlanTaken -> Unit { attempt create Plan { code: p.code } conflict: PlanTaken }",
    );
}

#[test]
fn package_manifest_names_undeclared_type() {
    use jadpo_compiler::load::MemLoader;
    let yaml = resolve_support::STRIPE_YAML.replace("request: PriceRef", "request: PriceRefs");
    let loader = MemLoader::new()
        .with(
            "app/jadpo.yaml",
            "app: billing\npackages:\n  stripe: \"3\"\n",
        )
        .with("app/packages/stripe/package.yaml", yaml)
        .with(
            "app/packages/stripe/stripe.jadpo",
            resolve_support::STRIPE_JADPO,
        )
        .with("app/app.jadpo", "store primary { kind: postgres }\n");
    let compiled = jadpo_compiler::compile(&loader, "app");
    let c = resolve_support::Checked {
        files: compiled.files,
        diagnostics: compiled.diagnostics,
        program: compiled.program,
    };
    assert_eq!(codes(&c), vec!["package.unknown_type"], "{}", render(&c));
    let stripe = c
        .program
        .as_ref()
        .and_then(|p| p.packages.iter().find(|p| p.name.as_str() == "stripe"))
        .map(|p| p.has_errors);
    assert_eq!(stripe, Some(true));
    insta::assert_snapshot!("package_unknown_type", render(&c));
}

/// A typo gets "did you mean" among up to 500 names of its kind and
/// length; past that (a generated unit) it gets none, so that many
/// distinct unknown names cost their number, not their number times the
/// declarations' (issue 37, D6).
#[test]
fn did_you_mean_looks_among_at_most_500_names() {
    let with = |n: usize| {
        let mut src: String = (0..n)
            .map(|i| format!("function f{i:04}() -> Int {{\n    return {i}\n}}\n"))
            .collect();
        src.push_str("function g() -> Int {\n    return f00007()\n}\n");
        let c = check_app(&src);
        assert_eq!(codes(&c), vec!["name.unknown_action"], "{}", render(&c));
        render(&c).contains("did you mean")
    };
    assert!(with(500), "among 500 names");
    assert!(!with(501), "past 500 names");
}

/// Declarations are read in any order: a constraint on a type declared
/// later, in the same file or one read after it, is judged on that type's
/// definition.
#[test]
fn constraints_on_types_declared_later_are_judged_on_their_definition() {
    cov_mark::check!(type_defs_resolved_again);
    let early = "type Short = Code { max_length: 3 }\n\
                 entity Order {\n    store: primary\n    code: Code { max_length: 3 }\n}\n\
                 event OrderPlaced { code: Code { max_length: 3 } }\n\
                 failure Refused { kind: Conflict code: \"refused\" reason: Code { max_length: 3 } }\n\
                 action place(code: Short) -> Unit {\n}\n";
    let c = check_files(&[
        ("a.jadpo", &format!("{PRELUDE}{early}")),
        ("b.jadpo", "type Code = Text\n"),
    ]);
    assert_eq!(render(&c), "");
}

/// The bounds a constraint on a later type gives are those of its
/// definition: a literal is checked against them.
#[test]
fn a_literal_is_checked_through_types_declared_later() {
    one(
        "literal_through_later_alias",
        "type.constraint",
        "function f() -> Short { return \"abcd\" }\n\
         type Short = Code { max_length: 3 }\n\
         type Code = Middle { min_length: 1 }\n\
         type Middle = Text",
    );
}

/// A constraint the later type does not take is still one diagnostic.
#[test]
fn a_wrong_constraint_on_a_later_type_is_reported_once() {
    one(
        "unknown_constraint_on_later_type",
        "type.unknown_constraint",
        "type Few = Count { max_length: 3 }\ntype Count = Int",
    );
}
