//! `follow_up.*`: the rules on events staged with `emit` (design section 6),
//! and the wording they share.

pub mod in_loop;
pub mod invalid;
pub mod lock_order;
pub mod self_collision;
pub mod store_required;
pub mod too_large;
pub mod too_many;
pub mod unbounded;

use jadpo_compiler::ir::{ActionId, EventId, Program};
use jadpo_compiler::span::Span;

use super::{text, Cx};
use crate::analysis::follow_up::rope::{items, Item, What, W};
use crate::analysis::follow_up::Stager;

pub fn event(p: &Program, id: EventId) -> String {
    p.events
        .get(id)
        .map_or_else(|| "an event".to_string(), |e| e.qualified.clone())
}

/// The subject of a staging place: "`emit E`" or "the call of `a`".
pub fn stager(p: &Program, s: Stager) -> String {
    match s {
        Stager::Emit(e) => format!("`emit {}`", event(p, e)),
        Stager::Call(a) => format!("the call of `{}`", text::action(p, a)),
    }
}

/// One place of a witness path, as labelled: numbered follow-ups and
/// bytes along the path.
#[derive(Clone, Debug)]
pub struct Run {
    pub span: Span,
    /// "`emit E`" or "the call of `a`".
    pub what: String,
    pub first: u64,
    pub last: u64,
    /// Passes of the action's own loops.
    pub times: u64,
    /// Bytes of one pass.
    pub each: u64,
    pub bytes: u64,
    pub looped: bool,
}

impl Run {
    /// "follow-up 3" or "follow-ups 3 to 7"
    pub fn numbers(&self) -> String {
        if self.first == self.last {
            format!("follow-up {}", self.first)
        } else {
            format!("follow-ups {} to {}", self.first, self.last)
        }
    }

    pub fn count(&self) -> u64 {
        (self.last + 1).saturating_sub(self.first)
    }
}

/// The places of a witness path inside the action judged, numbered.
pub fn runs(cx: &Cx, w: &W) -> Vec<Run> {
    let mut k = 0u64;
    let mut out = Vec::new();
    for item in items(w) {
        let n = item.total_count();
        if n == 0 {
            continue;
        }
        let what = match item.what {
            What::Emit(e) => format!("`emit {}`", event(cx.program, e)),
            What::Call(a) => format!("the call of `{}`", text::action(cx.program, a)),
        };
        out.push(Run {
            span: item.span,
            what,
            first: k + 1,
            last: k.saturating_add(n),
            times: item.times,
            each: item.bytes,
            bytes: item.total_bytes(),
            looped: item.looped(),
        });
        k = k.saturating_add(n);
    }
    out
}

/// A called action on the witness path is over its limit on its own: that
/// action's finding covers the path.
pub fn callee_over(w: &W, over: impl Fn(ActionId) -> bool) -> bool {
    items(w).iter().filter_map(Item::callee).any(over)
}

/// `65536` as `65,536`.
pub fn bytes(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
