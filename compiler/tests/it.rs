//! The integration tests, one binary: each file is a module (rust-analyzer's layout;
//! one link instead of one per file).

mod differ;
mod http_binding;
mod load_compile_packages;
mod load_limits;
mod load_manifest;
mod load_resolve;
mod load_sources;
mod load_support;
mod parser_design;
mod parser_fixtures;
mod parser_forms;
mod parser_recovery;
mod resolve_errors;
mod resolve_example;
mod resolve_incremental;
mod resolve_support;
mod units;
