//! Doc examples are tests: each registered code's failing example, checked
//! as an app through the real front end and checker, gives exactly one
//! finding with the code and no other error; its fixed example gives none
//! (other warnings, such as a late failure beside the point, are allowed).
//!
//! An example is one or more fenced blocks. ```` ```jadpo ```` is the app's
//! source `example.jadpo`; ```` ```jadpo PATH ```` and ```` ```yaml PATH ````
//! put a file at PATH in the app's folder (`jadpo.yaml` replaces the
//! default manifest; `packages/NAME/...` makes a local package). Blocks of
//! another language (```` ```text ````) only illustrate. Examples of the
//! step rules (`step.`, `effect.`, `route.`, `decline.`) without an
//! `application` get a configured one (a secret steps key and an events
//! store), as `spec/diagnostics/README.md` says; other families' examples
//! without an `application` (and without their own `jadpo.yaml`) get one
//! that gives the default manifest's packages their provider settings, and
//! are otherwise checked exactly as written.

use jadpo_checker::registry;
use jadpo_checker::Scope;
use jadpo_compiler::diag::CodeInfo;
use jadpo_compiler::load::loaders::MemLoader;

const MANIFEST: &str =
    "app: example\npackages: { stripe: \"3\", github: \"1\", twilio: \"1\", postmark: \"1\" }\n";

/// The settings of the default manifest's packages, for an example of
/// another family without an `application`.
pub const PROVIDERS: &str = "application Example {
    providers: {
        stripe: { api_key: config.stripe_key }
        github: { token: config.github_token }
        twilio: { account_sid: config.twilio_sid  auth_token: config.twilio_token }
        postmark: { server_token: config.postmark_token }
    }
}

config ProvidersConfig {
    stripe_key: Text { binding: \"STRIPE_KEY\" secret: true }
    github_token: Text { binding: \"GITHUB_TOKEN\" secret: true }
    twilio_sid: Text { binding: \"TWILIO_ACCOUNT_SID\" }
    twilio_token: Text { binding: \"TWILIO_AUTH_TOKEN\" secret: true }
    postmark_token: Text { binding: \"POSTMARK_TOKEN\" secret: true }
}
";

pub const PRELUDE: &str = "application Example {
    steps: { encryption_key: config.steps_key }
    events: { store: primary }
    providers: {
        stripe: { api_key: config.stripe_key }
        github: { token: config.github_token }
        twilio: { account_sid: config.twilio_sid  auth_token: config.twilio_token }
        postmark: { server_token: config.postmark_token }
    }
}

config ExampleConfig {
    steps_key: StepsKey { binding: \"STEPS_KEY\" secret: true }
    stripe_key: StepsKey { binding: \"STRIPE_KEY\" secret: true }
    github_token: StepsKey { binding: \"GITHUB_TOKEN\" secret: true }
    twilio_sid: StepsKey { binding: \"TWILIO_ACCOUNT_SID\" }
    twilio_token: StepsKey { binding: \"TWILIO_AUTH_TOKEN\" secret: true }
    postmark_token: StepsKey { binding: \"POSTMARK_TOKEN\" secret: true }
}

store primary { kind: postgres }

type StepsKey = Text { max_length: 128 }
";

/// Codes whose failing example cannot be a small app in a doc (it needs a
/// file system, a registry or bytes a Markdown block cannot hold), with the
/// test that produces the code instead.
pub const PRODUCED_ELSEWHERE: &[(&str, &str)] = &[
    ("load.symlink_loop", "compiler/tests/load_sources.rs"),
    ("test.failed", "tests/test_command.rs"),
    ("test.stored_in_package", "tests/test_command.rs"),
    ("load.too_deep", "compiler/tests/load_limits.rs"),
    ("load.too_large", "compiler/tests/load_limits.rs"),
    ("load.too_many_declarations", "tests/hostile/mod.rs"),
    ("load.invalid_utf8", "compiler/tests/load_sources.rs"),
    ("load.unreadable", "tests/hostile/mod.rs"),
    ("manifest.too_large", "compiler/tests/load_limits.rs"),
    ("package.checksum_mismatch", "tests/publish.rs"),
    ("package.checksum_missing", "tests/publish.rs"),
    ("package.has_errors", "tests/cli.rs"),
    ("syntax.nul_byte", "compiler/src/lexer.rs"),
    ("syntax.control_character", "tests/hostile/surfaces.rs"),
    ("syntax.too_many_mistakes", "tests/hostile/surfaces.rs"),
    ("syntax.too_deep", "tests/hostile/mod.rs"),
];

/// One file of an example: its path in the app's folder and its text.
#[derive(Debug)]
pub struct ExampleFile {
    pub path: String,
    pub text: String,
}

/// The examples of a doc section: each fenced block of a runnable language
/// is one file; the blocks of one paragraph group form one example, and a
/// group is closed by prose between blocks.
pub fn examples(doc: &str, heading: &str) -> Vec<Vec<ExampleFile>> {
    let Some(start) = doc.find(heading) else {
        return Vec::new();
    };
    let rest = &doc[start + heading.len()..];
    let section = &rest[..rest.find("\n## ").unwrap_or(rest.len())];
    let mut out: Vec<Vec<ExampleFile>> = Vec::new();
    let mut current: Vec<ExampleFile> = Vec::new();
    let mut lines = section.lines();
    let mut prose_since_block = false;
    while let Some(line) = lines.next() {
        let Some(info) = line.strip_prefix("```") else {
            if !line.trim().is_empty() {
                prose_since_block = true;
            }
            continue;
        };
        let mut words = info.split_whitespace();
        let lang = words.next().unwrap_or("");
        let path = words.next();
        let body: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.starts_with("```"))
            .collect();
        let runnable = matches!(lang, "jadpo" | "yaml");
        if !runnable {
            continue;
        }
        if prose_since_block && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        prose_since_block = false;
        let path = path.unwrap_or(if lang == "yaml" {
            "jadpo.yaml"
        } else {
            "example.jadpo"
        });
        current.push(ExampleFile {
            path: path.to_string(),
            text: body.join("\n") + "\n",
        });
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// (code, summary, is an error) of every finding in the example app.
fn findings(code: &str, files: &[ExampleFile]) -> Vec<(String, String, bool)> {
    let mut loader = MemLoader::new();
    if !files.iter().any(|f| f.path == "jadpo.yaml") && code != "manifest.missing" {
        loader.insert("example/jadpo.yaml", MANIFEST.as_bytes());
    }
    for f in files {
        loader.insert(format!("example/{}", f.path), f.text.as_bytes());
    }
    let configured = ["step.", "effect.", "route.", "decline.", "subscriber."]
        .iter()
        .any(|f| code.starts_with(f));
    let declares_app = files.iter().any(|f| f.text.contains("application "));
    let own_manifest = files.iter().any(|f| f.path == "jadpo.yaml");
    if configured && !declares_app {
        loader.insert("example/prelude.jadpo", PRELUDE.as_bytes());
    } else if !declares_app && !own_manifest {
        loader.insert("example/providers.jadpo", PROVIDERS.as_bytes());
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

fn elsewhere(code: &str) -> bool {
    PRODUCED_ELSEWHERE.iter().any(|(c, _)| *c == code)
}

fn judge(info: &CodeInfo, problems: &mut Vec<String>) {
    let failing = examples(info.doc, "## Failing example");
    let fixed = examples(info.doc, "## Fixed example");
    if (failing.is_empty() && !elsewhere(info.code)) || fixed.is_empty() {
        problems.push(format!(
            "{}: needs a runnable failing and a fixed example",
            info.code
        ));
    }
    for files in &failing {
        let found = findings(info.code, files);
        let own = found.iter().filter(|(c, _, _)| c == info.code).count();
        let others: Vec<_> = found
            .iter()
            .filter(|(c, _, error)| c != info.code && *error)
            .collect();
        if own != 1 || !others.is_empty() {
            problems.push(format!(
                "{}: failing example should give exactly one `{}` and no other error, gave {found:#?}",
                info.code, info.code
            ));
        }
    }
    for files in &fixed {
        let found = findings(info.code, files);
        if found.iter().any(|(c, _, error)| c == info.code || *error) {
            problems.push(format!(
                "{}: fixed example should give no `{}` and no error, gave {found:#?}",
                info.code, info.code
            ));
        }
    }
}

#[test]
fn doc_examples_are_tests() {
    let mut problems = Vec::new();
    for info in registry::all() {
        judge(info, &mut problems);
    }
    assert!(
        problems.is_empty(),
        "{} problem(s):\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}

#[test]
fn codes_produced_elsewhere_are_produced_there() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for (code, place) in PRODUCED_ELSEWHERE {
        assert!(registry::lookup(code).is_some(), "{code} is not registered");
        let text = std::fs::read_to_string(root.join(place)).unwrap_or_default();
        assert!(
            text.contains(code),
            "{code}: {place} should produce it (and name it)"
        );
    }
}

#[test]
fn an_example_is_split_by_prose_and_keeps_its_files() {
    let doc = "## Failing example\n\n```yaml jadpo.yaml\napp: x\n```\n\n```jadpo\naction a() -> Unit {}\n```\n\nOr:\n\n```jadpo\naction b() -> Unit {}\n```\n\n```text\nnot run\n```\n\n## Fixed example\n";
    let found = examples(doc, "## Failing example");
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].len(), 2);
    assert_eq!(found[0][0].path, "jadpo.yaml");
    assert_eq!(found[0][1].path, "example.jadpo");
    assert_eq!(found[1][0].text, "action b() -> Unit {}\n");
}
