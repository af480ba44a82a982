//! Freeing large values off the editor's path.
//!
//! Freeing a large app's tables, program or analysis takes milliseconds of
//! one core. On the rayon pool such a drop holds a worker the next edit's
//! parallel phases wait for (an editor sends the next edit as soon as the
//! last answer is out); here one thread of its own frees them in order, at
//! a lower priority than the threads that answer, so it runs on whatever
//! core they leave idle.

use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::OnceLock;

/// A value freed by a [`Freer`].
type Garbage = Box<dyn Send>;

/// Values waiting for the freeing thread at most: past it (the thread
/// starved for longer than a few edits) the caller frees its own, so
/// memory stays bounded.
const QUEUE: usize = 8;

/// Frees `value` on the process's freeing thread (`jadpo-free`), or here
/// when it is behind or cannot be started.
pub fn free_later<T: Send + 'static>(value: T) {
    static SHARED: OnceLock<Option<Freer>> = OnceLock::new();
    match SHARED.get_or_init(|| Freer::start("jadpo-free", QUEUE)) {
        Some(freer) => freer.free(value),
        None => drop(value),
    }
}

/// A thread that frees what it is given, in order, at a lower priority;
/// it ends when its `Freer` is dropped.
pub struct Freer {
    queue: SyncSender<Garbage>,
}

impl Freer {
    /// Starts a thread named `name` that holds at most `waiting` values
    /// besides the one it frees; `None` when no thread can be started.
    pub fn start(name: &str, waiting: usize) -> Option<Freer> {
        let (queue, receive) = sync_channel::<Garbage>(waiting);
        let started = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || {
                lower_priority();
                for garbage in receive {
                    drop(garbage);
                }
            });
        started.ok().map(|_| Freer { queue })
    }

    /// Frees `value` on the thread, or here when its queue is full.
    pub fn free<T: Send + 'static>(&self, value: T) {
        match self.queue.try_send(Box::new(value)) {
            Ok(()) => {}
            Err(TrySendError::Full(value) | TrySendError::Disconnected(value)) => drop(value),
        }
    }
}

/// Makes the calling thread yield to the others when cores are short
/// (Linux: a thread's nice value is its own).
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: gettid and setpriority read and write nothing of this
    // process's memory; a failure leaves the priority as it was.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, 10);
    }
}

/// A value no longer needed, kept until the editor has its answer and then
/// freed by [`free_later`].
pub struct Retired<T: Send + 'static>(Option<T>);

impl<T: Send + 'static> Default for Retired<T> {
    fn default() -> Self {
        Retired(None)
    }
}

impl<T: Send + 'static> Retired<T> {
    /// Keeps `value` until [`Retired::free`]; one kept before it is freed
    /// now, by [`free_later`].
    pub fn keep(&mut self, value: T) {
        if let Some(older) = self.0.replace(value) {
            free_later(older);
        }
    }

    /// Frees what is kept, by [`free_later`].
    pub fn free(&mut self) {
        if let Some(value) = self.0.take() {
            free_later(value);
        }
    }
}
