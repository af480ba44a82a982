//! Moved from `src/source.rs`.

use jadpo_compiler::source::*;

#[test]
fn positions_count_characters_after_the_last_newline() {
    let text = "ab\nçd\n";
    let index = LineIndex::new(text);
    let at = |o| index.position(text, o);
    assert_eq!(at(0), Position { line: 1, column: 1 });
    assert_eq!(at(5), Position { line: 2, column: 2 });
    // Inside the two-byte `ç`: moved back to its start.
    assert_eq!(at(4), Position { line: 2, column: 1 });
    assert_eq!(at(99), Position { line: 3, column: 1 });
    assert_eq!(index.line(3), 1);
    assert_eq!(index.line_count(), 3);
}
