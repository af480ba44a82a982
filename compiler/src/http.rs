//! A package's HTTP binding (design `server.md` section 15): how its
//! operations are sent to the provider. The loader reads it from
//! `package.yaml` (`provider.http` and each operation's `http:`), the
//! resolver checks the path fields against the request types, and the
//! runtime's `wire` module builds requests and reads answers from it.

/// `provider.http`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpProvider {
    /// `https://api.stripe.com`; the app's `base_url` setting replaces it.
    pub base_url: String,
    pub auth: Option<Auth>,
    /// The settings the app gives in `providers:`, sorted by name;
    /// `base_url` is always allowed and never required.
    pub settings: Vec<HttpSetting>,
    /// Sent with every request, in the order written.
    pub headers: Vec<(String, String)>,
    pub case: Case,
    /// JSON pointers into an error body.
    pub errors: ErrorFields,
    /// The header that says how long to wait after a 429.
    pub retry_after: Option<String>,
    /// Answers other than a 429 that say the caller is rate limited (a
    /// provider that answers 403 for its limits).
    pub rate_limited: Option<RateLimitedWhen>,
}

/// `rate_limited: { status: [403], code_contains: "rate limit" }`: an
/// answer with one of the statuses whose error code (read at
/// `errors.code`) holds the words is rate limited, as a 429 is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RateLimitedWhen {
    pub statuses: Vec<u16>,
    pub code_contains: String,
}

impl RateLimitedWhen {
    /// Whether an answer of `status` with error code `code` is one.
    pub fn matches(&self, status: u16, code: Option<&str>) -> bool {
        self.statuses.contains(&status)
            && code.is_some_and(|c| {
                c.to_ascii_lowercase()
                    .contains(&self.code_contains.to_ascii_lowercase())
            })
    }
}

/// The setting every binding takes without declaring it.
pub const BASE_URL: &str = "base_url";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpSetting {
    pub name: String,
    pub secret: bool,
}

impl HttpProvider {
    pub fn setting(&self, name: &str) -> Option<&HttpSetting> {
        self.settings.iter().find(|s| s.name == name)
    }
}

/// How requests are authenticated; each value names a setting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Auth {
    /// `Authorization: Bearer <token>`
    Bearer { token: String },
    /// `Authorization: Basic base64(<username>:<password>)`
    Basic { username: String, password: String },
    /// `<name>: <value>`, with `name` a header and `value` a setting.
    Header { name: String, value: String },
    /// A token from `token_url` (an absolute URL or a path under the base
    /// URL) for the client's id and secret, sent as a bearer token.
    OAuth2 {
        token_url: String,
        client_id: String,
        client_secret: String,
    },
}

impl Auth {
    /// The settings it reads.
    pub fn settings(&self) -> Vec<&str> {
        match self {
            Auth::Bearer { token } => vec![token],
            Auth::Basic { username, password } => vec![username, password],
            Auth::Header { value, .. } => vec![value],
            Auth::OAuth2 {
                client_id,
                client_secret,
                ..
            } => vec![client_id, client_secret],
        }
    }
}

/// How declared field names (lower_snake_case) are written on the wire.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Case {
    #[default]
    Snake,
    Camel,
    Pascal,
}

impl Case {
    pub fn parse(text: &str) -> Option<Case> {
        Some(match text {
            "snake" => Case::Snake,
            "camel" => Case::Camel,
            "pascal" => Case::Pascal,
            _ => return None,
        })
    }

    /// `payment_method` as this case writes it.
    pub fn apply(self, name: &str) -> String {
        if self == Case::Snake {
            return name.to_string();
        }
        let mut out = String::with_capacity(name.len());
        let mut upper = self == Case::Pascal;
        for c in name.chars() {
            if c == '_' {
                upper = true;
            } else if upper {
                out.extend(c.to_uppercase());
                upper = false;
            } else {
                out.push(c);
            }
        }
        out
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErrorFields {
    /// `/error/code`
    pub code: Option<String>,
    /// `/error/type`
    pub error_type: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl Method {
    pub fn parse(text: &str) -> Option<Method> {
        Some(match text {
            "GET" => Method::Get,
            "POST" => Method::Post,
            "PUT" => Method::Put,
            "PATCH" => Method::Patch,
            "DELETE" => Method::Delete,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }

    /// GET and DELETE send their fields as a query string.
    pub fn has_body(self) -> bool {
        !matches!(self, Method::Get | Method::Delete)
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Encoding {
    #[default]
    Json,
    Form,
}

/// One piece of an operation's path template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathPart {
    Text(String),
    /// `{payment_method}`: a top-level field of the request.
    Field(String),
    /// `{$account}`: a setting.
    Setting(String),
}

/// Why a path template cannot be read.
pub fn parse_path(template: &str) -> Result<Vec<PathPart>, String> {
    if !template.starts_with('/') {
        return Err("a path starts with `/`".into());
    }
    let mut parts = Vec::new();
    let mut rest = template;
    while !rest.is_empty() {
        let Some(open) = rest.find('{') else {
            if rest.contains('}') {
                return Err("a `}` without its `{`".into());
            }
            parts.push(PathPart::Text(rest.to_string()));
            break;
        };
        let text = &rest[..open];
        if text.contains('}') {
            return Err("a `}` without its `{`".into());
        }
        if !text.is_empty() {
            parts.push(PathPart::Text(text.to_string()));
        }
        let after = &rest[open + 1..];
        let close = after.find('}').ok_or("a `{` without its `}`")?;
        let name = &after[..close];
        let (setting, bare) = match name.strip_prefix('$') {
            Some(s) => (true, s),
            None => (false, name),
        };
        if !is_snake(bare) {
            return Err(format!(
                "`{{{name}}}` names no field: write `{{field}}` or `{{$setting}}` in lower_snake_case"
            ));
        }
        parts.push(if setting {
            PathPart::Setting(bare.to_string())
        } else {
            PathPart::Field(bare.to_string())
        });
        rest = &after[close + 1..];
    }
    if template.contains(['?', '#', ' ']) {
        return Err(
            "a path holds no `?`, `#` or space; fields of a GET go in the query by themselves"
                .into(),
        );
    }
    Ok(parts)
}

fn is_snake(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_lowercase())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Whether a base URL may be used: https, or http on loopback.
pub fn base_url_problem(url: &str) -> Option<&'static str> {
    if let Some(rest) = url.strip_prefix("https://") {
        return host_problem(rest);
    }
    let Some(rest) = url.strip_prefix("http://") else {
        return Some("a base URL starts with https://");
    };
    if let Some(problem) = host_problem(rest) {
        return Some(problem);
    }
    let host = rest.split(['/', ':']).next().unwrap_or("");
    let host = if rest.starts_with('[') {
        rest.split(']').next().unwrap_or("").trim_start_matches('[')
    } else {
        host
    };
    let loopback = host == "localhost"
        || host == "::1"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|a| a.is_loopback());
    (!loopback).then_some("plain http is allowed on loopback only; use https://")
}

fn host_problem(rest: &str) -> Option<&'static str> {
    let host = rest.split('/').next().unwrap_or("");
    if host.is_empty() || host.contains(['@', ' ', '?', '#']) {
        return Some("a base URL names a host, with no user, query or fragment");
    }
    if rest.contains(['?', '#']) {
        return Some("a base URL has no query or fragment");
    }
    None
}
