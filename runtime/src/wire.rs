//! A package's HTTP binding put to work (design `server.md` section 15),
//! without IO: the request a call sends (method, URL, headers, body), the
//! body an answer or a failure is carried in, how a body is read back into
//! a value, and how an HTTP answer is classified. The server's HTTP
//! provider sends what this builds; the fake provider server answers with
//! what it writes; a recorded answer is read back with it.

use std::collections::BTreeMap;

use jadpo_compiler::http::{Encoding, HttpProvider, Method, PathPart, BASE_URL};
use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::{FailureId, FailureKind, HttpOperation, OpId, Program};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde_json::Value as Json;

use crate::provider::Answer;
use crate::value::{decode_named, Value};

/// One package's settings, by name, as the app gave them.
pub type Settings = BTreeMap<String, String>;

/// A request, ready to send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub method: Method,
    pub url: String,
    /// In the order sent; the auth header is added by the sender.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// Path segments keep only unreserved characters as they are.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The path of a URL (`/v1/oauth2/token` of `https://x.example/v1/oauth2/token`);
/// a path is its own.
pub fn url_path(url: &str) -> &str {
    match url.split_once("://") {
        Some((_, rest)) => rest.find('/').and_then(|i| rest.get(i..)).unwrap_or("/"),
        None => url,
    }
}

/// The binding of an operation, when its package has one.
pub fn binding(program: &Program, op: OpId) -> Option<(&HttpProvider, &HttpOperation)> {
    let o = program.op(op);
    let provider = program.package(o.package).http.as_ref()?;
    Some((provider, o.http.as_ref()?))
}

/// The request a call of `op` sends. `key` is the step's idempotency key.
pub fn request(
    program: &Program,
    op: OpId,
    value: &Value,
    settings: &Settings,
    key: Option<&str>,
) -> Result<Request, String> {
    let (provider, http) = binding(program, op).ok_or("the operation has no HTTP binding")?;
    let base = settings
        .get(BASE_URL)
        .map_or(provider.base_url.as_str(), String::as_str)
        .trim_end_matches('/');
    let fields: Vec<(Name, Value)> = value
        .as_record()
        .map(|r| r.fields().to_vec())
        .unwrap_or_default();
    let mut url = String::from(base);
    let mut in_path: Vec<&str> = Vec::new();
    for part in &http.path {
        match part {
            PathPart::Text(t) => url.push_str(t),
            PathPart::Field(f) => {
                let v = fields
                    .iter()
                    .find(|(n, _)| n.as_str() == f)
                    .map(|(_, v)| v)
                    .ok_or(format!("the request has no `{f}` for the path"))?;
                let text = scalar_text(v).ok_or(format!("`{f}` is not a single value"))?;
                url.extend(utf8_percent_encode(&text, SEGMENT));
                in_path.push(f);
            }
            PathPart::Setting(s) => {
                let text = settings
                    .get(s)
                    .ok_or(format!("the setting `{s}` is not given"))?;
                url.extend(utf8_percent_encode(text, SEGMENT));
            }
        }
    }
    let rest: Vec<(Name, Value)> = fields
        .into_iter()
        .filter(|(n, _)| !in_path.contains(&n.as_str()))
        .collect();
    let own_accept = provider
        .headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("accept"));
    let mut headers: Vec<(String, String)> = Vec::new();
    if !own_accept {
        headers.push(("Accept".into(), "application/json".into()));
    }
    headers.extend(provider.headers.iter().cloned());
    if let (Some(key), Some(idem)) = (key, &program.package(program.op(op).package).idempotency) {
        headers.push((idem.header.clone(), key.to_string()));
    }
    let names = |n: &str| http.wire_name(provider.case, n);
    let mut body = Vec::new();
    if !http.method.has_body() {
        let query = form_pairs(&rest, &names);
        if !query.is_empty() {
            url.push('?');
            url.push_str(&query);
        }
    } else if http.encoding == Encoding::Form {
        headers.push((
            "Content-Type".into(),
            "application/x-www-form-urlencoded".into(),
        ));
        body = form_pairs(&rest, &names).into_bytes();
    } else {
        headers.push(("Content-Type".into(), "application/json".into()));
        let payload = match (&http.body_field, value.as_record()) {
            (Some(f), Some(r)) => r.get(Name::new(f)),
            (None, Some(_)) => Value::record(rest),
            _ => value.clone(),
        };
        body = renamed(&payload, &names).canonical();
    }
    Ok(Request {
        method: http.method,
        url,
        headers,
        body,
    })
}

/// A scalar as the text a path or a form carries.
fn scalar_text(v: &Value) -> Option<String> {
    match v.to_json() {
        Json::String(s) => Some(s),
        Json::Number(n) => Some(n.to_string()),
        Json::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// `a=1&b[c]=2&d[0]=x`: absent fields are left out, `none` is an empty
/// value.
fn form_pairs(fields: &[(Name, Value)], names: &dyn Fn(&str) -> String) -> String {
    let mut out = form_urlencoded::Serializer::new(String::new());
    for (n, v) in fields {
        flatten(&names(n.as_str()), v, names, &mut |k, v| {
            out.append_pair(k, v);
        });
    }
    out.finish()
}

fn flatten(
    prefix: &str,
    v: &Value,
    names: &dyn Fn(&str) -> String,
    put: &mut dyn FnMut(&str, &str),
) {
    match v {
        Value::Record(r) => {
            for (n, inner) in r.fields() {
                flatten(
                    &format!("{prefix}[{}]", names(n.as_str())),
                    inner,
                    names,
                    put,
                );
            }
        }
        Value::List(items) => {
            for (i, inner) in items.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), inner, names, put);
            }
        }
        Value::None | Value::Unit => put(prefix, ""),
        other => put(prefix, &scalar_text(other).unwrap_or_default()),
    }
}

/// A value with every record field under its wire name.
fn renamed(v: &Value, names: &dyn Fn(&str) -> String) -> Value {
    match v {
        Value::Record(r) => Value::record(
            r.fields()
                .iter()
                .map(|(n, inner)| (Name::new(&names(n.as_str())), renamed(inner, names)))
                .collect(),
        ),
        Value::List(items) => Value::List(items.iter().map(|i| renamed(i, names)).collect()),
        other => other.clone(),
    }
}

/// How an operation's fields are named on the wire: by its binding, else
/// as declared.
fn wire_names(program: &Program, op: OpId) -> impl Fn(&str) -> String + '_ {
    let b = binding(program, op);
    move |n: &str| match b {
        Some((p, h)) => h.wire_name(p.case, n),
        None => n.to_string(),
    }
}

/// The body an answer is carried in: the value's canonical JSON, fields
/// under their wire names.
pub fn answer_body(program: &Program, op: OpId, v: &Value) -> Vec<u8> {
    let carried = match (answer_field(program, op), v.as_record()) {
        (Some(f), Some(r)) => r.get(Name::new(f)),
        _ => v.clone(),
    };
    renamed(&carried, &wire_names(program, op)).canonical()
}

/// `answer_field:`: the answer type's field the whole body fills.
fn answer_field(program: &Program, op: OpId) -> Option<&str> {
    binding(program, op).and_then(|(_, h)| h.answer_field.as_deref())
}

/// The status and body a failure is carried in: its code at the binding's
/// code pointer (`/code` without one), its fields beside the code.
pub fn failure_body(
    program: &Program,
    op: OpId,
    failure: FailureId,
    fields: &Value,
) -> (u16, Vec<u8>) {
    let pointer = code_pointer(program, op);
    let parent = pointer.rsplit_once('/').map_or("", |(p, _)| p);
    let mut body = Json::Object(serde_json::Map::new());
    if let Value::Record(r) = renamed(fields, &wire_names(program, op)) {
        for (name, v) in r.fields() {
            put_at(&mut body, &format!("{parent}/{name}"), v.to_json());
        }
    }
    let code = Json::String(program.failure(failure).code.clone());
    put_at(&mut body, &pointer, code);
    // Keys sorted (serde_json's map), as the canonical encoding has them.
    let bytes = serde_json::to_vec(&body).unwrap_or_default();
    (failure_status(program, op, failure), bytes)
}

/// Sets `value` at a JSON pointer in `body`, making objects on the way
/// and a list where the next step is an index (`/details/0/issue`). An
/// index past the end of a list is written only as its next item.
pub fn put_at(body: &mut Json, pointer: &str, value: Json) {
    let steps: Vec<&str> = pointer.split('/').skip(1).collect();
    let Some((last, path)) = steps.split_last() else {
        *body = value;
        return;
    };
    let mut at = body;
    for (i, step) in path.iter().enumerate() {
        let list_next = steps.get(i + 1).is_some_and(|s| s.parse::<usize>().is_ok());
        let fresh = || match list_next {
            true => Json::Array(Vec::new()),
            false => Json::Object(serde_json::Map::new()),
        };
        let Some(next) = slot(at, step, fresh) else {
            return;
        };
        at = next;
    }
    if let Some(place) = slot(at, last, || Json::Null) {
        *place = value;
    }
}

/// The place a pointer step names in `at`, made with `fresh` when absent.
fn slot<'j>(at: &'j mut Json, step: &str, fresh: impl Fn() -> Json) -> Option<&'j mut Json> {
    match at {
        Json::Object(map) => Some(map.entry(step.to_string()).or_insert_with(fresh)),
        Json::Array(items) => {
            let i: usize = step.parse().ok()?;
            if i == items.len() {
                items.push(fresh());
            }
            items.get_mut(i)
        }
        _ => None,
    }
}

fn code_pointer(program: &Program, op: OpId) -> String {
    binding(program, op)
        .and_then(|(p, _)| p.errors.code.clone())
        .unwrap_or_else(|| "/code".into())
}

/// The status a failure is sent with: the first its binding lists, else
/// the usual one for its kind; 400 without a binding.
pub fn failure_status(program: &Program, op: OpId, failure: FailureId) -> u16 {
    let Some((_, http)) = binding(program, op) else {
        return 400;
    };
    let listed = http
        .failures
        .iter()
        .find(|(f, _)| *f == failure)
        .and_then(|(_, s)| s.first().copied());
    listed.unwrap_or(match program.failure(failure).kind {
        FailureKind::NotFound => 404,
        FailureKind::Conflict => 409,
        FailureKind::Rejected => 402,
        FailureKind::RateLimited => 429,
        _ => 400,
    })
}

/// An answer's body read as the operation's answer type.
pub fn decode_answer(program: &Program, op: OpId, body: &[u8]) -> Result<Value, String> {
    let ty = &program.op(op).answer;
    if matches!(
        ty,
        jadpo_compiler::ir::Ty::Prim(jadpo_compiler::ir::Prim::Unit)
    ) {
        return Ok(Value::Unit);
    }
    let mut json: Json =
        serde_json::from_slice(body).map_err(|e| format!("the body is not JSON: {e}"))?;
    let names = wire_names(program, op);
    if let Some(f) = answer_field(program, op) {
        json = serde_json::json!({ names(f): json });
    }
    decode_named(program.type_table(), ty, &json, &names).map_err(|e| e.0)
}

/// The error body's code and type, by the binding's pointers.
pub fn error_fields(program: &Program, op: OpId, body: &[u8]) -> (Option<String>, Option<String>) {
    let Ok(json) = serde_json::from_slice::<Json>(body) else {
        return (None, None);
    };
    let text = |p: &str| json.pointer(p).and_then(code_text);
    let code = text(&code_pointer(program, op));
    let error_type = binding(program, op)
        .and_then(|(p, _)| p.errors.error_type.clone())
        .map_or_else(|| text("/type"), |p| text(&p));
    (code, error_type)
}

/// An error code as text: providers write them as strings or numbers
/// (Twilio's `21211`, Postmark's `406`).
fn code_text(v: &Json) -> Option<String> {
    match v {
        Json::String(s) => Some(s.clone()),
        Json::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A failure read from its body: the operation's failure with that code,
/// its fields from the object that holds the code.
pub fn decode_failure(program: &Program, op: OpId, body: &[u8]) -> Result<Answer, String> {
    let json: Json =
        serde_json::from_slice(body).map_err(|e| format!("the body is not JSON: {e}"))?;
    let pointer = code_pointer(program, op);
    let code = json
        .pointer(&pointer)
        .and_then(code_text)
        .ok_or(format!("a failure's body without a code at {pointer}"))?;
    let code = code.as_str();
    let o = program.op(op);
    let failure = o
        .failures
        .iter()
        .copied()
        .find(|f| program.failure(*f).code == code)
        .ok_or(format!("`{}` no longer fails with `{code}`", o.qualified))?;
    let parent = pointer.rsplit_once('/').map_or("", |(p, _)| p);
    let holder = json.pointer(parent).unwrap_or(&json);
    let names = wire_names(program, op);
    let mut out = Vec::new();
    for d in &program.failure(failure).fields {
        if let Some(v) = holder.get(names(d.name.as_str())) {
            let value = decode_named(program.type_table(), &d.ty, v, &names).map_err(|e| e.0)?;
            out.push((d.name, value));
        }
    }
    let fields = if out.is_empty() {
        Value::Unit
    } else {
        Value::record(out)
    };
    Ok(Answer::Failed { failure, fields })
}

/// What an HTTP answer means (section 15's order, the first match wins);
/// transport errors (unavailable, lost) are the sender's to tell.
pub fn classify(program: &Program, op: OpId, status: u16, body: &[u8]) -> Answer {
    let (code, error_type) = error_fields(program, op, body);
    let o = program.op(op);
    let idem = program.package(o.package).idempotency.as_ref();
    let matches = |m: &Option<jadpo_compiler::manifest::AnswerMatch>| {
        m.as_ref()
            .is_some_and(|m| m.matches(status, code.as_deref(), error_type.as_deref()))
    };
    if o.keyed && idem.is_some_and(|i| matches(&i.in_use)) {
        return Answer::InUse;
    }
    if o.keyed && idem.is_some_and(|i| matches(&i.mismatch)) {
        return Answer::Mismatch;
    }
    if status == 429 || rate_limited_otherwise(program, op, status, code.as_deref()) {
        return Answer::RateLimited;
    }
    if let Some(code) = &code {
        if let Some(f) = failure_for(program, op, status, code) {
            return match decode_failure(program, op, body) {
                Ok(answer) => answer,
                Err(_) => Answer::Failed {
                    failure: f,
                    fields: Value::Unit,
                },
            };
        }
    }
    match status {
        200..=299 => match decode_answer(program, op, body) {
            Ok(v) => Answer::Done(v),
            Err(why) => Answer::Misconfigured(format!(
                "answered {status} with a body that is not a `{}`: {why}",
                program.type_name(&o.answer)
            )),
        },
        500..=599 => Answer::ServerError,
        _ => Answer::Misconfigured(misconfigured_text(
            status,
            code.as_deref(),
            error_type.as_deref(),
        )),
    }
}

/// Whether the binding says an answer of `status` with error `code` is a
/// rate limit though it is not a 429 (`provider.http.rate_limited`).
fn rate_limited_otherwise(program: &Program, op: OpId, status: u16, code: Option<&str>) -> bool {
    let package = program.package(program.op(op).package);
    package
        .http
        .as_ref()
        .and_then(|h| h.rate_limited.as_ref())
        .is_some_and(|when| when.matches(status, code))
}

/// The operation's failure with this code, when the status is one it is
/// recognised under (its listed statuses, else any 4xx).
fn failure_for(program: &Program, op: OpId, status: u16, code: &str) -> Option<FailureId> {
    let o = program.op(op);
    let listed = o
        .http
        .as_ref()
        .map(|h| h.failures.as_slice())
        .unwrap_or_default();
    o.failures.iter().copied().find(|f| {
        program.failure(*f).code == code
            && match listed.iter().find(|(lf, _)| lf == f) {
                Some((_, statuses)) => statuses.contains(&status),
                None => (400..500).contains(&status),
            }
    })
}

pub fn misconfigured_text(status: u16, code: Option<&str>, error_type: Option<&str>) -> String {
    let mut text = format!("the provider answered {status}");
    if let Some(c) = code {
        text.push_str(&format!(" with code `{c}`"));
    }
    if let Some(t) = error_type {
        text.push_str(&format!(" and type `{t}`"));
    }
    text.push_str(", which the operation does not declare: misconfigured");
    text
}

/// How long a 429 asks to wait, from the binding's `retry_after` header
/// (seconds, capped at an hour).
pub fn retry_after_ms(
    provider: &HttpProvider,
    header: impl Fn(&str) -> Option<String>,
) -> Option<u64> {
    let name = provider.retry_after.as_deref()?;
    let secs: f64 = header(name)?.trim().parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| (secs.min(3600.0) * 1000.0) as u64)
}
