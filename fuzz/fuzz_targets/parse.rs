//! Fuzz target: the lexer and parser on arbitrary bytes (made into text
//! lossily). Parsing must never panic, and every diagnostic span must lie in
//! the text on character boundaries.
#![no_main]

#[path = "common.rs"]
mod common;

use jadpo_compiler::parser::parse_file;
use jadpo_compiler::span::FileId;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (_ast, diags) = parse_file(FileId(0), &text);
    for d in &diags {
        common::assert_in_text(&text, d.span, d);
    }
});
