//! `bench DIR [--runs N]`: per-phase timings of the front end and checker on
//! the app at DIR, in this process: load, lexing alone (one thread and all
//! threads), parsing (lexing included, all threads), resolution, the step
//! analyzer as `jadpo check` runs it (`diagnose`) and with the plan of
//! `jadpo build` (`check`), each the fastest of N runs. Prints a table and then
//! `key=value` lines for `scripts/bench.sh`.

use jadpo_compiler::load::{self, FsLoader, LoadedProject};
use jadpo_compiler::{lexer, parser, resolve};
use rayon::prelude::*;
use std::process::ExitCode;
use std::time::{Duration, Instant};

// The same allocator as the `jadpo` binary, so phase times match it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut dir: Option<String> = None;
    let mut runs = 5usize;
    let mut only: Option<String> = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).unwrap_or(runs),
            "--only" => only = args.next(),
            _ if dir.is_none() => dir = Some(arg),
            _ => return usage(),
        }
    }
    let Some(dir) = dir else { return usage() };
    let project = match load::load_project(&FsLoader, &dir) {
        Ok(project) => project,
        Err(_) => {
            eprintln!("cannot load the app at {dir}");
            return ExitCode::from(2);
        }
    };
    match only {
        Some(phase) => repeat_phase(&dir, &project, &phase, runs.max(1)),
        None => {
            report(&dir, &project, runs.max(1));
            ExitCode::SUCCESS
        }
    }
}

fn usage() -> ExitCode {
    eprintln!("usage: bench DIR [--runs N] [--only lex|parse|compile|resolve|check]");
    ExitCode::from(2)
}

/// One measured phase: its name and fastest time.
struct Phase {
    key: &'static str,
    label: &'static str,
    best: Duration,
}

fn report(dir: &str, project: &LoadedProject, runs: usize) {
    let ids = project.all_sources();
    let (lines, bytes) = size_of(project, &ids);
    let phases = measure(dir, project, &ids, runs);
    println!(
        "{dir}: {} .jadpo files, {lines} lines, {:.1} MB, {} threads, best of {runs}",
        ids.len(),
        bytes as f64 / 1e6,
        rayon::current_num_threads()
    );
    println!(
        "{:<28} {:>10} {:>14} {:>10}",
        "phase", "ms", "lines/s", "MB/s"
    );
    for p in &phases {
        let secs = p.best.as_secs_f64().max(1e-9);
        println!(
            "{:<28} {:>10.1} {:>14.0} {:>10.1}",
            p.label,
            secs * 1e3,
            lines as f64 / secs,
            bytes as f64 / 1e6 / secs
        );
    }
    println!("lines={lines}");
    println!("bytes={bytes}");
    println!("threads={}", rayon::current_num_threads());
    for p in &phases {
        println!("{}_ms={:.3}", p.key, p.best.as_secs_f64() * 1e3);
    }
}

/// Lines and bytes of the `.jadpo` sources that are parsed.
fn size_of(project: &LoadedProject, ids: &[jadpo_compiler::span::FileId]) -> (usize, usize) {
    let mut lines = 0;
    let mut bytes = 0;
    for &id in ids {
        let text = &project.files.get(id).text;
        lines += text.bytes().filter(|&b| b == b'\n').count();
        bytes += text.len();
    }
    (lines, bytes)
}

fn measure(
    dir: &str,
    project: &LoadedProject,
    ids: &[jadpo_compiler::span::FileId],
    runs: usize,
) -> Vec<Phase> {
    let files = &project.files;
    let load = best_of(runs, || {
        let _ = load::load_project(&FsLoader, dir);
    });
    let lex_one = best_of(runs, || {
        for &id in ids {
            std::hint::black_box(lexer::lex(id, &files.get(id).text));
        }
    });
    let lex_all = best_of(runs, || {
        ids.par_iter().for_each(|&id| {
            std::hint::black_box(lexer::lex(id, &files.get(id).text));
        });
    });
    let parse = best_of(runs, || {
        let mut diags = Vec::new();
        std::hint::black_box(parser::parse_files(files, ids, &mut diags));
    });
    let mut diags = project.diagnostics.clone();
    let asts = parser::parse_files(files, ids, &mut diags);
    let resolve = best_of(runs, || {
        let mut d = diags.clone();
        std::hint::black_box(resolve::resolve(project, &asts, &mut d));
    });
    let program = resolve::resolve(project, &asts, &mut diags);
    let check = best_of(runs, || {
        let scope = jadpo_checker::Scope::App;
        std::hint::black_box(jadpo_checker::diagnose(&program, files, scope));
    });
    let analyse = best_of(runs, || {
        std::hint::black_box(jadpo_checker::analysis::analyse(&program));
    });
    // What the language server pays after an edit that changes no summary.
    let mut cache = jadpo_checker::analysis::Cache::default();
    drop(jadpo_checker::analysis::analyse_cached(
        &program, &mut cache,
    ));
    let cached = best_of(runs, || {
        let analysed = jadpo_checker::analysis::analyse_cached(&program, &mut cache);
        std::hint::black_box(analysed);
    });
    let plan = best_of(runs.min(2), || {
        let scope = jadpo_checker::Scope::App;
        std::hint::black_box(jadpo_checker::check(&program, files, scope));
    });
    let whole = best_of(runs, || {
        let compiled = jadpo_compiler::compile(&FsLoader, dir);
        if let Some(program) = &compiled.program {
            let scope = jadpo_checker::Scope::App;
            std::hint::black_box(jadpo_checker::diagnose(program, &compiled.files, scope));
        }
    });
    vec![
        phase("load", "load (read files, manifests)", load),
        phase("lex_1t", "lex, 1 thread", lex_one),
        phase("lex", "lex, all threads", lex_all),
        phase("parse", "parse (lex included)", parse),
        phase("resolve", "resolve", resolve),
        phase("check", "check (step analyzer)", check),
        phase("analyse", "step analysis alone", analyse),
        phase("analyse_cached", "step analysis, summaries reused", cached),
        phase("plan", "check + plan (jadpo build)", plan),
        phase("pipeline", "load+parse+resolve+check", whole),
    ]
}

fn phase(key: &'static str, label: &'static str, best: Duration) -> Phase {
    Phase { key, label, best }
}

/// The fastest of `runs` runs of `f`: the least disturbed by other work.
fn best_of(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut best = Duration::MAX;
    for _ in 0..runs {
        let start = Instant::now();
        f();
        best = best.min(start.elapsed());
    }
    best
}

/// Runs one phase `runs` times and nothing else, for a profiler.
fn repeat_phase(dir: &str, project: &LoadedProject, phase: &str, runs: usize) -> ExitCode {
    let ids = project.all_sources();
    let files = &project.files;
    let mut diags = Vec::new();
    let start = Instant::now();
    match phase {
        "lex" => {
            for _ in 0..runs {
                for &id in &ids {
                    std::hint::black_box(lexer::lex(id, &files.get(id).text));
                }
            }
        }
        "parse" => {
            for _ in 0..runs {
                std::hint::black_box(parser::parse_files(files, &ids, &mut Vec::new()));
            }
        }
        "compile" => {
            for _ in 0..runs {
                std::hint::black_box(jadpo_compiler::compile(&FsLoader, dir));
            }
        }
        "resolve" | "check" => {
            let asts = parser::parse_files(files, &ids, &mut diags);
            let program = resolve::resolve(project, &asts, &mut diags.clone());
            let start = Instant::now();
            for _ in 0..runs {
                if phase == "resolve" {
                    std::hint::black_box(resolve::resolve(project, &asts, &mut diags.clone()));
                } else {
                    let scope = jadpo_checker::Scope::App;
                    std::hint::black_box(jadpo_checker::diagnose(&program, files, scope));
                }
            }
            println!(
                "{phase}: {:.1} ms per run",
                start.elapsed().as_secs_f64() * 1e3 / runs as f64
            );
            return ExitCode::SUCCESS;
        }
        _ => return usage(),
    }
    println!(
        "{phase}: {:.1} ms per run",
        start.elapsed().as_secs_f64() * 1e3 / runs as f64
    );
    ExitCode::SUCCESS
}
