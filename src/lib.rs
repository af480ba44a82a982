//! The `jadpo` tool as a library: the commands, the check pipeline the
//! binary and the integration tests share, and the renderers. `main.rs`
//! only parses arguments and calls [`commands::run`].

pub mod bundle;
pub mod check;
pub mod cli;
pub mod commands;
pub mod crash;
pub mod db;
pub mod describe;
pub mod dev;
pub mod doc;
pub mod fix;
pub mod fmt;
pub mod locate;
pub mod lsp;
pub mod memory;
pub mod operate;
pub mod plan_diff;
pub mod privacy;
pub mod publish;
pub mod render;
pub mod scaffold;
pub mod serve;
pub mod testing;
pub mod watch;
pub mod workspace;
pub mod write;
