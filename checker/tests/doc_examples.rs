//! Doc examples are tests: each rule's failing example, checked as an app
//! through the real front end, gives exactly one finding with the rule's
//! code, and its fixed example none. Neither may have any other error
//! (other warnings, such as a late failure beside the point, are allowed).
//! Examples of the step rules (`step.`, `effect.`, `route.`, `decline.`)
//! without an `application` get a configured one (a secret steps key and an
//! events store), as `spec/diagnostics/README.md` says; other families'
//! examples are checked exactly as written.

use jadpo_checker::rules::REGISTRY;
use jadpo_checker::Scope;
use jadpo_compiler::load::loaders::MemLoader;

const MANIFEST: &str =
    "app: example\npackages: { stripe: \"3\", github: \"1\", twilio: \"1\", postmark: \"1\" }\n";

pub const PRELUDE: &str = "application Example {
    steps: { encryption_key: config.steps_key }
    events: { store: primary }
}

config ExampleConfig {
    steps_key: StepsKey { binding: \"STEPS_KEY\" secret: true }
}

store primary { kind: postgres }

type StepsKey = Text { max_length: 128 }
";

/// The ```jadpo blocks of a doc section.
fn examples(doc: &str, heading: &str) -> Vec<String> {
    let Some(start) = doc.find(heading) else {
        return Vec::new();
    };
    let rest = &doc[start + heading.len()..];
    let section = &rest[..rest.find("\n## ").unwrap_or(rest.len())];
    let mut out = Vec::new();
    let mut parts = section.split("```jadpo\n");
    parts.next();
    for part in parts {
        if let Some(end) = part.find("```") {
            out.push(part[..end].to_string());
        }
    }
    out
}

/// (code, summary, is an error) of every finding in the example app.
fn findings(code: &str, source: &str) -> Vec<(String, String, bool)> {
    let mut loader = MemLoader::new();
    loader.insert("example/jadpo.yaml", MANIFEST.as_bytes());
    loader.insert("example/example.jadpo", source.as_bytes());
    let configured = ["step.", "effect.", "route.", "decline."]
        .iter()
        .any(|f| code.starts_with(f));
    if configured && !source.contains("application ") {
        loader.insert("example/prelude.jadpo", PRELUDE.as_bytes());
    }
    let compiled = jadpo_compiler::compile(&loader, "example");
    let row = |d: &jadpo_compiler::diag::Diagnostic| {
        (d.code.to_string(), d.summary.clone(), d.is_error())
    };
    let mut out: Vec<(String, String, bool)> = compiled.diagnostics.iter().map(row).collect();
    if let Some(program) = &compiled.program {
        let analysis = jadpo_checker::check(program, &compiled.files, Scope::App);
        out.extend(analysis.diagnostics.iter().map(row));
    }
    out
}

#[test]
fn doc_examples_are_tests() {
    let mut problems = Vec::new();
    for rule in REGISTRY {
        let failing = examples(rule.doc, "## Failing example");
        let fixed = examples(rule.doc, "## Fixed example");
        if failing.is_empty() || fixed.is_empty() {
            problems.push(format!(
                "{}: needs a failing and a fixed ```jadpo example",
                rule.code
            ));
        }
        for src in &failing {
            let found = findings(rule.code, src);
            let own = found.iter().filter(|(c, _, _)| c == rule.code).count();
            let others: Vec<_> = found
                .iter()
                .filter(|(c, _, error)| c != rule.code && *error)
                .collect();
            if own != 1 || !others.is_empty() {
                problems.push(format!(
                    "{}: failing example should give exactly one `{}` and no other error, gave {found:#?}",
                    rule.code, rule.code
                ));
            }
        }
        for src in &fixed {
            let found = findings(rule.code, src);
            if found.iter().any(|(c, _, error)| c == rule.code || *error) {
                problems.push(format!(
                    "{}: fixed example should give no `{}` and no error, gave {found:#?}",
                    rule.code, rule.code
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}
