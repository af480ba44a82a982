//! The integration tests, one binary: each file is a module (rust-analyzer's layout;
//! one link instead of one per file).

mod doc_examples;
mod follow_up;
mod incremental;
mod plan;
mod registry;
mod rules;
mod support;
