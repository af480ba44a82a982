//! The integration tests, one binary: each file is a module (rust-analyzer's layout;
//! one link instead of one per file).

mod bindings;
mod cli;
mod common;
mod docs;
mod fixtures;
mod formats;
mod formatting;
mod invariants;
mod known_bad_diagnostics;
mod lsp;
mod packages;
mod plan_diff;
mod plan_snapshots;
mod publish;
mod render;
mod server_chaos;
mod server_crash;
mod server_http;
mod server_operators;
mod server_outcomes;
mod server_routes;
mod server_serve;
mod server_support;
mod test_command;
mod tidy;
mod workspace;
