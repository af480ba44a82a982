//! The three [`Loader`]s: the disk (`FsLoader`), memory (`MemLoader`, for
//! tests and fixtures) and a directory embedded in the binary (`DirLoader`,
//! for the standard library and the bundled packages). Paths use `/`.

use super::Loader;
use std::collections::BTreeMap;
use std::io;

/// Joins two `/` paths; an empty or `.` base is the current folder.
pub fn join(base: &str, name: &str) -> String {
    if base.is_empty() || base == "." {
        name.to_string()
    } else if name.is_empty() || name == "." {
        base.to_string()
    } else {
        format!("{}/{}", base.trim_end_matches('/'), name)
    }
}

/// Removes `.` segments and folds `a/..`; leading `..` segments are kept so
/// callers can see that a path leaves its base. Returns `None` for an
/// absolute path.
pub fn normalize_relative(path: &str) -> Option<String> {
    if path.starts_with('/') || path.contains('\\') || path.contains(':') {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if matches!(parts.last(), Some(last) if *last != "..") {
                    parts.pop();
                } else {
                    parts.push("..");
                }
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}

/// A path as shown to the author: [`normalize_relative`] of a relative
/// path, and an absolute `/` path with `.` removed and `a/..` folded
/// (`/app/../shared` is `/shared`; `..` at the root stays there). Any
/// other path (a Windows drive) as it is.
pub fn normalize_shown(path: &str) -> String {
    if let Some(relative) = normalize_relative(path) {
        return relative;
    }
    let Some(rest) = path.strip_prefix('/') else {
        return path.to_string();
    };
    let Some(folded) = normalize_relative(rest.trim_start_matches('/')) else {
        return path.to_string();
    };
    let below_root = folded
        .split('/')
        .skip_while(|segment| *segment == "..")
        .collect::<Vec<_>>()
        .join("/");
    format!("/{below_root}")
}

/// Whether a normalized relative path leaves the folder it is relative to.
pub fn escapes(normalized: &str) -> bool {
    normalized == ".." || normalized.starts_with("../")
}

fn too_big() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "it is 4 GiB or larger, more than Jadpo reads in one file",
    )
}

/// Reads the real disk. Symlinks are followed; folders report themselves
/// through [`Loader::real_path`] so the walker can stop symlink loops.
#[derive(Clone, Copy, Debug, Default)]
pub struct FsLoader;

impl Loader for FsLoader {
    fn read(&self, path: &str) -> io::Result<Vec<u8>> {
        // Only regular files: opening a named pipe blocks until a writer
        // comes, and a device such as `/dev/zero` never ends. Spans are
        // `u32` offsets, so a larger file could not be pointed into.
        // (A folder is left to `read`, which says so.)
        // The checks are made on the opened file, not the path, so a file
        // swapped for a pipe between a check and the read is still caught;
        // `O_NONBLOCK` keeps the open itself from waiting on a pipe.
        use std::io::Read;
        use std::os::unix::fs::OpenOptionsExt;
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)?;
        let meta = file.metadata()?;
        if !meta.is_file() && !meta.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "it is not a regular file (a named pipe, a device or a socket)",
            ));
        }
        let limit = u64::from(u32::MAX);
        if meta.len() >= limit {
            return Err(too_big());
        }
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        // A file that grows while it is read stops at the limit too.
        file.by_ref().take(limit).read_to_end(&mut bytes)?;
        if bytes.len() as u64 >= limit {
            return Err(too_big());
        }
        Ok(bytes)
    }

    fn size(&self, path: &str) -> Option<u64> {
        std::fs::metadata(path).ok().map(|m| m.len())
    }

    fn list(&self, path: &str) -> io::Result<Vec<(String, bool)>> {
        list_disk(path).map(|listing| listing.entries)
    }

    fn real_path(&self, path: &str) -> io::Result<String> {
        let dir = if path.is_empty() { "." } else { path };
        let real = std::fs::canonicalize(dir)?;
        real.into_os_string()
            .into_string()
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "path is not UTF-8"))
    }
}

/// A folder listed from disk.
#[derive(Clone, Debug, Default)]
pub struct DiskListing {
    /// Entry names with whether each is a folder (symlinks followed).
    pub entries: Vec<(String, bool)>,
    /// Whether any entry is a symbolic link: what a link points to can
    /// change without the folder changing.
    pub has_links: bool,
}

/// Lists a folder on disk. The entry type comes from the listing itself;
/// only symbolic links cost a `stat`, to follow them (a broken link counts
/// as a file, so reading it reports the problem).
pub fn list_disk(path: &str) -> io::Result<DiskListing> {
    let dir = if path.is_empty() { "." } else { path };
    let mut out = DiskListing::default();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        // Names that are not UTF-8 cannot be `.jadpo` sources we can show.
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let is_dir = match entry.file_type() {
            Ok(kind) if kind.is_symlink() => {
                out.has_links = true;
                std::fs::metadata(entry.path()).is_ok_and(|m| m.is_dir())
            }
            Ok(kind) => kind.is_dir(),
            // Gone since it was listed: reading it reports the problem.
            Err(_) => false,
        };
        out.entries.push((name, is_dir));
    }
    Ok(out)
}

/// Files held in memory, keyed by `/` path. Folders exist implicitly.
#[derive(Clone, Debug, Default)]
pub struct MemLoader {
    files: BTreeMap<String, Vec<u8>>,
    /// List folders in reverse order, to test that nothing depends on it.
    reverse_listing: bool,
}

impl MemLoader {
    pub fn new() -> Self {
        MemLoader::default()
    }

    /// Adds or replaces a file.
    pub fn insert(&mut self, path: impl Into<String>, bytes: impl Into<Vec<u8>>) {
        self.files.insert(path.into(), bytes.into());
    }

    /// Builder form of [`MemLoader::insert`].
    pub fn with(mut self, path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        self.insert(path, bytes);
        self
    }

    /// Folder listings come back in reverse order.
    pub fn reversed(mut self) -> Self {
        self.reverse_listing = true;
        self
    }

    fn prefix(path: &str) -> String {
        let trimmed = path.trim_end_matches('/');
        if trimmed.is_empty() || trimmed == "." {
            String::new()
        } else {
            format!("{trimmed}/")
        }
    }
}

impl Loader for MemLoader {
    fn read(&self, path: &str) -> io::Result<Vec<u8>> {
        let key = normalize_relative(path).unwrap_or_else(|| path.to_string());
        self.files
            .get(&key)
            .cloned()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("{path} not found")))
    }

    fn size(&self, path: &str) -> Option<u64> {
        let key = normalize_relative(path).unwrap_or_else(|| path.to_string());
        self.files.get(&key).map(|bytes| bytes.len() as u64)
    }

    fn list(&self, path: &str) -> io::Result<Vec<(String, bool)>> {
        let norm = normalize_relative(path).unwrap_or_else(|| path.to_string());
        let prefix = Self::prefix(&norm);
        let mut seen: BTreeMap<String, bool> = BTreeMap::new();
        for key in self.files.keys() {
            let Some(rest) = key.strip_prefix(&prefix) else {
                continue;
            };
            match rest.split_once('/') {
                Some((dir, _)) => seen.insert(dir.to_string(), true),
                None => seen.insert(rest.to_string(), false),
            };
        }
        if seen.is_empty() && !prefix.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{path} not found"),
            ));
        }
        let mut out: Vec<(String, bool)> = seen.into_iter().collect();
        if self.reverse_listing {
            out.reverse();
        }
        Ok(out)
    }
}

/// A directory embedded with `include_dir`.
#[derive(Clone, Copy, Debug)]
pub struct DirLoader(pub &'static include_dir::Dir<'static>);

impl DirLoader {
    fn dir(&self, path: &str) -> Option<&'static include_dir::Dir<'static>> {
        let norm = normalize_relative(path)?;
        if norm.is_empty() {
            Some(self.0)
        } else {
            self.0.get_dir(&norm)
        }
    }
}

impl Loader for DirLoader {
    fn read(&self, path: &str) -> io::Result<Vec<u8>> {
        let not_found = || io::Error::new(io::ErrorKind::NotFound, format!("{path} not found"));
        let norm = normalize_relative(path).ok_or_else(not_found)?;
        self.0
            .get_file(&norm)
            .map(|f| f.contents().to_vec())
            .ok_or_else(not_found)
    }

    fn list(&self, path: &str) -> io::Result<Vec<(String, bool)>> {
        let dir = self
            .dir(path)
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("{path} not found")))?;
        let mut out = Vec::new();
        for entry in dir.entries() {
            let name = entry
                .path()
                .file_name()
                .and_then(|n| n.to_str())
                .map(str::to_string);
            if let Some(name) = name {
                out.push((name, entry.as_dir().is_some()));
            }
        }
        Ok(out)
    }
}
