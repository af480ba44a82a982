//! Per-action analysis, computed once per action, bottom-up over the call
//! graph: callees are summarised before their callers, and callers reuse the
//! summaries (package actions included). Cycles are found with strongly
//! connected components; inside a cycle a callee not yet summarised counts as
//! making no calls (the cycle itself is `effect.recursion`).

pub mod flow;
pub mod late;
pub mod misc;
pub mod rope;
pub mod values;

use jadpo_compiler::ir::{ActionId, Block, Handling, Node, Program, Target};
use jadpo_compiler::span::Span;
use petgraph::graph::{DiGraph, NodeIndex};

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
    list: Vec<Option<Summary>>,
}

impl Summaries {
    pub fn get(&self, id: ActionId) -> Option<&Summary> {
        self.list.get(id.0 as usize).and_then(Option::as_ref)
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

pub fn analyse(program: &Program) -> Analysed {
    let n = program.actions.len();
    let mut graph: DiGraph<(), ()> = DiGraph::with_capacity(n, n);
    for _ in 0..n {
        graph.add_node(());
    }
    let mut callers: Vec<Vec<ActionId>> = vec![Vec::new(); n];
    let mut self_calls = vec![false; n];
    for (i, action) in program.actions.iter().enumerate() {
        let mut calls = Vec::new();
        calls_in(&action.body, &mut calls);
        for (_, callee) in calls {
            let j = callee.0 as usize;
            if j >= n {
                continue;
            }
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
    }
    for list in &mut callers {
        list.sort();
        list.dedup();
    }
    let mut summaries = Summaries {
        list: vec![None; n],
    };
    let mut cycles = Vec::new();
    // Components come callees first (postorder). `kosaraju_scc` walks with an
    // explicit stack: a recursive walk overflows on long chains of calls.
    let mut order = Vec::with_capacity(n);
    for scc in petgraph::algo::kosaraju_scc(&graph) {
        let mut members: Vec<ActionId> = scc.iter().map(|ix| ActionId(ix.index() as u32)).collect();
        members.sort();
        let cyclic = members.len() > 1
            || members
                .first()
                .is_some_and(|a| self_calls.get(a.0 as usize).copied().unwrap_or(false));
        for &id in &members {
            let summary = summarise(program, &summaries, id);
            if let Some(slot) = summaries.list.get_mut(id.0 as usize) {
                *slot = Some(summary);
            }
        }
        order.extend(members.iter().copied());
        if cyclic {
            cycles.push(Cycle { members });
        }
    }
    cycles.sort_by(|a, b| a.members.cmp(&b.members));
    Analysed {
        follow_ups: crate::follow_up::analyse(program, &order),
        summaries,
        cycles,
        callers,
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
