//! The built `jadpo` binary end to end: exit statuses 0/1/2, help text,
//! the closing line, JSON purity, colour choice, `explain` and `build`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the binary. An internal error (exit 101, or death by a signal) fails
/// the test here, whatever status the test itself expects.
fn jadpo(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_jadpo"))
        .args(args)
        .current_dir(repo())
        .env_remove("NO_COLOR")
        .output()
        .unwrap_or_else(|e| panic!("cannot run jadpo: {e}"));
    assert!(
        matches!(out.status.code(), Some(0..=2)),
        "jadpo {args:?} crashed ({}): {}",
        out.status,
        stderr(&out)
    );
    out
}

fn status(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}):\n{}", stdout(out)))
}

/// A fresh, empty folder under the target directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {dir:?}: {e}"));
    dir
}

#[test]
fn help_names_every_command_and_the_exit_statuses() {
    let out = jadpo(&["--help"]);
    assert_eq!(status(&out), 0);
    let text = stdout(&out);
    for word in [
        "check",
        "build",
        "explain",
        "test",
        "Exit status",
        "jadpo check examples/billing",
    ] {
        assert!(
            text.contains(word),
            "`--help` does not mention {word:?}:\n{text}"
        );
    }
    let out = jadpo(&["check", "--help"]);
    assert!(stdout(&out).contains("--deny-warnings"));
}

#[test]
fn a_usage_mistake_exits_with_2() {
    let out = jadpo(&["check", "--format", "yaml"]);
    assert_eq!(status(&out), 2, "{}", stderr(&out));
}

#[test]
fn a_folder_without_jadpo_yaml_cannot_be_checked() {
    let dir = scratch("no_manifest");
    let path = dir.to_string_lossy();
    let out = jadpo(&["check", &path]);
    assert_eq!(status(&out), 2, "{}", stdout(&out));
    let out = jadpo(&["check", "--format", "json", &path]);
    assert_eq!(status(&out), 2);
    assert_eq!(json(&out)["schema_version"], 1);
}

#[test]
fn the_billing_example_checks_clean() {
    let out = jadpo(&["check", "examples/billing"]);
    let text = stdout(&out);
    assert_eq!(status(&out), 0, "{text}");
    let last = text.lines().last().unwrap_or("");
    assert!(
        last.starts_with("checked ") && last.ends_with(": 0 errors, 0 warnings"),
        "closing line: {last:?}"
    );
}

#[test]
fn the_mistakes_example_fails_with_the_documented_codes() {
    let out = jadpo(&["check", "examples/mistakes"]);
    assert_eq!(status(&out), 1, "{}", stdout(&out));
    let last = stdout(&out).lines().last().unwrap_or("").to_string();
    assert!(last.starts_with("checked "), "closing line: {last:?}");

    let doc = json(&jadpo(&["check", "--format", "json", "examples/mistakes"]));
    let mut codes: Vec<&str> = doc["diagnostics"]
        .as_array()
        .map(|a| a.iter().filter_map(|d| d["code"].as_str()).collect())
        .unwrap_or_default();
    codes.sort();
    // One mistake per file, one diagnostic per mistake.
    assert_eq!(
        codes,
        [
            "decline.unused",
            "effect.call_in_loop",
            "failure.missing_in_fails",
            "failure.nothing_to_attempt",
            "name.unknown_operation",
            "step.context",
            "step.unkeyed",
        ]
    );
    assert_eq!(doc["summary"]["errors"], 6);
    assert_eq!(doc["summary"]["warnings"], 1);
}

#[test]
fn the_mistakes_readme_shows_the_real_output() {
    let out = jadpo(&["check", "--color", "never", "examples/mistakes"]);
    let readme =
        std::fs::read_to_string(repo().join("examples/mistakes/README.md")).unwrap_or_default();
    assert!(
        readme.contains(&stdout(&out)),
        "examples/mistakes/README.md is stale; paste the output of \
         `jadpo check examples/mistakes` into it:\n{}",
        stdout(&out)
    );
}

#[test]
fn colour_follows_the_color_flag() {
    let piped = jadpo(&["check", "examples/mistakes"]);
    assert!(
        !stdout(&piped).contains('\u{1b}'),
        "piped output is coloured"
    );
    let forced = jadpo(&["check", "--color", "always", "examples/mistakes"]);
    assert!(
        stdout(&forced).contains('\u{1b}'),
        "--color always is not coloured"
    );
}

#[test]
fn deny_warnings_turns_a_warning_into_exit_1() {
    let dir = scratch("warning_only");
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text).unwrap_or_else(|e| panic!("{name}: {e}"));
    };
    write("jadpo.yaml", "app: warned\npackages:\n  stripe: \"3\"\n");
    // A read after the first changing call can still fail: a late point.
    write(
        "settings.jadpo",
        "application Late {\n    providers: { stripe: { api_key: config.stripe_key } }\n}\n\n\
         config LateConfig {\n    stripe_key: Text { binding: \"STRIPE_KEY\" secret: true }\n}\n",
    );
    write(
        "app.jadpo",
        "action late(email: stripe.Email, price: stripe.PriceId)\n\
         \x20   fails stripe.InvalidEmail, stripe.PriceMissing -> Unit\n\
         {\n\
         \x20   attempt stripe.customers.create(stripe.CustomerCreate { email: email })\n\
         \x20   attempt stripe.prices.retrieve(stripe.PriceRef { id: price })\n\
         }\n",
    );
    let path = dir.to_string_lossy();
    let out = jadpo(&["check", &path]);
    let text = stdout(&out);
    assert!(text.contains("warning[step.late_failure]"), "{text}");
    assert_eq!(status(&out), 0, "{text}");
    assert_eq!(status(&jadpo(&["check", "--deny-warnings", &path])), 1);
}

#[test]
fn explain_prints_a_rule_and_suggests_near_misses() {
    let out = jadpo(&["explain", "step.unkeyed"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("step.unkeyed"));

    let out = jadpo(&["explain", "step.unkeyd"]);
    assert_eq!(status(&out), 2);
    assert!(
        stderr(&out).contains("did you mean `step.unkeyed`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn build_writes_a_plan_only_for_an_app_without_errors() {
    let out_dir = scratch("plan_billing");
    let out_path = out_dir.to_string_lossy();
    let out = jadpo(&["build", "examples/billing", "--out", &out_path]);
    assert_eq!(status(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let plan = std::fs::read_to_string(out_dir.join("plan.json")).unwrap_or_default();
    assert!(
        serde_json::from_str::<serde_json::Value>(&plan).is_ok(),
        "{plan}"
    );

    let refused = scratch("plan_mistakes");
    let refused_path = refused.to_string_lossy();
    let out = jadpo(&["build", "examples/mistakes", "--out", &refused_path]);
    assert_eq!(status(&out), 1);
    assert!(
        !refused.join("plan.json").exists(),
        "a plan was written despite errors"
    );

    // A refused build removes the plan an earlier build left there.
    let out = jadpo(&["build", "examples/mistakes", "--out", &out_path]);
    assert_eq!(status(&out), 1);
    assert!(!out_dir.join("plan.json").exists(), "a stale plan was left");
    assert!(
        stderr(&out).contains("removed the stale plan"),
        "{}",
        stderr(&out)
    );
}

/// `plan.json` is replaced atomically and never written through a link: a
/// cloned repository can carry `build/plan.json -> ~/.bashrc`.
#[test]
fn build_refuses_a_linked_plan_and_an_empty_out() {
    let out_dir = scratch("plan_linked");
    let victim = out_dir.join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(&victim, out_dir.join("plan.json"))
        .unwrap_or_else(|e| panic!("{e}"));
    let out_path = out_dir.to_string_lossy();
    let out = jadpo(&["build", "examples/billing", "--out", &out_path]);
    assert_eq!(status(&out), 2, "{}{}", stdout(&out), stderr(&out));
    assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
    let kept = std::fs::read_to_string(&victim).unwrap_or_default();
    assert_eq!(kept, "keep me", "the link's target was overwritten");

    let out = jadpo(&["build", "examples/billing", "--out", ""]);
    assert_eq!(status(&out), 2, "{}{}", stdout(&out), stderr(&out));
    assert!(stderr(&out).contains("empty path"), "{}", stderr(&out));

    // A rebuild replaces the old plan whole, leaving no temporary file.
    let fresh = scratch("plan_rebuilt");
    let fresh_path = fresh.to_string_lossy();
    for _ in 0..2 {
        let out = jadpo(&["build", "examples/billing", "--out", &fresh_path]);
        assert_eq!(status(&out), 0, "{}{}", stdout(&out), stderr(&out));
    }
    let names: Vec<String> = std::fs::read_dir(&fresh)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let mut names = names;
    names.sort();
    assert_eq!(names, ["app.bundle", "plan.json"]);
}

#[test]
fn explain_knows_every_code_the_tool_can_emit() {
    let list = jadpo(&["explain", "--list"]);
    assert!(list.status.success());
    let listed = String::from_utf8_lossy(&list.stdout).to_string();
    for info in jadpo_checker::registry::all() {
        assert!(
            listed.contains(&format!("  {} ", info.code)),
            "`explain --list` misses {}",
            info.code
        );
    }
    // Every family has its heading, and codes of every family explain.
    for code in [
        "syntax.two_statements",
        "name.duplicate",
        "type.optional",
        "failure.unhandled",
        "purity.query",
        "entry.path_params",
        "manifest.missing",
        "load.unreadable",
        "package.has_errors",
        "step.unkeyed",
        "follow_up.too_many",
    ] {
        let family = code.split('.').next().unwrap_or(code);
        assert!(
            listed.contains(&format!("\n{family}\n")) || listed.starts_with(&format!("{family}\n"))
        );
        let out = jadpo(&["explain", code]);
        assert!(out.status.success(), "explain {code} failed");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.starts_with(&format!("# {code}")), "{code}: {text}");
        assert!(text.contains("## Why it matters"), "{code}");
    }
}

/// `jadpo check` finds its project as cargo does: the nearest folder at or
/// above the path holding `jadpo.yaml` or `package.yaml`.
#[test]
fn check_finds_the_app_or_package_a_path_names() {
    let from_src = Command::new(env!("CARGO_BIN_EXE_jadpo"))
        .args(["check", "--color", "never"])
        .current_dir(repo().join("examples/billing/src"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run jadpo: {e}"));
    assert_eq!(status(&from_src), 0, "{}", stderr(&from_src));
    assert!(
        stdout(&from_src).contains("checked 9 files"),
        "{}",
        stdout(&from_src)
    );

    let by_file = jadpo(&["check", "examples/billing/jadpo.yaml"]);
    assert_eq!(status(&by_file), 0, "{}", stderr(&by_file));

    let package = jadpo(&["check", "--color", "never", "packages/stripe"]);
    assert_eq!(
        status(&package),
        0,
        "{}{}",
        stdout(&package),
        stderr(&package)
    );
    assert!(
        stdout(&package).contains("checked package stripe 3.3.0: 0 errors"),
        "{}",
        stdout(&package)
    );

    let missing = jadpo(&["check", "examples/no_such_app"]);
    assert_eq!(status(&missing), 2);
    assert!(
        stderr(&missing).contains("does not exist"),
        "{}",
        stderr(&missing)
    );

    let build = jadpo(&["build", "packages/stripe"]);
    assert_eq!(status(&build), 2);
    assert!(
        stderr(&build).contains("is a package"),
        "{}",
        stderr(&build)
    );
}

/// A package's own findings, which an app shows only as one
/// `package.has_errors`, are listed when the package is checked.
#[test]
fn check_on_a_broken_package_lists_its_findings() {
    let dir = scratch("broken_package");
    std::fs::write(dir.join("package.yaml"), "package: tiny\nversion: 1.0.0\n")
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.join("tiny.jadpo"), "type Price = Bogus\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let out = jadpo(&["check", "--format", "json", &dir.to_string_lossy()]);
    assert_eq!(status(&out), 1, "{}{}", stdout(&out), stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert_eq!(doc["diagnostics"][0]["code"], "name.unknown_type", "{doc}");
}

#[test]
fn a_dry_run_publish_needs_no_registry() {
    let out = jadpo(&[
        "publish",
        "packages/postmark",
        "--dry-run",
        "--color",
        "never",
    ]);
    assert_eq!(status(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("would publish 3 files to a registry"),
        "{}",
        stdout(&out)
    );
    let out = jadpo(&["publish", "packages/postmark"]);
    assert_eq!(status(&out), 2, "a real publish still needs --registry");
}

#[test]
fn completions_name_every_command() {
    for shell in ["bash", "zsh", "fish"] {
        let out = jadpo(&["completions", shell]);
        assert_eq!(status(&out), 0, "{shell}: {}", stderr(&out));
        let script = stdout(&out);
        for command in ["check", "build", "publish", "test", "explain", "lsp"] {
            assert!(
                script.contains(command),
                "{shell} does not complete `{command}`"
            );
        }
    }
    assert_eq!(status(&jadpo(&["completions", "tcsh"])), 2);
}

/// `jadpo new` makes an app that checks clean and whose test passes, and
/// refuses a folder that is not empty or a name that is not an app name.
#[test]
fn new_makes_an_app_that_checks_and_tests_clean() {
    let dir = scratch("new_app");
    let app = dir.join("my_notes");
    let app_path = app.to_string_lossy();
    let out = jadpo(&["new", &app_path]);
    assert_eq!(status(&out), 0, "{}{}", stdout(&out), stderr(&out));
    for file in [
        "jadpo.yaml",
        ".gitignore",
        "src/app.jadpo",
        "src/notes.jadpo",
        "tests/notes.jadpo",
    ] {
        assert!(app.join(file).is_file(), "{file} was not made");
    }
    let check = jadpo(&["check", "--deny-warnings", &app_path]);
    assert_eq!(status(&check), 0, "{}", stdout(&check));
    // Its route is safe to retry (issue 38): a request made twice stores
    // and announces one note; written here so the template cannot drop it.
    std::fs::write(
        app.join("tests/retry.jadpo"),
        "test \"posted twice\" {\n    call post_note(NewNote { id: \"n\" text: \"t\" })\n    call post_note(NewNote { id: \"n\" text: \"t\" })\n    assert stored Note == 1\n    assert emitted NotePosted == 1\n}\n",
    )
    .expect("write a test");
    let test = jadpo(&["test", &app_path]);
    assert_eq!(status(&test), 0, "{}", stdout(&test));
    assert!(
        stdout(&test).contains("3 passed, 0 failed"),
        "{}",
        stdout(&test)
    );

    let again = jadpo(&["new", &app_path]);
    assert_eq!(status(&again), 2);
    assert!(
        stderr(&again).contains("is not empty"),
        "{}",
        stderr(&again)
    );
    let bad = jadpo(&["new", &dir.join("My-Notes").to_string_lossy()]);
    assert_eq!(status(&bad), 2);
    assert!(
        stderr(&bad).contains("cannot name an app"),
        "{}",
        stderr(&bad)
    );
    assert!(
        !dir.join("My-Notes").exists(),
        "a folder was made for a bad name"
    );
}

/// Human output names files as a terminal opens them from where the user
/// stands, like rustc and ruff (JSON and SARIF keep their own convention).
#[test]
fn human_paths_open_from_the_current_folder() {
    let out = Command::new(env!("CARGO_BIN_EXE_jadpo"))
        .args(["check", "--color", "never", "../../mistakes"])
        .current_dir(repo().join("examples/billing/src"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run jadpo: {e}"));
    assert_eq!(status(&out), 1, "{}", stderr(&out));
    let shown = stdout(&out);
    assert!(
        shown.contains("─[ ../../mistakes/src/unkeyed_call.jadpo:14:13 ]"),
        "{shown}"
    );
    let json = jadpo(&["check", "--format", "json", "examples/mistakes"]);
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap_or_default();
    assert!(
        doc["diagnostics"][0]["location"]["file"]
            .as_str()
            .is_some_and(|f| f.starts_with("src/")),
        "JSON paths stay relative to the app: {doc}"
    );
}

/// A folder without `jadpo.yaml`, named by a path of several parts: every
/// format names the missing file once (it was `dir/dir/jadpo.yaml` in the
/// human and SARIF output), and the human output draws no frame of it.
#[test]
fn a_missing_manifest_is_named_once_in_every_format() {
    let dir = scratch("nomanifest/app");
    std::fs::write(dir.join("a.jadpo"), "type A = Int\n").unwrap_or_else(|e| panic!("{e}"));
    let rel = dir
        .strip_prefix(repo())
        .unwrap_or_else(|_| panic!("{dir:?} is inside the repository"))
        .to_string_lossy()
        .into_owned();
    // No frame of a file that does not exist: the summary names the folder.
    let human = stdout(&jadpo(&["check", "--color", "never", &rel]));
    assert!(
        human.contains(&format!("no jadpo.yaml in {rel}:")),
        "{human}"
    );
    assert!(!human.contains("─["), "{human}");
    let doc = json(&jadpo(&["check", "--format", "json", &rel]));
    assert_eq!(doc["diagnostics"][0]["location"]["file"], "jadpo.yaml");
    let sarif = json(&jadpo(&["check", "--format", "sarif", &rel]));
    let uri = &sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
        ["artifactLocation"]["uri"];
    assert_eq!(uri.as_str(), Some(format!("{rel}/jadpo.yaml").as_str()));
}

/// `jadpo check --fix` on a copy of examples/mistakes: with errors that
/// have no safe fix, nothing is written (an error can hide the warning a
/// `decline` declines, issue 38); with only the two safe-fix mistakes left,
/// both findings are gone and the files show the edits; `--diff` shows the
/// same edits and writes nothing.
#[test]
fn check_fix_applies_the_safe_fixes_of_the_mistakes() {
    let dir = scratch("fix-mistakes");
    copy_tree(&repo().join("examples/mistakes"), &dir);
    let rel = dir
        .strip_prefix(repo())
        .unwrap_or(&dir)
        .to_string_lossy()
        .into_owned();
    let before = std::fs::read_to_string(dir.join("src/stale_decline.jadpo")).unwrap_or_default();

    let blocked = jadpo(&["check", "--fix", "--color", "never", &rel]);
    assert_eq!(status(&blocked), 1);
    assert!(
        stderr(&blocked).contains("no fix applied: the app has 5 errors without a safe fix"),
        "{}",
        stderr(&blocked)
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("src/stale_decline.jadpo")).unwrap_or_default(),
        before,
        "nothing is written while other errors remain"
    );
    for other in [
        "call_in_loop",
        "missing_fails",
        "route_without_key",
        "typo",
        "unkeyed_call",
    ] {
        std::fs::remove_file(dir.join(format!("src/{other}.jadpo")))
            .unwrap_or_else(|e| panic!("{other}: {e}"));
    }

    let diff = jadpo(&["check", "--diff", &rel]);
    assert_eq!(status(&diff), 1);
    assert_eq!(
        std::fs::read_to_string(dir.join("src/stale_decline.jadpo")).unwrap_or_default(),
        before,
        "--diff writes nothing"
    );

    let fixed = jadpo(&["check", "--fix", "--color", "never", &rel]);
    assert_eq!(status(&fixed), 0, "{}", stdout(&fixed));
    let text = stdout(&fixed);
    let mut report = String::new();
    for line in text.lines().filter(|l| {
        l.starts_with("fixed ")
            || l.starts_with("error[")
            || l.starts_with("warning[")
            || l.starts_with("checked ")
    }) {
        report.push_str(line);
        report.push('\n');
    }
    for file in ["src/needless_attempt.jadpo", "src/stale_decline.jadpo"] {
        report.push_str(&format!("--- {file}\n"));
        report.push_str(&std::fs::read_to_string(dir.join(file)).unwrap_or_default());
    }
    insta::assert_snapshot!(report);
    insta::assert_snapshot!("check_fix_diff", stdout(&diff));
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{from:?}: {e}")) {
        let entry = entry.unwrap_or_else(|e| panic!("{e}"));
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            std::fs::create_dir_all(&target).unwrap_or_else(|e| panic!("{e}"));
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

/// `jadpo watch --format json`: one JSON line per run; an edit that breaks
/// a file is the next run's error, a read of the sources starts no run,
/// and fixing the file clears it.
#[test]
fn watch_rechecks_on_every_change() {
    use std::io::BufRead;
    let dir = scratch("watch-billing");
    copy_tree(&repo().join("examples/billing"), &dir);
    let mut child = Command::new(env!("CARGO_BIN_EXE_jadpo"))
        .args(["watch", "--format", "json", &dir.to_string_lossy()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run jadpo watch: {e}"));
    let stdout = child.stdout.take().expect("stdout");
    let (send, lines) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = send.send(line);
        }
    });
    let next = || -> serde_json::Value {
        let line = lines
            .recv_timeout(std::time::Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("no run reported"));
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    };
    let first = next();
    assert_eq!(first["run"], 1);
    assert_eq!(first["summary"]["errors"], 0);
    // Counted as `jadpo check` counts (issue 38): its files and packages.
    let checked = json(&jadpo(&[
        "check",
        "--format",
        "json",
        &dir.to_string_lossy(),
    ]));
    assert_eq!(
        first["summary"]["files"], checked["summary"]["files"],
        "{first}"
    );
    assert_eq!(
        first["summary"]["packages"], checked["summary"]["packages"],
        "{first}"
    );

    let file = dir.join("src/payments.jadpo");
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    std::fs::write(&file, format!("{text}action broken( {{\n")).unwrap_or_else(|e| panic!("{e}"));
    let broken = next();
    assert_eq!(broken["run"], 2);
    assert!(
        broken["summary"]["errors"].as_u64().unwrap_or(0) > 0,
        "{broken}"
    );

    std::fs::write(&file, &text).unwrap_or_else(|e| panic!("{e}"));
    let fixed = next();
    assert_eq!(fixed["run"], 3);
    assert_eq!(fixed["summary"]["errors"], 0, "{fixed}");
    // Nothing else happened: no run of its own (the checks' reads are not changes).
    assert!(
        lines
            .recv_timeout(std::time::Duration::from_millis(700))
            .is_err(),
        "a run without a change"
    );
    let _ = child.kill();
    let _ = child.wait();
}

/// `jadpo doc`: a bundled package as Markdown (snapshotted), as plain text,
/// a package folder, packages an app requires (a vendored one and a path
/// one), and an unknown name, which lists the bundled packages.
#[test]
fn doc_shows_what_a_package_offers() {
    let out = jadpo(&["doc", "github", "--format", "markdown"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    insta::assert_snapshot!("doc_github_markdown", stdout(&out));

    let text = stdout(&jadpo(&["doc", "stripe"]));
    assert!(text.starts_with("stripe 3.3.0\n============\n"), "{text}");
    for want in [
        "stripe.customers.create\n",
        "- keyed: yes (Idempotency-Key, provider window 24h)",
        "Text { max_length: 512 format: email }",
        "stripe.subscribe_customer(request: stripe.SubscribeCustomer) -> stripe.Subscription",
        "- can fail after a change: stripe.CardDeclined",
    ] {
        assert!(text.contains(want), "`{want}` missing:\n{text}");
    }
    assert!(!text.contains('`'), "plain text has no code marks");

    let folder = stdout(&jadpo(&["doc", "packages/postmark"]));
    assert!(folder.starts_with("postmark 1.2.0\n"), "{folder}");
    let app = "tests/fixtures/packages/resolve/vendored/pass_vendored_package_and_path";
    for (name, title) in [("mailer", "mailer 1."), ("notes", "notes ")] {
        let out = jadpo(&["doc", name, "--app", app]);
        assert_eq!(status(&out), 0, "{name}: {}", stderr(&out));
        assert!(stdout(&out).starts_with(title), "{name}: {}", stdout(&out));
    }

    let out = jadpo(&["doc", "nosuch"]);
    assert_eq!(status(&out), 2);
    assert!(
        stderr(&out).contains("no package `nosuch`") && stderr(&out).contains("stripe, twilio"),
        "{}",
        stderr(&out)
    );
}

/// A package inside the app's folder is the author's own code: its findings
/// show where they are. A package outside it (here `{ path: ../shared/x }`;
/// a registry's or a bundled one likewise) stays one `package.has_errors`
/// at its requirement, naming the command that shows them all.
#[test]
fn packages_outside_the_app_fold_into_one_finding_with_the_command() {
    let root = std::env::temp_dir().join(format!("jadpo-cli-outside-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let write = |rel: &str, text: &str| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("a folder");
        std::fs::write(path, text).expect("a file");
    };
    let broken = "package: mailer\nversion: 1.0.0\nprovider:\n  timeout: 5 parsecs\n";
    write(
        "app/jadpo.yaml",
        "app: shop\npackages:\n  mailer: { path: ../shared/mailer }\n",
    );
    write("shared/mailer/package.yaml", broken);
    write(
        "inside/jadpo.yaml",
        "app: shop\npackages:\n  mailer: { path: vendor/mailer }\n",
    );
    write("inside/vendor/mailer/package.yaml", broken);
    let json = |dir: &str| {
        let out = jadpo(&[
            "check",
            "--format",
            "json",
            &root.join(dir).to_string_lossy(),
        ]);
        assert_eq!(status(&out), 1, "{}", stdout(&out));
        let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
        doc["diagnostics"].as_array().cloned().unwrap_or_default()
    };
    let outside = json("app");
    assert_eq!(outside.len(), 1, "{outside:?}");
    assert_eq!(outside[0]["code"], "package.has_errors");
    assert_eq!(
        outside[0]["help"],
        "`jadpo check ../shared/mailer` (from the app's folder) shows all of them"
    );
    // Human output shows the package's file from where the user stands,
    // with `app/..` folded.
    let human = stdout(&jadpo(&["check", &root.join("app").to_string_lossy()]));
    let folded = root.join("shared/mailer/package.yaml");
    assert!(
        human.contains(&format!("{}:", folded.to_string_lossy())),
        "{human}"
    );
    assert!(!human.contains("app/../"), "{human}");
    let inside = json("inside");
    let codes: Vec<&str> = inside.iter().filter_map(|d| d["code"].as_str()).collect();
    assert_eq!(codes, ["manifest.bad_duration"], "{inside:?}");
    assert_eq!(inside[0]["location"]["file"], "vendor/mailer/package.yaml");
    let _ = std::fs::remove_dir_all(&root);
}
