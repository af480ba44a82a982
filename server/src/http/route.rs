//! One request to a route, from matching to the answer.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::HeaderMap;
use jadpo_compiler::ir::{Prim, Ty, Types};
use jadpo_runtime::eval::Failed;
use jadpo_runtime::store::{
    KeyClaim, KeyRequest, NewDelivery, Source, StoredResponse, ROUTE_QUEUE,
};
use jadpo_runtime::value::Value;
use jadpo_runtime::End;
use serde_json::Value as Json;

use super::answer::{self, Answer};
use super::{decode, Http, MAX_BODY};
use crate::build::{Build, RouteDef, Segment};
use crate::engine::run::{self, Answers};
use crate::store::clock::now;

/// A request that passed every check before the claim.
struct Checked {
    route: RouteDef,
    build: &'static Build,
    principal: String,
    key: Option<String>,
    values: Vec<Value>,
}

pub async fn answer(http: Arc<Http>, request: Request) -> Answer {
    let started = std::time::Instant::now();
    let checked = match check(&http, request).await {
        Ok(c) => c,
        Err(a) => return a,
    };
    let engine = http.engine.clone();
    let label = checked.route.label.clone();
    let joined = tokio::task::spawn_blocking(move || run_route(&http, checked)).await;
    let answer = match joined {
        Ok(a) => a,
        Err(_) => {
            engine.listing.note("a route's run stopped unexpectedly");
            Answer::problem(
                500,
                "internal_fault",
                "The server failed to run the request",
            )
        }
    };
    let replayed = answer
        .headers
        .iter()
        .any(|(k, _)| k == "idempotent-replayed");
    let seconds = started.elapsed().as_secs_f64();
    engine
        .metrics
        .route_answered(&label, answer.status, seconds, replayed);
    answer
}

async fn check(http: &Http, request: Request) -> Result<Checked, Answer> {
    let build = http.engine.build();
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().to_string();
    let method = parts.method.as_str().to_ascii_uppercase();
    let (route, raw_values) = find(build, &method, &path)?;
    let types = build.program.type_table();
    let path_values = match &route.path {
        Some(ty) => Some(path_value(types, ty, &raw_values)?),
        None => None,
    };
    let principal = if route.auth_required {
        let header = parts
            .headers
            .get("authorization")
            .and_then(|h| h.to_str().ok());
        let secs = (now().0 / 1_000_000_000) as i64;
        http.auth.principal(header, secs).map_err(|why| {
            Answer::problem(401, "unauthorized", why).with_header("www-authenticate", "Bearer")
        })?
    } else {
        "-".to_string()
    };
    let input = match &route.input {
        Some(ty) => Some(read_body(&parts.headers, body, types, ty).await?),
        None => None,
    };
    let key = idempotency_key(&parts.headers, route.key_required)?;
    let values: Vec<Value> = input.into_iter().chain(path_values).collect();
    Ok(Checked {
        route,
        build,
        principal,
        key,
        values,
    })
}

/// A path's values by name.
type PathValues = Vec<(String, String)>;

/// The route answering `method path`, with the path's values.
fn find(build: &Build, method: &str, path: &str) -> Result<(RouteDef, PathValues), Answer> {
    let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let mut matched: Vec<(&RouteDef, PathValues, usize)> = Vec::new();
    for r in &build.routes {
        if r.segments.len() != parts.len() {
            continue;
        }
        let mut values = Vec::new();
        let mut literals = 0;
        let fits = r.segments.iter().zip(&parts).all(|(s, p)| match s {
            Segment::Literal(l) => {
                literals += 1;
                l == p
            }
            Segment::Value(name) => {
                values.push((name.clone(), percent_decode(p)));
                true
            }
        });
        if fits {
            matched.push((r, values, literals));
        }
    }
    // A literal segment wins over a value: `/subscriptions/requests`
    // before `/subscriptions/{id}`.
    matched.sort_by_key(|m| std::cmp::Reverse(m.2));
    if let Some((r, values, _)) = matched.iter().find(|(r, _, _)| r.method == method) {
        return Ok(((*r).clone(), values.clone()));
    }
    if matched.is_empty() {
        return Err(Answer::problem(
            404,
            "not_found",
            "No route answers this path",
        ));
    }
    let mut allow: Vec<&str> = matched.iter().map(|(r, _, _)| r.method.as_str()).collect();
    allow.sort_unstable();
    allow.dedup();
    let allow = allow.join(", ");
    Err(Answer::problem(
        405,
        "method_not_allowed",
        &format!("This path answers {allow}"),
    )
    .with_header("allow", &allow))
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes.get(i).copied().unwrap_or(0);
        if b == b'%' {
            let hex = text
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            if let Some(v) = hex {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The path's values as the route's `path:` record, each by its type.
fn path_value(types: Types<'_>, ty: &Ty, raw: &[(String, String)]) -> Result<Value, Answer> {
    let fields = crate::build::record_fields(types, ty).unwrap_or_default();
    let mut object = serde_json::Map::new();
    for (name, text) in raw {
        let field = fields.iter().find(|f| f.name.as_str() == name);
        let json = match field.map(|f| f.ty.unbounded().clone()) {
            Some(Ty::Prim(Prim::Int | Prim::Duration)) => text
                .parse::<i64>()
                .map(Json::from)
                .unwrap_or(Json::String(text.clone())),
            Some(Ty::Prim(Prim::Bool)) => match text.as_str() {
                "true" => Json::Bool(true),
                "false" => Json::Bool(false),
                _ => Json::String(text.clone()),
            },
            _ => Json::String(text.clone()),
        };
        object.insert(name.clone(), json);
    }
    decode::strict(types, ty, &Json::Object(object)).map_err(|found| {
        let errors: Vec<Json> = found
            .iter()
            .map(|m| serde_json::json!({ "pointer": format!("/path{}", m.pointer), "reason": m.reason }))
            .collect();
        Answer::problem_with(
            400,
            "invalid_path",
            "A value of the request's path is not of its type",
            serde_json::json!({ "errors": errors }),
        )
    })
}

async fn read_body(
    headers: &HeaderMap,
    body: axum::body::Body,
    types: Types<'_>,
    ty: &Ty,
) -> Result<Value, Answer> {
    let media = headers
        .get("content-type")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    let essence = media.split(';').next().unwrap_or("").trim();
    if !essence.eq_ignore_ascii_case("application/json") {
        return Err(Answer::problem(
            415,
            "unsupported_media_type",
            "The body must be `application/json`",
        ));
    }
    let too_large = || {
        Answer::problem(
            413,
            "body_too_large",
            &format!("The body is larger than {MAX_BODY} bytes"),
        )
    };
    let declared = headers
        .get("content-length")
        .and_then(|h| h.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY as u64) {
        return Err(too_large());
    }
    let bytes = axum::body::to_bytes(body, MAX_BODY)
        .await
        .map_err(|_| too_large())?;
    let json: Json = serde_json::from_slice(&bytes).map_err(|e| {
        Answer::problem_with(
            400,
            "malformed_json",
            "The body is not JSON",
            serde_json::json!({ "detail": e.to_string() }),
        )
    })?;
    decode::strict(types, ty, &json).map_err(|found| answer::mistakes(&found))
}

/// The `Idempotency-Key` header: required, honoured when sent, 1 to 255
/// visible ASCII characters (a token or a quoted string).
fn idempotency_key(headers: &HeaderMap, required: bool) -> Result<Option<String>, Answer> {
    let Some(raw) = headers.get("idempotency-key") else {
        if required {
            return Err(Answer::problem(
                400,
                "idempotency_key_missing",
                "This route needs an `Idempotency-Key` header",
            ));
        }
        return Ok(None);
    };
    let text = raw.to_str().unwrap_or("");
    let inner = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .map(|t| (t, true))
        .unwrap_or((text, false));
    let visible = |c: char| c.is_ascii_graphic() || (inner.1 && c == ' ');
    let ok = !inner.0.is_empty() && text.len() <= 255 && inner.0.chars().all(visible);
    if !ok {
        return Err(Answer::problem(
            400,
            "idempotency_key_invalid",
            "An `Idempotency-Key` is 1 to 255 visible ASCII characters",
        ));
    }
    Ok(Some(inner.0.to_string()))
}

/// Claims the key and runs the route's attempt (on the blocking pool).
fn run_route(http: &Http, c: Checked) -> Answer {
    let engine = &http.engine;
    let canonical = Value::List(c.values.clone().into()).canonical();
    let fingerprint = *blake3::hash(&canonical).as_bytes();
    let id = format!("r_{}", jadpo_runtime::delivery::base32(random_bits()));
    let action = c.build.program.action(c.route.action).qualified.clone();
    let new = NewDelivery {
        id: id.clone(),
        source: Source::Route {
            route: c.route.label.clone(),
            principal: c.principal.clone(),
            key: c.key.clone().unwrap_or_default(),
        },
        action,
        subscriber: None,
        queue: ROUTE_QUEUE.to_string(),
        priority: 0,
        tags: Vec::new(),
        max_attempts: 25,
        run_at: now(),
        args: canonical,
        build_id: c.build.plan.build_id.clone(),
        unique: None,
    };
    let lease_ms = engine.settings.lease_ms;
    let Some(key) = c.key.clone() else {
        // No key: the run is not claimed and its answer is not kept.
        if let Err(e) = engine.store.enqueue(std::slice::from_ref(&new), now()) {
            return unavailable(&e.to_string());
        }
        return match engine.store.take(&id, lease_ms, now()) {
            Ok(Some(lease)) => run_claimed(http, &c, &id, lease),
            Ok(None) => unavailable("the run's delivery was not stored"),
            Err(e) => unavailable(&e.to_string()),
        };
    };
    let claim = engine.store.claim_key(&KeyRequest {
        route: c.route.label.clone(),
        principal: c.principal.clone(),
        key,
        fingerprint,
        delivery: new,
        lease_ms,
        now: now(),
    });
    match claim {
        Ok(KeyClaim::New { lease }) => run_claimed(http, &c, &id, lease),
        Ok(KeyClaim::TakenOver { delivery, lease }) => run_claimed(http, &c, &delivery, lease),
        Ok(KeyClaim::Replay(stored)) => {
            let hint = blake3::hash(place(&c).as_bytes()).to_hex();
            engine.listing.note(&format!(
                "{} replayed the stored answer ({})  key {}…",
                c.route.label,
                stored.status,
                hint.get(..6).unwrap_or("")
            ));
            replay(http, &c, &stored)
        }
        Ok(KeyClaim::InUse) => Answer::problem(
            409,
            "idempotency_key_in_use",
            "A request with this key is running",
        )
        .with_header("retry-after", "1"),
        Ok(KeyClaim::Reused) => Answer::problem(
            422,
            "idempotency_key_reused",
            "This key was used with another request",
        ),
        Ok(KeyClaim::Ended { delivery, state }) => {
            answer::needs_operator(&delivery, state.as_str())
        }
        Err(e) => unavailable(&e.to_string()),
    }
}

fn unavailable(why: &str) -> Answer {
    Answer::problem_with(
        503,
        "unavailable",
        "The server's store cannot take the request now",
        serde_json::json!({ "detail": why }),
    )
    .with_header("retry-after", "1")
}

/// The answers a route stores: kept in plain text for this request.
struct RouteAnswers<'h> {
    http: &'h Http,
    /// The claim the answer is sealed for.
    place: String,
    keyed: bool,
    program: &'static jadpo_compiler::ir::Program,
    plain: Option<Answer>,
}

impl RouteAnswers<'_> {
    fn seal(&self, a: &Answer) -> StoredResponse {
        a.stored(|body| {
            let sealed = self.http.sealer.seal(&self.place, u32::MAX, body);
            let mut out = sealed.nonce.to_vec();
            out.extend_from_slice(&sealed.ciphertext);
            out
        })
    }
}

impl Answers for RouteAnswers<'_> {
    fn committed(&mut self, value: &Value, events: &[String]) -> StoredResponse {
        let a = answer::output(value, events);
        let stored = self.seal(&a);
        self.plain = Some(a);
        stored
    }

    fn key_hint(&self) -> Option<String> {
        if !self.keyed {
            return None;
        }
        let hash = blake3::hash(self.place.as_bytes()).to_hex();
        Some(hash.get(..6).unwrap_or("").to_string())
    }

    fn status(&self) -> Option<u16> {
        self.plain.as_ref().map(|a| a.status)
    }

    fn ended(&mut self, end: &End) -> Option<StoredResponse> {
        let End::Failed(f) = end else { return None };
        let a = answer::failed(
            self.program,
            &Failed {
                failure: f.failure,
                fields: f.fields.clone(),
            },
        );
        let stored = self.seal(&a);
        self.plain = Some(a);
        Some(stored)
    }
}

fn run_claimed(
    http: &Http,
    c: &Checked,
    delivery: &str,
    lease: jadpo_runtime::store::Lease,
) -> Answer {
    let engine = &http.engine;
    let row = match engine.store.delivery(delivery) {
        Ok(Some(row)) => row,
        Ok(None) => return unavailable("the run's delivery is gone"),
        Err(e) => return unavailable(&e.to_string()),
    };
    let deadline = c
        .route
        .deadline_ms
        .map(|ms| std::time::Instant::now() + std::time::Duration::from_millis(ms));
    let mut answers = RouteAnswers {
        http,
        place: place(c),
        keyed: c.key.is_some(),
        program: c.build.program,
        plain: None,
    };
    let crash = crate::crash::point_for(&row.action);
    let ran = run::attempt(engine, &row, lease, Some(&mut answers), deadline, crash);
    if let Some(a) = answers.plain.take() {
        return a;
    }
    match ran.state {
        Some(jadpo_runtime::store::DeliveryState::Retryable) | None => {
            let secs = ran
                .retry_at
                .map(|at| ((at.0 - now().0) / 1_000_000_000).max(1))
                .unwrap_or(1);
            Answer::problem_with(
                503,
                "retry_later",
                "The run did not finish; send the request again with the same key",
                serde_json::json!({ "detail": ran.why, "delivery": delivery }),
            )
            .with_header("retry-after", &secs.to_string())
        }
        Some(state) => answer::needs_operator(delivery, state.as_str()),
    }
}

/// A stored answer, opened with the steps key.
fn replay(http: &Http, c: &Checked, stored: &StoredResponse) -> Answer {
    let at = stored.body.len().min(24);
    let (nonce, ciphertext) = stored.body.split_at(at);
    let mut n = [0u8; 24];
    if nonce.len() == 24 {
        n.copy_from_slice(nonce);
    }
    let sealed = jadpo_runtime::record::Sealed {
        nonce: n,
        ciphertext: ciphertext.to_vec(),
    };
    match http.sealer.open(&place(c), u32::MAX, &sealed) {
        Some(body) => Answer {
            status: stored.status,
            headers: stored.headers.clone(),
            body,
        }
        .with_header("idempotent-replayed", "true"),
        None => Answer::problem(
            500,
            "stored_answer_unreadable",
            "The stored answer cannot be opened with this server's steps key",
        ),
    }
}

/// What a stored answer is sealed for: its claim (route, principal, key).
fn place(c: &Checked) -> String {
    format!(
        "{}\n{}\n{}",
        c.route.label,
        c.principal,
        c.key.as_deref().unwrap_or("")
    )
}

/// 128 random bits: a delivery id that never repeats.
fn random_bits() -> u128 {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // No system randomness: time and a counter still never repeat in
        // one process.
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let mut h = blake3::Hasher::new();
        h.update(&now().0.to_le_bytes());
        h.update(&n.to_le_bytes());
        h.update(&std::process::id().to_le_bytes());
        bytes.copy_from_slice(h.finalize().as_bytes().get(..16).unwrap_or(&[0; 16]));
    }
    u128::from_le_bytes(bytes)
}
