//! The workspace: one app, its inputs and every cache of the pipeline.
//! `jadpo check`, `jadpo build` and `jadpo test` run it once and keep
//! nothing; `jadpo lsp` and `jadpo watch` keep it between runs, so an edit
//! costs what it touches. Both run the same phases (load, parse, resolve,
//! check, the app view) in one place: here.
//!
//! The cache protocol, the same for every cache it owns (manifest trees,
//! parses, resolved items, summaries, findings): a cache is handed to its
//! phase for one run, reuses an entry only when the entry's inputs are
//! unchanged (by content, never by time or path alone), keeps exactly what
//! this run produced for the next, and the run gives what a fresh run
//! gives. No cache is global; `tests/workspace.rs` edits apps and compares
//! every kept run with a fresh one.

pub mod overlay;
mod view;

use jadpo_checker::analysis::Analysed;
use jadpo_checker::{plan, Caches as CheckerCaches, Scope, Wanted};
use jadpo_compiler::ast::SourceFileAst;
use jadpo_compiler::diag::{sort_diagnostics, Diagnostic};
use jadpo_compiler::ir::{ActionId, Program};
use jadpo_compiler::load::{self, yaml, LoadedProject, Loader};
use jadpo_compiler::resolve::{self, Lowering};
use jadpo_compiler::source::Files;
use jadpo_compiler::span::FileId;
use jadpo_compiler::{parser, Stats};
use overlay::{clean, Overlay};
use std::cell::{OnceCell, RefCell};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use view::{app_view, package_view};

/// What is kept of a file's parse while its text is unchanged; the AST
/// itself stays in the snapshot's `asts` at `index`, the text in its files.
struct Parsed {
    file: FileId,
    index: usize,
    diagnostics: Vec<Diagnostic>,
}

/// Everything one run of the pipeline gives, and what the editor's
/// features read.
pub struct Snapshot {
    pub files: Files,
    /// What `jadpo check` shows, sorted.
    pub diagnostics: Vec<Diagnostic>,
    /// `None` when the project could not be checked at all (exit status 2).
    pub program: Option<Program>,
    /// The whole plan, when the run was asked for it (`jadpo build`).
    pub plan: Option<plan::Built>,
    pub stats: Stats,
    /// The checked package's name and version (for a package).
    pub package: Option<(String, String)>,
    analysed: Option<Analysed>,
    /// Actions' entries of the plan, by name, planned on first use.
    plans: RefCell<HashMap<String, Option<Rc<plan::ActionPlan>>>>,
    /// Parsed sources, by file (kept only by a keeping workspace).
    pub asts: Vec<SourceFileAst>,
    /// Files by absolute path (embedded ones are not on disk), made on
    /// first use.
    by_path: OnceCell<HashMap<String, FileId>>,
    root: PathBuf,
}

impl Snapshot {
    fn fatal(root: &Path, fatal: load::Fatal) -> Self {
        Snapshot {
            diagnostics: sorted(app_view(&fatal.files, None, fatal.diagnostics)),
            files: fatal.files,
            program: None,
            plan: None,
            stats: Stats::default(),
            package: None,
            analysed: None,
            plans: RefCell::default(),
            asts: Vec::new(),
            by_path: OnceCell::new(),
            root: root.to_path_buf(),
        }
    }

    /// The file at an absolute, cleaned path.
    pub fn file_at(&self, path: &str) -> Option<FileId> {
        let by_path = self.by_path.get_or_init(|| {
            self.files
                .iter()
                .filter_map(|(id, f)| {
                    let path = disk_path(&self.root, &f.path)?;
                    Some((clean(&path.to_string_lossy()), id))
                })
                .collect()
        });
        by_path.get(path).copied()
    }

    /// An app action's entry of the plan `jadpo build` writes, planned on
    /// first use (a hover plans one action and its callers, not the app).
    pub fn plan_action(&self, name: &str) -> Option<Rc<plan::ActionPlan>> {
        if let Some(found) = self.plans.borrow().get(name) {
            return found.clone();
        }
        let program = self.program.as_ref()?;
        let cx = jadpo_checker::Cx {
            program,
            files: &self.files,
            scope: &Scope::App,
            analysed: self.analysed.as_ref()?,
        };
        let planned = program
            .actions
            .iter()
            .position(|a| a.qualified == name)
            .and_then(|i| plan::action(&cx, ActionId(i as u32)))
            .map(Rc::new);
        self.plans
            .borrow_mut()
            .insert(name.to_string(), planned.clone());
        planned
    }
}

/// How many of the checked unit's own sources there are, and how many
/// packages it requires.
fn stats(loaded: &LoadedProject, subject: &Subject) -> Stats {
    match subject {
        Subject::App => Stats {
            files: loaded.app_sources.len(),
            packages: loaded.packages.len(),
        },
        Subject::Package { .. } => Stats {
            files: own_package(loaded).map_or(0, |p| p.sources.len()),
            packages: loaded.packages.len().saturating_sub(1),
        },
    }
}

/// The package checked on its own, among the loaded packages.
fn own_package(loaded: &LoadedProject) -> Option<&load::LoadedPackage> {
    let name = &loaded.app.app.node;
    loaded
        .packages
        .iter()
        .find(|p| &p.manifest.name.node == name)
}

/// The checked package's name and version.
fn package_facts(loaded: &LoadedProject, name: String) -> (String, String) {
    let version =
        own_package(loaded).map_or(String::new(), |p| p.manifest.version.node.to_string());
    (name, version)
}

/// What a keeping workspace holds between runs, one cache per phase.
#[derive(Default)]
struct Caches {
    manifests: yaml::Cache,
    parsed: HashMap<String, Parsed>,
    resolved: resolve::Cache,
    checker: CheckerCaches,
}

/// What a workspace checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subject {
    /// An app, with the packages it requires.
    App,
    /// One package on its own (`jadpo publish`, `jadpo check` and `jadpo
    /// test` of a package folder), its requirements resolved from
    /// `registry` (then the bundled packages).
    Package { registry: Option<String> },
}

/// Which diagnostics a snapshot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// What the author sees: their own findings, and one
    /// `package.has_errors` per other package with errors.
    Author,
    /// Every diagnostic of every unit (the tests that look inside
    /// packages).
    Everything,
}

pub struct Workspace {
    pub root: PathBuf,
    subject: Subject,
    view: View,
    lowering: Lowering,
    /// The plan runs build.
    wanted: Wanted,
    /// `None` for a workspace run once: nothing is kept and no cache key
    /// is computed.
    caches: Option<Box<Caches>>,
    /// The latest run.
    pub snapshot: Option<Snapshot>,
    retired: Option<Snapshot>,
    /// Whether an input changed since the latest run.
    pub dirty: bool,
}

impl Workspace {
    /// A workspace kept between runs (the editor, `jadpo watch`): bodies
    /// are lowered for their effects, and no whole plan is built.
    pub fn keeping(root: PathBuf) -> Self {
        Workspace {
            caches: Some(Box::default()),
            ..Workspace::once(root, Lowering::Effects, Wanted::Nothing)
        }
    }

    /// A workspace run once over an app (`jadpo check`, `jadpo build`,
    /// `jadpo test`), building the plan `wanted`.
    pub fn once(root: PathBuf, lowering: Lowering, wanted: Wanted) -> Self {
        Workspace {
            root,
            subject: Subject::App,
            view: View::Author,
            lowering,
            wanted,
            caches: None,
            snapshot: None,
            retired: None,
            dirty: true,
        }
    }

    /// A workspace run once over the package at `root` on its own.
    pub fn package(
        root: PathBuf,
        registry: Option<String>,
        lowering: Lowering,
        wanted: Wanted,
    ) -> Self {
        Workspace {
            subject: Subject::Package { registry },
            ..Workspace::once(root, lowering, wanted)
        }
    }

    /// The same workspace, its snapshots holding every diagnostic.
    pub fn everything(self) -> Self {
        Workspace {
            view: View::Everything,
            ..self
        }
    }

    /// Absolute path of a file as the pipeline names it; `None` for the
    /// embedded standard library and bundled packages.
    pub fn disk_path(&self, shown: &str) -> Option<PathBuf> {
        disk_path(&self.root, shown)
    }

    /// Runs the pipeline over what `loader` reads, leaving the result in
    /// [`Workspace::snapshot`].
    pub fn analyse(&mut self, loader: &dyn Loader) {
        let snapshot = self.pass(loader);
        // Freeing the previous snapshot of a large app takes milliseconds;
        // it is kept until the diagnostics are out (`Workspace::retire`).
        self.retired = self.snapshot.replace(snapshot);
        self.dirty = false;
    }

    /// Runs the pipeline once and gives its snapshot, without the analysis
    /// (a workspace made by [`Workspace::once`]).
    pub fn run(mut self, loader: &dyn Loader) -> Snapshot {
        let mut snapshot = self.pass(loader);
        if let Some(analysed) = snapshot.analysed.take() {
            analysed.release();
        }
        snapshot
    }

    fn pass(&mut self, loader: &dyn Loader) -> Snapshot {
        let root = self.root.to_string_lossy().into_owned();
        let mut timer = Timer::start();
        let loaded = match (&self.subject, self.caches.as_mut()) {
            (Subject::Package { registry }, _) => {
                load::load_package_unit(loader, &root, registry.as_deref())
            }
            (Subject::App, Some(c)) => load::load_project_kept(loader, &root, &mut c.manifests),
            (Subject::App, None) => load::load_project(loader, &root),
        };
        timer.lap("load");
        let snapshot = match loaded {
            Ok(loaded) => self.analyse_loaded(loaded, &mut timer),
            Err(fatal) => Snapshot::fatal(&self.root, fatal),
        };
        timer.report();
        snapshot
    }

    /// Frees the snapshot an analysis replaced, and what the caches set
    /// aside meanwhile: its program and files on another thread, as they
    /// take milliseconds to free and the next edit may already be waiting
    /// (the analysis holds shared summaries and is freed here).
    pub fn retire(&mut self) {
        if let Some(c) = self.caches.as_mut() {
            c.resolved.retire();
            c.checker.summaries.retire();
        }
        let Some(old) = self.retired.take() else {
            return;
        };
        let Snapshot {
            files,
            diagnostics,
            program,
            plan,
            analysed,
            plans,
            asts,
            by_path,
            ..
        } = old;
        drop((analysed, plans));
        jadpo_compiler::retire::free_later((files, diagnostics, program, plan, asts, by_path));
    }

    fn analyse_loaded(&mut self, loaded: LoadedProject, timer: &mut Timer) -> Snapshot {
        let mut diagnostics = loaded.diagnostics.clone();
        let asts = self.parse(&loaded, &mut diagnostics);
        timer.lap("parse");
        let program = self.resolve(&loaded, &asts, &mut diagnostics, timer);
        let asts = if self.caches.is_some() {
            asts
        } else {
            // Freeing the syntax trees costs a few percent of a large
            // check and nothing needs them any more: another thread frees
            // them while the checker runs.
            rayon::spawn(move || drop(asts));
            Vec::new()
        };
        // The last analysis is patched where an edit changed few bodies;
        // the snapshot it belonged to is being replaced.
        if let (Some(c), Some(s)) = (self.caches.as_mut(), self.snapshot.as_mut()) {
            if let Some(last) = s.analysed.take() {
                c.checker.summaries.give_back(last);
            }
        }
        let scope = match self.subject {
            Subject::App => Scope::App,
            Subject::Package { .. } => Scope::Package(loaded.app.app.node.clone()),
        };
        let checker = self.caches.as_mut().map(|c| &mut c.checker);
        let checked = jadpo_checker::run(&program, &loaded.files, &scope, checker, self.wanted);
        timer.lap("check");
        if let Some(c) = &self.caches {
            let (summaries, rules) = (&c.checker.summaries, &c.checker.rules);
            timer.note(|| {
                format!(
                    "{} summaries reused, {} computed{}; {} actions' findings reused, {} judged",
                    summaries.reused,
                    summaries.computed,
                    if summaries.patched { " (patched)" } else { "" },
                    rules.reused,
                    rules.computed
                )
            });
        }
        diagnostics.extend(checked.diagnostics);
        let shown = match (self.view, &scope) {
            (View::Everything, _) => diagnostics,
            (View::Author, Scope::App) => app_view(&loaded.files, Some(&program), diagnostics),
            (View::Author, Scope::Package(name)) => {
                package_view(&loaded, name, &program, diagnostics)
            }
        };
        timer.lap("view");
        Snapshot {
            diagnostics: sorted(shown),
            stats: stats(&loaded, &self.subject),
            package: match scope {
                Scope::App => None,
                Scope::Package(name) => Some(package_facts(&loaded, name)),
            },
            files: loaded.files,
            program: Some(program),
            plan: checked.plan,
            analysed: Some(checked.analysed),
            plans: RefCell::default(),
            asts,
            by_path: OnceCell::new(),
            root: self.root.clone(),
        }
    }

    fn resolve(
        &mut self,
        loaded: &LoadedProject,
        asts: &[SourceFileAst],
        diagnostics: &mut Vec<Diagnostic>,
        timer: &mut Timer,
    ) -> Program {
        let Some(caches) = self.caches.as_mut() else {
            let program = resolve::resolve_lowering(loaded, asts, diagnostics, self.lowering);
            timer.lap("resolve");
            return program;
        };
        let previous = self.snapshot.as_mut().and_then(|s| s.program.as_mut());
        let cache = &mut caches.resolved;
        let program = resolve::resolve_cached(loaded, asts, diagnostics, cache, previous);
        timer.lap("resolve");
        timer.note(|| match cache.patched {
            true => format!(
                "moved the last resolution, {} bodies checked again",
                cache.checked
            ),
            false => format!("resolved afresh, {} bodies checked", cache.checked),
        });
        program
    }

    /// Parses the sources. A keeping workspace reuses the previous parse of
    /// every file whose path, id and text are unchanged. Diagnostics come
    /// in source order, as a fresh parse gives them.
    fn parse(&mut self, loaded: &LoadedProject, out: &mut Vec<Diagnostic>) -> Vec<SourceFileAst> {
        let sources = loaded.all_sources();
        let Some(caches) = self.caches.as_mut() else {
            return parser::parse_files(&loaded.files, &sources, out);
        };
        let mut previous: Vec<Option<SourceFileAst>> = match self.snapshot.as_mut() {
            Some(s) => std::mem::take(&mut s.asts).into_iter().map(Some).collect(),
            None => Vec::new(),
        };
        let mut cache = std::mem::take(&mut caches.parsed);
        let old_files = self.snapshot.as_ref().map(|s| &s.files);
        let mut slots: Vec<Option<(SourceFileAst, Vec<Diagnostic>)>> = Vec::new();
        let mut stale = Vec::new();
        for id in sources {
            let file = loaded.files.get(id);
            // Comparing with the text parsed last time costs a pointer
            // comparison when the loader shared it, a memcmp otherwise;
            // hashing every file on every edit cost more.
            let same_text = |p: &Parsed| {
                old_files
                    .and_then(|f| f.try_get(p.file))
                    .is_some_and(|old| jadpo_compiler::source::same_text(&old.text, &file.text))
            };
            let reused = cache
                .remove(&file.path)
                .filter(|p| p.file == id && same_text(p))
                .and_then(|p| Some((previous.get_mut(p.index)?.take()?, p.diagnostics)));
            if reused.is_none() {
                stale.push((slots.len(), id));
            }
            slots.push(reused);
        }
        let ids: Vec<FileId> = stale.iter().map(|(_, id)| *id).collect();
        for ((slot, _), parsed) in stale.iter().zip(parser::parse_each(&loaded.files, &ids)) {
            if let Some(s) = slots.get_mut(*slot) {
                *s = Some(parsed);
            }
        }
        let mut asts = Vec::with_capacity(slots.len());
        for (ast, diagnostics) in slots.into_iter().flatten() {
            let file = ast.file;
            out.extend(diagnostics.iter().cloned());
            let parsed = Parsed {
                file,
                index: asts.len(),
                diagnostics,
            };
            caches
                .parsed
                .insert(loaded.files.get(file).path.clone(), parsed);
            asts.push(ast);
        }
        asts
    }
}

/// A kept workspace over the files on disk (`jadpo watch`): a re-check
/// after an edit reuses what the edit did not touch, as in the editor.
pub struct Incremental {
    project: Workspace,
    overlay: Overlay,
}

impl Incremental {
    pub fn new(root: PathBuf) -> Self {
        Incremental {
            project: Workspace::keeping(root),
            overlay: Overlay::default(),
        }
    }

    /// Files changed on disk: read them again on the next check.
    pub fn changed(&mut self) {
        self.overlay.forget_disk();
        self.project.dirty = true;
    }

    /// Checks the app as it is now: its files, its findings (as `jadpo
    /// check` shows them), the number of its sources and of its packages,
    /// and whether it could be checked at all.
    pub fn check(&mut self) -> Checked<'_> {
        self.project.retire();
        self.project.analyse(&self.overlay);
        let snap = self
            .project
            .snapshot
            .as_ref()
            .expect("analyse leaves a snapshot");
        // The closing line counts as `jadpo check` does: the app's own
        // sources and the packages it loaded.
        Checked {
            files: &snap.files,
            diagnostics: &snap.diagnostics,
            sources: snap.stats.files,
            packages: snap.stats.packages,
            checked: snap.program.is_some(),
        }
    }
}

/// One check of [`Incremental`].
pub struct Checked<'a> {
    pub files: &'a jadpo_compiler::source::Files,
    pub diagnostics: &'a [jadpo_compiler::diag::Diagnostic],
    pub sources: usize,
    pub packages: usize,
    pub checked: bool,
}

fn disk_path(root: &Path, shown: &str) -> Option<PathBuf> {
    if shown.starts_with('<') {
        return None;
    }
    Some(root.join(shown))
}

fn sorted(mut diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    sort_diagnostics(&mut diagnostics);
    diagnostics
}

/// The app folder holding `path`: the nearest folder upward with a
/// `jadpo.yaml`.
pub fn find_root(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .find(|dir| dir.join("jadpo.yaml").is_file())
        .map(Path::to_path_buf)
}

/// Phase times of one analysis, printed to stderr (the client's log) when
/// `JADPO_LSP_TIMING` is set; for finding where latency goes.
struct Timer {
    on: bool,
    last: std::time::Instant,
    laps: Vec<(&'static str, std::time::Duration)>,
    notes: Vec<String>,
}

impl Timer {
    fn start() -> Self {
        Timer {
            on: std::env::var_os("JADPO_LSP_TIMING").is_some(),
            last: std::time::Instant::now(),
            laps: Vec::new(),
            notes: Vec::new(),
        }
    }

    fn lap(&mut self, phase: &'static str) {
        let now = std::time::Instant::now();
        self.laps.push((phase, now - self.last));
        self.last = now;
    }

    /// Adds a note; `note` is only called when timing is on.
    fn note(&mut self, note: impl FnOnce() -> String) {
        if self.on {
            self.notes.push(note());
        }
    }

    fn report(&self) {
        if !self.on {
            return;
        }
        let parts: Vec<String> = self
            .laps
            .iter()
            .map(|(p, d)| format!("{p} {:.1}ms", d.as_secs_f64() * 1000.0))
            .collect();
        eprintln!(
            "jadpo lsp: analysed: {} ({})",
            parts.join(", "),
            self.notes.join("; ")
        );
    }
}
