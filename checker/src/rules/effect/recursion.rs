//! # effect.recursion: actions call each other in a cycle that makes outside calls
//!
//! ## What it checks
//!
//! Actions that call each other in a cycle (an action calling itself
//! included) when some action of the cycle, or an action it calls, makes an
//! outside call. Reported once per cycle.
//!
//! ## Why it matters
//!
//! The compiler must know every path's calls: how many steps, the deadline
//! budget, the step shape. A cycle makes the number of calls depend on the
//! data.
//!
//! ## Failing example
//!
//! ```jadpo
//! action retry_charge(customer: stripe.CustomerId, tries: Int) fails stripe.CardDeclined -> Unit {
//!     attempt stripe.charges.create(stripe.ChargeCreate { customer: customer amount: 100 currency: "usd" })
//!     if tries > 0 {
//!         attempt retry_charge(customer, tries - 1)
//!     }
//! }
//! ```
//!
//! ## Fixed example
//!
//! Each round is its own event, handled by a subscriber.
//!
//! ```jadpo
//! event ChargeRound {
//!     customer: stripe.CustomerId
//!     tries: Int
//! }
//!
//! action charge_round(event: ChargeRound) fails stripe.CardDeclined -> Unit {
//!     attempt stripe.charges.create(stripe.ChargeCreate { customer: event.customer amount: 100 currency: "usd" })
//!     if event.tries > 0 {
//!         emit ChargeRound { customer: event.customer tries: event.tries - 1 }
//!     }
//! }
//!
//! subscriber on_round on ChargeRound {
//!     run: charge_round(event)
//! }
//! ```
//!
//! ## Related
//!
//! `effect.call_in_loop`.

use std::collections::BTreeMap;

use jadpo_compiler::ir::ActionId;
use jadpo_compiler::span::Span;

use crate::analysis::calls_in;
use crate::rules::text;
use crate::rules::{rule_info, Cx, Finding};

rule_info!(
    "effect",
    "recursion",
    Error,
    "actions call each other in a cycle that reaches an outside call"
);

pub fn check(cx: &Cx, out: &mut Vec<Finding>) {
    for cycle in &cx.analysed.cycles {
        let members = &cycle.members;
        let Some(&start) = members.first() else {
            continue;
        };
        if !cx.in_scope(start) {
            continue;
        }
        let reaches_outside = members
            .iter()
            .any(|m| cx.summary(*m).is_some_and(|s| s.misc.any_outside.is_some()));
        if !reaches_outside {
            continue;
        }
        let edges = cycle_path(cx, members, start);
        let Some(&(first_span, _, first_to)) = edges.first() else {
            continue;
        };
        let names: Vec<String> = members
            .iter()
            .map(|m| format!("`{}`", text::action(cx.program, *m)))
            .collect();
        let summary = if members.len() == 1 {
            format!("{} calls itself, and makes outside calls", names.join(""))
        } else {
            format!(
                "{} call each other in a cycle that makes outside calls",
                names.join(", ")
            )
        };
        let mut d = INFO
            .report(first_span, summary)
            .with_label(format!("calls `{}`", text::action(cx.program, first_to)));
        for &(span, from, to) in edges.iter().skip(1) {
            d = d.with_related(
                span,
                format!(
                    "`{}` calls `{}`",
                    text::action(cx.program, from),
                    text::action(cx.program, to)
                ),
            );
        }
        d = d
            .with_reason(
                "every path's outside calls must be known before the action runs: how many \
                 steps, the deadline budget, the step shape",
            )
            .with_fix("do each round in a subscriber: emit an event for the next round instead of calling back");
        out.push(Finding::of(start, d));
    }
}

/// The call sites of one cycle from `start` back to itself: (call, from, to).
fn cycle_path(cx: &Cx, members: &[ActionId], start: ActionId) -> Vec<(Span, ActionId, ActionId)> {
    // Breadth-first inside the cycle, remembering how each action was reached.
    let mut reached: BTreeMap<ActionId, (Span, ActionId)> = BTreeMap::new();
    let mut queue = vec![start];
    let mut closing: Option<(Span, ActionId)> = None;
    let mut i = 0;
    while let Some(&from) = queue.get(i) {
        i += 1;
        let mut calls = Vec::new();
        calls_in(&cx.program.action(from).body, &mut calls);
        for (span, to) in calls {
            if !members.contains(&to) {
                continue;
            }
            if to == start {
                if closing.is_none() {
                    closing = Some((span, from));
                }
                continue;
            }
            if let std::collections::btree_map::Entry::Vacant(e) = reached.entry(to) {
                e.insert((span, from));
                queue.push(to);
            }
        }
        if closing.is_some() {
            break;
        }
    }
    let Some((span, mut from)) = closing else {
        return Vec::new();
    };
    let mut path = vec![(span, from, start)];
    while from != start {
        let Some(&(span, prev)) = reached.get(&from) else {
            break;
        };
        path.push((span, prev, from));
        from = prev;
    }
    path.reverse();
    path
}
