//! What a bug in jadpo looks like to its user: one line asking for a
//! report, naming the input, and exit status 101, whether the bug is a
//! panic or a crash the panic hook never sees (a stack overflow, an
//! abort).

use std::sync::OnceLock;

/// The input being processed, named in the bug-report line.
static INPUT: OnceLock<String> = OnceLock::new();

/// What the bug-report line names before any input is known.
const NO_INPUT: &str = "(no input yet)";

/// Names the input a bug report should attach (the first one named wins:
/// a command names its input once).
pub fn set_input(input: &str) {
    let _ = INPUT.set(input.to_string());
}

fn input() -> &'static str {
    INPUT.get().map_or(NO_INPUT, String::as_str)
}

/// The line a panic prints; `place` is where it happened, if known.
pub fn panic_line(input: &str, place: Option<(&str, u32)>) -> String {
    let place = place
        .map(|(file, line)| format!(" at {file}:{line}"))
        .unwrap_or_default();
    format!(
        "error: internal error in jadpo{place} while checking `{input}`; this is a bug, \
         please report it with the project at `{input}` attached"
    )
}

/// Installs the panic hook and the crash signal handlers.
pub fn install() {
    install_panic_hook();
    signals::install();
}

/// A panic is a bug in jadpo: print one line asking for a report, exit 101.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        // Two threads panicking at once must still print one line.
        if signals::first_to_report() {
            let place = info.location().map(|l| (l.file(), l.line()));
            eprintln!("{}", panic_line(input(), place));
            std::process::exit(101);
        }
        signals::wait_for_exit();
    }));
}

/// Crashes the panic hook never sees: a stack overflow (SIGSEGV or SIGBUS on
/// the guard page), an abort (SIGABRT), an illegal instruction. Rust's own
/// stack-overflow handler prints "has overflowed its stack" and aborts with
/// a signal, so no exit status; this one prints the same bug-report line as
/// the panic hook and exits 101. It runs on the alternate signal stack std
/// gives every thread it starts (an overflowed stack has no room left), and
/// calls only async-signal-safe functions (`write`, `nanosleep`, `_exit`).
#[cfg(unix)]
mod signals {
    use std::sync::atomic::{AtomicBool, Ordering};

    /// The crash signals, each with what the line says about it.
    const SIGNALS: [(libc::c_int, &str); 5] = [
        (libc::SIGSEGV, "SIGSEGV, most likely a stack overflow"),
        (libc::SIGBUS, "SIGBUS, most likely a stack overflow"),
        (libc::SIGABRT, "SIGABRT, an abort"),
        (libc::SIGILL, "SIGILL, an illegal instruction"),
        (libc::SIGFPE, "SIGFPE, an arithmetic fault"),
    ];

    /// Set by the first thread that reports a crash or panic.
    static REPORTED: AtomicBool = AtomicBool::new(false);

    /// Whether this thread is the first to report; later ones stay silent.
    pub fn first_to_report() -> bool {
        !REPORTED.swap(true, Ordering::SeqCst)
    }

    /// Gives the thread that won the race to report time to finish its
    /// line and exit, then exits anyway (it may itself have crashed).
    pub fn wait_for_exit() -> ! {
        let wait = libc::timespec {
            tv_sec: 2,
            tv_nsec: 0,
        };
        // SAFETY: `nanosleep` and `_exit` are async-signal-safe.
        unsafe {
            libc::nanosleep(&wait, std::ptr::null_mut());
            libc::_exit(101)
        }
    }

    pub fn install() {
        ensure_alternate_stack();
        for (signal, _) in SIGNALS {
            // SAFETY: a zeroed `sigaction` is a valid value; the handler is
            // an `extern "C" fn(c_int)` as `sa_handler` expects without
            // SA_SIGINFO.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_crash as extern "C" fn(libc::c_int) as libc::sighandler_t;
                action.sa_flags = libc::SA_ONSTACK;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(signal, &action, std::ptr::null_mut());
            }
        }
    }

    /// std sets up an alternate signal stack for the main thread only when
    /// it installs its own SIGSEGV handler; make sure one exists anyway.
    fn ensure_alternate_stack() {
        const SIZE: usize = 64 * 1024;
        // SAFETY: `sigaltstack` reads and writes only the structs passed;
        // the new stack is leaked so it lives as long as the thread.
        unsafe {
            let mut current: libc::stack_t = std::mem::zeroed();
            libc::sigaltstack(std::ptr::null(), &mut current);
            if current.ss_flags & libc::SS_DISABLE == 0 {
                return;
            }
            let stack = Box::leak(vec![0u8; SIZE].into_boxed_slice());
            let new = libc::stack_t {
                ss_sp: stack.as_mut_ptr().cast(),
                ss_flags: 0,
                ss_size: SIZE,
            };
            libc::sigaltstack(&new, std::ptr::null_mut());
        }
    }

    /// What the line says about `signal`.
    pub fn describe(signal: libc::c_int) -> &'static str {
        SIGNALS
            .iter()
            .find(|(s, _)| *s == signal)
            .map_or("a fatal signal", |(_, what)| *what)
    }

    extern "C" fn on_crash(signal: libc::c_int) {
        if !first_to_report() {
            wait_for_exit();
        }
        let input = super::input();
        for part in [
            "error: internal error in jadpo (",
            describe(signal),
            ") while checking `",
            input,
            "`; this is a bug, please report it with the project at `",
            input,
            "` attached\n",
        ] {
            write_stderr(part.as_bytes());
        }
        // SAFETY: `_exit` ends the process at once, without running code
        // that may not be safe in a signal handler.
        unsafe { libc::_exit(101) }
    }

    fn write_stderr(mut bytes: &[u8]) {
        while !bytes.is_empty() {
            // SAFETY: writes `bytes.len()` bytes from a valid slice.
            let n = unsafe { libc::write(2, bytes.as_ptr().cast(), bytes.len()) };
            let Ok(n) = usize::try_from(n) else { return };
            if n == 0 {
                return;
            }
            bytes = bytes.get(n..).unwrap_or_default();
        }
    }
}

/// Elsewhere there is no handler: the panic hook still works.
#[cfg(not(unix))]
mod signals {
    pub fn install() {}

    pub fn first_to_report() -> bool {
        true
    }

    pub fn wait_for_exit() -> ! {
        std::thread::sleep(std::time::Duration::from_secs(2));
        std::process::exit(101)
    }
}

/// Hidden triggers so the tests can hold both paths to their promise:
/// `JADPO_DEBUG_PANIC` panics; `JADPO_DEBUG_STACK_OVERFLOW` overflows the
/// stack of the main thread, or with the value `thread` of a spawned thread
/// (as the parser's own thread would).
pub fn debug_triggers() {
    if std::env::var_os("JADPO_DEBUG_PANIC").is_some() {
        panic!("JADPO_DEBUG_PANIC is set");
    }
    match std::env::var("JADPO_DEBUG_STACK_OVERFLOW").as_deref() {
        Ok("thread") => {
            let _ = std::thread::Builder::new()
                .stack_size(1 << 20)
                .spawn(|| overflow_the_stack(0))
                .map(std::thread::JoinHandle::join);
        }
        Ok(_) => {
            overflow_the_stack(0);
        }
        Err(_) => {}
    }
}

/// Recurses until the stack runs out (the depth can never reach the end).
#[inline(never)]
fn overflow_the_stack(depth: u64) -> u64 {
    let frame = std::hint::black_box([depth; 128]);
    if std::hint::black_box(depth) == u64::MAX {
        return 0;
    }
    overflow_the_stack(depth + 1).wrapping_add(frame[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_panic_line_names_the_place_and_the_input_twice() {
        let line = panic_line("examples/billing", Some(("src/x.rs", 7)));
        assert_eq!(
            line,
            "error: internal error in jadpo at src/x.rs:7 while checking `examples/billing`; \
             this is a bug, please report it with the project at `examples/billing` attached"
        );
        assert!(!panic_line(NO_INPUT, None).contains("jadpo at "));
    }

    #[cfg(unix)]
    #[test]
    fn every_crash_signal_is_described_and_others_are_named_generally() {
        assert_eq!(
            signals::describe(libc::SIGSEGV),
            "SIGSEGV, most likely a stack overflow"
        );
        assert_eq!(signals::describe(libc::SIGABRT), "SIGABRT, an abort");
        assert_eq!(signals::describe(libc::SIGUSR1), "a fatal signal");
    }
}
