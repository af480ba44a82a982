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

fn plan_validator() -> jsonschema::Validator {
    let text = std::fs::read_to_string("spec/plan.schema.json").expect("spec/plan.schema.json");
    let schema: serde_json::Value = serde_json::from_str(&text).expect("the schema is JSON");
    jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("the schema is invalid: {e}"))
}

/// Every plan the examples and the app fixtures give validates against the
/// strict schema (no field it does not list), and a field it does not list
/// is refused on an action and on an entry.
#[test]
fn plans_validate_against_the_strict_schema() {
    let validator = plan_validator();
    let mut roots = vec!["examples/billing".to_string()];
    let mut stack = vec![std::path::PathBuf::from("tests/fixtures")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if entry.file_name() == "jadpo.yaml" {
                roots.push(dir.to_string_lossy().into_owned());
            }
        }
    }
    roots.sort();
    let mut planned = 0;
    for root in &roots {
        let Some(plan) = check_app(&FsLoader, root).plan.map(|p| p.to_json()) else {
            continue;
        };
        planned += 1;
        let errors: Vec<String> = validator
            .iter_errors(&plan)
            .map(|e| format!("{e} at {}", e.instance_path))
            .collect();
        assert!(errors.is_empty(), "{root}: {errors:?}");
    }
    assert!(planned >= 5, "only {planned} plans among {roots:?}");

    let plan = check_app(&FsLoader, "examples/billing")
        .plan
        .expect("a plan")
        .to_json();
    for pointer in ["/actions/0", "/actions/0/entries/0"] {
        let mut bad = plan.clone();
        bad.pointer_mut(pointer)
            .and_then(|v| v.as_object_mut())
            .unwrap_or_else(|| panic!("{pointer} is an object"))
            .insert("surprise".into(), serde_json::json!(1));
        assert!(
            !validator.is_valid(&bad),
            "an unlisted field at {pointer} was accepted"
        );
    }
}
