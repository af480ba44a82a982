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

#[test]
fn articles_agree_with_the_type_name() {
    use jadpo_compiler::diag::articles;
    assert_eq!(
        articles("pass a `Int` value here".into()),
        "pass an `Int` value here"
    );
    assert_eq!(
        articles("a `Instant` is not a `Text`".into()),
        "an `Instant` is not a `Text`"
    );
    assert_eq!(
        articles("a `Unit`, a `Uuid`, a `stripe.Amount`".into()),
        "a `Unit`, a `Uuid`, a `stripe.Amount`"
    );
    assert_eq!(articles("(a `Object`)".into()), "(an `Object`)");
    assert_eq!(articles("data `Int`".into()), "data `Int`");
}
