//! `jadpo plan diff OLD NEW` end to end on hand-written plans: unchanged,
//! appended, changed, reordered, added and removed steps and actions, the
//! exit statuses 0/1/2 and the JSON document; and a real plan from
//! `jadpo build` against itself.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn jadpo(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_jadpo"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run jadpo: {e}"))
}

fn status(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("plan_diff")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {dir:?}: {e}"));
    dir
}

/// A step shape from operations and edges; starts are the steps nothing
/// leads to.
fn shape(ops: &[&str], edges: &[(usize, usize)]) -> Value {
    let nodes: Vec<Value> = ops
        .iter()
        .enumerate()
        .map(|(i, op)| json!({ "id": i, "operation": op, "changing": true }))
        .collect();
    let starts: Vec<usize> = (0..ops.len())
        .filter(|i| !edges.iter().any(|(_, to)| to == i))
        .collect();
    let edges: Vec<Value> = edges.iter().map(|(a, b)| json!([a, b])).collect();
    json!({ "nodes": nodes, "starts": starts, "edges": edges, "truncated": false })
}

/// A shape of operations in a row.
fn chain(ops: &[&str]) -> Value {
    let edges: Vec<(usize, usize)> = (1..ops.len()).map(|i| (i - 1, i)).collect();
    shape(ops, &edges)
}

fn plan(actions: &[(&str, Value)]) -> Value {
    let actions: Vec<Value> = actions
        .iter()
        .map(|(name, shape)| json!({ "name": name, "step_shape": shape }))
        .collect();
    json!({ "plan_format": 1, "app": "shop", "actions": actions, "build_id": "x" })
}

/// Writes both plans and runs `plan diff` on them with `extra` arguments.
fn diff(name: &str, old: &Value, new: &Value, extra: &[&str]) -> Output {
    let dir = scratch(name);
    let (o, n) = (dir.join("old.json"), dir.join("new.json"));
    for (path, value) in [(&o, old), (&n, new)] {
        std::fs::write(path, value.to_string()).unwrap_or_else(|e| panic!("{e}"));
    }
    let mut args = vec![
        "plan",
        "diff",
        o.to_str().unwrap_or(""),
        n.to_str().unwrap_or(""),
    ];
    args.extend(extra);
    jadpo(&args)
}

fn diff_json(name: &str, old: &Value, new: &Value) -> (i32, Value) {
    let out = diff(name, old, new, &["--format", "json"]);
    let doc = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(&out)));
    (status(&out), doc)
}

const A: &str = "stripe.customers.create";
const B: &str = "stripe.payment_methods.attach";
const C: &str = "stripe.subscriptions.create";
const D: &str = "stripe.invoices.finalize";

#[test]
fn identical_plans_are_unchanged_and_exit_zero() {
    let p = plan(&[("subscribe", chain(&[A, B, C]))]);
    let out = diff("identical", &p, &p, &[]);
    assert_eq!(status(&out), 0, "{}", stdout(&out));
    assert!(
        stdout(&out).starts_with("unchanged  subscribe\n"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn steps_appended_after_the_last_ones_still_replay() {
    let old = plan(&[("subscribe", chain(&[A, B, C]))]);
    let new = plan(&[("subscribe", chain(&[A, B, C, D]))]);
    let (code, doc) = diff_json("appended", &old, &new);
    assert_eq!(code, 0);
    let action = &doc["actions"][0];
    assert_eq!(action["status"], "appended");
    assert_eq!(action["strands_in_flight"], false);
    assert_eq!(action["difference"]["step"], 4);
    assert_eq!(action["difference"]["after"], json!([A, B, C]));
    assert_eq!(action["difference"]["new_operations"], json!([D]));
    assert_eq!(doc["strands_in_flight"], false);
}

#[test]
fn a_changed_step_names_the_first_difference_and_exits_one() {
    let old = plan(&[("subscribe", chain(&[A, B, C]))]);
    let new = plan(&[("subscribe", chain(&[A, D, C]))]);
    let out = diff("changed", &old, &new, &[]);
    assert_eq!(status(&out), 1, "{}", stdout(&out));
    let text = stdout(&out);
    assert!(
        text.contains(&format!(
            "changed    subscribe: step 2 was `{B}` after `{A}`, now `{D}`"
        )),
        "{text}"
    );
    assert!(text.contains("will stop as diverged"), "{text}");
}

#[test]
fn reordered_steps_are_changed_at_the_first_swapped_step() {
    let old = plan(&[("subscribe", chain(&[A, B, C]))]);
    let new = plan(&[("subscribe", chain(&[A, C, B]))]);
    let (code, doc) = diff_json("reordered", &old, &new);
    assert_eq!(code, 1);
    let difference = &doc["actions"][0]["difference"];
    assert_eq!(doc["actions"][0]["status"], "changed");
    assert_eq!(difference["step"], 2);
    assert_eq!(difference["old_operations"], json!([B]));
    assert_eq!(difference["new_operations"], json!([C]));
}

#[test]
fn removing_the_last_step_is_changed() {
    let old = plan(&[("subscribe", chain(&[A, B, C]))]);
    let new = plan(&[("subscribe", chain(&[A, B]))]);
    let out = diff("shortened", &old, &new, &[]);
    assert_eq!(status(&out), 1, "{}", stdout(&out));
    assert!(
        stdout(&out).contains("the new plan has no step 3 there"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn added_actions_strand_nothing_and_removed_ones_with_steps_do() {
    let old = plan(&[
        ("keep", chain(&[A])),
        ("gone", chain(&[A, B])),
        ("quiet", chain(&[])),
    ]);
    let new = plan(&[("keep", chain(&[A])), ("fresh", chain(&[C]))]);
    let (code, doc) = diff_json("added_removed", &old, &new);
    assert_eq!(code, 1);
    let statuses: Vec<(String, String, bool)> = doc["actions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            (
                a["name"].as_str().unwrap_or("").to_string(),
                a["status"].as_str().unwrap_or("").to_string(),
                a["strands_in_flight"].as_bool().unwrap_or(false),
            )
        })
        .collect();
    let expected = [
        ("fresh", "added", false),
        ("gone", "removed", true),
        ("keep", "unchanged", false),
        ("quiet", "removed", false),
    ];
    let expected: Vec<(String, String, bool)> = expected
        .iter()
        .map(|(n, s, b)| (n.to_string(), s.to_string(), *b))
        .collect();
    assert_eq!(statuses, expected);

    let only_added = plan(&[("keep", chain(&[A])), ("fresh", chain(&[C]))]);
    let out = diff(
        "added_only",
        &plan(&[("keep", chain(&[A]))]),
        &only_added,
        &[],
    );
    assert_eq!(status(&out), 0, "{}", stdout(&out));
}

#[test]
fn a_new_branch_beside_old_paths_is_appended() {
    // Old: A then B. New: A then B, or A then C.
    let old = plan(&[("route", chain(&[A, B]))]);
    let new = plan(&[("route", shape(&[A, B, C], &[(0, 1), (0, 2)]))]);
    let (code, doc) = diff_json("branch", &old, &new);
    assert_eq!(code, 0);
    assert_eq!(doc["actions"][0]["status"], "appended");
    assert_eq!(doc["actions"][0]["difference"]["step"], 2);
    assert_eq!(
        doc["actions"][0]["difference"]["old_operations"],
        json!([B])
    );
}

#[test]
fn a_branch_dropped_from_the_new_plan_is_changed() {
    let old = plan(&[("route", shape(&[A, B, C], &[(0, 1), (0, 2)]))]);
    let new = plan(&[("route", chain(&[A, B]))]);
    let (code, doc) = diff_json("branch_dropped", &old, &new);
    assert_eq!(code, 1);
    assert_eq!(
        doc["actions"][0]["difference"]["old_operations"],
        json!([C])
    );
    assert_eq!(
        doc["actions"][0]["difference"]["new_operations"],
        json!([B])
    );
}

#[test]
fn an_unreadable_or_invalid_plan_exits_two() {
    let dir = scratch("invalid");
    let good = dir.join("good.json");
    std::fs::write(&good, plan(&[]).to_string()).unwrap_or_else(|e| panic!("{e}"));
    let bad = dir.join("bad.json");
    let broken_edge = json!({ "plan_format": 1, "actions": [
        { "name": "a", "step_shape": { "nodes": [], "starts": [0], "edges": [] } }
    ]});
    std::fs::write(&bad, broken_edge.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let good = good.to_str().unwrap_or("");
    let format_text = dir.join("format-text.json");
    std::fs::write(&format_text, r#"{"plan_format": "1", "actions": []}"#)
        .unwrap_or_else(|e| panic!("{e}"));
    let fifo = dir.join("fifo.json");
    let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes())
        .unwrap_or_else(|e| panic!("{e}"));
    // SAFETY: `mkfifo` reads a NUL-terminated path we own.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
    for other in [
        bad.to_str().unwrap_or(""),
        "no/such/plan.json",
        "Cargo.toml",
        // A pipe or a device as a plan once hung or read until memory ran out.
        fifo.to_str().unwrap_or(""),
        "/dev/zero",
    ] {
        let out = jadpo(&["plan", "diff", good, other]);
        assert_eq!(status(&out), 2, "{other}: {}", stdout(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("error: "), "{other}: {err}");
        assert!(out.stdout.is_empty(), "{other}: stdout not empty");
    }
    let out = jadpo(&["plan", "diff", good, format_text.to_str().unwrap_or("")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(r#"its plan_format is "1""#),
        "a plan_format written as text is named as such: {err}"
    );
}

#[test]
fn a_built_plan_is_unchanged_against_itself() {
    let dir = scratch("built");
    let out_dir = dir.to_str().unwrap_or("");
    let built = jadpo(&["build", "examples/billing", "--out", out_dir]);
    assert_eq!(status(&built), 0, "{}", stdout(&built));
    let plan = dir.join("plan.json");
    let plan = plan.to_str().unwrap_or("");
    let out = jadpo(&["plan", "diff", plan, plan]);
    assert_eq!(status(&out), 0, "{}", stdout(&out));
    assert!(
        stdout(&out).contains("0 appended, 0 changed, 0 added, 0 removed"),
        "{}",
        stdout(&out)
    );
}

/// `plan` in format 2: the same steps, counted from 1.
fn plan_v2(actions: &[(&str, Value)]) -> Value {
    let mut p = plan(actions);
    let shift = |v: &mut Value| {
        if let Some(n) = v.as_u64() {
            *v = json!(n + 1);
        }
    };
    for action in p["actions"].as_array_mut().into_iter().flatten() {
        let shape = &mut action["step_shape"];
        for node in shape["nodes"].as_array_mut().into_iter().flatten() {
            shift(&mut node["id"]);
        }
        for s in shape["starts"].as_array_mut().into_iter().flatten() {
            shift(s);
        }
        for edge in shape["edges"].as_array_mut().into_iter().flatten() {
            for end in edge.as_array_mut().into_iter().flatten() {
                shift(end);
            }
        }
    }
    p["plan_format"] = json!(2);
    p
}

#[test]
fn a_format_1_plan_reads_as_the_same_steps_in_format_2() {
    let old = plan(&[("subscribe", chain(&[A, B, C]))]);
    let new = plan_v2(&[("subscribe", chain(&[A, B, C]))]);
    let (code, doc) = diff_json("formats", &old, &new);
    assert_eq!(code, 0, "{doc}");
    // Format 2 read as if from 0 would point past its last step.
    let (code, doc) = diff_json("formats-back", &new, &new);
    assert_eq!(code, 0, "{doc}");
    let mut wrong = new.clone();
    wrong["plan_format"] = json!(1);
    let out = diff("formats-wrong", &wrong, &new, &[]);
    assert_eq!(status(&out), 2, "{}", stdout(&out));
}
