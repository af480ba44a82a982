//! Follow-up analysis (design section 6): per-action facts about the events
//! an action stages with `emit`, computed once per action callee-first, so a
//! caller reuses its callees' results. Linear in the program: each body is
//! walked a fixed number of times and paths are never listed.

pub mod locks;
pub mod options;
pub mod path;
pub mod rope;
pub mod size;

use jadpo_compiler::index::IndexVec;
use std::collections::BTreeMap;
use std::sync::Arc;

use jadpo_compiler::ir::{ActionId, Block, Emit, EventId, Node, Program, Target};
use jadpo_compiler::span::Span;

use crate::analysis::flow::{walk_block, OkFail};
use locks::{LockLeaves, Locks};
use options::UniqueKey;
use path::{FuPath, PathLeaves};

/// At most this many follow-ups on one path.
pub const MAX_COUNT: u64 = 16;
/// At most this many bytes of follow-ups on one path (64 KiB).
pub const MAX_BYTES: u64 = 65_536;

/// What stages a follow-up at a place in an action's body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stager {
    Emit(EventId),
    /// A call of an action that stages follow-ups.
    Call(ActionId),
}

/// A loop without `max` whose body stages follow-ups.
#[derive(Clone, Debug)]
pub struct UnboundedLoop {
    pub loop_head: Span,
    /// The emits, or calls of actions that emit, in its body.
    pub sites: Vec<(Span, Stager)>,
}

/// The first unique follow-up of an event an action reaches.
#[derive(Clone, Debug)]
pub struct Reach {
    /// In the action's own body: the emit's head, or the call leading to it.
    pub place: Span,
    /// The emit's head.
    pub emit: Span,
    pub via: Option<ActionId>,
    pub unique: UniqueKey,
}

/// The follow-ups of the actions summarised so far, by id.
pub type Done = IndexVec<ActionId, Option<Arc<ActionFollowUps>>>;

/// What one action stages, through the actions it calls too.
#[derive(Clone, Debug)]
pub struct ActionFollowUps {
    /// Its paths as callers see them (returning, failing).
    pub paths: OkFail<FuPath>,
    /// Every path, however it ends.
    pub all: FuPath,
    pub locks: OkFail<Locks>,
    pub locks_all: Locks,
    /// Some path stages a follow-up.
    pub emits: bool,
    /// Its own loops without `max` that stage follow-ups, outermost only.
    pub unbounded_loops: Vec<UnboundedLoop>,
    /// For each event and unique options, the first follow-up reached.
    pub unique_reach: BTreeMap<(EventId, UniqueKey), Reach>,
}

#[derive(Clone, Debug, Default)]
pub struct FollowUps {
    list: Done,
}

impl FollowUps {
    /// Results by action id, as [`analyse`] builds them (the step
    /// analyzer's cache reuses them between edits).
    pub fn from_list(list: Done) -> FollowUps {
        FollowUps { list }
    }

    pub fn get(&self, id: ActionId) -> Option<&ActionFollowUps> {
        self.list.get(id).and_then(Option::as_deref)
    }

    /// The results by action id (to patch after an edit).
    pub fn into_list(self) -> Done {
        self.list
    }

    /// Frees the results on all threads (see `Analysed::release`).
    pub fn release(self) {
        use rayon::prelude::*;
        self.list.into_par_iter().for_each(drop);
    }
}

/// Analyses every action; `order` lists actions callees first (any action
/// it leaves out is analysed afterwards, in id order).
pub fn analyse(program: &Program, order: &[ActionId]) -> FollowUps {
    let n = program.actions.len();
    let mut list: Done = vec![None; n].into();
    let rest = (0..n as u32).map(ActionId);
    for id in order.iter().copied().chain(rest) {
        let Some(action) = program.actions.get(id) else {
            continue;
        };
        if list.get(id).is_some_and(Option::is_some) {
            continue;
        }
        let summary = summarise(program, &list, &action.body);
        if let Some(slot) = list.get_mut(id) {
            *slot = Some(Arc::new(summary));
        }
    }
    FollowUps { list }
}

/// One action's follow-ups, given those of the actions already done.
pub fn summarise(program: &Program, done: &Done, body: &Block) -> ActionFollowUps {
    let flow = walk_block(&mut PathLeaves { program, done }, body);
    let locks = walk_block(&mut LockLeaves { done }, body);
    let mut reach = ReachWalker {
        done,
        emits: false,
        loops: Vec::new(),
        unique_reach: BTreeMap::new(),
    };
    reach.block(body, false);
    ActionFollowUps {
        all: flow.all().unwrap_or_default(),
        paths: flow.ok_fail(),
        locks_all: locks.all().unwrap_or_default(),
        locks: locks.ok_fail(),
        emits: reach.emits,
        unbounded_loops: reach.loops,
        unique_reach: reach.unique_reach,
    }
}

/// Path-free facts: whether anything is staged, loops without `max` that
/// stage, and the first unique follow-up of each event.
struct ReachWalker<'a> {
    done: &'a Done,
    emits: bool,
    loops: Vec<UnboundedLoop>,
    unique_reach: BTreeMap<(EventId, UniqueKey), Reach>,
}

impl ReachWalker<'_> {
    /// `in_unbounded`: inside a loop without `max` already recorded.
    fn block(&mut self, block: &Block, in_unbounded: bool) {
        for node in &block.nodes {
            match node {
                Node::Loop {
                    head, max, body, ..
                } => {
                    self.looped(*head, *max, body, in_unbounded);
                    continue;
                }
                Node::Emit(emit) => self.emit(emit),
                Node::Effect(effect) => {
                    if let Target::Action(callee) = effect.target {
                        self.callee(effect.span, callee);
                    }
                }
                _ => {}
            }
            for inner in node.blocks() {
                self.block(inner, in_unbounded);
            }
        }
    }

    fn looped(&mut self, head: Span, max: Option<u32>, body: &Block, in_unbounded: bool) {
        if max.is_some() || in_unbounded {
            self.block(body, in_unbounded);
            return;
        }
        let mut sites = Vec::new();
        let done = self.done;
        let stages = |a: ActionId| {
            done.get(a)
                .and_then(Option::as_deref)
                .is_some_and(|s| s.emits)
        };
        staging_sites(&stages, body, &mut sites);
        let stages = !sites.is_empty();
        if stages {
            self.loops.push(UnboundedLoop {
                loop_head: head,
                sites,
            });
        }
        self.block(body, stages);
    }

    fn emit(&mut self, emit: &Emit) {
        self.emits = true;
        if let Some(unique) = options::unique(emit) {
            self.unique_reach
                .entry((emit.event, unique.clone()))
                .or_insert(Reach {
                    place: emit.head,
                    emit: emit.head,
                    via: None,
                    unique,
                });
        }
    }

    fn callee(&mut self, span: Span, callee: ActionId) {
        let Some(s) = self.done.get(callee).and_then(Option::as_deref) else {
            return;
        };
        self.emits |= s.emits;
        for (key, r) in &s.unique_reach {
            self.unique_reach
                .entry(key.clone())
                .or_insert_with(|| Reach {
                    place: span,
                    emit: r.emit,
                    via: Some(callee),
                    unique: r.unique.clone(),
                });
        }
    }
}

/// The emits, and calls of actions that stage follow-ups (`stages` says
/// which do), anywhere in a block, in evaluation order.
pub fn staging_sites(
    stages: &dyn Fn(ActionId) -> bool,
    block: &Block,
    out: &mut Vec<(Span, Stager)>,
) {
    block.for_each_node(&mut |node| match node {
        Node::Emit(emit) => out.push((emit.head, Stager::Emit(emit.event))),
        Node::Effect(effect) => match effect.target {
            Target::Action(callee) if stages(callee) => {
                out.push((effect.span, Stager::Call(callee)))
            }
            _ => {}
        },
        _ => {}
    });
}

/// An action's own emits in evaluation order (as [`own_emits`], without
/// the loops around each: most rules need only the emits).
pub fn emits_in(block: &Block) -> Vec<&Emit> {
    let mut out = Vec::new();
    block.for_each_node(&mut |node| {
        if let Node::Emit(emit) = node {
            out.push(emit);
        }
    });
    out
}

/// An action's own emits, each with the `max` of its enclosing loops,
/// outermost first (`None` for a loop without `max`).
pub fn own_emits(block: &Block) -> Vec<(&Emit, Vec<Option<u32>>)> {
    let mut out = Vec::new();
    collect_emits(block, &mut Vec::new(), &mut out);
    out
}

fn collect_emits<'b>(
    block: &'b Block,
    loops: &mut Vec<Option<u32>>,
    out: &mut Vec<(&'b Emit, Vec<Option<u32>>)>,
) {
    for node in &block.nodes {
        match node {
            Node::Emit(emit) => out.push((emit, loops.clone())),
            Node::Loop { max, body, .. } => {
                loops.push(*max);
                collect_emits(body, loops, out);
                loops.pop();
            }
            _ => {
                for inner in node.blocks() {
                    collect_emits(inner, loops, out);
                }
            }
        }
    }
}
