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

fn chain(n: usize, op: &str) -> support::B {
    let mut b = support::B::new();
    b.configured();
    let first = vec![b.call(op)];
    let mut last = b.action("a0", first);
    for i in 1..n {
        let body = vec![b.run(last), b.run(last)];
        last = b.action(&format!("a{i}"), body);
    }
    b
}

fn time(label: &str, b: &support::B) {
    let start = Instant::now();
    let analysed = jadpo_checker::analysis::analyse(&b.p);
    println!("{label}: summaries in {:?}", start.elapsed());
    let scope = jadpo_checker::Scope::App;
    let cx = jadpo_checker::Cx {
        program: &b.p,
        files: &b.files,
        scope: &scope,
        analysed: &analysed,
    };
    let start = Instant::now();
    let diags = jadpo_checker::rules::run(&cx);
    println!(
        "{label}: rules in {:?} ({} findings)",
        start.elapsed(),
        diags.len()
    );
    let start = Instant::now();
    let _ = jadpo_checker::plan::build(&cx);
    println!("{label}: plan in {:?}", start.elapsed());
    drop(analysed);
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
    time(
        "40 actions, each calling the previous twice",
        &chain(40, "stripe.prices.retrieve"),
    );
    time(
        "40 actions, each charging twice through the previous",
        &chain(40, "stripe.charges.create"),
    );
}
