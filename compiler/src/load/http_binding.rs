//! Reading a package's HTTP binding (`provider.http` and each operation's
//! `http:`, design `server.md` section 15) with a spanned diagnostic for
//! every mistake. Whether a path's `{field}` is a field of the request is
//! the resolver's check; everything the manifest alone decides is here.

use super::fields::{is_identifier, Fields, Reader};
use super::yaml::{Node, Value};
use crate::diag::Diagnostic;
use crate::http::{
    base_url_problem, parse_path, Auth, Case, Encoding, ErrorFields, HttpProvider, HttpSetting,
    Method, PathPart, RateLimitedWhen, BASE_URL,
};
use crate::manifest::{HttpOperationDecl, OperationDecl, Provider};
use crate::span::{Span, Spanned};

const HTTP_KEYS: &[&str] = &[
    "base_url",
    "auth",
    "settings",
    "headers",
    "case",
    "errors",
    "retry_after",
    "rate_limited",
];
const SETTING_KEYS: &[&str] = &["secret"];
/// Every scheme's keys: which a scheme takes is checked after.
const AUTH_KEYS: &[&str] = &[
    "scheme",
    "token",
    "username",
    "password",
    "name",
    "value",
    "token_url",
    "client_id",
    "client_secret",
];
const ERROR_KEYS: &[&str] = &["code", "type"];
const RATE_LIMITED_KEYS: &[&str] = &["status", "code_contains"];
const OPERATION_KEYS: &[&str] = &[
    "method",
    "path",
    "encoding",
    "rename",
    "failures",
    "body_field",
    "answer_field",
];
const FAILURE_KEYS: &[&str] = &["status"];
/// Headers the runtime writes itself.
const OWN_HEADERS: &[&str] = &[
    "authorization",
    "content-type",
    "content-length",
    "host",
    "transfer-encoding",
];

/// `provider.http`
pub fn read_http_provider(
    r: &mut Reader,
    key: &Node,
    node: &Node,
) -> Option<Spanned<HttpProvider>> {
    let fields = r.fields(node, "`http`", HTTP_KEYS)?;
    let base_url = match fields.get("base_url") {
        Some(n) => read_base_url(r, n),
        None => {
            r.missing_key(
                key,
                "base_url",
                "`http`",
                "requests are sent under the provider's base URL (an app can move it with its `base_url` setting)",
                "base_url: https://api.example.com",
            );
            None
        }
    };
    let settings = fields
        .get("settings")
        .map(|n| read_settings(r, n))
        .unwrap_or_default();
    let auth = fields.entry("auth").and_then(|(k, n)| read_auth(r, k, n));
    let headers = fields
        .get("headers")
        .map(|n| read_headers(r, n))
        .unwrap_or_default();
    let case = fields
        .get("case")
        .and_then(|n| read_choice(r, n, "case", &["snake", "camel", "pascal"]))
        .and_then(|c| Case::parse(&c))
        .unwrap_or_default();
    let errors = fields
        .get("errors")
        .map(|n| read_errors(r, n))
        .unwrap_or_default();
    let retry_after = fields
        .get("retry_after")
        .and_then(|n| read_header_name(r, n));
    let rate_limited = fields
        .entry("rate_limited")
        .and_then(|(k, n)| read_rate_limited(r, k, n));
    if let (Some((k, _)), true) = (fields.entry("rate_limited"), errors.code.is_none()) {
        let span = r.span(k);
        r.push(
            Diagnostic::error(
                "manifest.missing_key",
                span,
                "`rate_limited` reads the error code, but `errors` names no `code`",
            )
            .with_label("matched against the error code")
            .with_reason("an answer is rate limited when its error code holds the words, so the code must be read from the body")
            .with_help("add `errors: { code: /message }` (the JSON pointer of the provider's error code or message)"),
        );
    }
    let binding = HttpProvider {
        base_url: base_url?,
        auth,
        settings: settings.iter().map(|(s, _)| s.clone()).collect(),
        headers,
        case,
        errors,
        retry_after,
        rate_limited,
    };
    if let (Some(auth), Some((k, _))) = (&binding.auth, fields.entry("auth")) {
        let span = r.span(k);
        for name in auth.settings() {
            check_setting_named(r, &binding, name, span);
        }
    }
    Some(Spanned::new(binding, r.span(key)))
}

fn read_base_url(r: &mut Reader, node: &Node) -> Option<String> {
    let url = r.text(node, "a URL such as https://api.stripe.com")?;
    if let Some(problem) = base_url_problem(&url.node) {
        r.push(
            Diagnostic::error(
                "manifest.bad_value",
                url.span,
                format!("`{}` cannot be a provider's base URL", url.node),
            )
            .with_label(problem)
            .with_reason("requests carry the provider's credentials and the app's data, so they travel over TLS")
            .with_help("write the provider's documented API root, such as https://api.stripe.com"),
        );
        return None;
    }
    Some(url.node.trim_end_matches('/').to_string())
}

/// `settings: { api_key: { secret: true } }`, sorted by name, with each
/// name's span.
fn read_settings(r: &mut Reader, node: &Node) -> Vec<(HttpSetting, Span)> {
    let Value::Map(entries) = &node.value else {
        r.wrong_type(
            node,
            "`settings` to be a mapping from setting names to `{ secret: true }` or `{}`",
        );
        return Vec::new();
    };
    let mut out: Vec<(HttpSetting, Span)> = Vec::new();
    for (k, v) in entries {
        let Some(name) = r.text(k, "a setting name such as api_key") else {
            continue;
        };
        if !is_identifier(&name.node) || name.node == BASE_URL {
            let why = if name.node == BASE_URL {
                "`base_url` is every binding's setting already"
            } else {
                "not a lower_snake_case name"
            };
            r.push(
                Diagnostic::error(
                    "manifest.bad_name",
                    name.span,
                    format!("`{}` cannot be a setting's name", name.node),
                )
                .with_label(why)
                .with_help("apps give settings by name, as in `providers: { stripe: { api_key: config.stripe_key } }`"),
            );
            continue;
        }
        if let Some((_, first)) = out.iter().find(|(s, _)| s.name == name.node) {
            let first = *first;
            r.push(
                Diagnostic::error(
                    "manifest.duplicate_key",
                    name.span,
                    format!("setting `{}` is declared twice", name.node),
                )
                .with_label("declared again here")
                .with_related(first, "first declared here")
                .with_fix("keep one"),
            );
            continue;
        }
        let secret = match &v.value {
            Value::Null => false,
            _ => r
                .fields(v, &format!("setting `{}`", name.node), SETTING_KEYS)
                .and_then(|f| f.get("secret").and_then(|n| r.bool(n, "secret")))
                .unwrap_or(false),
        };
        out.push((
            HttpSetting {
                name: name.node,
                secret,
            },
            name.span,
        ));
    }
    out.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    out
}

fn read_auth(r: &mut Reader, key: &Node, node: &Node) -> Option<Auth> {
    let Value::Map(_) = &node.value else {
        r.wrong_type(
            node,
            "`auth` to be a mapping such as `{ scheme: bearer, token: api_key }`",
        );
        return None;
    };
    let scheme_fields = r.fields(node, "`auth`", AUTH_KEYS)?;
    let Some(scheme_node) = scheme_fields.get("scheme") else {
        r.missing_key(
            key,
            "scheme",
            "`auth`",
            "the scheme says how the credentials are sent",
            "scheme: bearer",
        );
        return None;
    };
    let schemes = ["bearer", "basic", "header", "oauth2_client_credentials"];
    let scheme = read_choice(r, scheme_node, "scheme", &schemes)?;
    let wanted: &[&str] = match scheme.as_str() {
        "bearer" => &["token"],
        "basic" => &["username", "password"],
        "header" => &["name", "value"],
        _ => &["token_url", "client_id", "client_secret"],
    };
    let mut values = Vec::new();
    for w in wanted {
        match scheme_fields.get(w) {
            Some(n) => values.push(r.text(n, &format!("`{w}`"))?.node),
            None => {
                r.missing_key(
                    key,
                    w,
                    &format!("`auth` with scheme {scheme}"),
                    "the scheme needs it to send the credentials",
                    &format!("{w}: <setting>"),
                );
                return None;
            }
        }
    }
    for (k, n) in scheme_entries(&scheme_fields) {
        if !wanted.contains(&k) && k != "scheme" {
            let span = r.span(n);
            r.push(
                Diagnostic::error(
                    "manifest.unknown_key",
                    span,
                    format!("`{k}` is not a setting of `auth` with scheme {scheme}"),
                )
                .with_label("not used by this scheme")
                .with_help(format!("scheme {scheme} takes: {}", wanted.join(", "))),
            );
        }
    }
    let mut it = values.into_iter();
    let mut next = || it.next().unwrap_or_default();
    Some(match scheme.as_str() {
        "bearer" => Auth::Bearer { token: next() },
        "basic" => Auth::Basic {
            username: next(),
            password: next(),
        },
        "header" => Auth::Header {
            name: next(),
            value: next(),
        },
        _ => Auth::OAuth2 {
            token_url: next(),
            client_id: next(),
            client_secret: next(),
        },
    })
}

fn scheme_entries<'n>(f: &Fields<'n>) -> Vec<(&'static str, &'n Node)> {
    AUTH_KEYS
        .iter()
        .filter(|k| **k != "scheme")
        .filter_map(|k| f.entry(k).map(|(key, _)| (*k, key)))
        .collect()
}

/// A name the binding uses as a setting must be declared (`base_url`
/// always is).
fn check_setting_named(r: &mut Reader, binding: &HttpProvider, name: &str, at: Span) {
    if name == BASE_URL || binding.setting(name).is_some() {
        return;
    }
    r.push(
        Diagnostic::error(
            "package.http_setting",
            at,
            format!("the binding uses the setting `{name}`, which `settings:` does not declare"),
        )
        .with_label(format!("uses `{name}`"))
        .with_reason("apps give exactly the declared settings; an undeclared one could never be given")
        .with_fix(format!(
            "declare it under `provider: http: settings:`, as `{name}: {{ secret: true }}` for a credential"
        )),
    );
}

fn read_headers(r: &mut Reader, node: &Node) -> Vec<(String, String)> {
    let Value::Map(entries) = &node.value else {
        r.wrong_type(node, "`headers` to be a mapping from header names to text");
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, v) in entries {
        let Some(name) = read_header_name(r, k) else {
            continue;
        };
        if OWN_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
            let span = r.span(k);
            r.push(
                Diagnostic::error(
                    "manifest.bad_value",
                    span,
                    format!("`{name}` is a header the runtime writes itself"),
                )
                .with_label("set by the runtime")
                .with_help("credentials go in `auth:`; the body's type follows `encoding:`"),
            );
            continue;
        }
        let Some(value) = r.text(v, "the header's value as text") else {
            continue;
        };
        if value.node.chars().any(char::is_control) {
            r.push(
                Diagnostic::error(
                    "manifest.bad_value",
                    value.span,
                    "a header value holds a control character",
                )
                .with_label("line break or control character")
                .with_help("write the value on one line"),
            );
            continue;
        }
        out.push((name, value.node));
    }
    out
}

fn read_header_name(r: &mut Reader, node: &Node) -> Option<String> {
    let name = r.text(node, "a header name such as Retry-After")?;
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.node.is_empty() || !name.node.chars().all(token) {
        r.push(
            Diagnostic::error(
                "manifest.bad_value",
                name.span,
                format!("`{}` is not an HTTP header name", name.node),
            )
            .with_label("letters, digits and `-` only")
            .with_help("write the header as the provider documents it, such as Retry-After"),
        );
        return None;
    }
    Some(name.node)
}

fn read_errors(r: &mut Reader, node: &Node) -> ErrorFields {
    let Some(fields) = r.fields(node, "`errors`", ERROR_KEYS) else {
        return ErrorFields::default();
    };
    let mut pointer = |k: &str| {
        let text = r.text(fields.get(k)?, "a JSON pointer such as /error/code")?;
        if !text.node.starts_with('/') {
            r.push(
                Diagnostic::error(
                    "manifest.bad_value",
                    text.span,
                    format!("`{}` is not a JSON pointer", text.node),
                )
                .with_label("starts with `/`")
                .with_help(
                    "a JSON pointer names the field's place in the error body, such as /error/code",
                ),
            );
            return None;
        }
        Some(text.node)
    };
    ErrorFields {
        code: pointer("code"),
        error_type: pointer("type"),
    }
}

/// `rate_limited: { status: [403], code_contains: "rate limit" }`: both
/// keys required; 429 is rate limited already and not listed.
fn read_rate_limited(r: &mut Reader, key: &Node, node: &Node) -> Option<RateLimitedWhen> {
    let fields = r.fields(node, "`rate_limited`", RATE_LIMITED_KEYS)?;
    let statuses = match fields.get("status") {
        Some(n) => read_statuses(r, n)?,
        None => {
            r.missing_key(
                key,
                "status",
                "`rate_limited`",
                "the answers that mean a rate limit are named by their status",
                "status: [403]",
            );
            return None;
        }
    };
    let code_contains = match fields.get("code_contains") {
        Some(n) => r.text(n, "the words the error code holds, such as \"rate limit\"")?,
        None => {
            r.missing_key(
                key,
                "code_contains",
                "`rate_limited`",
                "a status such as 403 also means other things; the error code tells a rate limit apart",
                "code_contains: \"rate limit\"",
            );
            return None;
        }
    };
    if code_contains.node.trim().is_empty() {
        r.push(
            Diagnostic::error(
                "manifest.bad_value",
                code_contains.span,
                "`code_contains` is empty",
            )
            .with_label("matches every code")
            .with_help("give the words the provider's rate-limit code or message holds, such as \"rate limit\""),
        );
        return None;
    }
    Some(RateLimitedWhen {
        statuses,
        code_contains: code_contains.node,
    })
}

fn read_choice(r: &mut Reader, node: &Node, what: &str, choices: &[&str]) -> Option<String> {
    let text = r.text(node, &format!("one of {} for `{what}`", choices.join(", ")))?;
    if choices.contains(&text.node.as_str()) {
        return Some(text.node);
    }
    r.push(
        Diagnostic::error(
            "manifest.bad_value",
            text.span,
            format!(
                "`{what}` is one of {}, not `{}`",
                choices.join(", "),
                text.node
            ),
        )
        .with_label("unknown choice")
        .with_help(format!("write one of: {}", choices.join(", "))),
    );
    None
}

/// An operation's `http:`, checked against its provider's binding.
pub fn read_http_operation(
    r: &mut Reader,
    key: &Node,
    node: &Node,
    provider: &Provider,
    failures: &[Spanned<String>],
) -> Option<HttpOperationDecl> {
    let fields = r.fields(node, "the operation's `http`", OPERATION_KEYS)?;
    if provider.http.is_none() {
        let span = r.span(key);
        r.push(
            Diagnostic::error(
                "manifest.bad_value",
                span,
                "the operation says how it is sent over HTTP, but its provider has no `http:`",
            )
            .with_label("`http:` without the provider's")
            .with_related(provider.span, "no `http:` here")
            .with_fix(
                "add `provider: http:` with the provider's `base_url`, or remove this `http:`",
            ),
        );
        return None;
    }
    let method = match fields.get("method") {
        Some(n) => read_choice(r, n, "method", &["GET", "POST", "PUT", "PATCH", "DELETE"])
            .and_then(|m| Method::parse(&m)),
        None => {
            r.missing_key(
                key,
                "method",
                "the operation's `http`",
                "a request has a method",
                "method: POST",
            );
            None
        }
    };
    let (path, path_span) = match fields.get("path") {
        Some(n) => read_path(r, n, provider)?,
        None => {
            r.missing_key(
                key,
                "path",
                "the operation's `http`",
                "a request goes to a path under the base URL",
                "path: /v1/things",
            );
            return None;
        }
    };
    let method = method?;
    let encoding = read_encoding(r, &fields, method);
    let rename = fields
        .get("rename")
        .map(|n| read_rename(r, n))
        .unwrap_or_default();
    let http_failures = fields
        .get("failures")
        .map(|n| read_failure_statuses(r, n, failures))
        .unwrap_or_default();
    let body_field = fields
        .get("body_field")
        .and_then(|n| r.text(n, "the request field that is the whole body"));
    let answer_field = fields
        .get("answer_field")
        .and_then(|n| r.text(n, "the answer field the whole body fills"));
    if let (Some(b), false) = (&body_field, method.has_body() && encoding == Encoding::Json) {
        r.push(
            Diagnostic::error(
                "manifest.bad_value",
                b.span,
                "`body_field` needs a JSON body",
            )
            .with_label("no JSON body here")
            .with_help("a GET or DELETE sends a query string and a form body names its fields; remove `body_field`"),
        );
    }
    Some(HttpOperationDecl {
        method,
        path,
        path_span,
        encoding,
        rename,
        failures: http_failures,
        body_field,
        answer_field,
        span: r.span(key),
    })
}

fn read_path(r: &mut Reader, node: &Node, provider: &Provider) -> Option<(Vec<PathPart>, Span)> {
    let text = r.text(node, "a path such as /v1/customers/{id}")?;
    let parts = match parse_path(&text.node) {
        Ok(p) => p,
        Err(why) => {
            r.push(
                Diagnostic::error(
                    "manifest.bad_value",
                    text.span,
                    format!("`{}` is not a path template", text.node),
                )
                .with_label(why)
                .with_help("write the path as the provider documents it, with `{field}` for a request field and `{$setting}` for a setting"),
            );
            return None;
        }
    };
    if let Some(binding) = &provider.http {
        for part in &parts {
            if let PathPart::Setting(name) = part {
                check_setting_named(r, &binding.node, name, text.span);
            }
        }
    }
    Some((parts, text.span))
}

fn read_encoding(r: &mut Reader, fields: &Fields, method: Method) -> Encoding {
    let Some(n) = fields.get("encoding") else {
        return Encoding::Json;
    };
    let Some(choice) = read_choice(r, n, "encoding", &["json", "form"]) else {
        return Encoding::Json;
    };
    if !method.has_body() {
        let span = r.span(n);
        r.push(
            Diagnostic::error(
                "manifest.bad_value",
                span,
                format!("a {} request has no body to encode", method.as_str()),
            )
            .with_label("no body")
            .with_help(
                "GET and DELETE send the request's fields as a query string; remove `encoding:`",
            ),
        );
    }
    if choice == "form" {
        Encoding::Form
    } else {
        Encoding::Json
    }
}

fn read_rename(r: &mut Reader, node: &Node) -> Vec<(Spanned<String>, String)> {
    let Value::Map(entries) = &node.value else {
        r.wrong_type(
            node,
            "`rename` to be a mapping from field names to wire names",
        );
        return Vec::new();
    };
    let mut out: Vec<(Spanned<String>, String)> = Vec::new();
    for (k, v) in entries {
        let (Some(field), Some(wire)) = (
            r.text(k, "a field name"),
            r.text(v, "the field's name on the wire"),
        ) else {
            continue;
        };
        if out.iter().any(|(f, _)| f.node == field.node) {
            r.push(
                Diagnostic::error(
                    "manifest.duplicate_key",
                    field.span,
                    format!("`{}` is renamed twice", field.node),
                )
                .with_label("renamed again here")
                .with_fix("keep one"),
            );
            continue;
        }
        out.push((field, wire.node));
    }
    out
}

/// `failures: { CardDeclined: { status: [402] } }`: each a failure the
/// operation lists.
fn read_failure_statuses(
    r: &mut Reader,
    node: &Node,
    listed: &[Spanned<String>],
) -> Vec<(Spanned<String>, Vec<u16>)> {
    let Value::Map(entries) = &node.value else {
        r.wrong_type(
            node,
            "`failures` to be a mapping such as `{ CardDeclined: { status: [402] } }`",
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, v) in entries {
        let Some(name) = r.text(k, "a failure's name") else {
            continue;
        };
        if !listed.iter().any(|f| f.node == name.node) {
            r.push(
                Diagnostic::error(
                    "package.http_failure_unlisted",
                    name.span,
                    format!("`{}` has statuses here but the operation does not fail with it", name.node),
                )
                .with_label("not among the operation's failures")
                .with_reason("`http: failures:` narrows the statuses under which one of the operation's own failures is recognised")
                .with_fix(format!("add `{}` to the operation's `failures:`, or remove it here", name.node)),
            );
            continue;
        }
        let Some(f) = r.fields(v, &format!("failure `{}`", name.node), FAILURE_KEYS) else {
            continue;
        };
        let Some(status) = f.get("status") else {
            r.missing_key(
                v,
                "status",
                &format!("failure `{}`", name.node),
                "the statuses are what this entry says",
                "status: [402]",
            );
            continue;
        };
        if let Some(statuses) = read_statuses(r, status) {
            out.push((name, statuses));
        }
    }
    out
}

/// In a package with `provider.http`, every operation says how it is sent.
pub fn check_http_present(r: &mut Reader, provider: &Provider, ops: &[OperationDecl]) {
    let Some(binding) = &provider.http else {
        return;
    };
    for op in ops.iter().filter(|o| o.http.is_none()) {
        r.push(
            Diagnostic::error(
                "package.http_missing",
                op.name.span,
                format!("operation `{}` has no `http:`, but its provider is called over HTTP", op.name.node),
            )
            .with_label("no `http:`")
            .with_related(binding.span, "the provider's HTTP binding")
            .with_reason("an app calls the provider for real through the binding; an operation without a method and path could only be faked")
            .with_fix("add `http: { method: POST, path: \"/v1/...\" }` from the provider's API reference"),
        );
    }
}

/// `status: 409` or `status: [409, 422]`: at least one, none twice.
pub(super) fn read_statuses(r: &mut Reader, node: &Node) -> Option<Vec<u16>> {
    let Value::Seq(items) = &node.value else {
        return r.int(node, "status", 100, 599).map(|s| vec![s as u16]);
    };
    if items.is_empty() {
        let span = r.span(node);
        r.push(
            Diagnostic::error("manifest.bad_value", span, "`status` lists no status")
                .with_label("empty list")
                .with_help("give one HTTP status, or a list such as [409, 422]"),
        );
        return None;
    }
    // Each status with where it was first listed.
    let mut seen: Vec<(u16, &Node)> = Vec::new();
    for item in items {
        let status = r.int(item, "status", 100, 599)? as u16;
        if let Some(&(_, first)) = seen.iter().find(|(s, _)| *s == status) {
            let (first, again) = (r.span(first), r.span(item));
            r.push(
                Diagnostic::error(
                    "manifest.bad_value",
                    again,
                    format!("status {status} is listed twice"),
                )
                .with_label("listed again here")
                .with_related(first, "first listed here")
                .with_fix("keep one"),
            );
            continue;
        }
        seen.push((status, item));
    }
    Some(seen.into_iter().map(|(s, _)| s).collect())
}
