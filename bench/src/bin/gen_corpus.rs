//! `gen_corpus --lines N [--seed S] --out DIR`: writes a generated app of
//! about N lines (see `jadpo_bench::corpus`) into DIR, replacing DIR.

use jadpo_bench::corpus::{generate, Options};
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut lines = 10_000usize;
    let mut seed = 1u64;
    let mut out: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next();
        match (arg.as_str(), value) {
            ("--lines", Some(v)) => lines = parse_count(&v).unwrap_or(lines),
            ("--seed", Some(v)) => seed = v.parse().unwrap_or(seed),
            ("--out", Some(v)) => out = Some(PathBuf::from(v)),
            _ => return usage(),
        }
    }
    let Some(out) = out else { return usage() };
    let corpus = generate(Options { lines, seed });
    if out.exists() {
        if let Err(e) = std::fs::remove_dir_all(&out) {
            eprintln!("cannot clear {}: {e}", out.display());
            return ExitCode::from(2);
        }
    }
    if let Err(e) = corpus.write(&out) {
        eprintln!("cannot write {}: {e}", out.display());
        return ExitCode::from(2);
    }
    println!(
        "{}: {} files, {} lines, {} bytes (seed {seed})",
        out.display(),
        corpus.files.len(),
        corpus.lines(),
        corpus.bytes()
    );
    ExitCode::SUCCESS
}

/// `10000`, `10k`, `1m`.
fn parse_count(text: &str) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    let (digits, scale) = match lower.strip_suffix('k') {
        Some(d) => (d, 1_000),
        None => match lower.strip_suffix('m') {
            Some(d) => (d, 1_000_000),
            None => (lower.as_str(), 1),
        },
    };
    digits.parse::<usize>().ok().map(|n| n * scale)
}

fn usage() -> ExitCode {
    eprintln!("usage: gen_corpus --lines N[k|m] [--seed S] --out DIR");
    ExitCode::from(2)
}
