//! # follow_up.unbounded: an emitted field has no declared maximum size
//!
//! ## What it checks
//!
//! Each `emit` whose event has fields whose types declare no maximum size:
//! `Text` or `List` without `max_length`, or a record or list holding one.
//! One finding per `emit`, listing every such field; it points at the first
//! one written in the `emit` (or at the `emit` when none is written). Only
//! emits written in the action itself are judged, so each emit is reported
//! once however many actions call it.
//!
//! ## Why it matters
//!
//! `follow_up.too_large` sums the worst-case size of a path's follow-ups
//! from declared bounds, and leaves unbounded fields out of the sum: the
//! compiler cannot promise that the follow-ups fit in 64 KiB, and the action
//! fails at run time when a value turns out large.
//!
//! ## Failing example
//!
//! ```jadpo
//! application Example {
//!     events: { store: primary }
//! }
//!
//! store primary { kind: postgres }
//!
//! event NoteAdded {
//!     note: Text
//! }
//!
//! action add_note(note: Text) -> Unit {
//!     emit NoteAdded { note: note }
//! }
//! ```
//!
//! ## Fixed example
//!
//! ```jadpo
//! application Example {
//!     events: { store: primary }
//! }
//!
//! store primary { kind: postgres }
//!
//! type Note = Text { max_length: 2000 }
//!
//! event NoteAdded {
//!     note: Note
//! }
//!
//! action add_note(note: Note) -> Unit {
//!     emit NoteAdded { note: note }
//! }
//! ```
//!
//! ## How to decline
//!
//! When the values are known to be small, write
//! `decline follow_up.unbounded "notes are typed by staff, a few lines"`
//! on the line before the action.
//!
//! ## Related
//!
//! `follow_up.too_large`.

use jadpo_compiler::diag::Diagnostic;
use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::{ActionId, Emit};

use super::event;
use crate::analysis::follow_up::{emits_in, size};
use crate::rules::{rule_info, Cx, Finding};

rule_info!(
    "follow_up",
    "unbounded",
    Warning,
    "an emitted field has no declared maximum size"
);

pub fn check_action(cx: &Cx, id: ActionId, out: &mut Vec<Finding>) {
    let action = cx.program.action(id);
    for emit in emits_in(&action.body) {
        let unbounded = size::emit_size(cx.program, emit).unbounded;
        if !unbounded.is_empty() {
            out.push(Finding::of(id, diagnostic(cx, emit, &unbounded)));
        }
    }
}

fn diagnostic(cx: &Cx, emit: &Emit, unbounded: &[Name]) -> Diagnostic {
    let names: Vec<String> = unbounded.iter().map(|n| format!("`{n}`")).collect();
    let list = match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => names.join(""),
    };
    let written: Vec<_> = emit
        .fields
        .iter()
        .filter(|f| unbounded.contains(&f.name))
        .collect();
    let primary = written.first().map_or_else(|| emit.head, |f| f.span);
    let (fields, whose) = if unbounded.len() == 1 {
        ("field", "whose type has")
    } else {
        ("fields", "whose types have")
    };
    let mut d = INFO
        .report(
            primary,
            format!(
                "`emit {}` stages {fields} {list}, {whose} no maximum size",
                event(cx.program, emit.event)
            ),
        )
        .with_label("no maximum size declared");
    for f in written.iter().skip(1) {
        d = d.with_related(f.span, format!("`{}` has no maximum size either", f.name));
    }
    if let Some(ev) = cx.program.events.get(emit.event) {
        for f in ev.fields.iter().filter(|f| unbounded.contains(&f.name)) {
            d = d.with_related(
                f.span,
                format!("`{}` is declared without a maximum size", f.name),
            );
        }
    }
    d.with_reason(
        "the worst-case size of an action's follow-ups is checked against 64 KiB from declared \
         bounds; an unbounded field is left out, so a large value fails only at run time",
    )
    .with_fix(
        "give the field a type with `max_length`, such as `type Note = Text { max_length: 2000 }`",
    )
    .with_help(
        "if the values are known to be small, decline the warning before the action with a reason",
    )
}
