//! What an author sees of a check's diagnostics: the app's (or the
//! package's) own findings, and one `package.has_errors` per other package
//! with errors.

use jadpo_compiler::diag::Diagnostic;
use jadpo_compiler::ir::Program;
use jadpo_compiler::load::LoadedProject;
use jadpo_compiler::manifest::Requirement;
use jadpo_compiler::source::{Files, Unit};
use jadpo_compiler::span::{FileId, Span};

/// What an app's author sees: findings in the app's own files (and the
/// standard library's, which should have none) and in the packages inside
/// the app's folder (its `packages/` folder, a `{ path: }` inside it: the
/// author's own code), while each other package with errors (bundled, from
/// a registry, or a folder outside the app) becomes ONE
/// `package.has_errors` diagnostic at its requirement in `jadpo.yaml`,
/// naming the command that shows them all.
pub fn app_view(
    files: &Files,
    program: Option<&Program>,
    diagnostics: Vec<Diagnostic>,
) -> Vec<Diagnostic> {
    let mut broken: Vec<BrokenPackage> = Vec::new();
    let mut shown = Vec::new();
    let mut local_errors: Vec<String> = Vec::new();
    for d in diagnostics {
        match package_of(files, d.span.file) {
            None => shown.push(d),
            Some(name) if in_app_folder(files, d.span.file) => {
                if d.is_error() {
                    local_errors.push(name.to_string());
                }
                shown.push(d);
            }
            Some(name) if d.is_error() => note_error(&mut broken, name, Some(d)),
            Some(_) => {}
        }
    }
    for p in program.map(|p| p.packages.as_slice()).unwrap_or_default() {
        if p.has_errors && !local_errors.iter().any(|n| n == p.name.as_str()) {
            note_error(&mut broken, p.name.as_str(), None);
        }
    }
    broken.sort_by(|a, b| a.name.cmp(&b.name));
    shown.extend(broken.iter().map(|b| package_has_errors(files, b)));
    shown
}

/// A package with errors and its first error (in output order), if any was
/// reported.
struct BrokenPackage {
    name: String,
    errors: usize,
    first: Option<Diagnostic>,
}

fn note_error(broken: &mut Vec<BrokenPackage>, name: &str, error: Option<Diagnostic>) {
    let index = match broken.iter().position(|b| b.name == name) {
        Some(i) => i,
        None => {
            broken.push(BrokenPackage {
                name: name.to_string(),
                errors: 0,
                first: None,
            });
            broken.len() - 1
        }
    };
    let entry = &mut broken[index];
    if let Some(d) = error {
        entry.errors += 1;
        let earlier = entry
            .first
            .as_ref()
            .is_none_or(|f| d.sort_key() < f.sort_key());
        if earlier {
            entry.first = Some(d);
        }
    }
}

fn package_of(files: &Files, file: FileId) -> Option<&str> {
    match &files.try_get(file)?.unit {
        Unit::Package(name) => Some(name),
        Unit::App | Unit::Stdlib => None,
    }
}

/// Whether a file lies inside the app's folder: its path (relative to the
/// app) neither leaves it (`../`), nor is absolute, nor is embedded
/// (`<bundled>/`).
fn in_app_folder(files: &Files, file: FileId) -> bool {
    let path = &files.get(file).path;
    !path.starts_with('<') && !path.starts_with("../") && !std::path::Path::new(path).is_absolute()
}

/// The folder of package `name` as the app sees it (`<bundled>/stripe`,
/// `../registry/mailer/1.0.0`), from its manifest's path.
fn package_folder<'f>(files: &'f Files, name: &str) -> Option<&'f str> {
    files.iter().find_map(|(_, f)| {
        let own = matches!(&f.unit, Unit::Package(n) if n == name);
        (own && f.path.ends_with("package.yaml"))
            .then(|| f.path.strip_suffix("/package.yaml").unwrap_or(""))
    })
}

fn package_has_errors(files: &Files, broken: &BrokenPackage) -> Diagnostic {
    let name = &broken.name;
    let summary = match broken.errors {
        0 => format!("package `{name}` has errors"),
        1 => format!("package `{name}` has 1 error"),
        n => format!("package `{name}` has {n} errors"),
    };
    let (span, direct) = requirement_span(files, name);
    let label = if direct {
        format!("`{name}` is required here")
    } else {
        format!("`{name}` is required by one of these packages")
    };
    let mut d = Diagnostic::error("package.has_errors", span, summary)
        .with_label(label)
        .with_reason(
            "an app cannot run with a package that does not check; the package's own \
             findings are reported when the package itself is checked",
        )
        .with_fix(format!(
            "fix the package, or require a version of `{name}` that checks"
        ));
    d = match package_folder(files, name) {
        Some(folder) if folder.starts_with('<') => d.with_help(format!(
            "`{name}` is bundled with jadpo: a bundled package with errors is a bug in jadpo; please report it"
        )),
        Some(folder) => d.with_help(format!(
            "`jadpo check {folder}` (from the app's folder) shows all of them"
        )),
        None => d,
    };
    if let Some(first) = &broken.first {
        d = d.with_related(first.span, format!("first error: {}", first.summary));
    }
    d
}

/// Where the app requires package `name`: its key under `packages:` in the
/// app's `jadpo.yaml` (block or flow style), with `true`; for a package
/// required only by other packages, the `packages` key itself, with `false`.
///
/// Found by reading the text because `Compiled` does not carry the app
/// manifest; the requirement span from `manifest::Requirement` would be
/// better once it is exposed.
fn requirement_span(files: &Files, name: &str) -> (Span, bool) {
    let Some((id, manifest)) = files
        .iter()
        .find(|(_, f)| f.unit == Unit::App && f.path.ends_with("jadpo.yaml"))
    else {
        return (Span::default(), false);
    };
    let section = packages_section(&manifest.text);
    let direct = manifest
        .text
        .get(section.clone())
        .and_then(|text| key_offset(text, name))
        .map(|at| section.start + at);
    match direct {
        Some(start) => (
            Span::new(id, start as u32, (start + name.len()) as u32),
            true,
        ),
        None => {
            let start = section.start.saturating_sub("packages:".len());
            let end = if section.is_empty() {
                start
            } else {
                start + "packages".len()
            };
            (Span::new(id, start as u32, end as u32), false)
        }
    }
}

/// Byte range from just after a top-level `packages:` to the next top-level key.
fn packages_section(text: &str) -> std::ops::Range<usize> {
    let mut offset = 0usize;
    let mut start = None;
    for line in text.split_inclusive('\n') {
        let top_level = !line.starts_with([' ', '\t', '#', '\n', '\r']) && !line.is_empty();
        match start {
            None if top_level && line.starts_with("packages:") => {
                start = Some(offset + "packages:".len());
            }
            Some(s) if top_level => return s..offset,
            _ => {}
        }
        offset += line.len();
    }
    start.map_or(0..0, |s| s..text.len())
}

/// The offset of `name` used as a key (`name:` or `"name":`) in `text`.
fn key_offset(text: &str, name: &str) -> Option<usize> {
    text.match_indices(name).map(|(at, _)| at).find(|&at| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].trim_start_matches(['"', '\'']);
        let boundary = before.is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '-'));
        boundary && after.starts_with(':')
    })
}

/// What a package's author sees: findings in the package's own files (and
/// the standard library's), while each package it requires that has errors
/// becomes one `package.has_errors` at its requirement in `package.yaml`.
pub fn package_view(
    loaded: &LoadedProject,
    name: &str,
    program: &Program,
    diagnostics: Vec<Diagnostic>,
) -> Vec<Diagnostic> {
    let mut failing: Vec<String> = program
        .packages
        .iter()
        .filter(|p| p.has_errors && p.name.as_str() != name)
        .map(|p| p.name.as_str().to_string())
        .collect();
    let mut shown = Vec::new();
    for d in diagnostics {
        let unit = loaded.files.try_get(d.span.file).map(|f| f.unit.clone());
        match unit {
            Some(Unit::Package(p)) if p != name => {
                if d.is_error() {
                    failing.push(p);
                }
            }
            _ => shown.push(d),
        }
    }
    failing.sort();
    failing.dedup();
    for p in failing {
        shown.push(dependency_has_errors(loaded, &p));
    }
    shown
}

fn dependency_has_errors(loaded: &LoadedProject, name: &str) -> Diagnostic {
    let direct: Option<&Requirement> = loaded.app.packages.iter().find(|r| r.name.node == name);
    let (span, label) = match direct {
        Some(r) => (r.name.span, format!("`{name}` is required here")),
        None => (
            loaded.app.app.span,
            format!("`{name}` is required by a package this one requires"),
        ),
    };
    Diagnostic::error(
        "package.has_errors",
        span,
        format!("package `{name}` has errors"),
    )
    .with_label(label)
    .with_reason("a package is published only when every package it requires checks")
    .with_fix(format!(
        "fix `{name}`, or require a version of it that checks"
    ))
}
