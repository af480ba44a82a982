//! Embedded files (the standard library, bundled packages) written to disk
//! so the editor can open them on go-to-definition.
//!
//! They go to a folder private to this user: `jadpo-lsp-<uid>-<version>`
//! under `$XDG_RUNTIME_DIR` (or the temporary folder), created with mode
//! 0700 and used only after checking it is a real folder, ours, and closed
//! to others. Another local user who made that name first gets nothing: a
//! fresh folder with a random name is made instead. So no one else can
//! plant a link, a pipe or their own files where the editor looks (a shared
//! fixed path let them). The folder stays after the server stops, so the
//! editor can still open what it was sent. A file already there is used
//! only when it is a regular file with the right text; anything else is
//! replaced by a new read-only file renamed over it (a rename replaces a
//! link, it never follows one).

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
    if holds(path, text) {
        return Some(());
    }
    let temp = path.with_extension(format!("{}.tmp", nonce(0)));
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o444)
        .open(&temp)
        .ok()?;
    let written = file
        .write_all(text.as_bytes())
        .and_then(|()| std::fs::rename(&temp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written.ok()
}

/// Whether `path` is already a regular file (not a link) holding `text`.
fn holds(path: &Path, text: &str) -> bool {
    let regular = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file());
    regular && std::fs::read(path).is_ok_and(|bytes| bytes == text.as_bytes())
}

/// The user's folder (see the module documentation), or `None` when no
/// private folder can be made (go-to-definition into embedded files then
/// answers nothing).
fn create_private() -> Option<PathBuf> {
    let base = base_folder();
    // SAFETY: `geteuid` has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let stable = base.join(format!("jadpo-lsp-{me}-{}", env!("CARGO_PKG_VERSION")));
    let _ = DirBuilder::new().mode(0o700).create(&stable);
    if is_private(&stable) {
        return Some(stable);
    }
    fresh_private(&base)
}

/// A new folder with a random name only this user can enter.
fn fresh_private(base: &Path) -> Option<PathBuf> {
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

    /// A file left in the folder with other text, or a link put there, is
    /// replaced, never followed.
    #[test]
    fn what_is_already_there_is_checked() {
        let root = FOLDER
            .get_or_init(create_private)
            .clone()
            .expect("a private folder");
        let stale = root.join("bundled/stale/types.jadpo");
        let _ = std::fs::create_dir_all(stale.parent().expect("parent"));
        let victim = root.join("victim.txt");
        let _ = std::fs::write(&victim, "keep me");
        let _ = std::fs::remove_file(&stale);
        let _ = std::os::unix::fs::symlink(&victim, &stale);
        let path = materialize("<bundled>/stale/types.jadpo", "fresh");
        assert_eq!(path.as_deref(), Some(stale.as_path()));
        assert_eq!(
            std::fs::read_to_string(&stale).ok().as_deref(),
            Some("fresh")
        );
        assert!(!std::fs::symlink_metadata(&stale)
            .expect("there")
            .file_type()
            .is_symlink());
        assert_eq!(
            std::fs::read_to_string(&victim).ok().as_deref(),
            Some("keep me")
        );
    }

    #[test]
    fn a_folder_open_to_others_is_not_private() {
        let dir = std::env::temp_dir().join(format!("jadpo-open-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755));
        assert!(!is_private(&dir));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn paths_that_climb_are_refused() {
        assert_eq!(materialize("<bundled>/../etc/passwd", "x"), None);
        assert_eq!(materialize("/etc/passwd", "x"), None);
    }
}
