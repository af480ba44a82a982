//! A [`Loader`] that serves the editor's unsaved text over the disk, so the
//! checker sees what the author sees. Files and folder listings read from
//! disk are kept while the disk says they are unchanged, as every edit
//! loads the whole app again.

use jadpo_compiler::load::loaders::list_disk;
use jadpo_compiler::load::{FsLoader, Loader};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::io;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// Open documents by absolute path, read through to the disk otherwise.
pub struct Overlay {
    docs: BTreeMap<String, String>,
    /// Files last read from disk, kept while their [`Stamp`] stays the
    /// same: a `stat` costs less than opening and reading every file again.
    disk: Mutex<HashMap<String, Kept<Content>>>,
    /// Folder listings from disk, kept while the folder's [`Stamp`] stays
    /// the same (adding, removing or renaming an entry changes it).
    folders: Mutex<HashMap<String, Kept<Listing>>>,
    /// How long after its last change a file or folder's copy is kept
    /// ([`RACY`]; shorter in tests).
    settle: Duration,
    /// During a load ([`Loader::begin_load`]), what the disk said about
    /// each file and folder: those kept, at its start and on every thread
    /// at once; any other when first asked (so a source's size and its
    /// read share one `stat`, taken before reading as
    /// [`Overlay::read_disk`] needs).
    ahead: Mutex<Option<HashMap<String, std::fs::Metadata>>>,
}

impl Default for Overlay {
    fn default() -> Self {
        Overlay {
            docs: BTreeMap::new(),
            disk: Mutex::default(),
            folders: Mutex::default(),
            settle: RACY,
            ahead: Mutex::default(),
        }
    }
}

/// What the disk says about a file or folder; any change to its contents
/// (or, for a folder, its entries) changes it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Stamp {
    modified: SystemTime,
    len: u64,
    /// Status change time, inode and device (unix): unlike the modification
    /// time these cannot be set back, and a replaced file has a new inode.
    changed: (i64, i64, u64, u64),
}

/// How close to the time of reading a change may be and still go unseen
/// by a [`Stamp`]: file systems store times in ticks (up to 2 s on some),
/// so a change in the same tick as the read can leave the stamp as it was.
const RACY: Duration = Duration::from_secs(3);

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Option<Stamp> {
        Some(Stamp {
            modified: meta.modified().ok()?,
            len: meta.len(),
            changed: changed(meta),
        })
    }

    /// Whether a copy read at `read_at` can be trusted while the stamp
    /// stays the same: only if the last change was `settle` before the read.
    fn settled(&self, read_at: SystemTime, settle: Duration) -> bool {
        let Some(changed) = changed_time(self.changed) else {
            return false;
        };
        // Times far in the future (a crafted file system) are never settled.
        let last = self.modified.max(changed).checked_add(settle);
        last.is_some_and(|last| last < read_at)
    }
}

#[cfg(unix)]
fn changed(meta: &std::fs::Metadata) -> (i64, i64, u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.ctime(), meta.ctime_nsec(), meta.ino(), meta.dev())
}

#[cfg(not(unix))]
fn changed(_: &std::fs::Metadata) -> (i64, i64, u64, u64) {
    (0, 0, 0, 0)
}

/// The status change time of a stamp as a time (the epoch when unknown,
/// `None` past what a time can hold).
fn changed_time((secs, nanos, _, _): (i64, i64, u64, u64)) -> Option<SystemTime> {
    let secs = Duration::from_secs(u64::try_from(secs).unwrap_or(0));
    let nanos = Duration::from_nanos(u64::try_from(nanos).unwrap_or(0));
    SystemTime::UNIX_EPOCH.checked_add(secs)?.checked_add(nanos)
}

/// A folder's entries: names with whether each is a folder.
type Listing = Vec<(String, bool)>;

/// A file's contents, kept as text once checked to be UTF-8 (most are
/// sources, read as text on every load).
#[derive(Clone)]
enum Content {
    Text(Arc<str>),
    Bytes(Vec<u8>),
}

impl Content {
    fn of(bytes: Vec<u8>) -> Content {
        match String::from_utf8(bytes) {
            Ok(text) => Content::Text(Arc::from(text)),
            Err(e) => Content::Bytes(e.into_bytes()),
        }
    }

    fn bytes(self) -> Vec<u8> {
        match self {
            Content::Text(text) => text.as_bytes().to_vec(),
            Content::Bytes(bytes) => bytes,
        }
    }

    fn text(self) -> Result<String, std::string::FromUtf8Error> {
        match self {
            Content::Text(text) => Ok(text.to_string()),
            Content::Bytes(bytes) => String::from_utf8(bytes),
        }
    }

    fn shared(self) -> Result<Arc<str>, std::string::FromUtf8Error> {
        match self {
            Content::Text(text) => Ok(text),
            Content::Bytes(bytes) => String::from_utf8(bytes).map(Arc::from),
        }
    }
}

/// A copy of something read from disk, with the stamp it had before
/// (shared, so it is copied out after the lock is let go: sources are
/// read in parallel).
struct Kept<T> {
    stamp: Stamp,
    value: Arc<T>,
}

impl Overlay {
    pub fn set(&mut self, path: &str, text: String) {
        self.docs.insert(folded(path).into_owned(), text);
    }

    pub fn get(&self, path: &str) -> Option<&String> {
        self.docs.get(folded(path).as_ref())
    }

    pub fn get_mut(&mut self, path: &str) -> Option<&mut String> {
        self.docs.get_mut(folded(path).as_ref())
    }

    pub fn remove(&mut self, path: &str) {
        self.docs.remove(folded(path).as_ref());
    }

    /// Drops the files and listings kept from disk (the client says files
    /// changed).
    pub fn forget_disk(&mut self) {
        if let Ok(disk) = self.disk.get_mut() {
            disk.clear();
        }
        if let Ok(folders) = self.folders.get_mut() {
            folders.clear();
        }
    }

    /// What the disk says about `path`: as the load under way first found
    /// it ([`Overlay::ahead`]), or asked now.
    fn metadata(&self, path: &str) -> io::Result<std::fs::Metadata> {
        let known = self.ahead.lock().ok();
        if let Some(meta) = known.and_then(|a| a.as_ref()?.get(path).cloned()) {
            return Ok(meta);
        }
        let meta = std::fs::metadata(path)?;
        if let Ok(mut ahead) = self.ahead.lock() {
            if let Some(ahead) = ahead.as_mut() {
                ahead.insert(path.to_string(), meta.clone());
            }
        }
        Ok(meta)
    }

    /// A file from disk, from the copy kept if it is unchanged. The stamp
    /// is taken before reading, so a file changed meanwhile is read again
    /// next time.
    fn read_disk(&self, path: &str) -> io::Result<Content> {
        let meta = self.metadata(path)?;
        let Some(stamp) = Stamp::of(&meta).filter(|_| meta.is_file()) else {
            return FsLoader.read(path).map(Content::of);
        };
        if let Some(content) = kept(&self.disk, path, stamp) {
            return Ok(content);
        }
        let read_at = SystemTime::now();
        let content = Content::of(FsLoader.read(path)?);
        keep(&self.disk, path, (stamp, read_at, self.settle), &content);
        Ok(content)
    }

    /// A folder's listing from disk, from the copy kept if the folder is
    /// unchanged. Listings with symbolic links are not kept: a link's
    /// target can change without its folder changing.
    fn list_disk(&self, path: &str) -> io::Result<Vec<(String, bool)>> {
        let dir = if path.is_empty() { "." } else { path };
        let stamp = self
            .metadata(dir)
            .ok()
            .filter(|m| m.is_dir())
            .and_then(|m| Stamp::of(&m));
        let Some(stamp) = stamp else {
            return FsLoader.list(path);
        };
        if let Some(entries) = kept(&self.folders, dir, stamp) {
            return Ok(entries);
        }
        let read_at = SystemTime::now();
        let listing = list_disk(path)?;
        if !listing.has_links {
            keep(
                &self.folders,
                dir,
                (stamp, read_at, self.settle),
                &listing.entries,
            );
        }
        Ok(listing.entries)
    }

    /// Open documents directly inside `dir` (they may not exist on disk yet).
    fn children(&self, dir: &str) -> Vec<&str> {
        let prefix = format!("{}/", folded(dir).trim_end_matches('/'));
        self.docs
            .range(prefix.clone()..)
            .map(|(k, _)| k.as_str())
            .take_while(|k| k.starts_with(&prefix))
            .filter_map(|k| k.get(prefix.len()..))
            .filter(|rest| !rest.contains('/'))
            .collect()
    }
}

/// The kept copy of `path` if it was kept with `stamp`.
fn kept<T: Clone>(store: &Mutex<HashMap<String, Kept<T>>>, path: &str, stamp: Stamp) -> Option<T> {
    let value = {
        let store = store.lock().ok()?;
        let kept = store.get(path).filter(|k| k.stamp == stamp)?;
        kept.value.clone()
    };
    Some(T::clone(&value))
}

/// Keeps a copy of what was read at `read_at` from `path` (stamped
/// `stamp` before reading), unless a change could hide behind the stamp;
/// an older copy is dropped either way.
fn keep<T: Clone>(
    store: &Mutex<HashMap<String, Kept<T>>>,
    path: &str,
    (stamp, read_at, settle): (Stamp, SystemTime, Duration),
    value: &T,
) {
    let kept = stamp.settled(read_at, settle).then(|| Kept {
        stamp,
        value: Arc::new(value.clone()),
    });
    let Ok(mut store) = store.lock() else {
        return;
    };
    match kept {
        Some(kept) => store.insert(path.to_string(), kept),
        None => store.remove(path),
    };
}

impl Loader for Overlay {
    fn size(&self, path: &str) -> Option<u64> {
        match self.get(path) {
            Some(text) => Some(text.len() as u64),
            None => self.metadata(path).ok().map(|meta| meta.len()),
        }
    }

    fn read(&self, path: &str) -> io::Result<Vec<u8>> {
        match self.get(path) {
            Some(text) => Ok(text.as_bytes().to_vec()),
            None => self.read_disk(path).map(Content::bytes),
        }
    }

    fn read_string(&self, path: &str) -> io::Result<Result<String, std::string::FromUtf8Error>> {
        match self.get(path) {
            Some(text) => Ok(Ok(text.clone())),
            None => self.read_disk(path).map(Content::text),
        }
    }

    fn read_shared(&self, path: &str) -> io::Result<Result<Arc<str>, std::string::FromUtf8Error>> {
        match self.get(path) {
            Some(text) => Ok(Ok(Arc::from(text.as_str()))),
            None => self.read_disk(path).map(Content::shared),
        }
    }

    fn list(&self, path: &str) -> io::Result<Vec<(String, bool)>> {
        let children = self.children(path);
        let mut entries = match self.list_disk(path) {
            Ok(entries) => entries,
            Err(e) if children.is_empty() => return Err(e),
            Err(_) => Vec::new(),
        };
        for name in children {
            if !entries.iter().any(|(n, _)| n == name) {
                entries.push((name.to_string(), false));
            }
        }
        Ok(entries)
    }

    fn real_path(&self, path: &str) -> io::Result<String> {
        FsLoader.real_path(path)
    }

    fn begin_load(&self) {
        use rayon::prelude::*;
        let mut paths: Vec<String> = Vec::new();
        if let Ok(disk) = self.disk.lock() {
            paths.extend(disk.keys().cloned());
        }
        if let Ok(folders) = self.folders.lock() {
            paths.extend(folders.keys().cloned());
        }
        let stat = |path: String| {
            let meta = std::fs::metadata(&path).ok()?;
            Some((path, meta))
        };
        let ahead = paths.into_par_iter().filter_map(stat).collect();
        if let Ok(mut slot) = self.ahead.lock() {
            *slot = Some(ahead);
        }
    }

    fn end_load(&self) {
        if let Ok(mut slot) = self.ahead.lock() {
            *slot = None;
        }
    }
}

/// Folds `//`, `.` and `..` segments of an absolute `/` path, so the same
/// file always has the same key.
pub fn clean(path: &str) -> String {
    folded(path).into_owned()
}

/// [`clean`], without copying a path that is already clean.
fn folded(path: &str) -> Cow<'_, str> {
    if is_clean(path) {
        return Cow::Borrowed(path);
    }
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
    Cow::Owned(if path.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    })
}

/// Whether [`clean`] would leave `path` as it is: no empty, `.` or `..`
/// segment after the leading `/`.
fn is_clean(path: &str) -> bool {
    let rest = path.strip_prefix('/').unwrap_or(path);
    rest.is_empty() && path.len() <= 1
        || rest
            .split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..")
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
        assert_eq!(clean("/a//b/"), "/a/b");
        assert_eq!(clean("/a/b"), "/a/b");
        assert_eq!(clean("/"), "/");
    }

    /// An overlay that keeps copies of anything not changed in this very
    /// instant, so the test sees copies kept and then outdated.
    fn eager() -> Overlay {
        Overlay {
            settle: Duration::ZERO,
            ..Overlay::default()
        }
    }

    /// Waits past the file system's timestamp tick, so a change made now
    /// gets a time different from the copies kept before.
    fn tick() {
        std::thread::sleep(Duration::from_millis(30));
    }

    fn names(overlay: &Overlay, dir: &str) -> Vec<(String, bool)> {
        let mut listed = overlay.list(dir).unwrap_or_default();
        listed.sort();
        listed
    }

    fn entry(name: &str, is_dir: bool) -> (String, bool) {
        (name.to_string(), is_dir)
    }

    /// A load asks the disk about every kept file once, at its start
    /// (`begin_load`): a change made during the load is read by the next
    /// one, and outside a load the disk is asked on every read.
    #[test]
    fn stamps_taken_ahead_serve_one_load() {
        let root = crate::write::scratch("overlay-ahead");
        let file = root.join("a.jadpo");
        std::fs::write(&file, "one").expect("write");
        tick();
        let overlay = eager();
        let a = file.to_string_lossy().into_owned();
        assert_eq!(overlay.read(&a).ok(), Some(b"one".to_vec()));
        overlay.begin_load();
        tick();
        std::fs::write(&file, "two").expect("write");
        let during = overlay.read(&a).ok();
        overlay.end_load();
        assert_eq!(during, Some(b"one".to_vec()), "as the load found it");
        assert_eq!(overlay.read(&a).ok(), Some(b"two".to_vec()));
        overlay.begin_load();
        assert_eq!(overlay.read(&a).ok(), Some(b"two".to_vec()));
        overlay.end_load();
        let _ = std::fs::remove_dir_all(&root);
    }

    /// Copies kept from disk must equal a fresh read after files are
    /// created, rewritten (same length), renamed and removed, and folders
    /// created, none of it through the editor.
    #[test]
    fn kept_copies_follow_the_disk() {
        let root = crate::write::scratch("overlay");
        let src = root.join("src");
        std::fs::create_dir_all(&src).expect("temp folder");
        let (dir, a) = (src.to_string_lossy().into_owned(), src.join("a.jadpo"));
        std::fs::write(&a, "one").expect("write");
        tick();
        let overlay = eager();
        let read = |path: &std::path::Path| overlay.read(&path.to_string_lossy()).ok();
        assert_eq!(names(&overlay, &dir), [entry("a.jadpo", false)]);
        assert_eq!(read(&a), Some(b"one".to_vec()));
        let kept = |overlay: &Overlay| {
            let folders = overlay.folders.lock().map_or(0, |f| f.len());
            let files = overlay.disk.lock().map_or(0, |f| f.len());
            (folders, files)
        };
        assert_eq!(kept(&overlay), (1, 1), "both copies are kept");
        tick();
        std::fs::write(src.join("b.jadpo"), "new").expect("write");
        std::fs::write(&a, "two").expect("write");
        assert_eq!(
            names(&overlay, &dir),
            [entry("a.jadpo", false), entry("b.jadpo", false)]
        );
        assert_eq!(read(&a), Some(b"two".to_vec()));
        tick();
        std::fs::rename(&a, src.join("c.jadpo")).expect("rename");
        std::fs::remove_file(src.join("b.jadpo")).expect("remove");
        std::fs::create_dir(src.join("d")).expect("folder");
        assert_eq!(
            names(&overlay, &dir),
            [entry("c.jadpo", false), entry("d", true)]
        );
        assert_eq!(read(&a), None);
        assert_eq!(read(&src.join("c.jadpo")), Some(b"two".to_vec()));
        let _ = std::fs::remove_dir_all(&root);
    }

    /// An unchanged file is handed out as the text kept, not a copy (the
    /// loaded files and the caches then compare it by pointer); a changed
    /// one as its new text.
    #[test]
    fn unchanged_files_are_shared_not_copied() {
        let root = crate::write::scratch("overlay-shared");
        let a = root.join("a.jadpo");
        std::fs::write(&a, "one").expect("write");
        tick();
        let overlay = eager();
        let path = a.to_string_lossy().into_owned();
        let shared = || match overlay.read_shared(&path) {
            Ok(Ok(text)) => text,
            other => panic!("{path}: {other:?}"),
        };
        let (first, second) = (shared(), shared());
        assert!(Arc::ptr_eq(&first, &second), "an unchanged file was copied");
        tick();
        std::fs::write(&a, "two").expect("write");
        assert_eq!(&*shared(), "two");
        let _ = std::fs::remove_dir_all(&root);
    }

    /// Outside a load, a size and a read each ask the disk: a size asked
    /// without a read (a file too large to load) never serves a later
    /// read, which sees the file as it is.
    #[test]
    fn outside_a_load_a_size_serves_no_read() {
        let root = crate::write::scratch("overlay-sized");
        let (a, b) = (root.join("a.jadpo"), root.join("b.jadpo"));
        std::fs::write(&a, "one").expect("write");
        std::fs::write(&b, "other").expect("write");
        tick();
        let overlay = eager();
        let (a, b) = (
            a.to_string_lossy().into_owned(),
            b.to_string_lossy().into_owned(),
        );
        assert_eq!(overlay.size(&a), Some(3));
        assert_eq!(overlay.read(&a).ok(), Some(b"one".to_vec()));
        assert_eq!(overlay.size(&a), Some(3), "kept, and asked again");
        tick();
        std::fs::write(&a, "two").expect("write");
        assert_eq!(overlay.read(&b).ok(), Some(b"other".to_vec()));
        assert_eq!(overlay.read(&a).ok(), Some(b"two".to_vec()));
        let _ = std::fs::remove_dir_all(&root);
    }
}
