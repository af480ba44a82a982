//! A delivery's record (design section 9): one row per step, written
//! before the step is sent and again when its answer comes. A multi-step
//! action's rows hold the request's fingerprints and the answer, encrypted
//! with the application's steps key (XChaCha20-Poly1305 under
//! `BLAKE3.derive_key("jadpo-steps-encryption-v1", key)`); a single call's
//! rows hold only the dispatch metadata (operation, first dispatch time,
//! key generation, runner generation). Step keys are
//! `hex(BLAKE3.derive_key("jadpo-step-key-v1", le32(len(id)) ‖ id ‖ le32(step) ‖ le32(generation)))`.

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};

use crate::value::{hex, Instant};

/// The most bytes a recorded answer's body may have.
pub const MAX_ANSWER: usize = 1_048_576;

/// The record format this runtime writes and reads: 2, answers recorded
/// as the provider's body with its status (design `server.md` section 12).
/// A record in another format is held for an operator.
pub const FORMAT: u32 = 2;

/// How a record keeps its steps; a saved record cannot switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Fingerprints and encrypted answers: replayed on a rerun.
    Steps,
    /// Dispatch metadata only: a single call.
    Dispatch,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Steps => "steps",
            Mode::Dispatch => "dispatch",
        }
    }

    pub fn parse(text: &str) -> Option<Mode> {
        match text {
            "steps" => Some(Mode::Steps),
            "dispatch" => Some(Mode::Dispatch),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct StoredRecord {
    /// How its answers are kept: [`FORMAT`].
    pub format: u32,
    pub build_id: String,
    pub shape_digest: String,
    pub mode: Mode,
    /// The first attempt's start: `clock.now` of every later attempt.
    pub started_at: Instant,
    pub steps: Vec<StepRow>,
}

/// What a build would do with a record it finds unfinished, as the
/// attempt's record check decides it before the code runs: for `runs
/// unfinished --build` and for `jadpo dev`'s reloads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resume {
    /// The build that started it, or one of the same step shape.
    Same,
    /// Another shape, in which the steps so far are a path's first steps.
    Prefix,
    /// Held as diverged: the build has no such action.
    NoAction,
    /// Held as diverged at `step` (1-based), recorded as `operation`.
    Held { step: u32, operation: String },
}

impl StoredRecord {
    pub fn resume_under(&self, plan: &jadpo_plan::Plan, action: &str) -> Resume {
        let Some(a) = plan.action(action) else {
            return Resume::NoAction;
        };
        if self.build_id == plan.build_id || self.shape_digest == a.step_shape_digest {
            return Resume::Same;
        }
        let ops: Vec<&str> = self.steps.iter().map(|s| s.operation.as_str()).collect();
        match a.step_shape.first_off_path(&ops) {
            None => Resume::Prefix,
            Some(at) => Resume::Held {
                step: at as u32 + 1,
                operation: ops.get(at).copied().unwrap_or_default().to_string(),
            },
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct StepRow {
    /// 1-based step number along the path the action ran.
    pub position: u32,
    pub operation: String,
    /// `None` in dispatch mode.
    pub fingerprint: Option<[u8; 32]>,
    pub field_fingerprints: Vec<(jadpo_compiler::intern::Name, [u8; 32])>,
    /// The step's first send.
    pub sent_at: Instant,
    pub key_generation: u32,
    pub runner_generation: u64,
    /// The provider's key, for a keyed step.
    pub key: Option<String>,
    pub state: RowState,
}

#[derive(Clone, Debug, PartialEq)]
pub enum RowState {
    /// Recorded as sent, no answer: in doubt once its attempt is over.
    Sent { doubt: Doubt },
    /// The answer, encrypted (steps mode).
    Answered(Sealed),
    /// Answered (dispatch mode keeps no answer).
    Dispatched,
}

/// Why a step is in doubt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Doubt {
    /// Sent (or about to be), and nothing more is known: a crash, a lost
    /// answer.
    Unknown,
    /// The provider answered 5xx.
    ServerError,
}

/// An encrypted answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sealed {
    pub nonce: [u8; 24],
    pub ciphertext: Vec<u8>,
}

/// The provider key of a step.
pub fn step_key(delivery: &str, step: u32, generation: u32) -> String {
    use std::sync::OnceLock;
    // The context's own hash is the same every time: start from a copy.
    static CONTEXT: OnceLock<blake3::Hasher> = OnceLock::new();
    let mut h = CONTEXT
        .get_or_init(|| blake3::Hasher::new_derive_key("jadpo-step-key-v1"))
        .clone();
    h.update(&(delivery.len() as u32).to_le_bytes());
    h.update(delivery.as_bytes());
    h.update(&step.to_le_bytes());
    h.update(&generation.to_le_bytes());
    hex(h.finalize().as_bytes())
}

/// The cipher for recorded answers, from the application's steps key.
pub struct Sealer {
    key: [u8; 32],
    cipher: XChaCha20Poly1305,
    /// During a rotation, the key before: it still opens what it sealed.
    previous: Option<XChaCha20Poly1305>,
}

/// The key records are encrypted with in tests that give none.
pub const TEST_KEY: &str = "jadpo-test-steps-key";

impl Sealer {
    pub fn new(secret: &str) -> Sealer {
        let key = blake3::derive_key("jadpo-steps-encryption-v1", secret.as_bytes());
        Sealer {
            key,
            cipher: XChaCha20Poly1305::new((&key).into()),
            previous: None,
        }
    }

    /// During a rotation (`STEPS_KEY_PREVIOUS`): seals with `secret`, and
    /// opens what either key sealed. An empty previous key is none.
    pub fn rotating(secret: &str, previous: Option<&str>) -> Sealer {
        let mut s = Sealer::new(secret);
        s.previous = previous.filter(|p| !p.is_empty()).map(|p| {
            let key = blake3::derive_key("jadpo-steps-encryption-v1", p.as_bytes());
            XChaCha20Poly1305::new((&key).into())
        });
        s
    }

    /// Encrypts an answer for its place in the record. The nonce is derived
    /// from the place and the plaintext, so the same delivery gives the same
    /// record bytes, and two plaintexts never share a nonce.
    pub fn seal(&self, delivery: &str, position: u32, plaintext: &[u8]) -> Sealed {
        let aad = place(delivery, position);
        let mut h = blake3::Hasher::new_keyed(&self.key);
        h.update(b"jadpo-steps-nonce-v1");
        h.update(&aad);
        h.update(plaintext);
        let mut nonce = [0u8; 24];
        nonce.copy_from_slice(&h.finalize().as_bytes()[..24]);
        let ciphertext = self
            .cipher
            .encrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: plaintext,
                    aad: &aad,
                },
            )
            .unwrap_or_default();
        Sealed { nonce, ciphertext }
    }

    /// The plaintext, or `None` when the key or the place is not the one it
    /// was sealed with.
    pub fn open(&self, delivery: &str, position: u32, sealed: &Sealed) -> Option<Vec<u8>> {
        let aad = place(delivery, position);
        let payload = || Payload {
            msg: &sealed.ciphertext,
            aad: &aad,
        };
        let nonce = XNonce::from_slice(&sealed.nonce);
        self.cipher.decrypt(nonce, payload()).ok().or_else(|| {
            let previous = self.previous.as_ref()?;
            previous.decrypt(nonce, payload()).ok()
        })
    }
}

/// What binds a sealed answer to its delivery and step.
fn place(delivery: &str, position: u32) -> Vec<u8> {
    let mut aad = Vec::with_capacity(delivery.len() + 8);
    aad.extend_from_slice(&(delivery.len() as u32).to_le_bytes());
    aad.extend_from_slice(delivery.as_bytes());
    aad.extend_from_slice(&position.to_le_bytes());
    aad
}
