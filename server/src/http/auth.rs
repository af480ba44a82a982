//! `auth: required` (design section 16.2): `Authorization: Bearer TOKEN`
//! checked against `JADPO_API_KEYS` (`name:sha256hex,...`: the principal
//! is the key's name) or against the HS256 key in `JADPO_JWT_KEY` (the
//! principal is the token's `sub`; an `exp` in the past is refused).
//! Keys are compared by hash in constant time; a token is never logged.

use base64::Engine as _;
use hmac::{KeyInit, Mac};
use sha2::{Digest, Sha256};

/// How requests of `auth: required` routes are checked.
#[derive(Clone, Default)]
pub struct Auth {
    /// (name, SHA-256 of the key)
    keys: Vec<(String, [u8; 32])>,
    jwt: Option<Vec<u8>>,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.keys.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("Auth")
            .field("keys", &names)
            .field("jwt", &self.jwt.is_some())
            .finish()
    }
}

impl Auth {
    /// From `JADPO_API_KEYS` and `JADPO_JWT_KEY`; says what is wrong with
    /// either.
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Result<Auth, String> {
        let mut auth = Auth::default();
        if let Some(list) = get("JADPO_API_KEYS").filter(|l| !l.trim().is_empty()) {
            for item in list.split(',').map(str::trim).filter(|i| !i.is_empty()) {
                let Some((name, hex)) = item.split_once(':') else {
                    return Err(format!(
                        "JADPO_API_KEYS: `{}` is not `name:sha256hex`",
                        item.chars().take(20).collect::<String>()
                    ));
                };
                let hash = parse_hex(hex).ok_or_else(|| {
                    format!("JADPO_API_KEYS: the hash of `{name}` is not 64 hex digits")
                })?;
                auth.keys.push((name.to_string(), hash));
            }
        }
        if let Some(key) = get("JADPO_JWT_KEY").filter(|k| !k.is_empty()) {
            auth.jwt = Some(key.into_bytes());
        }
        Ok(auth)
    }

    pub fn configured(&self) -> bool {
        !self.keys.is_empty() || self.jwt.is_some()
    }

    /// The principal of an `Authorization` header's value, or why not.
    pub fn principal(&self, header: Option<&str>, now_secs: i64) -> Result<String, &'static str> {
        let token = header
            .and_then(|h| h.strip_prefix("Bearer "))
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or("the request has no `Authorization: Bearer` token")?;
        let hash: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut found = None;
        for (name, want) in &self.keys {
            // Every key is compared whole, so timing says nothing.
            let same = want
                .iter()
                .zip(hash.iter())
                .fold(0u8, |d, (a, b)| d | (a ^ b))
                == 0;
            if same {
                found = Some(name.clone());
            }
        }
        if let Some(name) = found {
            return Ok(name);
        }
        if let Some(key) = &self.jwt {
            return jwt_subject(key, token, now_secs);
        }
        Err("the token is not one of the server's keys")
    }
}

fn parse_hex(text: &str) -> Option<[u8; 32]> {
    let text = text.trim();
    if text.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, slot) in out.iter_mut().enumerate() {
        *slot = u8::from_str_radix(text.get(i * 2..i * 2 + 2)?, 16).ok()?;
    }
    Some(out)
}

/// An HS256 token's `sub`, when its signature holds and it has not
/// expired.
fn jwt_subject(key: &[u8], token: &str, now_secs: i64) -> Result<String, &'static str> {
    let bad = "the token is not a valid JWT signed with the server's key";
    let mut parts = token.split('.');
    let (Some(head), Some(body), Some(sig), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad);
    };
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let header: serde_json::Value =
        serde_json::from_slice(&b64.decode(head).map_err(|_| bad)?).map_err(|_| bad)?;
    if header.get("alg").and_then(|a| a.as_str()) != Some("HS256") {
        return Err("the token is not signed with HS256");
    }
    let mut mac = hmac::Hmac::<Sha256>::new_from_slice(key).map_err(|_| bad)?;
    mac.update(head.as_bytes());
    mac.update(b".");
    mac.update(body.as_bytes());
    let sig = b64.decode(sig).map_err(|_| bad)?;
    mac.verify_slice(&sig).map_err(|_| bad)?;
    let claims: serde_json::Value =
        serde_json::from_slice(&b64.decode(body).map_err(|_| bad)?).map_err(|_| bad)?;
    if let Some(exp) = claims.get("exp").and_then(|e| e.as_i64()) {
        if exp <= now_secs {
            return Err("the token has expired");
        }
    }
    claims
        .get("sub")
        .and_then(|s| s.as_str())
        .map(str::to_string)
        .ok_or("the token has no `sub`")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn an_api_key_names_its_principal() {
        let hash = hex(&Sha256::digest(b"secret-1"));
        let auth = Auth::from_env(|k| (k == "JADPO_API_KEYS").then(|| format!("alice:{hash}")))
            .expect("keys");
        assert_eq!(
            auth.principal(Some("Bearer secret-1"), 0),
            Ok("alice".into())
        );
        assert!(auth.principal(Some("Bearer secret-2"), 0).is_err());
        assert!(auth.principal(None, 0).is_err());
        assert!(Auth::from_env(|_| Some("alice".into())).is_err());
    }

    #[test]
    fn a_jwt_signed_with_the_key_names_its_subject() {
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let head = b64.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
        let body = b64.encode(br#"{"sub":"svc-1","exp":2000}"#);
        let mut mac = hmac::Hmac::<Sha256>::new_from_slice(b"k").expect("a key");
        mac.update(format!("{head}.{body}").as_bytes());
        let sig = b64.encode(mac.finalize().into_bytes());
        let token = format!("Bearer {head}.{body}.{sig}");
        let auth = Auth::from_env(|k| (k == "JADPO_JWT_KEY").then(|| "k".into())).expect("jwt");
        assert_eq!(auth.principal(Some(&token), 1000), Ok("svc-1".into()));
        assert_eq!(
            auth.principal(Some(&token), 3000),
            Err("the token has expired")
        );
        let forged = format!("Bearer {head}.{body}.{}", b64.encode(b"nope"));
        assert!(auth.principal(Some(&forged), 1000).is_err());
    }
}
