//! The workspace's caches, all at once: a kept workspace (the editor's, `jadpo
//! watch`'s) is edited the way an author edits an app, and after every edit
//! its run is compared with a fresh `Workspace::once` run of the same texts:
//! the diagnostics, their order, and each action's plan entry planned from
//! the kept analysis against the fresh whole plan. Every cache the workspace
//! owns (manifest trees, parses, resolved items, summaries, findings) is
//! exercised here; one that answers with a stale result shows as a
//! difference. The editor's own differential test (`lsp_differential`, in
//! the slow binary) drives the server over stdio the same way.

use crate::common::{all_fixtures, Fixture, ROOT};
use jadpo::workspace::{Snapshot, Workspace};
use jadpo_compiler::load::MemLoader;
use jadpo_compiler::resolve::Lowering;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

type App = BTreeMap<String, String>;

const ADDED: &str = "\naction workspace_added(request: Text) -> Unit {\n    return\n}\n";

fn loader(app: &App) -> MemLoader {
    let mut loader = MemLoader::new();
    for (path, text) in app {
        loader.insert(format!("{ROOT}/{path}"), text.as_bytes());
    }
    loader
}

/// What a run gives, as text: every diagnostic in order, then each app
/// action's plan entry (`plan` is the fresh run's whole plan, or `None` to
/// plan each action from `snapshot`'s kept analysis).
fn describe(snapshot: &Snapshot, names: &[String], fresh: bool) -> String {
    let mut out = String::new();
    for d in &snapshot.diagnostics {
        out.push_str(&format!("{d:?}\n"));
    }
    let whole = snapshot.plan.as_ref().map(|p| p.to_json());
    for name in names {
        let entry = if fresh {
            whole
                .as_ref()
                .and_then(|p| p["actions"].as_array())
                .and_then(|list| list.iter().find(|a| a["name"] == name.as_str()))
                .cloned()
        } else {
            snapshot
                .plan_action(name)
                .and_then(|p| serde_json::to_value(&*p).ok())
        };
        out.push_str(&format!("plan {name}: {}\n", entry.unwrap_or_default()));
    }
    out
}

fn fresh(app: &App) -> (String, Vec<String>) {
    let once = Workspace::once(
        PathBuf::from(ROOT),
        Lowering::Effects,
        jadpo_checker::Wanted::Whole,
    );
    let snapshot = once.run(&loader(app));
    let names: Vec<String> = match snapshot.plan.as_ref().map(|p| p.to_json()) {
        Some(plan) => plan["actions"]
            .as_array()
            .map(|list| {
                list.iter()
                    .filter_map(|a| Some(a["name"].as_str()?.to_string()))
                    .collect()
            })
            .unwrap_or_default(),
        None => Vec::new(),
    };
    (describe(&snapshot, &names, true), names)
}

/// The edits, in order, each applied to what the previous left.
fn edits(original: &App) -> Vec<(String, App)> {
    let sources: Vec<String> = original
        .keys()
        .filter(|p| p.ends_with(".jadpo"))
        .cloned()
        .collect();
    let mut steps = Vec::new();
    let mut app = original.clone();
    let mut step = |what: String, app: &App| steps.push((what, app.clone()));
    if let Some(first) = sources.first() {
        edit(&mut app, first, |t| format!("// a comment line\n{t}"));
        step(format!("comment at the top of {first}"), &app);
        edit(&mut app, first, |t| format!("{t}{ADDED}"));
        step(format!("action added to {first}"), &app);
    }
    if let Some(last) = sources.last() {
        edit(&mut app, last, |t| drop_line_with(t, "("));
        step(format!("a line with a call removed from {last}"), &app);
        edit(&mut app, last, |t| double_line_with(t, "("));
        step(format!("a line with a call doubled in {last}"), &app);
    }
    edit(&mut app, "jadpo.yaml", |t| format!("{t}# a note\n"));
    step("a comment added to jadpo.yaml".into(), &app);
    edit(&mut app, "jadpo.yaml", |t| {
        format!("{t}unknown_setting: 1\n")
    });
    step("an unknown setting added to jadpo.yaml".into(), &app);
    if let Some(first) = sources.first() {
        edit(&mut app, first, |t| t.replacen('}', "", 1));
        step(format!("a brace removed from {first}"), &app);
    }
    step("every edit undone".into(), original);
    app = original.clone();
    if let Some(first) = sources.first() {
        app.remove(first);
        step(format!("{first} deleted"), &app);
    }
    step("the file restored".into(), original);
    steps
}

fn edit(app: &mut App, path: &str, change: impl FnOnce(&str) -> String) {
    if let Some(text) = app.get_mut(path) {
        *text = change(text);
    }
}

fn drop_line_with(text: &str, needle: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    match lines.iter().rposition(|l| l.contains(needle)) {
        Some(at) => {
            let mut kept = lines.clone();
            kept.remove(at);
            kept.join("\n") + "\n"
        }
        None => text.to_string(),
    }
}

fn double_line_with(text: &str, needle: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    match lines.iter().position(|l| l.contains(needle)) {
        Some(at) => {
            let mut kept = lines.clone();
            kept.insert(at, lines[at]);
            kept.join("\n") + "\n"
        }
        None => text.to_string(),
    }
}

fn compare(app: &App, name: &str) {
    let mut kept = Workspace::keeping(PathBuf::from(ROOT));
    let mut steps = vec![("opened".to_string(), app.clone())];
    steps.extend(edits(app));
    for (i, (what, texts)) in steps.iter().enumerate() {
        kept.retire();
        kept.analyse(&loader(texts));
        let (expected, names) = fresh(texts);
        let snapshot = kept.snapshot.as_ref().expect("a run leaves a snapshot");
        let got = describe(snapshot, &names, false);
        assert!(
            got == expected,
            "{name}, step {i} ({what}): the kept workspace differs from a fresh run\n--- kept\n{got}\n--- fresh\n{expected}"
        );
    }
}

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

#[test]
fn kept_runs_equal_fresh_runs_on_the_examples() {
    for example in ["examples/billing", "examples/mistakes"] {
        compare(&Fixture::load(&repo(example)).files, example);
    }
}

/// Every seventh fixture (a spread over the rules, the packages and the
/// language): each edit sequence is ten runs of each kind.
#[test]
fn kept_runs_equal_fresh_runs_on_fixtures() {
    for fixture in all_fixtures().iter().step_by(7) {
        compare(&fixture.files, &fixture.name());
    }
}
