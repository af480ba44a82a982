//! Moved from `src/pattern.rs`.

use jadpo_compiler::pattern::*;

#[test]
fn search_semantics_unless_anchored() {
    assert_eq!(matches("[a-z]+", "ABC def"), Some(true));
    assert_eq!(matches("^[a-z]+$", "ABC def"), Some(false));
    assert_eq!(matches("^price_[a-z0-9]+$", "price_basic"), Some(true));
}

#[test]
fn an_invalid_pattern_is_refused_with_a_reason() {
    let err = compile("[a-").err().unwrap_or_default();
    assert!(err.contains("unclosed"), "{err}");
    assert_eq!(matches("(", "x"), None);
}

#[test]
fn a_huge_pattern_is_refused() {
    assert!(compile("(\\w{100}){100}").is_err());
}
