//! Jadpo's server runtime (design `server.md`): the stores apps run on in
//! production, an embedded SQLite and Postgres, behind the runtime's store
//! interfaces. The runtime itself (`jadpo-runtime`) stays free of IO; this
//! crate holds the IO.

pub mod store;
