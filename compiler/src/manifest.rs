//! Data read from `jadpo.yaml` and `package.yaml`. The loader (`project`)
//! fills these from YAML with spans into the manifest file; the resolver reads
//! them. Durations are milliseconds.

use crate::span::{Span, Spanned};

/// `jadpo.yaml`
#[derive(Clone, Debug)]
pub struct AppManifest {
    pub app: Spanned<String>,
    /// `packages:` in file order.
    pub packages: Vec<Requirement>,
    /// `registry:` (a folder of published packages), when given.
    pub registry: Option<Spanned<String>>,
}

#[derive(Clone, Debug)]
pub struct Requirement {
    pub name: Spanned<String>,
    pub source: RequirementSource,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum RequirementSource {
    /// `stripe: "3"`: a semver requirement, resolved by name.
    Version(Spanned<semver::VersionReq>),
    /// `mailer: { path: vendor/mailer }`
    Path(Spanned<String>),
}

/// `package.yaml`
#[derive(Clone, Debug)]
pub struct PackageManifest {
    pub name: Spanned<String>,
    pub version: Spanned<semver::Version>,
    pub provider: Provider,
    /// Other packages this package requires (`packages:`, as in `jadpo.yaml`).
    pub packages: Vec<Requirement>,
    /// Sorted by name.
    pub operations: Vec<OperationDecl>,
}

#[derive(Clone, Debug)]
pub struct Provider {
    /// `None`: the provider takes no idempotency keys.
    pub idempotency: Option<Idempotency>,
    pub timeout_ms: u64,
    pub attempts: u32,
    /// `http:`, how the provider is called over HTTP.
    pub http: Option<Spanned<crate::http::HttpProvider>>,
    pub span: Span,
}

/// Defaults when `provider:` does not say.
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;
pub const DEFAULT_ATTEMPTS: u32 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NewKeyOn {
    None,
    Answer,
}

#[derive(Clone, Debug)]
pub struct Idempotency {
    pub header: Spanned<String>,
    pub window_ms: Spanned<u64>,
    pub replays_failures: bool,
    pub new_key_on: NewKeyOn,
    pub in_use: Option<AnswerMatch>,
    pub mismatch: Option<AnswerMatch>,
    /// `max_key_length:`, the longest key the provider takes, when it says.
    pub max_key_length: Option<Spanned<u64>>,
    pub span: Span,
}

/// The length of every step key the runtime sends: 64 hex characters
/// (`runtime/src/record.rs`, whose test pins it to this).
pub const STEP_KEY_LENGTH: u64 = 64;

/// `{ status: [409, 422], code: "704", type: idempotency_error }`: an answer
/// matches when its HTTP status is one of `status` and the error body's code
/// and type fields equal `code` and `type` where those are given.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct AnswerMatch {
    /// At least one; in the order written.
    pub status: Vec<u16>,
    pub code: Option<String>,
    #[serde(rename = "type")]
    pub error_type: Option<String>,
}

impl AnswerMatch {
    /// Does an answer with this status and body fields match?
    pub fn matches(&self, status: u16, code: Option<&str>, error_type: Option<&str>) -> bool {
        let field = |want: &Option<String>, got: Option<&str>| {
            want.as_deref().is_none_or(|w| got == Some(w))
        };
        self.status.contains(&status)
            && field(&self.code, code)
            && field(&self.error_type, error_type)
    }
}

#[derive(Clone, Debug)]
pub struct OperationDecl {
    /// `customers.create`
    pub name: Spanned<String>,
    /// Names of types declared in the package's `.jadpo` files.
    pub request: Spanned<String>,
    pub answer: Option<Spanned<String>>,
    pub changes: bool,
    pub idempotent: bool,
    /// Default true: the operation takes the provider's key.
    pub keyed: bool,
    pub failures: Vec<Spanned<String>>,
    pub already_undone: Vec<Spanned<String>>,
    pub large_output: bool,
    pub timeout_ms: Option<u64>,
    pub attempts: Option<u32>,
    /// The operation's own key window, for providers whose windows differ
    /// by endpoint.
    pub window_ms: Option<Spanned<u64>>,
    /// `check:`, what an operator checks at the provider when a send of
    /// this operation is in doubt: `whether the subscription was created`.
    pub check: Option<Spanned<String>>,
    /// `http:`, how the operation is sent.
    pub http: Option<HttpOperationDecl>,
    pub span: Span,
}

/// An operation's `http:`.
#[derive(Clone, Debug)]
pub struct HttpOperationDecl {
    pub method: crate::http::Method,
    pub path: Vec<crate::http::PathPart>,
    /// The `path:` value.
    pub path_span: Span,
    pub encoding: crate::http::Encoding,
    /// `rename: { field: WireName }`
    pub rename: Vec<(Spanned<String>, String)>,
    /// `failures: { F: { status: [402] } }`: the statuses a failure's code
    /// is recognised under.
    pub failures: Vec<(Spanned<String>, Vec<u16>)>,
    pub body_field: Option<Spanned<String>>,
    pub answer_field: Option<Spanned<String>>,
    pub span: Span,
}
