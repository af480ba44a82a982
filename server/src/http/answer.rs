//! What a route answers (design section 16): its output, problem+json
//! errors (RFC 9457: `type`, `title`, `status`, `code`, and `errors`
//! pointing at fields), failures by kind. An answer is plain data until it
//! is written, so the one stored with a claim replays byte for byte.

use jadpo_compiler::ir::{FailureKind, Program};
use jadpo_runtime::eval::Failed;
use jadpo_runtime::store::StoredResponse;
use jadpo_runtime::value::Value;
use serde_json::json;

use super::decode::Mistake;

/// An answer: status, headers, body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

const PROBLEM: &str = "application/problem+json";
const JSON: &str = "application/json";

impl Answer {
    pub fn json(status: u16, body: &serde_json::Value) -> Answer {
        Answer {
            status,
            headers: vec![("content-type".into(), JSON.into())],
            body: body.to_string().into_bytes(),
        }
    }

    pub fn empty(status: u16) -> Answer {
        Answer {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// A problem: `code` names it for programs, `title` for people.
    pub fn problem(status: u16, code: &str, title: &str) -> Answer {
        Answer::problem_with(status, code, title, json!({}))
    }

    /// A problem with more members (`errors`, a failure's fields,
    /// `delivery`).
    pub fn problem_with(status: u16, code: &str, title: &str, more: serde_json::Value) -> Answer {
        let mut body = json!({
            "type": "about:blank",
            "title": title,
            "status": status,
            "code": code,
        });
        if let (Some(b), serde_json::Value::Object(m)) = (body.as_object_mut(), more) {
            for (k, v) in m {
                b.insert(k, v);
            }
        }
        Answer {
            status,
            headers: vec![("content-type".into(), PROBLEM.into())],
            body: body.to_string().into_bytes(),
        }
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Answer {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// The answer as stored with its claim, its body sealed by `seal`.
    pub fn stored(&self, seal: impl Fn(&[u8]) -> Vec<u8>) -> StoredResponse {
        StoredResponse {
            status: self.status,
            headers: self.headers.clone(),
            body: seal(&self.body),
        }
    }
}

/// A request's mistakes: 400 when its shape is wrong, else 422.
pub fn mistakes(found: &[Mistake]) -> Answer {
    let shape = found.iter().any(|m| m.shape);
    let errors: Vec<serde_json::Value> = found
        .iter()
        .map(|m| json!({ "pointer": m.pointer, "reason": m.reason }))
        .collect();
    let (status, code, title) = if shape {
        (
            400,
            "invalid_request",
            "The request's body has fields the route does not take",
        )
    } else {
        (
            422,
            "invalid_value",
            "A value of the request breaks its type or constraints",
        )
    };
    Answer::problem_with(status, code, title, json!({ "errors": errors }))
}

/// The answer of a committed run: 200 with the output, 204 for `Unit`,
/// 202 with the ids of the events it inserted for `Unit` that staged some.
pub fn output(value: &Value, events: &[String]) -> Answer {
    match value {
        Value::Unit if !events.is_empty() => Answer::json(202, &json!({ "accepted": events })),
        Value::Unit => Answer::empty(204),
        v => Answer::json(200, &v.to_json()),
    }
}

/// A failure's status by its kind (design section 16.6).
pub fn failure_status(kind: FailureKind) -> u16 {
    match kind {
        FailureKind::InvalidRequest => 400,
        FailureKind::NotFound => 404,
        FailureKind::Conflict => 409,
        FailureKind::InvalidValue | FailureKind::Rejected => 422,
        FailureKind::RateLimited => 429,
        FailureKind::Unavailable => 503,
        FailureKind::TimedOut => 504,
        _ => 500,
    }
}

/// The answer of a run that failed with one of its failures.
pub fn failed(program: &Program, f: &Failed) -> Answer {
    let failure = program.failure(f.failure);
    let status = failure_status(failure.kind);
    let mut more = serde_json::Map::new();
    if let serde_json::Value::Object(fields) = f.fields.to_json() {
        for (k, v) in fields {
            more.insert(k, v);
        }
    }
    Answer::problem_with(
        status,
        &failure.code,
        &format!("The request failed with {}", failure.qualified),
        serde_json::Value::Object(more),
    )
}

/// A run an operator must look at: parked, held or faulted.
pub fn needs_operator(delivery: &str, state: &str) -> Answer {
    Answer::problem_with(
        500,
        "needs_operator",
        &format!("The run ended {state}; an operator must look at it"),
        json!({ "delivery": delivery }),
    )
}
