//! The slow integration tests, one binary of their own: hostile inputs, the
//! differential runs of the language server, the properties and determinism.

mod determinism;
mod hostile;
mod lsp_differential;
mod properties;
