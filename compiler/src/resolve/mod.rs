//! Name resolution and type checking: ASTs to the resolved [`crate::ir::Program`].
//! Reports unknown and duplicate names, type and constraint errors, missing
//! `attempt`/`match`, `fails` exactness and function purity.
//!
//! Phases, in order: set up the units (stdlib, packages sorted by name, app)
//! and what each may see; collect every declaration's name (any file, any
//! order); resolve type definitions; lower operations from the manifests;
//! resolve action and function headers; check and lower bodies; resolve entry
//! points and application settings.
//!
//! The [`Builder`] owns the [`Tables`] and runs the phases; the declarations
//! and type definitions are collected in order, one thread. Headers, bodies
//! and entry points are then checked in parallel (`drive.rs`, `entries.rs`),
//! each by a [`Resolver`] that reads the tables and keeps its own
//! diagnostics; results are applied in declaration order, so the program and
//! the diagnostics are the same whatever the number of threads. Tables keyed
//! by [`Name`] hash its id and are iterated only in text order.
//!
//! The language server resolves again after every edit with
//! [`resolve_cached`]. An edit that keeps the context (`edit.rs`) moves the
//! last resolution: its program, tables and diagnostics are kept, the spans
//! of the edited files move with the edit (`relocate.rs`), and only the
//! bodies of those files (and the tests, when a changed file holds one)
//! are checked again (`patch.rs`). Any other edit is resolved afresh,
//! but for the action bodies it cannot reach, which keep their results
//! (`carry.rs`).

mod body;
mod calls;
mod carry;
mod collect;
mod decls;
mod drive;
mod edit;
mod emit;
mod entries;
mod exprs;
mod fails;
mod lookup;
mod matching;
mod narrow;
mod ops;
mod patch;
mod providers;
mod query;
mod relocate;
pub mod size;
mod suggest;
mod tables;
mod test_items;
mod types;
mod validate;

/// The settings each form accepts (for completion).
pub use emit::OPTIONS as EMIT_OPTIONS;
pub use entries::ROUTE_KEYS;
pub use test_items::FIXTURE_SETTINGS;

use crate::index::IndexVec;
use std::collections::{HashMap, HashSet};

use crate::ast::{self, SourceFileAst};
use crate::diag::Diagnostic;
use crate::intern::Name;
use crate::ir::{self, ActionId, FailureKind, Owner, PkgId, Program, TypeId};
use crate::load::{LoadedPackage, LoadedProject};
use crate::span::FileId;

pub use patch::Cache;
use tables::{ActionSig, Decl, FnSig, OpSig, TypeDef, UnitInfo};

/// The tables every phase reads: the program being built, the scope units
/// and the resolved signatures. Filled in sequentially by the [`Builder`];
/// read, shared, by [`Resolver`]s checking bodies on several threads.
pub(crate) struct Tables<'a> {
    pub project: &'a LoadedProject,
    pub prog: Program,
    /// Index 0: stdlib; 1 + n: package n; last: the app.
    pub units: Vec<UnitInfo>,
    pub types: IndexVec<TypeId, TypeDef>,
    pub actions: IndexVec<ActionId, ActionSig<'a>>,
    pub functions: IndexVec<ir::FnId, FnSig<'a>>,
    pub op_sigs: IndexVec<ir::OpId, OpSig>,
    /// Each unit's ASTs in file order.
    pub unit_asts: Vec<Vec<&'a SourceFileAst>>,
    /// The app's `application` declaration.
    pub application: Option<&'a ast::Application>,
    /// Routes with an inline `action: { }` and their synthetic actions.
    pub route_actions: Vec<(&'a ast::RouteDecl, ir::ActionId)>,
    /// The same, by the route's address: found per route without a scan.
    pub route_action_of: HashMap<usize, ir::ActionId, crate::intern::NameHasher>,
    /// The record type of a route's `path: { }` parameters, by the route's
    /// address.
    pub route_path_of: HashMap<usize, tables::TypeId, crate::intern::NameHasher>,
    /// Files with syntax errors: the parser's recovery may have dropped
    /// statements or arms, so whole-body judgements (`fails` exactness,
    /// missing `return`, exhaustive `match`) are not made there.
    pub syntax_files: HashSet<FileId>,
    /// Whether bodies are lowered to code too ([`Lowering::Code`]).
    pub code: bool,
    /// "Did you mean" lists and answers, shared by the body threads.
    pub suggest_memo: suggest::Memo,
    /// Whose tests are resolved: the app's, or the package's checked on
    /// its own.
    pub test_owner: Owner,
    /// Its fixtures and tests, in source order.
    pub fixture_decls: Vec<&'a ast::FixtureDecl>,
    pub test_decls: Vec<&'a ast::TestDecl>,
    /// Set when a constraint was judged against a type whose definition
    /// is not resolved yet (see [`Builder::resolve_type_defs`]).
    pub unresolved_base: std::sync::atomic::AtomicBool,
}

/// What a resolution lowers bodies to. The effect tree is always built (the
/// checker reads it); the typed code only when something will run the
/// program, as building it costs about a tenth of a large check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lowering {
    /// The effect tree only: `jadpo check`, `build`, the language server.
    Effects,
    /// The effect tree and the code of every body: the runtime.
    Code,
}

/// Owns the tables and the project's diagnostics; runs the phases in order.
/// Whatever writes the tables is here; checking is done by a [`Resolver`]
/// borrowed from it ([`Builder::rx`]).
pub(crate) struct Builder<'a> {
    pub t: Tables<'a>,
    pub diags: Vec<Diagnostic>,
    /// The parameters of a header not resolved yet: one allocation shared
    /// by every action and function.
    no_params: std::sync::Arc<[(Name, ir::types::Ty, crate::span::Span)]>,
    no_fails: std::sync::Arc<[ir::FailureId]>,
    /// The item being collected: its file and index among the file's items.
    item_at: Option<(FileId, u32)>,
    /// Where each action is declared (see [`patch::Kept`]).
    at: IndexVec<ActionId, Option<(FileId, u32)>>,
    /// Where each fixture and test resolved is declared, in order.
    tests_at: Vec<(FileId, u32)>,
    /// The bodies in the order they were checked.
    jobs: Vec<patch::BodyJob>,
}

impl<'a> std::ops::Deref for Builder<'a> {
    type Target = Tables<'a>;
    fn deref(&self) -> &Tables<'a> {
        &self.t
    }
}

impl<'a> std::ops::DerefMut for Builder<'a> {
    fn deref_mut(&mut self) -> &mut Tables<'a> {
        &mut self.t
    }
}

/// Checks names, types and bodies against shared, read-only [`Tables`],
/// reporting into its own list of diagnostics. One per body when bodies are
/// checked in parallel; their lists are joined in body order, so the output
/// is the same whatever the number of threads.
pub(crate) struct Resolver<'r, 'a> {
    t: &'r Tables<'a>,
    pub diags: &'r mut Vec<Diagnostic>,
}

impl<'a> std::ops::Deref for Resolver<'_, 'a> {
    type Target = Tables<'a>;
    fn deref(&self) -> &Tables<'a> {
        self.t
    }
}

pub fn resolve(
    project: &LoadedProject,
    asts: &[SourceFileAst],
    diagnostics: &mut Vec<Diagnostic>,
) -> Program {
    resolve_lowering(project, asts, diagnostics, Lowering::Effects)
}

/// [`resolve`], lowering bodies as `lowering` says.
pub fn resolve_lowering(
    project: &LoadedProject,
    asts: &[SourceFileAst],
    diagnostics: &mut Vec<Diagnostic>,
    lowering: Lowering,
) -> Program {
    let syntax_files = syntax_files(diagnostics);
    let code = lowering == Lowering::Code;
    if let Some(kept) = over_budget(project, asts, diagnostics) {
        return run(
            project,
            &kept,
            diagnostics,
            (syntax_files, code),
            (None, None),
        );
    }
    run(
        project,
        asts,
        diagnostics,
        (syntax_files, code),
        (None, None),
    )
}

/// The most declarations one check resolves, the app's and its packages'
/// together: the benchmark's 1M-line app has 117,000, and memory and time
/// past the parser grow with their number (about 3 KB each).
pub const MAX_DECLARATIONS: usize = 250_000;

/// Past [`MAX_DECLARATIONS`], one `load.too_many_declarations` at the first
/// declaration over it, and the standard library's files alone to resolve
/// (nothing of the app is judged); `None` within it.
fn over_budget(
    project: &LoadedProject,
    asts: &[SourceFileAst],
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Vec<SourceFileAst>> {
    let stdlib = |f: &SourceFileAst| {
        project.stdlib_sources.contains(&f.file)
            || project
                .stdlib_packages
                .iter()
                .any(|p| p.sources.contains(&f.file))
    };
    let total: usize = asts
        .iter()
        .filter(|f| !stdlib(f))
        .map(|f| f.items.len())
        .sum();
    if total <= MAX_DECLARATIONS {
        return None;
    }
    let first_over = asts
        .iter()
        .filter(|f| !stdlib(f))
        .flat_map(|f| f.items.iter())
        .nth(MAX_DECLARATIONS);
    if let Some(item) = first_over {
        // The declaration's first character.
        let span = item.span();
        let span = crate::span::Span::new(span.file, span.start, span.end.min(span.start + 1));
        diagnostics.push(
            Diagnostic::error(
                "load.too_many_declarations",
                span,
                format!("the sources make {total} declarations; one check judges at most {MAX_DECLARATIONS}"),
            )
            .with_label(format!("declaration {} and later", MAX_DECLARATIONS + 1))
            .with_reason("every input is judged within bounded memory and time, and the work past the parser grows with the number of declarations")
            .with_help("real apps are far smaller: a file of this many declarations is usually generated; split it into packages or generate less"),
        );
    }
    Some(asts.iter().filter(|f| stdlib(f)).cloned().collect())
}

/// [`resolve`] for an app resolved again after an edit (the language
/// server): moves `previous`, the program the last call with this `cache`
/// returned, with the edit when it keeps the context (see `edit.rs` and
/// `patch.rs`), taking it out; resolves afresh otherwise. The program and
/// the diagnostics are those [`resolve`] gives.
pub fn resolve_cached(
    project: &LoadedProject,
    asts: &[SourceFileAst],
    diagnostics: &mut Vec<Diagnostic>,
    cache: &mut Cache,
    mut previous: Option<&mut Program>,
) -> Program {
    let syntax_files = syntax_files(diagnostics);
    if let Some(kept) = over_budget(project, asts, diagnostics) {
        *cache = Cache::default();
        return run(
            project,
            &kept,
            diagnostics,
            (syntax_files, false),
            (None, None),
        );
    }
    let edit = cache
        .start()
        .begin(previous.is_some(), project, asts, &syntax_files);
    let patched = patch::run(
        project,
        asts,
        diagnostics,
        (cache, previous.as_deref_mut()),
        &edit,
        &syntax_files,
    );
    if let Some(program) = patched {
        return program;
    }
    if !edit.same_context {
        cov_mark::hit!(resolve_afresh_in_another_context);
    }
    let carry = carry::Carry::new(&edit, cache, previous);
    run(
        project,
        asts,
        diagnostics,
        (syntax_files, false),
        (Some(cache), carry),
    )
}

fn syntax_files(diagnostics: &[Diagnostic]) -> HashSet<FileId> {
    diagnostics
        .iter()
        .filter(|d| d.is_error() && d.code.starts_with("syntax."))
        .map(|d| d.span.file)
        .collect()
}

/// Resolves afresh; with `cache`, keeps what the next edit needs there,
/// and checks no body `carry` keeps from the last resolution.
fn run(
    project: &LoadedProject,
    asts: &[SourceFileAst],
    diagnostics: &mut Vec<Diagnostic>,
    (syntax_files, code): (HashSet<FileId>, bool),
    (cache, carry): (Option<&mut Cache>, Option<carry::Carry<'_>>),
) -> Program {
    let mut b = Builder::new(project, asts);
    b.syntax_files = syntax_files;
    b.code = code;
    b.collect_all();
    b.resolve_type_defs();
    b.lower_operations();
    b.resolve_headers();
    b.lower_signatures();
    b.resolve_application();
    let head = b.diags.len();
    let (carried, entries) = match (carry, cache.as_deref()) {
        (Some(carry), Some(cache)) => {
            let actions = &b.t.actions;
            let body_at = |id: ActionId| Some(actions.get(id)?.decl?.body.span.start);
            let config = b.units.iter().flat_map(|u| u.config.iter());
            let config = config.map(|(n, c)| (*n, &c.ty)).collect();
            let new = carry::Side::new(&b.t.prog, b.t.types.as_slice(), config);
            let (bodies, entries) = carry.bodies(new, &body_at, &cache.seen);
            (bodies, Some(entries))
        }
        _ => (patch::ByBody::new(0, 0), None),
    };
    let carried_count = carried.count();
    let facts = b.check_bodies(cache.is_some(), carried);
    let bodies = b.diags.len();
    b.resolve_entries(entries);
    let entries = b.diags.len();
    b.resolve_tests();
    let kept = cache.is_some().then(|| patch::Diags {
        head: b.diags.get(..head).unwrap_or_default().to_vec(),
        entries: b.diags.get(bodies..entries).unwrap_or_default().to_vec(),
        tests: b.diags.get(entries..).unwrap_or_default().to_vec(),
    });
    diagnostics.append(&mut b.diags);
    b.lower_config();
    let mut prog = std::mem::take(&mut b.t.prog);
    prog.types = std::mem::take(&mut b.t.types);
    match (cache, kept) {
        (Some(cache), Some(diags)) => {
            prog.context = ir::Revision::fresh();
            let checked = facts.len() - carried_count;
            cache.keep(patch::Kept::new(&mut b, facts, diags), checked);
        }
        _ => {
            // The largest table owns nothing borrowed: another thread
            // frees it while the caller goes on.
            let units = std::mem::take(&mut b.t.units);
            rayon::spawn(move || drop(units));
        }
    }
    mark_package_errors(project, &mut prog, diagnostics);
    prog
}

impl<'a> Builder<'a> {
    /// Actions' parameters and results, and the functions, into the
    /// program (their bodies come later).
    fn lower_signatures(&mut self) {
        for (i, sig) in self.t.actions.iter_enumerated() {
            let Some(a) = self.t.prog.actions.get_mut(i) else {
                continue;
            };
            a.params = sig.params.iter().map(|(n, t, _)| (*n, t.clone())).collect();
            a.ret = sig.ret.clone();
        }
        self.t.prog.functions = self
            .t
            .functions
            .iter()
            .filter_map(|f| {
                let decl = f.decl?;
                Some(ir::code::Function {
                    name: decl.name.name,
                    params: f.params.iter().map(|(n, t, _)| (*n, t.clone())).collect(),
                    ret: f.ret.clone(),
                    span: decl.name.span,
                    code: ir::code::Body::default(),
                    reads: ir::Reads::default(),
                })
            })
            .collect();
    }

    /// The app's config entries, in name order.
    fn lower_config(&mut self) {
        let Some(app) = self.t.units.last() else {
            return;
        };
        self.t.prog.config = app
            .config
            .iter()
            .map(|(name, c)| ir::ConfigEntry {
                name: *name,
                ty: c.ty.clone(),
                secret: c.secret,
                binding: c.binding.clone(),
                default: c.default.clone(),
                span: c.span,
            })
            .collect();
    }

    fn new(project: &'a LoadedProject, asts: &'a [SourceFileAst]) -> Self {
        let t = Tables {
            project,
            prog: Program::default(),
            units: Vec::new(),
            types: IndexVec::new(),
            actions: IndexVec::new(),
            functions: IndexVec::new(),
            op_sigs: IndexVec::new(),
            unit_asts: Vec::new(),
            application: None,
            route_actions: Vec::new(),
            route_action_of: HashMap::default(),
            route_path_of: HashMap::default(),
            syntax_files: HashSet::new(),
            code: false,
            suggest_memo: Default::default(),
            test_owner: Owner::App,
            fixture_decls: Vec::new(),
            test_decls: Vec::new(),
            unresolved_base: Default::default(),
        };
        let mut r = Builder {
            t,
            diags: Vec::new(),
            no_params: std::sync::Arc::from([]),
            no_fails: std::sync::Arc::from([]),
            item_at: None,
            at: IndexVec::new(),
            tests_at: Vec::new(),
            jobs: Vec::new(),
        };
        r.prog.app.name = project.app.app.node.clone();
        r.setup_units();
        r.test_owner = r.tested_owner();
        r.add_standard_failures();
        r.assign_asts(asts);
        r
    }

    /// A resolver reading the tables as they are, reporting into the
    /// project's diagnostics.
    pub fn rx(&mut self) -> Resolver<'_, 'a> {
        Resolver {
            t: &self.t,
            diags: &mut self.diags,
        }
    }

    pub fn error(&mut self, diag: Diagnostic) {
        self.diags.push(diag);
    }
}

impl<'a> Tables<'a> {
    /// The package checked on its own, or the app.
    fn tested_owner(&self) -> Owner {
        let Some(name) = &self.project.tested_package else {
            return Owner::App;
        };
        self.loaded_packages()
            .position(|p| &p.manifest.name.node == name)
            .map_or(Owner::App, |i| Owner::Package(PkgId(i as u32)))
    }

    /// Every loaded package, in `PkgId` order: stdlib packages, then the
    /// project's packages (sorted by name by the loader).
    pub fn loaded_packages(&self) -> impl Iterator<Item = &'a LoadedPackage> {
        self.project
            .stdlib_packages
            .iter()
            .chain(self.project.packages.iter())
    }

    pub fn unit_index(&self, owner: Owner) -> usize {
        match owner {
            Owner::Stdlib => 0,
            Owner::Package(p) => 1 + p.0 as usize,
            Owner::App => self.units.len().saturating_sub(1),
        }
    }

    pub fn unit(&self, owner: Owner) -> &UnitInfo {
        &self.units[self.unit_index(owner)]
    }

    pub fn unit_mut(&mut self, owner: Owner) -> &mut UnitInfo {
        let i = self.unit_index(owner);
        &mut self.units[i]
    }
}

impl<'a> Builder<'a> {
    fn setup_units(&mut self) {
        let project = self.project;
        let stdlib_count = project.stdlib_packages.len();
        let by_name: HashMap<String, PkgId> = self
            .loaded_packages()
            .enumerate()
            .map(|(i, p)| (p.manifest.name.node.clone(), PkgId(i as u32)))
            .collect();
        let std_pkgs: Vec<(Name, PkgId)> = self
            .loaded_packages()
            .take(stdlib_count)
            .enumerate()
            .map(|(i, p)| (Name::new(&p.manifest.name.node), PkgId(i as u32)))
            .collect();

        let mut stdlib = UnitInfo::new(Owner::Stdlib);
        stdlib.files = project.stdlib_sources.clone();
        stdlib.sees.extend(std_pkgs.iter().copied());
        self.units.push(stdlib);

        for (i, pkg) in self.loaded_packages().enumerate() {
            let id = PkgId(i as u32);
            let mut unit = UnitInfo::new(Owner::Package(id));
            unit.files = pkg.sources.clone();
            unit.sees.extend(std_pkgs.iter().copied());
            unit.sees.insert(Name::new(&pkg.manifest.name.node), id);
            for req in &pkg.manifest.packages {
                see_requirement(&mut unit, &by_name, &req.name.node);
            }
            self.units.push(unit);
            self.prog.packages.push(lower_package(pkg));
        }

        let mut app = UnitInfo::new(Owner::App);
        app.files = project.app_sources.clone();
        app.sees.extend(std_pkgs.iter().copied());
        for req in &project.app.packages {
            see_requirement(&mut app, &by_name, &req.name.node);
        }
        self.units.push(app);
    }

    /// The standard failure kinds are failures owned by the stdlib, each of
    /// its own kind.
    fn add_standard_failures(&mut self) {
        for kind in FailureKind::ALL {
            let id = ir::FailureId(self.prog.failures.len() as u32);
            self.prog.failures.push(ir::Failure {
                owner: Owner::Stdlib,
                qualified: kind.as_str().to_string(),
                kind,
                span: None,
                code: kind.as_str().to_string(),
                fields: Vec::new(),
            });
            let span = crate::span::Span::default();
            self.units[0]
                .decls
                .insert(Name::new(kind.as_str()), (Decl::Failure(id), span));
        }
    }

    fn assign_asts(&mut self, asts: &'a [SourceFileAst]) {
        let by_file: HashMap<FileId, &'a SourceFileAst> =
            asts.iter().map(|a| (a.file, a)).collect();
        self.unit_asts = self
            .units
            .iter()
            .map(|u| {
                u.files
                    .iter()
                    .filter_map(|f| by_file.get(f).copied())
                    .collect()
            })
            .collect();
    }
}

impl<'a> Tables<'a> {
    /// Whether a span lies in a file the parser could not read fully.
    pub fn unreadable(&self, span: crate::span::Span) -> bool {
        self.syntax_files.contains(&span.file)
    }
}

impl<'r, 'a> Resolver<'r, 'a> {
    pub fn new(t: &'r Tables<'a>, diags: &'r mut Vec<Diagnostic>) -> Self {
        Resolver { t, diags }
    }

    pub fn error(&mut self, diag: Diagnostic) {
        self.diags.push(diag);
    }
}

fn see_requirement(unit: &mut UnitInfo, by_name: &HashMap<String, PkgId>, name: &str) {
    match by_name.get(name) {
        Some(id) => {
            unit.sees.insert(Name::new(name), *id);
        }
        None => {
            unit.missing.insert(Name::new(name), ());
        }
    }
}

fn lower_package(pkg: &LoadedPackage) -> ir::Package {
    let m = &pkg.manifest;
    let idempotency = m
        .provider
        .idempotency
        .as_ref()
        .map(|i| ir::IdempotencyFacts {
            header: i.header.node.clone(),
            window_ms: i.window_ms.node,
            replays_failures: i.replays_failures,
            new_key_on: i.new_key_on,
            in_use: i.in_use.clone(),
            mismatch: i.mismatch.clone(),
        });
    ir::Package {
        name: Name::new(&m.name.node),
        version: m.version.node.to_string(),
        manifest_span: m.name.span,
        idempotency,
        timeout_ms: m.provider.timeout_ms,
        attempts: m.provider.attempts,
        http: m.provider.http.as_ref().map(|h| h.node.clone()),
        has_errors: false,
    }
}

/// A package has errors when any error lies in its manifest or its sources.
fn mark_package_errors(project: &LoadedProject, prog: &mut Program, diags: &[Diagnostic]) {
    let packages = project
        .stdlib_packages
        .iter()
        .chain(project.packages.iter());
    for (pkg, lowered) in packages.zip(prog.packages.iter_mut()) {
        let mut files = pkg.sources.clone();
        files.push(pkg.manifest_file);
        lowered.has_errors = diags
            .iter()
            .any(|d| d.is_error() && files.contains(&d.span.file));
    }
}
