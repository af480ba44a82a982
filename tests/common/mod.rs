//! Shared by the root integration tests: finding fixtures, laying them out
//! as an in-memory app, reading their inline `// ^^^ code` expectations, and
//! checking them with the same pipeline as `jadpo check`.

#![allow(dead_code)]

use jadpo::check::{check_app, Outcome};
use jadpo_compiler::diag::Diagnostic;
use jadpo_compiler::load::MemLoader;
use jadpo_compiler::source::Files;
use jadpo_compiler::source::Unit;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The folder every fixture is mounted at in the in-memory file system.
pub const ROOT: &str = "fixture";

pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// One fixture: a single `.jadpo` file or a folder holding a whole app.
#[derive(Clone, Debug)]
pub struct Fixture {
    /// Path on disk.
    pub path: PathBuf,
    /// `true` for `pass_*`, `false` for `fail_*`.
    pub pass: bool,
    /// App files by path relative to the app folder, as text.
    pub files: BTreeMap<String, String>,
}

impl Fixture {
    /// Reads a `pass_*.jadpo`/`fail_*.jadpo` file or a `pass_*/`/`fail_*/` folder.
    pub fn load(path: &Path) -> Fixture {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let pass = name.starts_with("pass_");
        let files = if path.is_dir() {
            let mut files = BTreeMap::new();
            read_tree(path, "", &mut files);
            files
        } else {
            let text = std::fs::read_to_string(path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            let mut files = BTreeMap::new();
            files.insert("jadpo.yaml".to_string(), generated_manifest(&text));
            files.insert(name, text);
            files
        };
        Fixture {
            path: path.to_path_buf(),
            pass,
            files,
        }
    }

    /// The fixture's path relative to `tests/fixtures`, for messages.
    pub fn name(&self) -> String {
        self.path
            .strip_prefix(fixtures_dir())
            .unwrap_or(&self.path)
            .display()
            .to_string()
    }

    /// The fixture in memory under [`ROOT`]; `reverse` lists folders
    /// backwards to show the output does not depend on listing order.
    pub fn loader(&self, reverse: bool) -> MemLoader {
        let mut loader = MemLoader::new();
        for (path, text) in &self.files {
            loader.insert(format!("{ROOT}/{path}"), text.as_bytes());
        }
        if reverse {
            loader = loader.reversed();
        }
        loader
    }

    pub fn check(&self) -> Outcome {
        check_app(&self.loader(false), ROOT)
    }
}

fn read_tree(dir: &Path, prefix: &str, out: &mut BTreeMap<String, String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .filter_map(Result::ok)
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = format!("{prefix}{name}");
        let path = entry.path();
        if path.is_dir() {
            read_tree(&path, &format!("{rel}/"), out);
        } else if let Ok(text) = std::fs::read_to_string(&path) {
            out.insert(rel, text);
        }
    }
}

/// Default versions of the bundled packages a single-file fixture may use.
const BUNDLED: [(&str, &str); 6] = [
    ("stripe", "3"),
    ("github", "1"),
    ("twilio", "1"),
    ("postmark", "1"),
    ("adyen", "*"),
    ("paypal", "*"),
];

/// `jadpo.yaml` for a single-file fixture, following its first line:
/// `// packages: none`, `// packages: stripe, github`, or (absent) the four
/// common packages.
pub fn generated_manifest(source: &str) -> String {
    let first = source.lines().next().unwrap_or("").trim();
    let names: Vec<&str> = match first.strip_prefix("// packages:") {
        Some(list) if list.trim() == "none" => Vec::new(),
        Some(list) => list
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect(),
        None => vec!["stripe", "github", "twilio", "postmark"],
    };
    if names.is_empty() {
        return "app: fixture\n".to_string();
    }
    let entries: Vec<String> = names
        .iter()
        .map(|n| {
            let version = BUNDLED.iter().find(|(b, _)| b == n).map_or("*", |(_, v)| v);
            format!("{n}: \"{version}\"")
        })
        .collect();
    format!("app: fixture\npackages: {{ {} }}\n", entries.join(", "))
}

/// Every fixture under `tests/fixtures`, sorted by path.
pub fn all_fixtures() -> Vec<Fixture> {
    let mut paths = Vec::new();
    find_fixtures(&fixtures_dir(), &mut paths);
    paths.sort();
    paths.iter().map(|p| Fixture::load(p)).collect()
}

fn find_fixtures(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let fixture_name = name.starts_with("pass_") || name.starts_with("fail_");
        if path.is_dir() {
            if fixture_name {
                out.push(path);
            } else {
                find_fixtures(&path, out);
            }
        } else if fixture_name && name.ends_with(".jadpo") {
            out.push(path);
        }
    }
}

/// One inline expectation: `// ^^^^ code` under a source line.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Expectation {
    /// File path relative to the app folder.
    pub file: String,
    /// 1-based line of the annotated source line.
    pub line: usize,
    /// Byte offset of the first caret's column in the file.
    pub start: usize,
    /// Number of carets (characters).
    pub width: usize,
    pub code: String,
}

/// Reads the `// ^^^ code` (or `# ^^^ code` in YAML) annotations of a file.
pub fn expectations(file: &str, text: &str) -> Vec<Expectation> {
    let mut found = Vec::new();
    let mut target: Option<(usize, usize, &str)> = None; // (line, start offset, text)
    let mut offset = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        match annotation(line) {
            Some((column, width, code)) => {
                if let Some((line_no, line_start, line_text)) = target {
                    let start = line_start + byte_of_column(line_text, column);
                    found.push(Expectation {
                        file: file.to_string(),
                        line: line_no,
                        start,
                        width,
                        code: code.to_string(),
                    });
                }
            }
            None => target = Some((i + 1, offset, line)),
        }
        offset += line.len();
    }
    found
}

/// `(char column of the first caret, caret count, code)` of an annotation line.
fn annotation(line: &str) -> Option<(usize, usize, &str)> {
    let trimmed = line.trim_start();
    let rest = trimmed
        .strip_prefix("//")
        .or_else(|| trimmed.strip_prefix('#'))?;
    let carets = rest.trim_start();
    if !carets.starts_with('^') {
        return None;
    }
    let width = carets.chars().take_while(|&c| c == '^').count();
    let code = carets[width..].trim();
    if code.is_empty() || code.contains(char::is_whitespace) {
        return None;
    }
    let caret_byte = line.len() - carets.len();
    Some((line[..caret_byte].chars().count(), width, code))
}

fn byte_of_column(line: &str, column: usize) -> usize {
    line.char_indices()
        .nth(column)
        .map_or(line.trim_end_matches('\n').len(), |(b, _)| b)
}

/// The expectation a diagnostic would need: file, line and caret run of its
/// primary span (first line only for a multi-line span; one caret when empty).
pub fn expectation_of(files: &Files, d: &Diagnostic) -> Expectation {
    let range = jadpo::render::clamp(files, d.span);
    let path = jadpo::render::file_path(files, d.span);
    let text = if (d.span.file.0 as usize) < files.len() {
        &*files.get(d.span.file).text
    } else {
        ""
    };
    let first_line = text[range.clone()].split('\n').next().unwrap_or("");
    Expectation {
        file: path.trim_start_matches(&format!("{ROOT}/")).to_string(),
        line: text[..range.start].matches('\n').count() + 1,
        start: range.start,
        width: first_line.chars().count().max(1),
        code: d.code.to_string(),
    }
}

/// Diagnostics located in a package's own files, which the app view replaces
/// by `package.has_errors`; fixtures may annotate them in those files.
pub fn package_findings(fixture: &Fixture) -> (Files, Vec<Diagnostic>) {
    let all = everything(fixture);
    let found: Vec<Diagnostic> = all
        .diagnostics
        .into_iter()
        .filter(|d| {
            (d.span.file.0 as usize) < all.files.len()
                && matches!(all.files.get(d.span.file).unit, Unit::Package(_))
        })
        .collect();
    (all.files, found)
}

/// Every diagnostic of a fixture's check, in every unit, sorted.
pub fn everything(fixture: &Fixture) -> jadpo::workspace::Snapshot {
    jadpo::workspace::Workspace::once(
        std::path::PathBuf::from(ROOT),
        jadpo_compiler::resolve::Lowering::Effects,
        jadpo_checker::Wanted::Nothing,
    )
    .everything()
    .run(&fixture.loader(false))
}
