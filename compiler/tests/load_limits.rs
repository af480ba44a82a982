//! Hostile manifests are refused quickly with a diagnostic: alias bombs,
//! 10,000-deep nesting, huge documents.

use crate::load_support;

use jadpo_compiler::load::loaders::MemLoader;
use load_support::*;
use std::time::{Duration, Instant};

/// Loads a package manifest and returns its diagnostics' codes and the time taken.
fn timed(yaml: &str) -> (Vec<&'static str>, Duration) {
    let mem = app_with_package(yaml);
    let start = Instant::now();
    let result = load(&mem, empty_bundled());
    (codes(&result), start.elapsed())
}

const BUDGET: Duration = Duration::from_secs(2);

#[test]
fn alias_bomb_is_refused() {
    let mut bomb =
        String::from("package: mailer\nversion: 1.0.0\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let p = i - 1;
        bomb.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    let (codes, took) = timed(&bomb);
    assert_eq!(codes, ["manifest.too_complex"]);
    assert!(took < BUDGET, "took {took:?}");
}

#[test]
fn deep_flow_nesting_is_refused() {
    let deep = format!("package: {}x{}\n", "[".repeat(10_000), "]".repeat(10_000));
    let (codes, took) = timed(&deep);
    assert_eq!(codes, ["manifest.too_complex"]);
    assert!(took < BUDGET, "took {took:?}");
}

#[test]
fn deep_block_nesting_is_refused() {
    let mut deep = String::new();
    for i in 0..200 {
        deep.push_str(&" ".repeat(i));
        deep.push_str("a:\n");
    }
    let (codes, took) = timed(&deep);
    assert_eq!(codes, ["manifest.too_complex"]);
    assert!(took < BUDGET, "took {took:?}");
}

#[test]
fn huge_document_is_refused() {
    let mut huge = String::from("package: mailer\nversion: 1.0.0\noperations:\n");
    while huge.len() < 2_000_000 {
        huge.push_str("  # padding padding padding padding padding padding padding padding\n");
    }
    let (codes, took) = timed(&huge);
    assert_eq!(codes, ["manifest.too_large"]);
    assert!(took < BUDGET, "took {took:?}");
}

#[test]
fn many_documents_are_refused() {
    let (codes, _) = timed("package: mailer\n---\npackage: other\n");
    assert_eq!(codes, ["manifest.too_complex"]);
}

#[test]
fn alias_bomb_in_jadpo_yaml_is_fatal() {
    let mut bomb = String::from("app: shop\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let p = i - 1;
        bomb.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    let mem = MemLoader::new().with("app/jadpo.yaml", bomb);
    let start = Instant::now();
    let result = load(&mem, empty_bundled());
    assert!(start.elapsed() < BUDGET);
    assert!(result.is_err());
    assert_eq!(codes(&result), ["manifest.too_complex"]);
}

#[test]
fn folders_nested_too_deeply_are_named_once() {
    let deep: Vec<String> = (0..40).map(|i| format!("d{i}")).collect();
    let mem = MemLoader::new()
        .with("app/jadpo.yaml", "app: shop\n")
        .with("app/ok.jadpo", "type Ok = Text\n")
        .with(
            format!("app/{}/deep.jadpo", deep.join("/")),
            "type Deep = Text\n",
        );
    let result = load(&mem, empty_bundled());
    assert_eq!(codes(&result), ["load.too_deep"]);
}

/// The sources one check reads are bounded, the app's and its packages'
/// together (`load.too_large`): a file that would pass the bound is
/// skipped with one diagnostic naming it and the bound, and the files
/// within it are read.
#[test]
fn sources_past_the_bound_are_refused() {
    use jadpo_compiler::load::MAX_SOURCES_BYTES;
    let half = usize::try_from(MAX_SOURCES_BYTES / 2).unwrap_or(usize::MAX);
    let filler = |n: usize| {
        let mut text = String::with_capacity(n + 64);
        while text.len() < n {
            text.push_str("// padding padding padding padding padding padding padding\n");
        }
        text
    };
    let mem = MemLoader::new()
        .with("app/jadpo.yaml", "app: big\n")
        .with("app/src/a.jadpo", filler(half - 100))
        .with("app/src/b.jadpo", filler(half - 100))
        .with("app/src/c.jadpo", filler(1000))
        .with("app/src/d.jadpo", "action d() -> Unit {\n}\n");
    let result = load(&mem, empty_bundled());
    let loaded = result.as_ref().expect("loads");
    let found: Vec<String> = loaded
        .diagnostics
        .iter()
        .map(|d| format!("{} {}", d.code, d.summary))
        .collect();
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].starts_with(
            "load.too_large src/c.jadpo (0.0 MiB) would take the sources read past 32.0 MiB"
        ),
        "{found:#?}"
    );
    let one = MemLoader::new()
        .with("app/jadpo.yaml", "app: big\n")
        .with("app/src/a.jadpo", filler(half * 2 + 10));
    let found = codes(&load(&one, empty_bundled()));
    assert_eq!(found, ["load.too_large"]);
}
