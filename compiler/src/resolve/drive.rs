//! The parallel phases: action and function headers, then bodies. Each item
//! is checked by its own [`Resolver`] reading the shared tables; results and
//! diagnostics are applied in item order, so the output (IR, diagnostics and
//! their order) is the same whatever the number of threads.

use rayon::prelude::*;

use crate::ast;
use crate::diag::Diagnostic;
use crate::ir::{self, ActionId};
use crate::span::{FileId, Span};

use super::body::{Header, RouteBody};
use super::patch::BodyJob;
use super::reuse::{block_spans, Cache, Memo, Reuse};
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

/// [`par_resolve`] keeping results: an item (in `files[i]`) whose memo in
/// the cache list `memos` still holds takes its result again; the rest are
/// checked, and the list is rebuilt for the next resolution.
fn par_resolve_reusing<'a, T: Sync, R: Send + Clone>(
    t: &Tables<'a>,
    (items, files): (&[T], &[FileId]),
    reuse: Option<&mut Reuse<'_>>,
    memos: fn(&mut Cache) -> &mut Vec<(Memo, R)>,
    spans: fn(&R, &mut Vec<Span>),
    f: impl Fn(&mut Resolver<'_, 'a>, &T) -> R + Sync,
) -> Vec<(R, Vec<Diagnostic>)> {
    let Some(reuse) = reuse else {
        return par_resolve(t, items, f);
    };
    let old = std::mem::take(memos(reuse.cache));
    let kept: Vec<bool> = files
        .iter()
        .enumerate()
        .map(|(i, file)| reuse.holds(old.get(i).map(|(m, _)| m), *file))
        .collect();
    let todo: Vec<&T> = items
        .iter()
        .zip(&kept)
        .filter(|(_, k)| !**k)
        .map(|(t, _)| t)
        .collect();
    let mut done = par_resolve(t, &todo, |r, item| f(r, item)).into_iter();
    let mut old = old.into_iter();
    let mut out = Vec::with_capacity(items.len());
    let mut new = Vec::with_capacity(items.len());
    for (i, file) in files.iter().enumerate() {
        match (kept[i], old.next()) {
            (true, Some((memo, value))) => {
                reuse.cache.reused += 1;
                out.push((value.clone(), memo.diags.clone()));
                new.push((memo, value));
            }
            _ => {
                let Some((value, diags)) = done.next() else {
                    continue;
                };
                reuse.cache.computed += 1;
                let mut held = Vec::new();
                spans(&value, &mut held);
                new.push((Memo::new(*file, &held, &diags), value.clone()));
                out.push((value, diags));
            }
        }
    }
    *memos(reuse.cache) = new;
    out
}

fn header_spans(h: &Header, out: &mut Vec<Span>) {
    out.extend(h.params.iter().map(|(_, _, s)| *s));
    out.extend(h.fails.iter().map(|(_, s)| *s));
}

impl<'a> Builder<'a> {
    /// Action and function headers: parameters, results and `fails`; with
    /// `reuse`, keeps what still holds of the last resolution's.
    pub(super) fn resolve_headers(&mut self, mut reuse: Option<&mut Reuse<'_>>) {
        let actions: Vec<(ActionId, &'a ast::ActionDecl)> = self
            .actions
            .iter_enumerated()
            .filter_map(|(i, a)| a.decl.map(|d| (i, d)))
            .collect();
        let files: Vec<FileId> = actions.iter().map(|(_, d)| d.span.file).collect();
        let done = par_resolve_reusing(
            &self.t,
            (&actions, &files),
            reuse.as_deref_mut(),
            |c| &mut c.headers,
            header_spans,
            |r, (i, decl)| {
                let unit = r.actions[*i].unit;
                r.action_header(unit, decl)
            },
        );
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
        let files: Vec<FileId> = functions.iter().map(|(_, d)| d.span.file).collect();
        let done = par_resolve_reusing(
            &self.t,
            (&functions, &files),
            reuse,
            |c| &mut c.function_headers,
            |(params, _), out| out.extend(params.iter().map(|(_, _, s)| *s)),
            |r, (i, decl)| {
                let unit = r.functions[*i].unit;
                let params = r.params(unit, &decl.params).into();
                let ret = r.resolve_type(unit, &decl.returns);
                (params, ret)
            },
        );
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
        self.prog.actions[i].fails = h.fails.to_vec();
    }

    /// Checks and lowers every body: actions, routes' inline actions, then
    /// functions; with `reuse`, keeps what still holds of the last
    /// resolution's results and checks only the rest.
    pub(super) fn check_bodies(&mut self, mut reuse: Option<&mut Reuse<'_>>) {
        let jobs = self.body_jobs();
        self.jobs = jobs
            .iter()
            .map(|job| match job {
                Job::Action(id, _) => BodyJob::Action(*id),
                Job::Route(..) => BodyJob::Route,
                Job::Function(_) => BodyJob::Function,
            })
            .collect();
        let files: Vec<FileId> = jobs.iter().map(|j| self.job_file(j)).collect();
        let kept: Vec<bool> = match reuse.as_deref() {
            Some(r) => files
                .iter()
                .enumerate()
                .map(|(i, f)| r.body_holds(i, *f))
                .collect(),
            None => vec![false; jobs.len()],
        };
        let todo: Vec<&Job<'a>> = jobs
            .iter()
            .zip(&kept)
            .filter(|(_, k)| !**k)
            .map(|(j, _)| j)
            .collect();
        let mut done = par_resolve(&self.t, &todo, |r, job| match job {
            Job::Action(id, decl) => {
                let (block, body, reads) = r.action_body(*id, decl);
                Done::Action(*id, block, body, reads)
            }
            Job::Route(route, id) => Done::Route(*id, r.route_action_body(route, *id)),
            Job::Function(i) => {
                let (body, reads) = r.function_body(*i);
                Done::Function(*i, body, reads)
            }
        })
        .into_iter();
        let mut memos = Vec::with_capacity(if reuse.is_some() { jobs.len() } else { 0 });
        for (i, job) in jobs.iter().enumerate() {
            let (done, mut diags, revision) = match (kept[i], reuse.as_deref_mut()) {
                (true, Some(r)) => kept_body(r, i, job),
                (_, r) => match done.next() {
                    // Only a body that may be kept needs a revision to be
                    // known by.
                    Some((d, diags)) => {
                        let revision = match r {
                            Some(_) => ir::Revision::fresh(),
                            None => ir::Revision::UNKNOWN,
                        };
                        (d, diags, revision)
                    }
                    None => continue,
                },
            };
            if let Some(r) = reuse.as_deref_mut() {
                memos.push(if kept[i] {
                    r.cache.reused += 1;
                    r.take_body_memo(i)
                } else {
                    r.cache.computed += 1;
                    body_memo(files[i], &done, &diags)
                });
            }
            self.diags.append(&mut diags);
            self.apply(done, revision);
        }
        if let Some(r) = reuse {
            r.cache.set_bodies(memos);
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

/// A body the last resolution checked, taken from its program, with its
/// diagnostics.
fn kept_body(
    r: &mut Reuse<'_>,
    index: usize,
    job: &Job<'_>,
) -> (Done, Vec<Diagnostic>, ir::Revision) {
    let diags = r.cache_body_diags(index);
    let revision = match job {
        Job::Action(id, _) | Job::Route(_, id) => r
            .previous_action(*id)
            .map_or(ir::Revision::UNKNOWN, |a| a.revision),
        Job::Function(_) => ir::Revision::UNKNOWN,
    };
    let done = match job {
        Job::Action(id, _) => {
            let (block, code, reads) = r
                .previous_action(*id)
                .map(|a| {
                    (
                        std::mem::take(&mut a.body),
                        std::mem::take(&mut a.code),
                        std::mem::take(&mut a.reads),
                    )
                })
                .unwrap_or_default();
            Done::Action(*id, block, code, reads)
        }
        Job::Route(_, id) => {
            let taken = r.previous_action(*id).map(|a| RouteBody {
                block: std::mem::take(&mut a.body),
                code: std::mem::take(&mut a.code),
                fails: std::mem::take(&mut a.fails),
                reads: std::mem::take(&mut a.reads),
            });
            Done::Route(*id, taken)
        }
        Job::Function(i) => {
            let (code, reads) = r
                .previous_function(*i)
                .map(|f| (std::mem::take(&mut f.code), std::mem::take(&mut f.reads)))
                .unwrap_or_default();
            Done::Function(*i, code, reads)
        }
    };
    (done, diags, revision)
}

/// The memo of a body just checked.
fn body_memo(file: FileId, done: &Done, diags: &[Diagnostic]) -> Memo {
    let mut spans = Vec::new();
    match done {
        Done::Action(_, body, _, _) => block_spans(body, &mut spans),
        Done::Route(_, Some(r)) => {
            block_spans(&r.block, &mut spans);
            spans.extend(r.fails.iter().map(|(_, s)| *s));
        }
        Done::Route(_, None) | Done::Function(..) => {}
    }
    Memo::new(file, &spans, diags)
}
