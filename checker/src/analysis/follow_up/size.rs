//! The worst-case serialized size of one staged follow-up, as
//! `follow_up.too_large` sums it (the encoding is documented in
//! `spec/follow-ups.md`). A follow-up is serialized as
//!
//! `{"kind":K,"queue":Q,"args":A,"metadata":M,"tags":T}`
//!
//! where the event's payload `A` counts each field with a declared bound at
//! the resolver's `max_json_bytes` and leaves unbounded fields out, and the
//! other members count their literal JSON exactly, a computed queue at its
//! 200-character limit, and computed metadata or tags not at all (they are
//! checked when staged).

use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::{Emit, OptionValue, Program};

use super::options::{option, DEFAULT_QUEUE};

/// `{"kind":,"queue":,"args":,"metadata":,"tags":}` without the values.
pub const ENVELOPE_BYTES: u64 = 46;
/// Queue and event names are at most this many characters.
pub const NAME_CHARS: u64 = 200;
/// Worst-case bytes of one escaped character (`\u001f`).
const CHAR_BYTES: u64 = 6;

/// One follow-up's worst-case size, part by part.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EmitSize {
    pub kind: u64,
    pub queue: u64,
    pub args: u64,
    pub metadata: u64,
    pub tags: u64,
    /// Payload fields with no declared bound, left out of `args`.
    pub unbounded: Vec<Name>,
}

impl EmitSize {
    pub fn total(&self) -> u64 {
        ENVELOPE_BYTES
            .saturating_add(self.kind)
            .saturating_add(self.queue)
            .saturating_add(self.args)
            .saturating_add(self.metadata)
            .saturating_add(self.tags)
    }
}

pub fn emit_size(program: &Program, emit: &Emit) -> EmitSize {
    let (args, unbounded) = payload(program, emit);
    EmitSize {
        kind: program
            .events
            .get(emit.event)
            .map_or(2, |e| json_text(&e.qualified)),
        queue: match option(emit, "queue").map(|o| &o.value) {
            None => json_text(DEFAULT_QUEUE),
            Some(OptionValue::Str(s)) => json_text(s),
            Some(_) => 2 + CHAR_BYTES * NAME_CHARS,
        },
        args,
        metadata: option(emit, "metadata").map_or(2, |o| literal_bytes(&o.value, 2)),
        tags: option(emit, "tags").map_or(2, |o| literal_bytes(&o.value, 2)),
        unbounded,
    }
}

/// The payload object over the event's bounded fields, and its unbounded ones.
fn payload(program: &Program, emit: &Emit) -> (u64, Vec<Name>) {
    let Some(event) = program.events.get(emit.event) else {
        return (2, Vec::new());
    };
    let mut bytes = 2u64;
    let mut counted = 0u64;
    let mut unbounded = Vec::new();
    for field in &event.fields {
        match field.max_json_bytes {
            Some(value) => {
                let member = 2 + field.name.as_str().len() as u64 + 1 + value;
                bytes = bytes.saturating_add(member);
                counted += 1;
            }
            None => unbounded.push(field.name),
        }
    }
    (bytes.saturating_add(counted.saturating_sub(1)), unbounded)
}

/// Bytes of a string as JSON (serde_json's escaping).
pub fn json_text(s: &str) -> u64 {
    serde_json::to_string(s).map_or(2 + CHAR_BYTES * s.len() as u64, |j| j.len() as u64)
}

/// Exact JSON bytes of a literal option value; a computed value counts as
/// `computed` bytes (left out of the sum), a computed member of a record
/// or list as `null`.
fn literal_bytes(v: &OptionValue, computed: u64) -> u64 {
    match v {
        OptionValue::Computed => computed,
        OptionValue::Int(n) => n.to_string().len() as u64,
        OptionValue::Str(s) => json_text(s),
        OptionValue::Bool(b) => {
            if *b {
                4
            } else {
                5
            }
        }
        OptionValue::List(items) => {
            let inner: u64 = items.iter().map(|(v, _)| literal_bytes(v, 4)).sum();
            2 + inner + (items.len() as u64).saturating_sub(1)
        }
        OptionValue::Record(items) => {
            let inner: u64 = items
                .iter()
                .map(|(k, v, _)| json_text(k.as_str()) + 1 + literal_bytes(v, 4))
                .sum();
            2 + inner + (items.len() as u64).saturating_sub(1)
        }
    }
}
