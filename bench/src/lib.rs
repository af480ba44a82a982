//! Shared pieces of the benchmark binaries: the deterministic random number
//! generator the corpus generator uses, the corpus generator itself, and the
//! four-step app of the runtime and test benchmarks.

pub mod corpus;
pub mod four_steps;
pub mod rng;

#[cfg(test)]
mod carry_differential;
