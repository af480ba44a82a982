//! `package.yaml` and `jadpo.yaml` mistakes: each gives one diagnostic with
//! a span into the YAML, snapshotted with the spanned text and line:col.

use crate::load_support;

use load_support::*;

const GOOD_PROVIDER: &str = "package: mailer
version: 1.0.0
provider:
  idempotency:
    header: Idempotency-Key
    window: 24h
  timeout: 5s
  attempts: 2
";

/// Loads a package whose manifest is `yaml`, checks every diagnostic points
/// into that manifest, and renders them.
fn package_diags(yaml: &str) -> String {
    let mem = app_with_package(yaml);
    let result = load(&mem, empty_bundled());
    if let Ok(p) = &result {
        for d in &p.diagnostics {
            let file = p.files.get(d.span.file);
            assert_eq!(file.path, "vendor/mailer/package.yaml", "{d:?}");
            assert!(!d.span.is_empty(), "empty span: {d:?}");
        }
    }
    render_load(&result)
}

fn with_ops(ops: &str) -> String {
    format!("{GOOD_PROVIDER}operations:\n{ops}")
}

#[test]
fn good_package_has_no_diagnostics() {
    let yaml = with_ops(
        "  email.send:\n    request: Email\n    answer: Sent\n    changes: true\n    idempotent: true\n    failures: [Bounced]\n",
    );
    insta::assert_snapshot!(package_diags(&yaml), @"(no diagnostics)");
}

#[test]
fn unknown_key_suggests_nearest() {
    let yaml = "package: mailer
version: 1.0.0
provider:
  idempotency:
    header: Idempotency-Key
    windw: 24h
    window: 24h
";
    insta::assert_snapshot!(package_diags(yaml));
}

#[test]
fn unknown_operation_key_suggests_nearest() {
    let yaml =
        with_ops("  email.send:\n    request: Email\n    changes: true\n    failurs: [Bounced]\n");
    insta::assert_snapshot!(package_diags(&yaml));
}

#[test]
fn unknown_top_level_key_without_near_name() {
    let yaml = format!("{GOOD_PROVIDER}description: sends mail\n");
    insta::assert_snapshot!(package_diags(&yaml));
}

#[test]
fn bad_window_duration() {
    let yaml = "package: mailer
version: 1.0.0
provider:
  idempotency:
    header: Idempotency-Key
    window: banana
";
    insta::assert_snapshot!(package_diags(yaml));
}

#[test]
fn wrong_value_types() {
    let yaml = with_ops(
        "  email.send:\n    request: Email\n    changes: yes\n    attempts: two\n    failures: Bounced\n",
    );
    insta::assert_snapshot!(package_diags(&yaml));
}

#[test]
fn missing_changes() {
    let yaml = with_ops("  email.send:\n    request: Email\n    answer: Sent\n");
    insta::assert_snapshot!(package_diags(&yaml));
}

#[test]
fn idempotency_missing_header_and_window() {
    let yaml = "package: mailer
version: 1.0.0
provider:
  idempotency:
    replays_failures: true
";
    insta::assert_snapshot!(package_diags(yaml));
}

#[test]
fn idempotent_without_provider_keys() {
    let yaml = "package: mailer
version: 1.0.0
provider:
  timeout: 5s
operations:
  email.send:
    request: Email
    changes: true
    idempotent: true
  email.cancel:
    request: EmailRef
    changes: true
    idempotent: true
    keyed: false
";
    insta::assert_snapshot!(package_diags(yaml));
}

#[test]
fn already_undone_not_among_failures() {
    let yaml = with_ops(
        "  email.cancel:\n    request: EmailRef\n    changes: true\n    idempotent: true\n    failures: [Bounced]\n    already_undone: [EmailMissing]\n",
    );
    insta::assert_snapshot!(package_diags(&yaml));
}

#[test]
fn large_output_without_answer() {
    let yaml = with_ops(
        "  email.export:\n    request: Query\n    changes: false\n    large_output: true\n",
    );
    insta::assert_snapshot!(package_diags(&yaml));
}

const FULL_FACTS: &str = "package: mailer
version: 1.0.0
provider:
  idempotency:
    header: Idempotency-Key
    window: 24h
    max_key_length: 64
    in_use: { status: [409, 422], code: \"704\" }
    mismatch: { status: 400, type: idempotency_error }
operations:
  email.send:
    request: Email
    changes: true
    idempotent: true
    window: 72h
";

#[test]
fn answers_take_a_status_list_code_and_type_and_operations_a_window() {
    let mem = app_with_package(FULL_FACTS);
    let project = load(&mem, empty_bundled()).expect("loads");
    assert_eq!(render_load(&Ok(project.clone())).trim(), "(no diagnostics)");
    let m = &project.packages[0].manifest;
    let idem = m.provider.idempotency.as_ref().expect("idempotency");
    let in_use = idem.in_use.as_ref().expect("in_use");
    assert_eq!(in_use.status, vec![409, 422]);
    assert_eq!(in_use.code.as_deref(), Some("704"));
    assert_eq!(in_use.error_type, None);
    assert!(in_use.matches(422, Some("704"), Some("validation")));
    assert!(!in_use.matches(500, Some("704"), None));
    assert!(!in_use.matches(409, Some("705"), None));
    let mismatch = idem.mismatch.as_ref().expect("mismatch");
    assert_eq!(mismatch.status, vec![400]);
    assert_eq!(mismatch.error_type.as_deref(), Some("idempotency_error"));
    assert!(mismatch.matches(400, Some("anything"), Some("idempotency_error")));
    assert!(!mismatch.matches(400, None, Some("invalid_request_error")));
    assert_eq!(idem.max_key_length.as_ref().map(|n| n.node), Some(64));
    let op = &m.operations[0];
    assert_eq!(op.window_ms.as_ref().map(|w| w.node), Some(72 * 3_600_000));
}

#[test]
fn answer_status_lists_are_checked() {
    let yaml = "package: mailer
version: 1.0.0
provider:
  idempotency:
    header: Idempotency-Key
    window: 24h
    in_use: { status: [409, 422, 409] }
    mismatch: { status: [], kind: idempotency_error }
";
    insta::assert_snapshot!(package_diags(yaml));
}

#[test]
fn step_keys_must_fit_the_provider() {
    let yaml = FULL_FACTS.replace("max_key_length: 64", "max_key_length: 36");
    insta::assert_snapshot!(package_diags(&yaml));
}

#[test]
fn an_operation_window_needs_a_key() {
    let yaml = with_ops(
        "  email.send:\n    request: Email\n    changes: true\n    window: 72h\n  email.undo:\n    request: Email\n    changes: true\n    idempotent: true\n    keyed: false\n    window: 1h\n",
    );
    insta::assert_snapshot!(package_diags(&yaml));
}

#[test]
fn duplicate_key() {
    let yaml = "package: mailer\nversion: 1.0.0\nversion: 1.0.1\n";
    insta::assert_snapshot!(package_diags(yaml));
}

#[test]
fn bad_version_and_new_key_on() {
    let yaml = "package: mailer
version: three
provider:
  idempotency:
    header: Idempotency-Key
    window: 1h
    new_key_on: sometimes
    in_use: { status: 1000 }
";
    insta::assert_snapshot!(package_diags(yaml));
}

#[test]
fn invalid_yaml() {
    insta::assert_snapshot!(package_diags(
        "package: mailer\nversion: [1.0.0\nprovider: {}\n"
    ));
}

#[test]
fn operation_names_are_checked() {
    let yaml = with_ops("  Email.Send:\n    request: Email\n    changes: true\n  email.send:\n    request: not a type\n    changes: true\n");
    insta::assert_snapshot!(package_diags(&yaml));
}

#[test]
fn app_manifest_mistakes() {
    let mem = MemLoader::new().with(
        "app/jadpo.yaml",
        "app: Shop\npakages:\n  stripe: \"3\"\npackages:\n  stripe: \"three\"\n  mailer: { path: /abs/mailer }\n",
    );
    insta::assert_snapshot!(render_load(&load(&mem, empty_bundled())));
}

#[test]
fn app_manifest_missing_app() {
    let mem = MemLoader::new().with("app/jadpo.yaml", "packages: {}\n");
    insta::assert_snapshot!(render_load(&load(&mem, empty_bundled())));
}

#[test]
fn missing_jadpo_yaml_is_fatal() {
    let mem = MemLoader::new().with("app/main.jadpo", "");
    let result = load(&mem, empty_bundled());
    assert!(result.is_err());
    insta::assert_snapshot!(render_load(&result));
}

#[test]
fn invalid_jadpo_yaml_is_fatal() {
    let mem = MemLoader::new().with("app/jadpo.yaml", "app: [shop\n");
    let result = load(&mem, empty_bundled());
    assert!(result.is_err());
    insta::assert_snapshot!(render_load(&result));
}

/// `yes`, `off` and the other YAML 1.1 booleans are text in YAML 1.2: the
/// diagnostic says so and names the boolean that was meant.
#[test]
fn yaml_1_1_booleans_are_explained() {
    let yaml = with_ops("  email.send:\n    request: Email\n    changes: Off\n");
    let mem = app_with_package(&yaml);
    let loaded = load(&mem, empty_bundled()).expect("loads");
    let d = loaded
        .diagnostics
        .iter()
        .find(|d| d.code == "manifest.wrong_type")
        .expect("a wrong_type");
    assert_eq!(
        d.reason.as_deref(),
        Some("manifests are YAML 1.2, where `Off` is text; only YAML 1.1 read it as false")
    );
    assert_eq!(
        d.fixes.first().map(|f| f.message.as_str()),
        Some("write `false`")
    );
}

const HTTP_PROVIDER: &str = "package: mailer
version: 1.0.0
provider:
  http:
    base_url: https://api.mailer.example/
    auth: { scheme: bearer, token: api_key }
    settings: { api_key: { secret: true } }
    case: camel
    errors: { code: /error/code }
operations:
";

#[test]
fn a_good_http_binding_has_no_diagnostics() {
    let yaml = format!(
        "{HTTP_PROVIDER}  email.send:\n    request: Email\n    changes: true\n    http: {{ method: POST, path: /email, encoding: form, rename: {{ to: To }} }}\n"
    );
    insta::assert_snapshot!(package_diags(&yaml), @"(no diagnostics)");
}

/// Every mistake of a binding, one diagnostic each: plain http off
/// loopback, an unknown scheme, a header the runtime writes, a pointer
/// without `/`, an undeclared setting in a path, a body on a GET, and an
/// operation without `http:`.
#[test]
fn http_binding_mistakes_each_give_one_diagnostic() {
    let yaml = "package: mailer
version: 1.0.0
provider:
  http:
    base_url: http://api.mailer.example
    auth: { scheme: digest, token: api_key }
    headers: { Content-Type: text/plain, X-Ok: yes }
    errors: { code: error.code }
operations:
  email.send:
    request: Email
    changes: true
    http: { method: GET, path: \"/accounts/{$account}/email\", encoding: form }
  email.list:
    request: Email
    changes: false
";
    insta::assert_snapshot!(package_diags(yaml));
}

#[test]
fn an_operation_http_without_the_providers_is_refused() {
    let yaml = with_ops(
        "  email.send:\n    request: Email\n    changes: true\n    http: { method: POST, path: /email }\n",
    );
    insta::assert_snapshot!(package_diags(&yaml));
}

#[test]
fn a_rate_limited_answer_other_than_429_is_declared_with_its_words() {
    let yaml = HTTP_PROVIDER.replace(
        "    errors: { code: /error/code }\n",
        "    errors: { code: /error/code }\n    rate_limited: { status: [403], code_contains: \"rate limit\" }\n",
    ) + "  email.send:\n    request: Email\n    changes: true\n    http: { method: POST, path: /email }\n";
    insta::assert_snapshot!(package_diags(&yaml), @"(no diagnostics)");
}

/// `rate_limited` without its words, with empty words, with a status out
/// of range, and without `errors.code` to read them from: one diagnostic
/// each.
#[test]
fn rate_limited_mistakes_each_give_one_diagnostic() {
    let op = "  email.send:\n    request: Email\n    changes: true\n    http: { method: POST, path: /email }\n";
    let with = |rate: &str, errors: &str| {
        HTTP_PROVIDER.replace(
            "    errors: { code: /error/code }\n",
            &format!("{errors}    rate_limited: {rate}\n"),
        ) + op
    };
    let errors = "    errors: { code: /error/code }\n";
    let cases = [
        with("{ status: [403] }", errors),
        with("{ status: [403], code_contains: \"  \" }", errors),
        with("{ status: [700], code_contains: \"rate limit\" }", errors),
        with("{ status: [403], code_contains: \"rate limit\" }", ""),
    ];
    let all: Vec<String> = cases.iter().map(|yaml| package_diags(yaml)).collect();
    insta::assert_snapshot!(all.join("\n----\n"));
}
