//! `test_bench [--tests N] [--billing]`: what `jadpo test` costs. By
//! default, N tests (1,000) of the four-step app (`jadpo_bench::four_steps`),
//! each delivering `four` once: 12 crash runs per test. With `--billing`,
//! the billing example's tests copied (each copy renamed) until there are
//! N. The app is checked once with its code and plan, then every test runs
//! with its crash matrix. Reports the check's time, the tests' time, and
//! tests and runs per second.

use std::process::ExitCode;
use std::time::Instant as Clock;

use jadpo_checker::Scope;
use jadpo_compiler::load::loaders::MemLoader;
use jadpo_compiler::resolve::Lowering;
use jadpo_runtime::suite::{Options, Suite};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let mut n = 1000usize;
    let mut billing = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--tests" => n = args.next().and_then(|v| v.parse().ok()).unwrap_or(n),
            "--billing" => billing = true,
            other => {
                eprintln!("test_bench: unknown argument `{other}` (use --tests N, --billing)");
                return ExitCode::from(2);
            }
        }
    }
    let (loader, root) = if billing {
        let Some(loader) = billing_with_tests(n) else {
            eprintln!("test_bench: cannot read examples/billing");
            return ExitCode::from(2);
        };
        (loader, "app")
    } else {
        (jadpo_bench::four_steps::loader(&four_step_tests(n)), "b")
    };
    let started = Clock::now();
    let compiled = jadpo_compiler::compile_with(&loader, root, Lowering::Code);
    let Some(program) = compiled.program else {
        eprintln!("test_bench: the app does not load");
        return ExitCode::from(2);
    };
    let analysis = jadpo_checker::check(&program, &compiled.files, Scope::App);
    let errors = compiled
        .diagnostics
        .iter()
        .chain(&analysis.diagnostics)
        .filter(|d| d.is_error())
        .count();
    let Some(plan) = analysis.plan.app() else {
        eprintln!("test_bench: no plan");
        return ExitCode::from(2);
    };
    if errors > 0 {
        eprintln!("test_bench: the app has {errors} errors");
        return ExitCode::from(2);
    }
    let check_s = started.elapsed().as_secs_f64();
    let started = Clock::now();
    let reports = Suite::new(&program, plan).run(Options::default());
    let run_s = started.elapsed().as_secs_f64();
    let failed = reports.iter().filter(|r| !r.passed()).count();
    let crash_runs: u32 = reports.iter().map(|r| r.crash_runs).sum();
    println!("tests={}", reports.len());
    println!("failed={failed}");
    println!("crash_runs={crash_runs}");
    println!("check_s={check_s:.3}");
    println!("run_s={run_s:.3}");
    println!("tests_per_s={:.0}", reports.len() as f64 / run_s);
    println!(
        "runs_per_s={:.0}",
        (reports.len() as f64 + f64::from(crash_runs)) / run_s
    );
    if failed > 0 {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// `n` tests, each delivering `four` once against a fake that answers
/// every charge.
fn four_step_tests(n: usize) -> String {
    let mut out = String::from(
        "fixture paying {\n    config: { steps_key: \"bench-key\" }\n    fake pay {\n        charges.create => pay.Charge { id: \"ch_1\" amount: 100 }\n    }\n}\n",
    );
    for i in 0..n {
        out.push_str(&format!(
            "\ntest \"order {i}\" using paying {{\n    var id = call four(OrderReq {{ id: \"o{i}\" amount: {i} }})\n    assert id == \"ch_1\"\n    assert stored Order == 1\n    assert emitted Paid == 1\n}}\n"
        ));
    }
    out
}

/// The billing example in memory, its `tests/` files repeated with each
/// test renamed until there are `n` tests.
fn billing_with_tests(n: usize) -> Option<MemLoader> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/billing");
    let mut m = MemLoader::new();
    m.insert(
        "app/jadpo.yaml",
        std::fs::read(root.join("jadpo.yaml")).ok()?,
    );
    for e in std::fs::read_dir(root.join("src")).ok()?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        m.insert(format!("app/src/{name}"), std::fs::read(e.path()).ok()?);
    }
    let mut tests: Vec<String> = Vec::new();
    for e in std::fs::read_dir(root.join("tests")).ok()?.flatten() {
        tests.push(std::fs::read_to_string(e.path()).ok()?);
    }
    tests.sort();
    let per_copy: usize = tests.iter().map(|t| t.matches("\ntest \"").count()).sum();
    let copies = n.div_ceil(per_copy.max(1));
    for copy in 0..copies {
        for (i, text) in tests.iter().enumerate() {
            let renamed = rename(text, copy);
            m.insert(
                format!("app/tests/copy{copy}_{i}.jadpo"),
                renamed.into_bytes(),
            );
        }
    }
    Some(m)
}

/// Test names, fixture names and the helper function made unique per copy.
fn rename(text: &str, copy: usize) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.lines() {
        let line = if let Some(rest) = line.strip_prefix("test \"") {
            format!("test \"{copy}: {rest}")
        } else {
            line.to_string()
        };
        let line = suffix_names(&line, copy);
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// `fixture NAME`, `using NAME`, `function ada`, `ada()`: given the copy's
/// suffix.
fn suffix_names(line: &str, copy: usize) -> String {
    let mut line = line.replace("ada()", &format!("ada_{copy}()"));
    for word in ["fixture ", "using "] {
        if let Some(at) = line.find(word) {
            let start = at + word.len();
            let end = line[start..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .map_or(line.len(), |e| start + e);
            line.insert_str(end, &format!("_{copy}"));
        }
    }
    line
}
