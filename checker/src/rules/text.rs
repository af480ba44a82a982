//! Shared wording for the rules: names of operations, actions, failures and
//! writes as the author writes them, durations, and where a step's label goes.

use jadpo_compiler::ir::{ActionId, FailureId, OpId, Program, WriteKind};
use jadpo_compiler::span::Span;

use super::Cx;
use crate::analysis::rope::Leaf;
use crate::analysis::values::What;

pub fn op(p: &Program, op: OpId) -> String {
    p.operations
        .get(op)
        .map_or_else(|| "an operation".to_string(), |o| o.qualified.clone())
}

pub fn action(p: &Program, id: ActionId) -> String {
    p.actions
        .get(id)
        .map_or_else(|| "an action".to_string(), |a| a.qualified.clone())
}

pub fn failure(p: &Program, f: FailureId) -> String {
    p.failures
        .get(f)
        .map_or_else(|| "a failure".to_string(), |f| f.qualified.clone())
}

/// "`A`, `B` and `C`"
pub fn failures(p: &Program, list: &[FailureId]) -> String {
    let names: Vec<String> = list
        .iter()
        .map(|f| format!("`{}`", failure(p, *f)))
        .collect();
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// How a site reads in a message.
pub fn what(p: &Program, w: What) -> String {
    match w {
        What::Op(o) => format!("`{}`", op(p, o)),
        What::Callee(a) => format!("`{}`", action(p, a)),
        What::Write(entity, kind) => {
            let verb = match kind {
                WriteKind::Create => "create",
                WriteKind::Update => "update",
                WriteKind::Delete => "delete",
            };
            let name = p
                .entities
                .get(entity)
                .map_or("an entity", |e| e.qualified.as_str());
            format!("`{verb} {name}`")
        }
        What::Check(None) => "a validated construction".to_string(),
        What::Check(Some(entity)) => {
            let name = p
                .entities
                .get(entity)
                .map_or("an entity", |e| e.qualified.as_str());
            format!("`query required {name}`")
        }
        What::Emit(event) => {
            let name = p
                .events
                .get(event)
                .map_or("an event", |e| e.qualified.as_str());
            format!("`emit {name}`")
        }
    }
}

/// Where a call on a witness path is labelled: the deepest place on its call
/// chain inside the sources being checked, and " in `x`" when the call itself
/// sits inside a called action.
pub fn leaf_place(cx: &Cx, leaf: &Leaf) -> (Span, String) {
    let inside = leaf
        .via
        .last()
        .map(|(_, a)| format!(" in `{}`", action(cx.program, *a)))
        .unwrap_or_default();
    if cx.reportable(leaf.span) {
        return (leaf.span, inside);
    }
    let outer = leaf
        .via
        .iter()
        .rev()
        .find(|(span, _)| cx.reportable(*span))
        .or(leaf.via.first())
        .map_or(leaf.span, |(span, _)| *span);
    (outer, inside)
}

/// A witness path's steps: (step number, changing call number or 0, leaf),
/// numbered from the first changing call on.
pub fn steps<'l>(p: &Program, leaves: &'l [Leaf]) -> Vec<(u32, u32, &'l Leaf)> {
    let mut out = Vec::new();
    let mut step = 0u32;
    let mut changing = 0u32;
    for leaf in leaves {
        let changes = p.operations.get(leaf.op).is_some_and(|o| o.changes);
        if changes {
            changing += 1;
        }
        if changing == 0 {
            continue;
        }
        step += 1;
        out.push((step, if changes { changing } else { 0 }, leaf));
    }
    out
}

/// The chain of action calls shared by every changing call of a witness:
/// the innermost action that holds them all.
pub fn common_via(p: &Program, leaves: &[Leaf]) -> Vec<(Span, ActionId)> {
    let mut common: Option<Vec<(Span, ActionId)>> = None;
    for leaf in leaves {
        if !p.operations.get(leaf.op).is_some_and(|o| o.changes) {
            continue;
        }
        common = Some(match common {
            None => leaf.via.clone(),
            Some(c) => c
                .iter()
                .zip(leaf.via.iter())
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| *a)
                .collect(),
        });
    }
    common.unwrap_or_default()
}
