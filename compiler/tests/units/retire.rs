//! `retire::free_later`: values freed on the freeing thread, or by the
//! caller when that thread is behind.

use jadpo_compiler::retire::free_later;
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
    let (tx, rx) = channel();
    free_later(noted(&tx));
    let first = rx.recv_timeout(Duration::from_secs(10));
    assert_eq!(first.as_deref(), Ok("jadpo-free"));

    // The freeing thread held up: values queue, then the caller frees
    // its own instead of waiting or growing the queue.
    let (release, hold) = channel();
    free_later(Noted {
        dropped_on: tx.clone(),
        hold: Some(hold),
    });
    let here = std::thread::current().name().unwrap_or("").to_string();
    let mut queued = 0;
    let inline = loop {
        free_later(noted(&tx));
        if let Ok(name) = rx.try_recv() {
            break name;
        }
        queued += 1;
        assert!(queued < 100, "the queue never filled");
    };
    assert_eq!(inline, here, "a full queue's value is freed by its caller");
    release.send(()).expect("the held value waits");
    // The held value and the queued ones are freed on the thread, in order.
    for _ in 0..=queued {
        let name = rx.recv_timeout(Duration::from_secs(10));
        assert_eq!(name.as_deref(), Ok("jadpo-free"));
    }
}
