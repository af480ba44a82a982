//! The operator's path of the seed (design `server.md` section 19), with
//! the commands alone: a route's run parks when Stripe answers 500 on a
//! keyed step; `deliveries list --not-done` finds it, `show` says what to
//! check and how to settle it, `retry --not-done` sends the step again
//! under a new key and the client's resend completes it, `abandon` ends
//! another for good and its claim answers 500 `abandoned`; `runs
//! unfinished --build` gates a deploy that would strand it.

use std::path::Path;
use std::process::{Command, Output};

use crate::server_support::{scratch, spawn, BILLING, BODY, KEYS};

const STEPS_KEY: &str = "test-only-key";

fn dev(db: &Path, fakes: &str) -> crate::server_support::Dev {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_jadpo"));
    cmd.args(["dev", BILLING, "--listen", "127.0.0.1:0", "--no-reload"])
        .args(["--format", "json", "--lease", "1", "--fakes", fakes, "--db"])
        .arg(db)
        .env("JADPO_API_KEYS", KEYS)
        .env_remove("JADPO_CRASH_AT");
    spawn(cmd).unwrap_or_else(|e| panic!("{e}"))
}

fn jadpo(db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_jadpo"))
        .args(args)
        .args(["--app", BILLING, "--store"])
        .arg(format!("sqlite:{}", db.display()))
        .env("STEPS_KEY", STEPS_KEY)
        .output()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A route's run parked at step 2 (Stripe's 500 on `payment_methods.attach`).
fn parked(name: &str) -> (std::path::PathBuf, String) {
    let dir = scratch(name);
    let db = dir.join("dev.sqlite");
    let server = dev(&db, "stripe_down");
    // The first attempt leaves step 2 in doubt (503, send again); the
    // resend finds Stripe replays its 500 for the key and parks.
    let key = [("idempotency-key", "order-1")];
    let (status, body) = server
        .request("POST", "/subscriptions", &key, BODY)
        .unwrap_or_else(|| panic!("no answer"));
    assert_eq!(status, 503, "{body}");
    let (status, body) = server
        .request("POST", "/subscriptions", &key, BODY)
        .unwrap_or_else(|| panic!("no answer"));
    assert_eq!(status, 500, "{body}");
    assert!(body.contains("needs_operator"), "{body}");
    server.stop();
    let listed = jadpo(
        &db,
        &["deliveries", "list", "--not-done", "--format", "json"],
    );
    let doc: serde_json::Value = serde_json::from_slice(&listed.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&listed)));
    let ids: Vec<String> = doc["deliveries"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| d["state"] == "outcome_unknown")
        .filter_map(|d| d["id"].as_str().map(str::to_string))
        .collect();
    assert_eq!(ids.len(), 1, "{doc}");
    (db, ids[0].clone())
}

/// The listing with its id and clock times replaced, for a snapshot.
fn steady(text: &str, id: &str) -> String {
    let text = text.replace(id, "r_ID");
    // `until 10:02 tomorrow`: the minute of the window's end.
    let text = match text.find("key until ") {
        Some(at) => {
            let start = at + "key until ".len();
            let mut t = text.clone();
            t.replace_range(start..(start + 5).min(t.len()), "HH:MM");
            t
        }
        None => text,
    };
    let mut out = String::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let time = chars.len() >= i + 8
            && chars[i..i + 8].iter().enumerate().all(|(j, c)| {
                if j == 2 || j == 5 {
                    *c == ':'
                } else {
                    c.is_ascii_digit()
                }
            });
        if time {
            out.push_str("HH:MM:SS");
            i += 8;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

#[test]
fn a_parked_run_is_shown_checked_retried_and_completed_with_the_commands_alone() {
    let (db, id) = parked("operators-retry");
    let short = &id[..8];
    let shown = jadpo(&db, &["deliveries", "show", short]);
    assert_eq!(shown.status.code(), Some(0), "{}", text(&shown));
    insta::assert_snapshot!("deliveries_show_parked", steady(&text(&shown), &id));

    let plain = jadpo(&db, &["deliveries", "retry", short]);
    assert_eq!(plain.status.code(), Some(1), "{}", text(&plain));
    assert!(text(&plain).contains("step 2 of"), "{}", text(&plain));

    let retried = jadpo(&db, &["deliveries", "retry", short, "--not-done"]);
    assert_eq!(retried.status.code(), Some(0), "{}", text(&retried));
    let again = jadpo(&db, &["deliveries", "retry", short, "--not-done"]);
    assert_eq!(
        again.status.code(),
        Some(1),
        "a second retry is refused: {}",
        text(&again)
    );

    // Stripe works again: the client's resend runs the retried delivery.
    let server = dev(&db, "dev");
    let (status, body) = server
        .request(
            "POST",
            "/subscriptions",
            &[("idempotency-key", "order-1")],
            BODY,
        )
        .unwrap_or_else(|| panic!("no answer"));
    assert_eq!((status, body.as_str()), (200, "\"sub_1\""));
    server.stop();
    let shown = jadpo(&db, &["deliveries", "show", short]);
    insta::assert_snapshot!("deliveries_show_completed", steady(&text(&shown), &id));
}

#[test]
fn an_abandoned_run_answers_500_abandoned_to_its_client() {
    let (db, id) = parked("operators-abandon");
    let done = jadpo(
        &db,
        &["deliveries", "abandon", &id, "--reason", "refunded by hand"],
    );
    assert_eq!(done.status.code(), Some(0), "{}", text(&done));
    let shown = jadpo(&db, &["deliveries", "show", &id]);
    assert!(
        text(&shown).contains("Abandoned: abandoned: refunded by hand"),
        "{}",
        text(&shown)
    );
    let server = dev(&db, "dev");
    let (status, body) = server
        .request(
            "POST",
            "/subscriptions",
            &[("idempotency-key", "order-1")],
            BODY,
        )
        .unwrap_or_else(|| panic!("no answer"));
    assert_eq!(status, 500, "{body}");
    assert!(body.contains("\"code\":\"abandoned\""), "{body}");
    server.stop();
}

#[test]
fn runs_unfinished_gates_a_deploy_that_would_strand_a_record() {
    let (db, id) = parked("operators-gate");
    let dir = db.parent().unwrap_or_else(|| Path::new(".")).to_path_buf();
    let build = dir.join("build");
    let built = Command::new(env!("CARGO_BIN_EXE_jadpo"))
        .args(["build", BILLING, "--out"])
        .arg(&build)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(built.status.success(), "{}", text(&built));
    let plan = build.join("plan.json");
    let same = jadpo(
        &db,
        &["runs", "unfinished", "--build", &plan.to_string_lossy()],
    );
    assert_eq!(same.status.code(), Some(0), "{}", text(&same));
    assert!(
        text(&same).contains(&format!("{id}  subscribe  2 steps  resumes")),
        "{}",
        text(&same)
    );

    // A build whose first step is another operation would hold it.
    let plan_text = std::fs::read_to_string(&plan).unwrap_or_default();
    let mut doc: serde_json::Value = serde_json::from_str(&plan_text).unwrap_or_default();
    for a in doc["actions"].as_array_mut().into_iter().flatten() {
        if a["name"] == "subscribe" {
            a["step_shape_digest"] = serde_json::json!("0".repeat(64));
            for n in a["step_shape"]["nodes"]
                .as_array_mut()
                .into_iter()
                .flatten()
            {
                if n["id"] == 1 {
                    n["operation"] = serde_json::json!("stripe.customers.delete");
                }
            }
        }
    }
    let changed = dir.join("changed.json");
    std::fs::write(&changed, doc.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let gate = jadpo(
        &db,
        &["runs", "unfinished", "--build", &changed.to_string_lossy()],
    );
    assert_eq!(gate.status.code(), Some(1), "{}", text(&gate));
    assert!(
        text(&gate).contains("held as diverged at step 1"),
        "{}",
        text(&gate)
    );
}

/// Python's `prometheus_client` parser, when installed; `None` skips.
fn parsed_by_prometheus(text: &str) -> Option<Result<String, String>> {
    let probe = Command::new("python3")
        .args(["-c", "import prometheus_client.openmetrics.parser"])
        .output()
        .ok()?;
    if !probe.status.success() {
        eprintln!("skipped: no python3 prometheus_client (pip install prometheus_client)");
        return None;
    }
    let script = "import sys\nfrom prometheus_client.openmetrics.parser import text_string_to_metric_families as parse\nfor f in parse(sys.stdin.read()):\n    for s in f.samples:\n        print(s.name, sorted(s.labels.items()), s.value)\n";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    {
        use std::io::Write;
        let mut stdin = child.stdin.take()?;
        stdin.write_all(text.as_bytes()).ok()?;
    }
    let out = child.wait_with_output().ok()?;
    Some(if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    })
}

#[test]
fn metrics_count_the_routes_and_the_alert_fires_on_a_parked_run() {
    let dir = scratch("operators-metrics");
    let db = dir.join("dev.sqlite");
    let server = dev(&db, "stripe_down");
    let key = [("idempotency-key", "order-1")];
    for _ in 0..2 {
        let _ = server.request("POST", "/subscriptions", &key, BODY);
    }
    let (status, text) = server
        .request("GET", "/metrics", &[], "")
        .unwrap_or_else(|| panic!("no answer"));
    server.stop();
    assert_eq!(status, 200, "{text}");
    assert!(
        text.contains("jadpo_alert{alert=\"unfinished\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("jadpo_route_requests_total{route=\"POST /subscriptions\",status=\"500\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("jadpo_operator_items{outcome=\"outcome_unknown\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("jadpo_unfinished_records{store=\"primary\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("jadpo_deliveries_total{action=\"subscribe\",entry=\"POST /subscriptions\",outcome=\"outcome_unknown\"} 1"),
        "{text}"
    );
    // No id in any label.
    assert!(!text.contains("\"r_") && !text.contains("\"d_"), "{text}");
    if let Some(parsed) = parsed_by_prometheus(&text) {
        let samples =
            parsed.unwrap_or_else(|e| panic!("Prometheus's parser refused /metrics: {e}"));
        assert!(samples.contains("jadpo_alert"), "{samples}");
    }
    let rules = Command::new(env!("CARGO_BIN_EXE_jadpo"))
        .args(["alerts", "prometheus"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(String::from_utf8_lossy(&rules.stdout).contains("jadpo_alert{alert=\"unfinished\"}"));
}

#[test]
fn the_personal_data_report_names_what_is_kept_and_for_how_long() {
    let out = Command::new(env!("CARGO_BIN_EXE_jadpo"))
        .args(["privacy", BILLING])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let report = text(&out);
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert!(
        report.contains("`Subscription` (id, customer, plan)"),
        "{report}"
    );
    assert!(
        report.contains("Provider answers for unfinished actions, at most 30 days"),
        "{report}"
    );
    assert!(report.contains("only as fingerprints"), "{report}");
}
