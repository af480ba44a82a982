//! Moved from `src/diag.rs`.

use jadpo_compiler::diag::edit_distance;

#[test]
fn edit_distance_counts_insertions_deletions_and_substitutions() {
    let cases = [
        ("", "", 0),
        ("", "abc", 3),
        ("abc", "", 3),
        ("kitten", "sitting", 3),
        ("charge", "chrage", 2),
        ("subscribe", "subscribe", 0),
        ("änderung", "anderung", 1),
    ];
    for (a, b, d) in cases {
        assert_eq!(edit_distance(a, b), d, "{a} / {b}");
        assert_eq!(edit_distance(b, a), d, "{b} / {a}");
    }
}
