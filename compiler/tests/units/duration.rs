//! Moved from `src/duration.rs`.

use jadpo_compiler::duration::*;

#[test]
fn the_largest_unit_that_divides() {
    assert_eq!(text_signed(0), "0s");
    assert_eq!(text_signed(500), "500ms");
    assert_eq!(text_signed(1_500), "1500ms");
    assert_eq!(text_signed(90_000), "90s");
    assert_eq!(text_signed(120_000), "2m");
    assert_eq!(text_signed(86_400_000), "24h");
    assert_eq!(text_signed(-60_000), "-1m");
    assert_eq!(text(u64::MAX), format!("{}ms", u64::MAX));
}
