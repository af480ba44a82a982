//! Interned names. A [`Name`] is a `Copy` handle; equality is by identity.
//!
//! Ids depend on interning order, which varies with thread scheduling, so
//! `Ord` compares the text: sorting by `Name` is deterministic.

use lasso::{Spur, ThreadedRodeo};
use std::sync::OnceLock;

fn rodeo() -> &'static ThreadedRodeo {
    static RODEO: OnceLock<ThreadedRodeo> = OnceLock::new();
    RODEO.get_or_init(ThreadedRodeo::new)
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Name(Spur);

impl Name {
    pub fn new(text: &str) -> Name {
        Name(rodeo().get_or_intern(text))
    }

    pub fn as_str(self) -> &'static str {
        rodeo().resolve(&self.0)
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
