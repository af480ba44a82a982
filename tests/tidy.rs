//! Repository tidiness, checked inside `cargo test`: every Rust file says
//! what it is for on its first line, no test is switched off, and
//! ARCHITECTURE.md's code map names every crate and top-level module.

use std::path::{Path, PathBuf};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file of the repository, outside build output and VCS data.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(name.as_str(), "target" | ".git" | "build") {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

fn all_rust_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    rust_files(repo(), &mut files);
    files.sort();
    files
}

fn relative(path: &Path) -> String {
    path.strip_prefix(repo())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn every_rust_file_starts_with_a_module_doc_line() {
    let missing: Vec<String> = all_rust_files()
        .iter()
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            !text.starts_with("//!")
        })
        .map(|p| relative(p))
        .collect();
    assert!(
        missing.is_empty(),
        "these files must start with a `//!` line saying what they are for: {missing:?}"
    );
}

#[test]
fn no_test_is_ignored() {
    // Built from parts so this file does not match itself.
    let needle = concat!("#[", "ignore");
    let offenders: Vec<String> = all_rust_files()
        .iter()
        .filter(|p| {
            std::fs::read_to_string(p)
                .unwrap_or_default()
                .contains(needle)
        })
        .map(|p| relative(p))
        .collect();
    assert!(offenders.is_empty(), "ignored tests in {offenders:?}");
}

/// The workspace's members, from the root `Cargo.toml`: every crate, so a
/// new one cannot be left out of the code map.
fn workspace_members() -> Vec<String> {
    let manifest = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap_or_default();
    let list = manifest
        .split("members = [")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .unwrap_or("");
    list.split(',')
        .map(|m| m.trim().trim_matches('"').to_string())
        .filter(|m| !m.is_empty())
        .collect()
}

/// `compiler/src/lexer` for `compiler/src/lexer.rs`, `compiler/src/load`
/// for the folder `compiler/src/load/`.
fn top_level_modules(src: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(repo().join(src)) else {
        return Vec::new();
    };
    let mut modules: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let module = name
                .strip_suffix(".rs")
                .map(str::to_string)
                .or_else(|| e.path().is_dir().then(|| name.clone()))?;
            (!matches!(module.as_str(), "lib" | "main")).then(|| format!("{src}/{module}"))
        })
        .collect();
    modules.sort();
    modules
}

#[test]
fn architecture_code_map_names_every_crate_and_module() {
    let doc = std::fs::read_to_string(repo().join("ARCHITECTURE.md")).unwrap_or_default();
    let mut missing = Vec::new();
    let members = workspace_members();
    assert!(members.len() >= 7, "the workspace's members: {members:?}");
    let mut sources = vec!["src".to_string()];
    for member in members.iter().filter(|m| *m != ".") {
        if !doc.contains(&format!("`{member}/`")) {
            missing.push(format!("{member}/"));
        }
        sources.push(format!("{member}/src"));
    }
    for src in &sources {
        for module in top_level_modules(src) {
            if !doc.contains(&module) {
                missing.push(module);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md's code map does not mention: {missing:?}"
    );
}

/// `cargo install --path .` installs the product only: the root package's
/// one binary is `jadpo` (benchmark binaries live in `bench/`), and the
/// release build carries no debug info.
#[test]
fn the_installed_product_is_jadpo_alone() {
    assert!(
        !repo().join("src/bin").exists(),
        "src/bin holds binaries `cargo install` would install: move them to bench/"
    );
    let manifest = std::fs::read_to_string(repo().join("Cargo.toml")).expect("Cargo.toml");
    let release = manifest
        .split("[profile.release]")
        .nth(1)
        .and_then(|rest| rest.split("\n[").next())
        .expect("a [profile.release] section");
    assert!(
        release.contains("debug = false"),
        "release profile: {release}"
    );
    assert_eq!(manifest.matches("[[bin]]").count(), 1, "one [[bin]]: jadpo");
}

/// The checker reads the IR and positions, not source text: every span a
/// rule reports is put in the IR by the resolver.
#[test]
fn the_checker_reads_no_source_text() {
    let mut files = Vec::new();
    rust_files(&repo().join("checker/src"), &mut files);
    let readers: Vec<String> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            text.lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .any(|l| l.contains(".text") || l.contains("files.slice("))
        })
        .map(|f| relative(f))
        .collect();
    assert!(
        readers.is_empty(),
        "checker files reading source text: {readers:?}"
    );
}

/// The checker's modules depend on each other in one direction: the
/// analysis on nothing of the checker's own, the rules and the plan on the
/// analysis, the registry on the rules. An import back (a `crate::rules`
/// in `analysis/`) makes a cycle and fails this test.
/// Top-level module cycles known today, each to be broken (issue 36);
/// a cycle not listed here fails.
const KNOWN_CYCLES: &[(&str, &str, &str)] = &[
    ("runtime/src", "arith", "eval"),
    ("runtime/src", "attempt", "delivery"),
    ("runtime/src", "delivery", "suite"),
];

/// The imports between a crate's top-level modules (`rules` uses
/// `analysis`), read from `crate::` paths.
fn module_edges(src: &Path) -> std::collections::BTreeSet<(String, String)> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut edges = std::collections::BTreeSet::new();
    for file in &files {
        let from = module_of(src, file);
        let text = std::fs::read_to_string(file).unwrap_or_default();
        import_edges(&text, "crate::", src, &from, &mut edges);
    }
    edges
}

/// The modules of `dir` that `text` (of module `from`) names after
/// `prefix` (`crate::`, `super::`), as edges from `from`; a longer run of
/// `super::` than `prefix` is not counted.
fn import_edges(
    text: &str,
    prefix: &str,
    dir: &Path,
    from: &str,
    edges: &mut std::collections::BTreeSet<(String, String)>,
) {
    for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
        for (at, _) in line.match_indices(prefix) {
            if line.get(..at).is_some_and(|b| b.ends_with("super::")) {
                continue;
            }
            let rest = line.get(at + prefix.len()..).unwrap_or("");
            let to: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            let is_module = !to.is_empty()
                && (dir.join(&to).is_dir() || dir.join(format!("{to}.rs")).is_file());
            if is_module && to != from {
                edges.insert((from.to_string(), to));
            }
        }
    }
}

/// No crate's top-level modules import each other in a cycle, but for the
/// known ones, which must still be cycles (a broken one leaves the list).
#[test]
fn no_crate_has_module_cycles() {
    let mut crates: Vec<String> = workspace_members()
        .iter()
        .filter(|m| *m != ".")
        .map(|m| format!("{m}/src"))
        .collect();
    crates.push("src".into());
    let checker = module_edges(&repo().join("checker/src"));
    assert!(
        checker.contains(&("rules".to_string(), "analysis".to_string())),
        "the scan found no imports: {checker:?}"
    );
    let mut found = Vec::new();
    for src in &crates {
        let edges = module_edges(&repo().join(src));
        for (from, to) in &edges {
            if reaches(&edges, to, from, &mut Vec::new()) && from < to {
                found.push((src.clone(), from.clone(), to.clone()));
            }
        }
    }
    let known: Vec<(String, String, String)> = KNOWN_CYCLES
        .iter()
        .map(|(c, a, b)| (c.to_string(), a.to_string(), b.to_string()))
        .collect();
    let new: Vec<_> = found.iter().filter(|f| !known.contains(f)).collect();
    assert!(new.is_empty(), "modules that import each other: {new:?}");
    let broken: Vec<_> = known.iter().filter(|k| !found.contains(k)).collect();
    assert!(
        broken.is_empty(),
        "cycles no longer there: remove them from KNOWN_CYCLES: {broken:?}"
    );
}

/// The imports between the modules of one folder (`resolve/body.rs` and
/// `resolve/calls.rs`), read from `super::` paths of the right depth.
fn folder_edges(folder: &Path) -> std::collections::BTreeSet<(String, String)> {
    let mut files = Vec::new();
    rust_files(folder, &mut files);
    let mut edges = std::collections::BTreeSet::new();
    for file in &files {
        let rel = file.strip_prefix(folder).unwrap_or(file);
        let parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let from = module_of(folder, file);
        if from == "mod" {
            continue;
        }
        let depth = parts.len() - usize::from(parts.last().is_some_and(|p| p == "mod.rs"));
        let prefix = "super::".repeat(depth);
        let text = std::fs::read_to_string(file).unwrap_or_default();
        import_edges(&text, &prefix, folder, &from, &mut edges);
    }
    edges
}

/// Inside a crate too, no folder's modules import each other in a cycle
/// (a type two modules share lives in the one that owns it).
#[test]
fn no_module_folder_has_cycles() {
    let resolve = folder_edges(&repo().join("compiler/src/resolve"));
    assert!(
        resolve.contains(&("calls".to_string(), "body".to_string())),
        "the scan found no imports: {resolve:?}"
    );
    let mut found = Vec::new();
    for src in PRODUCT_SOURCES {
        let mut folders = Vec::new();
        let mut files = Vec::new();
        rust_files(&repo().join(src), &mut files);
        for file in files.iter().filter(|f| f.ends_with("mod.rs")) {
            folders.extend(file.parent().map(Path::to_path_buf));
        }
        for folder in folders {
            let edges = folder_edges(&folder);
            for (from, to) in &edges {
                if reaches(&edges, to, from, &mut Vec::new()) && from < to {
                    found.push((relative(&folder), from.clone(), to.clone()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "modules that import each other: {found:?}"
    );
}

/// The top-level module of a file under `src` (`rules` for `rules/cache.rs`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap_or(file);
    let first = rel
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy().into_owned());
    first
        .unwrap_or_default()
        .trim_end_matches(".rs")
        .to_string()
}

fn reaches(
    edges: &std::collections::BTreeSet<(String, String)>,
    from: &str,
    to: &str,
    seen: &mut Vec<String>,
) -> bool {
    if from == to {
        return true;
    }
    if seen.iter().any(|s| s == from) {
        return false;
    }
    seen.push(from.to_string());
    edges
        .iter()
        .filter(|(a, _)| a == from)
        .any(|(_, b)| reaches(edges, b, to, seen))
}

/// The runtime reads the plan (`jadpo-plan`), never the checker: its
/// `[dependencies]` (tests aside) name no `jadpo-checker` (issue 32).
#[test]
fn the_runtime_does_not_depend_on_the_checker() {
    let manifest = std::fs::read_to_string(repo().join("runtime/Cargo.toml")).unwrap_or_default();
    let deps = manifest
        .split("[dependencies]")
        .nth(1)
        .and_then(|rest| rest.split("\n[").next())
        .unwrap_or("");
    assert!(deps.contains("jadpo-plan"), "{deps}");
    assert!(!deps.contains("jadpo-checker"), "{deps}");
    let mut files = Vec::new();
    rust_files(&repo().join("runtime/src"), &mut files);
    let users: Vec<String> = files
        .iter()
        .filter(|f| {
            std::fs::read_to_string(f)
                .unwrap_or_default()
                .contains("jadpo_checker")
        })
        .map(|f| relative(f))
        .collect();
    assert!(
        users.is_empty(),
        "the runtime uses the checker in {users:?}"
    );
}

/// The product's crates (the benchmarks write their corpora and are not
/// the product).
const PRODUCT_SOURCES: &[&str] = &[
    "src",
    "compiler/src",
    "checker/src",
    "plan/src",
    "runtime/src",
    "server/src",
    "stdlib/src",
];

/// What reads the disk, and what writes it (a write also counts as a
/// touch), spelled as the code calls it.
const DISK_READS: &[&str] = &[
    "fs::read",
    "fs::metadata",
    "fs::symlink_metadata",
    "fs::canonicalize",
    "File::open",
    "OpenOptions::new()",
];
const DISK_WRITES: &[&str] = &[
    "fs::write",
    "fs::create_dir",
    "fs::remove_",
    "fs::rename",
    "fs::set_permissions",
    "fs::copy",
    "fs::symlink",
    "chown(",
    "File::create",
    "DirBuilder",
    ".write(true)",
    ".append(true)",
    ".create(true)",
    ".create_new(true)",
    "Connection::open",
];

/// A file's code without its unit tests (`#[cfg(test)] mod tests` ends
/// every file that has one).
fn without_tests(text: &str) -> &str {
    match text.find("#[cfg(test)]\nmod ") {
        Some(at) => &text[..at],
        None => text,
    }
}

/// Each product file that touches the disk, with whether it writes.
fn disk_touchers() -> std::collections::BTreeMap<String, bool> {
    let mut found = std::collections::BTreeMap::new();
    for src in PRODUCT_SOURCES {
        let mut files = Vec::new();
        rust_files(&repo().join(src), &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            let code = without_tests(&text);
            let writes = DISK_WRITES.iter().any(|w| code.contains(w));
            if writes || DISK_READS.iter().any(|r| code.contains(r)) {
                found.insert(relative(&file), writes);
            }
        }
    }
    found
}

/// The table of ARCHITECTURE.md's "Files that touch the disk": each row's
/// file and whether it writes.
fn disk_table() -> std::collections::BTreeMap<String, bool> {
    let doc = std::fs::read_to_string(repo().join("ARCHITECTURE.md")).unwrap_or_default();
    let Some(start) = doc.find("Files that touch the disk") else {
        return Default::default();
    };
    doc[start..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter_map(|row| {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let file = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            Some((file.to_string(), *cells.get(2)? == "writes"))
        })
        .collect()
}

/// ARCHITECTURE.md names every product file that touches the disk, and
/// which of them write; a new reader or writer, or one that stopped, fails
/// here until the table says so.
#[test]
fn architecture_names_every_file_that_touches_the_disk() {
    let found = disk_touchers();
    assert!(
        found.contains_key("src/write.rs") && found.len() >= 5,
        "the scan finds the known writers: {found:?}"
    );
    let table = disk_table();
    let wrong: Vec<String> = found
        .iter()
        .filter(|(file, writes)| table.get(*file) != Some(writes))
        .map(|(file, writes)| {
            let what = if *writes { "writes" } else { "reads" };
            format!("| `{file}` | {what} |")
        })
        .chain(
            table
                .keys()
                .filter(|f| !found.contains_key(*f))
                .map(|f| format!("{f}: no longer touches the disk")),
        )
        .collect();
    assert!(
        wrong.is_empty(),
        "ARCHITECTURE.md's \"Files that touch the disk\" is out of date:\n{}",
        wrong.join("\n")
    );
}
