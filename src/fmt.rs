//! `jadpo fmt [PATH...] [--check]`: rewrites `.jadpo` files in their canonical
//! layout (`spec/formatting.md`). Without a PATH it formats the app (or
//! package) the current folder is in, found as `jadpo check` finds it, and
//! nothing else. A folder walk never enters another app's folder (one
//! holding `jadpo.yaml`) or another repository (one holding `.git`). A file
//! with a syntax error, over the source limit, read-only, or changed while
//! it was formatted is left as it is and reported; every rewrite is atomic
//! and keeps the file's mode and owner; links are neither followed into nor
//! written through. Exit status: 0 when every file is formatted (or, with
//! `--check`, already was), 1 when `--check` found files to change or a
//! file could not be formatted, 2 when a PATH cannot be read, is not a
//! `.jadpo` file or a folder, or holds no `.jadpo` file.

use crate::cli::FmtArgs;
use crate::render::plural;
use crate::write::{is_link, rewrite_source};
use jadpo_compiler::load::{list_disk, FsLoader, Loader};
use jadpo_compiler::printer::{format_source, format_unchecked, FormatError};
use std::path::{Path, PathBuf};

/// Folders never searched for sources: build output and dependencies.
const SKIPPED: &[&str] = &["target", "build", "node_modules"];

/// Files searched at most, so a mistaken `jadpo fmt /` ends.
const MAX_FILES: usize = 100_000;

/// What happened to one file.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Unchanged,
    Changed,
    /// Left as it is, with the reason (a syntax error, an unreadable file).
    Refused(String),
}

pub fn run(args: &FmtArgs) -> u8 {
    let roots = match roots(&args.paths) {
        Ok(roots) => roots,
        Err(why) => {
            eprintln!("error: {why}");
            return 2;
        }
    };
    let mut files = Vec::new();
    for path in &roots {
        match sources(Path::new(path)) {
            Ok(found) if found.is_empty() => {
                eprintln!("error: {path} holds no `.jadpo` file to format");
                return 2;
            }
            Ok(found) => files.extend(found),
            Err(e) => {
                eprintln!("error: cannot read {path}: {e}");
                return 2;
            }
        }
    }
    files.sort();
    files.dedup();
    // Files are formatted in parallel and reported in path order.
    use rayon::prelude::*;
    // On the parser's big-stack threads: parsing and printing recurse once
    // per nesting level, and each file's parses then run in place.
    let outcomes: Vec<Outcome> = jadpo_compiler::parser::install(|| {
        files
            .par_iter()
            .map(|file| format_file(file, args.check))
            .collect()
    });
    let (mut changed, mut refused) = (0usize, 0usize);
    for (file, outcome) in files.iter().zip(outcomes) {
        let shown = file.display();
        match outcome {
            Outcome::Unchanged => {}
            Outcome::Changed if args.check => {
                println!("would reformat {shown}");
                changed += 1;
            }
            Outcome::Changed => {
                println!("formatted {shown}");
                changed += 1;
            }
            Outcome::Refused(why) => {
                eprintln!("error: {shown}: {why}; left as it is");
                refused += 1;
            }
        }
    }
    let verb = if args.check {
        "would be reformatted"
    } else {
        "reformatted"
    };
    let refused_note = if refused > 0 {
        format!(", {refused} not formatted")
    } else {
        String::new()
    };
    println!(
        "{} {verb}, {} already formatted{refused_note}",
        plural(changed, "file"),
        plural(files.len() - changed - refused, "file")
    );
    u8::from(refused > 0 || (args.check && changed > 0))
}

/// The paths to format: those named, or the project the current folder
/// is in.
fn roots(named: &[String]) -> Result<Vec<String>, String> {
    if !named.is_empty() {
        return Ok(named.to_vec());
    }
    use crate::locate::{locate, Project};
    match locate(".")? {
        Project::App(dir) | Project::Package(dir) => Ok(vec![dir]),
        Project::Neither(_) => Err(
            "no app here: no jadpo.yaml or package.yaml in this folder or above it; run jadpo fmt in an app, or name the files or folders to format".into(),
        ),
    }
}

/// Formats one file, writing it unless `check`.
pub fn format_file(path: &Path, check: bool) -> Outcome {
    let Some(name) = path.to_str() else {
        return Outcome::Refused("its path is not UTF-8".into());
    };
    let limit = jadpo_compiler::load::MAX_SOURCES_BYTES;
    if let Some(len) = FsLoader.size(name).filter(|len| *len > limit) {
        return Outcome::Refused(format!(
            "it is {} MiB, more than Jadpo reads ({} MiB)",
            len >> 20,
            limit >> 20
        ));
    }
    let bytes = match FsLoader.read(name) {
        Ok(bytes) => bytes,
        Err(e) => return Outcome::Refused(format!("cannot be read: {e}")),
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return Outcome::Refused("it is not UTF-8 text".into());
    };
    // `--check` writes nothing, so it skips checking a changed result
    // (the later write checks it).
    let format = if check {
        format_unchecked
    } else {
        format_source
    };
    let formatted = match format(&text) {
        Ok(formatted) => formatted,
        Err(FormatError::Syntax(diags)) => return Outcome::Refused(syntax(&text, &diags)),
        Err(FormatError::Unstable(why)) => {
            return Outcome::Refused(format!(
                "{why}; this is a bug in jadpo fmt, please report it with the file"
            ))
        }
    };
    if formatted == text {
        return Outcome::Unchanged;
    }
    if !check {
        if let Err(e) = rewrite_source(path, text.as_bytes(), formatted.as_bytes()) {
            return Outcome::Refused(format!("cannot be written: {e}"));
        }
    }
    Outcome::Changed
}

/// A folder below the walk's root that is another repository (it holds
/// `.git`) or, when the walk started inside a project, another app (it
/// holds `jadpo.yaml`): `jadpo fmt` never rewrites what belongs to another
/// project.
fn other_project(dir: &Path, in_project: bool) -> bool {
    dir.join(".git").exists() || (in_project && dir.join("jadpo.yaml").exists())
}

/// The first syntax error, as `line:column: summary (code)`.
fn syntax(text: &str, diags: &[jadpo_compiler::diag::Diagnostic]) -> String {
    let Some(d) = diags.first() else {
        return "it has a syntax error".into();
    };
    let at = crate::render::position(text, d.span.start as usize);
    let (line, column) = (at.line, at.column);
    let more = match diags.len() {
        1 => String::new(),
        n => format!(" and {} more", n - 1),
    };
    format!(
        "it has a syntax error at {line}:{column}: {} ({}){more}",
        d.summary, d.code
    )
}

/// The `.jadpo` files at or below `root`, sorted: hidden folders, build
/// output, links, other apps and other repositories skipped. A `root` that
/// is neither a regular file nor a folder (a named pipe, a device) is
/// refused.
pub fn sources(root: &Path) -> std::io::Result<Vec<PathBuf>> {
    let meta = std::fs::metadata(root)?;
    if meta.is_file() {
        return Ok(vec![root.to_path_buf()]);
    }
    if !meta.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "it is neither a regular file nor a folder (a named pipe, a device or a socket)",
        ));
    }
    // Walking from inside an app, a folder holding another `jadpo.yaml` is
    // another app; from above any app (`jadpo fmt examples`), the apps
    // below are what was named.
    let in_project = matches!(
        root.to_str().map(crate::locate::locate),
        Some(Ok(
            crate::locate::Project::App(_) | crate::locate::Project::Package(_)
        ))
    );
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Some(name) = dir.to_str() else { continue };
        let Ok(listing) = list_disk(name) else {
            continue;
        };
        for (entry, is_dir) in listing.entries {
            let path = dir.join(&entry);
            if entry.starts_with('.') || is_link(&path) {
                continue;
            }
            if is_dir {
                if !SKIPPED.contains(&entry.as_str()) && !other_project(&path, in_project) {
                    stack.push(path);
                }
            } else if entry.ends_with(".jadpo") && out.len() < MAX_FILES {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}
