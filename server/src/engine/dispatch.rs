//! The dispatcher (design section 17): one thread claims waiting
//! deliveries up to the free runner slots, and the runners make their
//! attempts. It looks again at once when this process inserted
//! deliveries (a commit with events, a schedule's tick), and otherwise
//! every second, which also finds other processes' deliveries and lapsed
//! leases to rescue.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use jadpo_runtime::store::{ClaimRequest, Claimed};

use super::{run, Engine};
use crate::store::clock::now;

/// How long an idle dispatcher waits before it looks again, unless a
/// notice wakes it first.
const POLL: Duration = Duration::from_secs(1);

/// [`POLL`]; test builds (the `crash-hooks` feature) take
/// `JADPO_TEST_POLL_MS`, so a test can show a notice, not the poll, woke
/// the dispatcher.
fn poll() -> Duration {
    #[cfg(feature = "crash-hooks")]
    if let Some(ms) = std::env::var("JADPO_TEST_POLL_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        return Duration::from_millis(ms);
    }
    POLL
}

/// Starts the dispatcher and its runners; they end once the engine stops
/// and the attempts in flight are done.
pub fn start(engine: Arc<Engine>) -> std::io::Result<Vec<JoinHandle<()>>> {
    // Deliveries other processes insert wake this one at once (Postgres's
    // LISTEN/NOTIFY); without it, the poll finds them.
    let weak = Arc::downgrade(&engine);
    let wake = Arc::new(move || {
        if let Some(engine) = weak.upgrade() {
            engine.notify();
        }
    });
    if let Err(e) = engine.store.listen(wake) {
        engine.listing.note(&format!(
            "WARN no notices from the store ({e}): dispatchers poll every second"
        ));
    }
    let slots = engine.settings.concurrency.max(1);
    let busy = Arc::new(AtomicUsize::new(0));
    let (send, receive) = mpsc::channel::<Claimed>();
    let receive = Arc::new(Mutex::new(receive));
    let mut threads = Vec::with_capacity(slots + 1);
    for i in 0..slots {
        let (engine, receive, busy) = (engine.clone(), receive.clone(), busy.clone());
        threads.push(
            std::thread::Builder::new()
                .name(format!("jadpo-runner-{i}"))
                .spawn(move || runner(&engine, &receive, &busy))?,
        );
    }
    let claimer = std::thread::Builder::new()
        .name("jadpo-dispatcher".into())
        .spawn(move || claim_loop(&engine, &send, &busy, slots))?;
    threads.push(claimer);
    Ok(threads)
}

fn claim_loop(engine: &Engine, send: &mpsc::Sender<Claimed>, busy: &AtomicUsize, slots: usize) {
    let mut seen = engine.notices();
    let mut said = super::listing::Said::default();
    while !engine.stopping() {
        let free = slots.saturating_sub(busy.load(Ordering::Acquire));
        let mut claimed = 0;
        if free > 0 {
            let request = ClaimRequest {
                queues: engine.settings.queues.clone(),
                max: free,
                lease_ms: engine.settings.lease_ms,
                runner: engine.settings.runner.clone(),
                now: now(),
            };
            match engine.store.claim(&request) {
                Ok(found) => {
                    for e in engine.store.claim_errors() {
                        said.say(
                            &*engine.listing,
                            &e.store,
                            format!(
                                "claiming failed: {e} (the other stores' deliveries were claimed)"
                            ),
                        );
                    }
                    claimed = found.len();
                    for c in found {
                        if c.rescued {
                            engine.metrics.rescued();
                        } else {
                            let waited = (request.now.0 - c.delivery.run_at.0) as f64 / 1e9;
                            engine.metrics.claimed(&c.delivery.queue, waited);
                        }
                        busy.fetch_add(1, Ordering::AcqRel);
                        if send.send(c).is_err() {
                            return;
                        }
                    }
                }
                Err(e) => {
                    let what = format!("claiming failed: {e}");
                    said.say(&*engine.listing, &e.store, what);
                }
            }
        }
        if claimed == 0 || claimed == free {
            seen = engine.wait(seen, poll());
        }
    }
}

fn runner(engine: &Engine, receive: &Mutex<mpsc::Receiver<Claimed>>, busy: &AtomicUsize) {
    loop {
        let next = match receive.lock() {
            Ok(r) => r.recv_timeout(Duration::from_millis(200)),
            Err(_) => return,
        };
        match next {
            Ok(c) => {
                let crash = crate::crash::point_for(&c.delivery.action);
                run::attempt(engine, &c.delivery, c.lease, None, None, crash);
                busy.fetch_sub(1, Ordering::AcqRel);
                // A slot is free: the dispatcher may claim again.
                engine.notify();
            }
            Err(mpsc::RecvTimeoutError::Timeout) if engine.stopping() => return,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
        }
    }
}
