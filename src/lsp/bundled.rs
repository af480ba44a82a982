//! Embedded files (the standard library, bundled packages) written to disk
//! so the editor can open them on go-to-definition.
//!
//! They go to a folder private to this server process: created fresh with
//! mode 0700 under `$XDG_RUNTIME_DIR` (or the temporary folder), never
//! reused, so another local user cannot plant a link, a pipe or their own
//! files where the editor looks (a shared fixed path let them). Files are
//! created new and read-only, and the folder is removed when the server
//! stops.

use std::collections::BTreeSet;
use std::fs::{DirBuilder, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

static FOLDER: OnceLock<Option<PathBuf>> = OnceLock::new();
static WRITTEN: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// The path of an embedded file (`<bundled>/stripe/package.yaml`) on disk,
/// writing it the first time it is asked for.
pub fn materialize(shown: &str, text: &str) -> Option<PathBuf> {
    let rel: String = shown.replace(['<', '>'], "");
    if rel
        .split('/')
        .any(|s| s.is_empty() || s == "." || s == "..")
    {
        return None;
    }
    let root = FOLDER.get_or_init(create_private).as_ref()?;
    let path = root.join(&rel);
    let mut written = WRITTEN.lock().ok()?;
    if !written.contains(&rel) {
        write_read_only(root, &path, text)?;
        written.insert(rel);
    }
    Some(path)
}

/// Removes the private folder, if one was made (at the server's exit).
pub fn remove() {
    if let Some(Some(root)) = FOLDER.get() {
        let _ = std::fs::remove_dir_all(root);
    }
}

fn write_read_only(root: &Path, path: &Path, text: &str) -> Option<()> {
    let parent = path.parent()?;
    // The folders below the private root are ours alone.
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(parent)
        .ok()?;
    if !parent.starts_with(root) {
        return None;
    }
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o444)
        .open(path)
        .ok()?;
    file.write_all(text.as_bytes()).ok()
}

/// A new folder only this user can enter, or `None` when none can be made
/// (go-to-definition into embedded files then answers nothing).
fn create_private() -> Option<PathBuf> {
    let base = base_folder();
    for attempt in 0..16u32 {
        let dir = base.join(format!(
            "jadpo-lsp-{}-{}",
            std::process::id(),
            nonce(attempt)
        ));
        // Not recursive: creating fails when anything is already there.
        match DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return is_private(&dir).then_some(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(_) => return None,
        }
    }
    None
}

/// `$XDG_RUNTIME_DIR` when it is a private folder of ours, else the
/// temporary folder (shared, which is why each server makes its own folder).
fn base_folder() -> PathBuf {
    std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute() && is_private(p))
        .unwrap_or_else(std::env::temp_dir)
}

/// A real folder (not a link), owned by this user, closed to others.
fn is_private(dir: &Path) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return false;
    };
    // SAFETY: `geteuid` has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    meta.is_dir() && meta.uid() == me && meta.permissions().mode() & 0o077 == 0
}

fn nonce(attempt: u32) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let hash = blake3::hash(format!("{nanos}-{attempt}-{}", std::process::id()).as_bytes());
    hash.to_hex()[..16].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_go_to_a_private_folder_read_only() {
        let path = materialize("<bundled>/stripe/types.jadpo", "type Id = Text\n");
        let path = path.unwrap_or_else(|| panic!("no private folder"));
        let root = FOLDER.get().and_then(Option::as_ref).expect("made");
        assert!(path.starts_with(root));
        assert!(is_private(root), "the folder is open to others");
        let meta = std::fs::metadata(&path).expect("written");
        assert_eq!(meta.permissions().mode() & 0o777, 0o444);
        assert_eq!(
            std::fs::read_to_string(&path).ok().as_deref(),
            Some("type Id = Text\n")
        );
        // Asked again: the same file, not written twice.
        assert_eq!(materialize("<bundled>/stripe/types.jadpo", "x"), Some(path));
    }

    /// The old shared path, planted by another user with a link, is never
    /// written through.
    #[test]
    fn a_link_planted_at_the_old_shared_path_is_not_followed() {
        let shared = std::env::temp_dir()
            .join(format!("jadpo-lsp-{}", env!("CARGO_PKG_VERSION")))
            .join("bundled/planted");
        let _ = std::fs::create_dir_all(&shared);
        let victim = shared.join("victim.txt");
        let _ = std::fs::write(&victim, "keep me");
        let link = shared.join("types.jadpo");
        let _ = std::fs::remove_file(&link);
        let _ = std::os::unix::fs::symlink(&victim, &link);
        let path = materialize("<bundled>/planted/types.jadpo", "stripe source");
        assert!(path.is_some_and(|p| !p.starts_with(&shared)));
        assert_eq!(
            std::fs::read_to_string(&victim).ok().as_deref(),
            Some("keep me")
        );
        let _ = std::fs::remove_dir_all(shared.parent().unwrap_or(&shared));
    }

    #[test]
    fn paths_that_climb_are_refused() {
        assert_eq!(materialize("<bundled>/../etc/passwd", "x"), None);
        assert_eq!(materialize("/etc/passwd", "x"), None);
    }
}
