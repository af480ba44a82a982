//! Hostile input on the surfaces added since the first review (issue 37):
//! nesting whose limits multiply, a test that computes without bound, file
//! modes and edits made while `fmt` or `--fix` runs, sizes past the source
//! limit, output a terminal would obey, lone carriage returns, and the
//! small ones. Each input is judged within the bounds of the module above
//! (2 GiB, no crash), with a diagnostic, a test `fault` or `time_limit`.

use super::*;

/// `function f() -> T { return E }` where `E` nests `outer` parenthesized
/// groups of `inner` prefix operators `op` around `leaf`.
fn nested(op: &str, outer: usize, inner: usize, leaf: &str, ty: &str) -> String {
    let mut e = leaf.to_string();
    for _ in 0..outer {
        e = format!("({}{e})", op.repeat(inner));
    }
    format!("function f() -> {ty} {{\n    return {e}\n}}\n")
}

#[test]
fn nesting_whose_limits_multiply_is_too_deep_not_a_crash() {
    for (op, ty, leaf) in [("- ", "Int", "1"), ("not ", "Bool", "true")] {
        let app = App::new(&format!("mixed-{}", op.trim()));
        // 30 groups of 250: each within its own limit, 7,500 levels in all.
        app.write("src/deep.jadpo", nested(op, 30, 250, leaf, ty));
        let dir = app.dir.to_string_lossy().into_owned();
        assert_diagnosed(&app.check(), "syntax.too_deep", &format!("30 x 250 `{op}`"));
        let out = app.path("build").to_string_lossy().into_owned();
        assert_diagnosed(
            &run(&["build", &dir, "--out", &out]),
            "syntax.too_deep",
            "jadpo build",
        );
        assert_diagnosed(&run(&["test", &dir]), "syntax.too_deep", "jadpo test");
    }
}

#[test]
fn the_deepest_legal_statement_checks_runs_and_formats() {
    // Four groups of 250 `-`: 1,004 levels, under the 1,024 bound, in a
    // function a test calls, so the resolver, the checker, the
    // interpreter and the formatter all walk it.
    let app = App::new("deepest-legal");
    let source = nested("- ", 4, 250, "1", "Int");
    app.write("src/deep.jadpo", &source);
    app.write(
        "tests/deep.jadpo",
        "test \"deep\" {\n    assert f() == 1\n}\n",
    );
    let run_check = app.check();
    assert_no_panic(&run_check, "the deepest legal statement");
    assert_eq!(run_check.status, 0, "{}", run_check.describe());
    let dir = app.dir.to_string_lossy().into_owned();
    let tested = run(&["test", &dir]);
    assert_no_panic(&tested, "jadpo test");
    assert_eq!(tested.status, 0, "{}", tested.describe());
    let file = app.path("src/deep.jadpo").to_string_lossy().into_owned();
    let formatted = run(&["fmt", "--check", &file]);
    assert_no_panic(&formatted, "jadpo fmt --check");
}

/// `jadpo test --format json` on the app: the document and the status.
fn test_json(app: &App, extra: &[&str]) -> (serde_json::Value, Run) {
    let dir = app.dir.to_string_lossy().into_owned();
    let mut args = vec!["test", "--format", "json"];
    args.extend_from_slice(extra);
    args.push(&dir);
    let out = run(&args);
    assert_no_panic(&out, "jadpo test");
    let doc = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", out.describe()));
    (doc, out)
}

/// Each test's name and the kind of its first failure ("" when it passed).
fn verdicts(doc: &serde_json::Value) -> Vec<(String, String)> {
    doc["tests"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let kind = t["failures"][0]["kind"].as_str().unwrap_or("").to_string();
            (t["name"].as_str().unwrap_or("").to_string(), kind)
        })
        .collect()
}

const GROW: &str = "function grow() -> Text {
    var mut s = \"xxxxxxxxxxxxxxxx\"
    for i in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31] {
        s = s + s
    }
    return s
}

action grow_in_an_action() -> Text {
    return grow()
}

function spin(n: Int) -> Int {
    var mut total = 0
    var items = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]
    for a in items {
        for b in items {
            for c in items {
                for d in items {
                    for e in items {
                        total = total + n
                    }
                }
            }
        }
    }
    return total
}

action spin_in_an_action() -> Int {
    return spin(1)
}
";

#[test]
fn a_test_that_computes_without_bound_faults_alone() {
    let app = App::new("test-memory");
    app.write("src/grow.jadpo", GROW);
    app.write(
        "tests/grow.jadpo",
        "test \"grow\" {\n    assert grow() == \"\"\n}\n\ntest \"grow in an action\" {\n    var x = call grow_in_an_action()\n}\n\ntest \"fine\" {\n    assert 1 == 1\n}\n",
    );
    let (doc, out) = test_json(&app, &[]);
    assert_eq!(out.status, 1, "{}", out.describe());
    assert_eq!(
        verdicts(&doc),
        [
            ("grow".to_string(), "fault".to_string()),
            ("grow in an action".to_string(), "outcome".to_string()),
            ("fine".to_string(), String::new()),
        ]
    );
    let message = doc["tests"][0]["failures"][0]["message"]
        .as_str()
        .unwrap_or("");
    assert!(message.contains("more than 256 MiB of text"), "{message}");
    assert!(out.peak < 1024 * MB, "peak {} MB", out.peak / MB);
}

#[test]
fn the_time_limit_holds_inside_a_statement() {
    let app = App::new("test-time");
    app.write("src/grow.jadpo", GROW);
    app.write(
        "tests/spin.jadpo",
        "test \"spin\" {\n    var n = call spin_in_an_action()\n}\n\ntest \"fine\" {\n    assert 1 == 1\n}\n",
    );
    // The delivery's fuel (10,000,000 steps) lasts longer than this.
    let (doc, out) = test_json(&app, &["--time-limit", "0.05"]);
    assert_eq!(
        verdicts(&doc),
        [
            ("spin".to_string(), "time_limit".to_string()),
            ("fine".to_string(), String::new()),
        ],
        "{}",
        out.describe()
    );
    assert!(out.took < Duration::from_secs(20), "{}", out.describe());
}

#[test]
fn deep_expressions_inside_deep_calls_fault_that_test_only() {
    // 8 groups of 120 `-` around a call that recurses: each call nests
    // 960 levels, 33 calls about 32,000, and `down(250)` far more.
    let mut e = "down(k - 1)".to_string();
    for _ in 0..8 {
        e = format!("({}{e})", "- ".repeat(120));
    }
    let app = App::new("test-depth");
    app.write(
        "src/down.jadpo",
        format!("function down(k: Int) -> Int {{\n    if k == 0 {{\n        return 0\n    }}\n    return {e}\n}}\n"),
    );
    app.write(
        "tests/down.jadpo",
        "test \"deep\" {\n    assert down(250) == 0\n}\n\ntest \"shallow\" {\n    assert down(3) == 0\n}\n",
    );
    let (doc, out) = test_json(&app, &[]);
    assert_eq!(
        verdicts(&doc),
        [
            ("deep".to_string(), "fault".to_string()),
            ("shallow".to_string(), String::new()),
        ],
        "{}",
        out.describe()
    );
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).map_or(0, |m| m.permissions().mode() & 0o7777)
}

fn set_mode(path: &Path, m: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(m))
        .unwrap_or_else(|e| panic!("chmod {path:?}: {e}"));
}

#[test]
fn fmt_and_fix_keep_the_mode_and_refuse_a_read_only_file() {
    let app = App::new("modes");
    let unformatted = "function   f() -> Int {\n  return 1\n}\n";
    for (name, m) in [("private", 0o600), ("exec", 0o750), ("locked", 0o444)] {
        app.write(&format!("src/{name}.jadpo"), unformatted);
        set_mode(&app.path(&format!("src/{name}.jadpo")), m);
    }
    let dir = app.dir.to_string_lossy().into_owned();
    let out = run(&["fmt", &dir]);
    assert_no_panic(&out, "jadpo fmt");
    assert_eq!(
        out.status,
        1,
        "the read-only file is refused: {}",
        out.describe()
    );
    assert!(out.stderr.contains("read-only"), "{}", out.describe());
    assert_eq!(mode(&app.path("src/private.jadpo")), 0o600);
    assert_eq!(mode(&app.path("src/exec.jadpo")), 0o750);
    assert_eq!(mode(&app.path("src/locked.jadpo")), 0o444);
    let locked = std::fs::read_to_string(app.path("src/locked.jadpo")).unwrap_or_default();
    assert_eq!(locked, unformatted, "a read-only file is left as it is");
    let private = std::fs::read_to_string(app.path("src/private.jadpo")).unwrap_or_default();
    assert_ne!(private, unformatted, "the others are formatted");
}

#[test]
fn fix_goes_on_past_a_file_it_cannot_write() {
    let app = App::new("fix-unwritable");
    let needless = |name: &str| {
        format!("function total_{name}() -> Int {{\n    return 0\n}}\n\naction sum_{name}() -> Int {{\n    return attempt total_{name}()\n}}\n")
    };
    for name in ["a", "b", "c"] {
        app.write(&format!("src/{name}.jadpo"), needless(name));
    }
    set_mode(&app.path("src/b.jadpo"), 0o444);
    let dir = app.dir.to_string_lossy().into_owned();
    let out = run(&["check", "--fix", &dir]);
    assert_no_panic(&out, "check --fix");
    assert_eq!(out.status, 1, "{}", out.describe());
    for name in ["a", "c"] {
        assert!(
            out.stdout
                .contains(&format!("fixed 1 finding in src/{name}.jadpo")),
            "{name}: {}",
            out.describe()
        );
        let text =
            std::fs::read_to_string(app.path(&format!("src/{name}.jadpo"))).unwrap_or_default();
        assert!(!text.contains("attempt"), "{name} is fixed: {text}");
    }
    assert!(
        out.stderr.contains("b.jadpo") && out.stderr.contains("read-only"),
        "{}",
        out.describe()
    );
    // Checked again: only b's finding remains.
    assert!(
        out.stdout.contains("1 error"),
        "the check after the fixes: {}",
        out.describe()
    );
}

#[test]
fn an_edit_made_while_fmt_runs_is_never_lost() {
    let app = App::new("fmt-race");
    let big: String = (0..100_000)
        .map(|i| format!("function   f{i}() -> Int {{\n  return {i}\n}}\n"))
        .collect();
    app.write("src/big.jadpo", &big);
    let file = app.path("src/big.jadpo");
    let writer = {
        let file = file.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(150));
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&file)
                .unwrap_or_else(|e| panic!("{e}"));
            f.write_all(b"// my edit\n")
                .unwrap_or_else(|e| panic!("{e}"));
        })
    };
    let out = run(&["fmt", &file.to_string_lossy()]);
    let _ = writer.join();
    assert_no_panic(&out, "jadpo fmt during an edit");
    let after = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(
        after.contains("// my edit"),
        "the edit was lost: {}",
        out.describe()
    );
}

#[test]
fn sources_past_the_limit_are_refused_unread() {
    let app = App::new("huge-source");
    let file = std::fs::File::create(app.path("src/big.jadpo"))
        .or_else(|_| {
            std::fs::create_dir_all(app.path("src"))?;
            std::fs::File::create(app.path("src/big.jadpo"))
        })
        .unwrap_or_else(|e| panic!("{e}"));
    file.set_len(100 << 20).unwrap_or_else(|e| panic!("{e}"));
    let out = app.check();
    assert_diagnosed(&out, "load.too_large", "a 100 MB source");
    assert!(out.peak < 200 * MB, "read anyway: {}", out.describe());
    let path = app.path("src/big.jadpo").to_string_lossy().into_owned();
    let formatted = run(&["fmt", &path]);
    assert_no_panic(&formatted, "jadpo fmt of a 100 MB source");
    assert_eq!(formatted.status, 1, "{}", formatted.describe());
    assert!(
        formatted.stderr.contains("more than Jadpo reads"),
        "{}",
        formatted.describe()
    );
}

#[test]
fn a_huge_package_manifest_is_refused_before_it_is_read() {
    let app = App::new("huge-package");
    std::fs::remove_file(app.path("jadpo.yaml")).unwrap_or_else(|e| panic!("{e}"));
    let file = std::fs::File::create(app.path("package.yaml")).unwrap_or_else(|e| panic!("{e}"));
    file.set_len(1 << 30).unwrap_or_else(|e| panic!("{e}"));
    let dir = app.dir.to_string_lossy().into_owned();
    for args in [
        vec!["check", dir.as_str()],
        vec!["doc", dir.as_str()],
        vec!["publish", dir.as_str(), "--dry-run"],
    ] {
        let out = run(&args);
        assert_no_panic(&out, &format!("jadpo {}", args[0]));
        assert!(
            out.peak < 200 * MB,
            "{}: read anyway: {}",
            args[0],
            out.describe()
        );
        assert!(
            out.all().contains("manifest.too_large") || out.all().contains("256 KiB"),
            "{}: {}",
            args[0],
            out.describe()
        );
    }
}

#[test]
fn names_and_frames_are_printed_escaped() {
    let app = App::new("escapes");
    app.write(
        "tests/t.jadpo",
        "test \"x \\u{1b}]0;pwned\\u{7}\\u{1b}[8m\" {\n    assert 1 == 2\n}\n",
    );
    let dir = app.dir.to_string_lossy().into_owned();
    let out = run(&["test", &dir]);
    assert_no_panic(&out, "a test name with escapes");
    assert!(!out.stdout.contains('\u{1b}'), "{:?}", out.stdout);
    assert!(!out.stdout.contains('\u{7}'), "{:?}", out.stdout);
    assert!(
        out.stdout.contains("test \"x \\u{1b}]0;pwned"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("FAILED"), "{}", out.stdout);
    // A raw escape in a source line: the frame shows a picture of it.
    app.write(
        "src/raw.jadpo",
        "action f() -> Int {\n    return \"\u{1b}[8m\"\n}\n",
    );
    let out = app.check();
    assert!(!out.stdout.contains('\u{1b}'), "{:?}", out.stdout);
}

#[test]
fn a_lone_carriage_return_or_a_bidi_control_is_an_error() {
    let app = App::new("hidden-text");
    app.write(
        "src/a.jadpo",
        "function f() -> Int {\n    return 1 // one\r    return 2\n}\n",
    );
    let out = app.check();
    assert_diagnosed(&out, "syntax.control_character", "a lone CR");
    // The position is the editor's: line 2 ends at the CR.
    assert!(
        out.stdout.contains("src/a.jadpo:2:20"),
        "{}",
        out.describe()
    );
    app.write(
        "src/a.jadpo",
        "function f() -> Text {\n    return \"a\u{202e}b\"\n}\n",
    );
    assert_diagnosed(
        &app.check(),
        "syntax.control_character",
        "U+202E in a string",
    );
    app.write(
        "src/a.jadpo",
        "function f() -> Int {\r\n    return 1 // one\r\n}\r\n",
    );
    let crlf = app.check();
    assert_eq!(
        crlf.status,
        0,
        "CR LF line ends are fine: {}",
        crlf.describe()
    );
}

#[test]
fn fmt_keeps_the_parentheses_a_long_chain_needs() {
    let app = App::new("fmt-chain");
    let text = format!(
        "function f() -> Bool {{\n    return {}({}true)\n}}\n",
        "not ".repeat(200),
        "not ".repeat(200)
    );
    app.write("src/n.jadpo", &text);
    let path = app.path("src/n.jadpo").to_string_lossy().into_owned();
    let out = run(&["fmt", &path]);
    assert_no_panic(&out, "jadpo fmt");
    assert_eq!(out.status, 0, "{}", out.describe());
    let check = run(&["fmt", "--check", &path]);
    assert_eq!(check.status, 0, "{}", check.describe());
    assert_eq!(app.check().status, 0);
}

#[test]
fn new_app_named_after_a_yaml_word_checks() {
    for word in ["true", "null", "no"] {
        let base = App::new(&format!("new-{word}"));
        let dir = base.path(word).to_string_lossy().into_owned();
        let made = run(&["new", &dir]);
        assert_eq!(made.status, 0, "{}", made.describe());
        let out = run(&["check", &dir]);
        assert_eq!(out.status, 0, "jadpo new {word}: {}", out.describe());
    }
}

#[test]
fn fmt_refuses_a_path_it_cannot_format() {
    let app = App::new("fmt-special");
    let fifo = app.path("pipe.jadpo");
    make_fifo(&fifo);
    std::os::unix::fs::symlink("/dev/zero", app.path("zero.jadpo"))
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(app.path("empty")).unwrap_or_else(|e| panic!("{e}"));
    for name in ["pipe.jadpo", "zero.jadpo", "empty"] {
        let out = run(&["fmt", &app.path(name).to_string_lossy()]);
        assert_no_panic(&out, name);
        assert_eq!(out.status, 2, "{name}: {}", out.describe());
        assert!(
            !out.stdout.contains("0 files"),
            "{name}: {}",
            out.describe()
        );
    }
}

#[test]
fn machine_output_on_a_missing_path_is_a_document() {
    let app = App::new("missing-path");
    let missing = app.path("nowhere").to_string_lossy().into_owned();
    for args in [
        vec!["check", "--format", "json", missing.as_str()],
        vec!["test", "--format", "json", missing.as_str()],
    ] {
        let out = run(&args);
        assert_eq!(out.status, 2, "{}", out.describe());
        let doc: serde_json::Value = serde_json::from_str(&out.stdout)
            .unwrap_or_else(|e| panic!("{} is not JSON ({e}): {}", args[0], out.describe()));
        assert!(doc.to_string().contains("does not exist"), "{doc}");
    }
}

#[test]
fn fmt_without_a_path_formats_the_nearest_app_only() {
    let outer = App::new("fmt-nearest");
    let unformatted = "function   f() -> Int {\n  return 1\n}\n";
    outer.write("src/a.jadpo", unformatted);
    outer.write("other/jadpo.yaml", "app: other\n");
    outer.write("other/src/b.jadpo", unformatted);
    outer.write("repo/.git/HEAD", "ref: refs/heads/main\n");
    outer.write("repo/c.jadpo", unformatted);
    let out = Command::new(env!("CARGO_BIN_EXE_jadpo"))
        .arg("fmt")
        .current_dir(outer.path("src"))
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let read = |rel: &str| std::fs::read_to_string(outer.path(rel)).unwrap_or_default();
    assert_ne!(
        read("src/a.jadpo"),
        unformatted,
        "the app's own file is formatted"
    );
    assert_eq!(
        read("other/src/b.jadpo"),
        unformatted,
        "another app is left"
    );
    assert_eq!(
        read("repo/c.jadpo"),
        unformatted,
        "another repository is left"
    );
    // Outside any app, `jadpo fmt` names the problem and writes nothing.
    let nowhere = Command::new(env!("CARGO_BIN_EXE_jadpo"))
        .arg("fmt")
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(nowhere.status.code(), Some(2), "{nowhere:?}");
}

#[test]
fn a_flood_of_mistakes_is_counted_not_kept() {
    // 200,000 stray `;`: each was a diagnostic kept in memory (16 million
    // took 21 GB); past 10,000 in a file they are counted in one more.
    let app = App::new("semicolon-flood");
    app.write("src/a.jadpo", ";\n".repeat(200_000));
    let dir = app.dir.to_string_lossy().into_owned();
    let out = run(&["check", "--format", "json", &dir]);
    assert_no_panic(&out, "200,000 stray `;`");
    let doc: serde_json::Value =
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.describe()));
    assert_eq!(doc["summary"]["errors"], 10_001, "{}", out.describe());
    assert!(
        out.stdout.contains("syntax.too_many_mistakes")
            && out.stdout.contains("190000 more lexical mistakes"),
        "{}",
        out.describe()
    );
}
