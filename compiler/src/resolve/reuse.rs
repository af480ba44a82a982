//! Reuse of checked headers, type definitions' kinds, bodies and entry
//! points between two resolutions of an edited app (the language server;
//! `jadpo check` resolves once and keeps nothing).
//!
//! Checking a body reads its own declaration and the tables: every
//! declaration's name, header and type, the manifests, and which files have
//! syntax errors. The declaration tables are rebuilt on every resolution
//! (about a third of an edit's resolution at 1M lines); what is kept is the
//! result of checking each header, kind, body and entry point.
//! A kept result is used again when
//! - the *context* is unchanged: the same files by id and path, the same
//!   tokens outside action bodies in every source (a body edit, a comment or
//!   a blank line do not change it; a new declaration, a changed header or a
//!   changed manifest do), and the same files with syntax errors; then every
//!   id the tables hand out means what it meant;
//! - the item's own file has the same text, so its own spans still hold;
//! - no other file whose spans the result holds (a related label at a
//!   declaration elsewhere, a fix editing another file) has changed.
//!
//! A file with syntax errors also counts how the parser read it (each
//! item's kind and the tokens it spans): its recovery may let a damaged
//! body swallow or drop what follows. Which files have syntax errors is
//! part of the context: checking a body there judges less.
//! `compiler/tests/resolve_incremental.rs` compares reused results against
//! fresh resolutions after edits to every fixture.

use crate::ast::{Item, SourceFileAst};
use crate::diag::Diagnostic;
use crate::index::IndexVec;
use crate::ir::{self, Block, Node, Program};
use crate::lexer;
use crate::load::LoadedProject;
use crate::span::{FileId, Span};
use std::collections::HashSet;

use super::body::Header;
use super::tables::{Ty, TypeKind};

/// A function's resolved parameters.
type Params = std::sync::Arc<[(crate::intern::Name, Ty, Span)]>;

/// What the last resolution left for the next one.
#[derive(Default)]
pub struct Cache {
    files: Vec<FileState>,
    context: Option<blake3::Hash>,
    bodies: Vec<Memo>,
    pub(super) headers: Vec<(Memo, Header)>,
    pub(super) function_headers: Vec<(Memo, (Params, Ty))>,
    /// The memos of kept definitions (the kinds of types, events and route
    /// paths, entities, failures), in item order; the definitions
    /// themselves are in the last program.
    pub(super) defs: Vec<Memo>,
    /// Each entry point's memo, and its index in the program's entries
    /// with the hash of its duplicate key (`None`: it lowered to nothing).
    entries: Vec<(Memo, Option<(u32, u64)>)>,
    /// What each route declared, in collection order.
    route_facts: Vec<RouteFact>,
    /// Each unit's number of declarations and callables.
    unit_sizes: Vec<(usize, usize)>,
    /// Headers, bodies and entry points reused and checked by the last
    /// resolution.
    pub reused: usize,
    pub computed: usize,
    /// Whether the last resolution moved the one before it with an edit
    /// (`patch.rs`) rather than resolving the app again.
    pub patched: bool,
    /// The last resolution's tables and diagnostics, for an edit that
    /// keeps the context (`patch.rs`).
    pub(super) kept: Option<super::patch::Kept>,
}

/// A file as the last resolution saw it.
struct FileState {
    path: String,
    text: std::sync::Arc<str>,
    /// The file's part of the context.
    context: blake3::Hash,
    /// Its action bodies' spans (start, end), when read from its syntax
    /// tree (none for a file counted whole).
    bodies: Box<[(u32, u32)]>,
    changed: bool,
}

/// A changed file's last text and bodies, as the last resolution saw it.
pub(super) struct Replaced {
    pub file: FileId,
    pub text: std::sync::Arc<str>,
    pub bodies: Box<[(u32, u32)]>,
}

/// Where a kept result came from: its file, the other files its spans
/// point into, and the diagnostics checking it gave.
#[derive(Default)]
pub(super) struct Memo {
    file: FileId,
    foreign: Box<[FileId]>,
    pub diags: Vec<Diagnostic>,
}

/// What a route declares beyond its method and path: path parameters (a
/// `path:` setting), and an inline action (the key of its `action:`
/// setting). Read from its settings, or, for a route of an unchanged file
/// in the same context, from the last resolution: scanning the settings of
/// every route of a large app again costs more than the rest of its
/// collection.
#[derive(Clone, Copy, Debug)]
pub(super) struct RouteFact {
    pub path: bool,
    pub action: Option<Span>,
}

/// An action's name, qualified name and declines.
pub(super) type ActionShell = (crate::intern::Name, String, Vec<ir::Decline>);

/// An action's lowered parameters and result.
pub(super) type Signature = (Vec<(crate::intern::Name, Ty)>, Ty);

/// What collecting the declarations gave last time, moved out of the last
/// program for the items of unchanged files (only in the same context,
/// where every id means what it meant): the text a large app would
/// otherwise format and copy again on every edit.
#[derive(Default)]
pub(super) struct Shells {
    /// Each action's name, qualified name and declines, by id.
    pub actions: IndexVec<ir::ActionId, Option<ActionShell>>,
    /// Each action's lowered parameters and result, by id.
    pub signatures: IndexVec<ir::ActionId, Option<Signature>>,
    /// Each type's name, by id.
    pub type_names: IndexVec<ir::TypeId, crate::intern::Name>,
    /// What each route declared, in collection order.
    pub routes: Vec<RouteFact>,
    /// Each unit's number of declarations and callables.
    pub unit_sizes: Vec<(usize, usize)>,
    /// By file id: whether the file changed since the last resolution.
    pub changed: Vec<bool>,
}

impl Shells {
    /// Whether what an item of `file` collected last time holds now.
    pub fn holds(&self, file: FileId) -> bool {
        self.changed.get(file.0 as usize) == Some(&false)
    }

    /// Action `id`'s name, qualified name and declines, when its file is
    /// unchanged.
    pub fn action(&mut self, id: ir::ActionId, file: FileId) -> Option<ActionShell> {
        if !self.holds(file) {
            return None;
        }
        self.actions.get_mut(id)?.take()
    }

    /// Action `id`'s lowered parameters and result, when its file is
    /// unchanged.
    pub fn signature(&mut self, id: ir::ActionId, file: FileId) -> Option<Signature> {
        if !self.holds(file) {
            return None;
        }
        self.signatures.get_mut(id)?.take()
    }

    /// What route `index` (in collection order) declared, when its file is
    /// unchanged.
    pub fn route(&self, index: usize, file: FileId) -> Option<RouteFact> {
        if !self.holds(file) {
            return None;
        }
        self.routes.get(index).copied()
    }

    /// Type `id`'s name, when its file is unchanged.
    pub fn type_name(&self, id: ir::TypeId, file: FileId) -> Option<crate::intern::Name> {
        if !self.holds(file) {
            return None;
        }
        self.type_names.get(id).copied()
    }
}

/// One resolution's use of the cache: the cache, and the program of the
/// last resolution to take kept bodies from (`None`: reuse nothing).
pub(super) struct Reuse<'c> {
    pub cache: &'c mut Cache,
    pub previous: Option<&'c mut Program>,
    /// Whether the context is the one the kept results were checked in.
    pub same_context: bool,
    /// The previous program's entry points with their indices, taken out
    /// of it on first use. Kept entries are taken in index order, so one
    /// pass over them moves each once.
    old_entries: Option<std::iter::Enumerate<std::vec::IntoIter<ir::Entry>>>,
    /// The files changed since the last resolution, as it saw them.
    pub replaced: Vec<Replaced>,
}

impl<'c> Reuse<'c> {
    /// Notes which files changed since the last resolution and whether the
    /// context is the same.
    pub fn begin(
        cache: &'c mut Cache,
        previous: Option<&'c mut Program>,
        project: &LoadedProject,
        asts: &[SourceFileAst],
        syntax_files: &HashSet<FileId>,
    ) -> Self {
        let (context, replaced) = cache.refresh(project, asts, syntax_files);
        let same_context = previous.is_some() && cache.context == Some(context);
        cache.context = Some(context);
        cache.reused = 0;
        cache.computed = 0;
        cache.patched = false;
        Reuse {
            cache,
            previous,
            same_context,
            old_entries: None,
            replaced,
        }
    }

    /// Whether the kept result at `index` of `kept` still holds for an item
    /// in `file`.
    pub fn holds(&self, kept: Option<&Memo>, file: FileId) -> bool {
        let Some(memo) = kept else { return false };
        self.same_context && memo.file == file && !memo.touches(|f| self.cache.changed(f))
    }

    pub fn body_holds(&self, index: usize, file: FileId) -> bool {
        self.holds(self.cache.bodies.get(index), file)
    }

    pub fn entry_holds(&self, index: usize, file: FileId) -> bool {
        self.holds(self.cache.entries.get(index).map(|(m, _)| m), file)
    }

    /// Function `index` of the last resolution's program, to take its code
    /// from.
    pub fn previous_function(&mut self, id: ir::FnId) -> Option<&mut ir::code::Function> {
        self.previous.as_mut()?.functions.get_mut(id)
    }

    /// Action `id` of the last resolution's program, to take its body from.
    pub fn previous_action(&mut self, id: ir::ActionId) -> Option<&mut ir::Action> {
        self.previous.as_mut()?.actions.get_mut(id)
    }

    /// The collected shells of the last program, moved out of it (`None`
    /// in another context: ids may mean something else).
    pub fn take_shells(&mut self) -> Option<Shells> {
        if !self.same_context {
            return None;
        }
        let previous = self.previous.as_mut()?;
        let mut actions = IndexVec::new();
        let mut signatures = IndexVec::new();
        for a in previous.actions.iter_mut() {
            let qualified = std::mem::take(&mut a.qualified);
            actions.push(Some((a.name, qualified, std::mem::take(&mut a.declines))));
            let ret = std::mem::replace(&mut a.ret, Ty::Error);
            signatures.push(Some((std::mem::take(&mut a.params), ret)));
        }
        let type_names = previous.types.iter().map(|t| t.name).collect();
        let changed = self.cache.files.iter().map(|f| f.changed).collect();
        Some(Shells {
            actions,
            signatures,
            type_names,
            routes: std::mem::take(&mut self.cache.route_facts),
            unit_sizes: std::mem::take(&mut self.cache.unit_sizes),
            changed,
        })
    }

    /// Entity `eid`'s record kind (type `ty`) and store in the last
    /// program, moved out (its memo holds, so ids mean what they meant).
    pub fn previous_entity(
        &mut self,
        eid: ir::EntityId,
        ty: ir::TypeId,
    ) -> Option<(TypeKind, Option<crate::intern::Name>)> {
        let previous = self.previous.as_mut()?;
        let store = previous.entities.get(eid)?.store;
        let def = previous.types.get_mut(ty)?;
        if !matches!(def.kind, TypeKind::Record(_)) {
            return None;
        }
        Some((std::mem::replace(&mut def.kind, TypeKind::Pending), store))
    }

    /// Failure `id`'s code and fields in the last program, moved out (its
    /// memo holds).
    pub fn previous_failure(
        &mut self,
        id: ir::FailureId,
    ) -> Option<(String, Vec<ir::types::FieldDef>)> {
        let f = self.previous.as_mut()?.failures.get_mut(id)?;
        Some((std::mem::take(&mut f.code), std::mem::take(&mut f.fields)))
    }

    /// Event `id`'s lowered fields in the last program, moved out, when the
    /// context is the same and its file unchanged: they follow from its
    /// declaration and the types, all as they were.
    pub fn previous_event_fields(
        &mut self,
        id: ir::EventId,
        file: FileId,
    ) -> Option<Vec<ir::EventField>> {
        if !self.same_context || self.cache.changed(file) {
            return None;
        }
        let event = self.previous.as_mut()?.events.get_mut(id)?;
        Some(std::mem::take(&mut event.fields))
    }

    /// Keeps what collecting gave for the next resolution.
    pub fn keep_collected(&mut self, routes: Vec<RouteFact>, units: &[super::UnitInfo]) {
        self.cache.route_facts = routes;
        self.cache.unit_sizes = units
            .iter()
            .map(|u| (u.decls.len(), u.callables.len()))
            .collect();
    }

    /// The kind of type `id` in the last resolution's program, moved out.
    /// Only for a kept kind: ids mean what they meant. `None` for an alias
    /// in a circle, which the last resolution reset to `Pending`.
    pub fn previous_kind(&mut self, id: ir::TypeId) -> Option<TypeKind> {
        let def = self.previous.as_mut()?.types.get_mut(id)?;
        if matches!(def.kind, TypeKind::Pending) {
            return None;
        }
        Some(std::mem::replace(&mut def.kind, TypeKind::Pending))
    }

    /// The diagnostics checking body `index` gave last time.
    pub fn cache_body_diags(&self, index: usize) -> Vec<Diagnostic> {
        self.cache
            .bodies
            .get(index)
            .map(|m| m.diags.clone())
            .unwrap_or_default()
    }

    /// The kept memo of body `index`, moved out.
    pub fn take_body_memo(&mut self, index: usize) -> Memo {
        self.cache
            .bodies
            .get_mut(index)
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// The kept memo of entry point `index` and its entry, moved out.
    pub fn take_entry(&mut self, index: usize) -> (Memo, Option<(ir::Entry, u64)>) {
        let (memo, slot) = self
            .cache
            .entries
            .get_mut(index)
            .map(std::mem::take)
            .unwrap_or_default();
        let previous = &mut self.previous;
        let old = self.old_entries.get_or_insert_with(|| {
            let entries = previous.as_mut().map(|p| std::mem::take(&mut p.entries));
            entries.unwrap_or_default().into_iter().enumerate()
        });
        let entry = slot.and_then(|(s, hash)| {
            let (_, entry) = old
                .find(|(i, _)| *i >= s as usize)
                .filter(|(i, _)| *i == s as usize)?;
            Some((entry, hash))
        });
        (memo, entry)
    }
}

impl Memo {
    /// A memo for a result just checked, its foreign files read from its
    /// spans.
    pub fn new(file: FileId, spans: &[Span], diags: &[Diagnostic]) -> Memo {
        let mut foreign: Vec<FileId> = spans.iter().map(|s| s.file).collect();
        for d in diags {
            diag_spans(d, &mut |s| foreign.push(s.file));
        }
        foreign.retain(|f| *f != file);
        foreign.sort_unstable();
        foreign.dedup();
        Memo {
            file,
            foreign: foreign.into(),
            diags: diags.to_vec(),
        }
    }

    /// Whether the result is in a file `changed` says changed, or points
    /// into one.
    pub fn touches(&self, changed: impl Fn(FileId) -> bool) -> bool {
        changed(self.file) || self.foreign.iter().any(|f| changed(*f))
    }

    /// Whether an edit moves some of the result's spans.
    fn moved_by(&self, moves: &super::relocate::Moves) -> bool {
        self.touches(|f| moves.touches(f))
    }
}

impl Cache {
    /// The action bodies' spans of `file` as the last refresh read them.
    pub(super) fn bodies_of(&self, file: FileId) -> Option<&[(u32, u32)]> {
        self.files.get(file.0 as usize).map(|f| &f.bodies[..])
    }

    /// The kept bodies' memos, in the order the bodies are checked.
    pub(super) fn bodies_memos(&self) -> &[Memo] {
        &self.bodies
    }

    pub(super) fn bodies_mut(&mut self) -> &mut [Memo] {
        &mut self.bodies
    }

    /// How many results the cache keeps (headers, definitions, bodies,
    /// entry points).
    pub(super) fn kept_results(&self) -> usize {
        self.headers.len()
            + self.function_headers.len()
            + self.defs.len()
            + self.bodies.len()
            + self.entries.len()
    }

    /// Moves the spans of every kept result but the bodies at `skip`
    /// (checked again) with an edit (`patch.rs`).
    pub(super) fn move_memos(&mut self, moves: &mut super::relocate::Moves, skip: &HashSet<usize>) {
        // A result's spans are in its memo's files: only those in or
        // pointing into a changed file move.
        for (memo, header) in &mut self.headers {
            if memo.moved_by(moves) {
                moves.diagnostics(&mut memo.diags);
                moves.shared(&mut header.params);
                moves.shared(&mut header.fails);
            }
        }
        for (memo, (params, _)) in &mut self.function_headers {
            if memo.moved_by(moves) {
                moves.diagnostics(&mut memo.diags);
                moves.shared(params);
            }
        }
        let others = self
            .defs
            .iter_mut()
            .chain(self.entries.iter_mut().map(|(m, _)| m));
        for memo in others {
            if memo.moved_by(moves) {
                moves.diagnostics(&mut memo.diags);
            }
        }
        for (i, memo) in self.bodies.iter_mut().enumerate() {
            if memo.moved_by(moves) && !skip.contains(&i) {
                moves.diagnostics(&mut memo.diags);
            }
        }
        for fact in &mut self.route_facts {
            moves.opt(&mut fact.action);
        }
    }

    fn changed(&self, file: FileId) -> bool {
        self.files.get(file.0 as usize).is_none_or(|f| f.changed)
    }

    pub(super) fn set_bodies(&mut self, bodies: Vec<Memo>) {
        self.bodies = bodies;
    }

    pub(super) fn set_entries(&mut self, entries: Vec<(Memo, Option<(u32, u64)>)>) {
        self.entries = entries;
    }

    /// Compares every file with the last resolution's, and returns the
    /// context hash and the changed files as they were.
    fn refresh(
        &mut self,
        project: &LoadedProject,
        asts: &[SourceFileAst],
        syntax_files: &HashSet<FileId>,
    ) -> (blake3::Hash, Vec<Replaced>) {
        let files = &project.files;
        self.files.truncate(files.len());
        let by_file: std::collections::HashMap<FileId, &SourceFileAst> =
            asts.iter().map(|a| (a.file, a)).collect();
        let mut all = blake3::Hasher::new();
        let mut replaced = Vec::new();
        all.update(&(files.len() as u64).to_le_bytes());
        for (id, file) in files.iter() {
            let index = id.0 as usize;
            let same = self.files.get(index).is_some_and(|f| {
                f.path == file.path && crate::source::same_text(&f.text, &file.text)
            });
            if same {
                if let Some(f) = self.files.get_mut(index) {
                    f.changed = false;
                }
            } else {
                let ast = by_file.get(&id).copied();
                let (context, bodies) = file_context(id, &file.text, ast, syntax_files);
                let state = FileState {
                    path: file.path.clone(),
                    text: file.text.clone(),
                    context,
                    bodies,
                    changed: true,
                };
                match self.files.get_mut(index) {
                    Some(slot) => {
                        let old = std::mem::replace(slot, state);
                        replaced.push(Replaced {
                            file: id,
                            text: old.text,
                            bodies: old.bodies,
                        });
                    }
                    None => self.files.push(state),
                }
            }
            let state = &self.files[index];
            all.update(&(file.path.len() as u64).to_le_bytes());
            all.update(file.path.as_bytes());
            all.update(format!("{:?}", file.unit).as_bytes());
            all.update(state.context.as_bytes());
        }
        let mut broken: Vec<u32> = syntax_files.iter().map(|f| f.0).collect();
        broken.sort_unstable();
        for f in broken {
            all.update(&f.to_le_bytes());
        }
        (all.finalize(), replaced)
    }
}

/// A file's part of the context: the tokens outside action bodies, and
/// its bodies' spans. A file the parser had to recover adds how it read
/// it: each item's kind and the tokens it spans, since a recovered body can
/// swallow or drop what follows it. Without a syntax tree, the whole text.
fn file_context(
    id: FileId,
    text: &str,
    ast: Option<&SourceFileAst>,
    syntax_files: &HashSet<FileId>,
) -> (blake3::Hash, Box<[(u32, u32)]>) {
    let Some(ast) = ast else {
        let mut h = blake3::Hasher::new();
        h.update(b"whole");
        h.update(text.as_bytes());
        return (h.finalize(), Box::default());
    };
    let bodies = body_spans(ast);
    let mut h = blake3::Hasher::new();
    h.update(b"tokens");
    // What lies outside bodies, in order: each token, and each body as one.
    let mut units: Vec<(u32, u32)> = Vec::new();
    let mut next = bodies.iter().peekable();
    for token in lexer::lex(id, text).tokens {
        while next.peek().is_some_and(|b| b.end <= token.span.start) {
            next.next();
        }
        if let Some(b) = next
            .peek()
            .filter(|b| b.start <= token.span.start && token.span.end <= b.end)
        {
            if b.start == token.span.start {
                h.update(b"\x00body");
                units.push((b.start, b.end));
            }
            continue;
        }
        let slice = text.get(token.span.range()).unwrap_or("");
        h.update(&(slice.len() as u64).to_le_bytes());
        h.update(slice.as_bytes());
        units.push((token.span.start, token.span.end));
    }
    if syntax_files.contains(&id) {
        recovered_items(&mut h, ast, &units);
    }
    let bodies = bodies.iter().map(|b| (b.start, b.end)).collect();
    (h.finalize(), bodies)
}

/// How the parser read a file it had to recover: each item's kind and the
/// first and last of `units` (the tokens outside bodies and the bodies, in
/// order) it spans, by index: offsets move with any edit, and a body's
/// tokens with any edit inside it.
fn recovered_items(h: &mut blake3::Hasher, ast: &SourceFileAst, units: &[(u32, u32)]) {
    h.update(b"recovered");
    for item in &ast.items {
        let (kind, span) = item_kind_span(item);
        let first = units.partition_point(|(start, _)| *start < span.start);
        let last = units.partition_point(|(_, end)| *end <= span.end);
        h.update(&[kind]);
        h.update(&(first as u64).to_le_bytes());
        h.update(&(last as u64).to_le_bytes());
    }
}

/// An item's kind, as a tag, and its span.
fn item_kind_span(item: &Item) -> (u8, Span) {
    match item {
        Item::Application(a) => (0, a.span),
        Item::Config(c) => (1, c.span),
        Item::Store(s) => (2, s.span),
        Item::Type(t) => (3, t.span),
        Item::Entity(e) => (4, e.span),
        Item::Failure(f) => (5, f.span),
        Item::Event(e) => (6, e.span),
        Item::Action(a) => (7, a.span),
        Item::Function(f) => (8, f.span),
        Item::Route(r) => (9, r.span),
        Item::Subscriber(s) => (10, s.span),
        Item::Schedule(s) => (11, s.span),
        Item::Fixture(f) => (12, f.span),
        Item::Test(t) => (13, t.span),
        Item::Error(span) => (14, *span),
    }
}

/// The spans of a file's action bodies, in order.
fn body_spans(ast: &SourceFileAst) -> Vec<Span> {
    ast.items
        .iter()
        .filter_map(|item| match item {
            Item::Action(a) => Some(a.body.span),
            _ => None,
        })
        .collect()
}

/// Every span a diagnostic holds.
fn diag_spans(d: &Diagnostic, f: &mut impl FnMut(Span)) {
    f(d.span);
    for l in &d.related {
        f(l.span);
    }
    for fix in &d.fixes {
        for e in &fix.edits {
            f(e.span);
        }
    }
}

/// Every span a lowered body holds.
pub(super) fn block_spans(b: &Block, out: &mut Vec<Span>) {
    b.for_each_node(&mut |node| node_spans(node, out));
}

/// The spans of one node, without those of the blocks inside it.
fn node_spans(node: &Node, out: &mut Vec<Span>) {
    match node {
        Node::Effect(e) => {
            out.push(e.span);
            if let ir::Target::Write(w) = &e.target {
                out.extend(w.failures.iter().map(|(_, s)| *s));
            }
            match &e.handling {
                ir::Handling::Attempt(s) => out.push(*s),
                ir::Handling::Match(arms) => arms.iter().for_each(|a| arm_spans(a, out)),
                ir::Handling::Unhandled => {}
            }
        }
        Node::Emit(e) => {
            out.extend([e.span, e.head]);
            out.extend(e.fields.iter().flat_map(|f| [f.span, f.value_span]));
            for o in &e.options {
                out.extend([o.key_span, o.span, o.value_span]);
                option_spans(&o.value, out);
            }
        }
        Node::Reject(r) => out.push(r.span),
        Node::Return(s) | Node::If { span: s, .. } => out.push(*s),
        Node::Loop { span, head, .. } => out.extend([*span, *head]),
    }
}

fn arm_spans(a: &ir::Arm, out: &mut Vec<Span>) {
    out.push(a.span);
    match &a.end {
        ir::ArmEnd::Value => {}
        ir::ArmEnd::Reject(r) => out.push(r.span),
        ir::ArmEnd::Propagate(s) => out.push(*s),
    }
}

fn option_spans(v: &ir::OptionValue, out: &mut Vec<Span>) {
    match v {
        ir::OptionValue::List(items) => {
            for (v, s) in items {
                out.push(*s);
                option_spans(v, out);
            }
        }
        ir::OptionValue::Record(items) => {
            for (_, v, s) in items {
                out.push(*s);
                option_spans(v, out);
            }
        }
        _ => {}
    }
}

/// Every span an entry point holds.
pub(super) fn entry_spans(e: &ir::Entry, out: &mut Vec<Span>) {
    out.push(e.span);
    out.push(e.run_span);
    if let ir::EntryKind::Route {
        key_span,
        deadline_span,
        ..
    } = &e.kind
    {
        out.extend(key_span.iter().chain(deadline_span.iter()).copied());
    }
}
