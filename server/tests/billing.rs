//! `examples/billing`'s own tests, crash matrix included, run with their
//! stores on SQLite (a scratch file per run) give what they give in
//! memory.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use jadpo_compiler::load::FsLoader;
use jadpo_compiler::resolve::Lowering;
use jadpo_runtime::store::schema::Schema;
use jadpo_runtime::store::Store;
use jadpo_runtime::suite::{Options, Suite, TestReport};
use jadpo_server::store::sqlite::{Options as SqliteOptions, SqliteStore};

use crate::support::scratch;

fn summary(reports: &[TestReport]) -> Vec<(String, bool, u32, Vec<String>)> {
    reports
        .iter()
        .map(|r| {
            let failures = r.failures.iter().map(|f| f.message.clone()).collect();
            (r.name.clone(), r.passed(), r.crash_runs, failures)
        })
        .collect()
}

#[test]
fn the_billing_tests_pass_on_sqlite_as_in_memory() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/billing");
    let compiled = jadpo_compiler::compile_with(&FsLoader, root, Lowering::Code);
    let program = compiled.program.expect("the example compiles");
    let (diags, plan) =
        jadpo_checker::check_for_tests(&program, &compiled.files, jadpo_checker::Scope::App);
    assert!(diags.iter().all(|d| !d.is_error()), "{diags:#?}");
    let in_memory = Suite::new(&program, &plan).run(Options::default());
    let dir = scratch("billing");
    let made = AtomicUsize::new(0);
    let schema = Schema::of(&program, "primary", "billing").with_queries(&plan.queries);
    let stores = || -> Arc<dyn Store> {
        let n = made.fetch_add(1, Ordering::Relaxed);
        let options = SqliteOptions {
            full_sync: false,
            ..SqliteOptions::default()
        };
        let path = dir.join(format!("run{n}.sqlite"));
        Arc::new(SqliteStore::open(&path, schema.clone(), options).expect("a scratch store"))
    };
    let on_sqlite = Suite::new(&program, &plan)
        .with_stores(&stores)
        .run(Options::default());
    assert!(
        made.load(Ordering::Relaxed) > in_memory.len(),
        "crash runs had stores"
    );
    assert!(in_memory.iter().all(TestReport::passed));
    assert!(in_memory.iter().any(|r| r.crash_runs > 0));
    assert_eq!(summary(&on_sqlite), summary(&in_memory));
}
