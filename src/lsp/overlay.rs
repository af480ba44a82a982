//! A [`Loader`] that serves the editor's unsaved text over the disk, so the
//! checker sees what the author sees.

use jadpo_compiler::load::{FsLoader, Loader};
use std::collections::{BTreeMap, HashMap};
use std::io;
use std::sync::Mutex;
use std::time::SystemTime;

/// Open documents by absolute path, read through to the disk otherwise.
#[derive(Default)]
pub struct Overlay {
    docs: BTreeMap<String, String>,
    /// Files last read from disk, kept while their modification time and
    /// length stay the same: each edit reloads the app, and a `stat` costs
    /// less than opening and reading every file again.
    disk: Mutex<HashMap<String, Disk>>,
}

struct Disk {
    modified: SystemTime,
    len: u64,
    bytes: Vec<u8>,
}

impl Overlay {
    pub fn set(&mut self, path: &str, text: String) {
        self.docs.insert(clean(path), text);
    }

    pub fn get(&self, path: &str) -> Option<&String> {
        self.docs.get(&clean(path))
    }

    pub fn get_mut(&mut self, path: &str) -> Option<&mut String> {
        self.docs.get_mut(&clean(path))
    }

    pub fn remove(&mut self, path: &str) {
        self.docs.remove(&clean(path));
    }

    /// Drops the files kept from disk (the client says files changed).
    pub fn forget_disk(&mut self) {
        if let Ok(disk) = self.disk.get_mut() {
            disk.clear();
        }
    }

    /// A file from disk, from the copy kept if it is unchanged. The time
    /// and length are taken before reading, so a file changed meanwhile is
    /// read again next time.
    fn read_disk(&self, path: &str) -> io::Result<Vec<u8>> {
        let meta = std::fs::metadata(path)?;
        let (Ok(modified), true) = (meta.modified(), meta.is_file()) else {
            return FsLoader.read(path);
        };
        let Ok(mut disk) = self.disk.lock() else {
            return FsLoader.read(path);
        };
        if let Some(kept) = disk.get(path) {
            if kept.modified == modified && kept.len == meta.len() {
                return Ok(kept.bytes.clone());
            }
        }
        let bytes = FsLoader.read(path)?;
        let kept = Disk {
            modified,
            len: meta.len(),
            bytes: bytes.clone(),
        };
        disk.insert(path.to_string(), kept);
        Ok(bytes)
    }

    /// Open documents directly inside `dir` (they may not exist on disk yet).
    fn children(&self, dir: &str) -> Vec<&str> {
        let prefix = format!("{}/", clean(dir).trim_end_matches('/'));
        self.docs
            .range(prefix.clone()..)
            .map(|(k, _)| k.as_str())
            .take_while(|k| k.starts_with(&prefix))
            .filter_map(|k| k.get(prefix.len()..))
            .filter(|rest| !rest.contains('/'))
            .collect()
    }
}

impl Loader for Overlay {
    fn read(&self, path: &str) -> io::Result<Vec<u8>> {
        match self.get(path) {
            Some(text) => Ok(text.as_bytes().to_vec()),
            None => self.read_disk(path),
        }
    }

    fn list(&self, path: &str) -> io::Result<Vec<(String, bool)>> {
        let mut entries = match FsLoader.list(path) {
            Ok(entries) => entries,
            Err(e) if self.children(path).is_empty() => return Err(e),
            Err(_) => Vec::new(),
        };
        for name in self.children(path) {
            if !entries.iter().any(|(n, _)| n == name) {
                entries.push((name.to_string(), false));
            }
        }
        Ok(entries)
    }

    fn real_path(&self, path: &str) -> io::Result<String> {
        FsLoader.real_path(path)
    }
}

/// Folds `//`, `.` and `..` segments of an absolute `/` path, so the same
/// file always has the same key.
pub fn clean(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    if path.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serves_unsaved_text_and_new_files() {
        let mut overlay = Overlay::default();
        overlay.set("/nowhere/app/src/new.jadpo", "action a() -> Unit {}".into());
        let read = overlay.read("/nowhere/app//src/./new.jadpo");
        assert_eq!(read.ok(), Some(b"action a() -> Unit {}".to_vec()));
        let listed = overlay.list("/nowhere/app/src").unwrap_or_default();
        assert_eq!(listed, vec![("new.jadpo".to_string(), false)]);
        assert!(overlay.list("/nowhere/app/other").is_err());
        assert_eq!(clean("/a/b/../c/./d"), "/a/c/d");
    }
}
