//! The provider interface: one send of an outside call, and what came back.
//! A real provider speaks HTTP; the test provider is the fake of design
//! section 8 (`fake.rs`). The engine never repeats a changing call whose
//! answer was lost or a 5xx within one attempt.

use jadpo_compiler::ir::{FailureId, OpId};

use crate::value::Value;

/// One send.
#[derive(Clone, Debug)]
pub struct Call<'a> {
    pub op: OpId,
    /// `stripe.customers.create`
    pub operation: &'a str,
    pub request: &'a Value,
    /// BLAKE3 of the request's canonical encoding.
    pub fingerprint: [u8; 32],
    /// The provider's idempotency key, for a keyed call.
    pub key: Option<&'a str>,
    /// The operation is `keyed: false`: safe to repeat as it is.
    pub repeat_safe: bool,
    /// The operation is `changes: true`: its answers are effects; a read
    /// acts on nothing.
    pub changes: bool,
    /// The step's position, for a call that is a step.
    pub step: Option<u32>,
}

/// What a send came back with.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// The provider acted (or read) and answered; `Unit` for an operation
    /// without `answer:`.
    Done(Value),
    /// The provider decided one of the operation's failures.
    Failed { failure: FailureId, fields: Value },
    /// It did not act: unavailable (exhausted attempts are `Unavailable`).
    Unavailable,
    /// It did not act: rate limited.
    RateLimited,
    /// "Key in use": another request with the key is in flight; it did not act.
    InUse,
    /// A 5xx: whether it acted is unknown.
    ServerError,
    /// It acted, but the answer never arrived.
    Lost,
    /// "Different request": the key was used with another request.
    Mismatch,
    /// An answer the operation does not declare (another 4xx, or a 2xx
    /// whose body is not its answer type): recorded, and the delivery
    /// faults as misconfigured, with this text.
    Misconfigured(String),
}

impl Answer {
    /// The provider did not act, and says so.
    pub fn did_not_act(&self) -> bool {
        matches!(
            self,
            Answer::Unavailable | Answer::RateLimited | Answer::InUse
        )
    }
}

/// An answer as the provider sent it: its HTTP status and body. A step's
/// answer is recorded this way (record format 2), so a rerun decodes it
/// with the package of its own build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wire {
    pub status: u16,
    pub body: Vec<u8>,
}

pub trait Provider {
    fn send(&mut self, call: &Call<'_>) -> Answer;

    /// The status and body of the last answer, when the provider spoke
    /// HTTP; a fake has none, and its answers are recorded as the bodies
    /// its package would carry.
    fn wire(&self) -> Option<Wire> {
        None
    }

    /// A step was answered from its record instead of sent: `detail` is
    /// what a listing shows of the answer. Nothing is sent.
    fn replayed(&mut self, _step: u32, _operation: &str, _detail: &str) {}

    /// The longest wait a rate-limited answer of this attempt asked for
    /// (its `Retry-After`), so the retry starts no earlier.
    fn retry_after_ms(&self) -> Option<u64> {
        None
    }
}
