//! Reading `package.yaml` into [`PackageManifest`], with a spanned
//! diagnostic for every mistake. Type and failure names are only kept with
//! their spans here; whether the package's `.jadpo` files declare them is the
//! resolver's check.

use super::app_manifest::read_requirements;
use super::fields::{is_operation_name, is_package_name, Fields, Reader};
use super::http_binding::{
    check_http_present, read_http_operation, read_http_provider, read_statuses,
};
use super::yaml::{Node, Value};
use crate::diag::Diagnostic;
use crate::manifest::{
    AnswerMatch, Idempotency, NewKeyOn, OperationDecl, PackageManifest, Provider, DEFAULT_ATTEMPTS,
    DEFAULT_TIMEOUT_MS, STEP_KEY_LENGTH,
};
use crate::span::Spanned;

const TOP_KEYS: &[&str] = &["package", "version", "provider", "operations", "packages"];
const PROVIDER_KEYS: &[&str] = &["idempotency", "timeout", "attempts", "http"];
const IDEMPOTENCY_KEYS: &[&str] = &[
    "header",
    "window",
    "replays_failures",
    "new_key_on",
    "in_use",
    "mismatch",
    "max_key_length",
];
const ANSWER_KEYS: &[&str] = &["status", "code", "type"];
const OPERATION_KEYS: &[&str] = &[
    "request",
    "answer",
    "changes",
    "idempotent",
    "keyed",
    "failures",
    "already_undone",
    "large_output",
    "timeout",
    "attempts",
    "window",
    "check",
    "http",
];

/// Reads a parsed `package.yaml`. `None` when the package cannot be used at
/// all (no readable name or version); the reasons are in `r.diags`.
pub fn read_package_manifest(r: &mut Reader, root: &Node) -> Option<PackageManifest> {
    let top = r.fields(root, "package.yaml", TOP_KEYS)?;
    let name = read_name(r, &top);
    let version = read_version(r, &top);
    let provider = read_provider(r, &top);
    let packages = top
        .get("packages")
        .map(|n| read_requirements(r, n, true))
        .unwrap_or_default();
    let operations = read_operations(r, &top, &provider);
    Some(PackageManifest {
        name: name?,
        version: version?,
        provider,
        packages,
        operations,
    })
}

fn read_name(r: &mut Reader, top: &Fields) -> Option<Spanned<String>> {
    let Some(node) = top.get("package") else {
        r.missing_key(
            top.node,
            "package",
            "this package.yaml",
            "the package's name is how apps require it and how its operations are called",
            "package: <name>",
        );
        return None;
    };
    let name = r.text(node, "the package's name, such as stripe")?;
    if !is_package_name(&name.node) {
        r.push(
            Diagnostic::error(
                "manifest.bad_name",
                name.span,
                format!("`{}` is not a valid package name", name.node),
            )
            .with_label("not lower_snake_case")
            .with_reason(
                "package names are written in code before a dot, as in `stripe.customers.create`",
            )
            .with_help(
                "a package name is lowercase letters, digits and `_`, starting with a letter",
            ),
        );
        return None;
    }
    Some(name)
}

fn read_version(r: &mut Reader, top: &Fields) -> Option<Spanned<semver::Version>> {
    let Some(node) = top.get("version") else {
        r.missing_key(
            top.node,
            "version",
            "this package.yaml",
            "apps require packages by version",
            "version: 1.0.0",
        );
        return None;
    };
    let text = r.scalar(node, "a version such as 3.1.0")?;
    match semver::Version::parse(text.node.trim()) {
        Ok(v) => Some(Spanned::new(v, text.span)),
        Err(e) => {
            r.push(
                Diagnostic::error(
                    "manifest.bad_version",
                    text.span,
                    format!("expected a version such as 3.1.0, found `{}`", text.node),
                )
                .with_label(e.to_string())
                .with_help("versions have three numbers: major.minor.patch"),
            );
            None
        }
    }
}

fn read_provider(r: &mut Reader, top: &Fields) -> Provider {
    let mut provider = Provider {
        idempotency: None,
        timeout_ms: DEFAULT_TIMEOUT_MS,
        attempts: DEFAULT_ATTEMPTS,
        http: None,
        span: r.header_span(top.node),
    };
    let Some(node) = top.get("provider") else {
        return provider;
    };
    if let Some((key, _)) = top.entry("provider") {
        provider.span = r.span(key);
    }
    let Some(fields) = r.fields(node, "`provider`", PROVIDER_KEYS) else {
        return provider;
    };
    if let Some(n) = fields.get("timeout") {
        if let Some(ms) = r.duration(n, "timeout") {
            provider.timeout_ms = ms.node;
        }
    }
    if let Some(n) = fields.get("attempts") {
        if let Some(a) = r.int(n, "attempts", 1, 100) {
            provider.attempts = a as u32;
        }
    }
    if let Some((key, n)) = fields.entry("idempotency") {
        provider.idempotency = read_idempotency(r, key, n);
    }
    if let Some((key, n)) = fields.entry("http") {
        provider.http = read_http_provider(r, key, n);
    }
    provider
}

fn read_idempotency(r: &mut Reader, key: &Node, node: &Node) -> Option<Idempotency> {
    let fields = r.fields(node, "`idempotency`", IDEMPOTENCY_KEYS)?;
    let header = match fields.get("header") {
        Some(n) => r.text(n, "the name of the key's header, such as Idempotency-Key"),
        None => {
            r.missing_key(
                key,
                "header",
                "`idempotency`",
                "the runtime sends the key in this header",
                "header: Idempotency-Key",
            );
            None
        }
    };
    let window = match fields.get("window") {
        Some(n) => r.duration(n, "window"),
        None => {
            r.missing_key(
                key,
                "window",
                "`idempotency`",
                "the window (how long the provider keeps a key) decides whether a step in doubt can be sent again",
                "window: 24h",
            );
            None
        }
    };
    let replays_failures = fields
        .get("replays_failures")
        .and_then(|n| r.bool(n, "replays_failures"))
        .unwrap_or(false);
    let new_key_on = fields
        .get("new_key_on")
        .and_then(|n| read_new_key_on(r, n))
        .unwrap_or(NewKeyOn::None);
    let in_use = fields
        .get("in_use")
        .and_then(|n| read_answer(r, n, "in_use"));
    let mismatch = fields
        .get("mismatch")
        .and_then(|n| read_answer(r, n, "mismatch"));
    let max_key_length = fields
        .get("max_key_length")
        .and_then(|n| read_max_key_length(r, n));
    Some(Idempotency {
        header: header?,
        window_ms: window?,
        replays_failures,
        new_key_on,
        in_use,
        mismatch,
        max_key_length,
        span: r.span(key),
    })
}

/// `max_key_length:`, refused when the runtime's step keys do not fit.
fn read_max_key_length(r: &mut Reader, node: &Node) -> Option<Spanned<u64>> {
    let n = r.int(node, "max_key_length", 1, 100_000)? as u64;
    let span = r.span(node);
    if n < STEP_KEY_LENGTH {
        r.push(
            Diagnostic::error(
                "package.key_too_long",
                span,
                format!(
                    "the provider takes keys of at most {n} characters, and the runtime's step keys have {STEP_KEY_LENGTH}"
                ),
            )
            .with_label(format!("at most {n}"))
            .with_reason("every step is sent under a key of 64 hex characters derived from the delivery, the step and its generation; a provider that cuts or refuses a longer key cannot recognise a resend")
            .with_fix("check the provider's documented limit; if it is really below 64, the provider cannot be used with keys: remove `idempotency:` and let its changing calls be unkeyed"),
        );
    }
    Some(Spanned::new(n, span))
}

fn read_new_key_on(r: &mut Reader, node: &Node) -> Option<NewKeyOn> {
    let text = r.text(node, "`none` or `answer` for `new_key_on`")?;
    match text.node.as_str() {
        "none" => Some(NewKeyOn::None),
        "answer" => Some(NewKeyOn::Answer),
        other => {
            r.push(
                Diagnostic::error(
                    "manifest.bad_value",
                    text.span,
                    format!("`new_key_on` is `none` or `answer`, not `{other}`"),
                )
                .with_label("unknown choice")
                .with_help("`answer`: the runtime may resend a step under a new key by itself; `none` (the default): it never does"),
            );
            None
        }
    }
}

fn read_answer(r: &mut Reader, node: &Node, what: &str) -> Option<AnswerMatch> {
    let fields = r.fields(node, &format!("`{what}`"), ANSWER_KEYS)?;
    let Some(status_node) = fields.get("status") else {
        r.missing_key(
            node,
            "status",
            &format!("`{what}`"),
            "the answer is recognised by its HTTP status",
            "status: 409",
        );
        return None;
    };
    let status = read_statuses(r, status_node)?;
    let code = fields
        .get("code")
        .and_then(|n| r.scalar(n, "the error body's code, such as idempotency_key_in_use"))
        .map(|s| s.node);
    let error_type = fields
        .get("type")
        .and_then(|n| r.scalar(n, "the error body's type, such as idempotency_error"))
        .map(|s| s.node);
    Some(AnswerMatch {
        status,
        code,
        error_type,
    })
}

fn read_operations(r: &mut Reader, top: &Fields, provider: &Provider) -> Vec<OperationDecl> {
    let Some(node) = top.get("operations") else {
        return Vec::new();
    };
    let Value::Map(entries) = &node.value else {
        r.wrong_type(
            node,
            "`operations` to be a mapping from operation names to their settings",
        );
        return Vec::new();
    };
    let mut ops: Vec<OperationDecl> = Vec::new();
    for (key, value) in entries {
        let Some(name) = r.text(key, "an operation name such as customers.create") else {
            continue;
        };
        if !is_operation_name(&name.node) {
            r.push(
                Diagnostic::error(
                    "manifest.bad_name",
                    name.span,
                    format!("`{}` is not a valid operation name", name.node),
                )
                .with_label("not an operation name")
                .with_help("operation names are lower_snake_case words joined by dots, such as customers.create"),
            );
            continue;
        }
        if let Some(first) = ops.iter().find(|o| o.name.node == name.node) {
            let first_span = first.name.span;
            r.push(
                Diagnostic::error(
                    "manifest.duplicate_key",
                    name.span,
                    format!("operation `{}` is declared twice", name.node),
                )
                .with_label("declared again here")
                .with_related(first_span, "first declared here")
                .with_fix("keep one declaration"),
            );
            continue;
        }
        if let Some(op) = read_operation(r, name, key, value, provider) {
            ops.push(op);
        }
    }
    ops.sort_by(|a, b| a.name.node.cmp(&b.name.node));
    check_http_present(r, provider, &ops);
    ops
}

fn read_operation(
    r: &mut Reader,
    name: Spanned<String>,
    key: &Node,
    node: &Node,
    provider: &Provider,
) -> Option<OperationDecl> {
    let what = format!("operation `{}`", name.node);
    let fields = r.fields(node, &what, OPERATION_KEYS)?;
    let request = match fields.get("request") {
        Some(n) => r.type_name(n, "request"),
        None => {
            r.missing_key(
                key,
                "request",
                &what,
                "every operation is called with a request value",
                "request: <Type>",
            );
            None
        }
    };
    let answer = fields.get("answer").and_then(|n| r.type_name(n, "answer"));
    let changes = match fields.get("changes") {
        Some(n) => r.bool(n, "changes").unwrap_or(true),
        None => {
            r.missing_key(
                key,
                "changes",
                &what,
                "whether an operation changes something at the provider decides which calls are steps; it must be said, never guessed",
                "changes: true",
            );
            true
        }
    };
    let flag = |r: &mut Reader, k: &str| fields.get(k).and_then(|n| r.bool(n, k));
    let idempotent = flag(r, "idempotent").unwrap_or(false);
    let keyed = flag(r, "keyed").unwrap_or(true);
    let large_output = flag(r, "large_output").unwrap_or(false);
    let failures = fields
        .get("failures")
        .map(|n| r.name_list(n, "failures"))
        .unwrap_or_default();
    let already_undone = fields
        .get("already_undone")
        .map(|n| r.name_list(n, "already_undone"))
        .unwrap_or_default();
    let timeout_ms = fields
        .get("timeout")
        .and_then(|n| r.duration(n, "timeout"))
        .map(|d| d.node);
    let attempts = fields
        .get("attempts")
        .and_then(|n| r.int(n, "attempts", 1, 100))
        .map(|a| a as u32);
    let window_ms = fields.get("window").and_then(|n| r.duration(n, "window"));
    let check = fields.get("check").and_then(|n| read_check(r, n));
    let http = fields
        .entry("http")
        .and_then(|(k, n)| read_http_operation(r, k, n, provider, &failures));
    let op = OperationDecl {
        name,
        request: request?,
        answer,
        changes,
        idempotent,
        keyed,
        failures,
        already_undone,
        large_output,
        timeout_ms,
        attempts,
        window_ms,
        check,
        http,
        span: r.span(key),
    };
    check_operation(r, &op, &fields, provider);
    Some(op)
}

/// `check: "whether the subscription was created"`: one line an operator
/// reads after "Check in Stripe", so no line breaks and at most 200
/// characters.
fn read_check(r: &mut Reader, node: &Node) -> Option<Spanned<String>> {
    let text = r.text(
        node,
        "text such as \"whether the subscription was created\"",
    )?;
    let bad = text.node.chars().any(char::is_control);
    let long = text.node.chars().count() > 200;
    if bad || long || text.node.trim().is_empty() {
        r.push(
            Diagnostic::error(
                "manifest.wrong_type",
                text.span,
                "`check` must be one line of 1 to 200 characters",
            )
            .with_label(if bad {
                "holds a line break or another control character"
            } else if long {
                "longer than 200 characters"
            } else {
                "empty"
            })
            .with_help("an operator reads it after \"Check in <provider>\", as in `check: \"whether the subscription was created\"`"),
        );
        return None;
    }
    Some(text)
}

/// Rules between settings of one operation and its provider.
fn check_operation(r: &mut Reader, op: &OperationDecl, fields: &Fields, provider: &Provider) {
    if op.idempotent && op.keyed && provider.idempotency.is_none() {
        let span = fields
            .entry("idempotent")
            .map_or(op.name.span, |(k, v)| r.span(k).to(r.span(v)));
        r.push(
            Diagnostic::error(
                "package.idempotent_without_key",
                span,
                format!(
                    "operation `{}` is `idempotent: true` with the provider's key, but the provider takes no keys",
                    op.name.node
                ),
            )
            .with_label("idempotent through a key")
            .with_related(provider.span, "this provider has no `idempotency:`")
            .with_reason("an idempotent operation either takes the provider's idempotency key or is safe to repeat as it is; this one can do neither")
            .with_fix("if the operation is safe to repeat as it is (a PUT that replaces, a DELETE), add `keyed: false`")
            .with_fix("if the provider takes keys, describe them under `provider: idempotency:`")
            .with_fix("otherwise remove `idempotent: true`"),
        );
    }
    for undone in &op.already_undone {
        if !op.failures.iter().any(|f| f.node == undone.node) {
            let mut d = Diagnostic::error(
                "package.already_undone_unlisted",
                undone.span,
                format!(
                    "`{}` is listed in `already_undone` but operation `{}` does not fail with it",
                    undone.node, op.name.node
                ),
            )
            .with_label("not among the operation's failures")
            .with_reason("`already_undone` marks some of the operation's own failures as meaning the undo already happened")
            .with_fix(format!("add `{}` to `failures:`, or remove it here", undone.node));
            if let Some((k, _)) = fields.entry("failures") {
                d = d.with_related(r.span(k), "the operation's failures");
            }
            r.push(d);
        }
    }
    if op.window_ms.is_some() {
        check_window(r, op, fields, provider);
    }
    if op.large_output && op.answer.is_none() {
        let span = fields
            .entry("large_output")
            .map_or(op.name.span, |(k, v)| r.span(k).to(r.span(v)));
        r.push(
            Diagnostic::error(
                "package.large_output_without_answer",
                span,
                format!("operation `{}` has `large_output: true` but no `answer:`", op.name.node),
            )
            .with_label("large output of nothing")
            .with_reason("`large_output` says the operation's answer may exceed 1 MB; an operation without an answer has none")
            .with_fix("add the operation's `answer:` type, or remove `large_output: true`"),
        );
    }
}

/// An operation's own `window:` is a fact about the provider's key, so the
/// operation must take one.
fn check_window(r: &mut Reader, op: &OperationDecl, fields: &Fields, provider: &Provider) {
    let keyed = op.idempotent && op.keyed && provider.idempotency.is_some();
    if keyed {
        return;
    }
    let Some((k, v)) = fields.entry("window") else {
        return;
    };
    let span = r.span(k).to(r.span(v));
    let why = if provider.idempotency.is_none() {
        "the provider takes no keys (no `idempotency:`)"
    } else if !op.idempotent {
        "the operation is not `idempotent: true`, so it is sent without a key"
    } else {
        "the operation is `keyed: false`, so it is sent without a key"
    };
    r.push(
        Diagnostic::error(
            "package.window_without_key",
            span,
            format!(
                "operation `{}` sets a key window but is sent without a key",
                op.name.node
            ),
        )
        .with_label("a window for no key")
        .with_reason(format!(
            "`window:` says how long the provider keeps this operation's key; {why}"
        ))
        .with_fix("remove `window:`, or make the operation keyed (`idempotent: true` on a provider with `idempotency:`)"),
    );
}
