//! One app in the editor: its root, and the latest analysis of it. The
//! analysis runs the same phases as `jadpo check` (load, parse, resolve,
//! check, the app view) but keeps each file's parse by content hash, so an
//! edit re-parses only the files whose text changed.

use super::overlay::{clean, Overlay};
use crate::check::app_view;
use jadpo_checker::analysis::{self, Analysed};
use jadpo_checker::{plan, rules, Scope};
use jadpo_compiler::ast::SourceFileAst;
use jadpo_compiler::diag::{sort_diagnostics, Diagnostic};
use jadpo_compiler::ir::ActionId;
use jadpo_compiler::ir::Program;
use jadpo_compiler::load::{self, LoadedProject};
use jadpo_compiler::source::Files;
use jadpo_compiler::span::FileId;
use jadpo_compiler::{parser, resolve};
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// What is kept of a file's parse while its text is unchanged; the AST
/// itself stays in the snapshot's `asts` at `index`, the text in its files.
struct Parsed {
    file: FileId,
    index: usize,
    diagnostics: Vec<Diagnostic>,
}

/// Everything the editor features read, from one run of the pipeline.
pub struct Snapshot {
    pub files: Files,
    /// What `jadpo check` shows, sorted.
    pub diagnostics: Vec<Diagnostic>,
    pub program: Option<Program>,
    analysed: Option<Analysed>,
    /// Actions' entries of the plan, by name, planned on first use.
    plans: RefCell<HashMap<String, Option<Rc<plan::ActionPlan>>>>,
    /// Parsed sources, by file.
    pub asts: Vec<SourceFileAst>,
    /// Files by absolute path (embedded ones are not on disk).
    pub by_path: HashMap<String, FileId>,
}

impl Snapshot {
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

pub struct Project {
    pub root: PathBuf,
    cache: HashMap<String, Parsed>,
    /// Checked bodies of the last resolution, reused where they still hold.
    resolved: resolve::Cache,
    /// Action summaries of the last analysis, reused where unchanged.
    summaries: analysis::Cache,
    /// Rule findings of the last run, reused where unchanged.
    rules: rules::Cache,
    pub snapshot: Option<Snapshot>,
    retired: Option<Snapshot>,
    pub dirty: bool,
}

impl Project {
    pub fn new(root: PathBuf) -> Self {
        Project {
            root,
            cache: HashMap::new(),
            resolved: resolve::Cache::default(),
            summaries: analysis::Cache::default(),
            rules: rules::Cache::default(),
            snapshot: None,
            retired: None,
            dirty: true,
        }
    }

    /// Absolute path of a file as the pipeline names it; `None` for the
    /// embedded standard library and bundled packages.
    pub fn disk_path(&self, shown: &str) -> Option<PathBuf> {
        if shown.starts_with('<') {
            return None;
        }
        Some(self.root.join(shown))
    }

    /// Runs the pipeline over the disk with `overlay` on top.
    pub fn analyse(&mut self, overlay: &Overlay) {
        let root = self.root.to_string_lossy().into_owned();
        let mut timer = Timer::start();
        let loaded = load::load_project(overlay, &root);
        timer.lap("load");
        let snapshot = match loaded {
            Ok(loaded) => self.analyse_loaded(loaded, &mut timer),
            Err(fatal) => Snapshot {
                diagnostics: sorted(app_view(&fatal.files, None, fatal.diagnostics)),
                by_path: paths(self, &fatal.files),
                files: fatal.files,
                program: None,
                analysed: None,
                plans: RefCell::default(),
                asts: Vec::new(),
            },
        };
        // Freeing the previous snapshot of a large app takes milliseconds;
        // it is kept until the diagnostics are out (`Project::retire`).
        self.retired = self.snapshot.replace(snapshot);
        self.dirty = false;
        timer.report();
    }

    /// Frees the snapshot an analysis replaced: its program and files on
    /// another thread, as they take milliseconds to free and the next edit
    /// may already be waiting (the analysis holds shared summaries and is
    /// freed here).
    pub fn retire(&mut self) {
        let Some(old) = self.retired.take() else {
            return;
        };
        let Snapshot {
            files,
            diagnostics,
            program,
            analysed,
            plans,
            asts,
            by_path,
        } = old;
        drop((analysed, plans));
        rayon::spawn(move || {
            drop((files, diagnostics, program, asts, by_path));
        });
    }

    fn analyse_loaded(&mut self, loaded: LoadedProject, timer: &mut Timer) -> Snapshot {
        let mut diagnostics = loaded.diagnostics.clone();
        let asts = self.parse(&loaded, &mut diagnostics);
        timer.lap("parse");
        let previous = self.snapshot.as_mut().and_then(|s| s.program.as_mut());
        let program = resolve::resolve_cached(
            &loaded,
            &asts,
            &mut diagnostics,
            &mut self.resolved,
            previous,
        );
        timer.lap("resolve");
        timer.note(|| {
            format!(
                "{} resolved items reused, {} checked",
                self.resolved.reused, self.resolved.computed
            )
        });
        // `jadpo_checker::check` in two halves: the rules now, the plan
        // only when a hover asks for it.
        let analysed = analysis::analyse_cached(&program, &mut self.summaries);
        timer.lap("analyse");
        timer.note(|| {
            format!(
                "{} summaries reused, {} computed",
                self.summaries.reused, self.summaries.computed
            )
        });
        let cx = jadpo_checker::Cx {
            program: &program,
            files: &loaded.files,
            scope: &Scope::App,
            analysed: &analysed,
        };
        let findings = rules::run_cached(&cx, &mut self.rules);
        timer.lap("rules");
        timer.note(|| {
            format!(
                "{} actions' findings reused, {} judged",
                self.rules.reused, self.rules.computed
            )
        });
        diagnostics.extend(findings);
        let shown = app_view(&loaded.files, Some(&program), diagnostics);
        timer.lap("view");
        Snapshot {
            diagnostics: sorted(shown),
            by_path: paths(self, &loaded.files),
            files: loaded.files,
            program: Some(program),
            analysed: Some(analysed),
            plans: RefCell::default(),
            asts,
        }
    }

    /// Parses the sources, reusing the previous parse of every file whose
    /// path, id and text are unchanged. Diagnostics come in source order,
    /// as `jadpo_compiler::compile` gives them.
    fn parse(&mut self, loaded: &LoadedProject, out: &mut Vec<Diagnostic>) -> Vec<SourceFileAst> {
        let mut previous: Vec<Option<SourceFileAst>> = match self.snapshot.as_mut() {
            Some(s) => std::mem::take(&mut s.asts).into_iter().map(Some).collect(),
            None => Vec::new(),
        };
        let mut cache = std::mem::take(&mut self.cache);
        let old_files = self.snapshot.as_ref().map(|s| &s.files);
        let mut slots: Vec<Option<(SourceFileAst, Vec<Diagnostic>)>> = Vec::new();
        let mut stale = Vec::new();
        for id in loaded.all_sources() {
            let file = loaded.files.get(id);
            // Comparing with the text parsed last time costs a memcmp;
            // hashing every file on every edit cost more.
            let same_text = |p: &Parsed| {
                old_files.is_some_and(|f| {
                    (p.file.0 as usize) < f.len() && f.get(p.file).text == file.text
                })
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
        for ((slot, _), parsed) in stale.iter().zip(parse_many(loaded, &ids)) {
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
            self.cache
                .insert(loaded.files.get(file).path.clone(), parsed);
            asts.push(ast);
        }
        asts
    }
}

/// Parses files in parallel (the first analysis parses everything).
fn parse_many(loaded: &LoadedProject, ids: &[FileId]) -> Vec<(SourceFileAst, Vec<Diagnostic>)> {
    parser::parse_each(&loaded.files, ids)
}

fn sorted(mut diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    sort_diagnostics(&mut diagnostics);
    diagnostics
}

fn paths(project: &Project, files: &Files) -> HashMap<String, FileId> {
    files
        .iter()
        .filter_map(|(id, f)| {
            let path = project.disk_path(&f.path)?;
            Some((clean(&path.to_string_lossy()), id))
        })
        .collect()
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
