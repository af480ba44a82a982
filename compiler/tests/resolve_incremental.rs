//! Resolution after an edit (`resolve_cached`, used by the language server
//! between edits) gives exactly what a fresh resolution gives: apps are
//! edited the way an author edits them (a line added at the top, a line
//! added in a body, a call broken, an action or a type added in front, a
//! declaration renamed, a parameter added, the edit undone), and after
//! each edit the program and the diagnostics of the moved, carried or
//! fresh resolution are compared with a fresh compile's. Which path an
//! edit takes is proven by the coverage marks of `patch.rs`, `carry.rs`
//! and `resolve/mod.rs` (`cov_mark::check!`), one test per path.

use crate::differ::difference;
use jadpo_compiler::ir::Program;
use jadpo_compiler::load::{self, loaders::MemLoader};
use jadpo_compiler::{parser, resolve};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

const MANIFEST: &str =
    "app: fixture\npackages: { stripe: \"3\", github: \"1\", twilio: \"1\", postmark: \"1\" }\n";

const ADDED: &str = "action probe_added(request: Text) -> Unit {\n    return\n}\n";

/// An app's files by path under the app folder `app/`.
type App = BTreeMap<String, String>;

fn loader(app: &App) -> MemLoader {
    let mut loader = MemLoader::new();
    for (path, text) in app {
        loader.insert(format!("app/{path}"), text.as_bytes());
    }
    loader
}

/// The last resolution's cache and program, carried from edit to edit.
#[derive(Default)]
struct Session {
    cache: resolve::Cache,
    previous: Option<Program>,
}

impl Session {
    /// The app of `files`, resolved a first time.
    fn start<'f>(files: impl IntoIterator<Item = &'f (&'f str, &'f str)>) -> (App, Session) {
        let app: App = files
            .into_iter()
            .map(|(path, text)| (path.to_string(), text.to_string()))
            .collect();
        let mut session = Session::default();
        session.compare(&app, "the first resolution");
        (app, session)
    }

    /// Resolves `app` with reuse and from scratch; both must agree.
    fn compare(&mut self, app: &App, what: &str) {
        let loader = loader(app);
        let fresh = jadpo_compiler::compile(&loader, "app");
        let Ok(loaded) = load::load_project(&loader, "app") else {
            assert!(
                fresh.program.is_none(),
                "{what}: only the fresh load failed"
            );
            self.previous = None;
            return;
        };
        let mut diags = loaded.diagnostics.clone();
        let asts = parser::parse_files(&loaded.files, &loaded.all_sources(), &mut diags);
        let program = resolve::resolve_cached(
            &loaded,
            &asts,
            &mut diags,
            &mut self.cache,
            self.previous.as_mut(),
        );
        same(
            &diags,
            &fresh.diagnostics,
            &format!("diagnostics after {what}"),
        );
        same(
            &Some(&program),
            &fresh.program.as_ref(),
            &format!("programs after {what}"),
        );
        self.previous = Some(program);
    }
}

/// Fails with the first line where the two values' layouts differ.
fn same<T: std::fmt::Debug>(reused: &T, fresh: &T, what: &str) {
    if let Some((at, reused, fresh)) = difference(reused, fresh) {
        panic!("{what} differ at line {at}:\n--- reused\n{reused}\n--- fresh\n{fresh}");
    }
}

/// Edits every source file of `app` in turn, comparing after each edit.
fn edit_each_file(app: &App) {
    let mut session = Session::default();
    session.compare(app, "the first resolution");
    session.compare(app, "no edit");
    let sources: Vec<String> = app
        .keys()
        .filter(|p| p.ends_with(".jadpo"))
        .cloned()
        .collect();
    for path in sources {
        let original = app.get(&path).cloned().unwrap_or_default();
        let opened = original.replacen("attempt ", "attempt (", 1);
        let edits = [
            ("a comment line added", format!("// edited\n{original}")),
            ("a line added in a body", in_first_body(&original)),
            (
                "a call broken",
                original.replacen("attempt ", "attempt x_", 1),
            ),
            // A syntax error in a body, then an edit of the broken file
            // (typing passes through such states).
            ("a parenthesis opened", opened.clone()),
            ("a line added above it", format!("// edited\n{opened}")),
            ("an action added in front", format!("{ADDED}{original}")),
            ("a type added in front", format!("{TYPE_ADDED}{original}")),
            (
                "a declaration renamed",
                first_declaration_renamed(&original),
            ),
            (
                "a parameter added",
                first_action_given_a_parameter(&original),
            ),
            ("a brace removed", original.replacen('}', "", 1)),
            ("the edit undone", original.clone()),
        ];
        for (what, text) in edits {
            let mut edited = app.clone();
            edited.insert(path.clone(), text);
            session.compare(&edited, &format!("{what} in {path}"));
        }
    }
}

const TYPE_ADDED: &str = "type ProbeAdded = Text { max_length: 8 }\n";

/// The first type, entity, event, failure or function declared at the
/// start of a line renamed: what named it elsewhere no longer does.
fn first_declaration_renamed(text: &str) -> String {
    for word in ["type ", "entity ", "event ", "failure ", "function "] {
        for (at, _) in text.match_indices(word) {
            if at == 0 || text[..at].ends_with('\n') {
                let name_at = at + word.len();
                let len = text[name_at..]
                    .find(|c: char| !c.is_alphanumeric() && c != '_')
                    .unwrap_or(0);
                if len > 0 {
                    let end = name_at + len;
                    return format!("{}Renamed{}", &text[..end], &text[end..]);
                }
            }
        }
    }
    text.to_string()
}

/// The first action declared at the start of a line given a first
/// parameter: every call of it is now short of one.
fn first_action_given_a_parameter(text: &str) -> String {
    for (at, _) in text.match_indices("action ") {
        if at == 0 || text[..at].ends_with('\n') {
            if let Some(open) = text[at..].find('(') {
                let open = at + open + 1;
                let comma = if text[open..].starts_with(')') {
                    ""
                } else {
                    ", "
                };
                return format!("{}probe: Int{comma}{}", &text[..open], &text[open..]);
            }
        }
    }
    text.to_string()
}

/// A comment line after the first line opening an action's body.
fn in_first_body(text: &str) -> String {
    let mut out = String::new();
    let mut done = false;
    for line in text.lines() {
        out.push_str(line);
        out.push('\n');
        if !done && line.starts_with("action ") && line.trim_end().ends_with('{') {
            out.push_str("    // a note\n");
            done = true;
        }
    }
    out
}

fn read_dir(root: &Path, dir: &Path, app: &mut App) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            read_dir(root, &path, app);
        } else if let (Ok(text), Ok(rel)) =
            (std::fs::read_to_string(&path), path.strip_prefix(root))
        {
            app.insert(rel.to_string_lossy().replace('\\', "/"), text);
        }
    }
}

fn repo(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

/// Every fixture under `tests/fixtures/<area>`, as apps.
fn fixtures(area: &str) -> Vec<App> {
    let mut apps = Vec::new();
    let mut dirs = vec![repo(&format!("tests/fixtures/{area}"))];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        entries.sort();
        for path in entries {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let case = name.starts_with("pass_") || name.starts_with("fail_");
            if path.is_dir() && case {
                let mut app = App::new();
                read_dir(&path, &path, &mut app);
                apps.push(app);
            } else if path.is_dir() {
                dirs.push(path);
            } else if case && name.ends_with(".jadpo") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let mut app = App::new();
                app.insert("jadpo.yaml".into(), MANIFEST.into());
                app.insert("fixture.jadpo".into(), text);
                apps.push(app);
            }
        }
    }
    apps
}

#[test]
fn example_apps_edited_match_fresh_resolutions() {
    // Edits keep the context and move the last resolution, and others
    // resolve afresh: both paths are compared.
    cov_mark::check!(patch_moves_the_last_resolution);
    cov_mark::check!(resolve_afresh_in_another_context);
    cov_mark::check!(carry_keeps_a_body);
    for name in ["billing", "mistakes"] {
        let root = repo(&format!("examples/{name}"));
        let mut app = App::new();
        read_dir(&root, &root, &mut app);
        assert!(app.len() > 2, "examples/{name} not found");
        edit_each_file(&app);
    }
}

/// Name, type and failure fixtures: the diagnostics that point across
/// files and the recovery from syntax errors.
#[test]
fn name_and_syntax_fixtures_edited_match_fresh_resolutions() {
    let mut apps = fixtures("names");
    apps.extend(fixtures("syntax"));
    assert!(apps.len() > 30, "only {} fixtures found", apps.len());
    apps.par_iter().for_each(edit_each_file);
}

#[test]
fn rule_and_package_fixtures_edited_match_fresh_resolutions() {
    let mut apps = fixtures("rules");
    apps.extend(fixtures("packages"));
    assert!(apps.len() > 30, "only {} fixtures found", apps.len());
    apps.par_iter().for_each(edit_each_file);
}

/// A diagnostic in one file with a label in another (`code` is declared
/// here): after an edit that moves the other file's text, the label must
/// move too, although the file with the diagnostic did not change.
#[test]
fn labels_into_an_edited_file_follow_the_edit() {
    let mut app = App::new();
    app.insert("jadpo.yaml".into(), "app: two\n".into());
    let a = "store primary { kind: postgres }\n\
             application App { events: { store: primary } }\n\
             type Code = Text { max_length: 8 }\n\
             event Started {\n    code: Code\n}\n";
    app.insert("a.jadpo".into(), a.into());
    app.insert(
        "b.jadpo".into(),
        "action start() -> Unit {\n    emit Started { }\n}\n\
         action other() -> Int {\n    return 1\n}\n"
            .into(),
    );
    let mut session = Session::default();
    session.compare(&app, "the first resolution");
    cov_mark::check_count!(patch_moves_the_last_resolution, 2);
    app.insert("a.jadpo".into(), format!("// moved\n\n{a}"));
    session.compare(&app, "lines added above the event");
    app.insert("a.jadpo".into(), a.into());
    session.compare(&app, "the lines removed");
}

/// Typing inside a file that does not parse: once a parenthesis is open,
/// further edits keep the same tokens outside bodies and the same broken
/// file, so they move the last resolution instead of resolving the app
/// again; each result is a fresh resolution's.
#[test]
fn edits_of_a_file_that_does_not_parse_are_moved() {
    let root = repo("examples/billing");
    let mut app = App::new();
    read_dir(&root, &root, &mut app);
    let path = "src/payments.jadpo".to_string();
    let original = app.get(&path).cloned().unwrap_or_default();
    let call = "stripe.subscriptions.cancel(";
    assert!(original.contains(call), "{path} changed");
    let open = |typed: &str| original.replacen(call, &format!("{call}({typed}"), 1);
    let mut session = Session::default();
    session.compare(&app, "the first resolution");
    // All but the first edit, which breaks the file, keep the context.
    cov_mark::check_count!(patch_moves_the_last_resolution, 4);
    for (what, text) in [
        ("a parenthesis opened", open("")),
        ("a letter typed in it", open("x")),
        ("another letter", open("xy")),
        ("a line added above", format!("// note\n{}", open("xy"))),
        ("the letters removed", format!("// note\n{}", open(""))),
    ] {
        app.insert(path.clone(), text);
        session.compare(&app, what);
    }
}

/// The effect tree with the code stripped: what an effects-only resolution
/// gives.
fn without_code(mut p: Program) -> Program {
    for a in &mut p.actions {
        a.code = Default::default();
    }
    for f in &mut p.functions {
        f.code = Default::default();
    }
    for e in &mut p.entries {
        e.run_args.clear();
    }
    // A test's statements, a fixture's values and a fake's answers are
    // code too.
    for t in &mut p.tests {
        t.steps.clear();
    }
    for f in &mut p.fixtures {
        f.config.clear();
        f.fakes.clear();
    }
    p
}

/// Lowering the code of every body is the same resolution: the same
/// diagnostics and the same effect tree as an effects-only one, on every
/// example and fixture; and the code is there.
#[test]
fn lowering_code_changes_nothing_else() {
    let mut apps = fixtures("names");
    apps.extend(fixtures("syntax"));
    apps.extend(fixtures("rules"));
    apps.extend(fixtures("packages"));
    for name in ["billing", "mistakes"] {
        let root = repo(&format!("examples/{name}"));
        let mut app = App::new();
        read_dir(&root, &root, &mut app);
        apps.push(app);
    }
    let mut with_code = 0;
    for app in &apps {
        let loader = loader(app);
        let plain = jadpo_compiler::compile(&loader, "app");
        let coded = jadpo_compiler::compile_with(&loader, "app", resolve::Lowering::Code);
        same(
            &coded.diagnostics,
            &plain.diagnostics,
            "diagnostics with and without code",
        );
        let has_code = coded
            .program
            .as_ref()
            .is_some_and(|p| p.actions.iter().any(|a| !a.code.stmts.is_empty()));
        with_code += usize::from(has_code);
        same(
            &coded.program.map(without_code),
            &plain.program,
            "effect trees with and without code",
        );
    }
    assert!(with_code > 100, "only {with_code} apps had code");
}

/// Kept bodies keep their revision and re-checked ones get a new one, so
/// the checker reads again exactly the bodies that changed. This fails if
/// a kept body lost its revision or an edited one kept it.
#[test]
fn kept_bodies_keep_their_revision() {
    let mut app = App::new();
    app.insert("jadpo.yaml".into(), MANIFEST.into());
    let action = |name: &str| format!("action {name}(request: Text) -> Unit {{\n    return\n}}\n");
    app.insert("a.jadpo".into(), action("first"));
    app.insert("b.jadpo".into(), action("second"));
    let mut session = Session::default();
    session.compare(&app, "the first resolution");
    let before = revisions(session.previous.as_ref());
    app.insert("a.jadpo".into(), in_first_body(&action("first")));
    session.compare(&app, "a line added in a body");
    let after = revisions(session.previous.as_ref());
    assert!(before.iter().all(|(_, r)| r.is_known()), "{before:?}");
    assert!(after.iter().all(|(_, r)| r.is_known()), "{after:?}");
    let changed: Vec<&str> = before
        .iter()
        .zip(&after)
        .filter(|(b, a)| b.1 != a.1)
        .map(|(b, _)| b.0.as_str())
        .collect();
    assert_eq!(changed, ["first"]);
}

fn revisions(program: Option<&Program>) -> Vec<(String, jadpo_compiler::ir::Revision)> {
    program
        .map(|p| {
            p.actions
                .iter()
                .map(|a| (a.qualified.clone(), a.revision))
                .collect()
        })
        .unwrap_or_default()
}

/// A one-file app `a.jadpo` with `text`.
fn one_file(text: &str) -> App {
    let mut app = App::new();
    app.insert("jadpo.yaml".into(), "app: one\n".into());
    app.insert("a.jadpo".into(), text.into());
    app
}

/// Resolves `text`, then `text` with a line added in its first action's
/// body, comparing both with fresh resolutions.
fn edit_first_body(text: &str) {
    let mut app = one_file(text);
    let mut session = Session::default();
    session.compare(&app, "the first resolution");
    app.insert("a.jadpo".into(), in_first_body(text));
    session.compare(&app, "a line added in the first body");
}

const ACTION: &str = "action start(n: Int) -> Int {\n    return n\n}\n";

/// The tests and fixtures of a changed file moved with the edit: they are
/// resolved again, with their diagnostics, whatever follows the edit.
#[test]
fn a_body_edit_above_tests_resolves_the_tests_again() {
    cov_mark::check!(patch_moves_the_last_resolution);
    cov_mark::check!(patch_resolves_the_tests_again);
    edit_first_body(&format!(
        "{ACTION}\nfixture plain {{\n    attempts: 3\n}}\n\n\
         test \"starts\" using plain {{\n    var n = call start(1)\n    assert n == 1\n}}\n\n\
         test \"unknown\" using nothing {{\n    assert 1 == 1\n}}\n"
    ));
}

/// A route's inline action below an edited body moves: it is checked
/// again, with its diagnostics.
#[test]
fn a_body_edit_above_an_inline_route_action_rechecks_it() {
    cov_mark::check!(patch_moves_the_last_resolution);
    cov_mark::check!(patch_rechecks_a_route_action);
    edit_first_body(&format!(
        "{ACTION}\nroute POST /starts {{\n    auth: none\n    output: Unit\n    \
         action: {{\n        var n = start(\"x\")\n    }}\n}}\n"
    ));
}

/// An edit of declarations in one file: the bodies elsewhere that can see
/// it are checked again, through their own header (`pay`), a callee's
/// (`use_pay`), a config entry (`key_value`) or an id the edit moved
/// (`first` calls `last`, declared after the edited file); the others
/// are carried.
#[test]
fn declaration_edits_recheck_the_bodies_they_reach() {
    cov_mark::check!(carry_keeps_a_body);
    let (mut app, mut session) = Session::start(&[
        ("jadpo.yaml", "app: five\n"),
        (
            "a.jadpo",
            "action first() -> Int {\n    return last(1)\n}\n",
        ),
        ("b.jadpo", "type Amount = Int\ntype Key = Int\n"),
        (
            "c.jadpo",
            "action pay(n: Amount) -> Int {\n    return n\n}\n",
        ),
        (
            "d.jadpo",
            "action use_pay() -> Int {\n    return pay(1)\n}\n\
             action last(n: Int) -> Int {\n    return n\n}\n",
        ),
        (
            "e.jadpo",
            "config Settings {\n    key: Key { binding: \"KEY\" }\n}\n\
             action key_value() -> Int {\n    return config.key\n}\n",
        ),
    ]);
    for (what, text) in [
        ("Amount made Text", "type Amount = Text\ntype Key = Int\n"),
        (
            "Amount made Int again",
            "type Amount = Int\ntype Key = Int\n",
        ),
        ("Key made Text", "type Amount = Int\ntype Key = Text\n"),
        ("Key made Int again", "type Amount = Int\ntype Key = Int\n"),
        (
            "an action declared in front",
            "action added() -> Int {\n    return 1\n}\ntype Amount = Int\ntype Key = Int\n",
        ),
    ] {
        app.insert("b.jadpo".into(), text.into());
        session.compare(&app, what);
    }
}

/// Function bodies are carried like action bodies, with the names
/// written in them counted with their file's declarations: those that see
/// the edit are checked again, through their own header (`pay`), a callee
/// in the same file (`use_pay` and `last` share `d.jadpo` with `pay`) or
/// an id the edit moved (`first` calls `last`, declared after the edited
/// file), or a finding of its own (`wrong`); the others (`plain`) are
/// carried.
#[test]
fn declaration_edits_recheck_the_functions_they_reach() {
    cov_mark::check!(carry_keeps_a_function);
    let (mut app, mut session) = Session::start(&[
        ("jadpo.yaml", "app: functions\n"),
        (
            "a.jadpo",
            "function first() -> Int {\n    return last(1)\n}\n",
        ),
        ("b.jadpo", "type Amount = Int\n"),
        (
            "c.jadpo",
            "function pay(n: Amount) -> Int {\n    return n\n}\n",
        ),
        (
            "d.jadpo",
            "function use_pay() -> Int {\n    return pay(1)\n}\n\
             function last(n: Int) -> Int {\n    return n\n}\n",
        ),
        (
            "e.jadpo",
            "function plain(n: Int) -> Int {\n    return n + 1\n}\n\
             function wrong() -> Int {\n    return \"one\"\n}\n",
        ),
    ]);
    for (what, text) in [
        ("Amount made Text", "type Amount = Text\n"),
        ("Amount made Int again", "type Amount = Int\n"),
        (
            "a function declared in front",
            "function added() -> Int {\n    return 1\n}\ntype Amount = Int\n",
        ),
        ("as it was", "type Amount = Int\n"),
    ] {
        app.insert("b.jadpo".into(), text.into());
        session.compare(&app, what);
    }
}

/// Declarations that move only within the edited file move no id a
/// carried body holds: no carried body is walked, and those that name
/// what moved (`settle` calls `charge`, matches `Declined`, emits
/// `Charged`) are checked again.
#[test]
fn declarations_moved_within_the_edited_file_walk_no_body() {
    cov_mark::check!(carry_walks_no_body);
    let b = "failure Declined {\n    kind: Rejected\n    code: \"declined\"\n}\n\n\
             event Charged { id: Text }\n\n\
             entity Ledger {\n    id: Text\n    total: Int\n}\n\n\
             action charge(n: Int) fails Declined -> Int {\n    return n\n}\n";
    let (mut app, mut session) = Session::start(&[
        ("jadpo.yaml", "app: moved\n"),
        ("a.jadpo", "action plain() -> Int {\n    return 1\n}\n"),
        ("b.jadpo", b),
        (
            "c.jadpo",
            "action settle() -> Int {\n    var n = attempt charge(1) match {\n        \
             Declined => return 0\n    }\n    emit Charged { id: \"x\" }\n    return n\n}\n",
        ),
    ]);
    for (what, text) in [
        ("a type added in front", format!("type Added = Int\n{b}")),
        ("a line added in front", format!("\n{b}")),
        ("as it was", b.to_string()),
    ] {
        app.insert("b.jadpo".into(), text);
        session.compare(&app, what);
    }
}

/// The other ways a declaration reaches a body it is not named in: an
/// operation's answer (`notify`), a failure's fields (`refuse_short`), a
/// type's fields, two and three types away (`wrapped`, `deep`), an alias
/// (`aliased`), a callee's `fails` (`outer`), and a config entry declared
/// in the edited file (`limit`); and `Amount` renamed away from all that
/// mention it.
#[test]
fn declaration_edits_reach_through_operations_failures_and_config() {
    cov_mark::check!(carry_keeps_a_body);
    let (mut app, mut session) = Session::start(&CARRY_APP);
    let edits = [
        (
            "packages/mailer/sent.jadpo",
            "id: Text { max_length: 64 }",
            "id: Int",
        ),
        ("b.jadpo", "Amount = Int", "Amount = Text"),
        ("b.jadpo", "Amount = Int", "Total = Int"),
        (
            "b.jadpo",
            "\n",
            "\nfailure Missing {\n    kind: Rejected\n    code: \"m\"\n}\n",
        ),
        ("d.jadpo", "limit: Int", "limit: Text"),
        ("packages/mailer/package.yaml", "[Bounced]", "[]"),
        (
            "packages/mailer/package.yaml",
            "changes: true",
            "changes: false",
        ),
        (
            "packages/mailer/package.yaml",
            "answer: Sent",
            "answer: Email",
        ),
    ];
    for (path, from, to) in edits {
        let original = app.get(path).cloned().unwrap_or_default();
        assert!(original.contains(from), "{path} changed");
        app.insert(path.into(), original.replacen(from, to, 1));
        session.compare(&app, &format!("{from} made {to} in {path}"));
        app.insert(path.into(), original);
        session.compare(&app, &format!("{path} as it was"));
    }
}

/// Entry points are carried across a declaration edit they cannot see,
/// their types moved to the new ids (`c.jadpo` declares types, actions and
/// an event after the edited `b.jadpo`); those that name what the edit
/// changed, however indirectly, or whose action or event moved, are
/// resolved again (`e.jadpo` names `Amount` through `Bill`; `d.jadpo`
/// holds one with a finding).
#[test]
fn declaration_edits_keep_the_entry_points_they_cannot_reach() {
    cov_mark::check!(carry_keeps_an_entry);
    let (mut app, mut session) = Session::start(&ENTRY_APP);
    let edits = [
        (
            "a type added in front",
            "type Added = Int\ntype Amount = Int\n",
        ),
        (
            "an event added in front",
            "event Early { id: Text }\ntype Amount = Int\n",
        ),
        (
            "an action added in front",
            "action early() -> Unit {\n}\ntype Amount = Int\n",
        ),
        ("Amount made Text", "type Amount = Text\n"),
        (
            "OrderId declared again",
            "type OrderId = Int\ntype Amount = Int\n",
        ),
    ];
    for (what, text) in edits {
        app.insert("b.jadpo".into(), text.into());
        session.compare(&app, what);
        app.insert("b.jadpo".into(), "type Amount = Int\n".into());
        session.compare(&app, &format!("{what}, undone"));
    }
    // An entry point's own file edited (it declares nothing the edit
    // changes): it is resolved again.
    let original = app.get("f.jadpo").cloned().unwrap_or_default();
    app.insert(
        "f.jadpo".into(),
        original.replacen("show(path.id)", "sweep()", 1),
    );
    session.compare(&app, "a route's run: edited");
}

const ENTRY_APP: [(&str, &str); 7] = [
    ("jadpo.yaml", "app: shop\n"),
    (
        "a.jadpo",
        "application Shop {\n    events: { store: primary }\n}\n\n\
         store primary { kind: postgres }\n\n\
         type OrderId = Text { max_length: 64 }\n\n\
         type Order = Object { id: OrderId }\n\n\
         action place(order: Order) -> Unit {\n}\n\n\
         action show(id: OrderId) -> Unit {\n}\n\n\
         action ship(id: Text) -> Unit {\n}\n\n\
         action sweep() -> Unit {\n}\n\n\
         action pay(total: Int) -> Unit {\n}\n",
    ),
    ("b.jadpo", "type Amount = Int\n"),
    (
        "c.jadpo",
        "type Receipt = Object { id: OrderId }\n\n\
         event OrderPlaced { order_id: Text }\n\n\
         action receipt(id: OrderId) -> Receipt {\n    return Receipt { id: id }\n}\n\n\
         route POST /orders {\n    auth: none\n    idempotency_key: required\n    \
         input: Order\n    output: Unit\n    run: place(input)\n}\n\n\
         route GET /orders/{id} {\n    auth: none\n    path: { id: OrderId }\n    \
         output: Unit\n    run: show(path.id)\n}\n\n\
         route GET /receipts/{id} {\n    auth: none\n    path: { id: OrderId }\n    \
         output: Receipt\n    run: receipt(path.id)\n}\n\n\
         subscriber ship_order on OrderPlaced {\n    run: ship(event.order_id)\n}\n\n\
         schedule nightly every 1d {\n    run: sweep()\n}\n",
    ),
    (
        "d.jadpo",
        "route POST /refunds {\n    auth: none\n    idempotency_key: required\n    \
         input: Order\n    output: OrderId\n    run: place(input)\n}\n",
    ),
    (
        "e.jadpo",
        "type Bill = Object { total: Amount }\n\n\
         route POST /payments {\n    auth: none\n    idempotency_key: required\n    \
         input: Bill\n    output: Unit\n    run: pay(input.total)\n}\n",
    ),
    (
        "f.jadpo",
        "route GET /shown/{id} {\n    auth: none\n    path: { id: OrderId }\n    \
         output: Unit\n    run: show(path.id)\n}\n",
    ),
];

const CARRY_APP: [(&str, &str); 9] = [
    ("jadpo.yaml", "app: shop\npackages:\n  mailer: \"1\"\n"),
    (
        "packages/mailer/package.yaml",
        "package: mailer\nversion: 1.0.0\noperations:\n  email.send:\n    request: Email\n    \
         answer: Sent\n    changes: true\n    failures: [Bounced]\n",
    ),
    (
        "packages/mailer/mailer.jadpo",
        "type Email = Object {\n    to: Text { max_length: 512 }\n}\n\n\
         failure Bounced {\n    kind: Rejected\n    code: \"bounced\"\n}\n",
    ),
    (
        "packages/mailer/sent.jadpo",
        "type Sent = Object {\n    id: Text { max_length: 64 }\n}\n",
    ),
    (
        "a.jadpo",
        "action notify(to: Text) fails mailer.Bounced -> Text {\n    \
         var sent = attempt mailer.email.send(mailer.Email { to: to })\n    return sent.id\n}\n\n\
         action callee() fails Missing -> Unit {\n    return\n}\n\n\
         action outer() -> Unit {\n    attempt callee()\n    return\n}\n",
    ),
    ("b.jadpo", "type Amount = Int\n"),
    (
        "c.jadpo",
        "failure Short {\n    kind: Rejected\n    code: \"short\"\n    amount: Amount\n}\n\n\
         action refuse_short() fails Short -> Unit {\n    reject Short { amount: 1 }\n}\n\n\
         type Wrapper = Object {\n    amount: Amount\n}\n\n\
         type Outer = Object {\n    inner: Wrapper\n}\n\n\
         action wrapped(w: Outer) -> Int {\n    return w.inner.amount\n}\n\n\
         type Outermost = Object {\n    outer: Outer\n}\n\n\
         action deep(o: Outermost) -> Int {\n    return o.outer.inner.amount\n}\n\n\
         type Cents = Amount\n\n\
         action aliased(c: Cents) -> Int {\n    return c\n}\n",
    ),
    (
        "d.jadpo",
        "config Settings {\n    limit: Int { binding: \"LIMIT\" }\n}\n",
    ),
    (
        "e.jadpo",
        "action limit() -> Int {\n    return config.limit\n}\n",
    ),
];

/// The same tokens outside bodies on other lines can read differently:
/// `return` takes a value on its own line only. Such an edit is resolved
/// afresh.
#[test]
fn a_token_moved_to_another_line_resolves_afresh() {
    cov_mark::check!(patch_finds_a_token_on_another_line);
    let text = |ret: &str| format!("function one() -> Int {{\n    {ret}\n}}\n{ACTION}");
    let mut app = one_file(&text("return 1"));
    let mut session = Session::default();
    session.compare(&app, "the first resolution");
    app.insert("a.jadpo".into(), text("return\n    1"));
    session.compare(&app, "the value moved to the next line");
}

/// A span inside a token (a placeholder in a route's path) has no certain
/// place after an edit above it: the edit is resolved afresh.
#[test]
fn a_span_inside_a_token_resolves_afresh() {
    cov_mark::check!(patch_finds_a_span_without_a_place);
    edit_first_body(&format!(
        "{ACTION}\nroute POST /starts/{{id}}/{{id}} {{\n    auth: none\n    output: Unit\n    \
         action: {{\n        var n = start(1)\n    }}\n}}\n"
    ));
}

/// A file the parser recovered at the top level holds an item no locator
/// finds: an edit there is resolved afresh.
#[test]
fn a_body_edit_in_a_recovered_file_resolves_afresh() {
    cov_mark::check!(patch_refuses_a_recovered_file);
    edit_first_body(&format!("{ACTION}\n@@ not an item\n"));
}
