//! The `jadpo` command line: parses arguments, runs a command, maps the
//! outcome to an exit status (0 clean, 1 errors, 2 cannot check, 101 bug).

use clap::Parser;
use jadpo::check::{check_app_with, Outcome};
use jadpo::cli::{
    BuildArgs, CheckArgs, Cli, Command, DiffFormat, ExplainArgs, Format, PlanCommand, PlanDiffArgs,
    TestArgs,
};
use jadpo::render::{self, Summary};
use jadpo_compiler::load::FsLoader;
use std::process::ExitCode;
use std::sync::OnceLock;

// The checker allocates many small nodes and frees them in bulk; mimalloc
// does both faster than the system allocator (about a tenth of a large check).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Tells mimalloc to keep freed pages for 10 s before giving them back to
/// the system (1 s by default). Between two edits the language server frees
/// one analysis and builds the next of the same size; with 1 s, 200 edits
/// at 100k lines took about 7,000 page faults (each a zeroed huge page),
/// with 10 s about 600, and 10 to 20 % less CPU. Memory no edit needs any
/// more still goes back once the editor has been idle for 10 s.
fn keep_freed_pages() {
    extern "C" {
        fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    }
    // `mi_option_purge_delay` in the bundled mimalloc's `mimalloc.h` (v2 and
    // v3 both number it 15).
    const PURGE_DELAY: std::ffi::c_int = 15;
    // SAFETY: mimalloc is linked (it is the global allocator); setting an
    // option is thread-safe and takes plain integers.
    unsafe { mi_option_set(PURGE_DELAY, 10_000) };
}

/// The input being processed, named in the bug-report line of a panic.
static INPUT: OnceLock<String> = OnceLock::new();
/// The app folder `jadpo build` bundles.
static INPUT_DIR: OnceLock<String> = OnceLock::new();

fn main() -> ExitCode {
    install_panic_hook();
    crash::install();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // Help and version are successful answers; a usage mistake is 2.
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match cli.command {
        Command::Check(args) => check(&args),
        Command::Build(args) => build(&args),
        Command::Explain(args) => explain(&args),
        Command::Lsp => {
            keep_freed_pages();
            jadpo::lsp::run()
        }
        Command::Publish(args) => {
            let _ = INPUT.set(args.path.clone());
            ExitCode::from(jadpo::publish::run(&args))
        }
        Command::Test(args) => test(&args),
        Command::Watch(args) => {
            let dir = match locate_app(&args.path, "watch") {
                Ok(dir) => dir,
                Err(status) => return status,
            };
            keep_freed_pages();
            ExitCode::from(jadpo::watch::run(&dir, &args))
        }
        Command::Serve(args) => ExitCode::from(jadpo::serve::run(&args)),
        Command::Privacy(args) => {
            let dir = match locate_app(&args.path, "privacy") {
                Ok(dir) => dir,
                Err(status) => return status,
            };
            let outcome = run(&dir, false);
            match &outcome.program {
                Some(program) => {
                    say(&jadpo::privacy::report(program));
                    ExitCode::SUCCESS
                }
                None => {
                    eprintln!("error: the app at `{dir}` cannot be checked");
                    ExitCode::from(2)
                }
            }
        }
        Command::Alerts(jadpo::cli::AlertsCommand::Prometheus) => {
            say(jadpo_server::metrics::PROMETHEUS_RULES);
            ExitCode::SUCCESS
        }
        Command::Deliveries(args) => ExitCode::from(jadpo::operate::deliveries(&args)),
        Command::Runs(args) => match &args.command {
            jadpo::cli::RunsCommand::Unfinished(a) => ExitCode::from(jadpo::operate::unfinished(a)),
        },
        Command::Dev(args) => {
            let dir = match locate_app(&args.path, "dev") {
                Ok(dir) => dir,
                Err(status) => return status,
            };
            ExitCode::from(jadpo::dev::run(&dir, &args))
        }
        Command::Fmt(args) => {
            keep_freed_pages();
            ExitCode::from(jadpo::fmt::run(&args))
        }
        Command::Plan(PlanCommand::Diff(args)) => plan_diff(&args),
        Command::New(args) => match jadpo::scaffold::create(&args.path) {
            Ok(name) => {
                say(&format!(
                    "created app `{name}` in {path}\nnext: jadpo check {path}, then jadpo test {path}\n",
                    path = args.path
                ));
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        },
        Command::Doc(args) => {
            let markdown = args.format == jadpo::cli::DocFormat::Markdown;
            match jadpo::doc::document(&args.package, &args.app, markdown) {
                Ok(text) => {
                    say(&text);
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Completions(args) => {
            use clap::CommandFactory;
            let mut script = Vec::new();
            clap_complete::generate(args.shell, &mut Cli::command(), "jadpo", &mut script);
            say(&String::from_utf8_lossy(&script));
            ExitCode::SUCCESS
        }
    }
}

/// A panic is a bug in jadpo: print one line asking for a report, exit 101.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        // Two threads panicking at once must still print one line.
        if crash::first_to_report() {
            let input = INPUT.get().map(String::as_str).unwrap_or(NO_INPUT);
            let place = info
                .location()
                .map(|l| format!(" at {}:{}", l.file(), l.line()))
                .unwrap_or_default();
            eprintln!(
                "error: internal error in jadpo{place} while checking `{input}`; this is a bug, \
                 please report it with the project at `{input}` attached"
            );
            std::process::exit(101);
        }
        crash::wait_for_exit();
    }));
}

/// What the bug-report line names before any input is known.
const NO_INPUT: &str = "(no input yet)";

/// Crashes the panic hook never sees: a stack overflow (SIGSEGV or SIGBUS on
/// the guard page), an abort (SIGABRT), an illegal instruction. Rust's own
/// stack-overflow handler prints "has overflowed its stack" and aborts with
/// a signal, so no exit status; this one prints the same bug-report line as
/// the panic hook and exits 101. It runs on the alternate signal stack std
/// gives every thread it starts (an overflowed stack has no room left), and
/// calls only async-signal-safe functions (`write`, `nanosleep`, `_exit`).
#[cfg(unix)]
mod crash {
    use super::{INPUT, NO_INPUT};
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

    extern "C" fn on_crash(signal: libc::c_int) {
        if !first_to_report() {
            wait_for_exit();
        }
        let what = SIGNALS
            .iter()
            .find(|(s, _)| *s == signal)
            .map_or("a fatal signal", |(_, what)| *what);
        let input = INPUT.get().map_or(NO_INPUT, String::as_str);
        for part in [
            "error: internal error in jadpo (",
            what,
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
mod crash {
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
fn debug_triggers() {
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

fn run(path: &str, want_plan: bool) -> Outcome {
    let _ = INPUT.set(path.to_string());
    debug_triggers();
    check_app_with(&FsLoader, path, want_plan)
}

/// The project folder a command's path names, or the exit status of
/// having said why there is none.
fn locate(path: &str) -> Result<jadpo::locate::Project, ExitCode> {
    jadpo::locate::locate(path).map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::from(2)
    })
}

/// [`locate`] for a command whose output is one machine document: a path
/// that cannot be read is left to the loader, which reports it in the
/// document (with exit status 2), so a reader of stdout always gets one.
fn locate_for_document(path: &str, document: bool) -> Result<jadpo::locate::Project, ExitCode> {
    match jadpo::locate::locate(path) {
        Err(_) if document => Ok(jadpo::locate::Project::Neither(path.to_string())),
        other => other.map_err(|e| {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }),
    }
}

/// The app folder a command's path names; a package is refused with the
/// command that takes it.
fn locate_app(path: &str, command: &str) -> Result<String, ExitCode> {
    use jadpo::locate::Project;
    match locate(path)? {
        Project::App(dir) | Project::Neither(dir) => Ok(dir),
        Project::Package(dir) => {
            eprintln!(
                "error: `{dir}` is a package; `jadpo {command}` takes an app (check a package with `jadpo check {dir}`, publish it with `jadpo publish {dir}`)"
            );
            Err(ExitCode::from(2))
        }
    }
}

fn check(args: &CheckArgs) -> ExitCode {
    let dir = match locate_for_document(&args.path, args.format != Format::Human) {
        Ok(jadpo::locate::Project::Package(dir)) => return check_package(args, &dir),
        Ok(jadpo::locate::Project::App(dir) | jadpo::locate::Project::Neither(dir)) => dir,
        Err(status) => return status,
    };
    let mut outcome = run(&dir, false);
    let mut unwritten = false;
    if args.fix || args.diff {
        (outcome, unwritten) = match fix(args, &dir, outcome) {
            Ok(now) => now,
            Err(status) => return status,
        };
    }
    let mut report = Report::of_app(&outcome, &dir);
    report.docs_url = args.docs_url.as_deref();
    report.print(
        args.format,
        args.color.color.enabled(),
        &report.app_closing(),
    );
    let status = if outcome.program.is_none() {
        ExitCode::from(2)
    } else if outcome.has_errors() || unwritten || (args.deny_warnings && outcome.has_warnings()) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    };
    // The process ends here: freeing a large program node by node would
    // only delay the exit.
    std::mem::forget(outcome);
    status
}

/// `--diff` prints the safe fixes and ends the command (its status);
/// `--fix` writes them and gives the check of the files as they are now.
fn fix(args: &CheckArgs, dir: &str, outcome: Outcome) -> Result<(Outcome, bool), ExitCode> {
    if let Some(why) = jadpo::fix::blocked(&outcome) {
        eprintln!("note: {why}");
        return match args.diff {
            true => Err(ExitCode::from(1)),
            false => Ok((outcome, false)),
        };
    }
    let fixes = jadpo::fix::safe_fixes(&outcome);
    let found: usize = fixes.iter().map(|f| f.fixed).sum();
    if args.diff {
        say(&jadpo::fix::unified_diff(&fixes));
        say(&format!(
            "{} with a safe fix in {}; nothing written\n",
            render::plural(found, "finding"),
            render::plural(fixes.len(), "file")
        ));
        return Err(ExitCode::from(u8::from(found > 0)));
    }
    let done = jadpo::fix::write_fixes(dir, &fixes);
    for f in &done.written {
        let line = format!("fixed {} in {}", render::plural(f.fixed, "finding"), f.path);
        // Machine formats keep stdout one document.
        if args.format == Format::Human {
            say(&format!("{line}\n"));
        } else {
            eprintln!("{line}");
        }
    }
    for why in &done.failed {
        eprintln!("error: {why}");
    }
    let failed = !done.failed.is_empty();
    Ok(match done.written.is_empty() {
        true => (outcome, failed),
        false => (run(dir, false), failed),
    })
}

/// Writes to stdout. A closed pipe (`jadpo check | head`) is not an error
/// (the reader has seen what it wanted), so write errors are ignored and the
/// exit status still reports the check.
fn say(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
}

/// `jadpo check` on a package folder: the package checked alone, with its
/// own scope (as `jadpo publish` checks it), in any output format.
fn check_package(args: &CheckArgs, dir: &str) -> ExitCode {
    let checked = jadpo::publish::check_package(&FsLoader, dir, None);
    let sources = checked
        .files
        .iter()
        .filter(|(_, f)| f.path.ends_with(".jadpo") && !f.path.starts_with('<'))
        .count();
    let summary = Summary::new(sources, 0, &checked.diagnostics);
    let checked_ok = checked.surface.is_some();
    let report = Report {
        files: &checked.files,
        diagnostics: &checked.diagnostics,
        summary,
        dir,
        checked: checked_ok,
        docs_url: args.docs_url.as_deref(),
    };
    let closing = if checked_ok {
        let (name, version) = (&checked.name, &checked.version);
        format!("checked package {name} {version}: {}", summary.counts())
    } else {
        "could not check this package".to_string()
    };
    report.print(args.format, args.color.color.enabled(), &closing);
    let warnings = summary.warnings > 0;
    if !checked_ok {
        ExitCode::from(2)
    } else if summary.errors > 0 || (args.deny_warnings && warnings) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// A check's findings, ready to print in any format.
struct Report<'a> {
    files: &'a jadpo_compiler::source::Files,
    diagnostics: &'a [jadpo_compiler::diag::Diagnostic],
    summary: Summary,
    /// The checked folder as the user named it: human paths start there.
    dir: &'a str,
    /// Whether the project could be checked at all.
    checked: bool,
    /// Where the diagnostic pages are served, for SARIF's `helpUri`.
    docs_url: Option<&'a str>,
}

impl<'a> Report<'a> {
    fn of_app(outcome: &'a Outcome, dir: &'a str) -> Self {
        let stats = &outcome.stats;
        Report {
            files: &outcome.files,
            diagnostics: &outcome.diagnostics,
            summary: Summary::new(stats.files, stats.packages, &outcome.diagnostics),
            dir,
            checked: outcome.program.is_some(),
            docs_url: None,
        }
    }

    /// The human output's last line for an app.
    fn app_closing(&self) -> String {
        if self.checked {
            self.summary.closing_line()
        } else {
            "could not check this project".to_string()
        }
    }

    /// The JSON document of `--format json` with one more member (`build`,
    /// `publish`): what the command did after checking.
    fn print_json_with(&self, key: &str, value: serde_json::Value) {
        let (shown, omitted) = render::shown(self.diagnostics);
        let summary = self.summary.with_omitted(omitted);
        say(&render::json::render_with(
            self.files, &shown, summary, key, value,
        ));
    }

    /// Prints at most `render::MAX_PER_FILE` diagnostics per file, saying
    /// how many were left out; `closing` ends the human output.
    fn print(&self, format: Format, color: bool, closing: &str) {
        let (shown, omitted) = render::shown(self.diagnostics);
        let summary = self.summary.with_omitted(omitted);
        let notes: Vec<String> = summary.omitted_line().into_iter().collect();
        let files = self.files;
        let ci = || jadpo::locate::ci_root(self.dir);
        match format {
            Format::Json => say(&render::json::render(files, &shown, summary)),
            Format::Sarif => say(&render::sarif::render_with_notes(
                files,
                &shown,
                &ci(),
                self.checked,
                &notes,
                self.docs_url,
            )),
            Format::Github => {
                say(&render::github::render(files, &shown, &ci()));
                for note in &notes {
                    say(&format!(
                        "::notice::{}\n",
                        render::github::escape_data(note)
                    ));
                }
            }
            Format::Human => {
                say(&render::human::render_all_from(
                    files, &shown, color, self.dir,
                ));
                for note in &notes {
                    say(&format!("{note}\n"));
                }
                say(&format!("{closing}\n"));
            }
        }
    }
}

fn build(args: &BuildArgs) -> ExitCode {
    let dir = match locate_app(&args.path, "build") {
        Ok(dir) => dir,
        Err(status) => return status,
    };
    let outcome = run(&dir, true);
    let _ = INPUT_DIR.set(dir.clone());
    let report = Report::of_app(&outcome, &dir);
    let json = args.format == DiffFormat::Json;
    if !json {
        report.print(
            Format::Human,
            args.color.color.enabled(),
            &report.app_closing(),
        );
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| format!("{}/build", dir.trim_end_matches('/')));
    let built = build_plan(&outcome, &out);
    if json {
        report.print_json_with("build", built.to_json());
    } else {
        built.say();
    }
    ExitCode::from(built.status())
}

/// What `jadpo build` did after the check.
enum Built {
    /// The app could not be checked.
    CannotCheck,
    /// The app has errors: nothing written, and the plan an earlier build
    /// left is removed (named when there was one).
    Refused {
        removed: Option<String>,
    },
    Written {
        file: String,
        build_id: String,
    },
    WriteFailed {
        out: String,
        error: String,
    },
}

fn build_plan(outcome: &Outcome, out: &str) -> Built {
    if outcome.program.is_none() {
        return Built::CannotCheck;
    }
    if outcome.has_errors() {
        return Built::Refused {
            removed: remove_stale_plan(out),
        };
    }
    let written = bundle_plan(outcome, out)
        .and_then(|plan| write_plan(out, plan.as_ref()).map(|file| (file, plan)));
    match written {
        Ok((file, plan)) => Built::Written {
            file,
            build_id: match plan.as_ref() {
                Some(jadpo_checker::plan::Built::App(p)) => p.build_id.clone(),
                Some(jadpo_checker::plan::Built::Package(s)) => s.build_id.clone(),
                None => String::new(),
            },
        },
        Err(e) => Built::WriteFailed {
            out: out.to_string(),
            error: e.to_string(),
        },
    }
}

impl Built {
    fn status(&self) -> u8 {
        match self {
            Built::Written { .. } => 0,
            Built::Refused { .. } => 1,
            Built::CannotCheck | Built::WriteFailed { .. } => 2,
        }
    }

    fn say(&self) {
        match self {
            Built::CannotCheck => {}
            Built::Refused { removed } => {
                eprintln!("error: not writing a plan: the app has errors");
                if let Some(file) = removed {
                    eprintln!("note: removed the stale plan {file}");
                }
            }
            Built::Written { file, .. } => {
                let bundle = file.replace("plan.json", "app.bundle");
                if std::path::Path::new(&bundle).is_file() {
                    say(&format!("wrote {file} and {bundle}\n"))
                } else {
                    say(&format!("wrote {file}\n"))
                }
            }
            Built::WriteFailed { out, error } => {
                eprintln!("error: cannot write the plan to `{out}`: {error}");
            }
        }
    }

    fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        match self {
            Built::CannotCheck => json!({ "outcome": "cannot_check", "plan": null }),
            Built::Refused { removed } => {
                json!({ "outcome": "refused", "plan": null, "removed_stale_plan": removed })
            }
            Built::Written { file, build_id } => {
                json!({ "outcome": "written", "plan": file, "build_id": build_id })
            }
            Built::WriteFailed { error, .. } => {
                json!({ "outcome": "write_failed", "plan": null, "error": error })
            }
        }
    }
}

/// A plan left from an earlier build no longer matches the app: removed,
/// so it cannot be deployed by mistake (a link there is removed, not
/// followed). Returns the file removed.
fn remove_stale_plan(out: &str) -> Option<String> {
    let file = std::path::Path::new(out).join("plan.json");
    let removed = std::fs::symlink_metadata(&file).is_ok() && std::fs::remove_file(&file).is_ok();
    removed.then(|| file.display().to_string())
}

/// An app's plan with the checksum of its bundle, which is written to
/// `OUT/app.bundle`; a package's surface as it is.
fn bundle_plan(
    outcome: &Outcome,
    out: &str,
) -> std::io::Result<Option<jadpo_checker::plan::Built>> {
    let Some(jadpo_checker::plan::Built::App(plan)) = outcome.plan.as_ref() else {
        return Ok(outcome.plan.clone());
    };
    let dir = INPUT_DIR.get().cloned().unwrap_or_default();
    let bundle = jadpo::bundle::Bundle::of_app(&outcome.files, &dir);
    jadpo::write::prepare_folder(std::path::Path::new(out))?;
    let file = format!("{}/app.bundle", out.trim_end_matches('/'));
    jadpo::write::write_atomic(std::path::Path::new(&file), bundle.to_json().as_bytes())
        .map_err(|e| std::io::Error::new(e.kind(), format!("`{file}`: {e}")))?;
    let mut plan = plan.clone();
    plan.bundle = bundle.checksum();
    plan.build_id = jadpo_checker::plan::build_id(&plan);
    Ok(Some(jadpo_checker::plan::Built::App(plan)))
}

fn write_plan(out: &str, plan: Option<&jadpo_checker::plan::Built>) -> std::io::Result<String> {
    jadpo::write::prepare_folder(std::path::Path::new(out))?;
    let file = format!("{}/plan.json", out.trim_end_matches('/'));
    let json = plan.map_or(serde_json::Value::Null, |p| p.to_json());
    let mut text = serde_json::to_string_pretty(&json).map_err(std::io::Error::other)?;
    text.push('\n');
    jadpo::write::write_atomic(std::path::Path::new(&file), text.as_bytes())
        .map_err(|e| std::io::Error::new(e.kind(), format!("`{file}`: {e}")))?;
    Ok(file)
}

fn test(args: &TestArgs) -> ExitCode {
    let _ = INPUT.set(args.path.clone());
    let dir = match locate_for_document(&args.path, args.format == DiffFormat::Json) {
        Ok(
            jadpo::locate::Project::App(dir)
            | jadpo::locate::Project::Package(dir)
            | jadpo::locate::Project::Neither(dir),
        ) => dir,
        Err(status) => return status,
    };
    debug_triggers();
    use std::io::IsTerminal;
    let json = args.format == DiffFormat::Json;
    let options = jadpo::testing::TestArgs {
        filter: args.filter.as_deref(),
        no_crash: args.no_crash,
        json,
        color: args.color.color.enabled(),
        time_limit: Some(std::time::Duration::from_secs_f64(args.time_limit)),
        progress: !json && std::io::stdout().is_terminal(),
    };
    let mut stdout = std::io::stdout().lock();
    ExitCode::from(jadpo::testing::run(&FsLoader, &dir, options, &mut stdout))
}

fn explain(args: &ExplainArgs) -> ExitCode {
    let Some(code) = args.code.as_deref().filter(|_| !args.list) else {
        say(&jadpo::check::code_list());
        return ExitCode::SUCCESS;
    };
    if let Some(rule) = jadpo::check::rule_doc(code) {
        let fix = jadpo_checker::registry::fix_note(rule.code);
        say(&format!("{}\n\n{fix}\n", rule.doc.trim_end()));
        return ExitCode::SUCCESS;
    }
    let codes = jadpo::check::rule_codes();
    match jadpo_compiler::diag::nearest(code, codes.iter().copied()) {
        Some(near) => eprintln!(
            "error: `{code}` is not a documented diagnostic code; did you mean `{near}`?"
        ),
        None => eprintln!(
            "error: `{code}` is not a documented diagnostic code; `jadpo explain --list` lists them all"
        ),
    }
    ExitCode::from(2)
}

fn plan_diff(args: &PlanDiffArgs) -> ExitCode {
    use jadpo::plan_diff;
    let _ = INPUT.set(format!("{} {}", args.old, args.new));
    let read = |path: &str| {
        plan_diff::read_plan_file(path).and_then(|text| {
            plan_diff::read_plan(&text).map_err(|e| format!("`{path}` is not a plan: {e}"))
        })
    };
    let (old, new) = match (read(&args.old), read(&args.new)) {
        (Ok(old), Ok(new)) => (old, new),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let diffs = plan_diff::diff(&old, &new);
    say(&match args.format {
        DiffFormat::Human => plan_diff::render_human(&diffs),
        DiffFormat::Json => plan_diff::render_json(&diffs),
    });
    if plan_diff::strands(&diffs) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
