//! Witness paths kept as ropes: concatenation is O(1), so the summaries can
//! remember the path they chose at every branch without ever copying a list.
//! A rope is flattened only when a diagnostic or the plan needs it. One
//! rope for both kinds of path, generic over what stands at a place.

use std::sync::Arc;

use jadpo_compiler::ir::{ActionId, OpId};
use jadpo_compiler::span::Span;

#[derive(Debug)]
pub enum Rope<L> {
    /// One place on the path: an outside call ([`Op`]) for the step
    /// summaries, an emit for the follow-up summaries.
    Leaf(L),
    /// A call of `action` at `span`; `inner` is the path chosen inside it.
    Call {
        span: Span,
        action: ActionId,
        inner: Arc<Rope<L>>,
    },
    /// `first` then `second`.
    Cat(Arc<Rope<L>>, Arc<Rope<L>>),
    /// A loop body counted `n` times; `span` is the loop's head.
    Times {
        n: u32,
        span: Span,
        inner: Arc<Rope<L>>,
    },
}

/// A possibly empty witness.
pub type Witness<L> = Option<Arc<Rope<L>>>;

pub fn leaf<L>(l: L) -> Witness<L> {
    Some(Arc::new(Rope::Leaf(l)))
}

pub fn cat<L>(a: &Witness<L>, b: &Witness<L>) -> Witness<L> {
    match (a, b) {
        (Some(x), Some(y)) => Some(Arc::new(Rope::Cat(x.clone(), y.clone()))),
        (Some(x), None) => Some(x.clone()),
        (None, y) => y.clone(),
    }
}

pub fn call<L>(span: Span, action: ActionId, inner: &Witness<L>) -> Witness<L> {
    inner.as_ref().map(|inner| {
        Arc::new(Rope::Call {
            span,
            action,
            inner: inner.clone(),
        })
    })
}

pub fn times<L>(n: u32, span: Span, inner: &Witness<L>) -> Witness<L> {
    inner.as_ref().map(|inner| {
        Arc::new(Rope::Times {
            n,
            span,
            inner: inner.clone(),
        })
    })
}

/// An outside call made at `span`: the leaf of the step summaries' paths.
#[derive(Debug)]
pub struct Op {
    pub span: Span,
    pub op: OpId,
}

/// A rope of the step summaries.
pub type OpRope = Rope<Op>;

/// A witness of the step summaries.
pub type W = Witness<Op>;

pub fn op(span: Span, op: OpId) -> W {
    leaf(Op { span, op })
}

/// One outside call on a flattened witness path.
#[derive(Clone, Debug)]
pub struct Leaf {
    pub op: OpId,
    /// The operation call itself.
    pub span: Span,
    /// The action calls leading to it, outermost first.
    pub via: Vec<(Span, ActionId)>,
    /// How many times a loop repeats it (deadline sums only).
    pub times: u32,
}

/// At most this many calls of a witness are listed: ropes share subpaths, so
/// a path through nested calls can be exponentially long.
pub const MAX_LEAVES: usize = 512;

/// The calls of a witness in path order, at most [`MAX_LEAVES`]. Iterative,
/// so deep ropes cannot overflow the stack.
pub fn flatten(w: &W) -> Vec<Leaf> {
    let mut out = Vec::new();
    let Some(root) = w else { return out };
    // Each frame: a rope, the call chain above it, the loop multiplier.
    type Frame = (Arc<Rope<Op>>, Arc<Vec<(Span, ActionId)>>, u32);
    let mut stack: Vec<Frame> = vec![(root.clone(), Arc::new(Vec::new()), 1)];
    while let Some((rope, via, mult)) = stack.pop() {
        if out.len() >= MAX_LEAVES {
            break;
        }
        match &*rope {
            Rope::Leaf(Op { span, op }) => out.push(Leaf {
                op: *op,
                span: *span,
                via: via.as_ref().clone(),
                times: mult,
            }),
            Rope::Call {
                span,
                action,
                inner,
            } => {
                let mut deeper = via.as_ref().clone();
                deeper.push((*span, *action));
                stack.push((inner.clone(), Arc::new(deeper), mult));
            }
            Rope::Cat(a, b) => {
                stack.push((b.clone(), via.clone(), mult));
                stack.push((a.clone(), via, mult));
            }
            Rope::Times { n, inner, .. } => {
                stack.push((inner.clone(), via, mult.saturating_mul(*n)));
            }
        }
    }
    out
}
