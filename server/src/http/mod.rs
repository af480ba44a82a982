//! Routes over HTTP (design section 16), in the order the design gives:
//! match the method and path (404, 405), decode the path values (400),
//! check `auth:` (401), read the body (415, 413, 400, 422 as
//! problem+json; nothing is claimed yet, so the client can fix the
//! request and resend it under the same key), claim the Idempotency-Key
//! on (route, principal, key), run one attempt in the request on the
//! blocking pool, and answer: the output, a failure by kind, 503 for a
//! run that goes on later, 500 `needs_operator` for one an operator must
//! see. A committed or failed answer is stored with the claim, sealed
//! with the steps key, and replays byte for byte.

pub mod answer;
pub mod auth;
pub mod decode;
mod route;

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use axum::Router;
use jadpo_runtime::record::Sealer;

use crate::engine::Engine;
use answer::Answer;
pub use auth::Auth;

/// The most a request body may hold.
pub const MAX_BODY: usize = 1024 * 1024;

/// What the HTTP edge shares.
pub struct Http {
    pub engine: Arc<Engine>,
    pub auth: Auth,
    pub sealer: Sealer,
    /// `/metrics` is answered on the routes' port (`jadpo dev`).
    pub metrics_here: bool,
}

impl Http {
    pub fn new(engine: Arc<Engine>, auth: Auth, metrics_here: bool) -> Arc<Http> {
        let build = engine.build();
        let secret = jadpo_runtime::delivery::secret(build.program, &engine.config);
        Arc::new(Http {
            sealer: Sealer::rotating(&secret, build.runtime.previous_key()),
            engine,
            auth,
            metrics_here,
        })
    }
}

/// The app's routes, answered by one handler that matches them itself
/// (the routes change with each build).
pub fn router(http: Arc<Http>) -> Router {
    Router::new().fallback(handle).with_state(http)
}

async fn handle(State(http): State<Arc<Http>>, request: Request) -> Response {
    // `jadpo dev` serves its metrics beside the routes, unless a route of
    // the app answers the path.
    if request.method() == axum::http::Method::GET
        && request.uri().path() == "/metrics"
        && http.metrics_here
        && !http
            .engine
            .build()
            .routes
            .iter()
            .any(|r| r.label == "GET /metrics")
    {
        return metrics_response(http.engine.clone()).await;
    }
    let answer = route::answer(http, request).await;
    to_response(answer)
}

/// The metrics, in Prometheus's text format, the store's gauges read
/// afresh (on the blocking pool: they are store reads).
pub async fn metrics_response(engine: Arc<Engine>) -> Response {
    let text = tokio::task::spawn_blocking(move || {
        // A store that cannot be read leaves the last values; the gauge
        // thread says so.
        let _ = crate::engine::gauges::gauges(&engine, engine.settings.alert_after());
        engine.metrics.text()
    })
    .await
    .unwrap_or_default();
    Response::builder()
        .status(200)
        .header(
            "content-type",
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )
        .body(Body::from(text))
        .unwrap_or_else(|_| Response::new(Body::empty()))
}

/// A router answering `/metrics` only (`jadpo serve --metrics-listen`).
pub fn metrics_router(engine: Arc<Engine>) -> Router {
    Router::new()
        .route(
            "/metrics",
            axum::routing::get(|State(e): State<Arc<Engine>>| metrics_response(e)),
        )
        .with_state(engine)
}

fn to_response(a: Answer) -> Response {
    let mut builder = Response::builder().status(a.status);
    for (name, value) in &a.headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    builder
        .body(Body::from(a.body))
        .unwrap_or_else(|_| Response::new(Body::empty()))
}
