//! Fuzz target: the whole check (`compile` then `jadpo_checker::check`) of a
//! small generated app. The input is either structured (an `arbitrary`-driven
//! app: actions, statements and entry points over a vocabulary that mostly
//! resolves, so the resolver and the step analyzer see real programs) or raw
//! bytes spliced into a source of `examples/billing`. Nothing may panic and
//! every diagnostic span must lie inside its file.
#![no_main]

#[path = "common.rs"]
mod common;
#[path = "gen.rs"]
mod gen;

use arbitrary::Arbitrary;
use jadpo_checker::Scope;
use jadpo_compiler::load::MemLoader;
use libfuzzer_sys::fuzz_target;

const MANIFEST: &str = "app: fuzz\npackages:\n  stripe: \"3\"\n  github: \"1\"\n";

/// The billing example, the base of spliced inputs.
const BILLING: [(&str, &str); 5] = [
    ("src/app.jadpo", include_str!("../../examples/billing/src/app.jadpo")),
    ("src/entries.jadpo", include_str!("../../examples/billing/src/entries.jadpo")),
    ("src/model.jadpo", include_str!("../../examples/billing/src/model.jadpo")),
    ("src/payments.jadpo", include_str!("../../examples/billing/src/payments.jadpo")),
    ("src/subscribe.jadpo", include_str!("../../examples/billing/src/subscribe.jadpo")),
];

#[derive(Arbitrary, Debug)]
enum Input {
    Built(gen::App),
    Splice {
        file: u8,
        at: u16,
        cut: u8,
        bytes: Vec<u8>,
    },
}

fn splice(file: u8, at: u16, cut: u8, bytes: &[u8]) -> MemLoader {
    let mut loader = MemLoader::new().with("jadpo.yaml", MANIFEST);
    let chosen = file as usize % BILLING.len();
    for (i, (path, text)) in BILLING.iter().enumerate() {
        if i != chosen {
            loader.insert(*path, *text);
            continue;
        }
        let start = floor_boundary(text, at as usize % (text.len() + 1));
        let end = floor_boundary(text, (start + cut as usize).min(text.len()));
        let mut out = text.as_bytes()[..start].to_vec();
        out.extend_from_slice(bytes);
        out.extend_from_slice(&text.as_bytes()[end..]);
        loader.insert(*path, out);
    }
    loader
}

fn floor_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fuzz_target!(|input: Input| {
    let loader = match &input {
        Input::Built(app) => {
            let mut loader = MemLoader::new().with("jadpo.yaml", MANIFEST);
            for (path, text) in app.files() {
                loader.insert(path, text);
            }
            loader
        }
        Input::Splice { file, at, cut, bytes } => splice(*file, *at, *cut, bytes),
    };
    let compiled = jadpo_compiler::compile(&loader, "");
    for d in &compiled.diagnostics {
        common::assert_spans(&compiled.files, d);
    }
    if let Some(program) = &compiled.program {
        let analysis = jadpo_checker::check(program, &compiled.files, Scope::App);
        for d in &analysis.diagnostics {
            common::assert_spans(&compiled.files, d);
        }
    }
});
