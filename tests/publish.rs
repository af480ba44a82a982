//! `jadpo publish` and the registry end to end: a package with a nine-step
//! action is refused, a good one is stored with its surface and checksum,
//! a version is never published twice, an app resolves the package from
//! its registry (before the bundled copy), and a tampered file is caught.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn jadpo(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_jadpo"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap_or_else(|e| panic!("cannot run jadpo: {e}"))
}

fn status(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A fresh, empty folder under the target directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("publish")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {dir:?}: {e}"));
    dir
}

fn write(path: &Path, text: &str) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("cannot create {dir:?}: {e}"));
    }
    std::fs::write(path, text).unwrap_or_else(|e| panic!("cannot write {path:?}: {e}"));
}

fn s(path: &Path) -> &str {
    path.to_str()
        .unwrap_or_else(|| panic!("{path:?} is not UTF-8"))
}

const LEDGER_YAML: &str = "\
package: ledger
version: 1.0.0
provider:
  idempotency:
    header: Idempotency-Key
    window: 24h
    replays_failures: true
    new_key_on: none
  timeout: 5s
  attempts: 2
operations:
  entries.create:
    request: EntryCreate
    answer: Entry
    changes: true
    idempotent: true
    failures: [EntryRejected]
";

const LEDGER_TYPES: &str = "\
type EntryCreate = Object {
    amount: Int
}

type Entry = Object {
    id: Text { max_length: 64 }
}

failure EntryRejected {
    kind: Rejected
    code: \"entry_rejected\"
}
";

/// A public action making `calls` changing calls in a row.
fn ledger_action(calls: usize) -> String {
    let mut body = String::new();
    for i in 1..=calls {
        body.push_str(&format!(
            "    attempt ledger.entries.create(EntryCreate {{ amount: {i} }})\n"
        ));
    }
    format!(
        "decline step.late_failure \"a test package\"\n\
         public action post_entries(request: EntryCreate) fails EntryRejected -> Unit {{\n{body}}}\n"
    )
}

fn ledger(dir: &Path, calls: usize, version: &str) -> PathBuf {
    let pkg = dir.join("ledger");
    write(
        &pkg.join("package.yaml"),
        &LEDGER_YAML.replace("1.0.0", version),
    );
    write(&pkg.join("types.jadpo"), LEDGER_TYPES);
    write(&pkg.join("src/post.jadpo"), &ledger_action(calls));
    pkg
}

#[test]
fn a_package_with_a_nine_step_action_is_refused() {
    let dir = scratch("nine_steps");
    let pkg = ledger(&dir, 9, "1.0.0");
    let registry = dir.join("registry");
    let out = jadpo(&["publish", s(&pkg), "--registry", s(&registry)]);
    assert_eq!(status(&out), 1, "{}", text(&out));
    let shown = text(&out);
    assert!(shown.contains("error[step.too_many]"), "{shown}");
    assert!(shown.contains("not publishing `ledger` 1.0.0"), "{shown}");
    assert!(
        !registry.join("ledger").exists(),
        "a refused package was written"
    );
}

#[test]
fn a_package_is_stored_with_its_surface_and_checksum_once() {
    let dir = scratch("good");
    let pkg = ledger(&dir, 2, "1.0.0");
    let registry = dir.join("registry");
    let dry = jadpo(&["publish", s(&pkg), "--registry", s(&registry), "--dry-run"]);
    assert_eq!(status(&dry), 0, "{}", text(&dry));
    assert!(!registry.exists(), "--dry-run wrote the registry");

    let out = jadpo(&["publish", s(&pkg), "--registry", s(&registry)]);
    assert_eq!(status(&out), 0, "{}", text(&out));
    let version = registry.join("ledger/1.0.0");
    for file in [
        "package.yaml",
        "types.jadpo",
        "src/post.jadpo",
        "surface.json",
        "checksum",
    ] {
        assert!(version.join(file).is_file(), "{file} was not published");
    }
    let surface: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(version.join("surface.json")).unwrap_or_default(),
    )
    .unwrap_or_else(|e| panic!("surface.json is not JSON: {e}"));
    let action = &surface["actions"][0];
    assert_eq!(action["name"], "ledger.post_entries");
    assert_eq!(action["changing_calls"], 2);
    assert_eq!(
        action["failures"],
        serde_json::json!(["ledger.EntryRejected"])
    );
    assert_eq!(
        action["step_shape"]["nodes"].as_array().map(Vec::len),
        Some(2)
    );
    for key in ["after_effect", "step_shape_digest", "deadline_budget_ms"] {
        assert!(action.get(key).is_some(), "surface lacks {key}: {action}");
    }

    let again = jadpo(&["publish", s(&pkg), "--registry", s(&registry)]);
    assert_eq!(status(&again), 1, "{}", text(&again));
    assert!(
        text(&again).contains("already published"),
        "{}",
        text(&again)
    );
}

fn app(dir: &Path, packages: &str, source: &str) -> PathBuf {
    let app = dir.join("app");
    write(
        &app.join("jadpo.yaml"),
        &format!("app: shop\nregistry: ../registry\npackages:\n{packages}"),
    );
    write(&app.join("src/shop.jadpo"), source);
    app
}

const USES_LEDGER: &str = "\
action post(amount: Int) fails ledger.EntryRejected -> Unit {
    attempt ledger.entries.create(ledger.EntryCreate { amount: amount })
}
";

#[test]
fn an_app_resolves_a_published_package_and_catches_a_tampered_file() {
    let dir = scratch("resolve");
    let pkg = ledger(&dir, 2, "1.2.0");
    let registry = dir.join("registry");
    let out = jadpo(&["publish", s(&pkg), "--registry", s(&registry)]);
    assert_eq!(status(&out), 0, "{}", text(&out));

    let app = app(&dir, "  ledger: \"1\"\n", USES_LEDGER);
    let ok = jadpo(&["check", s(&app)]);
    assert_eq!(status(&ok), 0, "{}", text(&ok));

    let types = registry.join("ledger/1.2.0/types.jadpo");
    let original = std::fs::read_to_string(&types).unwrap_or_default();
    write(&types, &format!("{original}// changed after publishing\n"));
    let bad = jadpo(&["check", s(&app), "--format", "json"]);
    assert_eq!(status(&bad), 1, "{}", text(&bad));
    let doc: serde_json::Value = serde_json::from_slice(&bad.stdout).unwrap_or_default();
    let found = doc["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| d["code"] == "package.checksum_mismatch")
        .unwrap_or_else(|| panic!("no checksum mismatch reported: {doc}"));
    let summary = found["summary"].as_str().unwrap_or_default();
    assert!(summary.contains("`ledger`"), "{summary}");
    assert!(summary.contains("../registry/ledger/1.2.0"), "{summary}");
    assert!(summary.contains("types.jadpo"), "{summary}");
    assert_eq!(found["location"]["file"], "jadpo.yaml");
}

#[test]
fn the_registry_comes_before_the_bundled_packages() {
    let dir = scratch("precedence");
    let registry = dir.join("registry");
    let bundled = Path::new(env!("CARGO_MANIFEST_DIR")).join("packages/postmark");
    let out = jadpo(&["publish", s(&bundled), "--registry", s(&registry)]);
    assert_eq!(status(&out), 0, "{}", text(&out));
    // Same name and version as the bundled copy: only a registry that wins
    // sees the tampering.
    let manifest = registry.join("postmark/1.2.0/package.yaml");
    let original = std::fs::read_to_string(&manifest).unwrap_or_default();
    write(&manifest, &format!("{original}# edited\n"));
    let app = app(&dir, "  postmark: \"1\"\n", "type Nothing = Text\n");
    let out = jadpo(&["check", s(&app)]);
    assert_eq!(status(&out), 1, "{}", text(&out));
    assert!(
        text(&out).contains("error[package.checksum_mismatch]"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_registry_version_without_checksum_is_an_error() {
    let dir = scratch("no_checksum");
    let pkg = ledger(&dir, 1, "1.0.0");
    let registry = dir.join("registry");
    let out = jadpo(&["publish", s(&pkg), "--registry", s(&registry)]);
    assert_eq!(status(&out), 0, "{}", text(&out));
    let _ = std::fs::remove_file(registry.join("ledger/1.0.0/checksum"));
    let app = app(&dir, "  ledger: \"1\"\n", USES_LEDGER);
    let out = jadpo(&["check", s(&app)]);
    assert_eq!(status(&out), 1, "{}", text(&out));
    assert!(
        text(&out).contains("error[package.checksum_missing]"),
        "{}",
        text(&out)
    );
}

/// A link inside a published version could point the read out of the
/// registry; the verify walk once followed it.
#[test]
fn a_link_inside_a_registry_version_is_refused() {
    let dir = scratch("linked");
    let pkg = ledger(&dir, 2, "1.2.0");
    let registry = dir.join("registry");
    let out = jadpo(&["publish", s(&pkg), "--registry", s(&registry)]);
    assert_eq!(status(&out), 0, "{}", text(&out));
    // The same bytes, through a link: the checksum alone would still match.
    let types = registry.join("ledger/1.2.0/types.jadpo");
    let outside = dir.join("outside.jadpo");
    std::fs::rename(&types, &outside).unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(&outside, &types).unwrap_or_else(|e| panic!("{e}"));
    let app = app(&dir, "  ledger: \"1\"\n", USES_LEDGER);
    let out = jadpo(&["check", s(&app)]);
    assert_eq!(status(&out), 1, "{}", text(&out));
    let shown = text(&out);
    assert!(shown.contains("package.checksum_mismatch"), "{shown}");
    assert!(shown.contains("symbolic link"), "{shown}");
}

/// Two publishes of one version at once: one wins, the other is told the
/// version is already published (exit 1), not "Directory not empty" (2).
#[test]
fn concurrent_publishes_of_one_version_have_one_winner() {
    let dir = scratch("concurrent");
    let pkg = ledger(&dir, 2, "1.3.0");
    let registry = dir.join("registry");
    let outs: Vec<Output> = std::thread::scope(|scope| {
        let runs: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| jadpo(&["publish", s(&pkg), "--registry", s(&registry)])))
            .collect();
        runs.into_iter()
            .map(|r| {
                r.join()
                    .unwrap_or_else(|_| panic!("a publish thread panicked"))
            })
            .collect()
    });
    let statuses: Vec<i32> = outs.iter().map(status).collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 0).count(),
        1,
        "{statuses:?}"
    );
    for out in outs.iter().filter(|o| status(o) != 0) {
        assert_eq!(status(out), 1, "{}", text(out));
        assert!(text(out).contains("already published"), "{}", text(out));
    }
}
