//! The one table of every diagnostic code the tool can emit: the front
//! end's codes (`jadpo_compiler::codes`) and the checker's rules
//! (`rules::RULES`), sorted by code. `jadpo explain`, SARIF rule
//! metadata, editor help and the `spec/diagnostics/` pages all read it.

use std::sync::LazyLock;

use jadpo_compiler::diag::CodeInfo;

static ALL: LazyLock<Vec<CodeInfo>> = LazyLock::new(|| {
    let mut all: Vec<CodeInfo> = jadpo_compiler::codes::CODES
        .iter()
        .chain(crate::rules::registry())
        .copied()
        .collect();
    all.sort_by_key(|c| c.code);
    all
});

/// The codes whose fix `jadpo check --fix` applies: a single edit that
/// cannot change what the program does beyond removing the finding.
/// Every other code's fixes are suggestions (a name to choose, a failure
/// to handle, a route to change) and are only shown.
pub const SAFE_FIXES: &[&str] = &[
    // Removes a `decline` that matches no warning of its action.
    "decline.unused",
    // Removes `attempt` before something that cannot fail.
    "failure.nothing_to_attempt",
    // Removes `Unavailable` or `RateLimited` from `fails`: they always
    // pass through, listed or not.
    "failure.transient_in_fails",
];

/// Whether `jadpo check --fix` applies `code`'s fix.
pub fn fix_is_safe(code: &str) -> bool {
    SAFE_FIXES.contains(&code)
}

/// The line `jadpo explain` and `spec/diagnostics/` give about fixing.
pub fn fix_note(code: &str) -> &'static str {
    if fix_is_safe(code) {
        "Automatic fix: safe; `jadpo check --fix` applies it."
    } else {
        "Automatic fix: none; `jadpo check --fix` leaves this finding to you."
    }
}

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
