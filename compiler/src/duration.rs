//! Durations as the language writes them, for every message, hover, page
//! and value the tool prints: one formatter, so a window reads the same in
//! a diagnostic, in `jadpo doc` and in a test's output.

/// `500ms`, `5s`, `2m`, `1h`, `90s`, `1080h`: the largest of hours,
/// minutes and seconds that divides the duration, else milliseconds.
/// Days are left to hours (providers state windows in hours: `24h`).
/// Signed for the runtime's `Duration` values.
pub fn text_signed(ms: i64) -> String {
    const UNITS: [(i64, &str); 3] = [(3_600_000, "h"), (60_000, "m"), (1000, "s")];
    if ms == 0 {
        return "0s".to_string();
    }
    for (size, unit) in UNITS {
        if ms % size == 0 {
            return format!("{}{unit}", ms / size);
        }
    }
    format!("{ms}ms")
}

/// [`text_signed`] of a count of milliseconds (timeouts, windows, deadline
/// budgets).
pub fn text(ms: u64) -> String {
    match i64::try_from(ms) {
        Ok(ms) => text_signed(ms),
        Err(_) => format!("{ms}ms"),
    }
}
