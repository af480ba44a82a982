//! The path values of the step rules, each a small algebra for [`super::flow`]:
//! changing calls on the longest path, per-path keyed/unkeyed states, the
//! deadline cost, writes before calls, and large answers recorded as steps.

use std::sync::Arc;

use jadpo_compiler::ir::{ActionId, EntityId, EventId, OpId, Program, WriteKind};
use jadpo_compiler::span::Span;

use super::flow::{Flow, Leaves, OkFail, PathVal};
use super::rope::{self, OpRope, Rope, W};
use super::Summaries;

/// Something at a place in one action's body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum What {
    Op(OpId),
    Callee(ActionId),
    Write(EntityId, WriteKind),
    Emit(EventId),
    /// A validated construction (`None`) or a `query required` of an entity.
    Check(Option<EntityId>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Site {
    pub span: Span,
    pub what: What,
}

// ---------------------------------------------------------------- count

/// Changing calls on the path with the most; the witness holds that path's
/// outside calls (reads too, so steps can be numbered).
#[derive(Clone, Debug)]
pub struct Count {
    pub n: u32,
    pub w: W,
}

impl PathVal for Count {
    fn unit() -> Self {
        Count { n: 0, w: None }
    }
    fn seq(&self, next: &Self) -> Self {
        Count {
            n: self.n.saturating_add(next.n),
            w: rope::cat(&self.w, &next.w),
        }
    }
    fn alt(&self, other: &Self) -> Self {
        if other.n > self.n {
            other.clone()
        } else {
            self.clone()
        }
    }
}

pub struct CountLeaves<'a> {
    pub program: &'a Program,
    pub summaries: &'a Summaries,
}

impl Leaves for CountLeaves<'_> {
    type T = Count;
    fn op(&mut self, span: Span, op: OpId) -> Count {
        Count {
            n: u32::from(self.program.op(op).changes),
            w: rope::op(span, op),
        }
    }
    fn callee(&mut self, span: Span, action: ActionId) -> OkFail<Count> {
        match self.summaries.get(action) {
            Some(s) => s.count.map(|c| Count {
                n: c.n,
                w: rope::call(span, action, &c.w),
            }),
            None => unit_callee(),
        }
    }
}

fn unit_callee<T: PathVal>() -> OkFail<T> {
    OkFail {
        ok: Some(T::unit()),
        fail: None,
    }
}

// ---------------------------------------------------------------- cost

/// Sum of timeout x attempts of the outside calls on the most expensive path.
#[derive(Clone, Debug)]
pub struct Cost {
    pub ms: u64,
    pub w: W,
}

impl PathVal for Cost {
    fn unit() -> Self {
        Cost { ms: 0, w: None }
    }
    fn seq(&self, next: &Self) -> Self {
        Cost {
            ms: self.ms.saturating_add(next.ms),
            w: rope::cat(&self.w, &next.w),
        }
    }
    fn alt(&self, other: &Self) -> Self {
        if other.ms > self.ms {
            other.clone()
        } else {
            self.clone()
        }
    }
}

pub fn op_cost(program: &Program, op: OpId) -> u64 {
    let o = program.op(op);
    o.timeout_ms.saturating_mul(u64::from(o.attempts))
}

pub struct CostLeaves<'a> {
    pub program: &'a Program,
    pub summaries: &'a Summaries,
}

impl Leaves for CostLeaves<'_> {
    type T = Cost;
    fn op(&mut self, span: Span, op: OpId) -> Cost {
        Cost {
            ms: op_cost(self.program, op),
            w: rope::op(span, op),
        }
    }
    fn callee(&mut self, span: Span, action: ActionId) -> OkFail<Cost> {
        match self.summaries.get(action) {
            Some(s) => s.cost.map(|c| Cost {
                ms: c.ms,
                w: rope::call(span, action, &c.w),
            }),
            None => unit_callee(),
        }
    }
    /// For the deadline a loop body counts `max N` times, once without `max`.
    fn looped(&mut self, span: Span, max: Option<u32>, body: Flow<Cost>) -> Flow<Cost> {
        let n = max.unwrap_or(1).max(1);
        let repeated = body.map(|c| Cost {
            ms: c.ms.saturating_mul(u64::from(n)),
            w: if n == 1 {
                c.w.clone()
            } else {
                rope::times(n, span, &c.w)
            },
        });
        Flow::unit().alt(&repeated)
    }
}

// ---------------------------------------------------------------- unkeyed

/// A path's changing calls as far as `step.unkeyed` needs them: the first
/// unkeyed one, and up to two others.
#[derive(Clone, Debug, Default)]
pub struct UWitness {
    pub unkeyed: Option<Arc<OpRope>>,
    pub others: Others,
}

/// The other changing calls of a [`UWitness`], in order. Two are kept
/// inline, so joining paths allocates nothing in the common case; more
/// only come from a callee's bad path (see `UnkeyedLeaves::callee`).
#[derive(Clone, Debug, Default)]
pub struct Others {
    head: [Option<Arc<OpRope>>; 2],
    rest: Vec<Arc<OpRope>>,
}

impl Others {
    pub fn one(rope: Arc<OpRope>) -> Others {
        Others {
            head: [Some(rope), None],
            rest: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.head.iter().flatten().count() + self.rest.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn push(&mut self, rope: Arc<OpRope>) {
        match self.head.iter_mut().find(|slot| slot.is_none()) {
            Some(slot) => *slot = Some(rope),
            None => self.rest.push(rope),
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<OpRope>> {
        self.head.iter().flatten().chain(self.rest.iter())
    }

    fn map(&self, f: impl Fn(&Arc<OpRope>) -> Arc<OpRope>) -> Others {
        Others {
            head: [self.head[0].as_ref().map(&f), self.head[1].as_ref().map(&f)],
            rest: self.rest.iter().map(&f).collect(),
        }
    }
}

impl UWitness {
    fn join(&self, next: &UWitness) -> UWitness {
        let mut out = self.clone();
        let extra = match (&out.unkeyed, &next.unkeyed) {
            (None, Some(u)) => {
                out.unkeyed = Some(u.clone());
                None
            }
            (Some(_), Some(u)) => Some(u),
            _ => None,
        };
        for r in extra.into_iter().chain(next.others.iter()) {
            if out.others.len() >= 2 {
                break;
            }
            out.others.push(r.clone());
        }
        out
    }

    fn wrap(&self, span: Span, action: ActionId) -> UWitness {
        let wrap = |r: &Arc<OpRope>| {
            Arc::new(Rope::Call {
                span,
                action,
                inner: r.clone(),
            })
        };
        UWitness {
            unkeyed: self.unkeyed.as_ref().map(wrap),
            others: self.others.map(wrap),
        }
    }
}

/// Reachable per-path states: index `min(changing, 2) * 2 + has_unkeyed`.
/// State [`UStates::BAD`] is a path with two or more changing calls, one unkeyed.
#[derive(Clone, Debug)]
pub struct UStates {
    pub s: [Option<UWitness>; 6],
}

impl UStates {
    pub const BAD: usize = 5;

    fn empty() -> Self {
        UStates {
            s: [None, None, None, None, None, None],
        }
    }

    fn one(index: usize, w: UWitness) -> Self {
        let mut out = Self::empty();
        if let Some(slot) = out.s.get_mut(index) {
            *slot = Some(w);
        }
        out
    }
}

impl PathVal for UStates {
    fn unit() -> Self {
        Self::one(0, UWitness::default())
    }
    fn seq(&self, next: &Self) -> Self {
        let mut out = Self::empty();
        for (i, a) in self.s.iter().enumerate() {
            let Some(a) = a else { continue };
            for (j, b) in next.s.iter().enumerate() {
                let Some(b) = b else { continue };
                let n = (i / 2 + j / 2).min(2);
                let u = (i % 2) | (j % 2);
                if let Some(slot) = out.s.get_mut(n * 2 + u) {
                    if slot.is_none() {
                        *slot = Some(a.join(b));
                    }
                }
            }
        }
        out
    }
    fn alt(&self, other: &Self) -> Self {
        let mut out = self.clone();
        for (slot, b) in out.s.iter_mut().zip(other.s.iter()) {
            if slot.is_none() {
                slot.clone_from(b);
            }
        }
        out
    }
}

pub struct UnkeyedLeaves<'a> {
    pub program: &'a Program,
    pub summaries: &'a Summaries,
}

impl Leaves for UnkeyedLeaves<'_> {
    type T = UStates;
    fn op(&mut self, span: Span, op: OpId) -> UStates {
        let o = self.program.op(op);
        if !o.changes {
            return UStates::unit();
        }
        let leaf = Arc::new(Rope::Leaf(rope::Op { span, op }));
        if o.idempotent {
            UStates::one(
                2,
                UWitness {
                    unkeyed: None,
                    others: Others::one(leaf),
                },
            )
        } else {
            UStates::one(
                3,
                UWitness {
                    unkeyed: Some(leaf),
                    others: Others::default(),
                },
            )
        }
    }
    fn callee(&mut self, span: Span, action: ActionId) -> OkFail<UStates> {
        let Some(s) = self.summaries.get(action) else {
            return unit_callee();
        };
        // A bad path inside the callee is the callee's own finding.
        let import = |v: &UStates| {
            let mut out = UStates::empty();
            for (i, w) in v.s.iter().enumerate() {
                let Some(w) = w else { continue };
                let mut w = w.wrap(span, action);
                // Seen from here, the callee's bad path is two keyed calls.
                let i = if i == UStates::BAD {
                    if let Some(u) = w.unkeyed.take() {
                        w.others.push(u);
                    }
                    4
                } else {
                    i
                };
                if let Some(slot) = out.s.get_mut(i) {
                    if slot.is_none() {
                        *slot = Some(w);
                    }
                }
            }
            out
        };
        let ok = s.unkeyed.ok.as_ref().map(import);
        let fail = s.unkeyed.fail.as_ref().map(import);
        OkFail {
            ok: ok.filter(|v| v.s.iter().any(Option::is_some)),
            fail: fail.filter(|v| v.s.iter().any(Option::is_some)),
        }
    }
}

// ---------------------------------------------------------------- order

/// Writes and emits before outside calls (`effect.call_after_write`).
#[derive(Clone, Debug, Default)]
pub struct Order {
    /// Some path writes or emits.
    pub write: Option<Site>,
    /// Some path makes an outside call.
    pub call: Option<Site>,
    /// A path that writes and later calls: (the write, the call).
    pub viol: Option<(Site, Site)>,
}

impl PathVal for Order {
    fn unit() -> Self {
        Order::default()
    }
    fn seq(&self, next: &Self) -> Self {
        let crossing = match (self.write, next.call) {
            (Some(w), Some(c)) => Some((w, c)),
            _ => None,
        };
        Order {
            write: self.write.or(next.write),
            call: self.call.or(next.call),
            viol: self.viol.or(next.viol).or(crossing),
        }
    }
    fn alt(&self, other: &Self) -> Self {
        Order {
            write: self.write.or(other.write),
            call: self.call.or(other.call),
            viol: self.viol.or(other.viol),
        }
    }
}

pub struct OrderLeaves<'a> {
    pub summaries: &'a Summaries,
}

impl Leaves for OrderLeaves<'_> {
    type T = Order;
    fn op(&mut self, span: Span, op: OpId) -> Order {
        Order {
            call: Some(Site {
                span,
                what: What::Op(op),
            }),
            ..Order::default()
        }
    }
    fn write(&mut self, span: Span, write: &jadpo_compiler::ir::Write) -> Order {
        Order {
            write: Some(Site {
                span,
                what: What::Write(write.entity, write.kind),
            }),
            ..Order::default()
        }
    }
    fn emit(&mut self, emit: &jadpo_compiler::ir::Emit) -> Order {
        Order {
            write: Some(Site {
                span: emit.span,
                what: What::Emit(emit.event),
            }),
            ..Order::default()
        }
    }
    fn callee(&mut self, span: Span, action: ActionId) -> OkFail<Order> {
        let Some(s) = self.summaries.get(action) else {
            return unit_callee();
        };
        let site = Site {
            span,
            what: What::Callee(action),
        };
        s.order.map(|o| Order {
            write: o.write.map(|_| site),
            call: o.call.map(|_| site),
            viol: None,
        })
    }
}

// ---------------------------------------------------------------- large

/// Operations with `large_output: true` called as steps (`step.large_output`).
#[derive(Clone, Debug, Default)]
pub struct Large {
    /// Some path makes a changing call.
    pub changed: Option<Site>,
    /// Some path calls a large-output operation.
    pub large: Option<Site>,
    /// (the large call, the changing call before it, if another call)
    pub viol: Option<(Site, Option<Site>)>,
}

impl PathVal for Large {
    fn unit() -> Self {
        Large::default()
    }
    fn seq(&self, next: &Self) -> Self {
        let crossing = match (self.changed, next.large) {
            (Some(c), Some(l)) => Some((l, Some(c))),
            _ => None,
        };
        Large {
            changed: self.changed.or(next.changed),
            large: self.large.or(next.large),
            viol: self.viol.or(next.viol).or(crossing),
        }
    }
    fn alt(&self, other: &Self) -> Self {
        Large {
            changed: self.changed.or(other.changed),
            large: self.large.or(other.large),
            viol: self.viol.or(other.viol),
        }
    }
}

pub struct LargeLeaves<'a> {
    pub program: &'a Program,
    pub summaries: &'a Summaries,
}

impl Leaves for LargeLeaves<'_> {
    type T = Large;
    fn op(&mut self, span: Span, op: OpId) -> Large {
        let o = self.program.op(op);
        let site = Site {
            span,
            what: What::Op(op),
        };
        Large {
            changed: o.changes.then_some(site),
            large: o.large_output.then_some(site),
            viol: (o.changes && o.large_output).then_some((site, None)),
        }
    }
    fn callee(&mut self, span: Span, action: ActionId) -> OkFail<Large> {
        let Some(s) = self.summaries.get(action) else {
            return unit_callee();
        };
        let site = Site {
            span,
            what: What::Callee(action),
        };
        s.large.map(|l| Large {
            changed: l.changed.map(|_| site),
            large: l.large.map(|_| site),
            viol: None,
        })
    }
}
