//! Error recovery and hostile input: several mistakes give exactly as many
//! diagnostics and the rest still parses; no input makes the parser panic.

use jadpo_compiler::ast::Item;
use jadpo_compiler::parser::parse_file;
use jadpo_compiler::span::FileId;

fn codes(text: &str) -> (Vec<Item>, Vec<(&'static str, u32)>) {
    let (ast, diags) = parse_file(FileId(0), text);
    let mut codes: Vec<(&'static str, u32)> =
        diags.iter().map(|d| (d.code, d.span.start)).collect();
    codes.sort_by_key(|c| c.1);
    (ast.items, codes)
}

#[test]
fn three_unrelated_mistakes_give_three_diagnostics() {
    let text = "action first(x: Int) {\n    return\n}\n\naction second(x: Int) -> Int {\n    var y =\n    return x\n}\n\nentity E {\n    id: Text\n}\n\naction third(x: Int) -> Int {\n    x = 1 2\n    return x\n}\n";
    let (items, codes) = codes(text);
    let names: Vec<&str> = codes.iter().map(|c| c.0).collect();
    assert_eq!(
        names,
        [
            "syntax.missing_return",
            "syntax.expected",
            "syntax.expected"
        ]
    );
    let at = |needle: &str| text.find(needle).map(|i| i as u32);
    assert_eq!(Some(codes[0].1), at("{\n    return\n}"));
    assert_eq!(Some(codes[1].1), at("=\n    return x"));
    assert_eq!(Some(codes[2].1), at("2\n"));
    assert_eq!(items.len(), 4, "every declaration is still read");
    assert!(items.iter().all(|i| !matches!(i, Item::Error(_))));
}

#[test]
fn garbage_between_declarations_is_one_error_item() {
    let text = "entity A {\n    id: Text\n}\n@@ what is this ??\nentity B {\n    id: Text\n}\n";
    let (items, codes) = codes(text);
    assert_eq!(codes.len(), 1, "{codes:?}");
    assert_eq!(items.len(), 3);
    assert!(matches!(items[1], Item::Error(_)));
}

#[test]
fn missing_closing_brace_is_one_diagnostic_at_the_inner_block() {
    let text = "function f(x: Int) -> Int {\n    if x > 1 {\n        return 1\n    return x\n}\n\nfunction g(x: Int) -> Int {\n    return x\n}\n";
    let (items, codes) = codes(text);
    assert_eq!(
        codes,
        [(
            "syntax.unclosed",
            text.find("{\n        return 1").map_or(0, |i| i as u32)
        )]
    );
    assert_eq!(items.len(), 2);
}

#[test]
fn empty_and_comment_only_files_have_no_items() {
    assert_eq!(codes("").0.len(), 0);
    assert_eq!(codes("// only\n// comments").1.len(), 0);
}

#[test]
fn hostile_inputs_do_not_panic() {
    let inputs = [
        "\0".to_string(),
        "action a() -> Unit { var x = \"never closed\n}".to_string(),
        "}}}{{{)))(((][".to_string(),
        "action a() -> Unit {\n  var x = ".to_string() + &"(".repeat(100_000),
        "action a() -> Unit {\n  var x = ".to_string()
            + &"[".repeat(100_000)
            + &"]".repeat(100_000)
            + "\n}",
        format!("action {}() -> Unit {{}}", "a".repeat(1_000_000)),
        format!(
            "action a() -> Unit {{\n var x = {}1\n}}",
            "1 + ".repeat(50_000)
        ),
        format!(
            "action a() -> Unit {{\n var x = {}x\n}}",
            "not ".repeat(50_000)
        ),
        format!(
            "action a() -> Unit {{\n var x = f{}\n}}",
            "()".repeat(50_000)
        ),
        format!("type T = Text{}", "?".repeat(50_000)),
        format!(
            "type T = {}Int{}",
            "List<".repeat(100_000),
            ">".repeat(100_000)
        ),
        "route\nroute POST\nroute POST /\naction\npublic\ndecline".to_string(),
        "\"\\u{110000}\" \"\\u{}\" \"\\u{1234567}\" \"\\q\" \"\\".to_string(),
        "99999999999999999999999 9999999999999999999999h".to_string(),
    ];
    for text in &inputs {
        let (_, diags) = parse_file(FileId(0), text);
        for d in &diags {
            assert!(d.span.end as usize <= text.len() && d.span.start <= d.span.end);
        }
    }
}

#[test]
fn random_bytes_do_not_panic() {
    // A small deterministic generator: no dependency needed.
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    for round in 0..200 {
        let mut bytes = Vec::new();
        for _ in 0..(round * 13 % 700) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            bytes.push((state % 128) as u8);
        }
        let text = String::from_utf8_lossy(&bytes);
        let (_, diags) = parse_file(FileId(0), &text);
        assert!(diags.iter().all(|d| d.span.end as usize <= text.len()));
    }
}

#[test]
fn token_soup_does_not_panic() {
    let words = [
        "action", "a", "(", ")", "->", "Unit", "{", "}", "var", "=", "if", "else", "match", "=>",
        "success", "failure", ",", ":", "emit", "with", "[", "]", "1h", "\"s\"", "\n", "route",
        "POST", "/x", "create", "where", "==", "?", "<", ">", "List", "attempt", "reject",
    ];
    let mut state: u64 = 42;
    for _ in 0..300 {
        let mut text = String::new();
        for _ in 0..60 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            text.push_str(words[(state >> 33) as usize % words.len()]);
            text.push(' ');
        }
        let (_, diags) = parse_file(FileId(0), &text);
        assert!(diags.iter().all(|d| d.span.end as usize <= text.len()));
    }
}
