//! `retire::Freer`, which `free_later` uses: values freed on its thread,
//! or by the caller when that thread is behind. A thread of the test's
//! own: the process's is shared with every test that resolves.

use jadpo_compiler::retire::Freer;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::Duration;

/// Says which thread dropped it; with `hold`, waits for a word first.
struct Noted {
    dropped_on: Sender<String>,
    hold: Option<Receiver<()>>,
}

impl Drop for Noted {
    fn drop(&mut self) {
        if let Some(hold) = self.hold.take() {
            let _ = hold.recv_timeout(Duration::from_secs(10));
        }
        let name = std::thread::current().name().unwrap_or("").to_string();
        let _ = self.dropped_on.send(name);
    }
}

fn noted(dropped_on: &Sender<String>) -> Noted {
    Noted {
        dropped_on: dropped_on.clone(),
        hold: None,
    }
}

#[test]
fn a_value_is_freed_on_the_freeing_thread_and_a_backlog_by_its_caller() {
    let freer = Freer::start("test-free", 2).expect("a thread starts");
    let (tx, rx) = channel();
    freer.free(noted(&tx));
    let first = rx.recv_timeout(Duration::from_secs(10));
    assert_eq!(first.as_deref(), Ok("test-free"));

    // The thread held up: values queue, then the caller frees its own
    // instead of waiting or growing the queue.
    let (release, hold) = channel();
    freer.free(Noted {
        dropped_on: tx.clone(),
        hold: Some(hold),
    });
    let here = std::thread::current().name().unwrap_or("").to_string();
    let mut queued = 0;
    let inline = loop {
        freer.free(noted(&tx));
        if let Ok(name) = rx.try_recv() {
            break name;
        }
        queued += 1;
        assert!(queued <= 3, "more values waited than the queue holds");
    };
    assert_eq!(inline, here, "a full queue's value is freed by its caller");
    release.send(()).expect("the held value waits");
    // The held value and the queued ones are freed on the thread, in order.
    for _ in 0..=queued {
        let name = rx.recv_timeout(Duration::from_secs(10));
        assert_eq!(name.as_deref(), Ok("test-free"));
    }
}
