//! The registered diagnostic codes of the front end (syntax, names, types,
//! failures, purity, entry points, manifests, loading, packages). Each is
//! documented in `compiler/codes/<family>/<name>.md`; `build.rs` makes the
//! table. The checker's rules add their own codes; `jadpo_checker::registry`
//! joins both into the one table every tool reads.

use crate::diag::{CodeInfo, Severity};

include!(concat!(env!("OUT_DIR"), "/codes.rs"));

pub fn lookup(code: &str) -> Option<&'static CodeInfo> {
    CODES.iter().find(|c| c.code == code)
}
