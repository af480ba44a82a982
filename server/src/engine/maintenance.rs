//! Retention (design section 20) in the maintenance role: once a minute,
//! pruning in short transactions of at most 1,000 rows each, never in the
//! claim path, until nothing is left to prune.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use jadpo_runtime::store::Retention;

use super::Engine;
use crate::store::clock::now;

const BATCH: usize = 1000;

/// One round: prunes until a call removes nothing; rows removed.
pub fn prune_all(engine: &Engine, keep: Retention) -> usize {
    let mut total = 0;
    // Bounded: a store that keeps answering full batches is left for the
    // next round.
    for _ in 0..100 {
        match engine.store.prune(now(), keep, BATCH) {
            Ok(p) if p.total() == 0 => break,
            Ok(p) => total += p.total(),
            Err(e) => {
                engine.listing.note(&format!("pruning failed: {e}"));
                break;
            }
        }
        if engine.stopping() {
            break;
        }
    }
    total
}

pub fn start(engine: Arc<Engine>, keep: Retention) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("jadpo-maintenance".into())
        .spawn(move || {
            while !engine.stopping() {
                prune_all(&engine, keep);
                for _ in 0..600 {
                    if engine.stopping() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        })
}
