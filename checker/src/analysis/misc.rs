//! Facts about an action that need no paths: its outside calls anywhere,
//! loops holding outside calls, the stores it writes (through callees too)
//! and the actions it calls.

use std::collections::BTreeSet;

use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::{ActionId, Block, Effect, Node, Program, Target};
use jadpo_compiler::span::Span;

use super::values::{Site, What};
use super::Summaries;

/// A loop whose body makes an outside call.
#[derive(Clone, Copy, Debug)]
pub struct LoopCall {
    pub loop_span: Span,
    /// The first outside call (or call of an action making one) in its body.
    pub call: Site,
}

/// A call, outside any loop of the caller, of an action that reaches a loop
/// with outside calls.
#[derive(Clone, Copy, Debug)]
pub struct CalleeLoop {
    pub call: Span,
    pub callee: ActionId,
    pub inner: LoopCall,
}

#[derive(Clone, Debug, Default)]
pub struct Misc {
    /// The first outside call in evaluation order (a call of an action making
    /// one counts, at its call site).
    pub any_outside: Option<Site>,
    /// A changing call anywhere, through callees too.
    pub has_changing: bool,
    /// Outermost loops of this action whose bodies make outside calls.
    pub own_loops: Vec<LoopCall>,
    pub callee_loops: Vec<CalleeLoop>,
    /// Any loop with outside calls this action reaches.
    pub loop_call: Option<LoopCall>,
    /// Stores written, through callees too.
    pub stores: BTreeSet<Name>,
    /// The store of the first write in evaluation order.
    pub first_store: Option<Name>,
    /// Every action call: (call site, callee).
    pub callees: Vec<(Span, ActionId)>,
}

struct Walker<'a> {
    program: &'a Program,
    summaries: &'a Summaries,
    misc: Misc,
}

pub fn analyse(program: &Program, summaries: &Summaries, body: &Block) -> Misc {
    let mut w = Walker {
        program,
        summaries,
        misc: Misc::default(),
    };
    w.block(body, false);
    let m = &mut w.misc;
    m.loop_call = m
        .own_loops
        .first()
        .copied()
        .or_else(|| m.callee_loops.first().map(|c| c.inner));
    w.misc
}

impl Walker<'_> {
    /// `in_loop`: inside a loop of this action.
    fn block(&mut self, block: &Block, in_loop: bool) {
        for node in &block.nodes {
            match node {
                Node::Effect(e) => self.effect(e, in_loop),
                Node::Loop { span, body, .. } => {
                    self.looped(*span, body, in_loop);
                    continue;
                }
                _ => {}
            }
            for inner in node.blocks() {
                self.block(inner, in_loop);
            }
        }
    }

    /// A loop's body; an outermost loop records the first outside call
    /// inside it.
    fn looped(&mut self, span: Span, body: &Block, in_loop: bool) {
        if in_loop {
            self.block(body, true);
            return;
        }
        let before = self.misc.any_outside.take();
        self.block(body, true);
        let found = self.misc.any_outside;
        self.misc.any_outside = before.or(found);
        if let Some(call) = found {
            self.misc.own_loops.push(LoopCall {
                loop_span: span,
                call,
            });
        }
    }

    fn outside(&mut self, span: Span, what: What) {
        if self.misc.any_outside.is_none() {
            self.misc.any_outside = Some(Site { span, what });
        }
    }

    fn effect(&mut self, e: &Effect, in_loop: bool) {
        match &e.target {
            Target::Op(op) => {
                self.outside(e.span, What::Op(*op));
                if self.program.op(*op).changes {
                    self.misc.has_changing = true;
                }
            }
            Target::Action(a) => {
                self.misc.callees.push((e.span, *a));
                if let Some(s) = self.summaries.get(*a) {
                    if s.misc.any_outside.is_some() {
                        self.outside(e.span, What::Callee(*a));
                    }
                    self.misc.has_changing |= s.misc.has_changing;
                    self.misc.stores.extend(s.misc.stores.iter().copied());
                    if self.misc.first_store.is_none() {
                        self.misc.first_store = s.misc.first_store;
                    }
                    if let (false, Some(inner)) = (in_loop, s.misc.loop_call) {
                        self.misc.callee_loops.push(CalleeLoop {
                            call: e.span,
                            callee: *a,
                            inner,
                        });
                    }
                }
            }
            Target::Check(_) => {}
            Target::Write(w) => {
                if let Some(store) = self.program.entity(w.entity).store {
                    self.misc.stores.insert(store);
                    if self.misc.first_store.is_none() {
                        self.misc.first_store = Some(store);
                    }
                }
            }
        }
    }
}
