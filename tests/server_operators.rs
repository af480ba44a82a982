//! The operator's path of the seed (design `server.md` section 19), with
//! the commands alone, on SQLite (`jadpo dev`) and on Postgres (`jadpo
//! serve`, through `scripts/with-postgres.sh`): a route's run parks when
//! Stripe answers 500 on a keyed step; `deliveries list --not-done` finds
//! it, `show` says what to check and how to settle it, `retry --not-done`
//! sends the step again under a new key exactly once and the client's
//! resend completes it, two operators retrying at once get one success and
//! one refusal, `abandon` ends another for good and its claim answers 500
//! `abandoned`; `runs unfinished --build` gates a deploy that would strand
//! it.

use std::process::Command;

use crate::server_support::{postgres, scratch, steady, text, Ops, BILLING, BODY};

/// The operators' app on SQLite in a scratch folder `name`.
fn on_sqlite(name: &str) -> Ops {
    Ops::sqlite(&scratch(name))
}

/// The operators' app on Postgres, as app `name`; `None` without a server.
fn on_postgres(name: &str) -> Option<Ops> {
    let url = postgres()?;
    Some(Ops::postgres(&scratch(name), name, &url))
}

/// A listing with the app's name as billing's (a Postgres test's app has
/// a name of its own), its id and clock times steady.
fn steady_as_billing(ops: &Ops, listing: &str, id: &str) -> String {
    let name = ops
        .app
        .file_name()
        .map(|_| app_name(ops))
        .unwrap_or_default();
    steady(&listing.replace(&format!("{name}."), "billing."), id)
}

fn app_name(ops: &Ops) -> String {
    let manifest = std::fs::read_to_string(ops.app.join("jadpo.yaml")).unwrap_or_default();
    manifest
        .lines()
        .find_map(|l| l.strip_prefix("app: "))
        .unwrap_or("billing")
        .trim()
        .to_string()
}

fn post(server: &crate::server_support::Dev, key: &str) -> (u16, String) {
    server
        .request("POST", "/subscriptions", &[("idempotency-key", key)], BODY)
        .unwrap_or_else(|| panic!("no answer"))
}

/// A route's run parked at step 2 (Stripe's 500 on `payment_methods.attach`).
fn parked(ops: &Ops) -> String {
    let server = ops.start("stripe_down");
    // The first attempt leaves step 2 in doubt (503, send again); the
    // resend finds Stripe replays its 500 for the key and parks.
    let (status, body) = post(&server, "order-1");
    assert_eq!(status, 503, "{body}");
    let (status, body) = post(&server, "order-1");
    assert_eq!(status, 500, "{body}");
    assert!(body.contains("needs_operator"), "{body}");
    server.stop();
    let listed = ops.jadpo(&["deliveries", "list", "--not-done", "--format", "json"]);
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
    ids[0].clone()
}

/// The sends the fakes' journal holds for `operation`: (key, acted).
fn sends(ops: &Ops, operation: &str) -> Vec<(String, bool)> {
    let journal = match &ops.store {
        crate::server_support::Backend::Sqlite(db) => {
            let mut name = db.as_os_str().to_owned();
            name.push(".fakes.jsonl");
            std::path::PathBuf::from(name)
        }
        crate::server_support::Backend::Postgres(_) => ops.dir.join("fakes.jsonl"),
    };
    let text = std::fs::read_to_string(&journal).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|j| j["operation"] == operation)
        .map(|j| {
            (
                j["key"].as_str().unwrap_or("").to_string(),
                j["acted"] == true,
            )
        })
        .collect()
}

fn retried_and_completed(ops: &Ops) {
    let id = parked(ops);
    let short = &id[..8];
    let shown = ops.jadpo(&["deliveries", "show", short]);
    assert_eq!(shown.status.code(), Some(0), "{}", text(&shown));
    insta::assert_snapshot!(
        "deliveries_show_parked",
        steady_as_billing(ops, &text(&shown), &id)
    );

    // Two days on, Stripe's 24 h window for the key has passed: the line
    // says the key no longer guards a resend.
    let later = ops.jadpo_with(
        &["deliveries", "show", short],
        &[("JADPO_TEST_CLOCK_SHIFT_S", "172800")],
    );
    assert_eq!(later.status.code(), Some(0), "{}", text(&later));
    insta::assert_snapshot!(
        "deliveries_show_parked_past_its_window",
        steady_as_billing(ops, &text(&later), &id)
    );

    // A rotated steps key opens the answers through STEPS_KEY_PREVIOUS.
    let rotated = |vars: &[(&str, &str)]| {
        let out = ops.jadpo_with(&["deliveries", "show", short], vars);
        text(&out)
    };
    let closed = rotated(&[("STEPS_KEY", "the-next-key")]);
    assert!(
        closed.contains("the steps key does not open this answer"),
        "{closed}"
    );
    assert!(!closed.contains("cus_1"), "{closed}");
    let open = rotated(&[
        ("STEPS_KEY", "the-next-key"),
        ("STEPS_KEY_PREVIOUS", "test-only-key"),
    ]);
    assert!(
        open.contains("cus_1") && !open.contains("does not open"),
        "{open}"
    );

    let plain = ops.jadpo(&["deliveries", "retry", short]);
    assert_eq!(plain.status.code(), Some(1), "{}", text(&plain));
    assert!(text(&plain).contains("step 2 of"), "{}", text(&plain));

    // Two operators at once: one wins, the other is told why not.
    let both: Vec<std::process::Output> = std::thread::scope(|s| {
        let runs: Vec<_> = (0..2)
            .map(|_| s.spawn(|| ops.jadpo(&["deliveries", "retry", short, "--not-done"])))
            .collect();
        runs.into_iter()
            .map(|r| r.join().unwrap_or_else(|_| panic!("a retry thread died")))
            .collect()
    });
    let mut codes: Vec<Option<i32>> = both.iter().map(|o| o.status.code()).collect();
    codes.sort();
    assert_eq!(
        codes,
        vec![Some(0), Some(1)],
        "{} / {}",
        text(&both[0]),
        text(&both[1])
    );
    let refused = both.iter().find(|o| o.status.code() == Some(1));
    let refusal = refused.map(text).unwrap_or_default();
    assert!(refusal.contains("another operator"), "{refusal}");

    // Stripe works again: the client's resend runs the retried delivery,
    // which sends step 2 once more, under the next key generation.
    let before = sends(ops, "stripe.payment_methods.attach");
    let server = ops.start("dev");
    let (status, body) = post(&server, "order-1");
    assert_eq!((status, body.as_str()), (200, "\"sub_1\""));
    server.stop();
    let after = sends(ops, "stripe.payment_methods.attach");
    let new: Vec<&(String, bool)> = after.iter().skip(before.len()).collect();
    assert_eq!(new.len(), 1, "{after:?}");
    assert!(new[0].1, "the resend acted: {after:?}");
    assert!(
        before.iter().all(|(key, _)| *key != new[0].0),
        "under a new key: {after:?}"
    );
    let shown = ops.jadpo(&["deliveries", "show", short]);
    insta::assert_snapshot!(
        "deliveries_show_completed",
        steady_as_billing(ops, &text(&shown), &id)
    );
}

#[test]
fn a_parked_run_is_shown_checked_retried_and_completed_with_the_commands_alone() {
    retried_and_completed(&on_sqlite("operators-retry"));
}

#[test]
fn a_parked_run_is_retried_and_completed_on_postgres() {
    if let Some(ops) = on_postgres("ops_retry") {
        retried_and_completed(&ops);
    }
}

fn abandoned(ops: &Ops) {
    let id = parked(ops);
    let done = ops.jadpo(&["deliveries", "abandon", &id, "--reason", "refunded by hand"]);
    assert_eq!(done.status.code(), Some(0), "{}", text(&done));
    let shown = ops.jadpo(&["deliveries", "show", &id]);
    assert!(
        text(&shown).contains("Abandoned: refunded by hand"),
        "{}",
        text(&shown)
    );
    let server = ops.start("dev");
    let (status, body) = post(&server, "order-1");
    assert_eq!(status, 500, "{body}");
    assert!(body.contains("\"code\":\"abandoned\""), "{body}");
    server.stop();
}

#[test]
fn an_abandoned_run_answers_500_abandoned_to_its_client() {
    abandoned(&on_sqlite("operators-abandon"));
}

#[test]
fn an_abandoned_run_answers_500_abandoned_on_postgres() {
    if let Some(ops) = on_postgres("ops_abandon") {
        abandoned(&ops);
    }
}

fn gated(ops: &Ops) {
    let id = parked(ops);
    let build = ops.dir.join("gate-build");
    crate::server_support::jadpo_build(&ops.app, &build);
    let plan = build.join("plan.json");
    let same = ops.jadpo(&["runs", "unfinished", "--build", &plan.to_string_lossy()]);
    assert_eq!(same.status.code(), Some(0), "{}", text(&same));
    assert!(
        text(&same).contains(&format!("{id}  subscribe  2 steps  resumes")),
        "{}",
        text(&same)
    );

    // A build whose first step is another operation would hold it.
    let plan_text = std::fs::read_to_string(&plan).unwrap_or_default();
    let mut doc: serde_json::Value = serde_json::from_str(&plan_text).unwrap_or_default();
    doc["build_id"] = serde_json::json!("f".repeat(64));
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
    let changed = ops.dir.join("changed.json");
    std::fs::write(&changed, doc.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let gate = ops.jadpo(&["runs", "unfinished", "--build", &changed.to_string_lossy()]);
    assert_eq!(gate.status.code(), Some(1), "{}", text(&gate));
    assert!(
        text(&gate).contains("held as diverged at step 1"),
        "{}",
        text(&gate)
    );
}

#[test]
fn runs_unfinished_gates_a_deploy_that_would_strand_a_record() {
    gated(&on_sqlite("operators-gate"));
}

#[test]
fn runs_unfinished_gates_a_deploy_on_postgres() {
    if let Some(ops) = on_postgres("ops_gate") {
        gated(&ops);
    }
}

/// Whether a checking tool is there; without it the check is skipped,
/// unless `JADPO_REQUIRE_TOOLS` is set (`.ci/run` sets it and installs them).
fn tool_present(probe: &mut Command, install: &str) -> bool {
    if probe.output().is_ok_and(|o| o.status.success()) {
        return true;
    }
    assert!(
        std::env::var_os("JADPO_REQUIRE_TOOLS").is_none(),
        "JADPO_REQUIRE_TOOLS is set and a checking tool is missing: {install}"
    );
    eprintln!("skipped: the check needs {install}");
    false
}

/// Python's `prometheus_client` parser, when installed; `None` skips.
fn parsed_by_prometheus(text: &str) -> Option<Result<String, String>> {
    let mut probe = Command::new("python3");
    probe.args(["-c", "import prometheus_client.openmetrics.parser"]);
    if !tool_present(&mut probe, "pip install prometheus_client") {
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
    let ops = on_sqlite("operators-metrics");
    let server = ops.start("stripe_down");
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

/// The rules `jadpo alerts prometheus` prints, loaded and unit-tested by
/// Prometheus's own `promtool`: the alert waits 5 minutes of a firing
/// `jadpo_alert`, and the age rule an hour's record.
#[test]
fn promtool_loads_the_alert_rules_and_they_fire_as_documented() {
    let mut probe = Command::new("promtool");
    probe.arg("--version");
    if !tool_present(&mut probe, "promtool (apt-get install prometheus)") {
        return;
    }
    let dir = scratch("operators-promtool");
    let rules = Command::new(env!("CARGO_BIN_EXE_jadpo"))
        .args(["alerts", "prometheus"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rules.status.code(), Some(0), "{}", text(&rules));
    std::fs::write(dir.join("rules.yml"), &rules.stdout).unwrap_or_else(|e| panic!("{e}"));
    let cases = r#"rule_files: [rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'jadpo_alert{alert="unfinished",instance="a"}'
        values: '0 0 1 1 1 1 1 1 1 1'
      - series: 'jadpo_unfinished_record_oldest_age_seconds{store="primary",instance="a"}'
        values: '0+600x12'
    alert_rule_test:
      - eval_time: 5m
        alertname: JadpoUnfinishedWork
        exp_alerts: []
      - eval_time: 8m
        alertname: JadpoUnfinishedWork
        exp_alerts:
          - exp_labels:
              severity: warning
            exp_annotations:
              summary: "jadpo has unfinished work an operator must look at"
              description: "Open operator items or an old unfinished record. List them: jadpo deliveries list --not-done"
      - eval_time: 7m
        alertname: JadpoOldUnfinishedRecord
        exp_alerts: []
      - eval_time: 12m
        alertname: JadpoOldUnfinishedRecord
        exp_alerts:
          - exp_labels:
              severity: warning
            exp_annotations:
              summary: "a jadpo record has been unfinished for over an hour"
              description: "jadpo deliveries list --not-done"
"#;
    std::fs::write(dir.join("cases.yml"), cases).unwrap_or_else(|e| panic!("{e}"));
    for args in [
        &["check", "rules", "rules.yml"][..],
        &["test", "rules", "cases.yml"],
    ] {
        let out = Command::new("promtool")
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            out.status.code(),
            Some(0),
            "promtool {args:?}: {}",
            text(&out)
        );
    }
}

/// Postgres's LISTEN/NOTIFY: a process serving only routes stages an event,
/// and a process running deliveries, whose poll is set to 10 minutes,
/// starts the subscriber's delivery at once: the commit's notice woke it.
#[test]
fn a_notice_wakes_another_processs_dispatcher_on_postgres() {
    let Some(ops) = on_postgres("ops_notify") else {
        return;
    };
    let slow = [("JADPO_TEST_POLL_MS", "600000")];
    // (It serves routes too, none of which is asked: a process without
    // routes says no address to wait for.)
    let worker = ops.start_with("dev", &["--roles", "routes,deliveries"], &slow);
    // Let its first claim (of nothing) pass, so only a notice can wake it.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let front = ops.start_with("dev", &["--roles", "routes"], &slow);
    let (status, body) = front
        .request("POST", "/subscriptions/requests", &[], BODY)
        .unwrap_or_else(|| panic!("no answer"));
    assert_eq!(status, 202, "{body}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut states = Vec::new();
    while std::time::Instant::now() < deadline {
        let out = ops.jadpo(&["deliveries", "list", "--format", "json"]);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        states = doc["deliveries"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|d| d["action"] == "subscribe_requested")
            .filter_map(|d| d["state"].as_str().map(str::to_string))
            .collect();
        if states == ["completed"] {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    front.stop();
    worker.stop();
    assert_eq!(
        states,
        ["completed"],
        "the subscriber's delivery did not run"
    );
}

/// `jadpo dev --store primary=URL` runs the app on Postgres: no SQLite
/// file is made, and the operators read the work there; a name that is
/// no store of the app, or `--reset` with it, is refused.
#[test]
fn jadpo_dev_moves_its_store_to_postgres() {
    let Some(url) = postgres() else {
        return;
    };
    let dir = scratch("ops_dev_pg");
    let app = crate::server_support::copy_billing(&dir, "ops_dev_pg");
    let db = dir.join("dev.sqlite");
    let moved = format!("primary={url}");
    let server = crate::server_support::dev_with(&app, &db, "dev", &["--store", &moved]);
    let (status, body) = post(&server, "order-1");
    server.stop();
    assert_eq!((status, body.as_str()), (200, "\"sub_1\""));
    assert!(!db.exists(), "no SQLite file");
    let listed = Command::new(env!("CARGO_BIN_EXE_jadpo"))
        .args([
            "deliveries",
            "list",
            "--state",
            "completed",
            "--action",
            "subscribe",
        ])
        .arg("--app")
        .arg(&app)
        .args(["--store", &url])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        text(&listed).matches("subscribe").count(),
        1,
        "{}",
        text(&listed)
    );
    for (flags, says) in [
        (
            vec!["--store", "orders=postgresql:///x"],
            "no store of the app",
        ),
        (
            vec!["--store", moved.as_str(), "--reset"],
            "--reset removes the SQLite file only",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_jadpo"))
            .arg("dev")
            .args(&flags)
            .arg(&app)
            .args(["--listen", "127.0.0.1:0", "--no-reload", "--fakes", "dev"])
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(text(&out).contains(says), "{}", text(&out));
    }
}

/// An action writing entities of two stores is refused, exit status 2, by
/// `jadpo dev`, `jadpo serve` and the operator commands alike, naming the
/// action, its entities by store and what to do, before any file is made
/// (its commit could not be one transaction).
#[test]
fn an_action_writing_two_stores_is_refused_by_name() {
    let dir = scratch("ops_several_stores");
    let app = crate::server_support::copy_billing(&dir, "ops_several_stores");
    let extra = r#"
store audit { kind: postgres }

entity AuditNote {
    store: audit
    id: stripe.SubscriptionId
}

route POST /subscriptions/cancel/noted {
    auth: none
    input: CancelRequest
    output: Unit
    run: cancel_noted(input)
}

action cancel_noted(request: CancelRequest) -> Unit {
    attempt delete Subscription { where: id == request.subscription }
    attempt create AuditNote { id: request.subscription }
}
"#;
    let source = app.join("src/app.jadpo");
    let text_of = std::fs::read_to_string(&source).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&source, format!("{text_of}{extra}")).unwrap_or_else(|e| panic!("{e}"));
    let db = dir.join("dev.sqlite");
    let out = dir.join("build");
    crate::server_support::jadpo_build(&app, &out);
    let mut dev = Command::new(env!("CARGO_BIN_EXE_jadpo"));
    dev.arg("dev").arg(&app).arg("--db").arg(&db).args([
        "--listen",
        "127.0.0.1:0",
        "--no-reload",
        "--fakes",
        "dev",
    ]);
    let mut serve = Command::new(env!("CARGO_BIN_EXE_jadpo"));
    serve
        .arg("serve")
        .arg(&out)
        .args(["--listen", "127.0.0.1:0", "--fakes", "dev"])
        .env("JADPO_STORE_PRIMARY", format!("sqlite:{}", db.display()))
        .env(
            "JADPO_STORE_AUDIT",
            format!("sqlite:{}.audit", db.display()),
        )
        .env("STEPS_KEY", "k")
        .env("BASIC_PRICE", "price_basic");
    let mut list = Command::new(env!("CARGO_BIN_EXE_jadpo"));
    list.args(["deliveries", "list", "--app"])
        .arg(&app)
        .env("JADPO_STORE_PRIMARY", format!("sqlite:{}", db.display()))
        .env(
            "JADPO_STORE_AUDIT",
            format!("sqlite:{}.audit", db.display()),
        );
    for cmd in [dev, serve, list] {
        let run = crate::server_support::output_within(cmd, 30);
        let said = text(&run);
        assert_eq!(run.status.code(), Some(2), "{said}");
        assert!(
            said.contains("action `cancel_noted` (src/app.jadpo:")
                && said.contains(
                    "writes entities of 2 stores: audit (AuditNote) and primary (Subscription)"
                )
                && said.contains("emit an event whose subscriber writes the other"),
            "{said}"
        );
    }
    assert!(!db.exists(), "a file was made before the refusal");
}
