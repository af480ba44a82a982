//! `edits DIR [--edits N] [--cold] [--quiet] [--per-check]`: what the
//! language server's checker pays per edit. Edits one file of the app at
//! DIR the way `lsp_latency` does (a comment line added at the top, removed,
//! a call name broken, fixed), compiles each state once (`--cold`: before
//! every edit, as the server does, so caches are cold), and times the cached
//! step analysis, the rules with their cache, and `rules::run` without it
//! (checked equal), printing p50 / p95 / max of each. `EDITS_PAUSE_MS=N`
//! sleeps N ms between compiling and timing in `--cold` mode (to see how
//! much of the cold time is the compiler's idle threads and the machine).

use jadpo_checker::analysis::{self, Cache};
use jadpo_checker::{rules, Scope};
use jadpo_compiler::ir::Program;
use jadpo_compiler::load::loaders::MemLoader;
use jadpo_compiler::source::Files;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut dir = None;
    let mut edits = 40usize;
    let mut quiet = false;
    let mut per_check = false;
    let mut cold = false;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quiet" => quiet = true,
            "--per-check" => per_check = true,
            "--cold" => cold = true,
            "--edits" => edits = args.next().and_then(|v| v.parse().ok()).unwrap_or(edits),
            _ => dir = Some(arg),
        }
    }
    let Some(dir) = dir else {
        eprintln!("usage: edits DIR [--edits N]");
        return;
    };
    let root = Path::new(&dir);
    let mut app = BTreeMap::new();
    read_dir(root, root, &mut app);
    let Some(path) = pick_file(&app) else {
        eprintln!("no file with a call under {dir}/src");
        return;
    };
    let original = app.get(&path).cloned().unwrap_or_default();
    // The four states an edit cycle goes through, compiled once.
    let mut states = Vec::new();
    let mut apps = Vec::new();
    for i in 0..4 {
        let text = match i {
            1 => format!("// edited\n{original}"),
            3 => original.replacen("attempt ", "attempt x_", 1),
            _ => original.clone(),
        };
        app.insert(path.clone(), text);
        let Some(state) = compile(&app) else {
            eprintln!("the app does not compile");
            return;
        };
        states.push(state);
        apps.push(app.clone());
    }
    let mut cache = Cache::default();
    let mut rules_cache = rules::Cache::default();
    let mut times: Vec<(Duration, Duration, Duration)> = Vec::new();
    for i in 0..=edits {
        let recompiled;
        let (program, files) = if cold {
            let Some(app) = apps.get(i % 4) else { return };
            let Some(state) = compile(app) else { return };
            recompiled = state;
            if let Some(ms) = std::env::var("EDITS_PAUSE_MS")
                .ok()
                .and_then(|v| v.parse().ok())
            {
                std::thread::sleep(Duration::from_millis(ms));
            }
            (&recompiled.0, &recompiled.1)
        } else {
            let Some((program, files)) = states.get(i % 4) else {
                return;
            };
            (program, files)
        };
        let start = Instant::now();
        let analysed = analysis::analyse_cached(program, &mut cache);
        let analyse = start.elapsed();
        let cx = jadpo_checker::Cx {
            program,
            files,
            scope: &Scope::App,
            analysed: &analysed,
        };
        let start = Instant::now();
        let found = rules::run_cached(&cx, &mut rules_cache);
        let rules_time = start.elapsed();
        let start = Instant::now();
        let plain = rules::run(&cx);
        let plain_time = start.elapsed();
        if format!("{found:?}") != format!("{plain:?}") {
            eprintln!("edit {i}: run_cached differs from run");
            std::process::exit(1);
        }
        if i > 0 {
            times.push((analyse, rules_time, plain_time));
        }
        if !quiet {
            eprintln!(
                "edit {i}: analyse {:.2} ms ({} reused, {} computed), rules {:.2} ms ({} reused)",
                ms(analyse),
                cache.reused,
                cache.computed,
                ms(rules_time),
                rules_cache.reused
            );
        }
        if per_check && i == edits {
            for (k, check) in rules::checks().into_iter().enumerate() {
                let start = Instant::now();
                let mut found = Vec::new();
                for _ in 0..20 {
                    found.clear();
                    check.run(&cx, &mut found);
                }
                eprintln!(
                    "check {k}: {:.3} ms, {} findings",
                    ms(start.elapsed()) / 20.0,
                    found.len()
                );
            }
        }
        analysed.release();
    }
    report("analyse", times.iter().map(|t| t.0).collect());
    report("rules", times.iter().map(|t| t.1).collect());
    report("rules uncached", times.iter().map(|t| t.2).collect());
}

fn compile(app: &BTreeMap<String, String>) -> Option<(Program, Files)> {
    let mut loader = MemLoader::new();
    for (p, t) in app {
        loader.insert(format!("app/{p}"), t.as_bytes());
    }
    let compiled = jadpo_compiler::compile(&loader, "app");
    Some((compiled.program?, compiled.files))
}

fn report(what: &str, mut list: Vec<Duration>) {
    list.sort();
    let pick = |q: f64| list.get(((list.len() as f64 - 1.0) * q) as usize).copied();
    println!(
        "{what}: p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms",
        ms(pick(0.5).unwrap_or_default()),
        ms(pick(0.95).unwrap_or_default()),
        ms(list.last().copied().unwrap_or_default())
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The middle one, by path, of the source files that make a call.
fn pick_file(app: &BTreeMap<String, String>) -> Option<String> {
    let with_call: Vec<&String> = app
        .iter()
        .filter(|(p, t)| p.starts_with("src/") && p.ends_with(".jadpo") && t.contains("attempt "))
        .map(|(p, _)| p)
        .collect();
    with_call.get(with_call.len() / 2).map(|p| (*p).clone())
}

fn read_dir(root: &Path, dir: &Path, app: &mut BTreeMap<String, String>) {
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
