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

/// How a staging place reads: "`emit E`" or "`a` (which stages follow-ups)".
pub fn stager(p: &Program, s: Stager) -> String {
    match s {
        Stager::Emit(e) => format!("`emit {}`", event(p, e)),
        Stager::Call(a) => format!("the call of `{}`, which stages follow-ups", text::action(p, a)),
    }
}

/// Where an emit on a witness path is labelled: the emit itself when it can
/// be shown, else the deepest call leading to it that can; and
/// " in `x`" when it sits inside a called action.
pub fn leaf_place(cx: &Cx, leaf: &Leaf) -> (Span, String) {
    let inside = leaf
        .via
        .last()
        .map(|(_, a)| format!(" in `{}`", text::action(cx.program, *a)))
        .unwrap_or_default();
    if cx.reportable(leaf.span) {
        return (head(cx, leaf.span), inside);
    }
    let outer = leaf
        .via
        .iter()
        .rev()
        .find(|(span, _)| cx.reportable(*span))
        .map_or(leaf.place(), |(span, _)| *span);
    (head(cx, outer), inside)
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
