//! # subscriber.unguarded_create: a second delivery of the event would call the provider again
//!
//! ## What it checks
//!
//! An action run by a subscriber that makes a changing call (itself or in
//! an action it calls) and then creates a row whose key (the entity's first
//! field) is computed from the action's parameters alone, that is from the
//! event, without querying that entity before its first outside call.
//!
//! ## Why it matters
//!
//! An event can arrive twice: an emitter without a unique key, a sender's
//! retry, a replay from another system. Each arrival is its own delivery,
//! with its own step keys, so the provider is called again (a second
//! charge), and only then does the `create` meet the row the first delivery
//! stored: the second delivery faults or fails after the harm is done. A
//! read of the row before the first call lets the second delivery see the
//! work is done and end.
//!
//! ## Failing example
//!
//! ```jadpo
//! event OrderPlaced {
//!     order: Text { max_length: 64 }
//!     customer: stripe.CustomerId
//! }
//!
//! entity Order {
//!     store: primary
//!     id: Text { max_length: 64 }
//!     charge: stripe.ChargeId
//! }
//!
//! action charge_order(placed: OrderPlaced) fails stripe.CardDeclined -> Unit {
//!     var charge = attempt stripe.charges.create(stripe.ChargeCreate { customer: placed.customer amount: 100 currency: "usd" })
//!     attempt create Order { id: placed.order charge: charge.id }
//! }
//!
//! subscriber on_order on OrderPlaced {
//!     run: charge_order(event)
//! }
//! ```
//!
//! ## Fixed example
//!
//! The row is looked up first; a second delivery finds it and ends before
//! the charge.
//!
//! ```jadpo
//! event OrderPlaced {
//!     order: Text { max_length: 64 }
//!     customer: stripe.CustomerId
//! }
//!
//! entity Order {
//!     store: primary
//!     id: Text { max_length: 64 }
//!     charge: stripe.ChargeId
//! }
//!
//! action charge_order(placed: OrderPlaced) fails stripe.CardDeclined -> Unit {
//!     var done = query optional Order { where: id == placed.order }
//!     if done != none {
//!         return
//!     }
//!     var charge = attempt stripe.charges.create(stripe.ChargeCreate { customer: placed.customer amount: 100 currency: "usd" })
//!     attempt create Order { id: placed.order charge: charge.id }
//! }
//!
//! subscriber on_order on OrderPlaced {
//!     run: charge_order(event)
//! }
//! ```
//!
//! ## How to decline
//!
//! When the event cannot arrive twice (every emit of it is unique by its
//! payload, and nothing else sends it), write
//! `decline subscriber.unguarded_create "events are unique by order"` on
//! the line before the action.
//!
//! ## Related
//!
//! `step.late_failure`, `follow_up.self_collision`.

use std::collections::BTreeSet;

use jadpo_compiler::ir::{EntryKind, Node, Target, WriteKind};

use crate::rules::text;
use crate::rules::{rule_info, Cx, Finding};

rule_info!(
    "subscriber",
    "unguarded_create",
    Warning,
    "a subscriber's action calls a provider before creating a row keyed by its event, without reading the row first"
);

pub fn check(cx: &Cx, out: &mut Vec<Finding>) {
    if !cx.is_app() {
        return;
    }
    let mut judged = BTreeSet::new();
    for entry in &cx.program.entries {
        let (EntryKind::Subscriber { .. }, Some(id)) = (&entry.kind, entry.action) else {
            continue;
        };
        if !judged.insert(id) {
            continue;
        }
        let Some(first_change) = cx.summary(id).and_then(|s| s.late.first_change) else {
            continue;
        };
        let action = cx.program.action(id);
        let mut creates = Vec::new();
        action.body.for_each_node(&mut |node| {
            if let Node::Effect(e) = node {
                if let Target::Write(w) = &e.target {
                    let keyed = w.kind == WriteKind::Create && w.keyed_by_input;
                    if keyed && !w.read_first {
                        creates.push((e.span, w.entity));
                    }
                }
            }
        });
        let Some((span, entity)) = creates.first().copied() else {
            continue;
        };
        let entity = &cx.program.entity(entity).qualified;
        let d = INFO
            .report(
                span,
                format!(
                    "if its event arrives twice, `{}` calls the provider again before this `create {entity}` finds the row the first delivery stored",
                    text::action(cx.program, id)
                ),
            )
            .with_label("keyed by the event: a second delivery creates the same key")
            .with_related(first_change, "changes something at the provider first")
            .with_related(entry.span, "runs it for each event that arrives")
            .with_reason(
                "each arrival of an event is its own delivery with its own step keys, so a second one repeats the provider's changes (a second charge) and then faults on the existing row",
            )
            .with_fix(format!(
                "read it before the first call: `var done = query optional {entity} {{ where: ... }}`, and `return` when it is there"
            ))
            .with_fix("or make every emit of the event unique by its payload (`with { unique: { by_args: true } }`), and decline this warning");
        out.push(Finding::of(id, d));
    }
}
