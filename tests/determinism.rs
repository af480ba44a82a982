//! Determinism: the plan (`jadpo build --out`) and every output format
//! (`check --format human` with `NO_COLOR`, `--format json`) are the same
//! bytes across runs, across the order files were created on disk and are
//! listed, and across thread counts (`RAYON_NUM_THREADS=1` versus 4). Runs
//! the real binary on copies of the examples, and the library through
//! `MemLoader` with files inserted and listed in opposite orders.

use jadpo::check::{check_app, Outcome};
use jadpo::render::{human, json, Summary};
use jadpo_compiler::load::MemLoader;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every file of an app folder, by `/` path relative to it.
fn read_app(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    read_tree(dir, "", &mut files);
    files
}

fn read_tree(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Vec<u8>>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot list {dir:?}: {e}"));
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        let path = entry.path();
        if path.is_dir() {
            if name != "build" {
                read_tree(&path, &rel, out);
            }
        } else {
            let bytes =
                std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {path:?}: {e}"));
            out.insert(rel, bytes);
        }
    }
}

/// A generated app with many files over a few folders, so parallel parsing
/// and listing order have room to matter. Unless `clean`, every file also
/// has findings (calls to unknown actions).
fn generated_app(clean: bool) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    files.insert(
        "jadpo.yaml".to_string(),
        b"app: many\npackages:\n  stripe: \"3\"\n".to_vec(),
    );
    files.insert(
        "src/app.jadpo".to_string(),
        b"application Many {\n    providers: { stripe: { api_key: config.stripe_key } }\n}\n\nconfig ManyConfig {\n    stripe_key: Text { binding: \"STRIPE_KEY\" secret: true }\n}\n".to_vec(),
    );
    for f in 0..24 {
        let mut text = String::new();
        for i in 0..6 {
            let k = f * 6 + i;
            let b = if clean {
                format!("action b{k}() fails stripe.PriceMissing -> Unit {{\n    attempt a{k}(\"price_1\")\n}}\n\n")
            } else {
                format!("action b{k}() -> Unit {{\n    attempt missing_{k}()\n}}\n\n")
            };
            text.push_str(&format!(
                "action a{k}(id: stripe.PriceId) fails stripe.PriceMissing -> Unit {{\n    \
                 attempt stripe.prices.retrieve(stripe.PriceRef {{ id: id }})\n}}\n\n{b}"
            ));
        }
        let folder = ["src", "src/deep", "lib", "z"][f % 4];
        files.insert(format!("{folder}/f{f:02}.jadpo"), text.into_bytes());
    }
    files
}

/// Writes `files` under a fresh folder, creating them in `order`.
fn materialize(name: &str, files: &BTreeMap<String, Vec<u8>>, order: &[usize]) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("jadpo-determinism-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    let list: Vec<(&String, &Vec<u8>)> = files.iter().collect();
    for &i in order {
        let (rel, bytes) = list[i];
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("cannot write {path:?}: {e}"));
    }
    dir
}

/// Orders to create files in: sorted, reversed, and a few shuffles.
fn orders(n: usize) -> Vec<Vec<usize>> {
    let forward: Vec<usize> = (0..n).collect();
    let mut all = vec![forward.clone(), forward.iter().rev().copied().collect()];
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..2 {
        let mut order = forward.clone();
        for i in (1..n).rev() {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            order.swap(i, (seed % (i as u64 + 1)) as usize);
        }
        all.push(order);
    }
    all
}

/// The bytes of every output for the app at `dir`: human check output, JSON
/// check output, exit statuses, and the plan when the app builds.
fn outputs(dir: &Path, threads: &str) -> String {
    let jadpo = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_jadpo"))
            .args(args)
            .current_dir(dir)
            .env("NO_COLOR", "1")
            .env("RAYON_NUM_THREADS", threads)
            .output()
            .unwrap_or_else(|e| panic!("cannot run jadpo: {e}"));
        // An internal error (101) or a death by signal is a failure, not
        // an output to compare.
        assert!(
            matches!(out.status.code(), Some(0..=2)),
            "jadpo {args:?} crashed in {dir:?} ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        format!(
            "== {args:?} exit {:?}\n{}{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    let mut all = jadpo(&["check", ".", "--format", "human"]);
    all.push_str(&jadpo(&["check", ".", "--format", "json"]));
    let out_dir = dir.join("build-out");
    let build = jadpo(&["build", ".", "--out", &out_dir.to_string_lossy()]);
    // The build's own output names the folder it wrote to: keep it out.
    all.push_str(&build.replace(&*out_dir.to_string_lossy(), "<out>"));
    if let Ok(plan) = std::fs::read_to_string(out_dir.join("plan.json")) {
        all.push_str("== plan.json\n");
        all.push_str(&plan);
    }
    all
}

/// The binary gives the same bytes for every creation order and on 1 and 4
/// threads, and again on a second run.
fn assert_binary_deterministic(name: &str, files: &BTreeMap<String, Vec<u8>>) {
    let mut baseline: Option<String> = None;
    for (k, order) in orders(files.len()).iter().enumerate() {
        let dir = materialize(&format!("{name}-{k}"), files, order);
        for threads in ["1", "4", "1"] {
            let got = outputs(&dir, threads);
            match &baseline {
                None => baseline = Some(got),
                Some(base) => assert!(
                    *base == got,
                    "{name}: output differs (creation order {k}, {threads} threads)\n{}",
                    first_difference(base, &got)
                ),
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        // The per-process folder too, once the last case left it empty
        // (another test still using it keeps it: `remove_dir` refuses).
        if let Some(parent) = dir.parent() {
            let _ = std::fs::remove_dir(parent);
        }
    }
    let base = baseline.unwrap_or_default();
    assert!(
        base.contains("== plan.json") || name != "billing",
        "billing must build:\n{base}"
    );
}

fn first_difference(a: &str, b: &str) -> String {
    let at = a
        .bytes()
        .zip(b.bytes())
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let from = at.saturating_sub(200);
    let slice = |s: &str| {
        s.get(from..(at + 200).min(s.len()))
            .unwrap_or("")
            .to_string()
    };
    format!(
        "first difference at byte {at}:\n--- first\n{}\n--- then\n{}",
        slice(a),
        slice(b)
    )
}

#[test]
fn billing_plan_and_outputs_are_byte_identical() {
    let files = read_app(&repo().join("examples/billing"));
    assert_binary_deterministic("billing", &files);
}

#[test]
fn mistakes_outputs_are_byte_identical() {
    let files = read_app(&repo().join("examples/mistakes"));
    assert_binary_deterministic("mistakes", &files);
}

#[test]
fn a_many_file_app_is_byte_identical() {
    assert_binary_deterministic("generated", &generated_app(false));
    assert_binary_deterministic("generated-clean", &generated_app(true));
}

// ------------------------------------------------------------ MemLoader ---

/// Human output, JSON output and the plan of one in-process check.
fn library_output(outcome: &Outcome) -> String {
    let summary = Summary::new(
        outcome.stats.files,
        outcome.stats.packages,
        &outcome.diagnostics,
    );
    let mut text = human::render_all(&outcome.files, &outcome.diagnostics, false);
    text.push_str(&json::render(&outcome.files, &outcome.diagnostics, summary));
    if let Some(plan) = &outcome.plan {
        text.push_str(&serde_json::to_string_pretty(&plan.to_json()).unwrap_or_default());
    }
    text
}

/// A loader with the files inserted in the given direction, optionally
/// listing folders in reverse.
fn loader(files: &BTreeMap<String, Vec<u8>>, backwards: bool, reversed: bool) -> MemLoader {
    let mut mem = MemLoader::new();
    let mut list: Vec<(&String, &Vec<u8>)> = files.iter().collect();
    if backwards {
        list.reverse();
    }
    for (path, bytes) in list {
        mem.insert(format!("app/{path}"), bytes.clone());
    }
    if reversed {
        mem = mem.reversed();
    }
    mem
}

fn on_threads(threads: usize, mem: &MemLoader) -> String {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap_or_else(|e| panic!("cannot start {threads} threads: {e}"));
    pool.install(|| library_output(&check_app(mem, "app")))
}

fn assert_library_deterministic(name: &str, files: &BTreeMap<String, Vec<u8>>) {
    let base = on_threads(1, &loader(files, false, false));
    for (backwards, reversed, threads) in [
        (true, false, 1),
        (false, true, 1),
        (true, true, 4),
        (false, false, 4),
        (false, false, 1),
    ] {
        let got = on_threads(threads, &loader(files, backwards, reversed));
        assert!(
            base == got,
            "{name}: output differs (inserted backwards {backwards}, listed reversed \
             {reversed}, {threads} threads)\n{}",
            first_difference(&base, &got)
        );
    }
}

#[test]
fn library_output_ignores_insertion_listing_and_threads() {
    for (name, files) in [
        ("billing", read_app(&repo().join("examples/billing"))),
        ("mistakes", read_app(&repo().join("examples/mistakes"))),
        ("generated", generated_app(false)),
        ("generated-clean", generated_app(true)),
    ] {
        assert_library_deterministic(name, &files);
    }
}

#[test]
fn the_generated_apps_exercise_findings_and_plans() {
    // Both paths must be covered: diagnostics, and a clean app with a plan.
    let outcome = check_app(&loader(&generated_app(false), false, false), "app");
    assert!(outcome.has_errors(), "the generated app should have errors");
    let outcome = check_app(&loader(&generated_app(true), false, false), "app");
    let shown: Vec<String> = outcome
        .diagnostics
        .iter()
        .map(|d| d.summary.clone())
        .collect();
    assert!(
        !outcome.has_errors(),
        "the clean generated app should check: {shown:?}"
    );
    assert!(
        outcome.plan.is_some(),
        "the clean generated app should have a plan"
    );
}
