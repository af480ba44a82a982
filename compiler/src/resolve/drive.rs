//! The parallel phases: action and function headers, then bodies. Each item
//! is checked by its own [`Resolver`] reading the shared tables; results and
//! diagnostics are applied in item order, so the output (IR, diagnostics and
//! their order) is the same whatever the number of threads.

use rayon::prelude::*;

use crate::ast;
use crate::diag::Diagnostic;
use crate::ir::{self, ActionId};
use crate::span::FileId;

use super::body::{Header, RouteBody};
use super::carry::Carried;
use super::patch::{BodyFacts, BodyJob, ByBody};
use super::{Builder, Resolver, Tables};
use crate::ir::code;

/// Items per rayon task: bodies are small, so a task takes a batch.
const BATCH: usize = 32;

/// One body to check.
enum Job<'a> {
    Action(ActionId, &'a ast::ActionDecl),
    Route(&'a ast::RouteDecl, ActionId),
    Function(ir::FnId),
}

/// What checking one body produced.
enum Done {
    Action(ActionId, ir::Block, code::Body, ir::Reads),
    Route(ActionId, Option<RouteBody>),
    Function(ir::FnId, code::Body, ir::Reads),
}

/// Runs `f` on each item in parallel with a resolver of its own; returns the
/// results in item order with each item's diagnostics.
pub(super) fn par_resolve<'a, T: Sync, R: Send>(
    t: &Tables<'a>,
    items: &[T],
    f: impl Fn(&mut Resolver<'_, 'a>, &T) -> R + Sync,
) -> Vec<(R, Vec<Diagnostic>)> {
    items
        .par_iter()
        .with_min_len(BATCH)
        .map(|item| {
            let mut diags = Vec::new();
            let out = f(&mut Resolver::new(t, &mut diags), item);
            (out, diags)
        })
        .collect()
}

impl<'a> Builder<'a> {
    /// Action and function headers: parameters, results and `fails`.
    pub(super) fn resolve_headers(&mut self) {
        let actions: Vec<(ActionId, &'a ast::ActionDecl)> = self
            .actions
            .iter_enumerated()
            .filter_map(|(i, a)| a.decl.map(|d| (i, d)))
            .collect();
        let done = par_resolve(&self.t, &actions, |r, (i, decl)| {
            let unit = r.actions[*i].unit;
            r.action_header(unit, decl)
        });
        for ((i, _), (header, mut diags)) in actions.iter().zip(done) {
            self.diags.append(&mut diags);
            self.set_header(*i, header);
        }
        for (route, id) in self.route_actions.clone() {
            let (params, ret) = self.rx().route_action_header(route);
            let sig = &mut self.actions[id];
            sig.params = params.into();
            sig.ret = ret;
        }
        let functions: Vec<(ir::FnId, &'a ast::FunctionDecl)> = self
            .functions
            .iter_enumerated()
            .filter_map(|(i, f)| f.decl.map(|d| (i, d)))
            .collect();
        let done = par_resolve(&self.t, &functions, |r, (i, decl)| {
            let unit = r.functions[*i].unit;
            let params = r.params(unit, &decl.params).into();
            let ret = r.resolve_type(unit, &decl.returns);
            (params, ret)
        });
        for ((i, _), ((params, ret), mut diags)) in functions.into_iter().zip(done) {
            self.diags.append(&mut diags);
            self.functions[i].params = params;
            self.functions[i].ret = ret;
        }
    }

    fn set_header(&mut self, i: ActionId, h: Header) {
        let sig = &mut self.actions[i];
        sig.params = h.params;
        sig.ret = h.ret;
        sig.fails = h.fail_ids;
        sig.fails_unknown = h.unknown;
        self.prog.actions[i].fails = h.fails;
    }

    /// Checks and lowers every body: actions, routes' inline actions, then
    /// functions, but those `carried` from the last resolution. When the
    /// result is `kept` for the next edit, gives what each body's check
    /// depends on ([`BodyFacts`]), in body order.
    pub(super) fn check_bodies(
        &mut self,
        kept: bool,
        mut carried: ByBody<Carried>,
    ) -> Vec<BodyFacts> {
        let jobs = self.body_jobs();
        self.jobs = jobs
            .iter()
            .map(|job| match job {
                Job::Action(id, _) => BodyJob::Action(*id),
                Job::Route(_, id) => BodyJob::Route(*id),
                Job::Function(id) => BodyJob::Function(*id),
            })
            .collect();
        let is_carried = |job: &Job<'_>| match job {
            Job::Action(id, _) => carried.actions.get(*id).is_some_and(Option::is_some),
            Job::Function(id) => carried.functions.get(*id).is_some_and(Option::is_some),
            Job::Route(..) => false,
        };
        let todo: Vec<&Job<'a>> = jobs.iter().filter(|job| !is_carried(job)).collect();
        let done = par_resolve(&self.t, &todo, |r, job| match job {
            Job::Action(id, decl) => {
                let (block, body, reads) = r.action_body(*id, decl);
                Done::Action(*id, block, body, reads)
            }
            Job::Route(route, id) => Done::Route(*id, r.route_action_body(route, *id)),
            Job::Function(i) => {
                let (body, reads) = r.function_body(*i);
                Done::Function(*i, body, reads)
            }
        });
        // Only a body that may be kept needs a revision to be known by.
        let revision = || match kept {
            true => ir::Revision::fresh(),
            false => ir::Revision::UNKNOWN,
        };
        let mut facts = Vec::with_capacity(if kept { jobs.len() } else { 0 });
        let mut done = done.into_iter();
        for job in &jobs {
            if let Some(c) = self.take_carried(job, &mut carried) {
                facts.push(c);
                continue;
            }
            let Some((mut done, mut diags)) = done.next() else {
                break;
            };
            if kept {
                facts.push(body_facts(self.job_file(job), &mut done, &diags));
            }
            self.diags.append(&mut diags);
            self.apply(done, revision());
        }
        facts
    }

    /// Puts the body `carried` holds for `job` in the program, giving
    /// what its check depended on; `None` when it holds none.
    fn take_carried(&mut self, job: &Job<'a>, carried: &mut ByBody<Carried>) -> Option<BodyFacts> {
        match job {
            Job::Action(id, _) => {
                let c = carried.actions.get_mut(*id)?.take()?;
                let action = &mut self.prog.actions[*id];
                (action.body, action.reads, action.revision) = (c.body, c.reads, c.revision);
                Some(c.facts)
            }
            Job::Function(id) => {
                let c = carried.functions.get_mut(*id)?.take()?;
                if let Some(f) = self.prog.functions.get_mut(*id) {
                    f.reads = c.reads;
                }
                Some(c.facts)
            }
            Job::Route(..) => None,
        }
    }

    fn body_jobs(&self) -> Vec<Job<'a>> {
        let mut jobs: Vec<Job<'a>> = Vec::new();
        for (i, a) in self.actions.iter().enumerate() {
            if let Some(decl) = a.decl {
                jobs.push(Job::Action(ActionId(i as u32), decl));
            }
        }
        for (route, id) in &self.route_actions {
            jobs.push(Job::Route(route, *id));
        }
        jobs.extend(self.functions.ids().map(Job::Function));
        jobs
    }

    fn job_file(&self, job: &Job<'a>) -> FileId {
        match job {
            Job::Action(_, decl) => decl.span.file,
            Job::Route(route, _) => route.span.file,
            Job::Function(i) => self
                .functions
                .get(*i)
                .and_then(|f| f.decl)
                .map(|d| d.span.file)
                .unwrap_or_default(),
        }
    }

    fn apply(&mut self, done: Done, revision: ir::Revision) {
        match done {
            Done::Action(id, block, code, reads) => {
                let action = &mut self.prog.actions[id];
                action.body = block;
                action.revision = revision;
                action.code = code;
                action.reads = reads;
            }
            Done::Route(id, Some(r)) => {
                let action = &mut self.prog.actions[id];
                action.body = r.block;
                action.revision = revision;
                action.code = r.code;
                action.fails = r.fails;
                action.reads = r.reads;
            }
            Done::Function(i, code, reads) => {
                if let Some(f) = self.prog.functions.get_mut(i) {
                    f.code = code;
                    f.reads = reads;
                }
            }
            Done::Route(_, None) => {}
        }
    }
}

/// What checking `done` (in `file`) depends on.
fn body_facts(file: FileId, done: &mut Done, diags: &[Diagnostic]) -> BodyFacts {
    let diags = diags.to_vec();
    match done {
        Done::Action(_, body, code, _) => BodyFacts::new(file, &mut (body, code), diags),
        Done::Route(_, Some(r)) => {
            let mut results = ((&mut r.block, &mut r.code), &mut r.fails);
            BodyFacts::new(file, &mut results, diags)
        }
        Done::Route(_, None) => BodyFacts::new(file, &mut (), diags),
        Done::Function(_, code, _) => BodyFacts::new(file, code, diags),
    }
}
