//! The engine's gauge thread (design `server.md` section 21): every 15 s
//! it reads the store's unfinished records and open operator items into
//! the metrics and fires the no-setup alert, with a WARN every 10
//! minutes while it fires. A scrape of `/metrics` reads them too.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use jadpo_runtime::store::{DeliveryState, Item, Store, StoreError};
use jadpo_runtime::value::Instant;

use super::Engine;

/// The alert's state, for its WARN lines.
#[derive(Default)]
pub struct AlertState {
    last_warned: Mutex<Option<std::time::Instant>>,
    /// Stores that could not be read, said at most once a minute.
    unread: Mutex<super::listing::Said>,
}

/// Refreshes the store's gauges every 15 s and fires the alert; runs
/// until the engine stops.
pub fn start(engine: Arc<Engine>) -> std::io::Result<std::thread::JoinHandle<()>> {
    let alert_after = engine.settings.alert_after();
    std::thread::Builder::new()
        .name("jadpo-metrics".into())
        .spawn(move || {
            let state = AlertState::default();
            while !engine.stopping() {
                refresh(&engine, alert_after, &state);
                for _ in 0..150 {
                    if engine.stopping() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        })
}

/// One refresh of the gauges and the alert. A store that cannot be read
/// is said, at most once a minute: the gauges and the alert keep their
/// last values.
pub fn refresh(engine: &Engine, alert_after: Duration, state: &AlertState) {
    let (firing, items, records, oldest) = match gauges(engine, alert_after) {
        Ok(read) => read,
        Err(errors) => {
            if let Ok(mut said) = state.unread.lock() {
                for e in errors {
                    let what = format!("WARN the gauges keep their last values: {e}");
                    said.say(&*engine.listing, &e.store, what);
                }
            }
            return;
        }
    };
    if !firing {
        return;
    }
    let Ok(mut last) = state.last_warned.lock() else {
        return;
    };
    if last.is_some_and(|t| t.elapsed() < Duration::from_secs(600)) {
        return;
    }
    *last = Some(std::time::Instant::now());
    engine.listing.note(&format!(
        "WARN unfinished work: {items} open operator item{}, {records} unfinished record{}, the oldest {oldest:.0} s old; list them: jadpo deliveries list --not-done",
        if items == 1 { "" } else { "s" },
        if records == 1 { "" } else { "s" },
    ));
}

/// What the gauges read from the stores.
pub struct Readings {
    /// Each store's unfinished records: its name, how many, and the
    /// oldest's age in seconds.
    pub stores: Vec<(String, usize, f64)>,
    pub items: Vec<Item>,
}

/// The gauges' values from every store, or the errors of those that
/// cannot be read: an outage never reads as no unfinished work, which
/// would end the alert.
pub fn read(store: &dyn Store, now: Instant) -> Result<Readings, Vec<StoreError>> {
    let age = |records: &[(String, jadpo_runtime::record::StoredRecord)]| {
        records
            .iter()
            .map(|(_, r)| ((now.0 - r.started_at.0) as f64 / 1e9).max(0.0))
            .fold(0.0f64, f64::max)
    };
    let mut errors = Vec::new();
    let mut stores = Vec::new();
    // Each store by its own name (design section 21), an app's several
    // stores each.
    for (name, held) in store.unfinished_by_store() {
        match held {
            Ok(held) => stores.push((name, held.len(), age(&held))),
            Err(e) => errors.push(e),
        }
    }
    let items = store.items(true).map_err(|e| errors.push(e));
    match (items, errors.is_empty()) {
        (Ok(items), true) => Ok(Readings { stores, items }),
        _ => Err(errors),
    }
}

/// Reads the store's gauges and sets the alert's; (firing, open items,
/// unfinished records, the oldest's age in seconds). A scrape calls it
/// too, so `/metrics` is never older than the store.
pub fn gauges(
    engine: &Engine,
    alert_after: Duration,
) -> Result<(bool, usize, usize, f64), Vec<StoreError>> {
    let read = read(&*engine.store, crate::store::clock::now())?;
    let (mut records, mut oldest) = (0, 0.0f64);
    for (store, held, age) in &read.stores {
        engine.metrics.store_gauges(store, *held, *age);
        records += held;
        oldest = oldest.max(*age);
    }
    let items = read.items;
    // Every ending is listed, at 0 when none is open, so a rule can
    // compare it without `absent()`.
    let open: Vec<(DeliveryState, usize)> = DeliveryState::ALL
        .iter()
        .filter(|s| s.ended() && **s != DeliveryState::Completed)
        .map(|state| (*state, items.iter().filter(|i| i.outcome == *state).count()))
        .collect();
    let firing = !items.is_empty() || oldest > alert_after.as_secs_f64();
    engine.metrics.item_gauges(&open, firing);
    Ok((firing, items.len(), records, oldest))
}
