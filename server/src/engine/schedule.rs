//! Schedules (design section 18): `every D` fires at the ticks `k·D` since
//! the Unix epoch. Just past every second of the clock the leader
//! (`Queue::lead_schedules`: on Postgres, the process holding an advisory
//! lock) offers the latest tick of each schedule to the store, which takes
//! it once (`Queue::tick`): missed ticks collapse into the latest, and any
//! number of processes make one delivery per tick.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use jadpo_runtime::store::{NewDelivery, Source};
use jadpo_runtime::value::Instant;

use super::Engine;
use crate::store::clock::now;

const MS: i128 = 1_000_000;

/// The latest tick of a period at `now`.
pub fn latest_tick(now: Instant, every_ms: u64) -> Instant {
    let every = i128::from(every_ms.max(1)) * MS;
    Instant(now.0.div_euclid(every) * every)
}

/// Offers each schedule's latest tick; the number of deliveries inserted.
pub fn tick_all(engine: &Engine) -> usize {
    let build = engine.build();
    let at = now();
    let mut inserted = 0;
    for s in &build.schedules {
        let tick = latest_tick(at, s.every_ms);
        let d = NewDelivery {
            id: format!("s_{}_{}", s.name, tick.0 / MS),
            source: Source::Schedule {
                name: s.name.clone(),
                tick,
            },
            action: build.program.action(s.action).qualified.clone(),
            subscriber: None,
            queue: "default".into(),
            priority: 0,
            tags: Vec::new(),
            max_attempts: 25,
            run_at: tick,
            args: b"[]".to_vec(),
            build_id: build.plan.build_id.clone(),
            unique: None,
        };
        match engine.store.tick(&s.name, s.every_ms, &d, at) {
            Ok(true) => {
                inserted += 1;
                engine.metrics.ticked(&s.name, true);
            }
            Ok(false) => engine.metrics.ticked(&s.name, false),
            Err(e) => engine.listing.note(&format!(
                "schedule {}: the tick could not be stored: {e}",
                s.name
            )),
        }
    }
    if inserted > 0 {
        engine.notify();
    }
    inserted
}

pub fn start(engine: Arc<Engine>) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("jadpo-schedules".into())
        .spawn(move || {
            while !engine.stopping() {
                // Only the leader offers ticks; the store's tick check
                // keeps them once each even if two ever lead at once.
                if engine.store.lead_schedules() {
                    tick_all(&engine);
                }
                let mut left = until_next_check(now());
                while !left.is_zero() {
                    if engine.stopping() {
                        return;
                    }
                    let nap = left.min(Duration::from_millis(100));
                    std::thread::sleep(nap);
                    left -= nap;
                }
            }
        })
}

/// How long the leader waits before its next check: until just past the
/// next whole second. Checking on the clock's seconds, not a second after
/// the last check ended, keeps a check in every second however long a
/// check takes, so a tick of a one-second schedule is not lost to drift.
pub fn until_next_check(now: Instant) -> Duration {
    const PAST: i128 = 20 * MS;
    let second = 1_000 * MS;
    let next = (now.0 - PAST).div_euclid(second) * second + second + PAST;
    Duration::from_nanos(u64::try_from(next - now.0).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_multiples_of_the_period_since_the_epoch() {
        let t = Instant(3_700 * 1_000 * MS + 5);
        assert_eq!(latest_tick(t, 3_600_000).0, 3_600 * 1_000 * MS);
        assert_eq!(latest_tick(Instant(0), 1000).0, 0);
    }

    #[test]
    fn the_leader_checks_just_past_each_second() {
        let second = 1_000 * MS;
        let at = |ms: i128| Instant(1_700_000_000 * second + ms * MS);
        let wait = |ms: i128| until_next_check(at(ms)).as_millis();
        assert_eq!(wait(0), 20);
        assert_eq!(wait(19), 1);
        assert_eq!(wait(20), 1000);
        assert_eq!(wait(500), 520);
        assert_eq!(wait(999), 21);
    }
}
