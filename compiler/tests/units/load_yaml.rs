//! Moved from `src/load/yaml.rs`.

use jadpo_compiler::load::yaml::*;
use jadpo_compiler::span::FileId;

fn parse_ok(text: &str) -> Node {
    match parse(text, FileId(0)) {
        Ok(n) => n,
        Err(d) => panic!("{}: {}", d.code, d.summary),
    }
}

fn slice<'a>(text: &'a str, n: &Node) -> &'a str {
    text.get(n.start as usize..n.end as usize)
        .unwrap_or("<bad span>")
}

/// Kept trees must be exactly what a fresh parse gives, for texts that
/// differ in one byte and for texts that fail (never kept).
#[test]
fn kept_parses_equal_fresh_ones() {
    let texts = [
        "package: kept\nversion: 1.0.0\n",
        "package: kept\nversion: 1.0.1\n",
        "package: kept\nversion: 1.0.0\n",
        "package: [kept\n",
    ];
    let mut cache = Cache::default();
    for round in 0..2 {
        for (i, text) in texts.iter().enumerate() {
            let file = FileId(round * 10 + i as u32);
            let shared = cache.parse(text, file).map(|n| (*n).clone());
            assert_eq!(shared, parse(text, file), "{text:?}");
        }
    }
}

#[test]
fn spans_point_at_keys_and_values() {
    let text = "package: stripe\nprovider:\n  timeout: 5s\n  list: [a, b]\n";
    let root = parse_ok(text);
    let Value::Map(entries) = &root.value else {
        panic!("not a map")
    };
    assert_eq!(slice(text, &entries[0].0), "package");
    assert_eq!(slice(text, &entries[0].1), "stripe");
    let Value::Map(inner) = &entries[1].1.value else {
        panic!("not a map")
    };
    assert_eq!(slice(text, &inner[0].0), "timeout");
    assert_eq!(slice(text, &inner[0].1), "5s");
    let Value::Seq(items) = &inner[1].1.value else {
        panic!("not a seq")
    };
    assert_eq!(slice(text, &items[1]), "b");
}

#[test]
fn quoted_scalars_and_numbers() {
    let text = "a: \"3\"\nb: 3\nc: true\nd: 3.1\n";
    let root = parse_ok(text);
    let Value::Map(entries) = &root.value else {
        panic!("not a map")
    };
    assert_eq!(entries[0].1.value, Value::Str("3".into()));
    assert_eq!(entries[1].1.value, Value::Int(3));
    assert_eq!(entries[2].1.value, Value::Bool(true));
    assert_eq!(entries[3].1.scalar_text(text), Some("3.1"));
}

#[test]
fn duplicate_keys_are_kept() {
    let root = parse_ok("a: 1\na: 2\n");
    let Value::Map(entries) = &root.value else {
        panic!("not a map")
    };
    assert_eq!(entries.len(), 2);
}
