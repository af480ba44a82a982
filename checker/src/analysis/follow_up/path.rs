//! The path value of the follow-up limits, an algebra for the checker's
//! generic path walk ([`crate::analysis::flow`]): on the worst path, how many
//! follow-ups are staged and how many bytes they take, with loop bodies
//! counted once and counted `max N` times.

use jadpo_compiler::ir::{ActionId, Emit, OpId, Program};
use jadpo_compiler::span::Span;

use super::rope::{self, W};
use super::{size, Done};
use crate::analysis::flow::{Flow, Leaves, OkFail, PathVal};

/// The largest value over a set of paths, with the path that reaches it.
#[derive(Clone, Debug, Default)]
pub struct Best {
    pub n: u64,
    pub w: W,
}

impl Best {
    fn seq(&self, next: &Best) -> Best {
        Best {
            n: self.n.saturating_add(next.n),
            w: rope::cat(&self.w, &next.w),
        }
    }

    fn alt(&self, other: &Best) -> Best {
        if other.n > self.n {
            other.clone()
        } else {
            self.clone()
        }
    }

    fn times(&self, n: u32, span: Span) -> Best {
        if n == 1 {
            return self.clone();
        }
        Best {
            n: self.n.saturating_mul(u64::from(n)),
            w: rope::times(n, span, &self.w),
        }
    }

    fn call(&self, span: Span, action: ActionId) -> Best {
        Best {
            n: self.n,
            w: rope::call(span, action, &self.w),
        }
    }
}

/// Each part is maximised over paths on its own.
#[derive(Clone, Debug, Default)]
pub struct FuPath {
    /// Emits, every loop body counted once.
    pub once: Best,
    /// Emits, a `for ... max N` body counted N times (once without `max`).
    pub count: Best,
    /// Worst-case bytes, loop bodies counted like `count`.
    pub bytes: Best,
    /// Worst-case bytes, every loop body counted once.
    pub bytes_once: Best,
}

impl PathVal for FuPath {
    fn unit() -> Self {
        FuPath::default()
    }
    fn seq(&self, next: &Self) -> Self {
        FuPath {
            once: self.once.seq(&next.once),
            count: self.count.seq(&next.count),
            bytes: self.bytes.seq(&next.bytes),
            bytes_once: self.bytes_once.seq(&next.bytes_once),
        }
    }
    fn alt(&self, other: &Self) -> Self {
        FuPath {
            once: self.once.alt(&other.once),
            count: self.count.alt(&other.count),
            bytes: self.bytes.alt(&other.bytes),
            bytes_once: self.bytes_once.alt(&other.bytes_once),
        }
    }
}

impl FuPath {
    fn call(&self, span: Span, action: ActionId) -> FuPath {
        FuPath {
            once: self.once.call(span, action),
            count: self.count.call(span, action),
            bytes: self.bytes.call(span, action),
            bytes_once: self.bytes_once.call(span, action),
        }
    }
}

pub struct PathLeaves<'a> {
    pub program: &'a Program,
    pub done: &'a Done,
}

impl Leaves for PathLeaves<'_> {
    type T = FuPath;

    fn op(&mut self, _span: Span, _op: OpId) -> FuPath {
        FuPath::unit()
    }

    fn callee(&mut self, span: Span, action: ActionId) -> OkFail<FuPath> {
        // Inside a cycle a callee not yet summarised stages nothing (the
        // cycle itself is `effect.recursion`).
        match self.done.get(action).and_then(Option::as_deref) {
            Some(s) => s.paths.map(|p| p.call(span, action)),
            None => OkFail {
                ok: Some(FuPath::unit()),
                fail: None,
            },
        }
    }

    fn emit(&mut self, emit: &Emit) -> FuPath {
        let bytes = size::emit_size(self.program, emit).total();
        let w: W = rope::leaf(rope::Emit {
            span: emit.head,
            event: emit.event,
            bytes,
        });
        let one = Best { n: 1, w: w.clone() };
        let sized = Best { n: bytes, w };
        FuPath {
            once: one.clone(),
            count: one,
            bytes: sized.clone(),
            bytes_once: sized,
        }
    }

    fn looped(&mut self, span: Span, max: Option<u32>, body: Flow<FuPath>) -> Flow<FuPath> {
        let Some(n) = max else {
            // Without `max` the loop is `follow_up.in_loop`; for the limits
            // its body counts as one pass.
            return Flow::unit().alt(&body);
        };
        let repeated = body.map(|p| FuPath {
            once: p.once.clone(),
            count: p.count.times(n, span),
            bytes: p.bytes.times(n, span),
            bytes_once: p.bytes_once.clone(),
        });
        Flow::unit().alt(&repeated)
    }
}
