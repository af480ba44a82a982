//! `runtime_bench [--deliveries N]`: the step runtime's throughput on one
//! thread. A generated app's 4-step keyed action is delivered N times
//! through the in-memory store and the fake provider, clean; then each of
//! its 12 crash points is struck N / 12 times (so as many crashed
//! deliveries as clean ones). Reports deliveries per second, time per
//! attempt, and bytes and allocations per delivery (counted by a wrapper
//! around the binary's allocator).

use std::alloc::{GlobalAlloc, Layout};
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant as Clock;

use jadpo_checker::Scope;
use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::ActionId;
use jadpo_compiler::resolve::Lowering;
use jadpo_runtime::fake::{Fake, Script, Scripted};
use jadpo_runtime::store::MemStore;
use jadpo_runtime::value::{parse_instant, Value};
use jadpo_runtime::{CrashAt, Delivery, End, Runtime};

struct Counting;

static BYTES: AtomicU64 = AtomicU64::new(0);
static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded to mimalloc unchanged; only counters are
// added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { mimalloc::MiMalloc.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new: usize) -> *mut u8 {
        BYTES.fetch_add(new as u64, Ordering::Relaxed);
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut n: u64 = 100_000;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--deliveries" => n = args.next().and_then(|v| v.parse().ok()).unwrap_or(n),
            _ => {
                eprintln!("usage: runtime_bench [--deliveries N]");
                return ExitCode::from(2);
            }
        }
    }
    let loader = jadpo_bench::four_steps::loader("");
    let compiled = jadpo_compiler::compile_with(&loader, "b", Lowering::Code);
    let Some(program) = compiled.program else {
        eprintln!("the bench app does not load");
        return ExitCode::from(2);
    };
    let analysis = jadpo_checker::check(&program, &compiled.files, Scope::App);
    let Some(plan) = analysis.plan.app().cloned() else {
        return ExitCode::from(2);
    };
    let runtime = Runtime::new(&program, &plan);
    let action = ActionId(
        program
            .actions
            .iter()
            .position(|a| a.qualified == "four")
            .unwrap_or(0) as u32,
    );
    let op = jadpo_compiler::ir::OpId(
        program
            .operations
            .iter()
            .position(|o| o.qualified == "pay.charges.create")
            .unwrap_or(0) as u32,
    );
    let answer = |i: i64| {
        Scripted::Answer(Value::record(vec![
            (Name::new("id"), Value::text(&format!("ch_{i}"))),
            (Name::new("amount"), Value::Int(i)),
        ]))
    };
    let mut scripts = BTreeMap::new();
    scripts.insert(
        op,
        Script {
            answers: (1..=4).map(answer).collect(),
            replays_failures: false,
        },
    );
    let mut config = BTreeMap::new();
    config.insert(Name::new("steps_key"), Value::text("bench key"));
    let start = parse_instant("2026-01-15T12:00:00Z").unwrap_or(jadpo_runtime::value::Instant(0));
    let request = Value::record(vec![
        (Name::new("id"), Value::text("o1")),
        (Name::new("amount"), Value::Int(10)),
    ]);
    let delivery = Delivery {
        id: "bench:1".into(),
        action,
        args: vec![request],
        config,
        start,
        attempts: 5,
        retry_after_ms: 60_000,
        limits: Default::default(),
    };
    let run = |crash: Option<CrashAt>| {
        let store = MemStore::new();
        let mut fake = Fake::new(scripts.clone());
        runtime.deliver(&delivery, &store, &store, &mut fake, crash)
    };
    let check = run(None);
    if check.end != End::Completed(Value::text("ch_4")) {
        eprintln!("the bench action did not complete: {:?}", check.end);
        return ExitCode::from(1);
    }

    let (b0, a0) = counters();
    let t = Clock::now();
    for _ in 0..n {
        std::hint::black_box(run(None));
    }
    let clean = t.elapsed();
    let (b1, a1) = counters();

    let points = jadpo_runtime::delivery::crash_points(4);
    let per_point = (n / points.len() as u64).max(1);
    let t = Clock::now();
    let mut crashed = 0u64;
    for p in &points {
        for _ in 0..per_point {
            let out = run(Some(*p));
            crashed += u64::from(out.crashed);
            std::hint::black_box(out);
        }
    }
    let with_crashes = t.elapsed();
    let (b2, a2) = counters();
    let crash_runs = per_point * points.len() as u64;

    let per_sec = |count: u64, secs: f64| count as f64 / secs.max(1e-9);
    println!("runtime benchmark: a 4-step keyed action, in-memory store, fake provider, 1 thread");
    println!(
        "clean:   {n} deliveries in {:.3} s = {:.0} deliveries/s, {:.2} µs each; {} bytes and {} allocations per delivery",
        clean.as_secs_f64(),
        per_sec(n, clean.as_secs_f64()),
        clean.as_secs_f64() * 1e6 / n as f64,
        (b1 - b0) / n,
        (a1 - a0) / n
    );
    println!(
        "crashed: {crash_runs} deliveries ({crashed} crashes struck, 2 attempts each) in {:.3} s = {:.0} deliveries/s, {:.2} µs per attempt; {} bytes and {} allocations per delivery",
        with_crashes.as_secs_f64(),
        per_sec(crash_runs, with_crashes.as_secs_f64()),
        with_crashes.as_secs_f64() * 1e6 / (crash_runs * 2) as f64,
        (b2 - b1) / crash_runs.max(1),
        (a2 - a1) / crash_runs.max(1)
    );
    println!("clean_per_sec={:.0}", per_sec(n, clean.as_secs_f64()));
    println!(
        "crashed_per_sec={:.0}",
        per_sec(crash_runs, with_crashes.as_secs_f64())
    );
    ExitCode::SUCCESS
}

fn counters() -> (u64, u64) {
    (
        BYTES.load(Ordering::Relaxed),
        ALLOCS.load(Ordering::Relaxed),
    )
}
