//! Shared pieces of the benchmark binaries: the deterministic random number
//! generator the corpus generator uses, and the corpus generator itself.

pub mod corpus;
pub mod rng;
