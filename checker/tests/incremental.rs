//! The step analyzer's cache (used by the language server between edits)
//! gives exactly what a fresh analysis gives: apps are edited the way an
//! author edits them (a line added at the top, an action added in front,
//! a call broken, the edit undone) and after each edit the cached analysis
//! is compared with one from scratch, summary by summary and finding by
//! finding. The rules' cache is compared the same way: its findings must be
//! those of `rules::run` on a fresh analysis, in the same order.

use jadpo_checker::analysis::{self, Analysed, Cache};
use jadpo_checker::rules::Cache as RulesCache;
use jadpo_checker::{rules, Scope};
use jadpo_compiler::ir::{ActionId, Program, Revision};
use jadpo_compiler::load::{self, loaders::MemLoader};
use jadpo_compiler::source::Files;
use jadpo_compiler::{parser, resolve};
use std::collections::BTreeMap;
use std::path::Path;

const MANIFEST: &str =
    "app: fixture\npackages: { stripe: \"3\", github: \"1\", twilio: \"1\", postmark: \"1\" }\n";

const ADDED: &str = "action probe_added(request: Text) -> Unit {\n    return\n}\n";

/// A declaration that moves no action: the app is resolved afresh, its
/// context reads the same, and the last analysis is patched.
const TYPE_ADDED: &str = "type ProbeAdded = Int\n";

/// An app's files by path under the app folder `app/`.
type App = BTreeMap<String, String>;

fn compile(app: &App) -> Option<(Program, Files)> {
    let mut loader = MemLoader::new();
    for (path, text) in app {
        loader.insert(format!("app/{path}"), text.as_bytes());
    }
    let compiled = jadpo_compiler::compile(&loader, "app");
    Some((compiled.program?, compiled.files))
}

/// Everything an analysis gives, as text.
fn describe(program: &Program, files: &Files, analysed: &Analysed) -> String {
    let mut out = String::new();
    for i in 0..program.actions.len() {
        let id = ActionId(i as u32);
        out.push_str(&format!(
            "{i}: {:?}\n{:?}\n",
            analysed.summaries.get(id),
            analysed.follow_ups.get(id)
        ));
    }
    out.push_str(&format!("{:?}\n{:?}\n", analysed.cycles, analysed.callers));
    let cx = jadpo_checker::Cx {
        program,
        files,
        scope: &Scope::App,
        analysed,
    };
    out.push_str(&format!("{:?}\n", rules::run(&cx)));
    out
}

/// The caches kept between edits, as the language server keeps them: the
/// resolution's too, so bodies keep their revisions and the program its
/// context, and the last analysis is handed back to be patched.
#[derive(Default)]
struct Caches {
    summaries: Cache,
    rules: RulesCache,
    resolved: resolve::Cache,
    program: Option<Program>,
    /// Analyses patched from the last one.
    patched: usize,
}

/// `app` resolved with the kept resolution, as the language server does.
fn compile_kept(app: &App, caches: &mut Caches) -> Option<(Program, Files)> {
    let mut loader = MemLoader::new();
    for (path, text) in app {
        loader.insert(format!("app/{path}"), text.as_bytes());
    }
    let Ok(loaded) = load::load_project(&loader, "app") else {
        caches.program = None;
        return None;
    };
    let mut diags = loaded.diagnostics.clone();
    let asts = parser::parse_files(&loaded.files, &loaded.all_sources(), &mut diags);
    let previous = caches.program.as_mut();
    let program =
        resolve::resolve_cached(&loaded, &asts, &mut diags, &mut caches.resolved, previous);
    Some((program, loaded.files))
}

/// Analyses `app` with the caches and from scratch, and says how many
/// summaries were reused.
fn compare(app: &App, caches: &mut Caches, what: &str) -> usize {
    let Some((program, files)) = compile_kept(app, caches) else {
        return 0;
    };
    let cached = analysis::analyse_cached(&program, &mut caches.summaries);
    caches.patched += usize::from(caches.summaries.patched);
    let fresh = analysis::analyse(&program);
    assert_eq!(
        describe(&program, &files, &cached),
        describe(&program, &files, &fresh),
        "cached and fresh analyses differ after {what}"
    );
    let cache = &caches.summaries;
    assert_eq!(cache.reused + cache.computed, program.actions.len());
    let rules_cached = run_rules(&program, &files, &cached, Some(&mut caches.rules));
    let rules_fresh = run_rules(&program, &files, &fresh, None);
    assert_eq!(
        format!("{rules_cached:?}"),
        format!("{rules_fresh:?}"),
        "cached and fresh rule findings differ after {what}"
    );
    let reused = cache.reused;
    caches.summaries.give_back(cached);
    caches.program = Some(program);
    reused
}

/// `rules::run`, or `rules::run_cached` with `cache`.
fn run_rules(
    program: &Program,
    files: &Files,
    analysed: &Analysed,
    cache: Option<&mut RulesCache>,
) -> Vec<jadpo_compiler::diag::Diagnostic> {
    let cx = jadpo_checker::Cx {
        program,
        files,
        scope: &Scope::App,
        analysed,
    };
    match cache {
        Some(cache) => rules::run_cached(&cx, cache),
        None => rules::run(&cx),
    }
}

/// Edits every source file of `app` in turn, comparing after each edit.
fn edit_each_file(app: &App) {
    let mut cache = Caches::default();
    compare(app, &mut cache, "the first analysis");
    let again = compare(app, &mut cache, "no edit");
    let all = cache.summaries.reused + cache.summaries.computed;
    assert_eq!(again, all, "nothing reused");
    assert_eq!(
        cache.rules.computed, 0,
        "rule findings judged again with no edit"
    );
    let sources: Vec<String> = app
        .keys()
        .filter(|p| p.ends_with(".jadpo"))
        .cloned()
        .collect();
    for path in sources {
        let original = app.get(&path).cloned().unwrap_or_default();
        let edits = [
            ("a comment line added", format!("// edited\n{original}")),
            ("an action added in front", format!("{ADDED}{original}")),
            ("a type added in front", format!("{TYPE_ADDED}{original}")),
            (
                "a call broken",
                original.replacen("attempt ", "attempt x_", 1),
            ),
            ("a call made twice", twice(&original)),
            // Same length, so the same statement spans: only the heads
            // and value spans the resolver puts in the IR change.
            ("a `for` head broken", original.replacen(" in ", "\nin ", 1)),
            ("a colon moved", original.replacen(": ", " :", 1)),
            ("an action renamed", renamed(&original)),
            ("the edit undone", original.clone()),
        ];
        for (what, text) in edits {
            let mut edited = app.clone();
            edited.insert(path.clone(), text);
            compare(&edited, &mut cache, &format!("{what} in {path}"));
        }
    }
}

/// The first action declared at the start of a line renamed everywhere,
/// keeping the name's length: no span moves, only the names change.
fn renamed(text: &str) -> String {
    let name: String = text
        .lines()
        .find_map(|l| l.strip_prefix("action "))
        .map(|rest| {
            rest.chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        })
        .unwrap_or_default();
    let Some(first) = name.chars().next() else {
        return text.to_string();
    };
    let swap = if first == 'q' { 'r' } else { 'q' };
    let new_name = format!("{swap}{}", name.get(first.len_utf8()..).unwrap_or(""));
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(name.as_str()) {
        let before = rest.get(..at).unwrap_or("");
        let after = rest.get(at + name.len()..).unwrap_or("");
        let whole =
            !before.chars().last().is_some_and(word) && !after.chars().next().is_some_and(word);
        out.push_str(before);
        out.push_str(if whole { &new_name } else { &name });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The first `attempt` line repeated.
fn twice(text: &str) -> String {
    let mut out = String::new();
    let mut done = false;
    for line in text.lines() {
        out.push_str(line);
        out.push('\n');
        if !done && line.trim_start().starts_with("attempt ") {
            out.push_str(line);
            out.push('\n');
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

#[test]
fn example_apps_edited_match_fresh_analyses() {
    // Edits that change a few bodies and no call patch the last analysis;
    // the others reuse its summaries.
    cov_mark::check!(analysis_patches_the_last_one);
    cov_mark::check!(analysis_patches_across_a_fresh_resolution);
    cov_mark::check!(analysis_reuses_summaries);
    for name in ["billing", "mistakes"] {
        let root = repo(&format!("examples/{name}"));
        let mut app = App::new();
        read_dir(&root, &root, &mut app);
        assert!(app.len() > 2, "examples/{name} not found");
        edit_each_file(&app);
    }
}

/// The step and follow-up rule fixtures (cycles, loops, emits, package
/// calls), each edited the same way.
#[test]
fn rule_fixtures_edited_match_fresh_analyses() {
    cov_mark::check!(analysis_patches_the_last_one);
    let mut found = 0;
    for family in ["step", "effect", "follow_up"] {
        let dir = repo(&format!("tests/fixtures/rules/{family}"));
        let Ok(rules) = std::fs::read_dir(&dir) else {
            continue;
        };
        for rule in rules.flatten() {
            let Ok(cases) = std::fs::read_dir(rule.path()) else {
                continue;
            };
            for case in cases.flatten() {
                let path = case.path();
                let mut app = App::new();
                if path.is_dir() {
                    read_dir(&path, &path, &mut app);
                } else if path.extension().is_some_and(|e| e == "jadpo") {
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    app.insert("jadpo.yaml".into(), MANIFEST.into());
                    app.insert("fixture.jadpo".into(), text);
                } else {
                    continue;
                }
                found += 1;
                edit_each_file(&app);
            }
        }
    }
    assert!(found > 20, "only {found} fixtures found");
}

/// An event declared in one file and emitted in another: a line added
/// above the event moves its fields, which `follow_up.unbounded` labels,
/// while the emitting action's key stays the same.
#[test]
fn event_declared_in_another_file_edited() {
    let mut app = App::new();
    app.insert("jadpo.yaml".into(), "app: fixture\npackages: {}\n".into());
    app.insert(
        "events.jadpo".into(),
        "application Example {\n    events: { store: primary }\n}\n\nstore primary { kind: postgres }\n\n\
         type Code = Text { max_length: 16 }\n\ntype Codes = List<Code>\n\nevent Batch {\n    codes: Codes\n    note: Text\n}\n"
            .into(),
    );
    app.insert(
        "actions.jadpo".into(),
        "action batch(codes: Codes) -> Unit {\n    emit Batch { codes: codes note: \"n\" }\n}\n"
            .into(),
    );
    let mut caches = Caches::default();
    compare(&app, &mut caches, "the first analysis");
    let Some((program, files)) = compile(&app) else {
        panic!("the app does not compile");
    };
    let found = run_rules(&program, &files, &analysis::analyse(&program), None);
    assert!(
        found.iter().any(|d| d.code == "follow_up.unbounded"),
        "{found:#?}"
    );
    cov_mark::check!(analysis_patches_the_last_one);
    edit_each_file(&app);
}

/// Two versions of one app: the second's `charge` makes a provider call
/// the first's does not, everything else alike, each action with the same
/// revision in both (as if the resolver had kept every body).
fn two_versions() -> (Program, Program) {
    let mut app = App::new();
    app.insert("jadpo.yaml".into(), MANIFEST.into());
    let body = |call: &str| {
        format!(
            "action charge(customer: Text) -> Unit {{\n{call}    return\n}}\n\n\
             action other(request: Text) -> Unit {{\n    return\n}}\n"
        )
    };
    app.insert("a.jadpo".into(), body(""));
    let first = compile(&app).map(|(p, _)| p);
    let call = "    let c = attempt stripe.create_customer({ email: customer }) else { return }\n";
    app.insert("a.jadpo".into(), body(call));
    let second = compile(&app).map(|(p, _)| p);
    let (Some(mut first), Some(mut second)) = (first, second) else {
        panic!("the app does not compile");
    };
    for (a, b) in first.actions.iter_mut().zip(second.actions.iter_mut()) {
        a.revision = Revision::fresh();
        b.revision = a.revision;
    }
    (first, second)
}

/// A body's revision says it is the body read last time: its key and
/// calls are taken again without reading it, so a body swapped under an
/// unchanged revision (which the resolver never does) goes unseen. This
/// fails if the analysis reads every body on every edit.
#[test]
fn a_kept_revision_is_not_read_again() {
    let (first, second) = two_versions();
    let mut cache = Cache::default();
    analysis::analyse_cached(&first, &mut cache);
    let cached = analysis::analyse_cached(&second, &mut cache);
    assert_eq!(cache.computed, 0, "a kept revision was read again");
    let files = Files::default();
    assert_eq!(
        describe(&second, &files, &cached),
        describe(&second, &files, &analysis::analyse(&first)),
    );
}

/// A body checked afresh has a new revision and is read again: the
/// cached analysis is the fresh one.
#[test]
fn a_new_revision_is_read_again() {
    let (first, mut second) = two_versions();
    let charge = second.actions.find_id(|a| a.name.as_str() == "charge");
    let Some(charge) = charge else {
        panic!("no action `charge`");
    };
    second.actions[charge].revision = Revision::fresh();
    let mut cache = Cache::default();
    analysis::analyse_cached(&first, &mut cache);
    let cached = analysis::analyse_cached(&second, &mut cache);
    assert!(cache.computed > 0, "the new body was not read");
    let files = Files::default();
    assert_eq!(
        describe(&second, &files, &cached),
        describe(&second, &files, &analysis::analyse(&second)),
    );
}

/// A callee's body edited in one file, its caller in another file left as
/// it is: the caller's summary must follow the callee's (a patched
/// analysis walks up to the callers whose keys change). The second charge
/// makes `bill` multi-step, which `step.context` reports on the schedule
/// that reaches it through `nightly`.
#[test]
fn a_callee_edited_in_another_file_changes_its_callers() {
    let charge = |amount: u32| {
        format!("    attempt stripe.charges.create(stripe.ChargeCreate {{ customer: customer amount: {amount} currency: \"usd\" }})\n")
    };
    let bill = |calls: &str| {
        format!("action bill(customer: stripe.CustomerId) fails stripe.CardDeclined -> Unit {{\n{calls}}}\n")
    };
    let mut app = App::new();
    app.insert("jadpo.yaml".into(), MANIFEST.into());
    app.insert(
        "app.jadpo".into(),
        "application Fixture {\n    steps: { encryption_key: config.steps_key }\n    events: { store: primary }\n}\n\n\
         config FixtureConfig {\n    steps_key: StepsKey { binding: \"STEPS_KEY\" secret: true }\n}\n\n\
         store primary { kind: postgres }\n\ntype StepsKey = Text { max_length: 128 }\n\n\
         action nightly() fails stripe.CardDeclined -> Unit {\n    attempt bill(\"cus_1\")\n}\n\n\
         schedule nightly_bill every 1h {\n    run: nightly()\n}\n"
            .into(),
    );
    app.insert("bill.jadpo".into(), bill(&charge(1)));
    let mut caches = Caches::default();
    compare(&app, &mut caches, "the first analysis");
    app.insert(
        "bill.jadpo".into(),
        bill(&format!("{}{}", charge(1), charge(2))),
    );
    compare(&app, &mut caches, "a second charge in the callee");
    assert_eq!(caches.patched, 1, "the edit was not patched");
    let Some((program, files)) = compile(&app) else {
        panic!("the app does not compile");
    };
    let found = run_rules(&program, &files, &analysis::analyse(&program), None);
    assert!(found.iter().any(|d| d.code == "step.context"), "{found:#?}");
}

/// A fresh resolution whose context reads otherwise (here an operation
/// that no longer changes anything) is not patched, though every body
/// keeps its revision: each summary is keyed again. This fails if the
/// patch trusts a new context without comparing its key.
#[test]
fn a_context_that_reads_otherwise_is_not_patched() {
    let (_, mut second) = two_versions();
    let mut third = second.clone();
    let Some(op) = third.operations.iter_mut().find(|o| o.changes) else {
        panic!("no changing operation");
    };
    op.changes = false;
    second.context = Revision::fresh();
    third.context = Revision::fresh();
    let mut cache = Cache::default();
    let last = analysis::analyse_cached(&second, &mut cache);
    cache.give_back(last);
    let cached = analysis::analyse_cached(&third, &mut cache);
    let files = Files::default();
    assert_eq!(
        describe(&third, &files, &cached),
        describe(&third, &files, &analysis::analyse(&third)),
    );
    assert!(!cache.patched, "patched across a context that changed");
}
