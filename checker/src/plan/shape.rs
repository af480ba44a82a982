//! An action's steps as a graph, for the plan: every outside call instance
//! (calls inside called actions are expanded at each call site), edges for
//! "may directly follow", each call's possible step numbers, and the
//! step-shape digest.
//!
//! The digest hashes only the operations and how they may follow each other,
//! as a Merkle hash over the graph (a node's hash covers its operation and
//! the hashes of what may follow it). It never sees spans, names, writes,
//! failure mappings or code without outside calls. Failure exits and returns
//! add no edges: a shorter path is a prefix of a longer one. Reads that come
//! before every changing call are not steps and not part of the shape.

use std::collections::BTreeSet;

use jadpo_compiler::ir::{
    ActionId, ArmEnd, ArmPattern, Block, Effect, Handling, Node, OpId, Program, Target,
};
use jadpo_compiler::span::Span;

/// Expansion stops after this many effects visited: calls of called
/// actions are expanded at every call site, which can grow exponentially
/// with nesting, and a program this large is already over every limit.
const MAX_WORK: usize = 2_000;

#[derive(Clone, Debug)]
pub struct CallNode {
    pub op: OpId,
    pub span: Span,
    /// Action calls leading to it, outermost first.
    pub via: Vec<(Span, ActionId)>,
}

/// Predecessor sets; `None` stands for the action's start.
type Front = BTreeSet<Option<usize>>;

#[derive(Default)]
struct Out {
    through: Front,
    ret: Front,
    fail: Front,
}

#[derive(Default)]
struct Builder {
    nodes: Vec<CallNode>,
    succ: Vec<BTreeSet<usize>>,
    starts: BTreeSet<usize>,
    stack: Vec<ActionId>,
    via: Vec<(Span, ActionId)>,
    /// Effects visited so far, against [`MAX_WORK`].
    work: usize,
}

/// A step of the plan: a call node that is a step on some path.
#[derive(Clone, Debug)]
pub struct Step {
    pub node: CallNode,
    /// Possible step numbers (1-based) over the paths reaching it.
    pub first: u32,
    pub last: u32,
}

#[derive(Clone, Debug, Default)]
pub struct StepGraph {
    pub steps: Vec<Step>,
    /// Steps that can be the first step.
    pub starts: Vec<usize>,
    /// (from, to) in step indexes.
    pub edges: Vec<(usize, usize)>,
    /// Whether the expansion stopped at [`MAX_WORK`].
    pub truncated: bool,
}

pub fn build(program: &Program, action: ActionId) -> StepGraph {
    let mut b = Builder::default();
    b.stack.push(action);
    let start: Front = [None].into_iter().collect();
    let _ = b.block(program, &program.action(action).body, start);
    let truncated = b.work > MAX_WORK;
    restrict_to_steps(program, &b, truncated)
}

impl Builder {
    fn link(&mut self, front: &Front, to: usize) {
        for from in front {
            match from {
                None => {
                    self.starts.insert(to);
                }
                Some(f) => {
                    if let Some(s) = self.succ.get_mut(*f) {
                        s.insert(to);
                    }
                }
            }
        }
    }

    fn block(&mut self, p: &Program, block: &Block, front: Front) -> Out {
        let mut out = Out {
            through: front,
            ..Out::default()
        };
        for node in &block.nodes {
            if out.through.is_empty() {
                break;
            }
            let front = std::mem::take(&mut out.through);
            let next = self.node(p, node, front);
            out.through = next.through;
            out.ret.extend(next.ret);
            out.fail.extend(next.fail);
        }
        out
    }

    fn node(&mut self, p: &Program, node: &Node, front: Front) -> Out {
        match node {
            Node::Effect(e) => self.effect(p, e, front),
            Node::Emit(_) => Out {
                through: front,
                ..Out::default()
            },
            Node::Reject(_) => Out {
                fail: front,
                ..Out::default()
            },
            Node::Return(_) => Out {
                ret: front,
                ..Out::default()
            },
            Node::If {
                then_block,
                else_block,
                ..
            } => {
                let mut a = self.block(p, then_block, front.clone());
                let b = self.block(p, else_block, front);
                a.through.extend(b.through);
                a.ret.extend(b.ret);
                a.fail.extend(b.fail);
                a
            }
            Node::Loop { body, .. } => {
                let mut out = self.block(p, body, front.clone());
                out.through.extend(front);
                out
            }
        }
    }

    fn effect(&mut self, p: &Program, e: &Effect, front: Front) -> Out {
        self.work += 1;
        let within = self.work <= MAX_WORK;
        let (ok, fail) = match &e.target {
            Target::Op(op) if within => {
                let id = self.nodes.len();
                self.nodes.push(CallNode {
                    op: *op,
                    span: e.span,
                    via: self.via.clone(),
                });
                self.succ.push(BTreeSet::new());
                self.link(&front, id);
                let only: Front = [Some(id)].into_iter().collect();
                (only.clone(), only)
            }
            Target::Action(a) if within && !self.stack.contains(a) => {
                self.stack.push(*a);
                self.via.push((e.span, *a));
                let out = self.block(p, &p.action(*a).body, front);
                self.via.pop();
                self.stack.pop();
                let mut ok = out.through;
                ok.extend(out.ret);
                (ok, out.fail)
            }
            _ => (front.clone(), front),
        };
        let arms = match &e.handling {
            Handling::Match(arms) => arms,
            Handling::Attempt(_) | Handling::Unhandled => {
                return Out {
                    through: ok,
                    ret: Front::new(),
                    fail,
                }
            }
        };
        let mut out = Out::default();
        let mut has_success = false;
        for arm in arms {
            let start = match arm.pattern {
                ArmPattern::Success => {
                    has_success = true;
                    ok.clone()
                }
                ArmPattern::Failure(_) => fail.clone(),
            };
            let body = self.block(p, &arm.body, start);
            out.ret.extend(body.ret);
            out.fail.extend(body.fail);
            match arm.end {
                ArmEnd::Value => out.through.extend(body.through),
                ArmEnd::Reject(_) | ArmEnd::Propagate(_) => out.fail.extend(body.through),
            }
        }
        if !has_success {
            out.through.extend(ok);
        }
        out
    }
}

fn hull(a: Option<(u32, u32)>, b: Option<(u32, u32)>) -> Option<(u32, u32)> {
    match (a, b) {
        (Some(x), Some(y)) => Some((x.0.min(y.0), x.1.max(y.1))),
        (x, None) => x,
        (None, y) => y,
    }
}

/// Numbers the steps and keeps only calls that are steps on some path.
/// Nodes were created in evaluation order, so every edge goes forward.
fn restrict_to_steps(p: &Program, b: &Builder, truncated: bool) -> StepGraph {
    let n = b.nodes.len();
    let mut unchanged = vec![false; n];
    let mut changed: Vec<Option<(u32, u32)>> = vec![None; n];
    let mut position: Vec<Option<(u32, u32)>> = vec![None; n];
    for &s in &b.starts {
        if let Some(u) = unchanged.get_mut(s) {
            *u = true;
        }
    }
    for i in 0..n {
        let changes = b
            .nodes
            .get(i)
            .is_some_and(|c| p.operations.get(c.op).is_some_and(|o| o.changes));
        let was_unchanged = unchanged.get(i).copied().unwrap_or(false);
        let before = changed.get(i).copied().flatten();
        let first = (changes && was_unchanged).then_some((1, 1));
        let pos = hull(before.map(|(lo, hi)| (lo + 1, hi + 1)), first);
        if let Some(slot) = position.get_mut(i) {
            *slot = pos;
        }
        let still_unchanged = was_unchanged && !changes;
        for &s in b.succ.get(i).into_iter().flatten() {
            if let Some(u) = unchanged.get_mut(s) {
                *u |= still_unchanged;
            }
            if let Some(c) = changed.get_mut(s) {
                *c = hull(*c, pos);
            }
        }
    }
    let mut index = vec![usize::MAX; n];
    let mut graph = StepGraph {
        truncated,
        ..StepGraph::default()
    };
    for (i, node) in b.nodes.iter().enumerate() {
        if let Some(Some((first, last))) = position.get(i) {
            if let Some(slot) = index.get_mut(i) {
                *slot = graph.steps.len();
            }
            graph.steps.push(Step {
                node: node.clone(),
                first: *first,
                last: *last,
            });
        }
    }
    for (i, succ) in b.succ.iter().enumerate() {
        let Some(&from) = index.get(i) else { continue };
        if from == usize::MAX {
            continue;
        }
        for &s in succ {
            if let Some(&to) = index.get(s) {
                if to != usize::MAX {
                    graph.edges.push((from, to));
                }
            }
        }
    }
    // The first step on a path is a changing call reached with nothing changed.
    for (i, step) in graph.steps.iter().enumerate() {
        let changes = p.operations.get(step.node.op).is_some_and(|o| o.changes);
        if changes && step.first == 1 {
            graph.starts.push(i);
        }
    }
    graph.starts.sort_unstable();
    graph.edges.sort_unstable();
    graph.edges.dedup();
    graph
}

/// BLAKE3 of the shape: a Merkle hash where each step's hash covers its
/// operation and the hashes of the steps that may follow it.
pub fn digest(p: &Program, graph: &StepGraph) -> String {
    let n = graph.steps.len();
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in &graph.edges {
        if let Some(list) = succ.get_mut(a) {
            list.push(b);
        }
    }
    let mut hashes: Vec<[u8; 32]> = vec![[0; 32]; n];
    for i in (0..n).rev() {
        let Some(step) = graph.steps.get(i) else {
            continue;
        };
        let next: BTreeSet<[u8; 32]> = succ
            .get(i)
            .into_iter()
            .flatten()
            .filter_map(|s| hashes.get(*s).copied())
            .collect();
        let mut h = blake3::Hasher::new();
        h.update(b"step\0");
        let op = p
            .operations
            .get(step.node.op)
            .map_or("", |o| o.qualified.as_str());
        h.update(op.as_bytes());
        h.update(b"\0");
        for s in &next {
            h.update(s);
        }
        if let Some(slot) = hashes.get_mut(i) {
            *slot = *h.finalize().as_bytes();
        }
    }
    let starts: BTreeSet<[u8; 32]> = graph
        .starts
        .iter()
        .filter_map(|s| hashes.get(*s).copied())
        .collect();
    let mut h = blake3::Hasher::new();
    h.update(b"jadpo-step-shape-v1\0");
    for s in &starts {
        h.update(s);
    }
    h.finalize().to_hex().to_string()
}
