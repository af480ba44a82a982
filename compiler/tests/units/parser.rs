//! Moved from `src/parser/mod.rs`.

use jadpo_compiler::parser::*;
use jadpo_compiler::source::Files;
use jadpo_compiler::span::FileId;

/// Many files parsed from a thread of another, small-stack pool (the
/// language server calls from rayon's global pool): one wait for all
/// files, not a wait per file stacked on the caller's stack.
#[test]
fn many_files_parse_from_a_small_stack_pool() {
    let mut files = Files::new();
    let text = "action a() -> Unit {\n    return\n}\n";
    let ids: Vec<FileId> = (0..3000)
        .map(|i| {
            files.add(
                format!("f{i}.jadpo"),
                text,
                jadpo_compiler::source::Unit::App,
            )
        })
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .stack_size(128 * 1024)
        .build();
    let Ok(pool) = pool else { return };
    let parsed = pool.install(|| parse_each(&files, &ids));
    assert_eq!(parsed.len(), 3000);
    assert!(parsed
        .iter()
        .all(|(ast, diags)| ast.items.len() == 1 && diags.is_empty()));
}

/// The fast grammar reads only what the full grammar reads without
/// errors, into the same tree.
#[track_caller]
fn agree(text: &str) -> bool {
    let (fast, full, errors) = both_grammars(text);
    if let Some(fast) = &fast {
        assert_eq!(errors, 0, "fast pass accepted a file with errors: {text}");
        assert_eq!(*fast, full, "trees differ for: {text}");
    }
    fast.is_some() || errors > 0
}

#[test]
fn fast_and_full_grammars_agree_on_expressions() {
    let exprs = [
        "a + b * c - d / e",
        "-a * -b - - c",
        "not a == b and c or not d",
        "attempt a or b and not c",
        "attempt not - x.y(z)[0]",
        "a < b",
        "a < b < c",
        "a == not b",
        "a + not b",
        "x + attempt y",
        "not attempt x",
        "- not x",
        "a and b or c and d or e",
        "a == b == c",
        "1 + 2 * 3 < 4 - 5 / 6 and 7 >= 8 or 9 != 10",
        "Foo { a: 1 }",
        "Foo.Bar { a: 1 }.b",
        "foo { a: 1 }",
        "Foo",
        "f(Foo { x: 1 }, [1, 2], (a + b) * c)",
    ];
    for e in exprs {
        let var = format!("function f() -> Int {{\n    var x = {e}\n    return x\n}}\n");
        // Every error-free file is read by the fast pass.
        assert!(agree(&var), "{var}");
        agree(&format!(
            "function f() -> Int {{\n    if {e} {{\n        return 1\n    }}\n}}\n"
        ));
        agree(&format!("application A {{\n    key: {e}\n}}\n"));
    }
    let long = vec!["a"; 300].join(" + ");
    agree(&format!("function f() -> Int {{\n    return {long}\n}}\n"));
    let nots = "not ".repeat(300);
    agree(&format!(
        "function f() -> Int {{\n    return {nots} a\n}}\n"
    ));
}

#[test]
fn fast_and_full_grammars_agree_on_the_examples() {
    let mut stack = vec![std::path::PathBuf::from("../examples")];
    let mut seen = 0;
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).into_iter().flatten().flatten() {
                stack.push(entry.path());
            }
        } else if path.extension().is_some_and(|e| e == "jadpo") {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let (fast, _, errors) = both_grammars(&text);
            assert!(errors > 0 || fast.is_some(), "{}", path.display());
            agree(&text);
            seen += 1;
        }
    }
    assert!(seen > 0);
}
