//! The plan `jadpo build` writes, snapshotted for apps a reader can follow:
//! the billing example and a fixture whose steps run inside a package action.

use jadpo::check::check_app;
use jadpo_compiler::load::FsLoader;

fn plan_text(root: &str) -> String {
    let outcome = check_app(&FsLoader, root);
    let errors: Vec<String> = outcome
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| format!("{}: {}", d.code, d.summary))
        .collect();
    assert!(
        errors.is_empty(),
        "{root} must check without errors: {errors:?}"
    );
    let plan = outcome.plan.map(|p| p.to_json()).unwrap_or_default();
    serde_json::to_string_pretty(&plan).unwrap_or_default()
}

#[test]
fn billing_example_plan() {
    insta::assert_snapshot!(plan_text("examples/billing"));
}

#[test]
fn plan_with_steps_inside_a_package_action() {
    insta::assert_snapshot!(plan_text(
        "tests/fixtures/rules/step/too_many/pass_package_and_app_calls"
    ));
}
