//! Bodies carried across an edit that changes the context.
//!
//! Such an edit (a declaration added, a header or a type changed) is
//! resolved afresh: the tables, headers, type definitions, entry points and
//! tests. Most action bodies cannot see it, though, and checking them is
//! most of a resolution's cost; such a body keeps the last resolution's
//! results (its effect tree, reads and revision) instead of being checked
//! again. A body is carried only when all of these hold:
//! - its file did not change and its results point into no file that did,
//!   and it gave no diagnostic (a file with syntax errors keeps them: they
//!   are its own text's);
//! - its action, and every action, operation, failure, entity, event and
//!   function its results hold, is declared at the same id, with the same
//!   name, in the same place by both resolutions, or anywhere within the
//!   same changed file (ids are positions: a declaration added before
//!   them moves them; one of a changed file is named in no body carried);
//! - no name written in it, and not its own action's, is one the edit may
//!   have changed ([`Names`]);
//! - no changed file declares an application, a config or a store, before
//!   or after the edit (bodies read them by `config.` and by entity), and
//!   none is a manifest (it declares operations: their facts and failures
//!   are read by every body that calls them).
//!
//! A function body is carried the same way, but that the names written in
//! it are counted with all those written outside action bodies in its
//! file (`edit.rs` reads function bodies as part of the context): none
//! may have changed. Entry points (routes, subscribers, schedules) are
//! carried alike ([`Entries`]): one of an unchanged file that gave the
//! last resolution no diagnostic, where no name written outside bodies
//! may have changed, whose action and event are the same declarations, and
//! whose types are declared in both (their ids moved to the new ones).
//!
//! Everything else is checked as in any fresh resolution, so the result is
//! the fresh one; `resolve_incremental` compares both after edits to every
//! fixture.

use rayon::prelude::*;

use crate::index::IndexVec;
use crate::intern::{Name, NameHasher};
use std::collections::HashMap;

use crate::ir::types::{Ty, TypeDef, TypeId, TypeKind};
use crate::ir::{self, ActionId, EntryKind, FnId, Node, Program, Target};
use crate::span::{FileId, Span};

use super::edit::{Edit, Replaced, Seen};
use super::patch::{BodyFacts, ByBody, Cache};

/// What the last resolution leaves a fresh one to carry bodies from.
pub(super) struct Carry<'p> {
    previous: &'p mut Program,
    /// Its bodies' facts, by action and by function.
    facts: ByBody<BodyFacts>,
    /// The changed files, in order.
    changed: Vec<FileId>,
    /// The files where the last resolution's entry points gave a
    /// diagnostic, in order.
    noisy: Vec<FileId>,
}

/// A body carried: its results and what its check depended on (a
/// function's are its reads alone).
pub(super) struct Carried {
    pub body: ir::Block,
    pub reads: ir::Reads,
    pub revision: ir::Revision,
    pub facts: BodyFacts,
}

impl<'p> Carry<'p> {
    /// What a fresh resolution after `edit` may carry from `previous` and
    /// the facts of its bodies `cache` kept (taken out of it); `None`, the
    /// cache untouched, when the files are not the same ones or a changed
    /// file holds settings (or held them).
    pub fn new(
        edit: &Edit,
        cache: &mut Cache,
        previous: Option<&'p mut Program>,
    ) -> Option<Carry<'p>> {
        let settings = |r: &Replaced| r.settings || cache.seen.settings(r.file);
        if !edit.same_files || edit.replaced.iter().any(settings) {
            return None;
        }
        let previous = previous?;
        let mut changed: Vec<FileId> = edit.replaced.iter().map(|r| r.file).collect();
        changed.sort_unstable();
        let mut kept = cache.kept.take()?;
        let facts = kept.body_facts();
        let noisy = kept.entry_diagnostic_files();
        cache.set_aside(kept);
        Some(Carry {
            previous,
            facts,
            changed,
            noisy,
        })
    }

    /// The bodies of `new` (whose action bodies start where `body_at`
    /// says) carried from the last resolution, by action and by function,
    /// and what its entry points may carry.
    pub fn bodies(
        mut self,
        new: Side<'_>,
        body_at: &(dyn Fn(ActionId) -> Option<u32> + Sync),
        seen: &Seen,
    ) -> (ByBody<Carried>, Entries<'p>) {
        let previous = &*self.previous;
        let config = previous.config.iter().map(|c| (c.name, &c.ty)).collect();
        let old = Side::new(previous, previous.types.as_slice(), config);
        let names = Names::of(&self.changed, &old, &new);
        let same = Same::new(self.previous, new.program, &self.changed);
        if same.every {
            cov_mark::hit!(carry_walks_no_body);
        }
        let keep = self.judge(new.program, (&names, &same), body_at, seen);
        let entries = std::mem::take(&mut self.previous.entries);
        let written = self.written_clean(&names, seen);
        let functions = self.judge_functions(new.program, &same, &written);
        let bodies = self.take((&keep, &functions));
        let clean = self.quiet(written);
        let by_span = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.span, i))
            .collect();
        let entries = Entries {
            previous: self.previous,
            old: entries.into_iter().map(Some).collect(),
            by_span,
            same,
            clean,
        };
        (bodies, entries)
    }

    /// Whether each action's body of `new` may be carried, judged on
    /// every thread.
    fn judge(
        &self,
        new: &Program,
        (names, same): (&Names, &Same),
        body_at: &(dyn Fn(ActionId) -> Option<u32> + Sync),
        seen: &Seen,
    ) -> Vec<bool> {
        let written_unchanged = |id: ActionId, file: FileId| {
            body_at(id)
                .and_then(|start| seen.body_names(file, start))
                .is_some_and(|written| !written.iter().any(|n| names.holds(*n)))
        };
        new.actions
            .as_slice()
            .par_iter()
            .enumerate()
            .map(|(i, action)| {
                let id = ActionId(i as u32);
                let Some(Some(facts)) = self.facts.actions.get(id) else {
                    return false;
                };
                same.action(id)
                    && facts.untouched(&self.changed)
                    && !names.holds(action.name)
                    && written_unchanged(id, action.span.file)
                    && self
                        .previous
                        .actions
                        .get(id)
                        .is_some_and(|old| same.results(old))
            })
            .collect()
    }

    /// Whether each function's body of `new` may be carried: its file's
    /// names are `written` clean, it gave no diagnostic and points into no
    /// changed file, and its id and reads name the same declarations.
    fn judge_functions(&self, new: &Program, same: &Same, written: &[bool]) -> Vec<bool> {
        let facts = &self.facts.functions;
        let old = &self.previous.functions;
        let carried = |(i, f): (usize, &ir::code::Function)| {
            let id = FnId(i as u32);
            same.function(id)
                && at(written, f.span.file.0)
                && facts
                    .get(id)
                    .and_then(Option::as_ref)
                    .is_some_and(|f| f.untouched(&self.changed))
                && old.get(id).is_some_and(|old| same.reads(&old.reads))
        };
        new.functions.iter().enumerate().map(carried).collect()
    }

    /// Takes the bodies to keep out of the last program: the actions'
    /// and the functions' (their reads alone) that `keep` says.
    fn take(&mut self, (actions, functions): (&[bool], &[bool])) -> ByBody<Carried> {
        let old = &mut *self.previous;
        let facts = &mut self.facts;
        let actions = take_each(
            actions,
            old.actions.as_vec_mut(),
            facts.actions.as_vec_mut(),
            |a, facts| {
                cov_mark::hit!(carry_keeps_a_body);
                Carried {
                    body: std::mem::take(&mut a.body),
                    reads: std::mem::take(&mut a.reads),
                    revision: a.revision,
                    facts,
                }
            },
        );
        let functions = take_each(
            functions,
            old.functions.as_vec_mut(),
            facts.functions.as_vec_mut(),
            |f, facts| {
                cov_mark::hit!(carry_keeps_a_function);
                Carried {
                    body: ir::Block::default(),
                    reads: std::mem::take(&mut f.reads),
                    revision: ir::Revision::UNKNOWN,
                    facts,
                }
            },
        );
        ByBody { actions, functions }
    }

    /// Whether each file did not change and no name written outside its
    /// action bodies is one `names` holds, by file.
    fn written_clean(&self, names: &Names, seen: &Seen) -> Vec<bool> {
        let clean = |file: FileId| {
            self.changed.binary_search(&file).is_err()
                && seen
                    .outside_names(file)
                    .is_some_and(|w| !w.iter().any(|n| names.holds(*n)))
        };
        (0..seen.files() as u32).map(|f| clean(FileId(f))).collect()
    }

    /// Of the `written` clean files, those where the last resolution's
    /// entry points gave no diagnostic.
    fn quiet(&self, mut written: Vec<bool>) -> Vec<bool> {
        for file in &self.noisy {
            if let Some(slot) = written.get_mut(file.0 as usize) {
                *slot = false;
            }
        }
        written
    }
}

/// The last resolution's entry points, carried where an edit that changes
/// the context cannot reach them, in a resolution that lowers no code
/// (`run:` arguments as code hold type ids). An entry point is carried
/// when its file did not change, no entry point of its file gave a
/// diagnostic, no name written in that file outside action bodies is one
/// the edit may have changed ([`Names`]), its action and event are the
/// same declarations in both resolutions, and every type it holds is
/// declared in both (its id is moved to the new one).
pub(super) struct Entries<'p> {
    previous: &'p Program,
    /// The last entry points, each taken when carried.
    old: Vec<Option<ir::Entry>>,
    /// Where each is declared.
    by_span: HashMap<Span, usize, NameHasher>,
    same: Same,
    /// Whether a file's entry points may be carried, by file.
    clean: Vec<bool>,
}

impl Entries<'_> {
    /// Which of the last resolution's entry points, declared at `span`,
    /// may be carried (its types still to be moved, [`Entries::retype`]).
    pub fn find(&self, span: Span) -> Option<usize> {
        if !at(&self.clean, span.file.0) {
            return None;
        }
        let i = *self.by_span.get(&span)?;
        let old = self.old.get(i)?.as_ref()?;
        let event = match old.kind {
            EntryKind::Subscriber { event } => event.is_some_and(|e| at(&self.same.events, e.0)),
            _ => true,
        };
        (event && old.action.is_some_and(|a| self.same.action(a))).then_some(i)
    }

    /// Takes out the entry point [`Entries::find`] gave.
    pub fn take(&mut self, i: usize) -> Option<ir::Entry> {
        self.old.get_mut(i)?.take()
    }

    /// Moves every type `entry` holds to its id in this resolution:
    /// `new_type` gives a type's id there, `path_type` is its type of the
    /// route's path values; false when one has none.
    pub fn retype(
        &self,
        entry: &mut ir::Entry,
        new_type: &dyn Fn(&TypeDef) -> Option<TypeId>,
        path_type: Option<TypeId>,
    ) -> bool {
        let types = &self.previous.types;
        let to = |id: TypeId| new_type(types.get(id)?);
        let EntryKind::Route {
            input,
            output,
            path_values,
            ..
        } = &mut entry.kind
        else {
            return true;
        };
        let moved = |ty: &mut Option<Ty>| ty.as_mut().is_none_or(|ty| remap(ty, &to));
        if !moved(input) || !moved(output) {
            return false;
        }
        match (path_values.as_mut(), path_type) {
            (Some(Ty::Named(id)), Some(new)) => *id = new,
            (None, None) => {}
            _ => return false,
        }
        true
    }
}

/// Takes out of `old`, as `take` says, each body to `keep` that has
/// `facts`.
fn take_each<I, T>(
    keep: &[bool],
    old: &mut [T],
    facts: &mut [Option<BodyFacts>],
    take: impl Fn(&mut T, BodyFacts) -> Carried,
) -> IndexVec<I, Option<Carried>> {
    let each = keep.iter().zip(old).zip(facts);
    each.map(|((keep, old), facts)| Some(take(old, facts.take().filter(|_| *keep)?)))
        .collect()
}

/// Moves the declared type `ty` names to its id in `to`; false when it
/// has none there.
fn remap(ty: &mut Ty, to: &dyn Fn(TypeId) -> Option<TypeId>) -> bool {
    ty.declared_mut()
        .is_none_or(|id| to(*id).map(|new| *id = new).is_some())
}

/// One resolution's declarations: its program, its types and its config
/// entries (a fresh resolution fills the program's at its end).
pub(super) struct Side<'s> {
    pub program: &'s Program,
    pub types: &'s [TypeDef],
    /// Each config entry's name and type.
    pub config: Vec<(Name, &'s Ty)>,
    /// Each failure's name as a body writes it, by id.
    pub failures: Vec<Name>,
}

impl<'s> Side<'s> {
    pub fn new(program: &'s Program, types: &'s [TypeDef], config: Vec<(Name, &'s Ty)>) -> Self {
        let failures = program
            .failures
            .iter()
            .map(|f| simple(&f.qualified))
            .collect();
        Side {
            program,
            types,
            config,
            failures,
        }
    }
}

/// The names an edit may have changed: those declared in a changed file,
/// before or after it, and, in either resolution, every declaration whose
/// definition or header mentions one of them, however indirectly.
struct Names {
    held: NameSet,
}

impl Names {
    /// One pass over each resolution settles them: a declaration outside
    /// the changed files reads the same in both, so what the second pass
    /// adds through it, the same declaration of the second resolution
    /// already gave; the first pass sees nothing the second adds.
    ///
    /// What the old side's reach alone adds is a declaration whose
    /// mention no longer resolves (an error type now), or names a failure,
    /// action or entity gone from the new side (then `Same` refuses every
    /// body holding it). No test finds a body it changes: bodies hold no
    /// type ids and error types absorb every check. It is kept so that a
    /// body holding types one day stays correct without a new rule.
    fn of(changed: &[FileId], old: &Side<'_>, new: &Side<'_>) -> Names {
        let mut names = Names {
            held: NameSet::default(),
        };
        for side in [old, new] {
            names.declared_in(changed, side);
        }
        names.reach(old);
        names.reach(new);
        names
    }

    fn holds(&self, name: Name) -> bool {
        self.held.contains(name)
    }

    fn declared_in(&mut self, changed: &[FileId], side: &Side<'_>) {
        let (p, types) = (side.program, side.types);
        let inside = |file: FileId| changed.binary_search(&file).is_ok();
        let types = types
            .iter()
            .filter(|t| t.span.is_some_and(|s| inside(s.file)));
        self.held.extend(types.map(|t| t.name));
        let actions = p.actions.iter().filter(|a| inside(a.span.file));
        self.held.extend(actions.map(|a| a.name));
        let functions = p.functions.iter().filter(|f| inside(f.span.file));
        self.held.extend(functions.map(|f| f.name));
        for (f, name) in p.failures.iter().zip(&side.failures) {
            if f.span.is_some_and(|s| inside(s.file)) {
                self.held.insert(*name);
            }
        }
    }

    /// Adds the declarations of one resolution that mention a name held.
    fn reach(&mut self, side: &Side<'_>) {
        let (p, types) = (side.program, side.types);
        let dirty = self.dirty_types(types);
        for (t, _) in types.iter().zip(&dirty).filter(|(_, d)| **d) {
            self.held.insert(t.name);
        }
        for (f, name) in p.failures.iter().zip(&side.failures) {
            if f.fields.iter().any(|field| mentions(&field.ty, &dirty)) {
                self.held.insert(*name);
            }
        }
        let failed: Vec<bool> = side.failures.iter().map(|n| self.holds(*n)).collect();
        let failed = |id: &ir::FailureId| at(&failed, id.0);
        // The largest list, on every thread.
        let mut reached: Vec<Name> = p
            .actions
            .as_slice()
            .par_iter()
            .filter(|a| {
                a.params.iter().any(|(_, ty)| mentions(ty, &dirty))
                    || mentions(&a.ret, &dirty)
                    || a.fails.iter().any(|(id, _)| failed(id))
            })
            .map(|a| a.name)
            .collect();
        for f in p.functions.iter() {
            if f.params.iter().any(|(_, ty)| mentions(ty, &dirty)) || mentions(&f.ret, &dirty) {
                reached.push(f.name);
            }
        }
        for op in p.operations.iter() {
            let types = mentions(&op.request, &dirty) || mentions(&op.answer, &dirty);
            if types || op.failures.iter().any(failed) {
                reached.push(simple(&op.name));
            }
        }
        let config = side.config.iter().filter(|(_, ty)| mentions(ty, &dirty));
        reached.extend(config.map(|(name, _)| *name));
        self.held.extend(reached);
    }

    /// The types whose name is held or whose definition mentions such a
    /// type, however indirectly: from the held ones, along who mentions
    /// whom, each edge once.
    fn dirty_types(&self, types: &[TypeDef]) -> Vec<bool> {
        let mut dirty: Vec<bool> = types.iter().map(|t| self.holds(t.name)).collect();
        // Each type's users as one run of `users`: counted, then filled.
        let mut start = vec![0u32; types.len() + 1];
        each_mention(types, &mut |m, by| match start.get_mut(m + 1) {
            Some(count) => *count += 1,
            // A type the table does not hold: taken as changed.
            None => dirty[by] = true,
        });
        let mut total = 0;
        for count in &mut start {
            total += *count;
            *count = total;
        }
        let mut users = vec![0u32; start.last().map_or(0, |n| *n as usize)];
        let mut next = start[..types.len()].to_vec();
        each_mention(types, &mut |m, by| {
            if let Some(at) = next.get_mut(m) {
                users[*at as usize] = by as u32;
                *at += 1;
            }
        });
        let mut work: Vec<usize> = (0..types.len()).filter(|t| dirty[*t]).collect();
        while let Some(t) = work.pop() {
            let run = start[t] as usize..start[t + 1] as usize;
            for by in users[run].iter().map(|by| *by as usize) {
                if !std::mem::replace(&mut dirty[by], true) {
                    work.push(by);
                }
            }
        }
        dirty
    }
}

/// Calls `f` with (mentioned, by) for each type a type's definition
/// mentions.
fn each_mention(types: &[TypeDef], f: &mut dyn FnMut(usize, usize)) {
    for (by, t) in types.iter().enumerate() {
        match &t.kind {
            TypeKind::Alias(ty) => ty.declared().into_iter().for_each(|m| f(m.0 as usize, by)),
            TypeKind::Record(fields) => fields
                .iter()
                .filter_map(|field| field.ty.declared())
                .for_each(|m| f(m.0 as usize, by)),
            TypeKind::Pending | TypeKind::Enum(_) => {}
        }
    }
}

/// A set of names, a bit per interned name: the judge asks it about
/// every name written in every body.
#[derive(Default)]
struct NameSet {
    bits: Vec<u64>,
}

impl NameSet {
    fn insert(&mut self, name: Name) {
        let (word, bit) = (name.index() / 64, 1u64 << (name.index() % 64));
        if self.bits.len() <= word {
            self.bits.resize(word + 1, 0);
        }
        if let Some(w) = self.bits.get_mut(word) {
            *w |= bit;
        }
    }

    fn contains(&self, name: Name) -> bool {
        let (word, bit) = (name.index() / 64, 1u64 << (name.index() % 64));
        self.bits.get(word).is_some_and(|w| w & bit != 0)
    }
}

impl Extend<Name> for NameSet {
    fn extend<I: IntoIterator<Item = Name>>(&mut self, names: I) {
        names.into_iter().for_each(|n| self.insert(n));
    }
}

/// The last segment of a qualified name: what a body writes.
fn simple(qualified: &str) -> Name {
    Name::new(qualified.rsplit('.').next().unwrap_or(qualified))
}

/// Whether `ty` names a type `dirty` marks (or one it does not hold).
fn mentions(ty: &Ty, dirty: &[bool]) -> bool {
    ty.declared()
        .is_some_and(|t| dirty.get(t.0 as usize).copied().unwrap_or(true))
}

/// Which ids name the same declaration in both resolutions.
struct Same {
    /// Whether every id of the last resolution does (an edit that moves
    /// no action, operation, failure, entity, event or function): then no
    /// body need be walked.
    every: bool,
    actions: Vec<bool>,
    operations: Vec<bool>,
    failures: Vec<bool>,
    entities: Vec<bool>,
    events: Vec<bool>,
    functions: Vec<bool>,
}

impl Same {
    /// A declaration of a `changed` file is the same wherever it moved
    /// within that file: every name declared there is held ([`Names`]),
    /// so no carried body writes it.
    fn new(old: &Program, new: &Program, changed: &[FileId]) -> Same {
        fn zip<T>(a: &[T], b: &[T], same: impl Fn(&T, &T) -> bool) -> Vec<bool> {
            a.iter().zip(b).map(|(x, y)| same(x, y)).collect()
        }
        let place = |a: Span, b: Span| {
            a == b || (a.file == b.file && changed.binary_search(&a.file).is_ok())
        };
        let mut same = Same {
            every: false,
            actions: zip(old.actions.as_slice(), new.actions.as_slice(), |a, b| {
                (a.name, a.owner, a.public) == (b.name, b.owner, b.public) && place(a.span, b.span)
            }),
            operations: zip(
                old.operations.as_slice(),
                new.operations.as_slice(),
                |a, b| a.qualified == b.qualified,
            ),
            failures: zip(old.failures.as_slice(), new.failures.as_slice(), |a, b| {
                let placed = a
                    .span
                    .zip(b.span)
                    .map_or(a.span == b.span, |(a, b)| place(a, b));
                a.owner == b.owner && placed && a.qualified == b.qualified
            }),
            entities: zip(old.entities.as_slice(), new.entities.as_slice(), |a, b| {
                a.owner == b.owner && place(a.span, b.span) && a.qualified == b.qualified
            }),
            events: zip(old.events.as_slice(), new.events.as_slice(), |a, b| {
                a.owner == b.owner && place(a.span, b.span) && a.qualified == b.qualified
            }),
            functions: zip(
                old.functions.as_slice(),
                new.functions.as_slice(),
                |a, b| a.name == b.name && place(a.span, b.span),
            ),
        };
        let all = |v: &[bool], old: usize| v.len() == old && v.iter().all(|s| *s);
        same.every = all(&same.actions, old.actions.len())
            && all(&same.operations, old.operations.len())
            && all(&same.failures, old.failures.len())
            && all(&same.entities, old.entities.len())
            && all(&same.events, old.events.len())
            && all(&same.functions, old.functions.len());
        same
    }

    fn action(&self, id: ActionId) -> bool {
        at(&self.actions, id.0)
    }

    fn function(&self, id: FnId) -> bool {
        at(&self.functions, id.0)
    }

    /// Whether every id `old`'s body results hold names the same
    /// declaration in both resolutions.
    fn results(&self, old: &ir::Action) -> bool {
        if self.every {
            return true;
        }
        let mut same = true;
        old.body.for_each_node(&mut |node| same &= self.node(node));
        same && self.reads(&old.reads)
    }

    /// Whether every id `reads` holds names the same declaration in both
    /// resolutions.
    fn reads(&self, r: &ir::Reads) -> bool {
        self.every
            || r.functions.iter().all(|f| at(&self.functions, f.0))
                && r.actions.iter().all(|a| at(&self.actions, a.0))
                && r.queries.iter().all(|(e, _)| at(&self.entities, e.0))
    }

    fn node(&self, node: &Node) -> bool {
        let failure = |id: ir::FailureId| at(&self.failures, id.0);
        match node {
            Node::Effect(e) => {
                let target = match &e.target {
                    Target::Op(id) => at(&self.operations, id.0),
                    Target::Action(id) => at(&self.actions, id.0),
                    Target::Write(w) => {
                        at(&self.entities, w.entity.0)
                            && w.failures.iter().all(|(f, _)| failure(*f))
                    }
                    Target::Check(c) => {
                        failure(c.failure) && c.query.is_none_or(|q| at(&self.entities, q.0))
                    }
                };
                let arms: &[ir::Arm] = match &e.handling {
                    ir::Handling::Match(arms) => arms,
                    _ => &[],
                };
                target
                    && arms.iter().all(|arm| {
                        let pattern = match arm.pattern {
                            ir::ArmPattern::Failure(f) => failure(f),
                            ir::ArmPattern::Success => true,
                        };
                        let end = match &arm.end {
                            ir::ArmEnd::Reject(r) => failure(r.failure),
                            _ => true,
                        };
                        pattern && end
                    })
            }
            Node::Emit(emit) => at(&self.events, emit.event.0),
            Node::Reject(r) => failure(r.failure),
            Node::Return(_) | Node::If { .. } | Node::Loop { .. } => true,
        }
    }
}

fn at(same: &[bool], index: u32) -> bool {
    same.get(index as usize).copied().unwrap_or(false)
}
