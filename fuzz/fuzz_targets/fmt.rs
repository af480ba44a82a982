//! Fuzz target: `jadpo fmt` on generated programs (the `gen` apps) and on
//! the billing example with bytes spliced in. Formatting must never panic;
//! when it gives a result (it checks tree and comments itself, so an
//! `Unstable` answer is a formatter bug and fails here), formatting that
//! result must give it back unchanged.
#![no_main]

#[path = "gen.rs"]
mod gen;

use arbitrary::Arbitrary;
use jadpo_compiler::printer::{format_source, FormatError};
use libfuzzer_sys::fuzz_target;

const BILLING: [&str; 4] = [
    include_str!("../../examples/billing/src/subscribe.jadpo"),
    include_str!("../../examples/billing/src/payments.jadpo"),
    include_str!("../../examples/billing/tests/subscribe.jadpo"),
    include_str!("../../examples/billing/src/entries.jadpo"),
];

#[derive(Arbitrary, Debug)]
enum Input {
    Built(gen::App),
    Splice { file: u8, at: u16, bytes: Vec<u8> },
}

fn check(text: &str) {
    match format_source(text) {
        Ok(once) => {
            let twice = format_source(&once).expect("the formatted text formats");
            assert_eq!(once, twice, "fmt is not a fixed point");
        }
        Err(FormatError::Syntax(_)) => {}
        Err(FormatError::Unstable(why)) => panic!("{why}\n--- source\n{text}"),
    }
}

fuzz_target!(|input: Input| {
    match input {
        Input::Built(app) => {
            for (_, text) in app.files() {
                check(&text);
            }
        }
        Input::Splice { file, at, bytes } => {
            let base = BILLING[file as usize % BILLING.len()];
            let mut at = at as usize % (base.len() + 1);
            while !base.is_char_boundary(at) {
                at -= 1;
            }
            let text = format!("{}{}{}", &base[..at], String::from_utf8_lossy(&bytes), &base[at..]);
            check(&text);
        }
    }
});
