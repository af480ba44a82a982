//! The Jadpo step runtime: runs the actions of a checked program exactly as
//! its plan says (design `testing.md` section 9). A [`Runtime`] holds the
//! resolved program (lowered with its code) and the plan `jadpo build`
//! computes; [`Runtime::attempt`] runs one attempt of a delivery under a
//! lease against the narrow [`store`] interfaces and a
//! [`provider::Provider`], with the seed's record, replay, keys and
//! windows; [`Runtime::deliver`] loops over it for the test runner. No
//! filesystem or network access happens here: stores and providers are
//! given.

// Indexing that can panic is refused in the core: tables are indexed by
// their own ids (`IndexVec`), and anything else goes through `get`.
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

pub mod arith;
pub mod attempt;
pub mod check;
pub mod delivery;
pub mod eval;
pub mod fake;
pub mod follow;
pub mod provider;
pub mod record;
pub mod store;
pub mod suite;
pub mod value;
pub mod wire;

pub use attempt::CrashAt;
pub use delivery::{
    AttemptOutcome, Attempted, Delivery, End, Limits, ListedStep, Outcome, Runtime,
};
