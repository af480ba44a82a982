//! A plain timing run (no criterion): checks actions whose paths number in
//! the quintillions (N sequential `if/else`, each branch a changing call) and
//! a long chain of called actions, and prints how long the checker takes.
//! Run with `cargo bench -p jadpo-checker`.

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Instant;

fn wide(n: usize) -> support::B {
    let mut b = support::B::new();
    b.configured();
    let mut body = Vec::new();
    for _ in 0..n {
        let left = vec![b.call("stripe.charges.create")];
        let right = vec![b.call("stripe.customers.create")];
        body.push(b.if_else(left, right));
    }
    let a = b.action("wide", body);
    b.subscriber(a);
    b
}

fn chain(n: usize) -> support::B {
    let mut b = support::B::new();
    b.configured();
    let first = vec![b.call("stripe.prices.retrieve")];
    let mut last = b.action("a0", first);
    for i in 1..n {
        let body = vec![b.run(last), b.run(last)];
        last = b.action(&format!("a{i}"), body);
    }
    b
}

fn time(label: &str, b: &support::B) {
    let start = Instant::now();
    let out = b.check();
    println!(
        "{label}: {:?}, {} diagnostics",
        start.elapsed(),
        out.diagnostics.len()
    );
}

fn main() {
    for n in [60, 500, 2000] {
        time(&format!("{n} sequential if/else"), &wide(n));
    }
    // Each action calls the previous one twice: 2^n inlined calls, but the
    // summaries see every action once. The plan's expansion is capped.
    time("40 actions, each calling the previous twice", &chain(40));
}
