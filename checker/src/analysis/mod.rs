//! Per-action analysis, computed once per action, bottom-up over the call
//! graph: callees are summarised before their callers, and callers reuse the
//! summaries (package actions included). Cycles are found with strongly
//! connected components; inside a cycle a callee not yet summarised counts as
//! making no calls (the cycle itself is `effect.recursion`).

pub mod flow;
pub mod key;
pub mod late;
pub mod misc;
pub mod rope;
pub mod values;

use jadpo_compiler::ir::{ActionId, Block, Handling, Node, Program, Target};
use jadpo_compiler::span::Span;
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::HashMap;
use std::sync::Arc;

use crate::follow_up::ActionFollowUps;
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
    list: Vec<Option<Arc<Summary>>>,
}

impl Summaries {
    pub fn get(&self, id: ActionId) -> Option<&Summary> {
        self.list.get(id.0 as usize).and_then(Option::as_deref)
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
    /// Callers of each action, sorted, without repeats.
    pub callers: Vec<Vec<ActionId>>,
    /// Follow-up facts per action (`follow_up.*` rules and the plan).
    pub follow_ups: crate::follow_up::FollowUps,
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
    for node in &block.nodes {
        match node {
            Node::Effect(e) => {
                if let Target::Action(a) = e.target {
                    out.push((e.span, a));
                }
                if let Handling::Match(arms) = &e.handling {
                    for arm in arms {
                        calls_in(&arm.body, out);
                    }
                }
            }
            Node::If {
                then_block,
                else_block,
                ..
            } => {
                calls_in(then_block, out);
                calls_in(else_block, out);
            }
            Node::Loop { body, .. } => calls_in(body, out),
            Node::Emit(_) | Node::Reject(_) | Node::Return(_) => {}
        }
    }
}

/// Analyses every action from scratch.
pub fn analyse(program: &Program) -> Analysed {
    crate::pool::install(|| run(program, None))
}

/// Analyses every action, reusing from `cache` the summaries whose inputs
/// are unchanged since the last call, and keeping this run's for the next.
/// Gives exactly what [`analyse`] gives.
pub fn analyse_cached(program: &Program, cache: &mut Cache) -> Analysed {
    crate::pool::install(|| run(program, Some(cache)))
}

/// Summaries (and follow-ups) of the last analysis, by content key.
#[derive(Default)]
pub struct Cache {
    entries: HashMap<Key, Arc<Cached>>,
    /// Actions whose summary was reused in the last analysis.
    pub reused: usize,
    /// Actions summarised afresh in the last analysis.
    pub computed: usize,
}

struct Cached {
    summary: Arc<Summary>,
    follow_ups: Arc<ActionFollowUps>,
}

/// The call graph: callees of each action in body order, callers sorted.
struct Graph {
    calls: Vec<Vec<ActionId>>,
    callers: Vec<Vec<ActionId>>,
    self_calls: Vec<bool>,
    graph: DiGraph<(), ()>,
}

fn call_graph(program: &Program) -> Graph {
    let n = program.actions.len();
    let mut graph: DiGraph<(), ()> = DiGraph::with_capacity(n, n);
    for _ in 0..n {
        graph.add_node(());
    }
    let mut calls = Vec::with_capacity(n);
    let mut callers: Vec<Vec<ActionId>> = vec![Vec::new(); n];
    let mut self_calls = vec![false; n];
    // Bodies are walked on all threads; the graph is built in id order.
    let found: Vec<Vec<(Span, ActionId)>> = {
        use rayon::prelude::*;
        program
            .actions
            .par_iter()
            .map(|action| {
                let mut out = Vec::new();
                calls_in(&action.body, &mut out);
                out
            })
            .collect()
    };
    for (i, found) in found.iter().enumerate() {
        let mut callees = Vec::with_capacity(found.len());
        for &(_, callee) in found {
            let j = callee.0 as usize;
            if j >= n {
                continue;
            }
            callees.push(callee);
            graph.add_edge(NodeIndex::new(i), NodeIndex::new(j), ());
            if let Some(list) = callers.get_mut(j) {
                list.push(ActionId(i as u32));
            }
            if i == j {
                if let Some(flag) = self_calls.get_mut(i) {
                    *flag = true;
                }
            }
        }
        calls.push(callees);
    }
    for list in &mut callers {
        list.sort();
        list.dedup();
    }
    Graph {
        calls,
        callers,
        self_calls,
        graph,
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
fn levels(g: &Graph) -> Vec<Vec<Component>> {
    // `kosaraju_scc` gives components callees first (postorder) and walks
    // with an explicit stack: a recursive walk overflows on long call chains.
    let sccs = petgraph::algo::kosaraju_scc(&g.graph);
    let mut comp_of = vec![0usize; g.calls.len()];
    for (c, scc) in sccs.iter().enumerate() {
        for ix in scc {
            if let Some(slot) = comp_of.get_mut(ix.index()) {
                *slot = c;
            }
        }
    }
    let mut level_of = vec![0usize; sccs.len()];
    let mut out: Vec<Vec<Component>> = Vec::new();
    for (c, scc) in sccs.into_iter().enumerate() {
        let mut members: Vec<ActionId> = scc.iter().map(|ix| ActionId(ix.index() as u32)).collect();
        members.sort();
        let mut level = 0;
        for m in &members {
            for callee in g.calls.get(m.0 as usize).map_or(&[][..], Vec::as_slice) {
                let d = comp_of.get(callee.0 as usize).copied().unwrap_or(c);
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
                .is_some_and(|a| g.self_calls.get(a.0 as usize).copied().unwrap_or(false));
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
    follow_ups: Vec<Option<Arc<ActionFollowUps>>>,
    previous: HashMap<Key, Arc<Cached>>,
    kept: HashMap<Key, Arc<Cached>>,
    reused: usize,
    computed: usize,
}

impl Slots<'_> {
    /// The cached entry for `key`, if the last analysis left one.
    fn reuse(&mut self, key: Option<Key>) -> Option<Arc<Cached>> {
        let k = key?;
        let entry = self.previous.get(&k)?.clone();
        self.reused += 1;
        self.kept.insert(k, entry.clone());
        Some(entry)
    }

    /// Summarises one action from the slots filled so far.
    fn compute(&self, id: ActionId) -> Arc<Cached> {
        let body = &self.program.action(id).body;
        Arc::new(Cached {
            summary: Arc::new(summarise(self.program, &self.summaries, id)),
            follow_ups: Arc::new(crate::follow_up::summarise(
                self.program,
                &self.follow_ups,
                body,
            )),
        })
    }

    fn store(&mut self, id: ActionId, key: Option<Key>, entry: Arc<Cached>, fresh: bool) {
        if fresh {
            self.computed += 1;
            if let Some(k) = key {
                self.kept.insert(k, entry.clone());
            }
        }
        if let Some(slot) = self.summaries.list.get_mut(id.0 as usize) {
            *slot = Some(entry.summary.clone());
        }
        if let Some(slot) = self.follow_ups.get_mut(id.0 as usize) {
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
                let key = keys.get(id);
                match self.reuse(key) {
                    Some(entry) => self.store(id, key, entry, false),
                    None => todo.push(id),
                }
            }
        }
        let this = &*self;
        let done: Vec<Arc<Cached>> = todo.par_iter().map(|&id| this.compute(id)).collect();
        for (id, entry) in todo.into_iter().zip(done) {
            self.store(id, keys.get(id), entry, true);
        }
        for comp in comps.iter().filter(|c| c.cyclic) {
            for &id in &comp.members {
                let key = keys.get(id);
                match self.reuse(key) {
                    Some(entry) => self.store(id, key, entry, false),
                    None => {
                        let entry = self.compute(id);
                        self.store(id, key, entry, true);
                    }
                }
            }
        }
    }
}

fn run(program: &Program, mut cache: Option<&mut Cache>) -> Analysed {
    let n = program.actions.len();
    let g = call_graph(program);
    let mut keys = Keys::new(program, n, cache.is_some());
    let mut slots = Slots {
        program,
        summaries: Summaries {
            list: vec![None; n],
        },
        follow_ups: vec![None; n],
        previous: cache
            .as_mut()
            .map(|c| std::mem::take(&mut c.entries))
            .unwrap_or_default(),
        kept: HashMap::new(),
        reused: 0,
        computed: 0,
    };
    let mut cycles = Vec::new();
    for comps in levels(&g) {
        for comp in &comps {
            keys.component(&g.calls, &comp.members, comp.cyclic);
        }
        slots.level(&keys, &comps);
        cycles.extend(
            comps
                .into_iter()
                .filter(|c| c.cyclic)
                .map(|c| Cycle { members: c.members }),
        );
    }
    if let Some(c) = cache {
        c.entries = slots.kept;
        c.reused = slots.reused;
        c.computed = slots.computed;
    }
    cycles.sort_by(|a, b| a.members.cmp(&b.members));
    Analysed {
        follow_ups: crate::follow_up::FollowUps::from_list(slots.follow_ups),
        summaries: slots.summaries,
        cycles,
        callers: g.callers,
    }
}

/// The content keys of the actions summarised so far (none when no cache
/// is kept: hashing is then wasted work).
struct Keys {
    on: bool,
    context: Key,
    /// Each action's body alone, hashed up front on all threads.
    bodies: Vec<Key>,
    list: Vec<Option<Key>>,
    w: key::Writer,
}

impl Keys {
    fn new(program: &Program, n: usize, on: bool) -> Keys {
        use rayon::prelude::*;
        let bodies = if on {
            program
                .actions
                .par_iter()
                .map_init(key::Writer::default, |w, action| {
                    w.clear();
                    key::block(w, &action.body);
                    w.finish()
                })
                .collect()
        } else {
            Vec::new()
        };
        Keys {
            on,
            context: if on {
                key::context(program)
            } else {
                blake3::hash(&[])
            },
            bodies,
            list: if on { vec![None; n] } else { Vec::new() },
            w: key::Writer::default(),
        }
    }

    fn get(&self, id: ActionId) -> Option<Key> {
        self.list.get(id.0 as usize).copied().flatten()
    }

    /// Keys the members of one component. An action outside a cycle is
    /// keyed by its id, body and callees' keys; the members of a cycle
    /// together, since each one's summary depends on the others' bodies.
    fn component(&mut self, calls: &[Vec<ActionId>], members: &[ActionId], cyclic: bool) {
        if !self.on {
            return;
        }
        let none = blake3::hash(&[]);
        self.w.clear();
        self.w.key(&self.context);
        self.w.u8(u8::from(cyclic));
        for &id in members {
            self.w.u32(id.0);
            let body = self.bodies.get(id.0 as usize).copied().unwrap_or(none);
            self.w.key(&body);
            for callee in calls.get(id.0 as usize).map_or(&[][..], Vec::as_slice) {
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
            if let Some(slot) = self.list.get_mut(id.0 as usize) {
                *slot = Some(k);
            }
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
