//! The one table of every diagnostic code the tool can emit: the front
//! end's codes (`jadpo_compiler::codes`) and the checker's rules
//! (`rules::REGISTRY`), sorted by code. `jadpo explain`, SARIF rule
//! metadata, editor help and the `spec/diagnostics/` pages all read it.

use std::sync::LazyLock;

use jadpo_compiler::diag::CodeInfo;

static ALL: LazyLock<Vec<CodeInfo>> = LazyLock::new(|| {
    let mut all: Vec<CodeInfo> = jadpo_compiler::codes::CODES
        .iter()
        .chain(crate::rules::REGISTRY)
        .copied()
        .collect();
    all.sort_by_key(|c| c.code);
    all
});

/// Every registered code, sorted.
pub fn all() -> &'static [CodeInfo] {
    &ALL
}

pub fn lookup(code: &str) -> Option<&'static CodeInfo> {
    let all = all();
    all.binary_search_by_key(&code, |c| c.code)
        .ok()
        .and_then(|i| all.get(i))
}
