//! Every file the tool writes goes through [`write_atomic`]: the bytes go to a
//! new file beside the target, are synced, and the new file is renamed over
//! the target. A reader sees the old file or the new one, never a torn one; a
//! full disk leaves the old file in place; two writers of one folder take
//! turns (a lock on the folder); a symbolic link at the target is refused,
//! never followed, so a cloned repository cannot point a write elsewhere.
//!
//! [`rewrite_source`] rewrites a file the user owns (`jadpo fmt`, `check
//! --fix`) the same way, keeping its mode and owner, refusing a read-only
//! file, and leaving the file as it is when it changed since it was read
//! (an editor saved it while jadpo worked).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// Replaces `path` with `bytes`, atomically (see the module documentation).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (dir, name) = split(path)?;
    refuse_unwritable(path)?;
    let folder = File::open(&dir)?;
    // Serialises the writers of one folder, across processes.
    folder.lock()?;
    let temp = dir.join(temp_name(&name));
    let written = write_new(&temp, bytes)
        .and_then(|()| refuse_unwritable(path))
        .and_then(|()| fs::rename(&temp, path))
        // The rename is durable only once the folder is.
        .and_then(|()| folder.sync_all());
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written
}

/// Replaces the source file at `path`, which held `before` when it was
/// read, with `after`: atomically, with the file's mode and owner kept. A
/// read-only file, a file jadpo could not give back to its owner, and a
/// file whose bytes are no longer `before` are refused and left as they
/// are.
pub fn rewrite_source(path: &Path, before: &[u8], after: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
    let (dir, name) = split(path)?;
    refuse_unwritable(path)?;
    let meta = fs::symlink_metadata(path)?;
    if meta.permissions().readonly() {
        return Err(invalid(
            "it is read-only (no write permission); make it writable to let jadpo rewrite it",
        ));
    }
    let mode = meta.mode() & 0o7777;
    let folder = File::open(&dir)?;
    folder.lock()?;
    let temp = dir.join(temp_name(&name));
    let written = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temp)?;
        let made = file.metadata()?;
        if (made.uid(), made.gid()) != (meta.uid(), meta.gid()) {
            std::os::unix::fs::fchown(&file, Some(meta.uid()), Some(meta.gid())).map_err(|_| {
                invalid("it belongs to another user or group, and a rewrite would change its owner")
            })?;
        }
        // Set after creating: the umask would have taken bits off.
        file.set_permissions(fs::Permissions::from_mode(mode))?;
        file.write_all(after)?;
        file.sync_all()?;
        refuse_unwritable(path)?;
        if !holds(path, before)? {
            return Err(io::Error::other(
                "it changed while jadpo worked on it (saved by another program?); run the command again",
            ));
        }
        fs::rename(&temp, path)?;
        folder.sync_all()
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written
}

/// Whether the file at `path` holds exactly `bytes`.
fn holds(path: &Path, bytes: &[u8]) -> io::Result<bool> {
    use std::io::Read;
    let mut now = Vec::with_capacity(bytes.len());
    File::open(path)?
        .take(bytes.len() as u64 + 1)
        .read_to_end(&mut now)?;
    Ok(now == bytes)
}

/// Creates the folder a command writes into (and its parents), refusing an
/// empty path and a folder that is a symbolic link.
pub fn prepare_folder(dir: &Path) -> io::Result<()> {
    if dir.as_os_str().is_empty() {
        return Err(invalid("the folder is an empty path; name a folder"));
    }
    if is_link(dir) {
        return Err(invalid(
            "it is a symbolic link; jadpo does not write through links (remove the link or name the real folder)",
        ));
    }
    fs::create_dir_all(dir)
}

/// Whether `path` itself (not what it points to) is a symbolic link.
pub fn is_link(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

fn split(path: &Path) -> io::Result<(PathBuf, String)> {
    if path.as_os_str().is_empty() {
        return Err(invalid("the path is empty; name a file"));
    }
    let name = path
        .file_name()
        .ok_or_else(|| invalid("the path names no file"))?
        .to_string_lossy()
        .into_owned();
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((dir, name))
}

/// The target may be missing or a regular file; anything else is refused.
fn refuse_unwritable(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
        Ok(m) if m.file_type().is_symlink() => Err(invalid(
            "it is a symbolic link; jadpo does not write through links (remove the link)",
        )),
        Ok(m) if m.is_dir() => Err(invalid("it is a folder")),
        Ok(m) if !m.is_file() => Err(invalid(
            "it is not a regular file (a named pipe, a device or a socket)",
        )),
        Ok(_) => Ok(()),
    }
}

/// A name no other writer uses: the process, and a counter for the threads
/// of one process (the folder lock is per open file, not per thread).
fn temp_name(name: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!(".{name}.{}-{n}.tmp", std::process::id())
}

/// Writes a new file and syncs it. `create_new` refuses an existing file or link, so nothing planted at the
/// temporary name is written through.
pub fn write_new(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = OpenOptions::new().write(true).create_new(true).open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// A fresh, empty folder for one unit test, `jadpo-NAME-PID` in the
/// system's temporary folder (what was there is removed first).
#[cfg(test)]
pub(crate) fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("jadpo-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let dir = scratch("write-replace");
        let file = dir.join("plan.json");
        fs::write(&file, "old").expect("seed");
        write_atomic(&file, b"new").expect("write");
        assert_eq!(fs::read_to_string(&file).expect("read"), "new");
        let names: Vec<_> = fs::read_dir(&dir).expect("list").collect();
        assert_eq!(names.len(), 1, "a temporary file was left behind");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_link_at_the_target_is_refused_and_its_target_untouched() {
        let dir = scratch("write-link");
        let outside = dir.join("outside.txt");
        fs::write(&outside, "secret").expect("seed");
        let file = dir.join("plan.json");
        std::os::unix::fs::symlink(&outside, &file).expect("link");
        let err = write_atomic(&file, b"new").expect_err("a link is refused");
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert_eq!(fs::read_to_string(&outside).expect("read"), "secret");
        let _ = fs::remove_dir_all(&dir);
    }

    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(path).expect("stat").permissions().mode() & 0o7777
    }

    fn set_mode(path: &Path, mode: u32) {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).expect("chmod");
    }

    #[test]
    fn a_rewrite_keeps_the_mode() {
        let dir = scratch("write-mode");
        for m in [0o600, 0o640, 0o750, 0o664] {
            let file = dir.join(format!("a{m:o}.jadpo"));
            fs::write(&file, "old").expect("seed");
            set_mode(&file, m);
            rewrite_source(&file, b"old", b"new").expect("rewrite");
            assert_eq!(fs::read_to_string(&file).expect("read"), "new");
            assert_eq!(mode(&file), m, "mode {m:o} kept");
        }
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_rewrite_keeps_the_owner() {
        use std::os::unix::fs::MetadataExt;
        let dir = scratch("write-owner");
        let file = dir.join("a.jadpo");
        fs::write(&file, "old").expect("seed");
        // Only root can give a file away; elsewhere the owner is ours.
        let other = std::os::unix::fs::chown(&file, Some(4321), Some(4321)).is_ok();
        rewrite_source(&file, b"old", b"new").expect("rewrite");
        let meta = fs::metadata(&file).expect("stat");
        if other {
            assert_eq!((meta.uid(), meta.gid()), (4321, 4321), "owner kept");
        }
        assert_eq!(fs::read_to_string(&file).expect("read"), "new");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_read_only_file_is_refused_and_left() {
        let dir = scratch("write-readonly");
        let file = dir.join("a.jadpo");
        fs::write(&file, "old").expect("seed");
        set_mode(&file, 0o444);
        let err = rewrite_source(&file, b"old", b"new").expect_err("refused");
        assert!(err.to_string().contains("read-only"), "{err}");
        assert_eq!(fs::read_to_string(&file).expect("read"), "old");
        assert_eq!(mode(&file), 0o444);
        set_mode(&file, 0o644);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_file_changed_since_it_was_read_is_left() {
        let dir = scratch("write-changed");
        let file = dir.join("a.jadpo");
        fs::write(&file, "old\n// my edit\n").expect("seed");
        let err = rewrite_source(&file, b"old\n", b"new").expect_err("refused");
        assert!(err.to_string().contains("changed while"), "{err}");
        assert_eq!(
            fs::read_to_string(&file).expect("read"),
            "old\n// my edit\n"
        );
        let names: Vec<_> = fs::read_dir(&dir).expect("list").collect();
        assert_eq!(names.len(), 1, "no temporary file is left");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_empty_path_is_refused() {
        assert!(write_atomic(Path::new(""), b"x").is_err());
        assert!(prepare_folder(Path::new("")).is_err());
    }

    #[test]
    fn concurrent_writers_leave_one_whole_file() {
        let dir = scratch("write-race");
        let file = dir.join("plan.json");
        let big: Vec<Vec<u8>> = (0..8u8).map(|i| vec![b'a' + i; 1 << 20]).collect();
        std::thread::scope(|s| {
            for bytes in &big {
                let file = &file;
                s.spawn(move || write_atomic(file, bytes).expect("write"));
            }
        });
        let got = fs::read(&file).expect("read");
        assert_eq!(got.len(), 1 << 20);
        assert!(got.iter().all(|b| *b == got[0]), "the file is torn");
        let _ = fs::remove_dir_all(&dir);
    }
}
