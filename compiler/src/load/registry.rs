//! The file-based package registry: `<registry>/<name>/<version>/` holds a
//! published package's files, its `surface.json` and a `checksum` file.
//! Here: the checksum (written by `jadpo publish`, verified when an app
//! resolves a package from the registry).
//!
//! The checksum is BLAKE3 over every file of the version folder except
//! `checksum` itself, sorted by path (UTF-8 bytes, `/` separators, relative
//! to the version folder): the domain tag `jadpo-package-v1\0`, then per
//! file its path, a NUL byte, its length as a little-endian u64 and its
//! bytes. The `checksum` file's first line is `blake3:<hex>`; the lines
//! after it list `<hex of the file>  <path>` per file, only to name the
//! files that differ when verification fails. `spec/registry.md` has the
//! same definition.

use super::{loaders, Loader};

/// The name of the checksum file in a version folder.
pub const CHECKSUM_FILE: &str = "checksum";
/// How deep a version folder may nest; deeper is not a package we wrote.
const MAX_DEPTH: usize = 16;
/// How many files a version folder may hold.
const MAX_FILES: usize = 10_000;

/// A file of a version folder: its relative path and bytes.
pub type Entry = (String, Vec<u8>);

/// `blake3:<hex>` over `files` (any order; sorted here).
pub fn checksum(files: &[Entry]) -> String {
    let mut sorted: Vec<&Entry> = files.iter().collect();
    sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut h = blake3::Hasher::new();
    h.update(b"jadpo-package-v1\0");
    for (path, bytes) in sorted {
        h.update(path.as_bytes());
        h.update(b"\0");
        h.update(&(bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    format!("blake3:{}", h.finalize().to_hex())
}

/// The text of the `checksum` file for `files`.
pub fn checksum_file(files: &[Entry]) -> String {
    let mut lines = vec![checksum(files)];
    let mut listed: Vec<String> = files
        .iter()
        .map(|(path, bytes)| format!("{}  {path}", blake3::hash(bytes).to_hex()))
        .collect();
    listed.sort_by(|a, b| a.get(66..).cmp(&b.get(66..)));
    lines.extend(listed);
    lines.join("\n") + "\n"
}

/// Every file below `root` except the top-level `checksum`, with paths
/// relative to `root`.
/// relative to `root`. A symbolic link anywhere in the folder is refused: a
/// published version is plain files, and a link could point the read out of
/// the registry.
pub fn read_version_folder(loader: &dyn Loader, root: &str) -> std::io::Result<Vec<Entry>> {
    let real_root = loader.real_path(root)?;
    let mut out = Vec::new();
    walk(
        &Walk {
            loader,
            root,
            real_root: &real_root,
        },
        "",
        0,
        &mut out,
    )?;
    Ok(out)
}

struct Walk<'a> {
    loader: &'a dyn Loader,
    root: &'a str,
    real_root: &'a str,
}

impl Walk<'_> {
    /// Refuses `rel` when its real path is not where it appears to be.
    fn refuse_link(&self, rel: &str) -> std::io::Result<()> {
        let real = self.loader.real_path(&loaders::join(self.root, rel))?;
        if real == loaders::join(self.real_root, rel) {
            Ok(())
        } else {
            Err(std::io::Error::other(format!(
                "{rel} is a symbolic link; a published version holds only plain files"
            )))
        }
    }
}

fn walk(w: &Walk, rel: &str, depth: usize, out: &mut Vec<Entry>) -> std::io::Result<()> {
    let (loader, root) = (w.loader, w.root);
    if depth > MAX_DEPTH || out.len() > MAX_FILES {
        return Err(std::io::Error::other(
            "the folder is nested too deeply or holds too many files",
        ));
    }
    let mut entries = loader.list(&loaders::join(root, rel))?;
    entries.sort();
    for (name, is_dir) in entries {
        let path = loaders::join(rel, &name);
        w.refuse_link(&path)?;
        if is_dir {
            walk(w, &path, depth + 1, out)?;
        } else if path != CHECKSUM_FILE {
            let bytes = loader.read(&loaders::join(root, &path))?;
            out.push((path, bytes));
        }
    }
    Ok(())
}

/// What verifying a version folder found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The files match; these are the bytes that were hashed, which are
    /// the ones to load (reading the folder again would let a file swapped
    /// in between be used unverified).
    Intact(Vec<Entry>),
    /// No readable `checksum` file (or its first line is not a checksum).
    NoChecksum,
    /// The folder could not be read.
    Unreadable(String),
    /// The contents differ from the checksum; the files that differ from
    /// the listing (changed, added or removed), sorted.
    Mismatch { differing: Vec<String> },
}

/// Verifies the version folder at `root` against its `checksum` file.
pub fn verify(loader: &dyn Loader, root: &str) -> Verdict {
    let recorded = loader
        .read(&loaders::join(root, CHECKSUM_FILE))
        .ok()
        .and_then(|b| String::from_utf8(b).ok());
    let Some(recorded) = recorded else {
        return Verdict::NoChecksum;
    };
    let mut lines = recorded.lines();
    let Some(total) = lines
        .next()
        .map(str::trim)
        .filter(|l| l.starts_with("blake3:"))
    else {
        return Verdict::NoChecksum;
    };
    let files = match read_version_folder(loader, root) {
        Ok(files) => files,
        Err(e) => return Verdict::Unreadable(e.to_string()),
    };
    if checksum(&files) == total {
        return Verdict::Intact(files);
    }
    Verdict::Mismatch {
        differing: differing(&files, lines),
    }
}

/// Files whose hash is not the listed one, and listed files that are gone.
fn differing<'a>(files: &[Entry], listing: impl Iterator<Item = &'a str>) -> Vec<String> {
    let listed: std::collections::BTreeMap<&str, &str> = listing
        .filter_map(|l| l.split_once("  "))
        .map(|(hash, path)| (path, hash))
        .collect();
    let mut out: Vec<String> = files
        .iter()
        .filter(|(path, bytes)| {
            listed.get(path.as_str()).copied() != Some(blake3::hash(bytes).to_hex().as_str())
        })
        .map(|(path, _)| path.clone())
        .collect();
    out.extend(
        listed
            .keys()
            .filter(|p| !files.iter().any(|(f, _)| f == *p))
            .map(|p| p.to_string()),
    );
    out.sort();
    out
}
