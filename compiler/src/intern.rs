//! Interned names. A [`Name`] is a `Copy` handle; equality is by identity.
//!
//! Ids depend on interning order, which varies with thread scheduling, so
//! `Ord` compares the text: sorting by `Name` is deterministic.

use lasso::{Key, Spur, ThreadedRodeo};
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

fn rodeo() -> &'static ThreadedRodeo {
    static RODEO: OnceLock<ThreadedRodeo> = OnceLock::new();
    RODEO.get_or_init(ThreadedRodeo::new)
}

// Per-thread caches in front of the shared interner: its lookups take a
// shard lock and hash with SipHash, and sorting or looking up by `Name`
// (ordered by text) resolved names millions of times on a large app.
thread_local! {
    /// Texts this thread has resolved, indexed by key.
    static TEXTS: RefCell<Vec<Option<&'static str>>> = const { RefCell::new(Vec::new()) };
    /// Names this thread has interned, by text.
    static NAMES: RefCell<HashMap<&'static str, Spur, BuildHasherDefault<FxHasher>>> =
        RefCell::new(HashMap::default());
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Name(Spur);

impl Name {
    pub fn new(text: &str) -> Name {
        let cached = NAMES.try_with(|names| names.borrow().get(text).copied());
        if let Ok(Some(key)) = cached {
            return Name(key);
        }
        let key = rodeo().get_or_intern(text);
        let stored: &'static str = rodeo().resolve(&key);
        let _ = NAMES.try_with(|names| names.borrow_mut().insert(stored, key));
        Name(key)
    }

    /// The name's place in the interner: names are numbered densely from
    /// 0 in the order first interned (for tables indexed by name; never
    /// for output, as the order varies between runs).
    pub fn index(self) -> usize {
        self.0.into_usize()
    }

    pub fn as_str(self) -> &'static str {
        let index = self.0.into_usize();
        let cached = TEXTS.try_with(|texts| texts.borrow().get(index).copied().flatten());
        if let Ok(Some(text)) = cached {
            return text;
        }
        let text: &'static str = rodeo().resolve(&self.0);
        let _ = TEXTS.try_with(|texts| {
            let mut texts = texts.borrow_mut();
            if texts.len() <= index {
                texts.resize(index + 1, None);
            }
            if let Some(slot) = texts.get_mut(index) {
                *slot = Some(text);
            }
        });
        text
    }
}

/// The multiply-rotate hash of rustc (FxHash): a few cycles for a short
/// name, where SipHash costs tens. For the per-thread cache above and for
/// maps keyed by [`Name`] ([`NameHasher`]); keys come from source text, and
/// such maps must never be iterated to produce output (ids vary by run).
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

/// Hashes a [`Name`] by its id: lookups without touching the text.
pub type NameHasher = BuildHasherDefault<FxHasher>;

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word.iter_mut().zip(rest).for_each(|(w, r)| *w = *r);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    fn write_u32(&mut self, word: u32) {
        self.add(u64::from(word));
    }

    fn finish(&self) -> u64 {
        // The multiply leaves the low bits, which pick the bucket, poorly
        // mixed: names differing only near their end all collided. Rotate
        // the well-mixed high bits down (as rustc-hash 2 does).
        self.0.rotate_left(26)
    }
}

impl PartialOrd for Name {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Name {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        if self.0 == other.0 {
            return std::cmp::Ordering::Equal;
        }
        self.as_str().cmp(other.as_str())
    }
}

impl std::fmt::Debug for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

impl std::fmt::Display for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for Name {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}
