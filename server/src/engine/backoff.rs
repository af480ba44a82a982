//! When a retried delivery runs again (design section 17): `attempt⁴`
//! seconds, ±10%, at most 6 hours; never before a provider's Retry-After;
//! with a keyed step in doubt, never later than 5 minutes before its key's
//! window ends (`not_after`), so the retry still sends under the same key.

use jadpo_runtime::value::Instant;

const MAX_WAIT_MS: u64 = 6 * 3600 * 1000;
/// How long before a key's window ends a retry must have started.
const BEFORE_WINDOW_END_MS: i64 = 5 * 60 * 1000;

/// The next start after attempt `attempt` (1-based) failed at `now`.
/// `jitter` in [0, 1) spreads retries of many deliveries; `cap_ms` is
/// `jadpo dev`'s 30 s.
pub fn next_start(
    now: Instant,
    attempt: u32,
    jitter: f64,
    cap_ms: Option<u64>,
    not_before: Option<Instant>,
    not_after: Option<Instant>,
) -> Instant {
    let base = u64::from(attempt.max(1))
        .saturating_pow(4)
        .saturating_mul(1000);
    let spread = 0.9 + 0.2 * jitter.clamp(0.0, 1.0);
    let mut wait = ((base as f64) * spread) as u64;
    wait = wait.min(MAX_WAIT_MS);
    if let Some(cap) = cap_ms {
        wait = wait.min(cap);
    }
    let mut at = Instant(now.0 + i128::from(wait) * 1_000_000);
    if let Some(earliest) = not_before {
        at = at.max(earliest);
    }
    if let Some(latest) = not_after {
        let latest = Instant(latest.0 - i128::from(BEFORE_WINDOW_END_MS) * 1_000_000);
        at = at.min(latest.max(now));
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i128 = 1_000_000_000;

    #[test]
    fn the_wait_grows_as_the_fourth_power_and_stops_at_six_hours() {
        let now = Instant(0);
        let at = |n| next_start(now, n, 0.5, None, None, None).0 / S;
        assert_eq!((at(1), at(2), at(3)), (1, 16, 81));
        assert_eq!(at(100), 6 * 3600);
        assert_eq!(next_start(now, 3, 0.5, Some(30_000), None, None).0 / S, 30);
    }

    #[test]
    fn a_key_in_doubt_is_retried_before_its_window_ends() {
        let now = Instant(0);
        let window_end = Instant(600 * S);
        let at = next_start(now, 10, 0.5, None, None, Some(window_end));
        assert_eq!(at.0 / S, 300, "five minutes before the window's end");
        let retry_after = Instant(20 * S);
        assert_eq!(
            next_start(now, 1, 0.5, None, Some(retry_after), None).0 / S,
            20
        );
    }
}
