//! The registry of every diagnostic code: codes are unique and well formed,
//! each has its documentation with the fixed headings and a fresh spec page,
//! each checker rule has fixtures on disk, and no code is emitted anywhere
//! in the tool's sources without a registration. (That each code is
//! produced by a test is `doc_examples.rs`: every failing example runs.)
//! Regenerate the pages with `UPDATE_SPEC=1 cargo test -p jadpo-checker spec_pages`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use jadpo_checker::registry::{all, lookup};
use jadpo_checker::rules::registry;
use jadpo_compiler::diag::Severity;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Where a code's documentation is written.
fn source_of(code: &str) -> String {
    let (family, name) = code.split_once('.').unwrap_or((code, ""));
    if registry().any(|r| r.code == code) {
        format!("checker/src/rules/{family}/{name}.rs")
    } else {
        format!("compiler/codes/{family}/{name}.md")
    }
}

/// The spec page for a code: generated from its doc, never edited by hand.
pub fn page(code: &str, severity: Severity, doc: &str) -> String {
    format!(
        "<!-- Generated from {} by \
         `UPDATE_SPEC=1 cargo test -p jadpo-checker spec_pages`. Do not edit. -->\n\n\
         {doc}\nSeverity: {}.\n\n{}\n",
        source_of(code),
        severity.as_str(),
        jadpo_checker::registry::fix_note(code)
    )
}

#[test]
fn codes_are_unique_and_well_formed() {
    let mut seen = BTreeSet::new();
    for rule in all() {
        assert!(seen.insert(rule.code), "duplicate code {}", rule.code);
        let (family, name) = rule.code.split_once('.').expect("family.name");
        assert!(!family.is_empty() && !name.is_empty());
        assert!(rule
            .code
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.'));
        assert!(name.starts_with(|c: char| c.is_ascii_lowercase()));
        assert!(lookup(rule.code).is_some());
    }
    assert!(lookup("step.nonexistent").is_none());
    assert!(lookup("type.mismatch").is_some());
    assert!(lookup("step.unkeyed").is_some());
}

#[test]
fn every_code_has_its_documentation_headings() {
    for rule in all() {
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
    for rule in all() {
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
    // Pages that no code generates any more.
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let Some(code) = name.strip_suffix(".md") else {
            continue;
        };
        if code != "README" && lookup(code).is_none() {
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
    for rule in registry() {
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

/// Every `"family.name"` string in the tool's sources (outside test
/// modules) that looks like a diagnostic code.
fn emitted_codes() -> BTreeSet<(String, String)> {
    const FAMILIES: [&str; 15] = [
        "syntax",
        "name",
        "type",
        "failure",
        "package",
        "manifest",
        "load",
        "purity",
        "entry",
        "test",
        "step",
        "effect",
        "route",
        "follow_up",
        "decline",
    ];
    // Strings of the families' shape that are not codes.
    const NOT_CODES: [&str; 1] = ["package.yaml"];
    let mut found = BTreeSet::new();
    for dir in ["compiler/src", "checker/src", "src", "runtime/src"] {
        let mut stack = vec![root().join(dir)];
        while let Some(at) = stack.pop() {
            for entry in std::fs::read_dir(&at).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                if path.extension().is_none_or(|e| e != "rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let live = text.split("#[cfg(test)]").next().unwrap_or("");
                for piece in quoted_words(live) {
                    let Some((family, name)) = piece.split_once('.') else {
                        continue;
                    };
                    let shaped = FAMILIES.contains(&family)
                        && !name.is_empty()
                        && name
                            .chars()
                            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
                    if shaped && !NOT_CODES.contains(&piece) {
                        let shown = path.strip_prefix(root()).unwrap_or(&path);
                        found.insert((piece.to_string(), shown.display().to_string()));
                    }
                }
            }
        }
    }
    found
}

/// Every `"word.word"` in `text`: a quote, lowercase letters, `_` and one
/// `.`, and a quote. Found at each quote rather than by pairing quotes, so
/// an escaped quote or a `'"'` earlier in a file cannot hide a code (it hid
/// `load.invalid_utf8`).
fn quoted_words(text: &str) -> impl Iterator<Item = &str> {
    text.match_indices('"').filter_map(move |(at, _)| {
        let rest = text.get(at + 1..)?;
        let end = rest.find(|c: char| {
            !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.')
        })?;
        let word = rest.get(..end)?;
        (rest[end..].starts_with('"') && word.matches('.').count() == 1).then_some(word)
    })
}

#[test]
fn no_code_is_emitted_without_a_registration() {
    let missing: Vec<String> = emitted_codes()
        .into_iter()
        .filter(|(code, _)| lookup(code).is_none())
        .map(|(code, file)| format!("{code} (in {file})"))
        .collect();
    assert!(
        missing.is_empty(),
        "codes emitted without a registration (document each in compiler/codes/<family>/<name>.md): {missing:#?}"
    );
}

#[test]
fn the_scan_finds_the_codes_it_must() {
    let found: BTreeSet<String> = emitted_codes().into_iter().map(|(c, _)| c).collect();
    for code in [
        "type.mismatch",
        "syntax.expected",
        "manifest.missing",
        "entry.duplicate_route",
        "load.invalid_utf8",
    ] {
        assert!(found.contains(code), "the scan missed {code}");
    }
}

/// A rule's findings take their code and severity from the rule's own
/// metadata (`INFO.report`), so neither is ever written a second time in
/// a rule file.
#[test]
fn rules_report_through_their_metadata() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/rules");
    let mut stack = vec![root];
    let mut offenders = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("src/rules").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            if text.contains("Diagnostic::error(") || text.contains("Diagnostic::warning(") {
                offenders.push(path.display().to_string());
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "build findings with INFO.report: {offenders:?}"
    );
}
