//! `jadpo watch [PATH] [--format human|json]`: checks the app, then again
//! on every change of its sources, manifests and local packages, through
//! a kept workspace, as the language server does (a re-check costs what an
//! edit costs in the editor). Changes are debounced: a burst of writes (an
//! editor saving several files, a `git checkout`) is one re-check. On a
//! terminal the screen is cleared between runs; `--format json` prints one
//! JSON line per run. Runs until interrupted.

use crate::cli::{WatchArgs, WatchFormat};
use crate::render::{self, Summary};
use crate::workspace::{Checked, Incremental};
use notify::{RecursiveMode, Watcher};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// How long the folder must be quiet before a re-check.
const QUIET: Duration = Duration::from_millis(100);

/// Runs until the watcher fails (exit 2) or the process is interrupted.
pub fn run(dir: &str, args: &WatchArgs) -> u8 {
    let root = &root_of(dir);
    let (send, changes) = mpsc::channel();
    let mut watcher = match notify::recommended_watcher(move |event| {
        let _ = send.send(event);
    }) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("error: cannot watch {}: {e}", root.display());
            return 2;
        }
    };
    if let Err(e) = watcher.watch(root, RecursiveMode::Recursive) {
        eprintln!("error: cannot watch {}: {e}", root.display());
        return 2;
    }
    let shown = dir.to_string();
    let mut app = Incremental::new(root.to_path_buf());
    let mut run = 1u64;
    loop {
        let started = std::time::Instant::now();
        let checked = app.check();
        report(&checked, &shown, args, run, started.elapsed());
        run += 1;
        if !wait_for_change(&changes, root) {
            return 2;
        }
        app.changed();
    }
}

/// Blocks until a relevant change, then until the folder is quiet.
/// `false` when the watcher stopped.
fn wait_for_change(changes: &mpsc::Receiver<notify::Result<notify::Event>>, root: &Path) -> bool {
    loop {
        match changes.recv() {
            Ok(Ok(event))
                if changes_content(&event) && event.paths.iter().any(|p| relevant(root, p)) =>
            {
                break
            }
            Ok(_) => {}
            Err(_) => return false,
        }
    }
    while changes.recv_timeout(QUIET).is_ok() {}
    true
}

/// A file written, created, renamed or removed; not a file read (reading
/// the sources to check them reports opens and accesses, which must not
/// start another check).
fn changes_content(event: &notify::Event) -> bool {
    use notify::event::{EventKind, ModifyKind};
    match event.kind {
        EventKind::Create(_) | EventKind::Remove(_) => true,
        EventKind::Modify(ModifyKind::Metadata(_)) => false,
        EventKind::Modify(_) => true,
        EventKind::Access(notify::event::AccessKind::Close(notify::event::AccessMode::Write)) => {
            true
        }
        _ => false,
    }
}

/// Sources, manifests and local packages; not build output or hidden files.
pub fn relevant(root: &Path, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(root) else {
        return false;
    };
    let hidden_or_built = rel.components().any(|c| {
        let part = c.as_os_str().to_string_lossy();
        part.starts_with('.') || part == "build" || part == "target"
    });
    let name = rel
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    !hidden_or_built
        && (name.ends_with(".jadpo")
            || name == "jadpo.yaml"
            || name == "package.yaml"
            || rel.extension().is_none())
}

fn report(checked: &Checked, shown: &str, args: &WatchArgs, run: u64, took: Duration) {
    let summary = Summary::new(checked.sources, checked.packages, checked.diagnostics);
    let (list, omitted) = render::shown(checked.diagnostics);
    let summary = summary.with_omitted(omitted);
    let mut out = std::io::stdout().lock();
    if args.format == WatchFormat::Json {
        let doc = render::json::render(checked.files, &list, summary);
        let mut value: serde_json::Value = serde_json::from_str(&doc).unwrap_or_default();
        if let Some(map) = value.as_object_mut() {
            map.insert("run".into(), run.into());
            map.insert("took_ms".into(), (took.as_millis() as u64).into());
        }
        let _ = writeln!(out, "{value}");
    } else {
        if out.is_terminal() {
            // Clear the screen and go home, as `tsc --watch` does.
            let _ = write!(out, "\x1b[2J\x1b[H");
        }
        let color = args.color.color.enabled();
        let _ = write!(
            out,
            "{}",
            render::human::render_all_from(checked.files, &list, color, shown)
        );
        let closing = if checked.checked {
            summary.closing_line()
        } else {
            "could not check this project".to_string()
        };
        let _ = writeln!(out, "{closing}");
        let _ = writeln!(
            out,
            "[run {run}, {} ms] watching {shown} for changes",
            took.as_millis()
        );
    }
    let _ = out.flush();
}

/// The folder `jadpo watch` watches, absolute (events name absolute paths).
fn root_of(dir: &str) -> PathBuf {
    std::fs::canonicalize(dir).unwrap_or_else(|_| PathBuf::from(dir))
}
