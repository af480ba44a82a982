//! `jadpo check`: an app or a package checked, its findings printed in the
//! format asked for, and with `--fix` or `--diff` its safe fixes.

use super::{check_app, locate_for_document, say, Report};
use crate::check::Outcome;
use crate::cli::{CheckArgs, Format};
use crate::locate::Project;
use crate::render::{self, Summary};
use jadpo_compiler::load::FsLoader;

pub fn check(args: &CheckArgs) -> u8 {
    let dir = match locate_for_document(&args.path, args.format != Format::Human) {
        Ok(Project::Package(dir)) => return check_package(args, &dir),
        Ok(Project::App(dir) | Project::Neither(dir)) => dir,
        Err(status) => return status,
    };
    let mut outcome = check_app(&dir, false);
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
    let status = app_status(&outcome, unwritten, args.deny_warnings);
    // The process ends here: freeing a large program node by node would
    // only delay the exit.
    std::mem::forget(outcome);
    status
}

/// 2 when the app could not be checked, 1 with errors (or warnings under
/// `--deny-warnings`, or fixes that could not be written), else 0.
fn app_status(outcome: &Outcome, unwritten: bool, deny_warnings: bool) -> u8 {
    if outcome.program.is_none() {
        2
    } else if outcome.has_errors() || unwritten || (deny_warnings && outcome.has_warnings()) {
        1
    } else {
        0
    }
}

/// `--diff` prints the safe fixes and ends the command (its status);
/// `--fix` writes them and gives the check of the files as they are now.
fn fix(args: &CheckArgs, dir: &str, outcome: Outcome) -> Result<(Outcome, bool), u8> {
    if let Some(why) = crate::fix::blocked(&outcome) {
        eprintln!("note: {why}");
        return match args.diff {
            true => Err(1),
            false => Ok((outcome, false)),
        };
    }
    let fixes = crate::fix::safe_fixes(&outcome);
    let found: usize = fixes.iter().map(|f| f.fixed).sum();
    if args.diff {
        say(&crate::fix::unified_diff(&fixes));
        say(&format!(
            "{} with a safe fix in {}; nothing written\n",
            render::plural(found, "finding"),
            render::plural(fixes.len(), "file")
        ));
        return Err(u8::from(found > 0));
    }
    let done = crate::fix::write_fixes(dir, &fixes);
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
        false => (check_app(dir, false), failed),
    })
}

/// `jadpo check` on a package folder: the package checked alone, with its
/// own scope (as `jadpo publish` checks it), in any output format.
fn check_package(args: &CheckArgs, dir: &str) -> u8 {
    let checked = crate::publish::check_package(&FsLoader, dir, None);
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
    if !checked_ok {
        2
    } else if summary.errors > 0 || (args.deny_warnings && summary.warnings > 0) {
        1
    } else {
        0
    }
}
