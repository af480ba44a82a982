//! The order in which an action stages unique follow-ups, for
//! `follow_up.lock_order`: each unique follow-up takes its event kind's
//! unique claim and its queue's lane lock when the commit inserts it, in
//! staging order. A path value records which resources are taken, and every
//! "X is first taken before Y is first taken" pair on some path.

use std::collections::{BTreeMap, BTreeSet};

use jadpo_compiler::ir::{ActionId, Emit, EventId, OpId};
use jadpo_compiler::span::Span;

use super::{options, Done};
use crate::analysis::flow::{Flow, Leaves, OkFail, PathVal};

/// A lock a unique follow-up takes when inserted.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Res {
    /// The unique claim of an event kind.
    Kind(EventId),
    /// The enqueue lane of a queue.
    Queue(String),
}

impl Res {
    fn same_sort(&self, other: &Res) -> bool {
        matches!(
            (self, other),
            (Res::Kind(_), Res::Kind(_)) | (Res::Queue(_), Res::Queue(_))
        )
    }
}

/// Where an action stages a resource: `span` is in the action's own body
/// (the emit's head, or the call leading to it); `emit` is the emit's head.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub span: Span,
    pub emit: Span,
    pub via: Option<ActionId>,
}

#[derive(Clone, Debug, Default)]
pub struct Locks {
    /// Taken on some path, with the first place.
    pub may: BTreeMap<Res, Place>,
    /// Taken on every path.
    pub must: BTreeSet<Res>,
    /// (X, Y): on some path X is first taken before Y is first taken.
    pub pairs: BTreeMap<(Res, Res), (Place, Place)>,
}

impl PathVal for Locks {
    fn unit() -> Self {
        Locks::default()
    }

    fn seq(&self, next: &Self) -> Self {
        let mut out = self.clone();
        for (res, place) in &next.may {
            out.may.entry(res.clone()).or_insert(*place);
        }
        out.must.extend(next.must.iter().cloned());
        // A resource every earlier path already took is not first taken here.
        for ((x, y), places) in &next.pairs {
            if !self.must.contains(y) {
                out.pairs.entry((x.clone(), y.clone())).or_insert(*places);
            }
        }
        for (x, px) in &self.may {
            for (y, py) in &next.may {
                if x != y && x.same_sort(y) && !self.must.contains(y) {
                    out.pairs
                        .entry((x.clone(), y.clone()))
                        .or_insert((*px, *py));
                }
            }
        }
        out
    }

    fn alt(&self, other: &Self) -> Self {
        let mut out = self.clone();
        for (res, place) in &other.may {
            out.may.entry(res.clone()).or_insert(*place);
        }
        out.must = self.must.intersection(&other.must).cloned().collect();
        for (pair, places) in &other.pairs {
            out.pairs.entry(pair.clone()).or_insert(*places);
        }
        out
    }
}

impl Locks {
    fn call(&self, span: Span, action: ActionId) -> Locks {
        let moved = |p: &Place| Place {
            span,
            emit: p.emit,
            via: Some(action),
        };
        Locks {
            may: self
                .may
                .iter()
                .map(|(r, p)| (r.clone(), moved(p)))
                .collect(),
            must: self.must.clone(),
            pairs: self
                .pairs
                .iter()
                .map(|(k, (a, b))| (k.clone(), (moved(a), moved(b))))
                .collect(),
        }
    }
}

pub struct LockLeaves<'a> {
    pub done: &'a Done,
}

impl Leaves for LockLeaves<'_> {
    type T = Locks;

    fn op(&mut self, _span: Span, _op: OpId) -> Locks {
        Locks::unit()
    }

    fn callee(&mut self, span: Span, action: ActionId) -> OkFail<Locks> {
        match self.done.get(action).and_then(Option::as_deref) {
            Some(s) => s.locks.map(|l| l.call(span, action)),
            None => OkFail {
                ok: Some(Locks::unit()),
                fail: None,
            },
        }
    }

    fn emit(&mut self, emit: &Emit) -> Locks {
        let mut out = Locks::unit();
        if options::unique(emit).is_none() {
            return out;
        }
        let place = Place {
            span: emit.head,
            emit: emit.head,
            via: None,
        };
        let mut taken = vec![Res::Kind(emit.event)];
        taken.extend(options::queue(emit).map(Res::Queue));
        for res in taken {
            out.may.insert(res.clone(), place);
            out.must.insert(res);
        }
        out
    }

    /// Later passes take nothing new first: the first pass gives the order.
    fn looped(&mut self, _span: Span, _max: Option<u32>, body: Flow<Locks>) -> Flow<Locks> {
        Flow::unit().alt(&body)
    }
}
