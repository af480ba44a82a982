//! Providers over HTTP (design `server.md` section 15): the request a
//! binding builds, byte for byte (method, URL, headers except auth, body);
//! the bodies a fake's answers and failures are carried in, read back;
//! each row of the classification; and the HTTP provider against a
//! loopback server: its auth header, a refused connection (unavailable)
//! and an answer cut after its headers (lost).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::OnceLock;

use jadpo_compiler::http::Method;
use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::{FailureId, OpId, Program};
use jadpo_compiler::load::loaders::MemLoader;
use jadpo_runtime::provider::{Answer, Call};
use jadpo_runtime::value::Value;
use jadpo_runtime::wire;
use jadpo_server::engine::Providers;
use jadpo_server::http_provider::HttpProviders;

const PACKAGE: &str = "package: mail
version: 1.0.0
provider:
  idempotency:
    header: Idempotency-Key
    window: 24h
    in_use: { status: 409, code: key_in_use }
    mismatch: { status: 422, type: idempotency_error }
  timeout: 2s
  attempts: 1
  http:
    base_url: https://api.mail.example/
    auth: { scheme: bearer, token: api_key }
    settings: { api_key: { secret: true }, account: {} }
    headers: { Mail-Version: \"2026-01\" }
    case: camel
    errors: { code: /error/code, type: /error/type }
    retry_after: Retry-After
operations:
  messages.send:
    request: SendRequest
    answer: Message
    changes: true
    idempotent: true
    failures: [Bounced, Suppressed]
    http: { method: POST, path: \"/accounts/{$account}/threads/{thread_id}/messages\", encoding: form, rename: { to_address: To }, failures: { Bounced: { status: [422] } } }
  messages.list:
    request: ListRequest
    answer: MessageList
    changes: false
    http: { method: GET, path: /messages }
  templates.put:
    request: Template
    answer: Template
    changes: true
    idempotent: true
    http: { method: PUT, path: \"/templates/{name}\" }
";

const TYPES: &str = "type Meta = Object {
    campaign_name: Text
    urgent: Bool
}

type SendRequest = Object {
    thread_id: Text
    to_address: Text
    cc: List<Text> { max_length: 5 }
    meta: Meta
    priority: Int? optional
    note: Text?
}

type Message = Object {
    id: Text
    thread_id: Text
}

type ListRequest = Object {
    page_size: Int
    after: Text? optional
}

type MessageList = Object {
    messages: List<Message> { max_length: 100 }
    has_more: Bool
}

type Template = Object {
    name: Text
    body_html: Text
}

failure Bounced {
    kind: Rejected
    code: \"bounced\"
    reason_text: Text
}

failure Suppressed {
    kind: Rejected
    code: \"suppressed\"
}
";

const APP: &str = "application Mailer {
    providers: { mail: { api_key: config.mail_key  account: config.mail_account } }
}

config MailerConfig {
    mail_key: Text { binding: \"MAIL_KEY\" secret: true }
    mail_account: Text { binding: \"MAIL_ACCOUNT\" }
}
";

fn program() -> &'static Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        let mut m = MemLoader::new();
        m.insert(
            "app/jadpo.yaml",
            "app: mailer\npackages: { mail: { path: packages/mail } }\n".as_bytes(),
        );
        m.insert("app/app.jadpo", APP.as_bytes());
        m.insert("app/packages/mail/package.yaml", PACKAGE.as_bytes());
        m.insert("app/packages/mail/mail.jadpo", TYPES.as_bytes());
        crate::support::program_in(&m)
    })
}

fn op(name: &str) -> OpId {
    let i = program()
        .operations
        .iter()
        .position(|o| o.qualified == name)
        .unwrap();
    OpId(i as u32)
}

fn failure(name: &str) -> FailureId {
    let i = program()
        .failures
        .iter()
        .position(|f| f.qualified == name)
        .unwrap();
    FailureId(i as u32)
}

fn rec(fields: &[(&str, Value)]) -> Value {
    Value::record(
        fields
            .iter()
            .map(|(n, v)| (Name::new(n), v.clone()))
            .collect(),
    )
}

fn settings() -> wire::Settings {
    BTreeMap::from([
        ("api_key".to_string(), "sk_test_1".to_string()),
        ("account".to_string(), "acc/1".to_string()),
    ])
}

fn send_request() -> Value {
    rec(&[
        ("thread_id", Value::text("t 1/2")),
        ("to_address", Value::text("ada@example.com")),
        (
            "cc",
            Value::List(vec![Value::text("a@x"), Value::text("b&c")].into()),
        ),
        (
            "meta",
            rec(&[
                ("campaign_name", Value::text("spring")),
                ("urgent", Value::Bool(true)),
            ]),
        ),
        ("priority", Value::Int(2)),
        ("note", Value::None),
    ])
}

fn header<'a>(r: &'a wire::Request, name: &str) -> Option<&'a str> {
    r.headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

#[test]
fn a_form_post_fills_its_path_and_encodes_the_rest_by_case_and_rename() {
    let r = wire::request(
        program(),
        op("mail.messages.send"),
        &send_request(),
        &settings(),
        Some("k1"),
    )
    .unwrap();
    assert_eq!(r.method, Method::Post);
    // The setting and the field are percent-encoded into the path, and the
    // field is not sent again.
    assert_eq!(
        r.url,
        "https://api.mail.example/accounts/acc%2F1/threads/t%201%2F2/messages"
    );
    assert_eq!(
        String::from_utf8(r.body.clone()).unwrap(),
        "cc%5B0%5D=a%40x&cc%5B1%5D=b%26c&meta%5BcampaignName%5D=spring&meta%5Burgent%5D=true\
         &note=&priority=2&To=ada%40example.com"
    );
    assert_eq!(
        r.headers,
        vec![
            ("Accept".to_string(), "application/json".to_string()),
            ("Mail-Version".to_string(), "2026-01".to_string()),
            ("Idempotency-Key".to_string(), "k1".to_string()),
            (
                "Content-Type".to_string(),
                "application/x-www-form-urlencoded".to_string()
            ),
        ]
    );
}

#[test]
fn a_get_sends_its_fields_as_a_query_and_leaves_absent_ones_out() {
    let req = rec(&[("page_size", Value::Int(10))]);
    let r = wire::request(program(), op("mail.messages.list"), &req, &settings(), None).unwrap();
    assert_eq!(r.method, Method::Get);
    assert_eq!(r.url, "https://api.mail.example/messages?pageSize=10");
    assert!(r.body.is_empty());
    assert_eq!(header(&r, "Idempotency-Key"), None);
}

#[test]
fn a_json_put_carries_canonical_json_under_wire_names_and_the_base_url_setting() {
    let req = rec(&[
        ("name", Value::text("welcome")),
        ("body_html", Value::text("<p>hi</p>")),
    ]);
    let mut s = settings();
    s.insert("base_url".into(), "http://127.0.0.1:9/".into());
    let r = wire::request(program(), op("mail.templates.put"), &req, &s, Some("k2")).unwrap();
    assert_eq!(r.url, "http://127.0.0.1:9/templates/welcome");
    assert_eq!(r.body, br#"{"bodyHtml":"<p>hi</p>"}"#);
    assert_eq!(header(&r, "Content-Type"), Some("application/json"));
}

#[test]
fn a_missing_path_setting_is_named() {
    let mut s = settings();
    s.remove("account");
    let why = wire::request(
        program(),
        op("mail.messages.send"),
        &send_request(),
        &s,
        None,
    )
    .unwrap_err();
    assert!(why.contains("`account`"), "{why}");
}

#[test]
fn answers_and_failures_read_back_from_the_bodies_that_carry_them() {
    let p = program();
    let send = op("mail.messages.send");
    let message = rec(&[("id", Value::text("m_1")), ("thread_id", Value::text("t"))]);
    let body = wire::answer_body(p, send, &message);
    assert_eq!(body, br#"{"id":"m_1","threadId":"t"}"#);
    assert_eq!(wire::decode_answer(p, send, &body).unwrap(), message);

    let bounced = failure("mail.Bounced");
    let fields = rec(&[("reason_text", Value::text("no such mailbox"))]);
    let (status, body) = wire::failure_body(p, send, bounced, &fields);
    assert_eq!(status, 422, "the status the binding lists");
    assert_eq!(
        body,
        br#"{"error":{"code":"bounced","reasonText":"no such mailbox"}}"#
    );
    assert_eq!(
        wire::classify(p, send, status, &body),
        Answer::Failed {
            failure: bounced,
            fields
        }
    );
    let (status, _) = wire::failure_body(p, send, failure("mail.Suppressed"), &Value::Unit);
    assert_eq!(status, 402, "a Rejected failure's usual status");
}

/// Section 15's classification, one row each; the first match wins.
#[test]
fn each_answer_is_classified_by_the_first_rule_it_matches() {
    let p = program();
    let send = op("mail.messages.send");
    let list = op("mail.messages.list");
    let err = |code: &str, ty: &str| {
        format!(r#"{{"error":{{"code":"{code}","type":"{ty}"}}}}"#).into_bytes()
    };
    let bounced = failure("mail.Bounced");
    let rows: Vec<(OpId, u16, Vec<u8>, Answer)> = vec![
        (send, 409, err("key_in_use", "x"), Answer::InUse),
        (
            send,
            422,
            err("other", "idempotency_error"),
            Answer::Mismatch,
        ),
        (send, 429, err("slow_down", "x"), Answer::RateLimited),
        (
            send,
            422,
            br#"{"error":{"code":"bounced","reasonText":"gone"}}"#.to_vec(),
            Answer::Failed {
                failure: bounced,
                fields: rec(&[("reason_text", Value::text("gone"))]),
            },
        ),
        (
            send,
            402,
            err("suppressed", "x"),
            Answer::Failed {
                failure: failure("mail.Suppressed"),
                fields: Value::Unit,
            },
        ),
        (
            send,
            200,
            br#"{"id":"m_2","threadId":"t","extra":1}"#.to_vec(),
            Answer::Done(rec(&[
                ("id", Value::text("m_2")),
                ("thread_id", Value::text("t")),
            ])),
        ),
        (send, 503, b"upstream".to_vec(), Answer::ServerError),
        (list, 500, Vec::new(), Answer::ServerError),
    ];
    for (o, status, body, want) in rows {
        assert_eq!(
            wire::classify(p, o, status, &body),
            want,
            "{status} {}",
            String::from_utf8_lossy(&body)
        );
    }
    // Bounced is recognised under 422 only; under 400 it is another 4xx.
    let other = wire::classify(p, send, 400, &err("bounced", "invalid_request"));
    let Answer::Misconfigured(text) = other else {
        panic!("{other:?}")
    };
    assert!(
        text.contains("400") && text.contains("`bounced`") && text.contains("`invalid_request`"),
        "{text}"
    );
    // A 2xx whose body is not the answer type.
    let bad = wire::classify(p, send, 200, br#"{"id":5}"#);
    assert!(matches!(bad, Answer::Misconfigured(_)), "{bad:?}");
}

fn call<'a>(op_id: OpId, name: &'a str, request: &'a Value) -> Call<'a> {
    Call {
        op: op_id,
        operation: name,
        request,
        fingerprint: request.fingerprint(),
        key: Some("k_live"),
        repeat_safe: false,
        changes: true,
        step: Some(1),
    }
}

/// A one-connection HTTP server on loopback that answers `reply` and
/// hands back the request it read.
fn serve_once(reply: &'static [u8]) -> (String, std::thread::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        conn.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        // Read the head, then the body its length says.
        loop {
            let n = conn.read(&mut buf).unwrap();
            seen.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&seen).to_string();
            if let Some(end) = text.find("\r\n\r\n") {
                let len = text
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length: ")
                            .map(|v| v.trim().parse::<usize>().unwrap())
                    })
                    .unwrap_or(0);
                if seen.len() >= end + 4 + len {
                    break;
                }
            }
            if n == 0 {
                break;
            }
        }
        conn.write_all(reply).unwrap();
        conn.flush().unwrap();
        String::from_utf8_lossy(&seen).to_string()
    });
    (url, handle)
}

fn providers(url: &str) -> HttpProviders {
    let config = BTreeMap::from([
        (Name::new("mail_key"), Value::text("sk_test_1")),
        (Name::new("mail_account"), Value::text("acc_1")),
    ]);
    HttpProviders::new(config).with_base_url(url.to_string())
}

#[test]
fn the_http_provider_sends_with_auth_and_records_the_body() {
    let reply: &[u8] = b"HTTP/1.1 201 Created\r\ncontent-type: application/json\r\ncontent-length: 27\r\nconnection: close\r\n\r\n{\"id\":\"m_9\",\"threadId\":\"t\"}";
    let (url, server) = serve_once(reply);
    let providers = providers(&url);
    let mut sender = providers.provider(program());
    let request = send_request();
    let answer = sender.send(&call(
        op("mail.messages.send"),
        "mail.messages.send",
        &request,
    ));
    assert_eq!(
        answer,
        Answer::Done(rec(&[
            ("id", Value::text("m_9")),
            ("thread_id", Value::text("t"))
        ]))
    );
    let wire = sender.wire().unwrap();
    assert_eq!(wire.status, 201);
    assert_eq!(wire.body, br#"{"id":"m_9","threadId":"t"}"#);
    let seen = server.join().unwrap().to_ascii_lowercase();
    assert!(
        seen.starts_with("post /accounts/acc_1/threads/t%201%2f2/messages http/1.1"),
        "{seen}"
    );
    assert!(seen.contains("authorization: bearer sk_test_1"), "{seen}");
    assert!(seen.contains("idempotency-key: k_live"), "{seen}");
}

#[test]
fn a_refused_connection_is_unavailable_and_a_cut_answer_is_lost() {
    // A port nobody listens on: bind, learn it, close it.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let providers_refused = providers(&format!("http://127.0.0.1:{port}"));
    let request = send_request();
    let c = call(op("mail.messages.send"), "mail.messages.send", &request);
    assert_eq!(
        providers_refused.provider(program()).send(&c),
        Answer::Unavailable
    );

    // Headers promise 100 bytes; the connection closes after 10.
    let reply: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\nconnection: close\r\n\r\n{\"id\":\"m_";
    let (url, server) = serve_once(reply);
    let cut = providers(&url);
    assert_eq!(cut.provider(program()).send(&c), Answer::Lost);
    server.join().unwrap();
}

#[test]
fn an_operation_without_a_binding_and_no_fakes_faults_by_name() {
    // The stdlib's `ai.generate` has no binding.
    let p = program();
    let Some(i) = p.operations.iter().position(|o| o.http.is_none()) else {
        return;
    };
    let o = p.op(OpId(i as u32));
    let providers = providers("http://127.0.0.1:9");
    let request = Value::Unit;
    let answer = providers
        .provider(p)
        .send(&call(OpId(i as u32), &o.qualified, &request));
    let Answer::Misconfigured(text) = answer else {
        panic!("{answer:?}")
    };
    assert!(text.contains("no HTTP binding"), "{text}");
}

/// The fake provider server behind the HTTP provider: an answer, the same
/// key replayed without acting, another request under it refused as a
/// mismatch, a lost answer that acted and is replayed under its key, a
/// read routed by its path, and the effect log.
#[test]
fn the_fake_provider_server_keeps_keys_over_http() {
    use jadpo_runtime::fake::{Script, Scripted};
    use std::sync::Arc;
    let p = program();
    let send = op("mail.messages.send");
    let list = op("mail.messages.list");
    let message = |id: &str| rec(&[("id", Value::text(id)), ("thread_id", Value::text("t"))]);
    let scripts = BTreeMap::from([
        (
            send,
            Script {
                answers: vec![
                    Scripted::Answer(message("m_1")),
                    Scripted::Lost(Box::new(Scripted::Answer(message("m_2")))),
                ],
                replays_failures: false,
            },
        ),
        (
            list,
            Script {
                answers: vec![Scripted::Answer(rec(&[
                    ("messages", Value::List(vec![message("m_1")].into())),
                    ("has_more", Value::Bool(false)),
                ]))],
                replays_failures: false,
            },
        ),
    ]);
    let fake = Arc::new(jadpo_server::fakes::SharedFake::new(scripts));
    let server = jadpo_server::fake_server::start(fake.clone(), p).unwrap();
    // No settings given: the fake server takes stand-ins.
    let providers = HttpProviders::new(BTreeMap::new()).with_fake_server(server.url());
    let mut sender = providers.provider(p);
    let first = send_request();
    let keyed = |key: &'static str, request: &'static Value| Call {
        key: Some(key),
        ..call(send, "mail.messages.send", request)
    };
    let first: &'static Value = Box::leak(Box::new(first));
    assert_eq!(
        sender.send(&keyed("k1", first)),
        Answer::Done(message("m_1"))
    );
    assert_eq!(
        sender.send(&keyed("k1", first)),
        Answer::Done(message("m_1")),
        "replayed"
    );
    let other: &'static Value = Box::leak(Box::new(rec(&[
        ("thread_id", Value::text("t 1/2")),
        ("to_address", Value::text("bob@example.com")),
        ("cc", Value::List(Vec::new().into())),
        (
            "meta",
            rec(&[
                ("campaign_name", Value::text("x")),
                ("urgent", Value::Bool(false)),
            ]),
        ),
        ("note", Value::None),
    ])));
    assert_eq!(sender.send(&keyed("k1", other)), Answer::Mismatch);
    assert_eq!(sender.send(&keyed("k2", first)), Answer::Lost);
    assert_eq!(
        sender.send(&keyed("k2", first)),
        Answer::Done(message("m_2")),
        "the lost answer is kept under its key"
    );
    let query = rec(&[("page_size", Value::Int(5))]);
    let read = Call {
        key: None,
        changes: false,
        ..call(list, "mail.messages.list", &query)
    };
    assert!(matches!(sender.send(&read), Answer::Done(_)));
    let effects = fake.effects();
    let acted: Vec<&str> = effects.iter().map(|e| e.operation.as_str()).collect();
    assert_eq!(acted, ["mail.messages.send", "mail.messages.send"]);
    let (_, _, body) = {
        let mut conn = std::net::TcpStream::connect(server.addr).unwrap();
        conn.write_all(b"GET /__jadpo/effects HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            .unwrap();
        let mut text = String::new();
        conn.read_to_string(&mut text).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        (0, head.to_string(), body.to_string())
    };
    assert_eq!(body.matches("mail.messages.send").count(), 2, "{body}");
}
