//! An edit that keeps the context, resolved at the cost of the edit.
//!
//! In the same context (`edit.rs`) every declaration means what it meant:
//! the tables, headers, type definitions and entry points of the last
//! resolution hold, with the spans of the edited files moved
//! (`relocate.rs`). So the last program, tables and diagnostics are kept
//! whole; the spans in the changed files are moved, and only the bodies of
//! those files (actions' and routes' inline actions', and the bodies whose
//! results point into them) are checked again, with the tests and fixtures
//! when a changed file holds one. An edit this path cannot follow exactly
//! (a file with syntax errors, a span with no certain place, an item the
//! locators do not find) is resolved afresh, which gives the same result
//! at the cost of the app. `resolve_incremental` compares both with a
//! fresh resolution after edits to every fixture.

use std::collections::HashSet;

use crate::ast::{self, Item, SourceFileAst};
use crate::diag::Diagnostic;
use crate::index::IndexVec;
use crate::ir::{self, ActionId, FnId, OpId, Program};
use crate::load::LoadedProject;
use crate::span::{FileId, Span};

use super::edit::{Edit, Seen};
use super::relocate::{Change, Moves};
use super::tables::{ActionSig, FnSig, OpSig, UnitInfo};
use super::{drive, Builder, Tables};
use crate::ir::spans::Spans;

/// What the last resolution left for the next one.
#[derive(Default)]
pub struct Cache {
    pub(super) seen: Seen,
    /// The last resolution's tables and diagnostics, when it was made for
    /// the next edit.
    pub(super) kept: Option<Kept>,
    /// Whether the last resolution moved the one before it with an edit
    /// rather than resolving the app again.
    pub patched: bool,
    /// The bodies the last resolution checked: those an edit touched when
    /// it was patched, every one when it was not.
    pub checked: usize,
    /// What an earlier resolution kept, to be freed once the editor has
    /// its answer ([`Cache::retire`]): freeing it on another thread while
    /// resolving takes a core from the resolution.
    retired: crate::retire::Retired<Kept>,
}

impl Cache {
    /// Starts a resolution: forgets how the last one went, and gives what
    /// it saw, to find what changed since (`Seen::begin`).
    pub(super) fn start(&mut self) -> &mut Seen {
        self.patched = false;
        self.checked = 0;
        &mut self.seen
    }

    /// Keeps what a fresh resolution that checked `checked` bodies leaves
    /// for the next edit (the last one's is freed on another thread).
    pub(super) fn keep(&mut self, kept: Kept, checked: usize) {
        self.checked = checked;
        if let Some(last) = self.kept.replace(kept) {
            self.set_aside(last);
        }
    }

    /// Keeps `kept` to be freed by [`Cache::retire`].
    pub(super) fn set_aside(&mut self, kept: Kept) {
        self.retired.keep(kept);
    }

    /// Frees, on another thread, what the last resolutions set aside.
    pub fn retire(&mut self) {
        self.retired.free();
    }
}

/// What a resolution keeps for the next edit: its tables without their
/// borrows of the syntax trees, where each action, test and fixture was
/// declared, what each body's check depended on, and its diagnostics in
/// the order a resolution gives them.
pub(crate) struct Kept {
    units: Vec<UnitInfo>,
    actions: IndexVec<ActionId, ActionSig<'static>>,
    functions: IndexVec<FnId, FnSig<'static>>,
    op_sigs: IndexVec<OpId, OpSig>,
    /// Each action's file and index among its file's items (a route's
    /// inline action: the route's).
    at: IndexVec<ActionId, Option<(FileId, u32)>>,
    /// The fixtures and tests resolved, by file and index, in order.
    tests_at: Vec<(FileId, u32)>,
    jobs: Vec<BodyJob>,
    bodies: Vec<BodyFacts>,
    /// The diagnostics before the bodies', those of the entry points after
    /// them, and the tests'.
    diags: Diags,
}

/// A resolution's diagnostics around its bodies'.
#[derive(Default)]
pub(super) struct Diags {
    pub head: Vec<Diagnostic>,
    pub entries: Vec<Diagnostic>,
    pub tests: Vec<Diagnostic>,
}

/// A body, in the order bodies are checked (`drive.rs`).
#[derive(Clone, Copy)]
pub(super) enum BodyJob {
    Action(ActionId),
    /// A route's inline action.
    Route(ActionId),
    Function(FnId),
}

/// Something for some of the action bodies and function bodies, by id.
pub(super) struct ByBody<T> {
    pub actions: IndexVec<ActionId, Option<T>>,
    pub functions: IndexVec<FnId, Option<T>>,
}

impl<T> ByBody<T> {
    /// Nothing for any of `actions` actions and `functions` functions.
    pub fn new(actions: usize, functions: usize) -> Self {
        ByBody {
            actions: (0..actions).map(|_| None).collect(),
            functions: (0..functions).map(|_| None).collect(),
        }
    }

    /// How many bodies it holds something for.
    pub fn count(&self) -> usize {
        let actions = self.actions.iter().filter(|a| a.is_some()).count();
        actions + self.functions.iter().filter(|f| f.is_some()).count()
    }
}

/// What checking a body depended on: its file, the other files its
/// results point into, and the diagnostics it gave.
pub(super) struct BodyFacts {
    file: FileId,
    foreign: Box<[FileId]>,
    diags: Vec<Diagnostic>,
}

impl BodyFacts {
    /// The facts of a body in `file` whose results are `results` (its
    /// effect tree, its code, a route action's `fails`).
    pub fn new(file: FileId, results: &mut dyn Spans, mut diags: Vec<Diagnostic>) -> BodyFacts {
        let mut foreign: Vec<FileId> = Vec::new();
        let mut note = |s: &mut Span| {
            if s.file != file {
                foreign.push(s.file);
            }
        };
        results.spans_mut(&mut note);
        diags.spans_mut(&mut note);
        foreign.sort_unstable();
        foreign.dedup();
        BodyFacts {
            file,
            foreign: foreign.into(),
            diags,
        }
    }

    /// Whether the body is outside the `changed` files (in order), points
    /// into none of them and gave no diagnostic.
    pub fn untouched(&self, changed: &[FileId]) -> bool {
        let inside = |file: &FileId| changed.binary_search(file).is_ok();
        self.diags.is_empty() && !inside(&self.file) && !self.foreign.iter().any(inside)
    }

    /// Whether the body is in a file the edit changed, or points into one.
    fn touched(&self, moves: &Moves) -> bool {
        moves.touches(self.file) || self.foreign.iter().any(|f| moves.touches(*f))
    }
}

impl Kept {
    /// The files where its entry points gave a diagnostic, in order.
    pub fn entry_diagnostic_files(&self) -> Vec<FileId> {
        let mut files: Vec<FileId> = self.diags.entries.iter().map(|d| d.span.file).collect();
        files.sort_unstable();
        files.dedup();
        files
    }

    /// Its action and function bodies' facts, by id, taken out of it.
    pub fn body_facts(&mut self) -> ByBody<BodyFacts> {
        let mut out = ByBody::new(self.actions.len(), self.functions.len());
        let bodies = std::mem::take(&mut self.bodies);
        for (job, facts) in self.jobs.iter().zip(bodies) {
            let slot = match job {
                BodyJob::Action(id) => out.actions.get_mut(*id),
                BodyJob::Function(id) => out.functions.get_mut(*id),
                BodyJob::Route(_) => None,
            };
            if let Some(slot) = slot {
                *slot = Some(facts);
            }
        }
        out
    }

    /// What `b`, done resolving, leaves for the next edit: its tables
    /// (moved out), its bodies' facts and its diagnostics.
    pub fn new(b: &mut Builder<'_>, bodies: Vec<BodyFacts>, diags: Diags) -> Kept {
        Kept {
            units: std::mem::take(&mut b.t.units),
            actions: detach_actions(std::mem::take(&mut b.t.actions)),
            functions: detach_functions(std::mem::take(&mut b.t.functions)),
            op_sigs: std::mem::take(&mut b.t.op_sigs),
            at: std::mem::take(&mut b.at),
            tests_at: std::mem::take(&mut b.tests_at),
            jobs: std::mem::take(&mut b.jobs),
            bodies,
            diags,
        }
    }
}

/// The tables' signatures without their declarations, which belong to
/// this resolution's syntax trees. The vector is rewritten in place.
fn detach_actions(
    sigs: IndexVec<ActionId, ActionSig<'_>>,
) -> IndexVec<ActionId, ActionSig<'static>> {
    sigs.into_iter()
        .map(|s| ActionSig {
            unit: s.unit,
            decl: None,
            params: s.params,
            ret: s.ret,
            fails: s.fails,
            fails_unknown: s.fails_unknown,
        })
        .collect()
}

fn detach_functions(sigs: IndexVec<FnId, FnSig<'_>>) -> IndexVec<FnId, FnSig<'static>> {
    sigs.into_iter()
        .map(|s| FnSig {
            unit: s.unit,
            decl: None,
            params: s.params,
            ret: s.ret,
        })
        .collect()
}

/// A body to check again: its place among the bodies and what it is.
enum Recheck<'a> {
    Action(usize, ActionId, &'a ast::ActionDecl),
    Route(usize, ActionId, &'a ast::RouteDecl),
}

impl Recheck<'_> {
    fn job(&self) -> usize {
        match self {
            Recheck::Action(j, ..) | Recheck::Route(j, ..) => *j,
        }
    }
}

/// The fixtures and tests to resolve again, in order (`None`: keep them).
type Tests<'a> = Option<(Vec<&'a ast::FixtureDecl>, Vec<&'a ast::TestDecl>)>;

/// Resolves an edit that keeps the context from the last resolution
/// (`previous`, with what `cache` kept of it), or gives `None` (having
/// changed nothing) when it cannot be followed exactly.
pub(super) fn run(
    project: &LoadedProject,
    asts: &[SourceFileAst],
    diagnostics: &mut Vec<Diagnostic>,
    (cache, previous): (&mut Cache, Option<&mut Program>),
    edit: &Edit,
    syntax_files: &HashSet<FileId>,
) -> Option<Program> {
    let previous = previous.filter(|_| edit.same_context)?;
    let kept = cache.kept.as_ref()?;
    let by_file = by_file(project, asts);
    if !followed(edit, &by_file) {
        cov_mark::hit!(patch_refuses_a_recovered_file);
        return None;
    }
    let changes: Vec<Change<'_>> = edit
        .replaced
        .iter()
        .map(|old| {
            Some(Change {
                file: old.file,
                old: (&old.text, &old.bodies),
                new: (
                    &project.files.get(old.file).text,
                    cache.seen.bodies_of(old.file)?,
                ),
            })
        })
        .collect::<Option<_>>()?;
    let mut moves = Moves::new(&changes)?;
    let recheck = rechecks(kept, previous, &moves, &by_file)?;
    let tests = tests_again(kept, &moves, &by_file)?;
    let skip: HashSet<usize> = recheck.iter().map(Recheck::job).collect();
    let mut kept = cache.kept.take()?;
    // Every span must have a place before anything moves.
    move_all(previous, &mut kept, &mut moves, (&skip, tests.is_some()));
    if !moves.exact {
        cov_mark::hit!(patch_finds_a_span_without_a_place);
        cache.kept = Some(kept);
        return None;
    }
    moves.apply = true;
    move_all(previous, &mut kept, &mut moves, (&skip, tests.is_some()));
    let prog = std::mem::take(previous);
    cov_mark::hit!(patch_moves_the_last_resolution);
    cache.patched = true;
    cache.checked = recheck.len();
    let (kept, prog) = finish(project, (kept, prog), syntax_files, &recheck, tests);
    diagnostics.extend(all_diags(&kept).cloned());
    cache.kept = Some(kept);
    let mut prog = prog;
    super::mark_package_errors(project, &mut prog, diagnostics);
    Some(prog)
}

/// Each file's syntax tree, by file id.
fn by_file<'a>(
    project: &LoadedProject,
    asts: &'a [SourceFileAst],
) -> Vec<Option<&'a SourceFileAst>> {
    let mut by_file: Vec<Option<&SourceFileAst>> = vec![None; project.files.len()];
    for ast in asts {
        if let Some(slot) = by_file.get_mut(ast.file.0 as usize) {
            *slot = Some(ast);
        }
    }
    by_file
}

/// Whether this path follows every changed file: one with a syntax tree
/// without errors (a recovered tree may hold what no locator finds).
fn followed(edit: &Edit, by_file: &[Option<&SourceFileAst>]) -> bool {
    edit.replaced.iter().all(|r| {
        let Some(Some(ast)) = by_file.get(r.file.0 as usize) else {
            return false;
        };
        !ast.items.iter().any(|item| matches!(item, Item::Error(_)))
    })
}

/// The item at `at` of the syntax trees.
fn item_at<'a>(
    by_file: &[Option<&'a SourceFileAst>],
    (file, index): (FileId, u32),
) -> Option<&'a Item> {
    by_file
        .get(file.0 as usize)?
        .as_ref()?
        .items
        .get(index as usize)
}

/// The bodies to check again: those of the changed files and those whose
/// results point into them, with their declarations. `None` when a
/// declaration is not where the locators say.
fn rechecks<'a>(
    kept: &Kept,
    previous: &Program,
    moves: &Moves,
    by_file: &[Option<&'a SourceFileAst>],
) -> Option<Vec<Recheck<'a>>> {
    let mut out = Vec::new();
    for (j, (job, facts)) in kept.jobs.iter().zip(&kept.bodies).enumerate() {
        if !facts.touched(moves) {
            continue;
        }
        match job {
            BodyJob::Action(id) => {
                let Item::Action(decl) = item_at(by_file, (*kept.at.get(*id)?)?)? else {
                    return None;
                };
                if decl.name.name != previous.actions.get(*id)?.name {
                    return None;
                }
                out.push(Recheck::Action(j, *id, decl));
            }
            BodyJob::Route(id) => {
                let Item::Route(route) = item_at(by_file, (*kept.at.get(*id)?)?)? else {
                    return None;
                };
                cov_mark::hit!(patch_rechecks_a_route_action);
                out.push(Recheck::Route(j, *id, route));
            }
            // Its results are moved like the rest: a function's body is
            // part of the context, and its code is not built here.
            BodyJob::Function(_) => {}
        }
    }
    (kept.jobs.len() == kept.bodies.len()).then_some(out)
}

/// The fixtures and tests to resolve again, when a changed file holds one
/// (their syntax is unchanged, but its spans moved); `None` when one is
/// not where the locators say.
fn tests_again<'a>(
    kept: &Kept,
    moves: &Moves,
    by_file: &[Option<&'a SourceFileAst>],
) -> Option<Tests<'a>> {
    if !kept.tests_at.iter().any(|(file, _)| moves.touches(*file)) {
        return Some(None);
    }
    cov_mark::hit!(patch_resolves_the_tests_again);
    let (mut fixtures, mut tests) = (Vec::new(), Vec::new());
    for at in &kept.tests_at {
        match item_at(by_file, *at)? {
            Item::Fixture(f) => fixtures.push(f),
            Item::Test(t) => tests.push(t),
            _ => return None,
        }
    }
    Some(Some((fixtures, tests)))
}

/// Moves (or, in the first pass, looks at) every span the last resolution
/// left outside what is checked again: the bodies at `skip`, and the
/// tests' diagnostics when `tests_again`.
fn move_all(
    previous: &mut Program,
    kept: &mut Kept,
    moves: &mut Moves,
    (skip, tests_again): (&HashSet<usize>, bool),
) {
    moves.program(previous);
    moves.units(&mut kept.units);
    // A signature's spans are in its declaration's file.
    for (sig, action) in kept.actions.iter_mut().zip(previous.actions.iter()) {
        if moves.touches(action.span.file) {
            moves.shared(&mut sig.params);
        }
    }
    for (sig, f) in kept.functions.iter_mut().zip(previous.functions.iter()) {
        if moves.touches(f.span.file) {
            moves.shared(&mut sig.params);
        }
    }
    moves.diagnostics(&mut kept.diags.head);
    moves.diagnostics(&mut kept.diags.entries);
    if !tests_again {
        moves.diagnostics(&mut kept.diags.tests);
    }
    for (j, facts) in kept.bodies.iter_mut().enumerate() {
        if !skip.contains(&j) && facts.touched(moves) {
            moves.diagnostics(&mut facts.diags);
        }
    }
}

/// Every diagnostic of `kept`, in the order a resolution gives them.
fn all_diags(kept: &Kept) -> impl Iterator<Item = &Diagnostic> {
    let d = &kept.diags;
    d.head
        .iter()
        .chain(kept.bodies.iter().flat_map(|b| b.diags.iter()))
        .chain(&d.entries)
        .chain(&d.tests)
}

/// Checks the bodies (and the tests) again against the kept tables, and
/// gives what is kept for the next edit with the program.
fn finish(
    project: &LoadedProject,
    (mut kept, prog): (Kept, Program),
    syntax_files: &HashSet<FileId>,
    recheck: &[Recheck<'_>],
    tests: Tests<'_>,
) -> (Kept, Program) {
    let mut t = Tables::kept(project, prog, &mut kept, syntax_files.clone());
    let done = drive::par_resolve(&t, recheck, |r, job| match job {
        Recheck::Action(_, id, decl) => {
            let (block, code, reads) = r.action_body(*id, decl);
            (block, code, reads, None)
        }
        Recheck::Route(_, id, route) => match r.route_action_body(route, *id) {
            Some(b) => (b.block, b.code, b.reads, Some(b.fails)),
            None => Default::default(),
        },
    });
    for (job, ((mut block, mut code, reads, mut fails), diags)) in recheck.iter().zip(done) {
        let (Recheck::Action(j, id, _) | Recheck::Route(j, id, _)) = *job;
        let file = t.prog.actions[id].span.file;
        if let Some(slot) = kept.bodies.get_mut(j) {
            let mut results = ((&mut block, &mut code), &mut fails);
            *slot = BodyFacts::new(file, &mut results, diags);
        }
        let action = &mut t.prog.actions[id];
        action.body = block;
        action.revision = ir::Revision::fresh();
        action.code = code;
        action.reads = reads;
        if let Some(fails) = fails {
            action.fails = fails;
        }
    }
    if let Some((fixtures, tests)) = tests {
        t.fixture_decls = fixtures;
        t.test_decls = tests;
        let mut diags = Vec::new();
        t.resolve_tests(&mut diags);
        kept.diags.tests = diags;
    }
    let mut prog = std::mem::take(&mut t.prog);
    prog.types = std::mem::take(&mut t.types);
    kept.units = std::mem::take(&mut t.units);
    kept.actions = detach_actions(std::mem::take(&mut t.actions));
    kept.functions = detach_functions(std::mem::take(&mut t.functions));
    kept.op_sigs = std::mem::take(&mut t.op_sigs);
    (kept, prog)
}

impl<'a> Tables<'a> {
    /// The tables of the last resolution, for `prog`: its declarations
    /// without syntax trees (no body but the ones checked again, whose
    /// declarations are passed in, is read from them).
    fn kept(
        project: &'a LoadedProject,
        mut prog: Program,
        kept: &mut Kept,
        syntax_files: HashSet<FileId>,
    ) -> Tables<'a> {
        let types = std::mem::take(&mut prog.types);
        let mut t = Tables {
            project,
            prog,
            units: std::mem::take(&mut kept.units),
            types,
            actions: std::mem::take(&mut kept.actions),
            functions: std::mem::take(&mut kept.functions),
            op_sigs: std::mem::take(&mut kept.op_sigs),
            unit_asts: Vec::new(),
            application: None,
            route_actions: Vec::new(),
            route_action_of: Default::default(),
            route_path_of: Default::default(),
            syntax_files,
            code: false,
            suggest_memo: Default::default(),
            test_owner: ir::Owner::App,
            fixture_decls: Vec::new(),
            test_decls: Vec::new(),
            unresolved_base: Default::default(),
        };
        t.test_owner = t.tested_owner();
        t
    }
}
