//! The engine (design `server.md` sections 17, 18 and 22): runs deliveries
//! against the store and the providers, one attempt at a time, on plain
//! threads (the interpreter, the stores and the providers are
//! synchronous). `run` makes one attempt of a claimed delivery and leaves
//! the delivery as the attempt ended it; `dispatch` claims waiting
//! deliveries and runs them; `schedule` inserts each schedule's ticks;
//! `heartbeat` keeps the leases of running attempts alive.

pub mod backoff;
pub mod dispatch;
pub mod gauges;
pub mod heartbeat;
pub mod listing;
pub mod maintenance;
pub mod run;
pub mod schedule;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::Duration;

use jadpo_compiler::intern::Name;
use jadpo_runtime::provider::Provider;
use jadpo_runtime::store::Store;
use jadpo_runtime::value::Value;

use crate::build::Build;

/// Makes the provider an attempt sends through (a fake shared by every
/// attempt, or HTTP).
pub trait Providers: Send + Sync {
    fn provider<'a>(
        &'a self,
        program: &'static jadpo_compiler::ir::Program,
    ) -> Box<dyn Provider + 'a>;
}

/// How the engine runs.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Who claims (`deliveries list` shows it).
    pub runner: String,
    pub lease_ms: u64,
    /// Runner threads.
    pub concurrency: usize,
    /// `jadpo dev` caps a retry's wait (30 s).
    pub retry_cap_ms: Option<u64>,
    /// The queues served; empty for all.
    pub queues: Vec<String>,
    /// The alert fires once the oldest unfinished record is this old.
    pub alert_after_ms: u64,
    /// What retention keeps (`--keep-completed`).
    pub keep: jadpo_runtime::store::Retention,
}

impl Settings {
    pub fn alert_after(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.alert_after_ms)
    }
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            runner: format!("jadpo-{}", std::process::id()),
            lease_ms: 30_000,
            concurrency: 64,
            retry_cap_ms: None,
            queues: Vec::new(),
            alert_after_ms: crate::metrics::ALERT_AFTER.as_millis() as u64,
            keep: jadpo_runtime::store::Retention::default(),
        }
    }
}

/// Everything a running app shares.
pub struct Engine {
    build: RwLock<&'static Build>,
    pub store: Arc<dyn Store>,
    pub providers: Arc<dyn Providers>,
    pub config: BTreeMap<Name, Value>,
    pub settings: Settings,
    pub listing: Arc<dyn listing::Listen>,
    pub metrics: Arc<crate::metrics::Metrics>,
    pub heartbeats: heartbeat::Heartbeats,
    /// Set by a shutdown: claim nothing more, end attempts before their
    /// next send.
    pub stopping: AtomicBool,
    /// Woken when deliveries were inserted in this process.
    wake: (Mutex<u64>, Condvar),
}

impl Engine {
    pub fn new(
        build: &'static Build,
        store: Arc<dyn Store>,
        providers: Arc<dyn Providers>,
        config: BTreeMap<Name, Value>,
        settings: Settings,
        listing: Arc<dyn listing::Listen>,
    ) -> Arc<Engine> {
        let metrics = crate::metrics::Metrics::new(&build.plan.build_id);
        Arc::new(Engine {
            metrics,
            build: RwLock::new(build),
            store,
            providers,
            config,
            settings,
            listing,
            heartbeats: heartbeat::Heartbeats::default(),
            stopping: AtomicBool::new(false),
            wake: (Mutex::new(0), Condvar::new()),
        })
    }

    /// The build new attempts run on.
    pub fn build(&self) -> &'static Build {
        match self.build.read() {
            Ok(b) => *b,
            Err(poisoned) => *poisoned.into_inner(),
        }
    }

    /// Runs later attempts on `build` (a reload of `jadpo dev`); attempts
    /// running finish on theirs.
    pub fn replace_build(&self, build: &'static Build) {
        match self.build.write() {
            Ok(mut b) => *b = build,
            Err(poisoned) => *poisoned.into_inner() = build,
        }
    }

    pub fn stopping(&self) -> bool {
        self.stopping.load(Ordering::Relaxed)
    }

    /// Stops claiming; wakes every idle runner so it sees it.
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::Relaxed);
        self.notify();
    }

    /// Deliveries were inserted: idle runners look at once.
    pub fn notify(&self) {
        if let Ok(mut n) = self.wake.0.lock() {
            *n += 1;
        }
        self.wake.1.notify_all();
    }

    /// Waits for a notice or `timeout`, whichever is first.
    pub fn wait(&self, seen: u64, timeout: Duration) -> u64 {
        let Ok(guard) = self.wake.0.lock() else {
            return seen;
        };
        match self
            .wake
            .1
            .wait_timeout_while(guard, timeout, |n| *n == seen && !self.stopping())
        {
            Ok((n, _)) => *n,
            Err(_) => seen,
        }
    }

    pub fn notices(&self) -> u64 {
        self.wake.0.lock().map_or(0, |n| *n)
    }
}
