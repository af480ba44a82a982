//! The server crate's tests: the store conformance suite, the SQLite
//! store's own faults, and Postgres's. A test's `unwrap` is its assertion
//! that the store answered.

#![allow(clippy::unwrap_used)]

mod billing;
mod conformance;
mod http_provider;
mod postgres;
mod prune;
mod several;
mod sqlite;
mod support;
