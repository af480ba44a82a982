//! The process clock as the runtime's [`Instant`]: what the SQLite store
//! stamps leases and rows with (Postgres uses the database's clock).

use jadpo_runtime::value::Instant;

/// Now, in nanoseconds since the Unix epoch.
pub fn now() -> Instant {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    Instant(since.as_nanos() as i128 + shift())
}

/// Test builds (the `crash-hooks` feature) may move the clock by
/// `JADPO_TEST_CLOCK_SHIFT_S` seconds, so a test can read a store as it
/// will look days later; other builds never read the variable.
#[cfg(feature = "crash-hooks")]
fn shift() -> i128 {
    static SHIFT: std::sync::OnceLock<i128> = std::sync::OnceLock::new();
    *SHIFT.get_or_init(|| {
        std::env::var("JADPO_TEST_CLOCK_SHIFT_S")
            .ok()
            .and_then(|s| s.parse::<i64>().ok())
            .map_or(0, |s| i128::from(s) * 1_000_000_000)
    })
}

#[cfg(not(feature = "crash-hooks"))]
fn shift() -> i128 {
    0
}
