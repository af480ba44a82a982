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
use crate::follow_up::rope::Leaf;
use crate::follow_up::Stager;

pub fn event(p: &Program, id: EventId) -> String {
    p.events
        .get(id.0 as usize)
        .map_or_else(|| "an event".to_string(), |e| e.qualified.clone())
}

/// The subject of a staging place: "`emit E`" or "the call of `a`".
pub fn stager(p: &Program, s: Stager) -> String {
    match s {
        Stager::Emit(e) => format!("`emit {}`", event(p, e)),
        Stager::Call(a) => format!("the call of `{}`", text::action(p, a)),
    }
}

/// Where an emit on a witness path is labelled in the action judged: the
/// emit itself, or the outermost call leading to it with " in `x`" naming
/// the action that holds the emit.
pub fn leaf_place(cx: &Cx, leaf: &Leaf) -> (Span, String) {
    let inside = leaf
        .via
        .last()
        .map(|(_, a)| format!(" in `{}`", text::action(cx.program, *a)))
        .unwrap_or_default();
    (head(cx, leaf.place()), inside)
}

/// One label per run of consecutive emits at the same place, in path
/// order: (place, "`emit A`, `emit B` in `x`", first and last follow-up
/// number counting loop passes, bytes of the run).
pub fn runs(cx: &Cx, leaves: &[Leaf]) -> Vec<Run> {
    let mut out: Vec<Run> = Vec::new();
    let mut k = 0u64;
    for leaf in leaves {
        let times = leaf.times();
        let first = k + 1;
        k = k.saturating_add(times);
        let (span, inside) = leaf_place(cx, leaf);
        let name = format!("`emit {}`", event(cx.program, leaf.event));
        let bytes = leaf.bytes.saturating_mul(times);
        match out.last_mut() {
            Some(r) if r.span == span && r.inside == inside && !leaf.via.is_empty() => {
                if !r.names.contains(&name) {
                    r.names.push(name);
                }
                r.last = k;
                r.bytes = r.bytes.saturating_add(bytes);
                r.looped |= times > 1;
            }
            _ => out.push(Run {
                span,
                inside,
                names: vec![name],
                first,
                last: k,
                times,
                each: leaf.bytes,
                bytes,
                looped: times > 1,
            }),
        }
    }
    out
}

/// Consecutive emits on a witness path reached at one place.
#[derive(Clone, Debug)]
pub struct Run {
    pub span: Span,
    pub inside: String,
    pub names: Vec<String>,
    pub first: u64,
    pub last: u64,
    /// Loop passes of a single emit (1 for a run through a call).
    pub times: u64,
    /// Bytes of one follow-up of a single emit.
    pub each: u64,
    pub bytes: u64,
    /// Some emit of the run is repeated by a loop's `max`.
    pub looped: bool,
}

impl Run {
    /// "`emit A` in `x`"
    pub fn what(&self) -> String {
        format!("{}{}", self.names.join(", "), self.inside)
    }

    /// "follow-up 3" or "follow-ups 3 to 7"
    pub fn numbers(&self) -> String {
        if self.first == self.last {
            format!("follow-up {}", self.first)
        } else {
            format!("follow-ups {} to {}", self.first, self.last)
        }
    }
}

/// The first called action on a witness path whose own value is over its
/// limit: that action's finding covers the path.
pub fn callee_over(leaves: &[Leaf], over: impl Fn(ActionId) -> bool) -> bool {
    leaves.iter().any(|l| l.via.first().is_some_and(|(_, a)| over(*a)))
}

/// The value part of a `name: value` span: after the first `:`, without
/// leading blanks. The whole span when it holds no `:`.
pub fn value_span(cx: &Cx, span: Span) -> Span {
    if span.file.0 as usize >= cx.files.len() {
        return span;
    }
    let text = cx.files.slice(span);
    let Some(colon) = text.find(':') else { return span };
    let rest = text.get(colon + 1..).unwrap_or("");
    let blanks = rest.len() - rest.trim_start().len();
    let start = span.start + (colon + 1 + blanks) as u32;
    if start >= span.end {
        return span;
    }
    Span::new(span.file, start, span.end)
}

/// The head of a statement's span: up to its first `{` or line end, without
/// trailing blanks (`emit Remind`, `for code in codes max 10`), so a
/// finding points at the smallest part that names it.
pub fn head(cx: &Cx, span: Span) -> Span {
    if span.file.0 as usize >= cx.files.len() {
        return span;
    }
    let text = cx.files.slice(span);
    let cut = text.find(['{', '\n']).unwrap_or(text.len());
    let len = text.get(..cut).unwrap_or("").trim_end().len();
    if len == 0 {
        return span;
    }
    Span::new(span.file, span.start, span.start + len as u32)
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
