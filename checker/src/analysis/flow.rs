//! The generic path algebra over an action's structured body. A block is a
//! set of paths; each analysis gives a value to a set of paths with `seq`
//! (one set followed by another) and `alt` (either set). Blocks are acyclic
//! and structured, so one bottom-up pass per action computes the value of all
//! its paths without ever listing them: linear in the size of the body.
//!
//! Paths are split by how they leave a block: falling `through` to the next
//! statement, `ret`urning from the action, or `fail`ing out of it. Only
//! `through` paths continue into the next statement.

use jadpo_compiler::ir::{
    ActionId, ArmEnd, ArmPattern, Block, Effect, Emit, Handling, Node, OpId, Target, Write,
};
use jadpo_compiler::span::Span;

pub trait PathVal: Clone {
    /// The empty path (identity of `seq`).
    fn unit() -> Self;
    /// Paths of `self` followed by paths of `next`.
    fn seq(&self, next: &Self) -> Self;
    /// Paths of either.
    fn alt(&self, other: &Self) -> Self;
}

fn seq_opt<T: PathVal>(a: &Option<T>, b: &Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.seq(b)),
        _ => None,
    }
}

pub fn alt_opt<T: PathVal>(a: &Option<T>, b: &Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.alt(b)),
        (Some(a), None) => Some(a.clone()),
        (None, b) => b.clone(),
    }
}

/// The paths of a block by how they leave it; `None` means no such path.
#[derive(Clone, Debug)]
pub struct Flow<T> {
    pub through: Option<T>,
    pub ret: Option<T>,
    pub fail: Option<T>,
}

impl<T: PathVal> Flow<T> {
    pub fn unit() -> Self {
        Flow {
            through: Some(T::unit()),
            ret: None,
            fail: None,
        }
    }

    pub fn none() -> Self {
        Flow {
            through: None,
            ret: None,
            fail: None,
        }
    }

    pub fn through(v: Option<T>) -> Self {
        Flow {
            through: v,
            ret: None,
            fail: None,
        }
    }

    pub fn seq(&self, next: &Flow<T>) -> Flow<T> {
        Flow {
            through: seq_opt(&self.through, &next.through),
            ret: alt_opt(&self.ret, &seq_opt(&self.through, &next.ret)),
            fail: alt_opt(&self.fail, &seq_opt(&self.through, &next.fail)),
        }
    }

    pub fn alt(&self, other: &Flow<T>) -> Flow<T> {
        Flow {
            through: alt_opt(&self.through, &other.through),
            ret: alt_opt(&self.ret, &other.ret),
            fail: alt_opt(&self.fail, &other.fail),
        }
    }

    /// Every path, however it leaves.
    pub fn all(&self) -> Option<T> {
        alt_opt(&alt_opt(&self.through, &self.ret), &self.fail)
    }

    /// An action's view from its callers: paths that return normally, and
    /// paths that fail out of it.
    pub fn ok_fail(&self) -> OkFail<T> {
        OkFail {
            ok: alt_opt(&self.through, &self.ret),
            fail: self.fail.clone(),
        }
    }

    /// Maps every part (used for loop multipliers).
    pub fn map(&self, f: impl Fn(&T) -> T) -> Flow<T> {
        Flow {
            through: self.through.as_ref().map(&f),
            ret: self.ret.as_ref().map(&f),
            fail: self.fail.as_ref().map(&f),
        }
    }
}

/// A called action's paths as its caller sees them.
#[derive(Clone, Debug)]
pub struct OkFail<T> {
    pub ok: Option<T>,
    pub fail: Option<T>,
}

impl<T> OkFail<T> {
    /// Both ends through `f` (a callee's paths moved to its call site).
    pub fn map<U>(&self, f: impl Fn(&T) -> U) -> OkFail<U> {
        OkFail {
            ok: self.ok.as_ref().map(&f),
            fail: self.fail.as_ref().map(&f),
        }
    }
}

/// What one analysis assigns to the leaves of a body.
pub trait Leaves {
    type T: PathVal;
    /// An outside call.
    fn op(&mut self, span: Span, op: OpId) -> Self::T;
    /// A called action, from its summary.
    fn callee(&mut self, span: Span, action: ActionId) -> OkFail<Self::T>;
    fn write(&mut self, _span: Span, _write: &Write) -> Self::T {
        Self::T::unit()
    }
    fn emit(&mut self, _emit: &Emit) -> Self::T {
        Self::T::unit()
    }
    /// A loop (`head` names it): by default its body runs once or not at
    /// all.
    fn looped(&mut self, _head: Span, _max: Option<u32>, body: Flow<Self::T>) -> Flow<Self::T> {
        Flow::unit().alt(&body)
    }
}

pub fn walk_block<L: Leaves>(l: &mut L, block: &Block) -> Flow<L::T> {
    let mut acc = Flow::unit();
    for node in &block.nodes {
        if acc.through.is_none() {
            break; // the rest of the block is unreachable
        }
        let next = walk_node(l, node);
        acc = acc.seq(&next);
    }
    acc
}

fn walk_node<L: Leaves>(l: &mut L, node: &Node) -> Flow<L::T> {
    match node {
        Node::Effect(effect) => walk_effect(l, effect),
        Node::Emit(emit) => Flow::through(Some(l.emit(emit))),
        Node::Reject(_) => Flow {
            through: None,
            ret: None,
            fail: Some(L::T::unit()),
        },
        Node::Return(_) => Flow {
            through: None,
            ret: Some(L::T::unit()),
            fail: None,
        },
        Node::If {
            then_block,
            else_block,
            ..
        } => walk_block(l, then_block).alt(&walk_block(l, else_block)),
        Node::Loop {
            head, max, body, ..
        } => {
            let inner = walk_block(l, body);
            l.looped(*head, *max, inner)
        }
    }
}

/// The effect's own paths: succeeding, and failing.
fn effect_base<L: Leaves>(l: &mut L, effect: &Effect) -> OkFail<L::T> {
    match &effect.target {
        Target::Op(op) => {
            let v = l.op(effect.span, *op);
            OkFail {
                ok: Some(v.clone()),
                fail: Some(v),
            }
        }
        Target::Action(a) => l.callee(effect.span, *a),
        Target::Write(w) => {
            let v = l.write(effect.span, w);
            OkFail {
                fail: (!w.failures.is_empty()).then(|| v.clone()),
                ok: Some(v),
            }
        }
        // No outside call and no write: a point that can fail, nothing more.
        Target::Check(_) => OkFail {
            ok: Some(L::T::unit()),
            fail: Some(L::T::unit()),
        },
    }
}

fn walk_effect<L: Leaves>(l: &mut L, effect: &Effect) -> Flow<L::T> {
    let base = effect_base(l, effect);
    let arms = match &effect.handling {
        Handling::Match(arms) => arms,
        Handling::Attempt(_) | Handling::Unhandled => {
            return Flow {
                through: base.ok,
                ret: None,
                fail: base.fail,
            }
        }
    };
    // Unavailable and RateLimited pass through a match that does not name them.
    let passes_transient = !matches!(effect.target, Target::Write(_) | Target::Check(_));
    let mut out = Flow {
        through: None,
        ret: None,
        fail: if passes_transient {
            base.fail.clone()
        } else {
            None
        },
    };
    let mut has_success = false;
    for arm in arms {
        let start = match arm.pattern {
            ArmPattern::Success => {
                has_success = true;
                base.ok.clone()
            }
            ArmPattern::Failure(_) => base.fail.clone(),
        };
        let body = walk_block(l, &arm.body);
        let body = match arm.end {
            ArmEnd::Value => body,
            ArmEnd::Reject(_) | ArmEnd::Propagate(_) => Flow {
                fail: alt_opt(&body.fail, &body.through),
                through: None,
                ret: body.ret,
            },
        };
        out = out.alt(&Flow::through(start).seq(&body));
    }
    if !has_success {
        out = out.alt(&Flow::through(base.ok));
    }
    out
}
