//! The CI recipe of `docs/ci.md`, as a user would copy it: it passes
//! actionlint (when installed), and what actionlint cannot know holds: the
//! upload job's permission and checkout, the SARIF file written is the one
//! uploaded, the check step lets findings be uploaded, the action versions
//! are current, jadpo is built from its own source (not the user's
//! checkout), and the prose names the files the steps use.

use serde_json::Value;
use std::path::Path;

fn ci_doc() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ci.md"))
        .expect("docs/ci.md")
}

/// The first ```yaml block that is a whole workflow.
fn recipe(doc: &str) -> String {
    doc.split("```yaml\n")
        .skip(1)
        .filter_map(|rest| rest.split("```").next())
        .find(|block| block.lines().any(|l| l.starts_with("jobs:")))
        .expect("a workflow in docs/ci.md")
        .to_string()
}

fn steps(job: &Value) -> Vec<Value> {
    job["steps"].as_array().cloned().unwrap_or_default()
}

fn text<'v>(step: &'v Value, key: &str) -> &'v str {
    step[key].as_str().unwrap_or("")
}

/// The major version after `@` (`v5` is 5).
fn major(uses: &str) -> u32 {
    uses.rsplit('@')
        .next()
        .and_then(|v| v.trim_start_matches('v').split('.').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

#[test]
fn the_ci_recipe_works_when_copied() {
    let doc = ci_doc();
    let yaml = recipe(&doc);
    let workflow: Value = serde_saphyr::from_str(&yaml).expect("the recipe is YAML");
    let jobs = workflow["jobs"].as_object().expect("jobs");
    let check = &jobs["check"];
    assert_eq!(check["permissions"]["security-events"], "write");
    let check_steps = steps(check);
    let upload = check_steps
        .iter()
        .position(|s| text(s, "uses").contains("upload-sarif"))
        .expect("an upload-sarif step");
    let checkout = check_steps
        .iter()
        .position(|s| text(s, "uses").starts_with("actions/checkout"))
        .expect("a checkout");
    assert!(checkout < upload, "checkout before upload-sarif");
    let sarif_file = check_steps[upload]["with"]["sarif_file"]
        .as_str()
        .expect("sarif_file");
    let writer = check_steps[..upload]
        .iter()
        .find(|s| text(s, "run").contains("--format sarif"))
        .expect("a step writing SARIF");
    assert!(
        text(writer, "run").ends_with(&format!("> {sarif_file}")),
        "{writer}"
    );
    assert_eq!(
        writer["continue-on-error"], true,
        "findings are uploaded on exit 1"
    );
    for job in jobs.values() {
        for step in steps(job) {
            let uses = text(&step, "uses");
            if uses.starts_with("actions/checkout") {
                assert!(major(uses) >= 5, "{uses} is deprecated");
            }
            if uses.starts_with("github/codeql-action") {
                assert!(
                    major(uses) >= 4,
                    "{uses}: v3 is deprecated in December 2026"
                );
            }
            let run = text(&step, "run");
            assert!(
                !run.contains("cargo install"),
                "`{run}` builds the user's checkout, not jadpo"
            );
            if run.contains("jadpo ") {
                assert!(
                    steps(job)
                        .iter()
                        .any(|s| text(s, "run").contains(".jadpo-src/Cargo.toml")),
                    "a job running jadpo builds it from jadpo's source"
                );
            }
        }
    }
    let section = &doc[doc
        .find("## A GitHub Actions workflow")
        .expect("the section")..];
    let intro = section.split("```yaml").next().unwrap_or("");
    for named in ["deployed/plan.json", "scripts/fetch-deployed-plan"] {
        assert!(
            intro.contains(named) && yaml.contains(named),
            "`{named}` in prose and steps"
        );
    }
    actionlint(&yaml);
}

/// Runs actionlint on the recipe when it is on PATH (the conformance
/// suite installs it); the structural checks above run everywhere.
fn actionlint(yaml: &str) {
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("actionlint"))
            .find(|p| p.is_file())
    });
    let Some(actionlint) = found else {
        eprintln!("actionlint is not installed: the recipe's structure is checked, not its lint");
        return;
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("docs-actionlint/.github/workflows");
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    std::fs::write(dir.join("jadpo.yml"), yaml).expect("the workflow");
    let out = std::process::Command::new(actionlint)
        .args([
            "-no-color",
            "-oneline",
            "-shellcheck=",
            "-pyflakes=",
            "jadpo.yml",
        ])
        .current_dir(&dir)
        .output()
        .expect("actionlint runs");
    assert!(
        out.status.success(),
        "actionlint:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every command of the README that writes its output into a folder
/// makes that folder first: on a fresh machine the folder is not there
/// (`~/.local/share/bash-completion/completions` was not, issue 38).
#[test]
fn readme_commands_make_the_folders_they_write_into() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let mut seen = 0;
    for line in readme
        .lines()
        .filter(|l| l.contains("jadpo ") && l.contains(" > "))
    {
        let target = line
            .rsplit(" > ")
            .next()
            .unwrap_or("")
            .split_whitespace()
            .next()
            .unwrap_or("");
        let Some((folder, _)) = target.rsplit_once('/') else {
            continue;
        };
        seen += 1;
        assert!(
            line.contains(&format!("mkdir -p {folder}")),
            "README writes into {folder} without making it: {line}"
        );
    }
    assert!(seen > 0, "the README's completions command is found");
}
