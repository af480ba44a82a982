//! The forward walk behind `step.late_failure` and a surface's `after_effect`:
//! which points can end an action for good after its first changing call has
//! answered. The state on each path is one bit: has a changing call (or a
//! called action's changing call) succeeded yet. A may-analysis: a point is
//! late when some path reaches it in the changed state.

use std::collections::BTreeSet;

use jadpo_compiler::ir::{
    ArmEnd, ArmPattern, Block, Effect, FailureId, Handling, Node, Program, Target,
};
use jadpo_compiler::span::Span;

use super::values::What;
use super::Summaries;

/// Some path reaches here with nothing changed yet.
pub const UNCHANGED: u8 = 1;
/// Some path reaches here after a changing call succeeded.
pub const CHANGED: u8 = 2;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PointKind {
    /// `attempt` (or an unhandled call) passing failures on.
    Attempt(What),
    Reject,
    Propagate,
}

/// A point that can end the action for good after something changed.
#[derive(Clone, Debug)]
pub struct Point {
    pub span: Span,
    pub kind: PointKind,
    pub failures: Vec<FailureId>,
}

#[derive(Clone, Debug, Default)]
pub struct Late {
    pub points: Vec<Point>,
    /// Failures (other than the transient ones) that can escape the action.
    pub escapes: BTreeSet<FailureId>,
    /// Those that can escape after the action's own changing call.
    pub after_effect: BTreeSet<FailureId>,
    /// How the action can return: [`UNCHANGED`], [`CHANGED`] or both.
    pub ok_states: u8,
    /// The first changing call (or call of an action that changes), in
    /// evaluation order.
    pub first_change: Option<Span>,
}

#[derive(Clone, Copy, Default)]
struct Out {
    through: u8,
    ret: u8,
    fail: u8,
}

struct Walker<'a> {
    program: &'a Program,
    summaries: &'a Summaries,
    late: Late,
}

pub fn analyse(program: &Program, summaries: &Summaries, body: &Block) -> Late {
    let mut w = Walker {
        program,
        summaries,
        late: Late::default(),
    };
    let out = w.block(body, UNCHANGED);
    w.late.ok_states = out.through | out.ret;
    w.late
}

impl Walker<'_> {
    fn block(&mut self, block: &Block, state: u8) -> Out {
        let mut out = Out {
            through: state,
            ..Out::default()
        };
        for node in &block.nodes {
            if out.through == 0 {
                break;
            }
            let next = self.node(node, out.through);
            out.through = next.through;
            out.ret |= next.ret;
            out.fail |= next.fail;
        }
        out
    }

    fn node(&mut self, node: &Node, s: u8) -> Out {
        match node {
            Node::Effect(effect) => self.effect(effect, s),
            Node::Emit(_) => Out {
                through: s,
                ..Out::default()
            },
            Node::Reject(r) => {
                self.escape(r.span, PointKind::Reject, &[r.failure], s);
                Out {
                    fail: s,
                    ..Out::default()
                }
            }
            Node::Return(_) => Out {
                ret: s,
                ..Out::default()
            },
            Node::If {
                then_block,
                else_block,
                ..
            } => {
                let a = self.block(then_block, s);
                let b = self.block(else_block, s);
                Out {
                    through: a.through | b.through,
                    ret: a.ret | b.ret,
                    fail: a.fail | b.fail,
                }
            }
            Node::Loop { body, .. } => {
                let b = self.block(body, s);
                Out {
                    through: s | b.through,
                    ret: b.ret,
                    fail: b.fail,
                }
            }
        }
    }

    /// Records failures escaping at a point reached in state `s`.
    fn escape(&mut self, span: Span, kind: PointKind, failures: &[FailureId], s: u8) {
        let failures: Vec<FailureId> = failures
            .iter()
            .copied()
            .filter(|f| !self.program.failure(*f).kind.is_transient())
            .collect();
        if failures.is_empty() || s == 0 {
            return;
        }
        self.late.escapes.extend(failures.iter().copied());
        if s & CHANGED != 0 {
            self.late.after_effect.extend(failures.iter().copied());
            self.late.points.push(Point {
                span,
                kind,
                failures,
            });
        }
    }

    fn effect(&mut self, effect: &Effect, s: u8) -> Out {
        match &effect.target {
            Target::Op(op) => {
                let o = self.program.op(*op);
                if o.changes && self.late.first_change.is_none() {
                    self.late.first_change = Some(effect.span);
                }
                let ok = if o.changes { CHANGED } else { s };
                let undone = o.already_undone.clone();
                let late: Vec<FailureId> = o
                    .failures
                    .iter()
                    .copied()
                    .filter(|f| !undone.contains(f))
                    .collect();
                let what = What::Op(*op);
                self.handled(effect, what, s, ok, &late, &|f| (s, undone.contains(&f)), s)
            }
            Target::Action(a) => {
                let (escapes, after, ok_states) = match self.summaries.get(*a) {
                    Some(sum) => (
                        sum.late.escapes.clone(),
                        sum.late.after_effect.clone(),
                        sum.late.ok_states,
                    ),
                    None => (BTreeSet::new(), BTreeSet::new(), UNCHANGED),
                };
                if ok_states & CHANGED != 0 && self.late.first_change.is_none() {
                    self.late.first_change = Some(effect.span);
                }
                let mut ok = s & CHANGED;
                if s & UNCHANGED != 0 {
                    ok |= ok_states;
                }
                let fail_state = if after.is_empty() { s } else { s | CHANGED };
                let what = What::Callee(*a);
                if let Handling::Match(_) = effect.handling {
                    let all: Vec<FailureId> = escapes.iter().copied().collect();
                    let arm_state = |f: FailureId| {
                        if after.contains(&f) {
                            (s | CHANGED, false)
                        } else {
                            (s, false)
                        }
                    };
                    return self.handled(effect, what, s, ok, &all, &arm_state, fail_state);
                }
                // Under attempt: before this call only its after-effect
                // failures are late; after a change, all of them.
                if s & UNCHANGED != 0 {
                    let early: Vec<FailureId> = escapes
                        .iter()
                        .copied()
                        .filter(|f| !after.contains(f))
                        .collect();
                    self.escape(effect.span, PointKind::Attempt(what), &early, UNCHANGED);
                }
                let late: Vec<FailureId> = if s & CHANGED != 0 {
                    escapes.iter().copied().collect()
                } else {
                    after.iter().copied().collect()
                };
                self.escape(effect.span, PointKind::Attempt(what), &late, CHANGED);
                Out {
                    through: ok,
                    ret: 0,
                    fail: fail_state,
                }
            }
            Target::Write(w) => {
                let failures: Vec<FailureId> = w.failures.iter().map(|(f, _)| *f).collect();
                let what = What::Write(w.entity, w.kind);
                let fail = if failures.is_empty() { 0 } else { s };
                self.handled(effect, what, s, s, &failures, &|_| (s, false), fail)
            }
            Target::Check(c) => {
                let what = What::Check(c.query);
                self.handled(effect, what, s, s, &[c.failure], &|_| (s, false), s)
            }
        }
    }

    /// The effect's handling. `arm_state(f)` gives the state a failure arm
    /// starts in and whether its failure counts as already undone.
    #[allow(clippy::too_many_arguments)]
    fn handled(
        &mut self,
        effect: &Effect,
        what: What,
        s: u8,
        ok: u8,
        failures: &[FailureId],
        arm_state: &dyn Fn(FailureId) -> (u8, bool),
        fail_state: u8,
    ) -> Out {
        let arms = match &effect.handling {
            Handling::Match(arms) => arms,
            Handling::Attempt(_) | Handling::Unhandled => {
                self.escape(effect.span, PointKind::Attempt(what), failures, s);
                return Out {
                    through: ok,
                    ret: 0,
                    fail: fail_state,
                };
            }
        };
        let transient = if matches!(effect.target, Target::Write(_) | Target::Check(_)) {
            0
        } else {
            fail_state
        };
        let mut out = Out {
            fail: transient,
            ..Out::default()
        };
        let mut has_success = false;
        for arm in arms {
            let (start, undone, failure) = match arm.pattern {
                ArmPattern::Success => {
                    has_success = true;
                    (ok, false, None)
                }
                ArmPattern::Failure(f) => {
                    let (st, undone) = arm_state(f);
                    (st, undone, Some(f))
                }
            };
            let body = self.block(&arm.body, start);
            out.ret |= body.ret;
            out.fail |= body.fail;
            // An already-undone failure's arm ends nothing for good.
            let end_state = match (undone, body.through) {
                (_, 0) => 0,
                (true, _) => UNCHANGED,
                (false, t) => t,
            };
            match &arm.end {
                ArmEnd::Value => out.through |= body.through,
                ArmEnd::Reject(r) => {
                    self.escape(r.span, PointKind::Reject, &[r.failure], end_state);
                    out.fail |= body.through;
                }
                ArmEnd::Propagate(span) => {
                    if let Some(f) = failure {
                        self.escape(*span, PointKind::Propagate, &[f], end_state);
                    }
                    out.fail |= body.through;
                }
            }
        }
        if !has_success {
            out.through |= ok;
        }
        out
    }
}
