//! The provider fake of design section 8: scripted answers used in order
//! (the last one repeats), keys kept as the provider keeps them, and the
//! effects it performed.
//!
//! For a keyed call it keeps, under the key and with the request's
//! fingerprint, the first answer the provider would replay: a construction
//! or `done`, a failure of the operation, the answer inside `lost`, and a
//! `server_error` when the package says `replays_failures: true`; nothing
//! for `in_use`, `Unavailable`, `RateLimited` or another `server_error`. A
//! later call under a kept key gets the kept answer when the fingerprint
//! matches and the mismatch answer when it differs; neither acts or uses an
//! answer. An effect is a used answer of a changing operation that is a
//! construction or `done`, bare or under `lost`; a read acts on nothing, so
//! sending it again is never an effect; a second identical request to a
//! `keyed: false` operation is no new effect.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use jadpo_compiler::ir::{FailureId, OpId};

use crate::provider::{Answer, Call, Provider};
use crate::value::Value;

/// One scripted answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Scripted {
    /// A construction of the answer type (`Unit` for `done`): it acted.
    Answer(Value),
    /// `fail F { fields }`, F one of the operation's failures.
    Fail {
        failure: FailureId,
        fields: Value,
    },
    /// `fail Unavailable`: it did not act.
    Unavailable,
    /// `fail RateLimited`: it did not act.
    RateLimited,
    /// `lost ANSWER`: it acted and keeps the answer, which never arrives.
    Lost(Box<Scripted>),
    InUse,
    ServerError,
}

/// An operation's script.
#[derive(Clone, Debug, Default)]
pub struct Script {
    pub answers: Vec<Scripted>,
    /// The package says `replays_failures: true`.
    pub replays_failures: bool,
}

/// An effect the fake performed.
#[derive(Clone, Debug, PartialEq)]
pub struct Effect {
    pub operation: String,
    /// The request's fingerprint.
    pub request: [u8; 32],
    pub answer: Value,
}

#[derive(Clone, Debug)]
struct Kept {
    fingerprint: [u8; 32],
    answer: Answer,
}

#[derive(Clone, Debug, Default)]
pub struct Fake {
    scripts: BTreeMap<OpId, Script>,
    used: BTreeMap<OpId, usize>,
    kept: HashMap<String, Kept>,
    effects: Vec<Effect>,
    repeats: BTreeSet<(OpId, [u8; 32])>,
    /// Calls the script has no answer for: each fails the test.
    pub unscripted: Vec<String>,
    /// Sends that reached the fake, per operation (every send, kept-key
    /// answers included).
    pub sends: BTreeMap<String, u32>,
    sends_by_op: BTreeMap<OpId, (u32, String)>,
}

impl Fake {
    pub fn new(scripts: BTreeMap<OpId, Script>) -> Fake {
        Fake {
            scripts,
            ..Fake::default()
        }
    }

    fn count_send(&mut self, call: &Call<'_>) {
        let entry = self
            .sends_by_op
            .entry(call.op)
            .or_insert_with(|| (0, call.operation.to_string()));
        entry.0 += 1;
        let n = entry.0;
        if let Some(count) = self.sends.get_mut(call.operation) {
            *count = n;
        } else {
            self.sends.insert(call.operation.to_string(), n);
        }
    }

    pub fn effects(&self) -> &[Effect] {
        &self.effects
    }

    /// The effects of one operation.
    pub fn effects_of(&self, operation: &str) -> usize {
        self.effects
            .iter()
            .filter(|e| e.operation == operation)
            .count()
    }

    /// Whether the fake keeps an answer for `key`.
    pub fn keeps(&self, key: &str) -> bool {
        self.kept.contains_key(key)
    }

    /// The answer kept for `key`, with the request's fingerprint.
    pub fn kept_answer(&self, key: &str) -> Option<([u8; 32], Answer)> {
        self.kept
            .get(key)
            .map(|k| (k.fingerprint, k.answer.clone()))
    }

    /// Keeps `answer` for `key`, as a send under it did (a fake restored
    /// from its journal after a restart, as a provider keeps its keys).
    pub fn keep(&mut self, key: &str, fingerprint: [u8; 32], answer: Answer) {
        self.kept.insert(
            key.to_string(),
            Kept {
                fingerprint,
                answer,
            },
        );
    }

    /// The next scripted answer of an operation (the last one repeats).
    fn next(&mut self, op: OpId) -> Option<(Scripted, bool)> {
        let script = self.scripts.get(&op)?;
        let last = script.answers.len().checked_sub(1)?;
        let used = self.used.entry(op).or_insert(0);
        let at = (*used).min(last);
        *used += 1;
        let answer = script.answers.get(at)?.clone();
        Some((answer, script.replays_failures))
    }
}

/// What a scripted answer does: the answer given, what is kept for the key,
/// and the effect performed.
fn play(s: &Scripted, replays_failures: bool) -> (Answer, Option<Answer>, Option<Value>) {
    match s {
        Scripted::Answer(v) => (
            Answer::Done(v.clone()),
            Some(Answer::Done(v.clone())),
            Some(v.clone()),
        ),
        Scripted::Fail { failure, fields } => {
            let a = Answer::Failed {
                failure: *failure,
                fields: fields.clone(),
            };
            (a.clone(), Some(a), None)
        }
        Scripted::Unavailable => (Answer::Unavailable, None, None),
        Scripted::RateLimited => (Answer::RateLimited, None, None),
        Scripted::InUse => (Answer::InUse, None, None),
        Scripted::ServerError => (
            Answer::ServerError,
            replays_failures.then_some(Answer::ServerError),
            None,
        ),
        Scripted::Lost(inner) => {
            let (_, kept, effect) = play(inner, replays_failures);
            (Answer::Lost, kept, effect)
        }
    }
}

impl Provider for Fake {
    fn send(&mut self, call: &Call<'_>) -> Answer {
        self.count_send(call);
        if let Some(kept) = call.key.and_then(|k| self.kept.get(k)) {
            return if kept.fingerprint == call.fingerprint {
                kept.answer.clone()
            } else {
                Answer::Mismatch
            };
        }
        let Some((scripted, replays)) = self.next(call.op) else {
            self.unscripted.push(call.operation.to_string());
            return Answer::Unavailable;
        };
        let (answer, kept, effect) = play(&scripted, replays);
        if let (Some(key), Some(kept)) = (call.key, kept) {
            self.kept.insert(
                key.to_string(),
                Kept {
                    fingerprint: call.fingerprint,
                    answer: kept,
                },
            );
        }
        if let Some(v) = effect.filter(|_| call.changes) {
            let repeated = call.repeat_safe && !self.repeats.insert((call.op, call.fingerprint));
            if !repeated {
                self.effects.push(Effect {
                    operation: call.operation.to_string(),
                    request: call.fingerprint,
                    answer: v,
                });
            }
        }
        answer
    }
}
