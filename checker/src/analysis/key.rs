//! Content keys for reusing an action's summary between two analyses of an
//! edited program (the language server). A key covers everything the
//! summary is computed from: the action's body as IR, the facts of the
//! operations, failures, entities and events the walks read, and the keys
//! of the callees (Merkle style), so an unchanged key means an unchanged
//! summary. Ids are hashed as they are: a summary holds ids and spans, so it
//! is reused only where they still mean the same thing.

use jadpo_compiler::ir::{
    ActionId, ArmEnd, ArmPattern, Block, Effect, Emit, Handling, Node, OptionValue, Program,
    Reject, Target, WriteKind,
};
use jadpo_compiler::span::Span;

/// A summary's key.
pub type Key = blake3::Hash;

/// Bytes fed to the hash: ids, numbers and spans as LEB128 integers,
/// texts with their length in front, so no two inputs write the same bytes.
/// Writing a body also lists the actions it calls, in evaluation order (as
/// `analysis::calls_in` does), so the call graph needs no second walk.
#[derive(Default)]
pub struct Writer {
    bytes: Vec<u8>,
    calls: Vec<ActionId>,
}

impl Writer {
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.calls.clear();
    }

    /// The actions called in the bodies written since the last clear.
    pub fn calls(&self) -> &[ActionId] {
        &self.calls
    }

    pub fn finish(&self) -> Key {
        blake3::hash(&self.bytes)
    }

    pub fn u8(&mut self, v: u8) {
        self.bytes.push(v);
    }

    pub fn u32(&mut self, v: u32) {
        self.u64(u64::from(v));
    }

    /// A number in LEB128 (7 bits a byte, high bit set on all but the
    /// last): no encoding is a prefix of another, and the small ids and
    /// offsets bodies are made of take one to three bytes, which is most of
    /// what the hash pays for.
    pub fn u64(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.bytes.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.bytes.push(v as u8);
    }

    fn bool(&mut self, v: bool) {
        self.u8(u8::from(v));
    }

    pub fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.bytes.extend_from_slice(s.as_bytes());
    }

    pub fn key(&mut self, k: &Key) {
        self.bytes.extend_from_slice(k.as_bytes());
    }

    pub fn span(&mut self, s: Span) {
        self.u32(s.file.0);
        self.u32(s.start);
        self.u32(s.end.wrapping_sub(s.start));
    }

    fn opt_u32(&mut self, v: Option<u32>) {
        match v {
            Some(n) => {
                self.u8(1);
                self.u32(n);
            }
            None => self.u8(0),
        }
    }
}

/// The facts outside action bodies that the walks read: operations,
/// failure kinds, entity stores and event payloads. Spans are left out
/// (no summary holds them), so editing a file that declares a failure does
/// not invalidate every key.
pub fn context(program: &Program) -> Key {
    let mut w = Writer::default();
    w.u64(program.operations.len() as u64);
    for o in &program.operations {
        w.u32(o.package.0);
        w.bool(o.changes);
        w.bool(o.idempotent);
        w.bool(o.keyed);
        w.bool(o.large_output);
        w.u64(o.timeout_ms);
        w.u32(o.attempts);
        ids(&mut w, o.failures.iter().map(|f| f.0));
        ids(&mut w, o.already_undone.iter().map(|f| f.0));
    }
    w.u64(program.failures.len() as u64);
    for f in &program.failures {
        w.u8(f.kind as u8);
    }
    w.u64(program.entities.len() as u64);
    for e in &program.entities {
        match e.store {
            Some(name) => {
                w.u8(1);
                w.str(name.as_str());
            }
            None => w.u8(0),
        }
    }
    w.u64(program.events.len() as u64);
    for e in &program.events {
        w.str(&e.qualified);
        w.u64(e.fields.len() as u64);
        for field in &e.fields {
            w.str(field.name.as_str());
            match field.max_json_bytes {
                Some(n) => {
                    w.u8(1);
                    w.u64(n);
                }
                None => w.u8(0),
            }
        }
    }
    w.finish()
}

fn ids(w: &mut Writer, list: impl ExactSizeIterator<Item = u32>) {
    w.u64(list.len() as u64);
    for id in list {
        w.u32(id);
    }
}

/// Writes a body, every node and field, in order.
pub fn block(w: &mut Writer, b: &Block) {
    w.u64(b.nodes.len() as u64);
    for node in &b.nodes {
        self::node(w, node);
    }
}

fn node(w: &mut Writer, node: &Node) {
    match node {
        Node::Effect(e) => {
            w.u8(1);
            effect(w, e);
        }
        Node::Emit(e) => {
            w.u8(2);
            emit(w, e);
        }
        Node::Reject(r) => {
            w.u8(3);
            reject(w, r);
        }
        Node::Return(span) => {
            w.u8(4);
            w.span(*span);
        }
        Node::If {
            span,
            then_block,
            else_block,
        } => {
            w.u8(5);
            w.span(*span);
            block(w, then_block);
            block(w, else_block);
        }
        Node::Loop {
            span,
            head,
            max,
            body,
        } => {
            w.u8(6);
            w.span(*span);
            w.span(*head);
            w.opt_u32(*max);
            block(w, body);
        }
    }
}

fn effect(w: &mut Writer, e: &Effect) {
    w.span(e.span);
    match &e.target {
        Target::Op(op) => {
            w.u8(1);
            w.u32(op.0);
        }
        Target::Action(a) => {
            w.u8(2);
            w.u32(a.0);
            w.calls.push(*a);
        }
        Target::Check(check) => {
            w.u8(4);
            w.u32(check.failure.0);
            w.u32(check.query.map_or(u32::MAX, |e| e.0));
        }
        Target::Write(write) => {
            w.u8(3);
            w.u8(match write.kind {
                WriteKind::Create => 0,
                WriteKind::Update => 1,
                WriteKind::Delete => 2,
            });
            w.u32(write.entity.0);
            w.u64(write.failures.len() as u64);
            for (f, span) in &write.failures {
                w.u32(f.0);
                w.span(*span);
            }
        }
    }
    match &e.handling {
        Handling::Attempt(span) => {
            w.u8(1);
            w.span(*span);
        }
        Handling::Match(arms) => {
            w.u8(2);
            w.u64(arms.len() as u64);
            for arm in arms {
                w.span(arm.span);
                match arm.pattern {
                    ArmPattern::Success => w.u8(0),
                    ArmPattern::Failure(f) => {
                        w.u8(1);
                        w.u32(f.0);
                    }
                }
                block(w, &arm.body);
                match &arm.end {
                    ArmEnd::Value => w.u8(0),
                    ArmEnd::Reject(r) => {
                        w.u8(1);
                        reject(w, r);
                    }
                    ArmEnd::Propagate(span) => {
                        w.u8(2);
                        w.span(*span);
                    }
                }
            }
        }
        Handling::Unhandled => w.u8(3),
    }
}

fn reject(w: &mut Writer, r: &Reject) {
    w.span(r.span);
    w.u32(r.failure.0);
}

fn emit(w: &mut Writer, e: &Emit) {
    w.span(e.span);
    w.span(e.head);
    w.u32(e.event.0);
    w.u64(e.fields.len() as u64);
    for f in &e.fields {
        w.str(f.name.as_str());
        w.span(f.span);
        w.span(f.value_span);
        match &f.literal {
            Some(text) => {
                w.u8(1);
                w.str(text);
            }
            None => w.u8(0),
        }
    }
    w.u64(e.options.len() as u64);
    for o in &e.options {
        w.str(o.key.as_str());
        w.span(o.key_span);
        w.span(o.span);
        w.span(o.value_span);
        option_value(w, &o.value);
    }
}

fn option_value(w: &mut Writer, v: &OptionValue) {
    match v {
        OptionValue::Int(n) => {
            w.u8(1);
            w.u64(*n as u64);
        }
        OptionValue::Str(s) => {
            w.u8(2);
            w.str(s);
        }
        OptionValue::Bool(b) => {
            w.u8(3);
            w.bool(*b);
        }
        OptionValue::Computed => w.u8(4),
        OptionValue::List(items) => {
            w.u8(5);
            w.u64(items.len() as u64);
            for (item, span) in items {
                option_value(w, item);
                w.span(*span);
            }
        }
        OptionValue::Record(fields) => {
            w.u8(6);
            w.u64(fields.len() as u64);
            for (name, item, span) in fields {
                w.str(name.as_str());
                option_value(w, item);
                w.span(*span);
            }
        }
    }
}
