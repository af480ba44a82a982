//! Rule findings kept between two runs over an edited program (the language
//! server). The per-action checks of an action are judged again only when
//! something they read may have changed: the action's summary key (its body,
//! its callees' keys, the facts of operations and events), its own spans,
//! the names of everything a message can mention, the checked scope, the
//! files' units, and the declared fields' spans of the events it stages
//! (a finding points at them). Every span they report is in the IR, so
//! nothing else is read. The context (scope, units, names) is hashed once
//! per program context revision; which events' fields moved is found once
//! per run. Whole-program checks run every time. The findings come out in
//! exactly the order of [`super::run`].

use std::sync::Arc;

use jadpo_compiler::diag::Diagnostic;
use jadpo_compiler::index::IndexVec;
use jadpo_compiler::ir::{Action, ActionId, EventId, Revision};
use jadpo_compiler::source::Unit;
use jadpo_compiler::span::Span;

use super::{checks, Check, Cx, Finding};
use crate::analysis::key::{Key, Writer};
use crate::Scope;

/// Findings of the per-action checks of the last run, by action id.
#[derive(Default)]
pub struct Cache {
    /// The context of the last run ([`context`]).
    context: Option<Key>,
    /// The program context and scope it was computed for: the same
    /// program context (same declarations, same files) and scope give the
    /// same key without hashing every name again.
    context_of: Option<(Revision, Scope)>,
    /// Each event's declared fields' spans in the last run.
    event_fields: IndexVec<EventId, Box<[Span]>>,
    slots: IndexVec<ActionId, Option<Arc<Judged>>>,
    /// Actions whose findings were reused in the last run.
    pub reused: usize,
    /// Actions judged afresh in the last run.
    pub computed: usize,
}

/// What the per-action checks read of an action besides its summary and
/// the run's context. Its name, owner and qualified name are in the
/// context ([`context`]): with another context no finding is kept.
#[derive(PartialEq)]
struct Header {
    summary: Option<Key>,
    name_span: Span,
    span: Span,
    /// The events its own emits stage, in emit order. The list follows
    /// from the body, which the summary key covers; whether their declared
    /// fields moved (a finding points at them) is found once per run.
    emitted: Vec<EventId>,
}

impl Header {
    /// Whether this is the header of `action` with summary key `summary`,
    /// in a run where the events `moved` says moved their fields.
    fn is(&self, moved: &IndexVec<EventId, bool>, summary: Key, action: &Action) -> bool {
        self.summary == Some(summary)
            && self.name_span == action.name_span
            && self.span == action.span
            && self.emitted.iter().all(|e| moved.get(*e) == Some(&false))
    }
}

/// The events `action`'s own emits stage, in emit order.
fn emitted(action: &Action) -> Vec<EventId> {
    crate::analysis::follow_up::emits_in(&action.body)
        .iter()
        .map(|emit| emit.event)
        .collect()
}

/// Which events' declared fields moved since the last run (or are new),
/// keeping their spans now for the next run; only moved ones are copied.
fn moved_events(cx: &Cx, kept: &mut IndexVec<EventId, Box<[Span]>>) -> IndexVec<EventId, bool> {
    let events = &cx.program.events;
    kept.as_vec_mut().truncate(events.len());
    events
        .iter_enumerated()
        .map(|(e, event)| {
            let now = || event.fields.iter().map(|f| f.span);
            match kept.get_mut(e) {
                Some(last) if last.iter().copied().eq(now()) => false,
                Some(last) => {
                    *last = now().collect();
                    true
                }
                None => {
                    kept.push(now().collect());
                    true
                }
            }
        })
        .collect()
}

/// One action's findings from the per-action checks, and what they were
/// judged from: its summary key and its header.
struct Judged {
    header: Header,
    /// Findings by index in [`checks`]; checks without findings left out.
    by_check: Vec<(usize, Vec<Finding>)>,
}

/// [`super::run`], reusing from `cache` the findings of actions whose
/// inputs are unchanged, and keeping this run's for the next. Gives exactly
/// what [`super::run`] gives. Reuses nothing when the analysis was not
/// made by `analysis::analyse_cached` (it then has no keys).
pub fn run_cached(cx: &Cx, cache: &mut Cache) -> Vec<Diagnostic> {
    crate::pool::install(|| run_here(cx, cache))
}

fn run_here(cx: &Cx, cache: &mut Cache) -> Vec<Diagnostic> {
    use rayon::prelude::*;
    let of = (cx.program.context, cx.scope.clone());
    let same_context = of.0.is_known() && cache.context_of.as_ref() == Some(&of);
    let context = match cache.context {
        Some(key) if same_context => key,
        _ => context(cx),
    };
    cache.context_of = Some(of);
    let moved = moved_events(cx, &mut cache.event_fields);
    let ids: Vec<ActionId> = cx.actions().collect();
    let mut old = std::mem::take(&mut cache.slots);
    if cache.context != Some(context) {
        old.clear();
    }
    type Judgement = (Arc<Judged>, bool);
    let checks = checks();
    let (judged, mut whole): (Vec<Judgement>, Vec<Vec<Finding>>) = rayon::join(
        || {
            ids.par_iter()
                .map(|&id| judge(cx, &moved, &old, id))
                .collect()
        },
        || {
            checks
                .par_iter()
                .map(|check| {
                    let mut found = Vec::new();
                    if let Check::Whole(check) = check {
                        check(cx, &mut found);
                    }
                    found
                })
                .collect()
        },
    );
    drop(old);
    // Most actions have no finding: each action's findings are sorted by
    // check in one pass over the few that have any, in action order.
    let mut by_check: Vec<Vec<&Finding>> = vec![Vec::new(); checks.len()];
    for (j, _) in &judged {
        for (k, found) in &j.by_check {
            if let Some(list) = by_check.get_mut(*k) {
                list.extend(found.iter());
            }
        }
    }
    // Declines are applied before copying: a large app declines thousands
    // of kept findings, which would be copied on every edit to be dropped.
    let mut declines = super::decline::Declines::new(cx);
    let mut findings = Vec::new();
    for (k, check) in checks.iter().enumerate() {
        match check {
            Check::Whole(_) => {
                if let Some(found) = whole.get_mut(k) {
                    findings.extend(found.drain(..).filter(|f| !declines.declines(f)));
                }
            }
            Check::PerAction(_) => {
                let found = by_check.get(k).map_or(&[][..], Vec::as_slice);
                let kept = found.iter().filter(|f| !declines.declines(f));
                findings.extend(kept.map(|f| (*f).clone()));
            }
        }
    }
    declines.report(&mut findings);
    cache.reused = judged.iter().filter(|j| j.1).count();
    cache.computed = judged.len() - cache.reused;
    cache.context = Some(context);
    cache.slots = (0..cx.program.actions.len()).map(|_| None).collect();
    for (&id, (judged, _)) in ids.iter().zip(judged) {
        if let Some(slot) = cache.slots.get_mut(id) {
            *slot = Some(judged);
        }
    }
    super::finish_declined(cx, findings)
}

/// One action's per-action findings: the last run's when its summary key
/// and header are the same, else judged now.
fn judge(
    cx: &Cx,
    moved: &IndexVec<EventId, bool>,
    old: &IndexVec<ActionId, Option<Arc<Judged>>>,
    id: ActionId,
) -> (Arc<Judged>, bool) {
    let summary = cx.analysed.key(id);
    let action = cx.program.actions.get(id);
    if let (Some(k), Some(a), Some(Some(last))) = (summary, action, old.get(id)) {
        if last.header.is(moved, k, a) {
            return (last.clone(), true);
        }
    }
    (Arc::new(judge_now(cx, id)), false)
}

/// Runs every per-action check on one action.
fn judge_now(cx: &Cx, id: ActionId) -> Judged {
    let mut by_check = Vec::new();
    for (k, check) in checks().into_iter().enumerate() {
        if let Check::PerAction(check) = check {
            let mut found = Vec::new();
            check(cx, id, &mut found);
            if !found.is_empty() {
                by_check.push((k, found));
            }
        }
    }
    Judged {
        header: header(cx, id),
        by_check,
    }
}

/// The action's summary key (none when the analysis kept no key: then
/// the findings are never reused) and header.
fn header(cx: &Cx, id: ActionId) -> Header {
    let action = cx.program.actions.get(id);
    Header {
        summary: cx.analysed.key(id),
        name_span: action.map_or(Span::default(), |a| a.name_span),
        span: action.map_or(Span::default(), |a| a.span),
        emitted: action.map(emitted).unwrap_or_default(),
    }
}

/// What every action's findings may read besides its own key: the scope,
/// the files' units (where findings may be reported), and the names of
/// packages, actions, operations, failures, entities and events (messages
/// name them; ids alone are in the summary keys).
fn context(cx: &Cx) -> Key {
    let mut w = Writer::default();
    match cx.scope {
        Scope::App => w.u8(0),
        Scope::Package(name) => {
            w.u8(1);
            w.str(name);
        }
    }
    w.u64(cx.files.len() as u64);
    for (_, file) in cx.files.iter() {
        match &file.unit {
            Unit::App => w.u8(0),
            Unit::Stdlib => w.u8(1),
            Unit::Package(name) => {
                w.u8(2);
                w.str(name);
            }
        }
    }
    let p = cx.program;
    names(&mut w, p.packages.iter().map(|x| x.name.as_str()));
    names(&mut w, p.actions.iter().map(|x| x.qualified.as_str()));
    names(&mut w, p.operations.iter().map(|x| x.qualified.as_str()));
    names(&mut w, p.failures.iter().map(|x| x.qualified.as_str()));
    names(&mut w, p.entities.iter().map(|x| x.qualified.as_str()));
    names(&mut w, p.events.iter().map(|x| x.qualified.as_str()));
    w.finish()
}

fn names<'a>(w: &mut Writer, list: impl ExactSizeIterator<Item = &'a str>) {
    w.u64(list.len() as u64);
    for name in list {
        w.str(name);
    }
}
