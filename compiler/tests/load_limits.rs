//! Hostile manifests are refused quickly with a diagnostic: alias bombs,
//! 10,000-deep nesting, huge documents.

use crate::load_support;

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
