//! The rule registry: codes are unique and well formed, every rule has its
//! documentation with the fixed headings, a fresh spec page, and fixtures on
//! disk. Regenerate the pages with `UPDATE_SPEC=1 cargo test -p jadpo-checker spec_pages`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use jadpo_checker::rules::{lookup, REGISTRY};
use jadpo_compiler::diag::Severity;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The spec page for a rule: generated from its doc, never edited by hand.
pub fn page(code: &str, severity: Severity, doc: &str) -> String {
    let (family, name) = code.split_once('.').unwrap_or((code, ""));
    format!(
        "<!-- Generated from checker/src/rules/{family}/{name}.rs by \
         `UPDATE_SPEC=1 cargo test -p jadpo-checker spec_pages`. Do not edit. -->\n\n\
         {doc}\nSeverity: {}.\n",
        severity.as_str()
    )
}

#[test]
fn codes_are_unique_and_well_formed() {
    let mut seen = BTreeSet::new();
    for rule in REGISTRY {
        assert!(seen.insert(rule.code), "duplicate code {}", rule.code);
        let (family, name) = rule.code.split_once('.').expect("family.name");
        assert!(!family.is_empty() && !name.is_empty());
        assert!(rule
            .code
            .chars()
            .all(|c| c.is_ascii_lowercase() || c == '_' || c == '.'));
        assert!(lookup(rule.code).is_some());
    }
    assert!(lookup("step.nonexistent").is_none());
}

#[test]
fn every_rule_has_its_documentation_headings() {
    for rule in REGISTRY {
        let doc = rule.doc;
        assert!(
            doc.starts_with(&format!("# {}", rule.code)),
            "{}: doc must start with `# {}`",
            rule.code,
            rule.code
        );
        let mut headings = vec![
            "## What it checks",
            "## Why it matters",
            "## Failing example",
            "## Fixed example",
        ];
        if rule.severity == Severity::Warning {
            headings.push("## How to decline");
        }
        headings.push("## Related");
        let mut at = 0;
        for h in headings {
            let found = doc[at..].find(h).map(|i| i + at);
            assert!(found.is_some(), "{}: missing or misplaced `{h}`", rule.code);
            at = found.unwrap_or(at);
        }
    }
}

#[test]
fn spec_pages() {
    let dir = root().join("spec/diagnostics");
    let update = std::env::var_os("UPDATE_SPEC").is_some();
    if update {
        std::fs::create_dir_all(&dir).expect("create spec/diagnostics");
    }
    let mut stale = Vec::new();
    for rule in REGISTRY {
        let path = dir.join(format!("{}.md", rule.code));
        let want = page(rule.code, rule.severity, rule.doc);
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        if have != want {
            if update {
                std::fs::write(&path, want).expect("write spec page");
            } else {
                stale.push(rule.code);
            }
        }
    }
    // Pages of the checker's families that no rule generates any more.
    let families = ["step.", "effect.", "route.", "decline.", "follow_up."];
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let Some(code) = name.strip_suffix(".md") else {
            continue;
        };
        if families.iter().any(|f| code.starts_with(f)) && lookup(code).is_none() {
            if update {
                std::fs::remove_file(entry.path()).expect("remove stale page");
            } else {
                stale.push("(a page without a rule)");
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale spec pages {stale:?}: run `UPDATE_SPEC=1 cargo test -p jadpo-checker spec_pages`"
    );
}

#[test]
fn every_rule_has_fixtures() {
    let base = root().join("tests/fixtures/rules");
    for rule in REGISTRY {
        let (family, name) = rule.code.split_once('.').unwrap_or((rule.code, ""));
        let dir = base.join(family).join(name);
        let names: Vec<String> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .collect();
        let pass = names.iter().filter(|n| n.starts_with("pass_")).count();
        let fail = names.iter().filter(|n| n.starts_with("fail_")).count();
        assert!(
            pass >= 3 && fail >= 3,
            "{}: needs at least 3 pass_ and 3 fail_ fixtures in {}, has {pass} and {fail}",
            rule.code,
            dir.display()
        );
    }
}
