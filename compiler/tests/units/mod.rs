//! Tests of single modules of the compiler, through its public items. They
//! lived beside their modules until a second, test-only build of the whole
//! crate became the tail of every cold `cargo test` (see BENCHMARKS.md).

mod diag;
mod duration;
mod index;
mod lexer;
mod load_fields;
mod load_loaders;
mod load_package_unit;
mod load_registry;
mod load_yaml;
mod parser;
mod parser_split;
mod pattern;
mod resolve_drive;
mod retire;
mod source;
