//! The machine formats of `jadpo check`: JSON validated against
//! `spec/json-output.schema.json`, SARIF 2.1.0 with the fields GitHub code
//! scanning requires and fingerprints that survive an inserted line, GitHub
//! annotations with their escaping, and snapshots of every format for
//! `examples/mistakes`.

use jadpo::check::{check_app, Outcome};
use jadpo::render::{github, human, json, sarif, Summary};
use jadpo_compiler::load::FsLoader;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const MISTAKES: &str = "examples/mistakes";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn jadpo(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_jadpo"))
        .args(args)
        .current_dir(repo())
        .output()
        .unwrap_or_else(|e| panic!("cannot run jadpo: {e}"))
}

fn document(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document ({e}):\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("formats")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {dir:?}: {e}"));
    dir
}

fn mistakes() -> Outcome {
    check_app(&FsLoader, &repo().join(MISTAKES).to_string_lossy())
}

fn schema_validator() -> jsonschema::Validator {
    let text = std::fs::read_to_string(repo().join("spec/json-output.schema.json"))
        .unwrap_or_else(|e| panic!("cannot read the schema: {e}"));
    let schema: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("the schema is not JSON: {e}"));
    jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("the schema is invalid: {e}"))
}

fn schema_errors(validator: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect()
}

#[test]
fn json_output_matches_its_schema() {
    let validator = schema_validator();
    let empty = scratch("no_manifest");
    let empty = empty.to_string_lossy();
    // Errors with related labels and fixes, a clean app, and a project that
    // cannot be checked at all (exit 2 still writes the document).
    for (path, status) in [(MISTAKES, 1), ("examples/billing", 0), (empty.as_ref(), 2)] {
        let out = jadpo(&["check", "--format", "json", path]);
        assert_eq!(out.status.code(), Some(status), "{path}");
        let doc = document(&out);
        let errors = schema_errors(&validator, &doc);
        assert!(errors.is_empty(), "{path}: {errors:#?}");
    }
}

#[test]
fn the_schema_rejects_a_diagnostic_without_a_code() {
    let validator = schema_validator();
    let mut doc = document(&jadpo(&["check", "--format", "json", MISTAKES]));
    assert!(schema_errors(&validator, &doc).is_empty());
    if let Some(d) = doc["diagnostics"][0].as_object_mut() {
        d.remove("code");
    }
    assert!(!schema_errors(&validator, &doc).is_empty());
}

fn sarif_log(path: &str) -> Value {
    document(&jadpo(&["check", "--format", "sarif", path]))
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no text at {pointer} in {v}"))
}

fn positive_at(v: &Value, pointer: &str) -> u64 {
    let n = v.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    assert!(n >= 1, "{pointer} must be a positive integer in {v}");
    n
}

fn check_physical(location: &Value) {
    let uri = str_at(location, "/physicalLocation/artifactLocation/uri");
    assert!(
        !uri.starts_with('/') && !uri.contains('\\') && !uri.contains("://"),
        "uri must be relative with `/`: {uri}"
    );
    for field in ["startLine", "startColumn", "endLine", "endColumn"] {
        positive_at(location, &format!("/physicalLocation/region/{field}"));
    }
}

#[test]
fn sarif_has_the_fields_code_scanning_requires() {
    let log = sarif_log(MISTAKES);
    assert!(str_at(&log, "/$schema").contains("sarif"));
    assert_eq!(str_at(&log, "/version"), "2.1.0");
    let driver = &log["runs"][0]["tool"]["driver"];
    assert_eq!(str_at(driver, "/name"), "jadpo");
    assert_eq!(str_at(driver, "/version"), env!("CARGO_PKG_VERSION"));
    // `informationUri` is optional in SARIF 2.1.0; the project has no public
    // home yet, and a made-up address would send readers nowhere.
    assert!(driver.get("informationUri").is_none());
    let rules = driver["rules"].as_array().cloned().unwrap_or_default();
    for info in jadpo_checker::rules::registry() {
        assert!(
            rules.iter().any(|r| r["id"] == info.code),
            "no SARIF rule for {}",
            info.code
        );
    }
    for rule in &rules {
        for pointer in [
            "/id",
            "/shortDescription/text",
            "/fullDescription/text",
            "/help/text",
            "/help/markdown",
        ] {
            assert!(
                !str_at(rule, pointer).is_empty(),
                "{pointer} empty in {rule}"
            );
        }
        let level = str_at(rule, "/defaultConfiguration/level");
        assert!(["error", "warning", "note"].contains(&level), "{level}");
    }
    let results = log["runs"][0]["results"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(results.len(), 7, "examples/mistakes has seven findings");
    for result in &results {
        let id = str_at(result, "/ruleId");
        let index = result["ruleIndex"].as_u64().unwrap_or(u64::MAX) as usize;
        assert_eq!(rules.get(index).map(|r| &r["id"]), Some(&Value::from(id)));
        assert!(["error", "warning"].contains(&str_at(result, "/level")));
        assert!(!str_at(result, "/message/text").is_empty());
        let locations = result["locations"].as_array().cloned().unwrap_or_default();
        assert_eq!(locations.len(), 1);
        check_physical(&locations[0]);
        assert!(
            str_at(&locations[0], "/physicalLocation/artifactLocation/uri")
                .starts_with("examples/mistakes/src/")
        );
        for related in result["relatedLocations"].as_array().into_iter().flatten() {
            check_physical(related);
            assert!(!str_at(related, "/message/text").is_empty());
        }
        let fingerprint = str_at(
            result,
            &format!(
                "/partialFingerprints/{}",
                sarif::FINGERPRINT_KEY.replace('/', "~1")
            ),
        );
        assert_eq!(fingerprint.len(), 64);
    }
}

/// (ruleId, fingerprint, startLine) of every result.
fn fingerprints(log: &Value) -> Vec<(String, String, u64)> {
    let key = format!(
        "/partialFingerprints/{}",
        sarif::FINGERPRINT_KEY.replace('/', "~1")
    );
    log["runs"][0]["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            (
                str_at(r, "/ruleId").to_string(),
                str_at(r, &key).to_string(),
                positive_at(r, "/locations/0/physicalLocation/region/startLine"),
            )
        })
        .collect()
}

fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::create_dir_all(to);
    for entry in std::fs::read_dir(from).into_iter().flatten().flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap_or_else(|e| panic!("copy: {e}"));
        }
    }
}

#[test]
fn fingerprints_stay_when_a_line_is_inserted_above() {
    let dir = scratch("fingerprints");
    copy_dir(&repo().join(MISTAKES), &dir);
    let path = dir.to_string_lossy().to_string();
    let before = fingerprints(&sarif_log(&path));
    for entry in std::fs::read_dir(dir.join("src"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        std::fs::write(entry.path(), format!("// an unrelated line\n\n{text}"))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let after = fingerprints(&sarif_log(&path));
    assert_eq!(before.len(), after.len());
    for (b, a) in before.iter().zip(&after) {
        assert_eq!((&b.0, &b.1), (&a.0, &a.1), "fingerprint changed");
        assert_eq!(a.2, b.2 + 2, "the finding did not move down two lines");
    }
    let distinct: std::collections::BTreeSet<&String> = before.iter().map(|f| &f.1).collect();
    assert_eq!(
        distinct.len(),
        before.len(),
        "fingerprints must differ between findings"
    );

    // Editing the line of a finding is a different finding.
    let typo = dir.join("src/typo.jadpo");
    let text = std::fs::read_to_string(&typo).unwrap_or_default();
    std::fs::write(&typo, text.replace("cancle(", "cancle (")).unwrap_or_else(|e| panic!("{e}"));
    let edited = fingerprints(&sarif_log(&path));
    let typo_print = |fs: &[(String, String, u64)]| {
        fs.iter()
            .find(|f| f.0 == "name.unknown_operation")
            .map(|f| f.1.clone())
    };
    assert_ne!(typo_print(&after), typo_print(&edited));
}

#[test]
fn github_annotations_are_one_escaped_line_per_diagnostic() {
    let out = jadpo(&["check", "--format", "github", MISTAKES]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 7, "{text}");
    for line in &lines {
        assert!(
            line.starts_with("::error file=examples/mistakes/src/")
                || line.starts_with("::warning file=examples/mistakes/src/"),
            "{line}"
        );
        let (props, message) = line
            .trim_start_matches("::error ")
            .trim_start_matches("::warning ")
            .split_once("::")
            .unwrap_or_else(|| panic!("no `::` before the message: {line}"));
        assert!(
            props.contains(",line=") && props.contains(",endLine=") && props.contains(",title="),
            "{props}"
        );
        assert!(!message.is_empty());
    }
    assert!(text.contains(
        "::error file=examples/mistakes/src/typo.jadpo,line=4,col=20,endLine=4,endColumn=39,title=name.unknown_operation::"
    ), "{text}");
    assert_eq!(github::escape_property("a,b:c\n%"), "a%2Cb%3Ac%0A%25");
}

/// Rule docs are long and belong to the checker's snapshots; here they are
/// replaced by their length so the SARIF snapshot shows the shape.
fn without_rule_docs(mut log: Value) -> Value {
    let rules = log
        .pointer_mut("/runs/0/tool/driver/rules")
        .and_then(Value::as_array_mut);
    for rule in rules.into_iter().flatten() {
        for key in ["text", "markdown"] {
            if let Some(v) = rule.pointer_mut(&format!("/help/{key}")) {
                let n = v.as_str().map_or(0, str::len);
                *v = Value::from(format!("<rule doc, {n} bytes>"));
            }
        }
    }
    if let Some(v) = log.pointer_mut("/runs/0/tool/driver/version") {
        *v = Value::from("<version>");
    }
    if let Some(v) = log.pointer_mut("/runs/0/tool/driver/semanticVersion") {
        *v = Value::from("<version>");
    }
    log
}

#[test]
fn every_format_of_the_mistakes_example() {
    let outcome = mistakes();
    let summary = Summary::new(
        outcome.stats.files,
        outcome.stats.packages,
        &outcome.diagnostics,
    );
    let files = &outcome.files;
    let diags = &outcome.diagnostics;
    insta::assert_snapshot!("mistakes_human", human::render_all(files, diags, false));
    insta::assert_snapshot!("mistakes_json", json::render(files, diags, summary));
    let log: Value = serde_json::from_str(&sarif::render(files, diags, MISTAKES, true))
        .unwrap_or_else(|e| panic!("SARIF is not JSON: {e}"));
    let shown = serde_json::to_string_pretty(&without_rule_docs(log)).unwrap_or_default();
    insta::assert_snapshot!("mistakes_sarif", shown);
    insta::assert_snapshot!("mistakes_github", github::render(files, diags, MISTAKES));
}

/// `jadpo check --format sarif|github` names each file from the repository
/// root however it is invoked: an absolute path, from the app's folder
/// (`working-directory:`), and `../apps/m` from a sibling folder. Outside
/// any repository, an absolute path gives `file://` URIs.
#[test]
fn ci_paths_are_repository_relative_in_every_invocation() {
    let repository = scratch("ci_paths");
    std::fs::create_dir_all(repository.join(".git")).expect(".git");
    std::fs::create_dir_all(repository.join("tools")).expect("tools");
    let app = repository.join("apps/m");
    crate::lsp::lsp_stdio::copy_dir(&repo().join(MISTAKES), &app);
    let absolute = app.to_string_lossy().into_owned();
    let invocations = [
        (repository.clone(), absolute.as_str()),
        (app.clone(), "."),
        (repository.join("tools"), "../apps/m"),
    ];
    for (cwd, path) in &invocations {
        let run = |format: &str| {
            Command::new(env!("CARGO_BIN_EXE_jadpo"))
                .args(["check", "--format", format, path])
                .current_dir(cwd)
                .env_remove("GITHUB_WORKSPACE")
                .output()
                .expect("jadpo runs")
        };
        let log = document(&run("sarif"));
        let uris = sarif_uris(&log);
        assert!(!uris.is_empty(), "{path}: no locations");
        for uri in &uris {
            assert!(uri.starts_with("apps/m/src/"), "{path} from {cwd:?}: {uri}");
        }
        let annotations = String::from_utf8_lossy(&run("github").stdout).into_owned();
        for line in annotations
            .lines()
            .filter(|l| l.starts_with("::error") || l.starts_with("::warning"))
        {
            assert!(
                line.contains(" file=apps/m/src/"),
                "{path} from {cwd:?}: {line}"
            );
        }
    }

    let outside = std::env::temp_dir().join(format!("jadpo-ci-paths-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&outside);
    crate::lsp::lsp_stdio::copy_dir(&repo().join(MISTAKES), &outside);
    let real = std::fs::canonicalize(&outside).expect("canonical");
    let out = Command::new(env!("CARGO_BIN_EXE_jadpo"))
        .args(["check", "--format", "sarif", &real.to_string_lossy()])
        .env_remove("GITHUB_WORKSPACE")
        .output()
        .expect("jadpo runs");
    let uris = sarif_uris(&document(&out));
    let expected = format!("file://{}/src/", real.to_string_lossy());
    assert!(
        !uris.is_empty() && uris.iter().all(|u| u.starts_with(&expected)),
        "{uris:?}"
    );

    // In GitHub Actions the checkout is `$GITHUB_WORKSPACE`, .git or not.
    let workspace = real.parent().expect("a parent");
    let out = Command::new(env!("CARGO_BIN_EXE_jadpo"))
        .args(["check", "--format", "sarif", &real.to_string_lossy()])
        .env("GITHUB_WORKSPACE", workspace)
        .output()
        .expect("jadpo runs");
    let uris = sarif_uris(&document(&out));
    let _ = std::fs::remove_dir_all(&outside);
    let name = real.file_name().expect("a name").to_string_lossy();
    assert!(
        !uris.is_empty() && uris.iter().all(|u| u.starts_with(&format!("{name}/src/"))),
        "{uris:?}"
    );
}

/// Every artifact URI of a SARIF log's results and related locations.
fn sarif_uris(log: &Value) -> Vec<String> {
    let mut uris = Vec::new();
    for result in log["runs"][0]["results"].as_array().into_iter().flatten() {
        let locations = result["locations"].as_array().into_iter().flatten();
        let related = result["relatedLocations"].as_array().into_iter().flatten();
        for loc in locations.chain(related) {
            if let Some(uri) = loc["physicalLocation"]["artifactLocation"]["uri"].as_str() {
                uris.push(uri.to_string());
            }
        }
    }
    uris
}

/// `--docs-url` gives each SARIF rule a `helpUri` to its page; without it
/// there is none (jadpo has no public home to point at); a relative or
/// malformed address is a usage error.
#[test]
fn docs_url_links_each_rule_to_its_page() {
    let out = jadpo(&[
        "check",
        "--format",
        "sarif",
        "--docs-url",
        "https://docs.example.com/jadpo",
        MISTAKES,
    ]);
    let log = document(&out);
    let rules = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let too_many = rules
        .iter()
        .find(|r| r["id"] == "step.too_many")
        .expect("the rule");
    assert_eq!(
        too_many["helpUri"],
        "https://docs.example.com/jadpo/step.too_many"
    );
    assert_eq!(too_many["name"], "StepTooMany");
    let plain = document(&jadpo(&["check", "--format", "sarif", MISTAKES]));
    let rules = plain["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(rules.iter().all(|r| r.get("helpUri").is_none()));
    for bad in ["docs/diagnostics", "https://", "ftp://x/y"] {
        let out = jadpo(&["check", "--format", "sarif", "--docs-url", bad, MISTAKES]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
    }
}

/// `jadpo build --format json` and `jadpo publish --format json`: the check's
/// document with a `build` or `publish` member, valid against the schema, in
/// every outcome a test can reach: written (its build id is the plan's),
/// refused (naming the stale plan it removed), a dry run (files and checksum).
#[test]
fn build_and_publish_speak_json() {
    let validator = schema_validator();
    let out_dir = scratch("build_json");
    let out = jadpo(&[
        "build",
        "--format",
        "json",
        "examples/billing",
        "--out",
        &out_dir.to_string_lossy(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let doc = document(&out);
    assert_eq!(schema_errors(&validator, &doc), Vec::<String>::new());
    assert_eq!(doc["build"]["outcome"], "written");
    let plan: Value = serde_json::from_str(
        &std::fs::read_to_string(out_dir.join("plan.json")).expect("the plan"),
    )
    .expect("JSON");
    assert_eq!(doc["build"]["build_id"], plan["build_id"]);

    let out = jadpo(&[
        "build",
        "--format",
        "json",
        MISTAKES,
        "--out",
        &out_dir.to_string_lossy(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let doc = document(&out);
    assert_eq!(schema_errors(&validator, &doc), Vec::<String>::new());
    assert_eq!(doc["build"]["outcome"], "refused");
    assert!(doc["build"]["removed_stale_plan"]
        .as_str()
        .is_some_and(|p| p.ends_with("plan.json")));
    assert!(!out_dir.join("plan.json").exists());
    assert!(doc["summary"]["errors"].as_u64().is_some_and(|n| n > 0));

    let out = jadpo(&[
        "publish",
        "--format",
        "json",
        "--dry-run",
        "packages/github",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = document(&out);
    assert_eq!(schema_errors(&validator, &doc), Vec::<String>::new());
    let publish = &doc["publish"];
    assert_eq!(publish["outcome"], "would_publish");
    assert_eq!(publish["package"], "github");
    assert!(publish["target"].is_null());
    let files = publish["files"].as_array().cloned().unwrap_or_default();
    assert_eq!(files.last(), Some(&Value::from("surface.json")));
    assert!(publish["checksum"].as_str().is_some_and(|c| !c.is_empty()));
}
