//! The big-stack threads the checker runs on. The analysis recurses once
//! per nested block, and in a debug build a level takes kilobytes: the
//! deepest nesting the lexer lets through overflows the 2 MB stack of a
//! rayon thread. Only the pages used are ever committed.

/// Stack of each checker thread.
const CHECKER_STACK: usize = 256 * 1024 * 1024;

/// The pool, built once (`None` when no thread could be started). Its size
/// follows `RAYON_NUM_THREADS` like rayon's own.
fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("jadpo-check-{i}"))
            .stack_size(CHECKER_STACK)
            .build()
            .ok()
    })
    .as_ref()
}

/// Runs `f` on the checker's threads (on this one when there are none);
/// the parallel work `f` starts runs there too.
pub fn install<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    match pool() {
        Some(pool) => pool.install(f),
        None => f(),
    }
}
