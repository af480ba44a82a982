//! # effect.call_in_loop: an outside call inside `for` in an action that changes something
//!
//! ## What it checks
//!
//! An outside call inside `for` (directly, or through an action called in
//! the loop's body) in an action that makes a changing call anywhere (itself
//! or through the actions it calls). Also a call of an action that makes no
//! changing call itself but reaches such a loop. Reported once per loop.
//!
//! ## Why it matters
//!
//! After the first changing call every outside call is a step, and the
//! compiler must know every path's length: how many steps, in which order.
//! A loop makes the number of calls depend on the data. Batch work stays one
//! event per item.
//!
//! ## Failing example
//!
//! ```jadpo
//! event Batch {
//!     customer: stripe.CustomerId
//!     amounts: List<stripe.Amount> { max_length: 10 }
//! }
//!
//! action charge_all(event: Batch) fails stripe.CardDeclined -> Unit {
//!     for amount in event.amounts max 10 {
//!         attempt stripe.charges.create(stripe.ChargeCreate { customer: event.customer amount: amount currency: "usd" })
//!     }
//! }
//!
//! subscriber on_batch on Batch {
//!     run: charge_all(event)
//! }
//! ```
//!
//! ## Fixed example
//!
//! One event per item; each subscriber delivery makes one call.
//!
//! ```jadpo
//! event Batch {
//!     customer: stripe.CustomerId
//!     amounts: List<stripe.Amount> { max_length: 10 }
//! }
//!
//! event ChargeOne {
//!     customer: stripe.CustomerId
//!     amount: stripe.Amount
//! }
//!
//! action split(event: Batch) -> Unit {
//!     for amount in event.amounts max 10 {
//!         emit ChargeOne { customer: event.customer amount: amount }
//!     }
//! }
//!
//! action charge_one(event: ChargeOne) fails stripe.CardDeclined -> Unit {
//!     attempt stripe.charges.create(stripe.ChargeCreate { customer: event.customer amount: event.amount currency: "usd" })
//! }
//!
//! subscriber on_batch on Batch {
//!     run: split(event)
//! }
//!
//! subscriber on_one on ChargeOne {
//!     run: charge_one(event)
//! }
//! ```
//!
//! ## Related
//!
//! `step.too_many`, `follow_up.in_loop`.

use jadpo_compiler::diag::Diagnostic;
use jadpo_compiler::ir::ActionId;

use crate::analysis::values::What;
use crate::rules::text;
use crate::rules::{rule_info, Cx, Finding};

rule_info!(
    "effect",
    "call_in_loop",
    Error,
    "an outside call inside for, in an action that makes a changing call"
);

pub fn check_action(cx: &Cx, id: ActionId, out: &mut Vec<Finding>) {
    let Some(summary) = cx.summary(id) else {
        return;
    };
    let misc = &summary.misc;
    if !misc.has_changing {
        return;
    }
    let name = text::action(cx.program, id);
    for l in &misc.own_loops {
        let call = describe(cx, l.call.what);
        let mut d = INFO
            .report(
                l.call.span,
                format!("{call} is inside `for` in `{name}`, an action that makes changing calls"),
            )
            .with_label("an outside call repeated by the loop")
            .with_related(l.loop_span, "the loop");
        if let Some(first) = summary.late.first_change {
            d = d.with_related(first, "a changing call of this action");
        }
        out.push(Finding::of(id, finish(d)));
    }
    for c in &misc.callee_loops {
        let callee_changes = cx.summary(c.callee).is_some_and(|s| s.misc.has_changing);
        if callee_changes {
            continue; // the called action reports its own loop
        }
        let callee = text::action(cx.program, c.callee);
        let mut d = INFO.report(c.call,
            format!(
                "`{callee}` makes outside calls inside `for`, and `{name}` calls it in an action that makes changing calls"
            ),
        )
        .with_label(format!("`{callee}` repeats outside calls in a loop"))
        .with_related(c.inner.loop_span, "the loop")
        .with_related(c.inner.call.span, "the outside call it repeats");
        if let Some(first) = summary.late.first_change {
            d = d.with_related(first, "a changing call of this action");
        }
        out.push(Finding::of(id, finish(d)));
    }
}

fn describe(cx: &Cx, what: What) -> String {
    match what {
        What::Callee(a) => format!(
            "a call of `{}`, which makes outside calls,",
            text::action(cx.program, a)
        ),
        other => format!("outside call {}", text::what(cx.program, other)),
    }
}

fn finish(d: Diagnostic) -> Diagnostic {
    d.with_reason(
        "after the first changing call every outside call is a recorded step, and the number \
         of steps on each path must be known before the action runs",
    )
    .with_fix("emit one event per item and make the call in a subscriber of it")
    .with_fix("or make the calls before the loop, outside it")
}
