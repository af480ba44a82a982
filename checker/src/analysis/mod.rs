//! Per-action analysis, computed once per action, bottom-up over the call
//! graph: callees are summarised before their callers, and callers reuse the
//! summaries (package actions included). Cycles are found with strongly
//! connected components; inside a cycle a callee not yet summarised counts as
//! making no calls (the cycle itself is `effect.recursion`).

pub mod flow;
pub mod follow_up;
pub mod key;
pub mod late;
pub mod misc;
mod patch;
pub mod rope;
pub mod values;

use jadpo_compiler::index::{Idx, IndexVec};
use jadpo_compiler::ir::{ActionId, Block, Node, Program, Revision, Target};
use jadpo_compiler::span::Span;
use petgraph::graph::{DiGraph, NodeIndex};
use std::sync::Arc;

use crate::analysis::follow_up::ActionFollowUps;
use key::Key;

use flow::{walk_block, OkFail};
use values::{
    Cost, CostLeaves, Count, CountLeaves, Large, LargeLeaves, Order, OrderLeaves, UStates,
    UnkeyedLeaves,
};

/// Everything the rules and the plan need to know about one action.
#[derive(Clone, Debug)]
pub struct Summary {
    pub count: OkFail<Count>,
    pub count_all: Option<Count>,
    pub unkeyed: OkFail<UStates>,
    pub unkeyed_all: Option<UStates>,
    pub cost: OkFail<Cost>,
    pub cost_all: Option<Cost>,
    pub order: OkFail<Order>,
    pub order_all: Option<Order>,
    pub large: OkFail<Large>,
    pub large_all: Option<Large>,
    pub late: late::Late,
    pub misc: misc::Misc,
}

impl Summary {
    /// Changing calls on the longest path.
    pub fn changing_calls(&self) -> u32 {
        self.count_all.as_ref().map_or(0, |c| c.n)
    }

    /// Sum of timeout x attempts on the most expensive path, in ms.
    pub fn deadline_budget_ms(&self) -> u64 {
        self.cost_all.as_ref().map_or(0, |c| c.ms)
    }
}

/// Summaries by action id.
#[derive(Clone, Debug, Default)]
pub struct Summaries {
    list: IndexVec<ActionId, Option<Arc<Summary>>>,
}

impl Summaries {
    pub fn get(&self, id: ActionId) -> Option<&Summary> {
        self.list.get(id).and_then(Option::as_deref)
    }
}

/// A cycle of actions calling each other.
#[derive(Clone, Debug)]
pub struct Cycle {
    /// Members, sorted by id.
    pub members: Vec<ActionId>,
}

pub struct Analysed {
    pub summaries: Summaries,
    pub cycles: Vec<Cycle>,
    /// Callers of each action, sorted, without repeats (shared with the
    /// cache while the call graph stands).
    pub callers: Arc<IndexVec<ActionId, Vec<ActionId>>>,
    /// Follow-up facts per action (`follow_up.*` rules and the plan).
    pub follow_ups: crate::analysis::follow_up::FollowUps,
    /// Each action's content key, when the analysis kept a cache (the
    /// rules' cache builds on them); empty otherwise.
    keys: IndexVec<ActionId, Option<Key>>,
}

impl Analysed {
    /// The content key of an action's summary, if the analysis made one.
    pub fn key(&self, id: ActionId) -> Option<Key> {
        self.keys.get(id).copied().flatten()
    }
}

impl Analysed {
    /// Frees the summaries on all threads: dropping a large program's
    /// summaries and ropes one by one costs a noticeable share of a check.
    pub fn release(self) {
        use rayon::prelude::*;
        let Analysed {
            summaries,
            follow_ups,
            ..
        } = self;
        rayon::join(
            || summaries.list.into_par_iter().for_each(drop),
            || follow_ups.release(),
        );
    }
}

/// The action calls in a body, in evaluation order.
pub fn calls_in(block: &Block, out: &mut Vec<(Span, ActionId)>) {
    block.for_each_node(&mut |node| {
        if let Node::Effect(e) = node {
            if let Target::Action(a) = e.target {
                out.push((e.span, a));
            }
        }
    });
}

/// Analyses every action from scratch.
pub fn analyse(program: &Program) -> Analysed {
    crate::pool::install(|| run(program, None))
}

/// Analyses every action, reusing from `cache` the summaries whose inputs
/// are unchanged since the last call, and keeping this run's for the next.
/// Gives exactly what [`analyse`] gives.
pub fn analyse_cached(program: &Program, cache: &mut Cache) -> Analysed {
    let analysed = crate::pool::install(|| run(program, Some(&mut *cache)));
    // Marks are per thread: the path is named here, on the caller's.
    if cache.patched {
        cov_mark::hit!(analysis_patches_the_last_one);
        if cache.across {
            cov_mark::hit!(analysis_patches_across_a_fresh_resolution);
        }
    } else if cache.reused > 0 {
        cov_mark::hit!(analysis_reuses_summaries);
    }
    analysed
}

/// What the last analysis leaves for the next: summaries (and follow-ups)
/// by action id with their content keys, the call graph, and how each key
/// was made.
#[derive(Default)]
pub struct Cache {
    entries: IndexVec<ActionId, Option<(Key, Arc<Cached>)>>,
    graph: Option<Arc<Graph>>,
    memos: Memos,
    /// Each body's key and calls, by the revision they were read from.
    bodies: IndexVec<ActionId, Body>,
    /// The same keys alone, as the keys of the last analysis read them.
    body_keys: IndexVec<ActionId, Key>,
    /// The program context the last analysis saw, and its key.
    context: Option<(Revision, Key)>,
    /// The last analysis, handed back to be patched after an edit
    /// (`patch.rs`).
    last: Option<Analysed>,
    /// Actions whose summary was reused in the last analysis.
    pub reused: usize,
    /// Actions summarised afresh in the last analysis.
    pub computed: usize,
    /// Whether the last analysis patched the one before it (`patch.rs`).
    pub patched: bool,
    /// Whether it did so across a fresh resolution whose context reads
    /// the same (`patch::same_context`).
    across: bool,
    /// An analysis no longer needed, to be freed once the editor has its
    /// answer ([`Cache::retire`]), not while the next one runs.
    retired: jadpo_compiler::retire::Retired<Analysed>,
}

struct Cached {
    summary: Arc<Summary>,
    follow_ups: Arc<ActionFollowUps>,
}

/// What was read from an action's body: its key and its callees. A body
/// of the same [`Revision`] is the same body, so they are read once.
#[derive(Clone)]
struct Body {
    revision: Revision,
    key: Key,
    /// Shared: every edit copies the whole list of bodies.
    calls: Arc<[ActionId]>,
}

/// The call graph, with its components grouped in levels.
struct Graph {
    /// Callees of each action, in body order.
    calls: Calls,
    callers: Arc<Calls>,
    levels: Vec<Vec<Component>>,
    /// Each action's component: its level and its index in the level.
    place: IndexVec<ActionId, (u32, u32)>,
}

/// Each action's callees, in body order.
pub type Calls = IndexVec<ActionId, Vec<ActionId>>;

/// The calls found in each body, on all threads.
fn calls_of(program: &Program) -> Calls {
    use rayon::prelude::*;
    program
        .actions
        .par_iter()
        .map(|action| callees(&action.body))
        .collect::<Vec<_>>()
        .into()
}

/// The actions a body calls, in evaluation order.
fn callees(block: &Block) -> Vec<ActionId> {
    let mut out = Vec::new();
    calls_in(block, &mut out);
    out.into_iter().map(|(_, a)| a).collect()
}

/// Each action's body key and callees, read again only where the body's
/// revision is not the one `last` read.
fn read_bodies(program: &Program, last: &IndexVec<ActionId, Body>) -> IndexVec<ActionId, Body> {
    use rayon::prelude::*;
    program
        .actions
        .par_iter()
        .enumerate()
        .map_init(key::Writer::default, |w, (i, action)| {
            match last.get(ActionId::from_usize(i)) {
                Some(b) if action.revision.is_known() && b.revision == action.revision => b.clone(),
                _ => {
                    w.clear();
                    key::block(w, &action.body);
                    Body {
                        revision: action.revision,
                        key: w.finish(),
                        calls: callees(&action.body).into(),
                    }
                }
            }
        })
        .collect::<Vec<_>>()
        .into()
}

/// Whether the graph's calls are the bodies' (the graph drops calls to ids
/// past the last action, which the bodies never hold: resolved calls name
/// declared actions).
fn same_calls(calls: &Calls, bodies: &IndexVec<ActionId, Body>) -> bool {
    calls.len() == bodies.len()
        && calls
            .iter()
            .zip(bodies.iter())
            .all(|(c, b)| c[..] == b.calls[..])
}

/// The call graph over `calls` (callees of each action, in body order;
/// ids past the last action are left out).
fn call_graph(mut calls: Calls) -> Graph {
    let n = calls.len();
    let mut graph: DiGraph<(), ()> = DiGraph::with_capacity(n, n);
    for _ in 0..n {
        graph.add_node(());
    }
    let mut callers: Calls = vec![Vec::new(); n].into();
    let mut self_calls: IndexVec<ActionId, bool> = vec![false; n].into();
    for (i, callees) in calls.as_vec_mut().iter_mut().enumerate() {
        let caller = ActionId::from_usize(i);
        callees.retain(|c| c.index() < n);
        for &callee in callees.iter() {
            graph.add_edge(NodeIndex::new(i), NodeIndex::new(callee.index()), ());
            if let Some(list) = callers.get_mut(callee) {
                list.push(caller);
            }
            if caller == callee {
                if let Some(flag) = self_calls.get_mut(caller) {
                    *flag = true;
                }
            }
        }
    }
    for list in &mut callers {
        list.sort();
        list.dedup();
    }
    let levels = levels(&graph, &calls, &self_calls);
    let mut place: IndexVec<ActionId, (u32, u32)> = vec![(0, 0); n].into();
    for (l, comps) in levels.iter().enumerate() {
        for (c, comp) in comps.iter().enumerate() {
            for m in &comp.members {
                if let Some(slot) = place.get_mut(*m) {
                    *slot = (l as u32, c as u32);
                }
            }
        }
    }
    Graph {
        calls,
        callers: Arc::new(callers),
        levels,
        place,
    }
}

/// One strongly connected component of the call graph.
struct Component {
    /// Members, sorted by id.
    members: Vec<ActionId>,
    /// Its members call each other (or the one member calls itself).
    cyclic: bool,
}

/// The components callees first, grouped in levels: a component's level is
/// one more than the highest level of the components it calls, so the
/// components of one level depend only on lower levels and can be
/// summarised at the same time.
fn levels(
    graph: &DiGraph<(), ()>,
    calls: &Calls,
    self_calls: &IndexVec<ActionId, bool>,
) -> Vec<Vec<Component>> {
    // `kosaraju_scc` gives components callees first (postorder) and walks
    // with an explicit stack: a recursive walk overflows on long call chains.
    let sccs = petgraph::algo::kosaraju_scc(graph);
    let mut comp_of: IndexVec<ActionId, usize> = vec![0usize; calls.len()].into();
    for (c, scc) in sccs.iter().enumerate() {
        for ix in scc {
            if let Some(slot) = comp_of.get_mut(ActionId::from_usize(ix.index())) {
                *slot = c;
            }
        }
    }
    let mut level_of = vec![0usize; sccs.len()];
    let mut out: Vec<Vec<Component>> = Vec::new();
    for (c, scc) in sccs.into_iter().enumerate() {
        let mut members: Vec<ActionId> = scc
            .iter()
            .map(|ix| ActionId::from_usize(ix.index()))
            .collect();
        members.sort();
        let mut level = 0;
        for m in &members {
            for callee in calls.get(*m).map_or(&[][..], Vec::as_slice) {
                let d = comp_of.get(*callee).copied().unwrap_or(c);
                if d != c {
                    level = level.max(level_of.get(d).copied().unwrap_or(0) + 1);
                }
            }
        }
        if let Some(slot) = level_of.get_mut(c) {
            *slot = level;
        }
        let cyclic = members.len() > 1
            || members
                .first()
                .is_some_and(|a| self_calls.get(*a).copied().unwrap_or(false));
        if out.len() <= level {
            out.resize_with(level + 1, Vec::new);
        }
        if let Some(list) = out.get_mut(level) {
            list.push(Component { members, cyclic });
        }
    }
    out
}

/// The summaries built so far, by action id, and the cache bookkeeping.
struct Slots<'p> {
    program: &'p Program,
    summaries: Summaries,
    follow_ups: follow_up::Done,
    previous: IndexVec<ActionId, Option<(Key, Arc<Cached>)>>,
    kept: IndexVec<ActionId, Option<(Key, Arc<Cached>)>>,
    reused: usize,
    computed: usize,
}

impl Slots<'_> {
    /// Takes the last analysis's entry for `id` when it has `key`, and
    /// fills the slots with it. The entry moves to the cache's list
    /// instead of being shared and dropped: a large app reuses tens of
    /// thousands on every edit.
    fn reuse(&mut self, id: ActionId, key: Option<Key>) -> bool {
        let Some(k) = key else { return false };
        let Some(slot) = self.previous.get_mut(id) else {
            return false;
        };
        if !matches!(slot, Some((old, _)) if *old == k) {
            return false;
        }
        let Some((_, entry)) = slot.take() else {
            return false;
        };
        self.reused += 1;
        self.fill(id, &entry);
        if let Some(slot) = self.kept.get_mut(id) {
            *slot = Some((k, entry));
        }
        true
    }

    /// Summarises one action from the slots filled so far.
    fn compute(&self, id: ActionId) -> Arc<Cached> {
        let body = &self.program.action(id).body;
        Arc::new(Cached {
            summary: Arc::new(summarise(self.program, &self.summaries, id)),
            follow_ups: Arc::new(crate::analysis::follow_up::summarise(
                self.program,
                &self.follow_ups,
                body,
            )),
        })
    }

    /// Fills the slots with an entry computed now, keeping it for the next
    /// analysis.
    fn store(&mut self, id: ActionId, key: Option<Key>, entry: Arc<Cached>) {
        self.computed += 1;
        self.fill(id, &entry);
        if let (Some(k), Some(slot)) = (key, self.kept.get_mut(id)) {
            *slot = Some((k, entry));
        }
    }

    /// Empties the slots of `id`, to summarise it again.
    fn clear(&mut self, id: ActionId) {
        if let Some(slot) = self.summaries.list.get_mut(id) {
            *slot = None;
        }
        if let Some(slot) = self.follow_ups.get_mut(id) {
            *slot = None;
        }
    }

    fn fill(&mut self, id: ActionId, entry: &Cached) {
        if let Some(slot) = self.summaries.list.get_mut(id) {
            *slot = Some(entry.summary.clone());
        }
        if let Some(slot) = self.follow_ups.get_mut(id) {
            *slot = Some(entry.follow_ups.clone());
        }
    }

    /// One level: every action outside a cycle at once (each reads only
    /// lower levels), then each cycle's members in id order, each seeing the
    /// members before it.
    fn level(&mut self, keys: &Keys, comps: &[Component]) {
        use rayon::prelude::*;
        let mut todo = Vec::new();
        for comp in comps.iter().filter(|c| !c.cyclic) {
            for &id in &comp.members {
                if !self.reuse(id, keys.get(id)) {
                    todo.push(id);
                }
            }
        }
        let this = &*self;
        let done: Vec<Arc<Cached>> = todo.par_iter().map(|&id| this.compute(id)).collect();
        for (id, entry) in todo.into_iter().zip(done) {
            self.store(id, keys.get(id), entry);
        }
        for comp in comps.iter().filter(|c| c.cyclic) {
            for &id in &comp.members {
                let key = keys.get(id);
                if !self.reuse(id, key) {
                    let entry = self.compute(id);
                    self.store(id, key, entry);
                }
            }
        }
    }
}

impl Cache {
    /// Hands back the last analysis this cache made, for the next one to
    /// patch when an edit changed few bodies.
    pub fn give_back(&mut self, last: Analysed) {
        self.last = Some(last);
    }

    /// Frees, on another thread, the analysis set aside.
    pub fn retire(&mut self) {
        self.retired.free();
    }

    /// The key of `program`'s context: the last one when the program says
    /// its context is the one the last analysis saw.
    fn context(&mut self, program: &Program) -> Key {
        match self.context {
            Some((revision, key)) if revision.is_known() && revision == program.context => key,
            _ => {
                let key = key::context(program);
                self.context = Some((program.context, key));
                key
            }
        }
    }
}

/// [`analyse`] or [`analyse_cached`], on the calling thread's pool.
pub(crate) fn run(program: &Program, mut cache: Option<&mut Cache>) -> Analysed {
    if let Some(c) = cache.as_deref_mut() {
        c.patched = false;
        c.across = false;
        if let Some(analysed) = patch::run(program, c) {
            c.patched = true;
            return analysed;
        }
    }
    let n = program.actions.len();
    let last_graph = cache.as_mut().and_then(|c| c.graph.take());
    let last_memos = cache
        .as_mut()
        .map(|c| std::mem::take(&mut c.memos))
        .unwrap_or_default();
    let (mut keys, g) = match cache.as_deref_mut() {
        Some(c) => {
            c.bodies = read_bodies(program, &c.bodies);
            // The graph of the last analysis stands while no call changed;
            // the calls are copied only to build a new one.
            let g = match last_graph {
                Some(g) if same_calls(&g.calls, &c.bodies) => g,
                _ => Arc::new(call_graph(
                    c.bodies.iter().map(|b| b.calls.to_vec()).collect(),
                )),
            };
            let context = c.context(program);
            (Keys::new(n, Some((&c.bodies, context)), last_memos), g)
        }
        None => {
            let g = Arc::new(call_graph(calls_of(program)));
            (Keys::new(n, None, last_memos), g)
        }
    };
    let mut slots = Slots {
        program,
        summaries: Summaries {
            list: vec![None; n].into(),
        },
        follow_ups: vec![None; n].into(),
        previous: cache
            .as_mut()
            .map(|c| std::mem::take(&mut c.entries))
            .unwrap_or_default(),
        kept: if cache.is_some() {
            vec![None; n].into()
        } else {
            IndexVec::new()
        },
        reused: 0,
        computed: 0,
    };
    let mut cycles = Vec::new();
    for comps in &g.levels {
        for comp in comps {
            keys.component(&g.calls, &comp.members, comp.cyclic);
        }
        slots.level(&keys, comps);
        cycles.extend(comps.iter().filter(|c| c.cyclic).map(|c| Cycle {
            members: c.members.clone(),
        }));
    }
    let callers = g.callers.clone();
    let Keys {
        list,
        memos,
        bodies,
        ..
    } = keys;
    if let Some(c) = cache {
        c.entries = slots.kept;
        c.reused = slots.reused;
        c.computed = slots.computed;
        c.graph = Some(g);
        c.memos = memos;
        c.body_keys = bodies;
    }
    cycles.sort_by(|a, b| a.members.cmp(&b.members));
    Analysed {
        follow_ups: crate::analysis::follow_up::FollowUps::from_list(slots.follow_ups),
        summaries: slots.summaries,
        cycles,
        callers,
        keys: list,
    }
}

/// How the key of an action outside a cycle was made, by action id: with
/// the same context, body and callees' keys it is the same key, found
/// without hashing again.
#[derive(Default)]
struct Memos {
    context: Option<Key>,
    list: IndexVec<ActionId, Option<Memo>>,
}

struct Memo {
    body: Key,
    callees: Vec<Key>,
    key: Key,
}

/// The content keys of the actions summarised so far (none when no cache
/// is kept: hashing is then wasted work).
struct Keys {
    on: bool,
    context: Key,
    /// Each action's body alone, hashed up front on all threads.
    bodies: IndexVec<ActionId, Key>,
    list: IndexVec<ActionId, Option<Key>>,
    /// The last analysis's memos (when its context was the same), and this
    /// one's.
    last: IndexVec<ActionId, Option<Memo>>,
    memos: Memos,
    w: key::Writer,
}

impl Keys {
    /// The keys' starting point: with `bodies` read and the context's key
    /// (a cache is kept), keys are made; without, they are not needed.
    fn new(n: usize, bodies: Option<(&[Body], Key)>, last: Memos) -> Keys {
        let on = bodies.is_some();
        let context = bodies.map_or_else(|| blake3::hash(&[]), |(_, k)| k);
        let bodies: Vec<Key> = bodies
            .map(|(b, _)| b)
            .unwrap_or_default()
            .iter()
            .map(|b| b.key)
            .collect();
        let last = if last.context == Some(context) {
            last.list
        } else {
            IndexVec::new()
        };
        Keys {
            on,
            context,
            bodies: bodies.into(),
            list: if on {
                vec![None; n].into()
            } else {
                IndexVec::new()
            },
            last,
            memos: Memos {
                context: Some(context),
                list: if on {
                    (0..n).map(|_| None).collect()
                } else {
                    IndexVec::new()
                },
            },
            w: key::Writer::default(),
        }
    }

    fn get(&self, id: ActionId) -> Option<Key> {
        self.list.get(id).copied().flatten()
    }

    /// Keys the members of one component. An action outside a cycle is
    /// keyed by its id, body and callees' keys; the members of a cycle
    /// together, since each one's summary depends on the others' bodies.
    fn component(&mut self, calls: &Calls, members: &[ActionId], cyclic: bool) {
        if !self.on {
            return;
        }
        let none = blake3::hash(&[]);
        if let (false, &[id]) = (cyclic, members) {
            self.single(calls, id, none);
            return;
        }
        self.w.clear();
        self.w.key(&self.context);
        self.w.u8(u8::from(cyclic));
        for &id in members {
            self.w.u32(id.0);
            let body = self.bodies.get(id).copied().unwrap_or(none);
            self.w.key(&body);
            for callee in calls.get(id).map_or(&[][..], Vec::as_slice) {
                self.w.u32(callee.0);
                if !members.contains(callee) {
                    let k = self.get(*callee).unwrap_or(none);
                    self.w.key(&k);
                }
            }
        }
        let shared = self.w.finish();
        for &id in members {
            let k = if cyclic {
                self.w.clear();
                self.w.key(&shared);
                self.w.u32(id.0);
                self.w.finish()
            } else {
                shared
            };
            if let Some(slot) = self.list.get_mut(id) {
                *slot = Some(k);
            }
        }
    }

    /// Keys an action outside a cycle: the bytes are those `component`
    /// writes for it; the last analysis's key stands when the body and the
    /// callees' keys are the same.
    fn single(&mut self, calls: &Calls, id: ActionId, none: Key) {
        let body = self.bodies.get(id).copied().unwrap_or(none);
        let callees = calls.get(id).map_or(&[][..], Vec::as_slice);
        let last = self.last.get_mut(id).and_then(Option::take);
        let memo = match last {
            Some(m)
                if m.body == body
                    && m.callees.len() == callees.len()
                    && m.callees
                        .iter()
                        .zip(callees)
                        .all(|(k, c)| *k == self.get(*c).unwrap_or(none)) =>
            {
                m
            }
            _ => {
                let callee_keys: Vec<Key> = callees
                    .iter()
                    .map(|c| self.get(*c).unwrap_or(none))
                    .collect();
                self.w.clear();
                self.w.key(&self.context);
                self.w.u8(0);
                self.w.u32(id.0);
                self.w.key(&body);
                for (callee, k) in callees.iter().zip(&callee_keys) {
                    self.w.u32(callee.0);
                    self.w.key(k);
                }
                Memo {
                    body,
                    callees: callee_keys,
                    key: self.w.finish(),
                }
            }
        };
        if let Some(slot) = self.list.get_mut(id) {
            *slot = Some(memo.key);
        }
        if let Some(slot) = self.memos.list.get_mut(id) {
            *slot = Some(memo);
        }
    }
}

fn summarise(program: &Program, summaries: &Summaries, id: ActionId) -> Summary {
    let body = &program.action(id).body;
    let count = walk_block(&mut CountLeaves { program, summaries }, body);
    let unkeyed = walk_block(&mut UnkeyedLeaves { program, summaries }, body);
    let cost = walk_block(&mut CostLeaves { program, summaries }, body);
    let order = walk_block(&mut OrderLeaves { summaries }, body);
    let large = walk_block(&mut LargeLeaves { program, summaries }, body);
    Summary {
        count_all: count.all(),
        count: count.ok_fail(),
        unkeyed_all: unkeyed.all(),
        unkeyed: unkeyed.ok_fail(),
        cost_all: cost.all(),
        cost: cost.ok_fail(),
        order_all: order.all(),
        order: order.ok_fail(),
        large_all: large.all(),
        large: large.ok_fail(),
        late: late::analyse(program, summaries, body),
        misc: misc::analyse(program, summaries, body),
    }
}
