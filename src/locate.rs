//! Which project a command's path names, as cargo, tsc and ruff find
//! theirs: the nearest folder at or above the path holding `jadpo.yaml` (an
//! app) or `package.yaml` (a package). A file names the folder it is in, so
//! `jadpo check app/jadpo.yaml` or `jadpo check app/src/a.jadpo` checks the
//! app. A path that does not exist is an error, said in words.

use std::path::{Path, PathBuf};

/// What a path names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Project {
    /// A folder holding `jadpo.yaml`.
    App(String),
    /// A folder holding `package.yaml` (and no `jadpo.yaml`).
    Package(String),
    /// Nothing above the path holds either: the path itself, for the
    /// loader to report as an app without `jadpo.yaml`.
    Neither(String),
}

/// The project `path` names (see the module documentation).
pub fn locate(path: &str) -> Result<Project, String> {
    let given = if path.is_empty() { "." } else { path };
    let meta = std::fs::metadata(given).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("`{given}` does not exist"),
        _ => format!("cannot read `{given}`: {e}"),
    })?;
    let start = if meta.is_dir() {
        PathBuf::from(given)
    } else {
        parent_of(Path::new(given))
    };
    let mut at = start.clone();
    loop {
        if at.join("jadpo.yaml").is_file() {
            return Ok(Project::App(shown(&at)));
        }
        if at.join("package.yaml").is_file() {
            return Ok(Project::Package(shown(&at)));
        }
        match upward(&at) {
            Some(parent) => at = parent,
            None => return Ok(Project::Neither(shown(&start))),
        }
    }
}

/// The folder a file is in; `.` for a bare file name.
fn parent_of(file: &Path) -> PathBuf {
    match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The folder above `dir`, walking a relative path up through `..` once it
/// runs out of its own components (so `src` goes to `.`, then `..`).
fn upward(dir: &Path) -> Option<PathBuf> {
    let real = std::fs::canonicalize(dir).ok()?;
    real.parent()?;
    if dir.is_absolute() {
        return dir.parent().map(Path::to_path_buf);
    }
    let text = dir.to_string_lossy();
    let trimmed = text.trim_end_matches('/');
    let ups = trimmed.split('/').all(|s| s == "..");
    if trimmed == "." || trimmed.is_empty() {
        Some(PathBuf::from(".."))
    } else if ups {
        Some(PathBuf::from(format!("{trimmed}/..")))
    } else {
        Some(parent_of(dir))
    }
}

/// Where CI tools (SARIF, GitHub annotations) should find the files of
/// the project in `dir`: the prefix put in front of its project-relative
/// paths. Inside a repository it is the folder's path from the repository
/// root (`""` at the root itself), so GitHub resolves it however jadpo was
/// invoked (an absolute path, `working-directory:`, `../app`); the
/// repository root is `$GITHUB_WORKSPACE` when the folder is inside it,
/// else the nearest folder above holding `.git`. Outside any repository:
/// `dir` as given when it is relative, else its absolute path.
pub fn ci_root(dir: &str) -> String {
    let Ok(real) = std::fs::canonicalize(if dir.is_empty() { "." } else { dir }) else {
        return dir.to_string();
    };
    let workspace = std::env::var_os("GITHUB_WORKSPACE")
        .and_then(|w| std::fs::canonicalize(w).ok())
        .filter(|w| real.starts_with(w));
    let repo = workspace.or_else(|| {
        real.ancestors()
            .find(|a| a.join(".git").exists())
            .map(Path::to_path_buf)
    });
    match repo {
        Some(repo) => {
            let inside = real.strip_prefix(&repo).unwrap_or(Path::new(""));
            inside.to_string_lossy().replace('\\', "/")
        }
        None if Path::new(dir).is_absolute() => shown(&real),
        None => dir.to_string(),
    }
}

fn shown(dir: &Path) -> String {
    dir.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(rel: &str) -> String {
        format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"))
    }

    #[test]
    fn an_app_is_found_from_its_folder_a_subfolder_and_a_file() {
        let app = Project::App(repo("examples/billing"));
        assert_eq!(locate(&repo("examples/billing")), Ok(app.clone()));
        assert_eq!(locate(&repo("examples/billing/src")), Ok(app.clone()));
        assert_eq!(locate(&repo("examples/billing/jadpo.yaml")), Ok(app));
    }

    #[test]
    fn a_package_folder_is_a_package() {
        assert_eq!(
            locate(&repo("packages/stripe")),
            Ok(Project::Package(repo("packages/stripe")))
        );
    }

    #[test]
    fn a_missing_path_says_so() {
        let err = locate(&repo("examples/no_such_app")).expect_err("missing");
        assert!(err.ends_with("does not exist"), "{err}");
    }

    #[test]
    fn relative_paths_climb_through_dot_dot() {
        assert_eq!(upward(Path::new("src")), Some(PathBuf::from(".")));
        assert_eq!(upward(Path::new(".")), Some(PathBuf::from("..")));
        assert_eq!(upward(Path::new("..")), Some(PathBuf::from("../..")));
        assert_eq!(upward(Path::new("src/lsp")), Some(PathBuf::from("src")));
    }
}
