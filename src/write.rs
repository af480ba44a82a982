//! Every file the tool writes goes through [`write_atomic`]: the bytes go to a
//! new file beside the target, are synced, and the new file is renamed over
//! the target. A reader sees the old file or the new one, never a torn one; a
//! full disk leaves the old file in place; two writers of one folder take
//! turns (a lock on the folder); a symbolic link at the target is refused,
//! never followed, so a cloned repository cannot point a write elsewhere.

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

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("jadpo-write-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("scratch folder");
        dir
    }

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let dir = scratch("replace");
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
        let dir = scratch("link");
        let outside = dir.join("outside.txt");
        fs::write(&outside, "secret").expect("seed");
        let file = dir.join("plan.json");
        std::os::unix::fs::symlink(&outside, &file).expect("link");
        let err = write_atomic(&file, b"new").expect_err("a link is refused");
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert_eq!(fs::read_to_string(&outside).expect("read"), "secret");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_empty_path_is_refused() {
        assert!(write_atomic(Path::new(""), b"x").is_err());
        assert!(prepare_folder(Path::new("")).is_err());
    }

    #[test]
    fn concurrent_writers_leave_one_whole_file() {
        let dir = scratch("race");
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
