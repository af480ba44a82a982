//! Leases of running attempts, kept alive (design section 17): an attempt
//! waiting on a provider would otherwise lose its lease to a rescue. One
//! thread extends every registered lease each third of the lease; a lease
//! another runner took is dropped from the list, and the attempt finds out
//! at its next fenced write.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jadpo_runtime::store::{Fenced, Lease};

use super::Engine;

#[derive(Default)]
pub struct Heartbeats {
    running: Mutex<BTreeMap<String, Lease>>,
}

/// Removes its delivery from the heartbeats when the attempt ends.
pub struct Beating<'h> {
    heartbeats: &'h Heartbeats,
    delivery: String,
}

impl Drop for Beating<'_> {
    fn drop(&mut self) {
        if let Ok(mut running) = self.heartbeats.running.lock() {
            running.remove(&self.delivery);
        }
    }
}

impl Heartbeats {
    /// Keeps `delivery`'s lease alive until the guard drops.
    pub fn keep(&self, delivery: &str, lease: Lease) -> Beating<'_> {
        if let Ok(mut running) = self.running.lock() {
            running.insert(delivery.to_string(), lease);
        }
        Beating {
            heartbeats: self,
            delivery: delivery.to_string(),
        }
    }

    fn snapshot(&self) -> Vec<(String, Lease)> {
        self.running
            .lock()
            .map(|r| r.iter().map(|(k, v)| (k.clone(), *v)).collect())
            .unwrap_or_default()
    }

    fn forget(&self, delivery: &str) {
        if let Ok(mut running) = self.running.lock() {
            running.remove(delivery);
        }
    }
}

/// The heartbeat thread: runs until the engine stops and no attempt runs.
pub fn start(engine: Arc<Engine>) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("jadpo-heartbeat".into())
        .spawn(move || {
            let every = Duration::from_millis((engine.settings.lease_ms / 3).max(10));
            loop {
                // In slices, so a stop with nothing running ends the thread
                // at once, not a third of a lease later (10 s by default).
                let due = std::time::Instant::now() + every;
                while std::time::Instant::now() < due {
                    if engine.stopping() && engine.heartbeats.snapshot().is_empty() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(50).min(every));
                }
                let running = engine.heartbeats.snapshot();
                if engine.stopping() && running.is_empty() {
                    return;
                }
                for (delivery, lease) in running {
                    let now = crate::store::clock::now();
                    let beat =
                        engine
                            .store
                            .heartbeat(&delivery, &lease, engine.settings.lease_ms, now);
                    if let Err(Fenced::LeaseLost) = beat {
                        engine.heartbeats.forget(&delivery);
                    }
                }
            }
        })
}
