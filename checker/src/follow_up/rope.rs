//! Witness paths of staged follow-ups, kept as ropes (O(1) concatenation)
//! and flattened only when a diagnostic or the plan shows them.

use std::rc::Rc;

use jadpo_compiler::ir::{ActionId, EventId};
use jadpo_compiler::span::Span;

#[derive(Debug)]
pub enum Rope {
    /// An `emit` at `span`, with its worst-case size.
    Emit { span: Span, event: EventId, bytes: u64 },
    /// A call of `action` at `span`; `inner` is the path chosen inside it.
    Call {
        span: Span,
        action: ActionId,
        inner: Rc<Rope>,
    },
    Cat(Rc<Rope>, Rc<Rope>),
    /// A loop body counted `n` times (`for ... max n`).
    Times { n: u32, span: Span, inner: Rc<Rope> },
}

/// A possibly empty witness.
pub type W = Option<Rc<Rope>>;

pub fn cat(a: &W, b: &W) -> W {
    match (a, b) {
        (Some(x), Some(y)) => Some(Rc::new(Rope::Cat(x.clone(), y.clone()))),
        (Some(x), None) => Some(x.clone()),
        (None, y) => y.clone(),
    }
}

pub fn call(span: Span, action: ActionId, inner: &W) -> W {
    inner.as_ref().map(|inner| {
        Rc::new(Rope::Call {
            span,
            action,
            inner: inner.clone(),
        })
    })
}

pub fn times(n: u32, span: Span, inner: &W) -> W {
    inner.as_ref().map(|inner| Rc::new(Rope::Times { n, span, inner: inner.clone() }))
}

/// One `emit` on a flattened witness path.
#[derive(Clone, Debug)]
pub struct Leaf {
    pub span: Span,
    pub event: EventId,
    /// Worst-case bytes of one follow-up staged here.
    pub bytes: u64,
    /// The action calls leading to it, outermost first.
    pub via: Vec<(Span, ActionId)>,
    /// The loops repeating it, outermost first: (loop, max).
    pub loops: Vec<(Span, u32)>,
}

impl Leaf {
    /// How many follow-ups this emit stages on the path.
    pub fn times(&self) -> u64 {
        self.loops.iter().fold(1u64, |t, (_, n)| t.saturating_mul(u64::from(*n)))
    }

    /// Where the path reaches it inside the action judged: the outermost call
    /// leading to it, or the emit itself.
    pub fn place(&self) -> Span {
        self.via.first().map_or(self.span, |(span, _)| *span)
    }
}

type Frame = (Rc<Rope>, Rc<Vec<(Span, ActionId)>>, Rc<Vec<(Span, u32)>>);

/// The emits of a witness in path order. Iterative, so deep ropes cannot
/// overflow the stack.
pub fn flatten(w: &W) -> Vec<Leaf> {
    let mut out = Vec::new();
    let Some(root) = w else { return out };
    let mut stack: Vec<Frame> = vec![(root.clone(), Rc::new(Vec::new()), Rc::new(Vec::new()))];
    while let Some((rope, via, loops)) = stack.pop() {
        match &*rope {
            Rope::Emit { span, event, bytes } => out.push(Leaf {
                span: *span,
                event: *event,
                bytes: *bytes,
                via: via.as_ref().clone(),
                loops: loops.as_ref().clone(),
            }),
            Rope::Call { span, action, inner } => {
                let mut deeper = via.as_ref().clone();
                deeper.push((*span, *action));
                stack.push((inner.clone(), Rc::new(deeper), loops));
            }
            Rope::Cat(a, b) => {
                stack.push((b.clone(), via.clone(), loops.clone()));
                stack.push((a.clone(), via, loops));
            }
            Rope::Times { n, span, inner } => {
                let mut deeper = loops.as_ref().clone();
                deeper.push((*span, *n));
                stack.push((inner.clone(), via, Rc::new(deeper)));
            }
        }
    }
    out
}
