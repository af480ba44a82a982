//! The process clock as the runtime's [`Instant`]: what the SQLite store
//! stamps leases and rows with (Postgres uses the database's clock).

use jadpo_runtime::value::Instant;

/// Now, in nanoseconds since the Unix epoch.
pub fn now() -> Instant {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    Instant(since.as_nanos() as i128)
}
