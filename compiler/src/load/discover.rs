//! Finding the `.jadpo` sources of an app or package folder: every `.jadpo`
//! file below it, except hidden folders, the skipped top-level folders
//! (`build/`, `packages/` for an app) and folders holding a `package.yaml`.
//! The result is sorted by path, whatever order folders are listed in.

use super::loaders::join;
use super::Folder;

/// How deep folders may nest below an app or package.
const MAX_DEPTH: usize = 32;

/// Something found while walking that the caller reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// A folder could not be listed.
    Unreadable { path: String, error: String },
    /// A folder is (through a symlink) one of its own parents.
    SymlinkLoop { path: String },
    /// A file or folder is (through a symlink) outside the confining folder.
    Escapes { path: String },
    /// Folders nest deeper than [`MAX_DEPTH`].
    TooDeep { path: String },
}

#[derive(Clone, Debug, Default)]
pub struct Found {
    /// Paths relative to the walked folder, sorted.
    pub sources: Vec<String>,
    pub problems: Vec<Problem>,
}

/// Walks `root`. `skip_top` names top-level folders to leave out; `confine`
/// refuses files and folders whose real path is outside `root` (packages).
pub fn discover(root: &Folder, skip_top: &[&str], confine: bool) -> Found {
    let mut found = Found::default();
    let root_real = root.loader.real_path(&root.path).ok();
    let mut walk = Walk {
        root,
        skip_top,
        confine: if confine { root_real.clone() } else { None },
        found: &mut found,
        stack: root_real.into_iter().collect(),
    };
    walk.folder("", 0);
    found.sources.sort();
    found
        .problems
        .sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    found
}

struct Walk<'w, 'a> {
    root: &'w Folder<'a>,
    skip_top: &'w [&'w str],
    confine: Option<String>,
    found: &'w mut Found,
    /// Real paths of the folders being walked, to stop symlink loops.
    stack: Vec<String>,
}

impl Walk<'_, '_> {
    /// Walks the folder at `rel` (the root when empty), listed once: the
    /// same listing says whether a child folder holds a package and what
    /// the walk goes into.
    fn folder(&mut self, rel: &str, depth: usize) {
        let listed = self.root.loader.list(&join(&self.root.path, rel));
        self.entries(rel, depth, listed);
    }

    fn entries(&mut self, rel: &str, depth: usize, listed: std::io::Result<Vec<(String, bool)>>) {
        let entries = match listed {
            Ok(mut e) => {
                e.sort();
                e
            }
            Err(err) => {
                self.found.problems.push(Problem::Unreadable {
                    path: rel.to_string(),
                    error: err.to_string(),
                });
                return;
            }
        };
        for (name, is_dir) in entries {
            let child = join(rel, &name);
            if is_dir {
                self.child_folder(&name, &child, depth);
            } else if name.ends_with(".jadpo") && self.inside(&child) {
                self.found.sources.push(child);
            }
        }
    }

    fn child_folder(&mut self, name: &str, child: &str, depth: usize) {
        if name.starts_with('.') || (depth == 0 && self.skip_top.contains(&name)) {
            return;
        }
        let listed = self.root.loader.list(&join(&self.root.path, child));
        if holds_package(&listed) || !self.inside(child) {
            return;
        }
        if depth + 1 > MAX_DEPTH {
            self.found.problems.push(Problem::TooDeep {
                path: child.to_string(),
            });
            return;
        }
        let real = self
            .root
            .loader
            .real_path(&join(&self.root.path, child))
            .ok();
        if let Some(real) = &real {
            if self.stack.contains(real) {
                self.found.problems.push(Problem::SymlinkLoop {
                    path: child.to_string(),
                });
                return;
            }
            self.stack.push(real.clone());
        }
        self.entries(child, depth + 1, listed);
        if real.is_some() {
            self.stack.pop();
        }
    }

    /// With confinement on, whether `child` really lies inside the root.
    fn inside(&mut self, child: &str) -> bool {
        let Some(root_real) = &self.confine else {
            return true;
        };
        let Ok(real) = self.root.loader.real_path(&join(&self.root.path, child)) else {
            // Unreadable entries are reported when they are read.
            return true;
        };
        let inside = real == *root_real || real.starts_with(&format!("{root_real}/"));
        if !inside {
            self.found.problems.push(Problem::Escapes {
                path: child.to_string(),
            });
        }
        inside
    }
}

/// Whether the file `rel` of `folder` is a link to somewhere outside the
/// folder (a manifest is confined like the sources: a `package.yaml` linked
/// to `/etc/passwd` would print its lines in a frame).
pub fn file_escapes(folder: &Folder, rel: &str) -> bool {
    let loader = folder.loader;
    let (Ok(root), Ok(real)) = (
        loader.real_path(&folder.path),
        loader.real_path(&join(&folder.path, rel)),
    ) else {
        // Unreadable or missing: the read says so.
        return false;
    };
    let root = root.trim_end_matches('/');
    if root.is_empty() || root == "." {
        // A relative real path (a loader without links) from the current folder.
        return real.starts_with('/') || super::loaders::escapes(&real);
    }
    !real.starts_with(&format!("{root}/"))
}

/// Whether a folder's listing holds a `package.yaml` file.
fn holds_package(listed: &std::io::Result<Vec<(String, bool)>>) -> bool {
    listed
        .as_ref()
        .is_ok_and(|e| e.iter().any(|(n, d)| n == "package.yaml" && !d))
}
