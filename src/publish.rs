//! `jadpo publish`: checks one package on its own (its own findings shown,
//! package-scope rules only), then stores it in a file-based registry as
//! `REGISTRY/NAME/VERSION/` with its files, `surface.json` and `checksum`
//! (defined in `jadpo_compiler::load::registry` and `spec/registry.md`).
//! Refuses a package with any error and a version already published.

use crate::cli::PublishArgs;
use crate::render::{self, Summary};
use crate::workspace::Workspace;
use jadpo_checker::Wanted;
use jadpo_compiler::diag::Diagnostic;
use jadpo_compiler::load::{registry, FsLoader, Loader};
use jadpo_compiler::resolve::Lowering;
use jadpo_compiler::source::{Files, Unit};
use std::path::{Path, PathBuf};

/// A package checked on its own.
pub struct PackageCheck {
    pub name: String,
    pub version: String,
    pub files: Files,
    /// What the package's author sees, sorted.
    pub diagnostics: Vec<Diagnostic>,
    /// The surface of the package's public actions; `None` when the package
    /// could not be loaded.
    pub surface: Option<serde_json::Value>,
    /// The resolved package, when it could be loaded (`jadpo doc` reads
    /// its declarations).
    pub program: Option<jadpo_compiler::ir::Program>,
}

impl PackageCheck {
    pub fn errors(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.is_error()).count()
    }

    /// The files to publish: the package's own manifest and sources, with
    /// paths relative to its folder.
    pub fn package_files(&self) -> Vec<registry::Entry> {
        self.files
            .iter()
            .filter(|(_, f)| f.unit == Unit::Package(self.name.clone()))
            .filter(|(_, f)| !f.path.starts_with("..") && !f.path.starts_with('/'))
            .map(|(_, f)| (f.path.clone(), f.text.as_bytes().to_vec()))
            .collect()
    }
}

/// Loads, compiles and checks the package at `root`, resolving the packages
/// it requires from `registry` (then the bundled ones).
pub fn check_package(loader: &dyn Loader, root: &str, registry: Option<&str>) -> PackageCheck {
    let snapshot = Workspace::package(
        PathBuf::from(root),
        registry.map(str::to_string),
        Lowering::Effects,
        Wanted::Whole,
    )
    .run(loader);
    let (name, version) = snapshot.package.unwrap_or_default();
    PackageCheck {
        name,
        version,
        files: snapshot.files,
        diagnostics: snapshot.diagnostics,
        surface: snapshot.plan.map(|plan| plan.to_json()),
        program: snapshot.program,
    }
}

/// The package at `root` checked for `jadpo test`: its code lowered, and
/// the plan of its own actions, which its tests run on (as a
/// `Built::App`: the runtime reads only the actions' plans).
pub fn check_package_for_tests(loader: &dyn Loader, root: &str) -> crate::check::Outcome {
    Workspace::package(PathBuf::from(root), None, Lowering::Code, Wanted::Tests)
        .run(loader)
        .into()
}

/// Runs `jadpo publish`; returns the exit status (0 published, 1 refused,
/// 2 could not check or write).
pub fn run(args: &PublishArgs) -> u8 {
    let checked = check_package(&FsLoader, &args.path, args.registry.as_deref());
    let json = args.format == crate::cli::DiffFormat::Json;
    if !json {
        say(&render::human::render_all_from(
            &checked.files,
            &checked.diagnostics,
            args.color.color.enabled(),
            &args.path,
        ));
    }
    let outcome = publish(&checked, args);
    if json {
        let (shown, omitted) = render::shown(&checked.diagnostics);
        let summary = Summary::new(0, 0, &checked.diagnostics).with_omitted(omitted);
        let value = outcome.to_json(&checked);
        say(&render::json::render_with(
            &checked.files,
            &shown,
            summary,
            "publish",
            value,
        ));
    } else {
        outcome.say(&checked);
    }
    outcome.status()
}

/// What `jadpo publish` did after the check.
enum Outcome {
    CannotCheck,
    /// Errors in the package (or in what it requires).
    HasErrors,
    /// The name or version cannot name a registry folder.
    BadName,
    AlreadyPublished(std::path::PathBuf),
    /// `--dry-run`: the files and checksum a publish would store.
    WouldPublish {
        target: Option<std::path::PathBuf>,
        files: Vec<String>,
        checksum: String,
    },
    Stored {
        target: std::path::PathBuf,
        files: Vec<String>,
        checksum: String,
    },
    WriteFailed(std::path::PathBuf, String),
}

fn publish(checked: &PackageCheck, args: &PublishArgs) -> Outcome {
    let Some(surface) = &checked.surface else {
        return Outcome::CannotCheck;
    };
    if checked.errors() > 0 {
        return Outcome::HasErrors;
    }
    // The name and version become folder names: never a path.
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '+'))
            && !s.starts_with('.')
    };
    if !plain(&checked.name) || !plain(&checked.version) {
        return Outcome::BadName;
    }
    let target = args
        .registry
        .as_ref()
        .map(|r| Path::new(r).join(&checked.name).join(&checked.version));
    if let Some(target) = target.as_ref().filter(|t| t.exists()) {
        return Outcome::AlreadyPublished(target.clone());
    }
    let mut files = checked.package_files();
    let mut surface_text = serde_json::to_string_pretty(surface).unwrap_or_default();
    surface_text.push('\n');
    files.push(("surface.json".to_string(), surface_text.into_bytes()));
    let checksum = registry::checksum(&files);
    let names = files.iter().map(|(path, _)| path.clone()).collect();
    let target = match target {
        Some(target) if !args.dry_run => target,
        _ => {
            return Outcome::WouldPublish {
                target,
                files: names,
                checksum,
            }
        }
    };
    match write_version(&target, &files) {
        Ok(()) => Outcome::Stored {
            target,
            files: names,
            checksum,
        },
        // Another publish of this version won the rename.
        Err(_) if target.exists() => Outcome::AlreadyPublished(target),
        Err(e) => Outcome::WriteFailed(target, e.to_string()),
    }
}

impl Outcome {
    fn status(&self) -> u8 {
        match self {
            Outcome::WouldPublish { .. } | Outcome::Stored { .. } => 0,
            Outcome::HasErrors | Outcome::BadName | Outcome::AlreadyPublished(_) => 1,
            Outcome::CannotCheck | Outcome::WriteFailed(..) => 2,
        }
    }

    fn say(&self, checked: &PackageCheck) {
        let (name, version) = (&checked.name, &checked.version);
        if matches!(self, Outcome::CannotCheck) {
            say("could not check this package\n");
            return;
        }
        let summary = Summary::new(0, 0, &checked.diagnostics);
        say(&format!(
            "checked package {name} {version}: {}\n",
            summary.counts()
        ));
        match self {
            Outcome::CannotCheck => {}
            Outcome::HasErrors => {
                eprintln!("error: not publishing `{name}` {version}: the package has errors");
            }
            Outcome::BadName => eprintln!(
                "error: not publishing: `{name}` {version} cannot name a registry folder"
            ),
            Outcome::AlreadyPublished(target) => eprintln!(
                "error: `{name}` {version} is already published at {}; a published version never changes: raise `version:` in package.yaml",
                target.display()
            ),
            Outcome::WouldPublish { target, files, checksum } => {
                let place = target
                    .as_ref()
                    .map_or("a registry".to_string(), |t| t.display().to_string());
                say(&format!("would publish {} files to {place} ({checksum})\n", files.len()));
                for path in files {
                    say(&format!("  {path}\n"));
                }
            }
            Outcome::Stored { target, checksum, .. } => say(&format!(
                "published {name} {version} to {} ({checksum})\n",
                target.display()
            )),
            Outcome::WriteFailed(target, e) => {
                eprintln!("error: cannot write {}: {e}", target.display());
            }
        }
    }

    fn to_json(&self, checked: &PackageCheck) -> serde_json::Value {
        use serde_json::json;
        let mut value = json!({ "package": checked.name, "version": checked.version });
        let (outcome, extra) = match self {
            Outcome::CannotCheck => ("cannot_check", json!({})),
            Outcome::HasErrors => ("refused", json!({ "reason": "the package has errors" })),
            Outcome::BadName => (
                "refused",
                json!({ "reason": "the name or version cannot name a registry folder" }),
            ),
            Outcome::AlreadyPublished(t) => (
                "already_published",
                json!({ "target": t.display().to_string() }),
            ),
            Outcome::WouldPublish {
                target,
                files,
                checksum,
            } => (
                "would_publish",
                json!({
                    "target": target.as_ref().map(|t| t.display().to_string()),
                    "files": files,
                    "checksum": checksum,
                }),
            ),
            Outcome::Stored {
                target,
                files,
                checksum,
            } => (
                "published",
                json!({
                    "target": target.display().to_string(),
                    "files": files,
                    "checksum": checksum,
                }),
            ),
            Outcome::WriteFailed(t, e) => (
                "write_failed",
                json!({ "target": t.display().to_string(), "error": e }),
            ),
        };
        if let (serde_json::Value::Object(map), serde_json::Value::Object(more)) =
            (&mut value, extra)
        {
            map.insert("outcome".into(), json!(outcome));
            map.extend(more);
        }
        value
    }
}

/// Writes to stdout; a closed pipe is not an error (see `main.rs`).
fn say(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
}

/// Writes the version folder beside its final place, then renames it, so a
/// half-written version is never seen by an app.
fn write_version(target: &Path, files: &[registry::Entry]) -> std::io::Result<()> {
    let parent = target
        .parent()
        .ok_or_else(|| std::io::Error::other("the registry path has no parent folder"))?;
    std::fs::create_dir_all(parent)?;
    let leaf = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let staging = parent.join(format!(".{leaf}.partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    let written = (|| {
        for (path, bytes) in files {
            let file = staging.join(path);
            if let Some(dir) = file.parent() {
                std::fs::create_dir_all(dir)?;
            }
            crate::write::write_new(&file, bytes)?;
        }
        crate::write::write_new(
            &staging.join(registry::CHECKSUM_FILE),
            registry::checksum_file(files).as_bytes(),
        )?;
        std::fs::rename(&staging, target)
    })();
    if written.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    written
}
