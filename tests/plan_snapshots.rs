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

/// Canonical JSON as spec/plan.md words it: no whitespace, keys sorted by
/// their bytes, only `"`, `\` and control characters escaped.
fn canonical(value: &serde_json::Value, out: &mut String) {
    use serde_json::Value;
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => quoted(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                quoted(key, out);
                out.push(':');
                canonical(&map[key], out);
            }
            out.push('}');
        }
    }
}

fn quoted(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `step_shape_digest` from a `step_shape` value, by spec/plan.md's words.
fn shape_digest(shape: &serde_json::Value) -> String {
    let nodes = shape["nodes"].as_array().cloned().unwrap_or_default();
    let edges: Vec<(u64, u64)> = shape["edges"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| (e[0].as_u64().unwrap_or(0), e[1].as_u64().unwrap_or(0)))
        .collect();
    let mut hashes: std::collections::BTreeMap<u64, [u8; 32]> = Default::default();
    let mut ids: Vec<u64> = nodes.iter().filter_map(|n| n["id"].as_u64()).collect();
    ids.sort_unstable();
    for &id in ids.iter().rev() {
        let node = nodes.iter().find(|n| n["id"] == id).expect("the node");
        let next: std::collections::BTreeSet<[u8; 32]> = edges
            .iter()
            .filter(|(from, _)| *from == id)
            .map(|(_, to)| {
                assert!(*to > id, "an edge to a lower id: {id} -> {to}");
                hashes[to]
            })
            .collect();
        let mut bytes = b"step\0".to_vec();
        bytes.extend(node["operation"].as_str().expect("operation").as_bytes());
        bytes.push(0);
        next.iter().for_each(|h| bytes.extend(h));
        hashes.insert(id, *blake3::hash(&bytes).as_bytes());
    }
    let starts: std::collections::BTreeSet<[u8; 32]> = shape["starts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_u64())
        .map(|s| hashes[&s])
        .collect();
    let mut bytes = b"jadpo-step-shape-v1\0".to_vec();
    starts.iter().for_each(|h| bytes.extend(h));
    blake3::hash(&bytes).to_hex().to_string()
}

/// spec/plan.md says exactly how `build_id` and `step_shape_digest` are
/// computed: its test vectors, and the billing plan's build id and every
/// action's digest, recomputed from those words alone.
#[test]
fn digests_follow_the_spec() {
    let spec = std::fs::read_to_string("spec/plan.md").expect("spec/plan.md");
    let vector = serde_json::json!({
        "nodes": [
            { "id": 0, "operation": "stripe.customers.create", "changing": true },
            { "id": 1, "operation": "stripe.subscriptions.create", "changing": true },
        ],
        "starts": [0],
        "edges": [[0, 1]],
    });
    let empty = serde_json::json!({ "nodes": [], "starts": [], "edges": [] });
    for shape in [&vector, &empty] {
        let digest = shape_digest(shape);
        assert!(
            spec.contains(&format!("`{digest}`")),
            "spec/plan.md lacks the vector {digest}"
        );
    }

    let plan = check_app(&FsLoader, "examples/billing")
        .plan
        .expect("a plan")
        .to_json();
    let mut without = plan.clone();
    let id = without
        .as_object_mut()
        .and_then(|m| m.remove("build_id"))
        .expect("a build_id");
    let mut text = String::new();
    canonical(&without, &mut text);
    assert_eq!(id, blake3::hash(text.as_bytes()).to_hex().to_string());
    let actions = plan["actions"].as_array().cloned().unwrap_or_default();
    assert!(actions
        .iter()
        .any(|a| a["steps"].as_array().is_some_and(|s| s.len() > 1)));
    for action in &actions {
        assert_eq!(
            action["step_shape_digest"].as_str().unwrap_or(""),
            shape_digest(&action["step_shape"]),
            "{}",
            action["name"]
        );
    }
}
