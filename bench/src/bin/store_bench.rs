//! `store_bench [--store sqlite|URL] [--deliveries N] [--workers W] [--steps 1|3]`:
//! durable deliveries per second on a real store. N deliveries of an
//! action making `--steps` changing calls (the fake provider answers at
//! once) are inserted first, untimed; then W runner threads claim them
//! (up to 4 at a time, as a dispatcher does) and run each attempt against
//! the store: every step's record write, the commit with its row and
//! event. SQLite is a fresh file with `synchronous=FULL`; a `postgres://`
//! URL gets a schema of its own. Reports deliveries per second and, on
//! SQLite, write transactions (each one fsync) per delivery. Run it under
//! `taskset -c 0` for the one-core figures.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant as Clock;

use jadpo_checker::Scope;
use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::{ActionId, Program};
use jadpo_compiler::resolve::Lowering;
use jadpo_runtime::delivery::{Attempted, Limits};
use jadpo_runtime::fake::{Fake, Script, Scripted};
use jadpo_runtime::store::schema::Schema;
use jadpo_runtime::store::{ClaimRequest, NewDelivery, Source, Store};
use jadpo_runtime::value::Value;
use jadpo_runtime::{Delivery, Runtime};
use jadpo_server::store::sqlite::{Options, SqliteStore};
use jadpo_server::store::OpenOptions;

const EXTRA: &str = "
action three(req: OrderReq) -> Text {
    var a = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: req.amount })
    var b = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: req.amount + 1 })
    var c = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: req.amount + 2 })
    attempt create Order { id: req.id charge: c.id }
    emit Paid { order: req.id }
    return c.id
}

action one(req: OrderReq) -> Text {
    var a = attempt pay.charges.create(pay.ChargeReq { order: req.id amount: req.amount })
    attempt create Order { id: req.id charge: a.id }
    return a.id
}
";

struct Args {
    store: String,
    n: u64,
    workers: usize,
    steps: u32,
}

fn args() -> Option<Args> {
    let mut out = Args {
        store: "sqlite".into(),
        n: 5_000,
        workers: 32,
        steps: 3,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let v = it.next()?;
        match a.as_str() {
            "--store" => out.store = v,
            "--deliveries" => out.n = v.parse().ok()?,
            "--workers" => out.workers = v.parse().ok()?,
            "--steps" => out.steps = v.parse().ok().filter(|s| *s == 1 || *s == 3)?,
            _ => return None,
        }
    }
    Some(out)
}

/// The store, and the SQLite store again (its transaction count).
type Opened = (Arc<dyn Store>, Option<Arc<SqliteStore>>);

fn open(args: &Args, program: &Program) -> Result<Opened, String> {
    let schema = Schema::of(program, "primary", &format!("bench{}", std::process::id()));
    if args.store == "sqlite" {
        let dir = std::env::temp_dir().join(format!("jadpo-store-bench-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let store = SqliteStore::open(&dir.join("bench.sqlite"), schema, Options::default())
            .map_err(|e| e.to_string())?;
        let store = Arc::new(store);
        return Ok((store.clone(), Some(store)));
    }
    let store = jadpo_server::store::open(&args.store, schema, OpenOptions::default())
        .map_err(|e| e.to_string())?;
    Ok((store, None))
}

fn main() -> ExitCode {
    let Some(args) = args() else {
        eprintln!("usage: store_bench [--store sqlite|postgres://...] [--deliveries N] [--workers W] [--steps 1|3]");
        return ExitCode::from(2);
    };
    let loader = jadpo_bench::four_steps::loader(EXTRA);
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
    let name = if args.steps == 3 { "three" } else { "one" };
    let Some(action) = program.actions.iter().position(|a| a.qualified == name) else {
        return ExitCode::from(2);
    };
    let action = ActionId(action as u32);
    let (store, sqlite) = match open(&args, &program) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("store_bench: {e}");
            return ExitCode::from(2);
        }
    };
    let op = program
        .operations
        .iter()
        .position(|o| o.qualified == "pay.charges.create")
        .map(|i| jadpo_compiler::ir::OpId(i as u32));
    let Some(op) = op else {
        return ExitCode::from(2);
    };
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
            answers: (1..=3).map(answer).collect(),
            replays_failures: false,
        },
    );
    let mut config = BTreeMap::new();
    config.insert(Name::new("steps_key"), Value::text("bench key"));
    let now = jadpo_server::store::clock::now();
    let request = |i: u64| {
        Value::record(vec![
            (Name::new("id"), Value::text(&format!("o{i}"))),
            (Name::new("amount"), Value::Int(10)),
        ])
    };
    let rows: Vec<NewDelivery> = (0..args.n)
        .map(|i| NewDelivery {
            id: format!("d{i:08}"),
            source: Source::Direct,
            action: name.into(),
            subscriber: None,
            queue: "default".into(),
            priority: 0,
            tags: Vec::new(),
            max_attempts: 5,
            run_at: now,
            args: request(i).canonical(),
            build_id: plan.build_id.clone(),
            unique: None,
        })
        .collect();
    for chunk in rows.chunks(1000) {
        if let Err(e) = store.enqueue(chunk, now) {
            eprintln!("store_bench: {e}");
            return ExitCode::from(1);
        }
    }
    let transactions = || sqlite.as_ref().map(|s| s.transactions());
    let before = transactions();
    let cpu_before = cpu_seconds();
    let done = AtomicU64::new(0);
    let failed = AtomicU64::new(0);
    let t = Clock::now();
    std::thread::scope(|s| {
        for w in 0..args.workers {
            let (store, runtime, scripts, config) = (&store, &runtime, &scripts, &config);
            let (done, failed) = (&done, &failed);
            s.spawn(move || loop {
                let claimed = store.claim(&ClaimRequest {
                    queues: vec!["default".into()],
                    max: 4,
                    lease_ms: 60_000,
                    runner: format!("w{w}"),
                    now: jadpo_server::store::clock::now(),
                });
                let claimed = match claimed {
                    Ok(c) if !c.is_empty() => c,
                    _ => break,
                };
                for c in claimed {
                    let i: u64 = c
                        .delivery
                        .id
                        .get(1..)
                        .and_then(|n| n.parse().ok())
                        .unwrap_or(0);
                    let d = Delivery {
                        id: c.delivery.id.clone(),
                        action,
                        args: vec![request(i)],
                        config: config.clone(),
                        start: jadpo_server::store::clock::now(),
                        attempts: 5,
                        retry_after_ms: 60_000,
                        limits: Limits::default(),
                    };
                    let mut fake = Fake::new(scripts.clone());
                    let out = runtime.attempt(
                        &d,
                        &**store,
                        &mut fake,
                        c.lease,
                        d.start,
                        &mut None,
                        Limits::default().bytes,
                    );
                    match out.attempted {
                        Attempted::Committed(_) => done.fetch_add(1, Ordering::Relaxed),
                        _ => failed.fetch_add(1, Ordering::Relaxed),
                    };
                }
            });
        }
    });
    let secs = t.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu_before;
    let done = done.load(Ordering::Relaxed);
    let failed = failed.load(Ordering::Relaxed);
    let kind = if args.store == "sqlite" {
        "sqlite (synchronous=FULL)"
    } else {
        "postgres"
    };
    println!(
        "store benchmark: {kind}, {}-step deliveries, {} runner threads",
        args.steps, args.workers
    );
    println!(
        "{done} committed ({failed} not) in {secs:.3} s = {:.0} deliveries/s",
        done as f64 / secs.max(1e-9)
    );
    if let (Some(b), Some(a)) = (before, transactions()) {
        println!(
            "{} write transactions (fsyncs) = {:.3} per delivery",
            a - b,
            (a - b) as f64 / done.max(1) as f64
        );
    }
    // What one core of jadpo's own would do, were the database elsewhere
    // (design section 26 measures Postgres per jadpo core; here the
    // database shares the machine's cores).
    println!(
        "jadpo's own CPU: {cpu:.2} s = {:.0} µs per delivery, {:.0} deliveries per CPU second",
        cpu * 1e6 / done.max(1) as f64,
        done as f64 / cpu.max(1e-9)
    );
    println!("per_sec={:.0}", done as f64 / secs.max(1e-9));
    if failed > 0 {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// This process's CPU time so far (user and system), in seconds.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes the struct it is given and nothing else.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}
