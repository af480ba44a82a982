//! Project and package loading: `jadpo.yaml`, source discovery, package
//! resolution and `package.yaml`. No parsing of `.jadpo` text happens here.
//! All file access goes through [`Loader`], so the core does no direct IO.

pub mod app_manifest;
pub mod discover;
pub mod fields;
pub mod http_binding;
pub mod loaders;
pub mod package_manifest;
pub mod package_unit;
pub mod packages;
pub mod registry;
pub mod yaml;

pub use loaders::{list_disk, DirLoader, FsLoader, MemLoader};
pub use package_unit::load_package_unit;

use crate::diag::Diagnostic;
use crate::manifest::{AppManifest, PackageManifest};
use crate::source::{Files, Unit};
use crate::span::{FileId, Span};
use discover::Problem;
use fields::Reader;
use std::sync::Arc;

/// File access for loading. [`FsLoader`] reads the disk; tests use
/// [`MemLoader`]; the bundled standard library and packages use [`DirLoader`].
pub trait Loader: Sync {
    /// Reads a file as bytes.
    fn read(&self, path: &str) -> std::io::Result<Vec<u8>>;
    /// Reads a file as text, or says where it is not UTF-8. Loaders that
    /// keep text already checked override it, to not check it again.
    fn read_string(
        &self,
        path: &str,
    ) -> std::io::Result<Result<String, std::string::FromUtf8Error>> {
        self.read(path).map(String::from_utf8)
    }
    /// [`Loader::read_string`] as shared text, which the loaded files hold.
    /// Loaders that keep texts hand out the one they keep: an unchanged
    /// file is then neither copied nor compared byte by byte on a reload.
    fn read_shared(
        &self,
        path: &str,
    ) -> std::io::Result<Result<Arc<str>, std::string::FromUtf8Error>> {
        self.read_string(path).map(|text| text.map(Arc::from))
    }
    /// The size of a file in bytes, when the loader can tell without
    /// reading it (so a huge manifest is refused before it is read).
    fn size(&self, _path: &str) -> Option<u64> {
        None
    }
    /// Lists a folder: entry names with whether each is a folder.
    fn list(&self, path: &str) -> std::io::Result<Vec<(String, bool)>>;
    /// The path with symlinks resolved, to detect loops and escapes. Loaders
    /// without symlinks return the normalized path.
    fn real_path(&self, path: &str) -> std::io::Result<String> {
        Ok(loaders::normalize_relative(path).unwrap_or_else(|| path.to_string()))
    }
    /// A load of a whole project begins: a loader that asks the disk about
    /// each file it keeps may ask about all of them at once, on every
    /// thread, and answer from that until [`Loader::end_load`].
    fn begin_load(&self) {}
    /// The load [`Loader::begin_load`] began is over.
    fn end_load(&self) {}
}

/// One load between [`Loader::begin_load`] and, however it ends,
/// [`Loader::end_load`].
pub(crate) struct Loading<'l>(&'l dyn Loader);

impl<'l> Loading<'l> {
    pub(crate) fn begin(loader: &'l dyn Loader) -> Self {
        loader.begin_load();
        Loading(loader)
    }
}

impl Drop for Loading<'_> {
    fn drop(&mut self) {
        self.0.end_load();
    }
}

/// A loaded package: its manifest and its source files.
#[derive(Clone, Debug)]
pub struct LoadedPackage {
    pub manifest: PackageManifest,
    pub manifest_file: FileId,
    /// `.jadpo` sources, sorted by path.
    pub sources: Vec<FileId>,
    /// Where it was found, for messages: `packages/stripe`, `<bundled>/stripe`.
    pub origin: String,
}

/// Everything loaded for one check.
#[derive(Clone, Debug)]
pub struct LoadedProject {
    pub files: Files,
    pub app: AppManifest,
    pub app_manifest_file: FileId,
    /// App `.jadpo` sources, sorted by path.
    pub app_sources: Vec<FileId>,
    /// The standard library's sources (prelude, failures, clock) and the `ai`
    /// capability package.
    pub stdlib_sources: Vec<FileId>,
    pub stdlib_packages: Vec<LoadedPackage>,
    /// Resolved packages, sorted by name.
    pub packages: Vec<LoadedPackage>,
    /// Manifest and resolution diagnostics.
    pub diagnostics: Vec<Diagnostic>,
    /// For a package checked on its own (`load_package_unit`), its name:
    /// its tests are the ones resolved (an app's are otherwise).
    pub tested_package: Option<String>,
}

impl LoadedProject {
    /// Every `.jadpo` source to parse: stdlib, packages, then the app.
    pub fn all_sources(&self) -> Vec<FileId> {
        let mut ids = self.stdlib_sources.clone();
        for p in self.stdlib_packages.iter().chain(&self.packages) {
            ids.extend(&p.sources);
        }
        ids.extend(&self.app_sources);
        ids
    }
}

/// Loading stopped before anything could be checked (exit status 2).
#[derive(Debug)]
pub struct Fatal {
    pub files: Files,
    pub diagnostics: Vec<Diagnostic>,
}

/// Where the standard library and the first-party packages come from.
#[derive(Clone, Copy)]
pub struct Bundled<'a> {
    /// `stdlib/lib`: `.jadpo` sources at the top, packages (`ai`) in folders.
    pub stdlib: &'a dyn Loader,
    /// One folder per first-party package, named after it.
    pub packages: &'a dyn Loader,
}

static STDLIB_LOADER: DirLoader = DirLoader(&jadpo_stdlib::STDLIB);
static PACKAGES_LOADER: DirLoader = DirLoader(&jadpo_stdlib::PACKAGES);

impl Bundled<'static> {
    /// The standard library and packages embedded in this build.
    pub fn builtin() -> Self {
        Bundled {
            stdlib: &STDLIB_LOADER,
            packages: &PACKAGES_LOADER,
        }
    }
}

/// Loads the app at `root` with the embedded standard library and packages.
pub fn load_project(loader: &dyn Loader, root: &str) -> Result<LoadedProject, Fatal> {
    load_project_with(loader, root, Bundled::builtin())
}

/// [`load_project`], reading manifests through `manifests`, which keeps
/// their trees for the next load (the workspace's manifest cache).
pub fn load_project_kept(
    loader: &dyn Loader,
    root: &str,
    manifests: &mut yaml::Cache,
) -> Result<LoadedProject, Fatal> {
    let mut cx = Ctx {
        yaml: std::mem::take(manifests),
        ..Ctx::default()
    };
    let loaded = load_into(&mut cx, loader, root, Bundled::builtin());
    *manifests = std::mem::take(&mut cx.yaml);
    loaded
}

/// Loads the app at `root`, taking the standard library and first-party
/// packages from `bundled`.
pub fn load_project_with(
    loader: &dyn Loader,
    root: &str,
    bundled: Bundled,
) -> Result<LoadedProject, Fatal> {
    load_into(&mut Ctx::default(), loader, root, bundled)
}

fn load_into(
    cx: &mut Ctx,
    loader: &dyn Loader,
    root: &str,
    bundled: Bundled,
) -> Result<LoadedProject, Fatal> {
    let _loading = Loading::begin(loader);
    let app_root = Folder {
        loader,
        path: root.to_string(),
        display: String::new(),
    };
    let (app, app_manifest_file) = read_app(cx, &app_root, root)?;
    let app_sources = cx.add_sources(&app_root, &["build", "packages"], false, &Unit::App);
    let stdlib_root = Folder {
        loader: bundled.stdlib,
        path: String::new(),
        display: "<stdlib>".to_string(),
    };
    let (stdlib_sources, stdlib_packages) = load_stdlib(cx, &stdlib_root);
    let bundled_root = Folder {
        loader: bundled.packages,
        path: String::new(),
        display: "<bundled>".to_string(),
    };
    let packages = packages::resolve_packages(cx, &app, &app_root, &bundled_root);
    Ok(LoadedProject {
        files: std::mem::take(&mut cx.files),
        app,
        app_manifest_file,
        app_sources,
        stdlib_sources,
        stdlib_packages,
        packages,
        diagnostics: std::mem::take(&mut cx.diags),
        tested_package: None,
    })
}

/// Reads `jadpo.yaml`; a missing, unreadable or unparsable one is fatal.
fn read_app(cx: &mut Ctx, app_root: &Folder, root: &str) -> Result<(AppManifest, FileId), Fatal> {
    // App files are named relative to the app folder, as every other one is.
    let shown = app_root.shown("jadpo.yaml");
    let file = match cx.read_manifest(app_root, "jadpo.yaml", &Unit::App) {
        Ok(file) => file,
        Err(ReadError::NotFound) => {
            let file = cx.files.add(shown.clone(), "", Unit::App);
            let shown_root = if root.is_empty() { "." } else { root };
            let gone = matches!(app_root.loader.list(&app_root.path), Err(e) if e.kind() == std::io::ErrorKind::NotFound);
            let summary = match gone {
                true => format!("`{shown_root}` does not exist: pass the path of an app folder"),
                false => format!("no jadpo.yaml in {shown_root}: run jadpo check in an app folder, or pass its path"),
            };
            cx.diags.push(
                Diagnostic::error("manifest.missing", Span::new(file, 0, 0), summary)
                .with_reason("an app is a folder with a jadpo.yaml naming the app and the packages it requires")
                .with_fix("create jadpo.yaml with `app: <name>`"),
            );
            return Err(cx.fatal());
        }
        Err(ReadError::Reported) => return Err(cx.fatal()),
    };
    let text = cx.files.get(file).text.clone();
    let root_node = match cx.yaml.parse(&text, file) {
        Ok(node) => node,
        Err(d) => {
            cx.diags.push(*d);
            return Err(cx.fatal());
        }
    };
    let mut reader = Reader::new(file, &text);
    let app = app_manifest::read_app_manifest(&mut reader, &root_node);
    cx.diags.append(&mut reader.diags);
    Ok((app, file))
}

/// The standard library: top-level `.jadpo` sources, and each folder holding
/// a `package.yaml` as an always-loaded package.
fn load_stdlib(cx: &mut Ctx, root: &Folder) -> (Vec<FileId>, Vec<LoadedPackage>) {
    let sources = cx.add_sources(root, &[], false, &Unit::Stdlib);
    let mut names: Vec<String> = root
        .loader
        .list(&root.path)
        .unwrap_or_default()
        .into_iter()
        .filter(|(_, is_dir)| *is_dir)
        .map(|(name, _)| name)
        .collect();
    names.sort();
    let mut pkgs = Vec::new();
    for name in names {
        let folder = root.child(&name);
        if let Some(pkg) = packages::load_package_folder(cx, &folder, &name) {
            pkgs.push(pkg);
        }
    }
    (sources, pkgs)
}

/// A folder seen through one loader: the path the loader reads and the path
/// shown to the author.
#[derive(Clone)]
pub struct Folder<'a> {
    pub loader: &'a dyn Loader,
    pub path: String,
    pub display: String,
}

impl<'a> Folder<'a> {
    pub fn child(&self, rel: &str) -> Folder<'a> {
        let display = loaders::join(&self.display, rel);
        Folder {
            loader: self.loader,
            path: loaders::join(&self.path, rel),
            display: loaders::normalize_shown(&display),
        }
    }

    pub fn shown(&self, rel: &str) -> String {
        let joined = loaders::join(&self.display, rel);
        loaders::normalize_shown(&joined)
    }
}

/// Why a file could not be read.
pub enum ReadError {
    /// It does not exist; the caller decides whether that is a mistake.
    NotFound,
    /// It could not be used and a diagnostic says why.
    Reported,
}

/// The files and diagnostics gathered while loading.
#[derive(Default)]
pub struct Ctx {
    pub files: Files,
    pub diags: Vec<Diagnostic>,
    /// Manifest trees, by text.
    pub yaml: yaml::Cache,
    /// The bytes of `.jadpo` sources read so far, against
    /// [`MAX_SOURCES_BYTES`].
    pub source_bytes: u64,
}

/// The most bytes of `.jadpo` sources one check reads, the app's and its
/// packages' together. A 1M-line app is about 28 MiB (1.8 s and 430 MB in
/// a release build); docs/robustness.md gives the worst contents measured
/// at this size. A source past it is refused unread.
pub const MAX_SOURCES_BYTES: u64 = 32 << 20;

/// `load.too_large`: a source that would take the sources read past
/// [`MAX_SOURCES_BYTES`].
fn too_large(file: FileId, shown: &str, len: u64, before: u64) -> Diagnostic {
    let mib = |n: u64| format!("{:.1} MiB", n as f64 / f64::from(1u32 << 20));
    let limit = mib(MAX_SOURCES_BYTES);
    let summary = if before == 0 {
        format!(
            "{shown} is {}, more than Jadpo reads ({limit} of sources in one check)",
            mib(len)
        )
    } else {
        format!(
            "{shown} ({}) would take the sources read past {limit}, after {} of others; it is skipped",
            mib(len),
            mib(before)
        )
    };
    Diagnostic::error("load.too_large", Span::new(file, 0, 0), summary)
        .with_reason(format!(
            "one check reads at most {limit} of `.jadpo` sources, the app's and its packages' together, so any input is judged within bounded memory and time"
        ))
        .with_fix("split the app, or move generated data out of `.jadpo` sources")
}

impl Ctx {
    fn fatal(&mut self) -> Fatal {
        Fatal {
            files: std::mem::take(&mut self.files),
            diagnostics: std::mem::take(&mut self.diags),
        }
    }

    /// Reads a manifest like [`Ctx::read_text`], refusing one over the
    /// manifest limit before reading it.
    pub fn read_manifest(
        &mut self,
        folder: &Folder,
        rel: &str,
        unit: &Unit,
    ) -> Result<FileId, ReadError> {
        let path = loaders::join(&folder.path, rel);
        let limit = yaml::MAX_MANIFEST_BYTES as u64;
        if let Some(len) = folder.loader.size(&path).filter(|len| *len > limit) {
            let file = self
                .files
                .add(folder.shown(rel), String::new(), unit.clone());
            self.diags.push(*yaml::too_large(len, file));
            return Err(ReadError::Reported);
        }
        self.read_text(folder, rel, unit)
    }

    /// Reads a text file into [`Files`]. Invalid UTF-8 and unreadable files
    /// are diagnosed (the file is kept, for the span, but not returned).
    pub fn read_text(
        &mut self,
        folder: &Folder,
        rel: &str,
        unit: &Unit,
    ) -> Result<FileId, ReadError> {
        let shown = folder.shown(rel);
        let read = match folder.loader.read_shared(&loaders::join(&folder.path, rel)) {
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ReadError::NotFound),
            Err(e) => {
                self.unreadable(&shown, &e.to_string(), unit);
                return Err(ReadError::Reported);
            }
        };
        match read {
            Ok(text) => Ok(self.files.add(shown, text, unit.clone())),
            Err(e) => {
                let offset = e.utf8_error().valid_up_to();
                let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
                let file = self.files.add(shown.clone(), text, unit.clone());
                // The lossy text matches the bytes up to `offset`, and the
                // replacement character there is 3 bytes long.
                let span = Span::new(file, offset as u32, offset as u32 + 3);
                self.diags.push(
                    Diagnostic::error(
                        "load.invalid_utf8",
                        span,
                        format!(
                            "{shown} is not valid UTF-8 (at byte {offset}); the file is skipped"
                        ),
                    )
                    .with_label("invalid UTF-8 here")
                    .with_reason("Jadpo sources and manifests are UTF-8 text")
                    .with_fix("save the file as UTF-8"),
                );
                Err(ReadError::Reported)
            }
        }
    }

    /// Reads a `.jadpo` source like [`Ctx::read_text`], within what is left
    /// of [`MAX_SOURCES_BYTES`]: a file that would pass it is refused,
    /// unread when the loader knows its size.
    fn read_source(
        &mut self,
        folder: &Folder,
        rel: &str,
        unit: &Unit,
    ) -> Result<FileId, ReadError> {
        let left = MAX_SOURCES_BYTES.saturating_sub(self.source_bytes);
        let path = loaders::join(&folder.path, rel);
        if let Some(len) = folder.loader.size(&path).filter(|len| *len > left) {
            return Err(self.too_large(folder, rel, unit, len));
        }
        let id = self.read_text(folder, rel, unit)?;
        let len = self.files.get(id).text.len() as u64;
        if len > left {
            // Text the loader already held (an editor's): it is dropped.
            self.files.clear_text(id);
            self.diags
                .push(too_large(id, &folder.shown(rel), len, self.source_bytes));
            return Err(ReadError::Reported);
        }
        self.source_bytes += len;
        Ok(id)
    }

    fn too_large(&mut self, folder: &Folder, rel: &str, unit: &Unit, len: u64) -> ReadError {
        let shown = folder.shown(rel);
        let file = self.files.add(shown.clone(), "", unit.clone());
        self.diags
            .push(too_large(file, &shown, len, self.source_bytes));
        ReadError::Reported
    }

    fn unreadable(&mut self, shown: &str, error: &str, unit: &Unit) {
        let file = self.files.add(shown, "", unit.clone());
        self.diags.push(
            Diagnostic::error(
                "load.unreadable",
                Span::new(file, 0, 0),
                format!("{shown} could not be read: {error}"),
            )
            .with_fix("check the file's permissions, or remove it"),
        );
    }

    /// Discovers and reads the `.jadpo` sources below `root`.
    pub fn add_sources(
        &mut self,
        root: &Folder,
        skip_top: &[&str],
        confine: bool,
        unit: &Unit,
    ) -> Vec<FileId> {
        let found = discover::discover(root, skip_top, confine);
        for problem in &found.problems {
            self.report_problem(root, problem, unit);
        }
        let mut ids = Vec::new();
        for rel in &found.sources {
            match self.read_source(root, rel, unit) {
                Ok(id) => ids.push(id),
                Err(ReadError::NotFound) => {
                    self.unreadable(&root.shown(rel), "nothing is there to read (a symbolic link to a missing file, or a file removed while loading)", unit);
                }
                Err(ReadError::Reported) => {}
            }
        }
        ids
    }

    fn report_problem(&mut self, root: &Folder, problem: &Problem, unit: &Unit) {
        let (path, code, summary, fix) = match problem {
            Problem::Unreadable { path, error } => {
                if path.is_empty() && !root.display.is_empty() {
                    // The package folder itself; its manifest read reports it.
                    return;
                }
                let shown = root.shown(path);
                let summary = format!(
                    "folder {} could not be read: {error}",
                    display_or_dot(&shown)
                );
                (
                    path,
                    "load.unreadable",
                    summary,
                    "check the folder's permissions",
                )
            }
            Problem::SymlinkLoop { path } => {
                let summary = format!(
                    "folder {} links back to a folder that contains it",
                    root.shown(path)
                );
                (
                    path,
                    "load.symlink_loop",
                    summary,
                    "remove the symlink that makes the loop",
                )
            }
            Problem::Escapes { path } => {
                let summary = format!("{} links outside its package's folder", root.shown(path));
                (
                    path,
                    "package.path_escapes",
                    summary,
                    "copy the file into the package instead of linking to it",
                )
            }
            Problem::TooDeep { path } => {
                let summary = format!(
                    "folder {} is nested too deeply to be read",
                    root.shown(path)
                );
                (
                    path,
                    "load.too_deep",
                    summary,
                    "flatten the folder structure",
                )
            }
        };
        let file = self.files.add(root.shown(path), "", unit.clone());
        self.diags
            .push(Diagnostic::error(code, Span::new(file, 0, 0), summary).with_fix(fix));
    }
}

fn display_or_dot(s: &str) -> &str {
    if s.is_empty() {
        "."
    } else {
        s
    }
}
