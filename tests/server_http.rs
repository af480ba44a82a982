//! `jadpo dev` without fakes calls its providers over HTTP (design
//! `server.md` section 15): an app whose package has a binding, its base
//! URL and API key from config, answers a route through a provider on a
//! loopback socket; the request carries the key, the auth header and the
//! JSON body, and the provider's answer is the route's.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::time::Duration;

use crate::server_support::{scratch, spawn};

const PACKAGE: &str = "package: mail
version: 1.0.0
provider:
  idempotency:
    header: Idempotency-Key
    window: 24h
  timeout: 5s
  attempts: 1
  http:
    base_url: https://api.mail.example
    auth: { scheme: bearer, token: api_key }
    settings: { api_key: { secret: true } }
    case: camel
    retry_after: Retry-After
operations:
  messages.send:
    request: Send
    answer: Sent
    changes: true
    idempotent: true
    http: { method: POST, path: /messages }
";

const TYPES: &str = "type Send = Object {
    to_address: Text
}

type Sent = Object {
    id: Text
}
";

const APP: &str = "application Notes {
    providers: { mail: { api_key: config.mail_key  base_url: config.mail_url } }
}

config NotesConfig {
    mail_key: Text { binding: \"MAIL_KEY\" secret: true }
    mail_url: Text { binding: \"MAIL_URL\" }
}

type Note = Object {
    to: Text
}

action notify(note: Note) -> Text {
    var sent = attempt mail.messages.send(mail.Send { to_address: note.to })
    return sent.id
}

route POST /notes {
    auth: none
    input: Note
    output: Text
    run: notify(input)
}
";

/// A provider on loopback that answers one request with `reply`; the
/// request it read comes back through the handle.
fn provider(reply: &'static str) -> (String, std::thread::JoinHandle<String>) {
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        reply.len()
    );
    provider_raw(head + reply)
}

/// A provider on loopback that writes `reply` (head and body) to the first
/// request.
fn provider_raw(reply: String) -> (String, std::thread::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let url = format!(
        "http://{}",
        listener
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_default()
    );
    let handle = std::thread::spawn(move || {
        let Ok((mut conn, _)) = listener.accept() else {
            return String::new();
        };
        let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = conn.read(&mut buf) {
            seen.extend_from_slice(buf.get(..n).unwrap_or_default());
            let text = String::from_utf8_lossy(&seen).to_string();
            let done = text.find("\r\n\r\n").is_some_and(|end| {
                let len = text
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length: ")
                            .and_then(|v| v.trim().parse::<usize>().ok())
                    })
                    .unwrap_or(0);
                seen.len() >= end + 4 + len
            });
            if done || n == 0 {
                break;
            }
        }
        let _ = conn.write_all(reply.as_bytes());
        String::from_utf8_lossy(&seen).to_string()
    });
    (url, handle)
}

/// `jadpo dev` (JSON lines) on the notes app, its provider at `url`.
fn dev_on(name: &str, url: &str) -> crate::server_support::Dev {
    let dir = scratch(name);
    let app = dir.join("app");
    let files = [
        (
            "jadpo.yaml",
            "app: notes\npackages: { mail: { path: packages/mail } }\n",
        ),
        ("app.jadpo", APP),
        ("packages/mail/package.yaml", PACKAGE),
        ("packages/mail/mail.jadpo", TYPES),
    ];
    for (path, text) in files {
        let at = app.join(path);
        std::fs::create_dir_all(at.parent().unwrap_or(&app)).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(at, text).unwrap_or_else(|e| panic!("{e}"));
    }
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_jadpo"));
    cmd.arg("dev")
        .arg(&app)
        .args([
            "--listen",
            "127.0.0.1:0",
            "--no-reload",
            "--format",
            "json",
            "--db",
        ])
        .arg(dir.join("dev.sqlite"))
        .env("MAIL_KEY", "sk_test_live")
        .env("MAIL_URL", url)
        .env_remove("JADPO_CRASH_AT");
    spawn(cmd).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn dev_without_fakes_calls_the_provider_over_http() {
    let (url, seen) = provider(r#"{"id":"msg_1","extra":true}"#);
    let dev = dev_on("http-provider", &url);
    let answer = dev.request("POST", "/notes", &[], r#"{"to":"ada@example.com"}"#);
    let request = seen.join().unwrap_or_default();
    dev.stop();
    assert_eq!(answer, Some((200, r#""msg_1""#.to_string())), "{request}");
    let lower = request.to_ascii_lowercase();
    assert!(lower.starts_with("post /messages http/1.1"), "{request}");
    assert!(
        lower.contains("authorization: bearer sk_test_live"),
        "{request}"
    );
    assert!(lower.contains("idempotency-key: "), "{request}");
    assert!(
        request.ends_with(r#"{"toAddress":"ada@example.com"}"#),
        "{request}"
    );
}

/// Section 23: the human listing prints the attempt's header when it
/// starts and each step as it happens (sent with its key's prefix, then
/// what came back and how long it took), then the end; a resend after a
/// crash-free attempt replays the stored answer.
#[test]
fn dev_lists_each_step_as_it_happens() {
    use crate::server_support::{BILLING, BODY, KEYS};
    let dir = scratch("live-listing");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_jadpo"));
    cmd.args([
        "dev",
        BILLING,
        "--listen",
        "127.0.0.1:0",
        "--no-reload",
        "--format",
        "human",
        "--db",
    ])
    .arg(dir.join("dev.sqlite"))
    .env("JADPO_API_KEYS", KEYS)
    .env_remove("JADPO_CRASH_AT");
    let dev = spawn(cmd).unwrap_or_else(|e| panic!("{e}"));
    let answer = dev.request(
        "POST",
        "/subscriptions",
        &[("idempotency-key", "live-1")],
        BODY,
    );
    let lines = dev
        .wait_for("POST /subscriptions → subscribe", 20)
        .unwrap_or_default();
    let _ = dev.wait_for("committed: 1 write", 20);
    let lines: Vec<String> = dev
        .wait_for("POST /subscriptions → subscribe", 1)
        .unwrap_or(lines);
    dev.stop();
    assert_eq!(answer.map(|a| a.0), Some(200));
    // The schedule's tick at start may interleave its lines.
    let shown: Vec<String> = lines
        .iter()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| l.contains("stripe.") || l.contains("subscribe r_") || l.contains("1 write"))
        .take(8)
        .collect();
    let step = |i: usize| shown.get(i).cloned().unwrap_or_default();
    assert!(
        step(0).contains("POST /subscriptions → subscribe r_"),
        "{shown:#?}"
    );
    assert!(
        step(1).starts_with("1 stripe.customers.create sent key "),
        "{shown:#?}"
    );
    assert!(
        step(2).starts_with("1 stripe.customers.create answered cus_1 ")
            && step(2).ends_with(" ms"),
        "{shown:#?}"
    );
    assert!(
        step(3).starts_with("2 stripe.payment_methods.attach sent key "),
        "{shown:#?}"
    );
    assert!(
        step(6).starts_with("3 stripe.subscriptions.create answered sub_1"),
        "{shown:#?}"
    );
    assert!(
        step(7)
            .starts_with("committed: 1 write (Subscription), 1 event (SubscriptionStarted) 200 "),
        "{shown:#?}"
    );
}

/// A 429 whose Retry-After asks for longer than an attempt waits ends the
/// attempt, and its retry starts no earlier than the provider asked (the
/// dev cap of 30 s notwithstanding).
#[test]
fn a_retry_after_sets_the_next_start() {
    let (url, _seen) = provider_raw(
        "HTTP/1.1 429 Too Many Requests\r\nretry-after: 120\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_string(),
    );
    let dev = dev_on("retry-after", &url);
    let _ = dev.request("POST", "/notes", &[], r#"{"to":"ada@example.com"}"#);
    let lines = dev.wait_for("\"kind\":\"attempt\"", 20).unwrap_or_default();
    dev.stop();
    let end = lines
        .iter()
        .find(|l| l.contains("\"kind\":\"attempt\""))
        .cloned()
        .unwrap_or_default();
    let json: serde_json::Value = serde_json::from_str(&end).unwrap_or_default();
    let text = json["end"].as_str().unwrap_or_default().to_string();
    assert!(text.starts_with("retry at "), "{end}");
    let at = text.get(9..17).unwrap_or_default();
    let secs = |t: &str| -> i64 {
        t.split(':')
            .fold(0, |acc, p| acc * 60 + p.parse::<i64>().unwrap_or(0))
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64 % 86_400)
        .unwrap_or(0);
    let wait = (secs(at) - now).rem_euclid(86_400);
    assert!((110..=130).contains(&wait), "retry in {wait} s: {end}");
}
