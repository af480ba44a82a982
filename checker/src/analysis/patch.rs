//! An analysis after an edit that changed few bodies and no call, at the
//! cost of the edit.
//!
//! A summary follows from its action's key: the program's context, its
//! body, and its callees' keys (`key.rs`). When the context is the one the
//! last analysis saw (the program keeps its context revision, or a fresh
//! resolution's context has the same key) and no body calls other actions
//! than it did, the call graph stands, and only the
//! keys of the changed bodies' components, and of the components calling
//! them whose keys change in turn, can differ. The last analysis is patched
//! there, callees first; everything else is kept as it is.
//! `checker/tests/incremental.rs` compares patched and fresh analyses.

use std::collections::BTreeSet;

use jadpo_compiler::index::IndexVec;
use jadpo_compiler::ir::{ActionId, Program};

use super::follow_up::FollowUps;
use super::key::Key;
use super::{callees, key, Analysed, Body, Cache, Graph, Keys, Memos, Slots, Summaries};

/// Past this share of changed bodies (and a few), the whole analysis is as
/// cheap.
const MOST: usize = 8;
const FEW: usize = 64;

/// The analysis of `program` patched from the last one, or `None` (the
/// cache untouched but for the last analysis, which is set aside to be
/// freed) when the edit changed the context, a call, or many bodies.
pub(super) fn run(program: &Program, cache: &mut Cache) -> Option<Analysed> {
    let last = cache.last.take()?;
    let read = same_context(program, cache)
        .then(|| changed_bodies(program, cache, &last))
        .flatten();
    let graph = cache.graph.clone();
    let (Some(read), Some(graph), Some((_, context))) = (read, graph, cache.context) else {
        cache.retired.keep(last);
        return None;
    };
    Some(patch(program, cache, (last, &graph, context), read))
}

/// Whether `program`'s context is the one the last analysis saw: the
/// same revision, or, after a fresh resolution (a new revision), the same
/// key (`key::context`), which is what every action's key holds of it.
/// The key is kept for the whole analysis when it differs.
fn same_context(program: &Program, cache: &mut Cache) -> bool {
    let Some((revision, last)) = cache.context else {
        return false;
    };
    if revision.is_known() && revision == program.context {
        return true;
    }
    let key = key::context(program);
    cache.context = Some((program.context, key));
    cache.across = key == last;
    key == last
}

/// The changed bodies read again, when the edit can be patched.
fn changed_bodies(
    program: &Program,
    cache: &Cache,
    last: &Analysed,
) -> Option<Vec<(ActionId, Body)>> {
    let n = program.actions.len();
    let graph = cache.graph.as_deref()?;
    let same_size = [
        cache.bodies.len(),
        cache.body_keys.len(),
        cache.entries.len(),
        cache.memos.list.len(),
        graph.place.len(),
        last.keys.len(),
    ]
    .iter()
    .all(|len| *len == n);
    if !same_size {
        return None;
    }
    let mut changed = Vec::new();
    for ((id, action), body) in program.actions.iter_enumerated().zip(cache.bodies.iter()) {
        if !action.revision.is_known() || action.revision != body.revision {
            changed.push(id);
            if changed.len() > n / MOST + FEW {
                return None;
            }
        }
    }
    let mut w = key::Writer::default();
    let mut read = Vec::with_capacity(changed.len());
    for id in changed {
        let action = program.actions.get(id)?;
        let calls = callees(&action.body);
        if graph.calls.get(id).map(Vec::as_slice) != Some(&calls[..]) {
            return None;
        }
        w.clear();
        key::block(&mut w, &action.body);
        let body = Body {
            revision: action.revision,
            key: w.finish(),
            calls: calls.into(),
        };
        read.push((id, body));
    }
    Some(read)
}

/// Keys and summarises again the components of the changed bodies, and of
/// their callers while keys change, callees first.
fn patch(
    program: &Program,
    cache: &mut Cache,
    (last, graph, context): (Analysed, &Graph, Key),
    read: Vec<(ActionId, Body)>,
) -> Analysed {
    let n = program.actions.len();
    let mut todo: BTreeSet<(u32, u32)> = BTreeSet::new();
    for (id, body) in read {
        if let Some(place) = graph.place.get(id) {
            todo.insert(*place);
        }
        if let Some(slot) = cache.body_keys.get_mut(id) {
            *slot = body.key;
        }
        if let Some(slot) = cache.bodies.get_mut(id) {
            *slot = body;
        }
    }
    let mut keys = Keys {
        on: true,
        context,
        bodies: std::mem::take(&mut cache.body_keys),
        list: last.keys,
        last: IndexVec::new(),
        memos: Memos {
            context: Some(context),
            list: std::mem::take(&mut cache.memos.list),
        },
        w: key::Writer::default(),
    };
    let mut slots = Slots {
        program,
        summaries: last.summaries,
        follow_ups: last.follow_ups.into_list(),
        previous: IndexVec::new(),
        kept: std::mem::take(&mut cache.entries),
        reused: 0,
        computed: 0,
    };
    while let Some((level, index)) = todo.pop_first() {
        let Some(comp) = graph
            .levels
            .get(level as usize)
            .and_then(|l| l.get(index as usize))
        else {
            continue;
        };
        let before: Vec<_> = comp.members.iter().map(|m| keys.get(*m)).collect();
        keys.component(&graph.calls, &comp.members, comp.cyclic);
        let moved: Vec<ActionId> = comp
            .members
            .iter()
            .zip(&before)
            .filter(|(m, old)| keys.get(**m) != **old)
            .map(|(m, _)| *m)
            .collect();
        if moved.is_empty() {
            continue;
        }
        // A cycle's members are summarised in id order, each seeing only
        // the members before it, as the whole analysis does.
        for m in &comp.members {
            slots.clear(*m);
        }
        for m in &comp.members {
            let entry = slots.compute(*m);
            slots.store(*m, keys.get(*m), entry);
        }
        for m in &moved {
            for caller in graph.callers.get(*m).map_or(&[][..], Vec::as_slice) {
                if let Some(place) = graph.place.get(*caller) {
                    todo.insert(*place);
                }
            }
        }
    }
    cache.entries = slots.kept;
    cache.computed = slots.computed;
    cache.reused = n.saturating_sub(slots.computed);
    cache.memos = keys.memos;
    cache.body_keys = keys.bodies;
    Analysed {
        summaries: Summaries {
            list: slots.summaries.list,
        },
        cycles: last.cycles,
        callers: graph.callers.clone(),
        follow_ups: FollowUps::from_list(slots.follow_ups),
        keys: keys.list,
    }
}
