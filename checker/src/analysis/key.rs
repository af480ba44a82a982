//! Content keys for reusing an action's summary between two analyses of an
//! edited program (the language server). A key covers everything the
//! summary is computed from: the action's body as IR, the facts of the
//! operations, failures, entities and events the walks read, and the keys
//! of the callees (Merkle style), so an unchanged key means an unchanged
//! summary. Ids are hashed as they are: a summary holds ids and spans, so it
//! is reused only where they still mean the same thing. A body is hashed by
//! the IR's derived `Hash`, names by their interned id, which stands for one
//! text for the life of the process (keys never leave it).

use std::hash::{Hash, Hasher};

use jadpo_compiler::ir::{Block, Program};

/// A summary's key.
pub type Key = blake3::Hash;

/// Bytes fed to the hash: ids, numbers and spans as LEB128 integers,
/// texts with their length in front, so no two inputs write the same bytes.
#[derive(Default)]
pub struct Writer {
    bytes: Vec<u8>,
}

impl Writer {
    pub fn clear(&mut self) {
        self.bytes.clear();
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

/// Writes a body, every node and field, in order: the IR's derived
/// `Hash`, so a new field is covered without a line here.
pub fn block(w: &mut Writer, b: &Block) {
    b.hash(w);
}

/// The IR's derived `Hash` writes through this: integers in LEB128 like
/// the rest of the key, byte strings as they are (a `str` ends in 0xFF,
/// which UTF-8 never holds, and a list starts with its length), so no two
/// bodies write the same bytes.
impl Hasher for Writer {
    fn write(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
    }

    fn write_u8(&mut self, v: u8) {
        self.u8(v);
    }

    fn write_u16(&mut self, v: u16) {
        self.u64(u64::from(v));
    }

    fn write_u32(&mut self, v: u32) {
        self.u64(u64::from(v));
    }

    fn write_u64(&mut self, v: u64) {
        self.u64(v);
    }

    fn write_usize(&mut self, v: usize) {
        self.u64(v as u64);
    }

    fn write_i64(&mut self, v: i64) {
        self.u64(v as u64);
    }

    fn write_isize(&mut self, v: isize) {
        self.u64(v as u64);
    }

    /// Never used for keys (they are [`Writer::finish`]'s BLAKE3 hash);
    /// the first eight bytes of it.
    fn finish(&self) -> u64 {
        let hash = blake3::hash(&self.bytes);
        let mut first = [0u8; 8];
        first.copy_from_slice(&hash.as_bytes()[..8]);
        u64::from_le_bytes(first)
    }
}
