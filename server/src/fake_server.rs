//! The fake provider server (design `server.md` section 25): a fixture's
//! fakes behind an HTTP server on loopback that speaks each package's
//! binding, so an app with fakes sends its calls over real HTTP. A request
//! is matched to its operation by method and path template, its key read
//! from the provider's idempotency header and its fingerprint taken over
//! the request's bytes; the fakes answer as in tests (keys kept, mismatch,
//! in use, server errors), and the answer is written as the binding
//! carries it. A scripted lost answer acts and then cuts the connection
//! after the headers. A binding's OAuth2 token path answers a token.
//! `GET /__jadpo/effects` lists the effects.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method as HttpMethod, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use jadpo_compiler::http::PathPart;
use jadpo_compiler::ir::{OpId, Program};
use jadpo_compiler::manifest::AnswerMatch;
use jadpo_runtime::provider::{Answer, Call};
use jadpo_runtime::value::{hex, Value};
use jadpo_runtime::wire;

use crate::engine::Providers;
use crate::fakes::SharedFake;

/// The header that tells the HTTP provider the fake did not act, as a
/// refused connection would.
pub const UNAVAILABLE: &str = "x-jadpo-fake";

/// A running fake provider server: its address; it serves until the
/// process ends.
pub struct FakeServer {
    pub addr: SocketAddr,
}

impl FakeServer {
    /// The base URL every binding is sent to.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

#[derive(Clone)]
struct State {
    fake: Arc<SharedFake>,
    program: &'static Program,
}

/// Serves `fake` on 127.0.0.1 (a port of the system's choosing), on a
/// thread of its own.
pub fn start(fake: Arc<SharedFake>, program: &'static Program) -> Result<FakeServer, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| format!("the fake provider server cannot listen: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("the fake provider server has no address: {e}"))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("the fake provider server cannot listen: {e}"))?;
    let state = State { fake, program };
    std::thread::Builder::new()
        .name("jadpo-fake-provider".into())
        .spawn(move || serve(listener, state))
        .map_err(|e| format!("the fake provider server cannot start: {e}"))?;
    Ok(FakeServer { addr })
}

fn serve(listener: std::net::TcpListener, state: State) {
    let Ok(rt) = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    else {
        return;
    };
    rt.block_on(async move {
        let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
            return;
        };
        let app = axum::Router::new().fallback(move |method, uri, headers, body| {
            let state = state.clone();
            async move {
                tokio::task::spawn_blocking(move || answer(&state, &method, &uri, &headers, &body))
                    .await
                    .unwrap_or_else(|_| plain(500, "the fake failed"))
            }
        });
        let _ = axum::serve(listener, app).await;
    });
}

fn answer(
    state: &State,
    method: &HttpMethod,
    uri: &Uri,
    headers: &HeaderMap,
    body: &Bytes,
) -> Response {
    let program = state.program;
    if method == HttpMethod::GET && uri.path() == "/__jadpo/effects" {
        return effects(state);
    }
    if method == HttpMethod::POST && is_token_path(program, uri.path()) {
        let token = r#"{"access_token":"fake-token","token_type":"Bearer","expires_in":3600}"#;
        return json(200, token.as_bytes().to_vec());
    }
    let Some(op) = find_op(program, method.as_str(), uri.path()) else {
        return plain(
            404,
            &format!("no operation of any binding is {method} {}", uri.path()),
        );
    };
    let o = program.op(op);
    let idem = program.package(o.package).idempotency.as_ref();
    let key = idem
        .and_then(|i| headers.get(i.header.as_str()))
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let mut h = blake3::Hasher::new();
    h.update(method.as_str().as_bytes());
    h.update(b" ");
    h.update(uri.to_string().as_bytes());
    h.update(b"\n");
    h.update(body);
    let request = Value::Unit;
    let call = Call {
        op,
        operation: &o.qualified,
        request: &request,
        fingerprint: *h.finalize().as_bytes(),
        key: key.as_deref(),
        repeat_safe: o.idempotent && !o.keyed,
        changes: o.changes,
        step: None,
    };
    let answer = state.fake.provider(program).send(&call);
    respond(program, op, &answer)
}

/// The answer as the binding carries it.
fn respond(program: &Program, op: OpId, answer: &Answer) -> Response {
    let idem = program.package(program.op(op).package).idempotency.as_ref();
    match answer {
        Answer::Done(v) => json(200, wire::answer_body(program, op, v)),
        Answer::Failed { failure, fields } => {
            let (status, body) = wire::failure_body(program, op, *failure, fields);
            json(status, body)
        }
        Answer::InUse => matched(program, op, idem.and_then(|i| i.in_use.as_ref()), 409),
        Answer::Mismatch => matched(program, op, idem.and_then(|i| i.mismatch.as_ref()), 422),
        Answer::RateLimited => plain(429, "try again later"),
        // HTTP's only "did not act" is a refused connection, which one
        // server cannot give one request; the HTTP provider reads this
        // header from the fake alone.
        Answer::Unavailable => (
            StatusCode::SERVICE_UNAVAILABLE,
            [(UNAVAILABLE, "unavailable")],
            "the fake is unavailable",
        )
            .into_response(),
        Answer::ServerError => plain(500, "the fake's server error"),
        Answer::Lost => lost(),
        Answer::Misconfigured(text) => plain(400, text),
    }
}

/// An error body the provider's `in_use` or `mismatch` facts recognise.
fn matched(program: &Program, op: OpId, m: Option<&AnswerMatch>, fallback: u16) -> Response {
    let Some(m) = m else {
        return plain(fallback, "the fake's key answer");
    };
    let binding = wire::binding(program, op).map(|(p, _)| p.errors.clone());
    let code_at = binding
        .as_ref()
        .and_then(|e| e.code.clone())
        .unwrap_or_else(|| "/code".into());
    let type_at = binding
        .as_ref()
        .and_then(|e| e.error_type.clone())
        .unwrap_or_else(|| "/type".into());
    let mut body = serde_json::json!({});
    if let Some(code) = &m.code {
        wire::put_at(&mut body, &code_at, code.as_str().into());
    }
    if let Some(t) = &m.error_type {
        wire::put_at(&mut body, &type_at, t.as_str().into());
    }
    json(
        m.status.first().copied().unwrap_or(fallback),
        body.to_string().into_bytes(),
    )
}

/// Whether `path` is a binding's OAuth2 token endpoint (a path under the
/// base URL: the fake server stands in for the base URL).
fn is_token_path(program: &Program, path: &str) -> bool {
    program.packages.iter().any(|p| {
        matches!(
            p.http.as_ref().and_then(|h| h.auth.as_ref()),
            Some(jadpo_compiler::http::Auth::OAuth2 { token_url, .. }) if wire::url_path(token_url) == path
        )
    })
}

/// The operation whose binding's method and path template match; the one
/// with the most literal text wins.
fn find_op(program: &Program, method: &str, path: &str) -> Option<OpId> {
    let mut best: Option<(usize, OpId)> = None;
    for (i, o) in program.operations.iter().enumerate() {
        let Some(h) = &o.http else { continue };
        if h.method.as_str() != method || !matches(&h.path, path) {
            continue;
        }
        let literal: usize = h
            .path
            .iter()
            .map(|p| match p {
                PathPart::Text(t) => t.len(),
                _ => 0,
            })
            .sum();
        if best.is_none_or(|(l, _)| literal > l) {
            best = Some((literal, OpId(i as u32)));
        }
    }
    best.map(|(_, op)| op)
}

/// Whether a request path fills a template: text as written, each
/// placeholder one or more characters other than `/`.
fn matches(parts: &[PathPart], path: &str) -> bool {
    let mut rest = path;
    let mut it = parts.iter().peekable();
    while let Some(part) = it.next() {
        match part {
            PathPart::Text(t) => match rest.strip_prefix(t.as_str()) {
                Some(r) => rest = r,
                None => return false,
            },
            PathPart::Field(_) | PathPart::Setting(_) => {
                let end = match it.peek() {
                    Some(PathPart::Text(next)) => match rest.find(next.as_str()) {
                        Some(at) => at,
                        None => return false,
                    },
                    _ => rest.len(),
                };
                let value = &rest[..end];
                if value.is_empty() || value.contains('/') {
                    return false;
                }
                rest = &rest[end..];
            }
        }
    }
    rest.is_empty()
}

fn effects(state: &State) -> Response {
    let list: Vec<serde_json::Value> = state
        .fake
        .effects()
        .iter()
        .map(|e| {
            serde_json::json!({
                "operation": e.operation,
                "request": hex(&e.request),
                "answer": e.answer.to_json(),
            })
        })
        .collect();
    json(200, serde_json::Value::Array(list).to_string().into_bytes())
}

fn json(status: u16, body: Vec<u8>) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
    (status, [("content-type", "application/json")], body).into_response()
}

fn plain(status: u16, text: &str) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
    (status, [("content-type", "text/plain")], text.to_string()).into_response()
}

/// Headers, then a body that breaks: the client has sent its request and
/// the answer never arrives whole.
fn lost() -> Response {
    let broken = futures_util::stream::once(async {
        Err::<Bytes, std::io::Error>(std::io::Error::other("the fake lost the answer"))
    });
    (
        StatusCode::OK,
        [("content-type", "application/json")],
        Body::from_stream(broken),
    )
        .into_response()
}
