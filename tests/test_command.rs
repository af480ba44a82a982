//! `jadpo test` (spec/testing.md): the bundled example's tests pass with
//! their crash matrix; a failing test is reported with its span and step
//! listing (`test.failed`), in human and JSON output (checked against
//! spec/test-output.schema.json); the check refuses to run tests of an app
//! with errors; `--filter` and `--no-crash` select; a crash run that ends
//! unlike the clean run fails its test.

use std::path::Path;
use std::process::Command;

use jadpo::testing::{run_to_string as run, TestArgs};
use jadpo_compiler::load::loaders::MemLoader;
use serde_json::Value;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The billing example, in memory, with `extra` files added to it.
fn billing(extra: &[(&str, &str)]) -> MemLoader {
    let mut m = MemLoader::new();
    let root = repo().join("examples/billing");
    for dir in ["", "src", "tests"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.is_file() {
                let rel = path.strip_prefix(&root).unwrap_or(&path);
                let bytes = std::fs::read(&path).unwrap_or_default();
                m.insert(format!("app/{}", rel.to_string_lossy()), bytes);
            }
        }
    }
    for (path, text) in extra {
        m.insert(format!("app/{path}"), text.as_bytes());
    }
    m
}

fn human(loader: &MemLoader, args: TestArgs<'_>) -> (String, u8) {
    run(loader, "app", args)
}

fn json(loader: &MemLoader, args: TestArgs<'_>) -> (Value, u8) {
    let (text, status) = run(loader, "app", TestArgs { json: true, ..args });
    let doc: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"));
    let errors = schema_errors(&doc);
    assert!(
        errors.is_empty(),
        "the document breaks the schema: {errors:#?}\n{text}"
    );
    (doc, status)
}

fn schema_errors(doc: &Value) -> Vec<String> {
    let text = std::fs::read_to_string(repo().join("spec/test-output.schema.json"))
        .unwrap_or_else(|e| panic!("cannot read the schema: {e}"));
    let schema: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON: {e}"));
    let validator =
        jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("invalid schema: {e}"));
    validator
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect()
}

#[test]
fn the_example_tests_pass_with_their_crash_runs() {
    let (text, status) = human(&billing(&[]), TestArgs::default());
    assert_eq!(status, 0, "{text}");
    insta::assert_snapshot!("billing_tests", text);
}

#[test]
fn the_binary_runs_the_example_tests() {
    let out = Command::new(env!("CARGO_BIN_EXE_jadpo"))
        .args([
            "test",
            "examples/billing",
            "--filter",
            "declined card refuses",
        ])
        .current_dir(repo())
        .output()
        .unwrap_or_else(|e| panic!("cannot run jadpo: {e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert_eq!(
        text,
        "test \"a declined card refuses the subscription\" ... ok (6 crash runs)\n1 passed, 0 failed; 6 crash runs\n"
    );
}

const FAILING: &str = r#"
test "counts one customer too many" using subscribed {
    call subscribe(ada())
    assert sent stripe.customers.create == 2
}

test "expects a decline that does not come" using subscribed {
    call subscribe(ada()) fails stripe.CardDeclined
}

test "scripts nothing" {
    call subscribe(ada())
}
"#;

#[test]
fn failing_tests_name_the_statement_and_the_steps() {
    let loader = billing(&[("tests/failing.jadpo", FAILING)]);
    let (text, status) = human(
        &loader,
        TestArgs {
            filter: Some("o"),
            ..TestArgs::default()
        },
    );
    assert_eq!(status, 1, "{text}");
    insta::assert_snapshot!("failing_tests", text);
    let (doc, status) = json(
        &loader,
        TestArgs {
            filter: Some("o"),
            ..TestArgs::default()
        },
    );
    assert_eq!(status, 1);
    let kinds: Vec<&str> = doc["tests"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["verdict"] == "failed")
        .map(|t| t["failures"][0]["kind"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(kinds, ["assertion", "outcome", "unscripted"]);
    assert_eq!(doc["failed"], 3);
}

#[test]
fn filter_and_no_crash_select_what_runs() {
    let loader = billing(&[]);
    let (doc, status) = json(
        &loader,
        TestArgs {
            filter: Some("lost"),
            no_crash: true,
            ..TestArgs::default()
        },
    );
    assert_eq!(status, 0);
    assert_eq!(doc["tests"].as_array().map(Vec::len), Some(1));
    assert_eq!(doc["crash_runs"], 0);
    let (doc, _) = json(
        &loader,
        TestArgs {
            filter: Some("no such test"),
            ..TestArgs::default()
        },
    );
    assert_eq!(
        (doc["passed"].clone(), doc["failed"].clone()),
        (0.into(), 0.into())
    );
    let (text, status) = human(
        &loader,
        TestArgs {
            filter: Some("no such test"),
            ..TestArgs::default()
        },
    );
    assert_eq!(
        (text.as_str(), status),
        ("0 passed, 0 failed; 0 crash runs\n", 0)
    );
}

#[test]
fn an_app_with_errors_runs_no_tests() {
    let loader = billing(&[("tests/broken.jadpo", "test \"x\" using nowhere {\n}\n")]);
    let (text, status) = human(&loader, TestArgs::default());
    assert_eq!(status, 1);
    assert!(text.contains("error[test.unknown_fixture]"), "{text}");
    assert!(
        text.ends_with("not running tests: the project has errors\n"),
        "{text}"
    );
    let (doc, status) = json(&loader, TestArgs::default());
    assert_eq!((doc["checked"].clone(), status), (false.into(), 1));
    let (_, status) = human(&MemLoader::new(), TestArgs::default());
    assert_eq!(status, 2, "no jadpo.yaml: the project cannot be checked");
}

/// `customers.delete` is `keyed: false` (repeat-safe). Answered `deleted:
/// true` and then `deleted: false`, a crash after the provider acted makes
/// the resend take the second answer: the crash run ends unlike the clean
/// run, and the matrix catches it.
const UNSTABLE: &str = r#"
action replace_customer(email: stripe.Email) fails stripe.InvalidEmail, stripe.ResourceMissing -> Bool {
    var customer = attempt stripe.customers.create(stripe.CustomerCreate { email: email })
    var gone = attempt stripe.customers.delete(stripe.CustomerRef { id: customer.id })
    return gone.deleted
}

fixture flaky_delete {
    fake stripe {
        customers.create => stripe.Customer { id: "cus_1" email: "ada@example.com" }
        customers.delete => stripe.DeletedCustomer { id: "cus_1" deleted: true }
        customers.delete => stripe.DeletedCustomer { id: "cus_1" deleted: false }
    }
}

test "a replaced customer is deleted" using flaky_delete {
    var gone = call replace_customer("ada@example.com")
    assert gone
}
"#;

#[test]
fn a_crash_run_that_ends_otherwise_fails_the_test() {
    let loader = billing(&[("src/unstable.jadpo", UNSTABLE)]);
    let args = TestArgs {
        filter: Some("replaced"),
        ..TestArgs::default()
    };
    let (text, status) = human(&loader, args);
    assert_eq!(status, 1, "{text}");
    insta::assert_snapshot!("crash_run_failure", text);
    let (doc, _) = json(&loader, args);
    let failures = &doc["tests"][0]["failures"];
    assert_eq!(failures[0]["kind"], "crash_run");
    assert!(!failures[0]["crash_steps"]
        .as_array()
        .is_none_or(Vec::is_empty));
    let (_, status) = human(
        &loader,
        TestArgs {
            no_crash: true,
            ..args
        },
    );
    assert_eq!(status, 0, "the clean run alone passes");
}

/// The stripe package's folder, in memory, with `extra` files added.
fn stripe_package(extra: &[(&str, &str)]) -> MemLoader {
    let mut m = MemLoader::new();
    let root = repo().join("packages/stripe");
    for dir in ["", "tests"] {
        for e in std::fs::read_dir(root.join(dir))
            .into_iter()
            .flatten()
            .flatten()
        {
            let path = e.path();
            if path.is_file() {
                let rel = path.strip_prefix(&root).unwrap_or(&path);
                let bytes = std::fs::read(&path).unwrap_or_default();
                m.insert(format!("app/{}", rel.to_string_lossy()), bytes);
            }
        }
    }
    for (path, text) in extra {
        m.insert(format!("app/{path}"), text.as_bytes());
    }
    m
}

#[test]
fn a_package_folder_runs_its_own_tests() {
    let (text, status) = human(&stripe_package(&[]), TestArgs::default());
    assert_eq!(status, 0, "{text}");
    assert!(
        text.contains(
            "test \"a customer is subscribed in three keyed steps\" ... ok (9 crash runs)"
        ),
        "{text}"
    );
    assert!(
        text.ends_with("3 passed, 0 failed; 24 crash runs\n"),
        "{text}"
    );
}

#[test]
fn a_package_test_cannot_count_stored_rows() {
    let extra = "test \"rows\" {\n    assert stored Subscription == 0\n}\n";
    let (text, status) = human(
        &stripe_package(&[("tests/rows.jadpo", extra)]),
        TestArgs::default(),
    );
    assert_eq!(status, 1);
    assert!(text.contains("error[test.stored_in_package]"), "{text}");
}

/// Every `jadpo` block of spec/testing.md checks clean in the billing
/// example (its fixtures and tests renamed, since the first is billing's
/// own): the reference's examples are programs a reader can paste.
#[test]
fn the_examples_of_spec_testing_check_clean() {
    let spec = std::fs::read_to_string(repo().join("spec/testing.md")).unwrap_or_default();
    let blocks: Vec<&str> = spec
        .split("```jadpo\n")
        .skip(1)
        .filter_map(|rest| rest.split("```").next())
        .collect();
    assert!(blocks.len() >= 2, "spec/testing.md has its examples");
    for (i, block) in blocks.iter().enumerate() {
        let renamed = regex_lite_rename(block);
        let loader = billing(&[("src/zz_spec_example.jadpo", &renamed)]);
        let (doc, status) = json(&loader, TestArgs::default());
        assert_eq!(
            doc["checked"],
            true,
            "spec/testing.md example {} does not check: {doc:#}",
            i + 1
        );
        assert!(status <= 1, "example {}: status {status}", i + 1);
    }
}

/// `fixture F` / `using F` to `F_from_spec` and `test "N"` to `test "spec:
/// N"`, so an example can sit beside the tests it repeats.
fn regex_lite_rename(block: &str) -> String {
    let mut out = String::new();
    for line in block.lines() {
        let mut line = line.to_string();
        for word in ["fixture ", "using "] {
            if let Some(at) = line.find(word) {
                let start = at + word.len();
                let end = line[start..]
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .map_or(line.len(), |n| start + n);
                line.insert_str(end, "_from_spec");
            }
        }
        if let Some(rest) = line.strip_prefix("test \"") {
            line = format!("test \"spec: {rest}");
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}
