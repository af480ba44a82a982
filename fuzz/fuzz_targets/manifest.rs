//! Fuzz target: loading `package.yaml` and `jadpo.yaml` through `MemLoader`.
//! The first byte chooses which manifest receives the rest of the input;
//! the other one is a valid template. Loading must never panic and every
//! diagnostic span must lie inside its file.
#![no_main]

#[path = "common.rs"]
mod common;

use jadpo_compiler::load::{load_project, MemLoader};
use libfuzzer_sys::fuzz_target;

const APP: &str = "app: fuzz\npackages:\n  mine: { path: vendor/mine }\n  stripe: \"3\"\n";
const PACKAGE: &str = "package: mine\nversion: 1.0.0\noperations:\n  things.make:\n    request: Thing\n    answer: Thing\n    changes: true\n";
const SOURCE: &str = "type Thing = Object { id: Text }\nfailure Gone { kind: NotFound }\n";

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let (app, package): (&[u8], &[u8]) = match which % 3 {
        0 => (APP.as_bytes(), rest),
        1 => (rest, PACKAGE.as_bytes()),
        // A package found by name in the app's packages/ folder.
        _ => (b"app: fuzz\npackages:\n  mine: \"1\"\n", rest),
    };
    let package_dir = if which % 3 == 2 { "packages/mine" } else { "vendor/mine" };
    let loader = MemLoader::new()
        .with("jadpo.yaml", app)
        .with(format!("{package_dir}/package.yaml"), package)
        .with(format!("{package_dir}/mine.jadpo"), SOURCE)
        .with("src/app.jadpo", "action go() -> Unit { }\n");
    let (files, diags) = match load_project(&loader, "") {
        Ok(p) => (p.files, p.diagnostics),
        Err(f) => (f.files, f.diagnostics),
    };
    for d in &diags {
        common::assert_spans(&files, d);
    }
});
