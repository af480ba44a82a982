//! How the commands that analyse again and again (`jadpo lsp`, `watch`,
//! `fmt`) ask the allocator, mimalloc, to treat memory they freed.
//!
//! Between two edits the language server frees one resolution and builds
//! the next of the same size. mimalloc gives freed memory back to the
//! system ("purges" it) after a delay, 10 ms by default: the next edit
//! then faults every page in again, each one zeroed by the kernel.
//! - The delay is 10 s: with 1 s, 200 edits at 100k lines took about
//!   7,000 page faults, with 10 s about 600, and 10 to 20 % less CPU.
//! - A purge marks the memory free (`MADV_FREE`) instead of unmapping it
//!   (`MADV_DONTNEED`): the kernel takes it back when another process
//!   needs it, and until then an edit after a pause reuses it without a
//!   fault. With unmapping, eight declaration edits at 1M lines, each
//!   after 12 s idle, took about 51,000 page faults and 156 ms each; with
//!   marking, 3,000 to 4,600 faults and 134 ms (BENCHMARKS.md). The cost:
//!   `top` still counts marked memory in the server's resident size until
//!   the kernel takes it.

use std::ffi::{c_int, c_long};

// Links mimalloc into every binary of this crate, the tests' too.
use mimalloc as _;

extern "C" {
    fn mi_option_set(option: c_int, value: c_long);
    fn mi_option_get(option: c_int) -> c_long;
}

// The options' numbers in the bundled mimalloc's `mimalloc.h` (`mi_option_e`;
// v2 and v3 number them alike).
const PURGE_DECOMMITS: c_int = 5;
const PURGE_DELAY: c_int = 15;

/// Keeps freed memory for 10 s, then marks it free to the system rather
/// than unmapping it.
pub fn keep_freed_pages() {
    // SAFETY: mimalloc is linked (the binary's global allocator, and this
    // crate's dependency); setting an option is thread-safe and takes plain
    // integers.
    unsafe {
        mi_option_set(PURGE_DELAY, 10_000);
        mi_option_set(PURGE_DECOMMITS, 0);
    }
}

/// mimalloc's purge delay in ms and whether a purge unmaps memory, as set
/// now.
pub fn purge_settings() -> (c_long, bool) {
    // SAFETY: as above; reading an option takes a plain integer.
    let (delay, decommits) =
        unsafe { (mi_option_get(PURGE_DELAY), mi_option_get(PURGE_DECOMMITS)) };
    (delay, decommits != 0)
}
