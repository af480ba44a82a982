//! `jadpo fmt`: the canonical layout of spec/formatting.md. Every source in
//! the repository formats to a fixed point with its tree and comments kept;
//! the bundled packages and examples are formatted; a file with a syntax
//! error is never touched.

use jadpo_compiler::printer::{format_source, format_unchecked, FormatError};
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn sources(dirs: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in dirs {
        out.extend(jadpo::fmt::sources(&repo().join(dir)).expect("a source folder"));
    }
    out
}

fn format(text: &str) -> String {
    match format_source(text) {
        Ok(out) => out,
        Err(e) => panic!("{e:?}\n--- source\n{text}"),
    }
}

#[test]
fn every_source_formats_to_a_fixed_point_keeping_its_tree_and_comments() {
    let mut formatted = 0;
    for file in sources(&["examples", "packages", "stdlib/lib", "tests/fixtures"]) {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let once = match format_source(&text) {
            Ok(once) => once,
            Err(FormatError::Syntax(_)) => continue, // fixtures of syntax errors
            Err(e) => panic!("{}: {e:?}", file.display()),
        };
        // format_source checks tree and comments itself; this checks that
        // the check holds on the result too, and that it is a fixed point.
        let twice = format_source(&once)
            .unwrap_or_else(|e| panic!("{}: its formatted text: {e:?}", file.display()));
        assert_eq!(once, twice, "{}: fmt of fmt changes it", file.display());
        // `--check` formats without the check, to the same text.
        assert_eq!(format_unchecked(&text).ok().as_ref(), Some(&once));
        formatted += 1;
    }
    assert!(formatted >= 250, "only {formatted} sources formatted");
}

#[test]
fn the_bundled_packages_stdlib_and_examples_are_formatted() {
    let mut stale = Vec::new();
    for file in sources(&["examples", "packages", "stdlib/lib"]) {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        if format(&text) != text {
            stale.push(
                file.strip_prefix(repo())
                    .unwrap_or(&file)
                    .display()
                    .to_string(),
            );
        }
    }
    assert!(
        stale.is_empty(),
        "not formatted (run `jadpo fmt examples packages stdlib/lib`): {stale:?}"
    );
}

/// Comments in every place the grammar allows them.
const COMMENTS_EVERYWHERE: &str = r#"// the file's first comment

// before a type
type Id = Text { max_length: 64 }   // after a type
type Ids = List<Id> { max_length: 10 }


// two blank lines above became one
event Paid {
    // before a field
    id: Id // after a field
    // at the end of a field list
}

failure Declined {
    kind: Rejected // after a setting
    code: "declined"
}

// before a decline line
decline step.late_failure "reason"   // after a decline line
// between a decline and its action
action pay(id: Id) fails Declined -> Unit {   // after the header
    // first in a block
    var a = Paid { id: id }   // after a statement


    var b = Paid {   // after an opening brace
        id: id   // inside a construction
    }
    if a.id == b.id {
        emit Paid { id: id } with { queue: "q" }
    } // after a closing brace
    var c = match check(id) {
        success(v) => v // after an arm
        // before an arm
        failure Declined => false
    }
    var total = 1 + // inside an expression
        2
    // last in a block
}

action check(id: Id) fails Declined -> Bool {
    return true
}

route POST /pay {
    auth: none // after a route setting
    input: Id
    output: Unit
    run: pay(input)
}
// the file's last comment
"#;

#[test]
fn comments_in_every_place_are_kept() {
    let once = format(COMMENTS_EVERYWHERE);
    assert_eq!(format(&once), once, "a fixed point");
    insta::assert_snapshot!(once);
}

#[test]
fn long_constructions_and_arguments_break_one_per_line_past_the_width() {
    let long = "function f(a: Int, b: Int) -> Int {\n    return g(some_rather_long_argument_name, another_rather_long_argument_name, a_third_one_to_pass_the_width)\n}\n\nfunction g(x: Int, y: Int, z: Int) -> Int {\n    return x\n}\n";
    let out = format(long);
    assert!(out.lines().all(|l| l.chars().count() <= 100), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn an_empty_file_and_a_comment_only_file() {
    assert_eq!(format(""), "");
    assert_eq!(format("\n\n"), "");
    assert_eq!(
        format("// only\n\n\n// comments\n"),
        "// only\n\n// comments\n"
    );
}

fn jadpo(args: &[&str], dir: &Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_jadpo"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    dir
}

#[test]
fn check_lists_what_would_change_and_changes_nothing() {
    let dir = scratch("fmt-check");
    let messy = "type   A = Int\ntype B = Text {   max_length: 3 }\n";
    std::fs::write(dir.join("a.jadpo"), messy).expect("write");
    std::fs::write(dir.join("b.jadpo"), "type C = Int\n").expect("write");
    let (status, out, _) = jadpo(&["fmt", "--check", "."], &dir);
    assert_eq!(status, 1, "{out}");
    assert!(out.contains("would reformat ./a.jadpo"), "{out}");
    assert!(!out.contains("b.jadpo"), "{out}");
    assert_eq!(
        std::fs::read_to_string(dir.join("a.jadpo")).ok().as_deref(),
        Some(messy)
    );

    let (status, out, _) = jadpo(&["fmt", "."], &dir);
    assert_eq!(status, 0, "{out}");
    assert_eq!(
        std::fs::read_to_string(dir.join("a.jadpo")).ok().as_deref(),
        Some("type A = Int\ntype B = Text { max_length: 3 }\n")
    );
    // Without a path: the app the folder is in (none yet, then one).
    let (status, _, err) = jadpo(&["fmt", "--check"], &dir);
    assert_eq!(status, 2, "{err}");
    assert!(err.contains("no app here"), "{err}");
    std::fs::write(dir.join("jadpo.yaml"), "app: fmt_check\n").expect("write");
    let (status, out, _) = jadpo(&["fmt", "--check"], &dir);
    assert_eq!(status, 0, "{out}");
    assert!(
        out.contains("0 files would be reformatted, 2 files already formatted"),
        "{out}"
    );
}

#[test]
fn a_file_with_a_syntax_error_is_reported_and_left_untouched() {
    let dir = scratch("fmt-syntax");
    let broken = "type   A = Int\naction f( -> Unit {\n}\n";
    std::fs::write(dir.join("bad.jadpo"), broken).expect("write");
    let (status, _, err) = jadpo(&["fmt", "bad.jadpo"], &dir);
    assert_eq!(status, 1);
    assert!(
        err.contains("bad.jadpo: it has a syntax error at 2:"),
        "{err}"
    );
    assert!(err.contains("left as it is"), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.join("bad.jadpo"))
            .ok()
            .as_deref(),
        Some(broken)
    );
}

#[test]
fn links_are_not_followed_and_a_missing_path_is_exit_2() {
    let dir = scratch("fmt-links");
    let outside = scratch("fmt-links-outside");
    std::fs::write(outside.join("o.jadpo"), "type   O = Int\n").expect("write");
    std::os::unix::fs::symlink(outside.join("o.jadpo"), dir.join("link.jadpo")).expect("link");
    std::os::unix::fs::symlink(&outside, dir.join("linked_dir")).expect("link");
    std::fs::write(dir.join("own.jadpo"), "type Own = Int\n").expect("write");
    let (status, out, _) = jadpo(&["fmt", "."], &dir);
    assert_eq!(status, 0, "{out}");
    assert_eq!(
        std::fs::read_to_string(outside.join("o.jadpo"))
            .ok()
            .as_deref(),
        Some("type   O = Int\n"),
        "a file reached through a link is not rewritten"
    );
    let (status, _, err) = jadpo(&["fmt", "no/such/folder"], &dir);
    assert_eq!(status, 2, "{err}");
}
