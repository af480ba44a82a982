//! SARIF 2.1.0 output (`jadpo check --format sarif`) in the shape GitHub code
//! scanning accepts: one run, one rule per code, one result per diagnostic,
//! and `partialFingerprints` that survive unrelated edits.
//!
//! Fingerprints hash the code, the file, the normalised text of the primary
//! span's line(s) and an occurrence index, never line numbers, so inserting a
//! line above a finding does not make it look new; `primaryLocationLineHash`
//! (the one code scanning tracks) likewise. Locations are relative to the
//! repository root (`locate::ci_root`) under the `%SRCROOT%` base.

use super::{file_text, repo_path, span_positions};
use jadpo_checker::rules::{registry, RuleInfo};
use jadpo_compiler::diag::{Diagnostic, Severity};
use jadpo_compiler::source::Files;
use jadpo_compiler::span::Span;
use serde_json::{json, Value};
use std::collections::BTreeMap;

pub const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";
/// The key of our fingerprint in `partialFingerprints`; the suffix is
/// raised if the hashed text ever changes.
pub const FINGERPRINT_KEY: &str = "jadpoFingerprint/v1";

/// Renders the whole SARIF log. `root` is the checked folder as given on
/// the command line; it is put in front of relative paths (see
/// [`repo_path`]). `checked` is false when the project could not be checked.
pub fn render(files: &Files, diagnostics: &[Diagnostic], root: &str, checked: bool) -> String {
    render_with_notes(files, diagnostics, root, checked, &[], None)
}

/// [`render`], with notes about the run itself (such as diagnostics left
/// out) as the invocation's `toolExecutionNotifications`, and where the
/// diagnostic pages are served (`--docs-url`: each rule's `helpUri`).
pub fn render_with_notes(
    files: &Files,
    diagnostics: &[Diagnostic],
    root: &str,
    checked: bool,
    notes: &[String],
    docs_url: Option<&str>,
) -> String {
    let mut invocation = json!({ "executionSuccessful": checked });
    if !notes.is_empty() {
        let notes: Vec<Value> = notes
            .iter()
            .map(|n| json!({ "level": "note", "message": { "text": n } }))
            .collect();
        invocation["toolExecutionNotifications"] = Value::Array(notes);
    }
    let rules = rule_list(diagnostics);
    let index: BTreeMap<&str, usize> = rules.iter().enumerate().map(|(i, r)| (r.code, i)).collect();
    let fingerprints = fingerprints(files, diagnostics, root);
    let results: Vec<Value> = diagnostics
        .iter()
        .zip(fingerprints)
        .map(|(d, fp)| result(files, d, root, index.get(d.code).copied(), fp))
        .collect();
    let log = json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "jadpo",
                "version": env!("CARGO_PKG_VERSION"),
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "rules": rules.iter().map(|r| rule_json(r, docs_url)).collect::<Vec<_>>(),
            }},
            "invocations": [invocation],
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    });
    let mut text = serde_json::to_string_pretty(&log).unwrap_or_default();
    text.push('\n');
    text
}

/// A rule as SARIF describes it, from the registry (or, for a code that
/// is not registered, a generic description).
struct Rule {
    code: &'static str,
    severity: Severity,
    short: String,
    full: String,
    help: String,
}

/// Every checker rule in registry order, then the other codes that appear,
/// sorted, each with its registered documentation.
fn rule_list(diagnostics: &[Diagnostic]) -> Vec<Rule> {
    let mut rules: Vec<Rule> = registry().map(registry_rule).collect();
    let mut others: BTreeMap<&'static str, Severity> = BTreeMap::new();
    for d in diagnostics {
        if !registry().any(|r| r.code == d.code) {
            others.entry(d.code).or_insert(d.severity);
        }
    }
    rules.extend(
        others.into_iter().map(
            |(code, severity)| match jadpo_checker::registry::lookup(code) {
                Some(info) => registry_rule(info),
                None => other_rule(code, severity),
            },
        ),
    );
    rules
}

fn registry_rule(info: &RuleInfo) -> Rule {
    let full = section(info.doc, "What it checks").unwrap_or_else(|| info.summary.to_string());
    Rule {
        code: info.code,
        severity: info.severity,
        short: info.summary.to_string(),
        full,
        help: info.doc.trim_end().to_string(),
    }
}

fn other_rule(code: &'static str, severity: Severity) -> Rule {
    let family = code.split('.').next().unwrap_or(code);
    let what = family_words(family);
    Rule {
        code,
        severity,
        short: format!("{code}: {what}"),
        full: format!("{what} (`{code}`)."),
        help: format!(
            "{what}. Each finding's message gives the reason and the fixes for that finding."
        ),
    }
}

/// What each family of codes without a rule file judges (spec/README.md).
fn family_words(family: &str) -> &'static str {
    match family {
        "syntax" => "Text that does not parse",
        "name" => "A name that does not resolve, or is declared twice",
        "type" => "A type, constraint, literal or return that does not fit",
        "failure" => "A failure not listed in `fails`, not handled, or not passed on",
        "purity" => "A function that does what only actions may",
        "manifest" | "package" | "load" => {
            "A problem in jadpo.yaml, package.yaml or package loading"
        }
        _ => "A problem jadpo found",
    }
}

/// The first paragraph under `## NAME` in a rule doc, on one line.
fn section(doc: &str, name: &str) -> Option<String> {
    let heading = format!("## {name}");
    let start = doc.find(&heading)? + heading.len();
    let rest = doc.get(start..)?.trim_start();
    let paragraph = rest.split("\n\n").next()?;
    let line = paragraph.split_whitespace().collect::<Vec<_>>().join(" ");
    (!line.is_empty() && !line.starts_with('#')).then_some(line)
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

fn rule_json(rule: &Rule, docs_url: Option<&str>) -> Value {
    let mut out = json!({
        "id": rule.code,
        "name": rule_name(rule.code),
        "shortDescription": { "text": rule.short },
        "fullDescription": { "text": rule.full },
        "help": { "text": super::plain_text(&rule.help).trim_end(), "markdown": rule.help },
        "defaultConfiguration": { "level": level(rule.severity) },
        "properties": {
            // Every rule is exact (the language's rules, judged by their
            // definitions), so a finding is never a guess.
            "precision": "very-high",
            "problem.severity": match rule.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            },
            "tags": [rule.code.split('.').next().unwrap_or(rule.code)],
        },
    });
    // jadpo has no public home to link to; a team serving the pages of
    // spec/diagnostics/ names where, and each rule links to its page.
    if let (Some(base), Value::Object(map)) = (docs_url, &mut out) {
        let sep = if base.ends_with('/') { "" } else { "/" };
        map.insert("helpUri".into(), json!(format!("{base}{sep}{}", rule.code)));
    }
    out
}

/// A rule's name as SARIF wants one: an identifier in Pascal case
/// (`step.too_many` is `StepTooMany`).
fn rule_name(code: &str) -> String {
    code.split(['.', '_'])
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or(String::new(), |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

fn result(
    files: &Files,
    d: &Diagnostic,
    root: &str,
    rule_index: Option<usize>,
    fingerprint: Fingerprint,
) -> Value {
    let related: Vec<Value> = d
        .related
        .iter()
        .enumerate()
        .map(|(i, r)| {
            json!({
                "id": i,
                "physicalLocation": physical(files, r.span, root),
                "message": { "text": r.message },
            })
        })
        .collect();
    let mut out = json!({
        "ruleId": d.code,
        "ruleIndex": rule_index,
        "level": level(d.severity),
        "message": { "text": message(d) },
        "locations": [{ "physicalLocation": physical(files, d.span, root) }],
        "relatedLocations": related,
        "partialFingerprints": {
            FINGERPRINT_KEY: fingerprint.ours,
            "primaryLocationLineHash": fingerprint.line,
        },
    });
    let fixes: Vec<Value> = d
        .fixes
        .iter()
        .filter(|f| !f.edits.is_empty())
        .map(|f| fix_json(files, f, root))
        .collect();
    if let (false, Value::Object(map)) = (fixes.is_empty(), &mut out) {
        map.insert("fixes".into(), Value::Array(fixes));
    }
    out
}

/// The summary, then the reason, fixes and help on their own lines, then
/// a link to each related location (`[label](id)`, which code scanning
/// shows as a link to that place). Square brackets and backslashes of the
/// text itself are escaped, as SARIF's embedded links require.
fn message(d: &Diagnostic) -> String {
    let mut text = escape(&d.summary);
    if let Some(reason) = &d.reason {
        text.push_str(&format!("\nreason: {}", escape(reason)));
    }
    for fix in &d.fixes {
        text.push_str(&format!("\nfix: {}", escape(&fix.message)));
    }
    if let Some(help) = &d.help {
        text.push_str(&format!("\nhelp: {}", escape(help)));
    }
    for (i, r) in d.related.iter().enumerate() {
        let label = if r.message.is_empty() {
            "related"
        } else {
            &r.message
        };
        text.push_str(&format!("\nsee: [{}]({i})", escape(label)));
    }
    text
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn fix_json(files: &Files, fix: &jadpo_compiler::diag::Fix, root: &str) -> Value {
    let changes: Vec<Value> = fix
        .edits
        .iter()
        .map(|e| {
            let location = physical(files, e.span, root);
            json!({
                "artifactLocation": location["artifactLocation"],
                "replacements": [{
                    "deletedRegion": location["region"],
                    "insertedContent": { "text": e.replacement },
                }],
            })
        })
        .collect();
    json!({ "description": { "text": fix.message }, "artifactChanges": changes })
}

fn physical(files: &Files, span: Span, root: &str) -> Value {
    let (start, end) = span_positions(files, span);
    json!({
        "artifactLocation": artifact(&repo_path(root, super::file_path(files, span))),
        "region": {
            "startLine": start.line,
            "startColumn": start.column,
            "endLine": end.line,
            "endColumn": end.column,
        },
    })
}

/// Where a file is: a path from the repository root (or the folder jadpo
/// was given, outside a repository) relative to `%SRCROOT%`, the base
/// GitHub and other consumers resolve against the checkout; an absolute
/// path as a `file://` URI; a bundled file as its name.
fn artifact(path: &str) -> Value {
    if path.starts_with('/') {
        json!({ "uri": format!("file://{}", uri(path)) })
    } else if path.starts_with('<') {
        json!({ "uri": uri(path) })
    } else {
        json!({ "uri": uri(path), "uriBaseId": SRCROOT })
    }
}

/// The base of repository-relative URIs (as CodeQL writes them).
pub const SRCROOT: &str = "%SRCROOT%";

/// A relative URI reference for a path: characters outside the unreserved
/// and path-safe set are percent-encoded (`<bundled>` becomes
/// `%3Cbundled%3E`).
pub fn uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        let safe = b.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=@".contains(&b);
        if safe {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// One fingerprint per diagnostic, in order: BLAKE3 of the code, the file,
/// the primary span's line(s) with whitespace runs folded to one space, and
/// how many earlier diagnostics had the same three.
fn fingerprints(files: &Files, diagnostics: &[Diagnostic], root: &str) -> Vec<Fingerprint> {
    let mut seen: BTreeMap<(String, String, String), u32> = BTreeMap::new();
    diagnostics
        .iter()
        .map(|d| {
            let file = repo_path(root, super::file_path(files, d.span));
            let text = span_lines(files, d.span);
            let count = seen
                .entry((d.code.to_string(), file.clone(), text.clone()))
                .or_insert(0);
            let index = *count;
            *count += 1;
            let mut h = blake3::Hasher::new();
            for part in ["jadpo-fingerprint-v1", d.code, &file, &text] {
                h.update(part.as_bytes());
                h.update(b"\0");
            }
            h.update(&index.to_le_bytes());
            Fingerprint {
                ours: h.finalize().to_hex().to_string(),
                line: line_hash(&file, &text, index),
            }
        })
        .collect()
}

/// A result's two fingerprints: ours, and the `primaryLocationLineHash`
/// code scanning tracks alerts by.
struct Fingerprint {
    ours: String,
    line: String,
}

/// `primaryLocationLineHash` in the form code scanning's own has: a hash
/// of the primary location's line text (not its number, so an edit above
/// keeps it), `:`, and the 1-based occurrence of that text in the file
/// for the rule.
fn line_hash(file: &str, text: &str, index: u32) -> String {
    let mut h = blake3::Hasher::new();
    for part in ["jadpo-line-v1", file, text] {
        h.update(part.as_bytes());
        h.update(b"\0");
    }
    let hex = h.finalize().to_hex();
    format!("{}:{}", &hex[..16], index + 1)
}

/// The whole lines a span touches, each trimmed, whitespace runs folded.
fn span_lines(files: &Files, span: Span) -> String {
    let text = file_text(files, span);
    let range = super::clamp(files, span);
    let start = text
        .get(..range.start)
        .and_then(|t| t.rfind('\n'))
        .map_or(0, |i| i + 1);
    let end = text
        .get(range.end..)
        .and_then(|t| t.find('\n'))
        .map_or(text.len(), |i| range.end + i);
    text.get(start..end)
        .unwrap_or("")
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_encodes_angle_brackets_and_spaces() {
        assert_eq!(uri("<bundled>/a b.jadpo"), "%3Cbundled%3E/a%20b.jadpo");
        assert_eq!(uri("src/billing.jadpo"), "src/billing.jadpo");
    }

    #[test]
    fn rule_names_are_pascal_case() {
        assert_eq!(rule_name("step.too_many"), "StepTooMany");
        assert_eq!(rule_name("decline.not_a_warning"), "DeclineNotAWarning");
    }

    #[test]
    fn brackets_are_escaped_where_links_are_embedded() {
        assert_eq!(
            escape("status [409, 422] a\\b"),
            "status \\[409, 422\\] a\\\\b"
        );
    }

    #[test]
    fn section_takes_the_first_paragraph_on_one_line() {
        let doc = "# x.y: s\n\n## What it checks\n\nOne\ntwo.\n\nMore.\n";
        assert_eq!(section(doc, "What it checks").as_deref(), Some("One two."));
        assert_eq!(section(doc, "Missing"), None);
    }
}
