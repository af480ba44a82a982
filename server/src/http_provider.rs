//! Real provider calls over HTTP (design `server.md` section 15): each
//! send builds its request from the package's binding (`jadpo_runtime::wire`),
//! sends it with reqwest on the attempt's own thread, reads at most the
//! recorded-answer limit of the body, and classifies what came back. A
//! connection that fails before the request is written is unavailable; a
//! timeout or reset after it is lost (the provider may have acted).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use jadpo_compiler::http::{Auth, HttpProvider, Method};
use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::{PkgId, Program};
use jadpo_runtime::provider::{Answer, Call, Provider, Wire};
use jadpo_runtime::value::Value;
use jadpo_runtime::wire::{self, Settings};

use crate::engine::Providers;

/// The most of a body read: one byte past the recorded-answer limit, so an
/// answer over it is seen as over it.
const MAX_BODY: u64 = 1_048_576 + 1;
/// The longest a 429's `Retry-After` is waited for inside an attempt;
/// longer waits end the attempt rate limited.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(2);

/// Sends every operation with a binding over HTTP; an operation without
/// one goes to `unbound` (a fixture's fakes in `jadpo dev`), or faults.
pub struct HttpProviders {
    client: OnceLock<Result<reqwest::blocking::Client, String>>,
    config: BTreeMap<Name, Value>,
    /// OAuth2 tokens by package, with when they stop being used.
    tokens: Mutex<BTreeMap<PkgId, (String, Instant)>>,
    unbound: Option<Arc<dyn Providers>>,
    /// Replaces every binding's base URL (the fake provider server).
    base_url: Option<String>,
    /// The fake provider server answers: a setting the app leaves unset
    /// is sent as `fake-<name>`.
    faked: bool,
}

impl HttpProviders {
    pub fn new(config: BTreeMap<Name, Value>) -> HttpProviders {
        HttpProviders {
            client: OnceLock::new(),
            config,
            tokens: Mutex::new(BTreeMap::new()),
            unbound: None,
            base_url: None,
            faked: false,
        }
    }

    /// Operations without a binding go to these providers.
    pub fn with_unbound(mut self, unbound: Arc<dyn Providers>) -> HttpProviders {
        self.unbound = Some(unbound);
        self
    }

    /// Every package is sent to this base URL instead of its own.
    pub fn with_base_url(mut self, url: String) -> HttpProviders {
        self.base_url = Some(url);
        self
    }

    /// Every package is sent to the fake provider server at `url`, with
    /// stand-ins for the settings the app leaves unset.
    pub fn with_fake_server(mut self, url: String) -> HttpProviders {
        self.base_url = Some(url);
        self.faked = true;
        self
    }

    /// The client, made on first use on an attempt's thread (reqwest's
    /// blocking client runs its own runtime, which must not be made or
    /// dropped inside the server's).
    fn client(&self) -> Result<&reqwest::blocking::Client, String> {
        self.client
            .get_or_init(|| {
                let _ = rustls::crypto::ring::default_provider().install_default();
                reqwest::blocking::Client::builder()
                    .user_agent(concat!("jadpo/", env!("CARGO_PKG_VERSION")))
                    .redirect(reqwest::redirect::Policy::none())
                    .build()
                    .map_err(|e| format!("the HTTP client could not start: {e}"))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// A package's settings as the app gave them, from its config.
    fn settings(&self, program: &Program, p: PkgId) -> Settings {
        let mut out = Settings::new();
        let given = program.app.providers.iter().find(|s| s.package == p);
        for s in given.iter().flat_map(|g| g.given.iter()) {
            if let Some(v) = self.config.get(&s.config) {
                out.insert(s.name.clone(), v.as_text());
            }
        }
        if let Some(url) = &self.base_url {
            out.insert(jadpo_compiler::http::BASE_URL.into(), url.clone());
        }
        let binding = program.package(p).http.as_ref();
        for s in binding
            .iter()
            .flat_map(|b| b.settings.iter())
            .filter(|_| self.faked)
        {
            out.entry(s.name.clone())
                .or_insert_with(|| format!("fake-{}", s.name));
        }
        out
    }
}

impl Providers for HttpProviders {
    fn provider<'a>(&'a self, program: &'static Program) -> Box<dyn Provider + 'a> {
        Box::new(Sender {
            shared: self,
            program,
            unbound: self.unbound.as_ref().map(|u| u.provider(program)),
            wire: None,
            via_unbound: false,
            retry_after: None,
        })
    }
}

struct Sender<'a> {
    shared: &'a HttpProviders,
    program: &'static Program,
    unbound: Option<Box<dyn Provider + 'a>>,
    wire: Option<Wire>,
    /// The last send went to the unbound providers.
    via_unbound: bool,
    /// The longest Retry-After of this attempt's 429s.
    retry_after: Option<u64>,
}

impl Provider for Sender<'_> {
    fn send(&mut self, call: &Call<'_>) -> Answer {
        self.wire = None;
        self.via_unbound = wire::binding(self.program, call.op).is_none();
        if self.via_unbound {
            return match &mut self.unbound {
                Some(p) => p.send(call),
                None => Answer::Misconfigured(format!(
                    "`{}` has no HTTP binding in its package, so it can only be faked",
                    call.operation
                )),
            };
        }
        // An answer that cut the send short is as much the answer.
        self.send_http(call).unwrap_or_else(|answer| answer)
    }

    fn retry_after_ms(&self) -> Option<u64> {
        self.retry_after
    }

    fn wire(&self) -> Option<Wire> {
        if self.via_unbound {
            return self.unbound.as_ref().and_then(|p| p.wire());
        }
        self.wire.clone()
    }
}

impl Sender<'_> {
    fn send_http(&mut self, call: &Call<'_>) -> Result<Answer, Answer> {
        let program = self.program;
        let op = program.op(call.op);
        let binding = program
            .package(op.package)
            .http
            .as_ref()
            .ok_or(Answer::Unavailable)?;
        let settings = self.shared.settings(program, op.package);
        let request = wire::request(program, call.op, call.request, &settings, call.key)
            .map_err(|why| Answer::Misconfigured(format!("the request cannot be built: {why}")))?;
        let client = self.shared.client().map_err(Answer::Misconfigured)?;
        let token = match &binding.auth {
            Some(Auth::OAuth2 { .. }) => Some(self.token(client, op.package, binding, &settings)?),
            _ => None,
        };
        let auth =
            auth_header(binding, &settings, token.as_deref()).map_err(Answer::Misconfigured)?;
        let mut builder = client
            .request(method(request.method), &request.url)
            .timeout(Duration::from_millis(op.timeout_ms.max(1)));
        for (name, value) in request.headers.iter().chain(auth.iter()) {
            builder = builder.header(name, value);
        }
        if request.method.has_body() {
            builder = builder.body(request.body);
        }
        let response = builder.send().map_err(|e| transport(&e))?;
        if self.shared.faked
            && response
                .headers()
                .contains_key(crate::fake_server::UNAVAILABLE)
        {
            return Ok(Answer::Unavailable);
        }
        let status = response.status().as_u16();
        let retry = wire::retry_after_ms(binding, |h| {
            response
                .headers()
                .get(h)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        });
        let body = read_body(response).map_err(|_| Answer::Lost)?;
        let answer = wire::classify(program, call.op, status, &body);
        if answer == Answer::RateLimited {
            if let Some(ms) = retry {
                self.retry_after = Some(self.retry_after.unwrap_or(0).max(ms));
            }
            if let Some(ms) = retry.filter(|ms| Duration::from_millis(*ms) <= MAX_RETRY_WAIT) {
                std::thread::sleep(Duration::from_millis(ms));
            }
        }
        self.wire = Some(Wire { status, body });
        Ok(answer)
    }

    /// An OAuth2 client-credentials token, fetched once and kept until a
    /// minute before it expires.
    fn token(
        &self,
        client: &reqwest::blocking::Client,
        p: PkgId,
        binding: &HttpProvider,
        settings: &Settings,
    ) -> Result<String, Answer> {
        let now = Instant::now();
        if let Ok(tokens) = self.shared.tokens.lock() {
            if let Some((t, until)) = tokens.get(&p) {
                if *until > now {
                    return Ok(t.clone());
                }
            }
        }
        let Some(Auth::OAuth2 {
            token_url,
            client_id,
            client_secret,
        }) = &binding.auth
        else {
            return Err(Answer::Unavailable);
        };
        let get = |n: &str| settings.get(n).cloned().unwrap_or_default();
        let absolute = token_url.starts_with("https://") || token_url.starts_with("http://");
        let url = if absolute && !self.shared.faked {
            token_url.clone()
        } else if absolute {
            // The fake server stands in for every host.
            let base = settings
                .get(jadpo_compiler::http::BASE_URL)
                .map_or(binding.base_url.as_str(), String::as_str);
            format!(
                "{}{}",
                base.trim_end_matches('/'),
                wire::url_path(token_url)
            )
        } else {
            let base = settings
                .get(jadpo_compiler::http::BASE_URL)
                .map_or(binding.base_url.as_str(), String::as_str);
            format!("{}{token_url}", base.trim_end_matches('/'))
        };
        let response = client
            .post(url)
            .basic_auth(get(client_id), Some(get(client_secret)))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body("grant_type=client_credentials")
            .timeout(Duration::from_secs(10))
            .send()
            .map_err(|_| Answer::Unavailable)?;
        let status = response.status().as_u16();
        let body = read_body(response).map_err(|_| Answer::Unavailable)?;
        if !(200..300).contains(&status) {
            return Err(if status >= 500 {
                Answer::Unavailable
            } else {
                Answer::Misconfigured(format!(
                    "the OAuth2 token request was answered {status}: check the client id and secret"
                ))
            });
        }
        let json: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let token = json
            .get("access_token")
            .and_then(|t| t.as_str())
            .ok_or_else(|| {
                Answer::Misconfigured("the OAuth2 token answer has no access_token".into())
            })?
            .to_string();
        let secs = json
            .get("expires_in")
            .and_then(|e| e.as_u64())
            .unwrap_or(300);
        let until = now + Duration::from_secs(secs.saturating_sub(60).max(1));
        if let Ok(mut tokens) = self.shared.tokens.lock() {
            tokens.insert(p, (token.clone(), until));
        }
        Ok(token)
    }
}

/// The auth header for the provider, from its settings; an OAuth2 binding
/// sends the token fetched for it.
pub fn auth_header(
    provider: &HttpProvider,
    settings: &Settings,
    oauth_token: Option<&str>,
) -> Result<Option<(String, String)>, String> {
    use base64::Engine as _;
    let get = |name: &str| {
        settings
            .get(name)
            .cloned()
            .ok_or(format!("the setting `{name}` is not given"))
    };
    Ok(match &provider.auth {
        None => None,
        Some(Auth::Bearer { token }) => {
            Some(("Authorization".into(), format!("Bearer {}", get(token)?)))
        }
        Some(Auth::Basic { username, password }) => {
            let pair = format!("{}:{}", get(username)?, get(password)?);
            let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
            Some(("Authorization".into(), format!("Basic {encoded}")))
        }
        Some(Auth::Header { name, value }) => Some((name.clone(), get(value)?)),
        Some(Auth::OAuth2 { .. }) => {
            let token = oauth_token.ok_or("no OAuth2 token was fetched")?;
            Some(("Authorization".into(), format!("Bearer {token}")))
        }
    })
}

fn method(m: Method) -> reqwest::Method {
    match m {
        Method::Get => reqwest::Method::GET,
        Method::Post => reqwest::Method::POST,
        Method::Put => reqwest::Method::PUT,
        Method::Patch => reqwest::Method::PATCH,
        Method::Delete => reqwest::Method::DELETE,
    }
}

/// A send that failed in transport: before the request was written (no
/// connection) the provider did nothing; after, it may have acted.
fn transport(e: &reqwest::Error) -> Answer {
    if e.is_connect() || e.is_builder() {
        Answer::Unavailable
    } else {
        Answer::Lost
    }
}

fn read_body(response: reqwest::blocking::Response) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut body = Vec::new();
    response.take(MAX_BODY).read_to_end(&mut body)?;
    Ok(body)
}
