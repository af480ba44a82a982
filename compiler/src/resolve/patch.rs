//! An edit that keeps the context, resolved at the cost of the edit.
//!
//! In the same context (`reuse.rs`) every declaration means what it meant:
//! the tables, headers, type definitions and entry points of the last
//! resolution hold, with the spans of the edited files moved
//! (`relocate.rs`). So the last program, tables and diagnostics are kept
//! whole; the spans in the changed files are moved, and only the action
//! bodies of those files (and the bodies whose results point into them)
//! are checked again. An edit this path cannot follow exactly (a span with
//! no certain place, a changed test or fixture, a route's inline action,
//! an item the locators do not find) goes the full way, which gives the
//! same result at the cost of the app. `resolve_incremental` compares
//! both with a fresh resolution after edits to every fixture.

use std::collections::HashSet;
use std::ops::Range;

use crate::ast::{self, Item, SourceFileAst};
use crate::diag::Diagnostic;
use crate::index::IndexVec;
use crate::ir::{self, ActionId, FnId, OpId, Program};
use crate::load::LoadedProject;
use crate::span::FileId;

use super::relocate::{Change, Moves};
use super::reuse::{block_spans, Memo, Reuse};
use super::tables::{ActionSig, FnSig, OpSig, UnitInfo};
use super::{drive, Builder, Tables};

/// What a resolution keeps for the next edit: its tables without their
/// borrows of the syntax trees, where each action was declared, the order
/// its bodies were checked in, and its diagnostics.
pub(crate) struct Kept {
    units: Vec<UnitInfo>,
    actions: IndexVec<ActionId, ActionSig<'static>>,
    functions: IndexVec<FnId, FnSig<'static>>,
    op_sigs: IndexVec<OpId, OpSig>,
    /// Each action's file and index among its file's items (`None`: a
    /// route's inline action).
    at: IndexVec<ActionId, Option<(FileId, u32)>>,
    jobs: Vec<BodyJob>,
    diags: Vec<Diagnostic>,
    /// Where the bodies' diagnostics are in `diags`.
    bodies: Range<usize>,
}

/// A body, in the order bodies are checked (`drive.rs`).
#[derive(Clone, Copy)]
pub(super) enum BodyJob {
    Action(ActionId),
    Route,
    Function,
}

impl Kept {
    /// What `b`, done resolving, leaves for the next edit: its tables
    /// (moved out), `diags` and where its bodies' diagnostics are.
    pub fn new(b: &mut Builder<'_>, diags: Vec<Diagnostic>, bodies: Range<usize>) -> Kept {
        Kept {
            units: std::mem::take(&mut b.t.units),
            actions: detach_actions(std::mem::take(&mut b.t.actions)),
            functions: detach_functions(std::mem::take(&mut b.t.functions)),
            op_sigs: std::mem::take(&mut b.t.op_sigs),
            at: std::mem::take(&mut b.at),
            jobs: std::mem::take(&mut b.jobs),
            diags,
            bodies,
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

/// A body to check again: its place among the bodies, its action and
/// declaration.
type Recheck<'a> = (usize, ActionId, &'a ast::ActionDecl);

/// Resolves an edit that keeps the context from the last resolution, or
/// gives `None` (having changed nothing) when it cannot be followed
/// exactly.
pub(super) fn run(
    project: &LoadedProject,
    asts: &[SourceFileAst],
    diagnostics: &mut Vec<Diagnostic>,
    reuse: &mut Reuse<'_>,
    syntax_files: &HashSet<FileId>,
) -> Option<Program> {
    if !reuse.same_context {
        return None;
    }
    let previous = reuse.previous.as_deref()?;
    let kept = reuse.cache.kept.as_ref()?;
    let mut by_file: Vec<Option<&SourceFileAst>> = vec![None; project.files.len()];
    for ast in asts {
        if let Some(slot) = by_file.get_mut(ast.file.0 as usize) {
            *slot = Some(ast);
        }
    }
    if !followed(reuse, &by_file) {
        return None;
    }
    let changes: Vec<Change<'_>> = reuse
        .replaced
        .iter()
        .map(|old| {
            Some(Change {
                file: old.file,
                old: (&old.text, &old.bodies),
                new: (
                    &project.files.get(old.file).text,
                    reuse.cache.bodies_of(old.file)?,
                ),
            })
        })
        .collect::<Option<_>>()?;
    let mut moves = Moves::new(&changes)?;
    let recheck = rechecks(kept, reuse.cache.bodies_memos(), previous, &moves, &by_file)?;
    let skip: HashSet<usize> = recheck.iter().map(|(j, ..)| *j).collect();
    // Every span must have a place before anything moves.
    move_all(reuse, &mut moves, &skip);
    if !moves.exact {
        return None;
    }
    moves.apply = true;
    move_all(reuse, &mut moves, &skip);
    let kept = reuse.cache.kept.take()?;
    let previous = reuse.previous.as_deref_mut()?;
    let prog = std::mem::take(previous);
    Some(finish(
        project,
        diagnostics,
        reuse,
        (kept, prog),
        syntax_files,
        &recheck,
    ))
}

/// Whether this path follows every changed file: one with a syntax tree
/// and no test or fixture (their checked statements hold spans
/// everywhere) or route with an inline action (a body outside actions).
fn followed(reuse: &Reuse<'_>, by_file: &[Option<&SourceFileAst>]) -> bool {
    let inline = super::tables::words().action;
    reuse.replaced.iter().all(|r| {
        let Some(Some(ast)) = by_file.get(r.file.0 as usize) else {
            return false;
        };
        !ast.items.iter().any(|item| match item {
            Item::Test(_) | Item::Fixture(_) | Item::Error(_) => true,
            Item::Route(route) => route.settings.iter().any(|s| s.key.name == inline),
            _ => false,
        })
    })
}

/// The action bodies to check again: those of the changed files and those
/// whose results point into them, with their declarations. `None` when
/// another kind of body would need it, or a declaration is not where the
/// locators say.
fn rechecks<'a>(
    kept: &Kept,
    memos: &[Memo],
    previous: &Program,
    moves: &Moves,
    by_file: &[Option<&'a SourceFileAst>],
) -> Option<Vec<Recheck<'a>>> {
    let mut out = Vec::new();
    for (j, (job, memo)) in kept.jobs.iter().zip(memos).enumerate() {
        if !memo.touches(|f| moves.touches(f)) {
            continue;
        }
        match job {
            BodyJob::Action(id) => {
                let (file, index) = (*kept.at.get(*id)?)?;
                let item = by_file
                    .get(file.0 as usize)?
                    .as_ref()?
                    .items
                    .get(index as usize)?;
                let Item::Action(decl) = item else {
                    return None;
                };
                if decl.name.name != previous.actions.get(*id)?.name {
                    return None;
                }
                out.push((j, *id, decl));
            }
            // Its results are moved like the rest: a function's body is
            // part of the context, and its code is not built here.
            BodyJob::Function => {}
            BodyJob::Route => return None,
        }
    }
    (kept.jobs.len() == memos.len()).then_some(out)
}

/// Moves (or, in the first pass, looks at) every span the last resolution
/// left outside the bodies checked again.
fn move_all(reuse: &mut Reuse<'_>, moves: &mut Moves, skip: &HashSet<usize>) {
    let Some(previous) = reuse.previous.as_deref_mut() else {
        return;
    };
    moves.program(previous);
    let cache = &mut *reuse.cache;
    if let Some(kept) = cache.kept.as_mut() {
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
        let (before, after) = split_around(&mut kept.diags, &kept.bodies);
        moves.diagnostics(before.iter_mut().chain(after.iter_mut()));
    }
    cache.move_memos(moves, skip);
}

/// The diagnostics before and after `range`.
fn split_around<'d>(
    diags: &'d mut [Diagnostic],
    range: &Range<usize>,
) -> (&'d mut [Diagnostic], &'d mut [Diagnostic]) {
    let (before, rest) = diags.split_at_mut(range.start.min(diags.len()));
    let skip = range.end.saturating_sub(range.start).min(rest.len());
    let (_, after) = rest.split_at_mut(skip);
    (before, after)
}

/// Checks the bodies again against the kept tables, and puts the program,
/// the diagnostics and the kept state together.
fn finish(
    project: &LoadedProject,
    diagnostics: &mut Vec<Diagnostic>,
    reuse: &mut Reuse<'_>,
    (mut kept, mut prog): (Kept, Program),
    syntax_files: &HashSet<FileId>,
    recheck: &[Recheck<'_>],
) -> Program {
    let types = std::mem::take(&mut prog.types);
    let mut t = Tables::kept(project, prog, &mut kept, types, syntax_files.clone());
    let jobs: Vec<(ActionId, &ast::ActionDecl)> =
        recheck.iter().map(|(_, id, decl)| (*id, *decl)).collect();
    let done = drive::par_resolve(&t, &jobs, |r, (id, decl)| r.action_body(*id, decl));
    let memos = reuse.cache.bodies_mut();
    for ((j, id, decl), ((block, code, reads), diags)) in recheck.iter().zip(done) {
        let mut spans = Vec::new();
        block_spans(&block, &mut spans);
        if let Some(slot) = memos.get_mut(*j) {
            *slot = Memo::new(decl.span.file, &spans, &diags);
        }
        let action = &mut t.prog.actions[*id];
        action.body = block;
        action.revision = ir::Revision::fresh();
        action.code = code;
        action.reads = reads;
    }
    let mut diags: Vec<Diagnostic> = kept.diags.drain(..kept.bodies.start).collect();
    let bodies_from = diags.len();
    diags.extend(memos.iter().flat_map(|m| m.diags.iter().cloned()));
    let bodies = bodies_from..diags.len();
    let skipped = kept.bodies.end.saturating_sub(kept.bodies.start);
    diags.extend(kept.diags.drain(..).skip(skipped));
    diagnostics.extend(diags.iter().cloned());
    let mut prog = std::mem::take(&mut t.prog);
    prog.types = std::mem::take(&mut t.types);
    kept.units = std::mem::take(&mut t.units);
    kept.actions = detach_actions(std::mem::take(&mut t.actions));
    kept.functions = detach_functions(std::mem::take(&mut t.functions));
    kept.op_sigs = std::mem::take(&mut t.op_sigs);
    kept.diags = diags;
    kept.bodies = bodies;
    let cache = &mut *reuse.cache;
    cache.patched = true;
    cache.computed = recheck.len();
    cache.reused = cache.kept_results().saturating_sub(recheck.len());
    cache.kept = Some(kept);
    super::mark_package_errors(project, &mut prog, diagnostics);
    prog
}

impl<'a> Tables<'a> {
    /// The tables of the last resolution, for `prog`: its declarations
    /// without syntax trees (no body but the ones checked again, whose
    /// declarations are passed in, is read from them).
    fn kept(
        project: &'a LoadedProject,
        prog: Program,
        kept: &mut Kept,
        types: IndexVec<ir::TypeId, super::tables::TypeDef>,
        syntax_files: HashSet<FileId>,
    ) -> Tables<'a> {
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
        };
        t.test_owner = t.tested_owner();
        t
    }
}
