//! The integration tests, one binary: each file is a module (rust-analyzer's layout;
//! one link instead of one per file).

mod answers;
mod billing;
mod commit;
mod record;
mod steps;
mod suite;
mod support;
mod value;
