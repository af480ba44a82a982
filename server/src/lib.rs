//! Jadpo's server runtime (design `server.md`): the stores apps run on in
//! production (an embedded SQLite and Postgres) behind the runtime's store
//! interfaces, the engine that runs deliveries on them (dispatcher,
//! schedules, heartbeats), routes over HTTP, and the providers attempts
//! send through. The runtime itself (`jadpo-runtime`) stays free of IO;
//! this crate holds the IO.

pub mod build;
pub mod crash;
pub mod engine;
pub mod fake_server;
pub mod fakes;
pub mod http;
pub mod http_provider;
pub mod metrics;
pub mod store;
pub mod tls;
