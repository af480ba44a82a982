//! Recorded answers (record format 2, design `server.md` section 12): a
//! step's answer is recorded as the provider's body with its status, and
//! decoded with the current package when it is replayed. A provider that
//! speaks HTTP hands its body over ([`crate::provider::Provider::wire`]);
//! a fake's answer is recorded as the body its package would carry: the
//! canonical JSON of the value, field names as declared, and for a failure
//! its `code` with its fields. Also what a listing shows of an answer.

use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::{OpId, Program};

use crate::eval::{Failed, Flow, R};
use crate::provider::{Answer, Wire};
use crate::value::Value;
use crate::wire;

/// What an attempt saw of each step, for the listing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seen {
    Replayed,
    Answered,
    InDoubt,
    /// It answered, but the answer is over the limit: the delivery faults
    /// and the answer is not recorded.
    TooLarge,
}

/// What an attempt saw of one step: how it went, the listing's detail, and
/// the answer (its canonical JSON, cut) for a test's crash-run listings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sight {
    pub seen: Seen,
    pub detail: String,
    pub answer: String,
}

impl Sight {
    pub fn of(seen: Seen, detail: impl Into<String>) -> Sight {
        Sight {
            seen,
            detail: detail.into(),
            answer: String::new(),
        }
    }

    pub fn answer(program: &Program, seen: Seen, op: OpId, answer: &R<Value>) -> Sight {
        let text = match answer {
            Ok(v) => String::from_utf8_lossy(&v.canonical()).into_owned(),
            Err(Flow::Fail(f)) => format!(
                "{} {}",
                program.failure(f.failure).qualified,
                String::from_utf8_lossy(&f.fields.canonical())
            ),
            Err(_) => String::new(),
        };
        Sight {
            seen,
            detail: detail_of(program, op, answer),
            answer: cut(&text, 120),
        }
    }
}

/// An answer as a record keeps it: whether it was a failure (or an answer
/// the operation does not declare), the provider's status, and its body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recorded {
    pub failed: bool,
    pub misconfigured: bool,
    pub status: u16,
    pub body: Vec<u8>,
}

impl Recorded {
    /// The answer to record: the provider's own body when it gave one,
    /// else the body the package's binding would carry.
    pub fn of(
        program: &Program,
        op: OpId,
        answer: &Answer,
        wire: Option<Wire>,
    ) -> Option<Recorded> {
        let (failed, misconfigured) = match answer {
            Answer::Done(_) => (false, false),
            Answer::Failed { .. } => (true, false),
            Answer::Misconfigured(_) => (false, true),
            _ => return None,
        };
        if let Some(w) = wire {
            return Some(Recorded {
                failed,
                misconfigured,
                status: w.status,
                body: w.body,
            });
        }
        let (status, body) = match answer {
            Answer::Done(v) => (200, wire::answer_body(program, op, v)),
            Answer::Failed { failure, fields } => wire::failure_body(program, op, *failure, fields),
            Answer::Misconfigured(text) => (400, Value::text(text).canonical()),
            _ => return None,
        };
        Some(Recorded {
            failed,
            misconfigured,
            status,
            body,
        })
    }

    /// The plaintext sealed into the record: a byte saying answered (0),
    /// failed (1) or misconfigured (2), the status (2 bytes, big-endian),
    /// then the body.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(3 + self.body.len());
        out.push(if self.misconfigured {
            2
        } else {
            u8::from(self.failed)
        });
        out.extend_from_slice(&self.status.to_be_bytes());
        out.extend_from_slice(&self.body);
        out
    }

    pub fn from_bytes(plain: &[u8]) -> Option<Recorded> {
        let (&flag, rest) = plain.split_first()?;
        let status = u16::from_be_bytes([*rest.first()?, *rest.get(1)?]);
        Some(Recorded {
            failed: flag == 1,
            misconfigured: flag == 2,
            status,
            body: rest.get(2..)?.to_vec(),
        })
    }

    /// The answer, decoded with the current package.
    pub fn decode(&self, program: &Program, op: OpId) -> Result<Answer, String> {
        if self.misconfigured {
            return Ok(match wire::binding(program, op) {
                Some(_) => wire::classify(program, op, self.status, &self.body),
                None => Answer::Misconfigured(
                    serde_json::from_slice::<String>(&self.body).unwrap_or_default(),
                ),
            });
        }
        if self.failed {
            return wire::decode_failure(program, op, &self.body);
        }
        wire::decode_answer(program, op, &self.body).map(Answer::Done)
    }
}

/// What a listing shows of an answer: its `id`, else its first declared
/// field (`deleted: true`), else its type's name; `done` for an operation
/// that answers nothing; or the failure it gave.
pub fn detail_of(program: &Program, op: OpId, answer: &R<Value>) -> String {
    match answer {
        Ok(v) => answer_detail(program, op, v),
        Err(Flow::Fail(f)) => format!("failed {}", program.failure(f.failure).qualified),
        Err(_) => String::new(),
    }
}

/// [`detail_of`] an answer.
pub fn answer_detail(program: &Program, op: OpId, answer: &Value) -> String {
    match answer {
        Value::Record(r) => {
            if let Value::Text(id) = r.get(Name::new("id")) {
                return id.to_string();
            }
            let types = program.type_table();
            let ty = &program.op(op).answer;
            // The first declared field the answer holds.
            let first = types.record(ty).and_then(|(_, defs)| {
                defs.iter()
                    .map(|d| (d.name, r.get(d.name)))
                    .find(|(_, v)| *v != Value::None)
            });
            match first {
                Some((field, v)) if is_scalar(&v) => format!(
                    "{field}: {}",
                    cut(&String::from_utf8_lossy(&v.canonical()), 32)
                ),
                _ => types.name(ty, &program.packages),
            }
        }
        Value::Unit => "done".into(),
        v => cut(&String::from_utf8_lossy(&v.canonical()), 32),
    }
}

fn is_scalar(v: &Value) -> bool {
    !matches!(v, Value::Record(_) | Value::List(_))
}

/// At most `n` characters of a text, with `…` when it is cut.
pub fn cut(text: &str, n: usize) -> String {
    match text.char_indices().nth(n) {
        Some((at, _)) => format!("{}…", text.get(..at).unwrap_or(text)),
        None => text.to_string(),
    }
}

/// An answer's failure as the code sees it.
pub fn to_flow(answer: Answer) -> R<Value> {
    match answer {
        Answer::Done(v) => Ok(v),
        Answer::Failed { failure, fields } => Err(Flow::Fail(Failed { failure, fields })),
        Answer::Misconfigured(text) => crate::eval::fault(text),
        _ => crate::eval::fault("an answer that is not one"),
    }
}
