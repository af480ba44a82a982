//! Witness paths of staged follow-ups, kept as ropes (O(1) concatenation)
//! and read only when a diagnostic shows them: place by place inside the
//! action judged, with each call's follow-ups summed, never listed.

use std::collections::HashMap;
use std::sync::Arc;

use jadpo_compiler::ir::{ActionId, EventId};
use jadpo_compiler::span::Span;

pub use crate::analysis::rope::{call, cat, leaf, times};

/// An `emit` at `span`, with its worst-case size: the leaf of the
/// follow-up summaries' paths.
#[derive(Debug)]
pub struct Emit {
    pub span: Span,
    pub event: EventId,
    pub bytes: u64,
}

pub type Rope = crate::analysis::rope::Rope<Emit>;

/// A witness of the follow-up summaries.
pub type W = crate::analysis::rope::Witness<Emit>;

/// What stands at one place of a witness path in the action judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum What {
    Emit(EventId),
    /// A call; its follow-ups are summed, never listed.
    Call(ActionId),
}

/// One place of a witness path inside the action judged: an `emit` of the
/// action, or a call of another action with the follow-ups staged inside it.
#[derive(Clone, Debug)]
pub struct Item {
    /// The emit or the call.
    pub span: Span,
    pub what: What,
    /// The action's own loops around it, outermost first: (loop, max).
    pub loops: Vec<(Span, u32)>,
    /// How many times the action's loops repeat it.
    pub times: u64,
    /// Follow-ups staged by one pass (1 for an emit).
    pub count: u64,
    /// Worst-case bytes of one pass.
    pub bytes: u64,
    /// Inside the call, some loop's `max` repeats follow-ups.
    pub looped_inside: bool,
}

impl Item {
    pub fn total_count(&self) -> u64 {
        self.count.saturating_mul(self.times)
    }

    pub fn total_bytes(&self) -> u64 {
        self.bytes.saturating_mul(self.times)
    }

    /// Some loop's `max` repeats this item's follow-ups.
    pub fn looped(&self) -> bool {
        self.times > 1 || self.looped_inside
    }

    pub fn callee(&self) -> Option<ActionId> {
        match self.what {
            What::Call(a) => Some(a),
            What::Emit(_) => None,
        }
    }
}

/// The loops around a place: (loop, max), outermost first.
type Loops = Arc<Vec<(Span, u32)>>;

/// Totals of a sub-rope: (follow-ups, bytes, some `max` above 1 inside).
type Totals = (u64, u64, bool);

/// The witness path's places inside the action judged, in path order.
/// Calls are not entered: their totals are computed once per shared
/// sub-rope, so a path through calls that repeat each other costs time
/// linear in the rope, never in the number of follow-ups.
pub fn items(w: &W) -> Vec<Item> {
    let mut out = Vec::new();
    let Some(root) = w else { return out };
    let mut memo: HashMap<*const Rope, Totals> = HashMap::new();
    let mut stack: Vec<(Arc<Rope>, Loops)> = vec![(root.clone(), Arc::new(Vec::new()))];
    while let Some((rope, loops)) = stack.pop() {
        let times = loops
            .iter()
            .fold(1u64, |t, (_, n)| t.saturating_mul(u64::from(*n)));
        match &*rope {
            Rope::Leaf(Emit { span, event, bytes }) => out.push(Item {
                span: *span,
                what: What::Emit(*event),
                loops: loops.as_ref().clone(),
                times,
                count: 1,
                bytes: *bytes,
                looped_inside: false,
            }),
            Rope::Call {
                span,
                action,
                inner,
            } => {
                let (count, bytes, looped_inside) = totals(inner, &mut memo);
                out.push(Item {
                    span: *span,
                    what: What::Call(*action),
                    loops: loops.as_ref().clone(),
                    times,
                    count,
                    bytes,
                    looped_inside,
                });
            }
            Rope::Cat(a, b) => {
                stack.push((b.clone(), loops.clone()));
                stack.push((a.clone(), loops));
            }
            Rope::Times { n, span, inner } => {
                let mut deeper = loops.as_ref().clone();
                deeper.push((*span, *n));
                stack.push((inner.clone(), Arc::new(deeper)));
            }
        }
    }
    out
}

/// Sums a sub-rope, each shared node once (iterative post-order).
fn totals(root: &Arc<Rope>, memo: &mut HashMap<*const Rope, Totals>) -> Totals {
    let mut stack: Vec<(Arc<Rope>, bool)> = vec![(root.clone(), false)];
    while let Some((rope, children_done)) = stack.pop() {
        let key = Arc::as_ptr(&rope);
        if memo.contains_key(&key) {
            continue;
        }
        let children: Vec<&Arc<Rope>> = match &*rope {
            Rope::Leaf(_) => Vec::new(),
            Rope::Call { inner, .. } | Rope::Times { inner, .. } => vec![inner],
            Rope::Cat(a, b) => vec![a, b],
        };
        if !children_done {
            stack.push((rope.clone(), true));
            for c in children {
                stack.push((c.clone(), false));
            }
            continue;
        }
        let get = |r: &Arc<Rope>, memo: &HashMap<*const Rope, Totals>| {
            memo.get(&Arc::as_ptr(r)).copied().unwrap_or((0, 0, false))
        };
        let value = match &*rope {
            Rope::Leaf(Emit { bytes, .. }) => (1, *bytes, false),
            Rope::Call { inner, .. } => get(inner, memo),
            Rope::Cat(a, b) => {
                let (x, y) = (get(a, memo), get(b, memo));
                (x.0.saturating_add(y.0), x.1.saturating_add(y.1), x.2 || y.2)
            }
            Rope::Times { n, inner, .. } => {
                let (c, b, l) = get(inner, memo);
                let n = u64::from(*n);
                (c.saturating_mul(n), b.saturating_mul(n), l || n > 1)
            }
        };
        memo.insert(key, value);
    }
    memo.get(&Arc::as_ptr(root))
        .copied()
        .unwrap_or((0, 0, false))
}
