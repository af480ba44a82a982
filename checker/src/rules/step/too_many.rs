//! # step.too_many: more than 8 changing calls on one path of an action
//!
//! ## What it checks
//!
//! An action may make up to 8 changing calls in order, counted on its
//! longest path: the path through `if` branches and `match` arms with the
//! most changing calls, with the calls made inside called actions (app and
//! package actions alike) included. A loop body counts once. The finding
//! labels every changing call on one longest path as a numbered step.
//!
//! ## Why it matters
//!
//! Every call from the first changing call on is a step: recorded before it
//! is sent, replayed on a rerun, and compared against the step shape of the
//! next build. The runtime keeps at most 8 changing calls per action in
//! order; a longer path cannot be resumed safely. A package action over the
//! limit cannot be published.
//!
//! ## Failing example
//!
//! ```jadpo
//! action refund_all(customer: stripe.CustomerId) fails stripe.CardDeclined -> Unit {
//!     attempt stripe.charges.create(stripe.ChargeCreate { customer: customer amount: 1 currency: "usd" })
//!     attempt stripe.charges.create(stripe.ChargeCreate { customer: customer amount: 2 currency: "usd" })
//!     attempt stripe.charges.create(stripe.ChargeCreate { customer: customer amount: 3 currency: "usd" })
//!     attempt stripe.charges.create(stripe.ChargeCreate { customer: customer amount: 4 currency: "usd" })
//!     attempt stripe.charges.create(stripe.ChargeCreate { customer: customer amount: 5 currency: "usd" })
//!     attempt stripe.charges.create(stripe.ChargeCreate { customer: customer amount: 6 currency: "usd" })
//!     attempt stripe.charges.create(stripe.ChargeCreate { customer: customer amount: 7 currency: "usd" })
//!     attempt stripe.charges.create(stripe.ChargeCreate { customer: customer amount: 8 currency: "usd" })
//!     attempt stripe.charges.create(stripe.ChargeCreate { customer: customer amount: 9 currency: "usd" })
//! }
//! ```
//!
//! ## Fixed example
//!
//! The first calls stay; the rest move to a subscriber of an event the
//! action emits, so each action keeps its own short record.
//!
//! ```jadpo
//! event ChargesHalfDone {
//!     customer: stripe.CustomerId
//! }
//!
//! action charge_first(customer: stripe.CustomerId) fails stripe.CardDeclined -> Unit {
//!     attempt stripe.charges.create(stripe.ChargeCreate { customer: customer amount: 1 currency: "usd" })
//!     attempt stripe.charges.create(stripe.ChargeCreate { customer: customer amount: 2 currency: "usd" })
//!     emit ChargesHalfDone { customer: customer }
//! }
//!
//! action charge_rest(event: ChargesHalfDone) fails stripe.CardDeclined -> Unit {
//!     attempt stripe.charges.create(stripe.ChargeCreate { customer: event.customer amount: 3 currency: "usd" })
//!     attempt stripe.charges.create(stripe.ChargeCreate { customer: event.customer amount: 4 currency: "usd" })
//! }
//!
//! subscriber charge_rest_later on ChargesHalfDone {
//!     run: charge_rest(event)
//! }
//! ```
//!
//! ## Related
//!
//! `step.unkeyed`, `step.context`, `effect.call_in_loop`.

use jadpo_compiler::ir::ActionId;

use crate::analysis::rope::flatten;
use crate::rules::text;
use crate::rules::{rule_info, Cx, Finding};

rule_info!(
    "step",
    "too_many",
    Error,
    "more than 8 changing calls on one path of an action"
);

pub const LIMIT: u32 = 8;

pub fn check_action(cx: &Cx, id: ActionId, out: &mut Vec<Finding>) {
    let Some(summary) = cx.summary(id) else {
        return;
    };
    let Some(count) = &summary.count_all else {
        return;
    };
    if count.n <= LIMIT {
        return;
    }
    let leaves = flatten(&count.w);
    // A called action over the limit on its own is its own finding.
    let callee_over = leaves.iter().any(|l| {
        l.via
            .first()
            .and_then(|(_, a)| cx.summary(*a))
            .is_some_and(|s| s.changing_calls() > LIMIT)
    });
    if callee_over {
        return;
    }
    let action = cx.program.action(id);
    let mut d = INFO
        .report(
            action.name_span,
            format!(
                "`{}` makes {} changing calls on one path; at most {LIMIT} are allowed",
                action.qualified, count.n
            ),
        )
        .with_label(format!("{} changing calls on its longest path", count.n));
    for (step, changing, leaf) in text::steps(cx.program, &leaves) {
        if changing == 0 {
            continue;
        }
        let (span, inside) = text::leaf_place(cx, leaf);
        d = d.with_related(
            span,
            format!(
                "step {step}: `{}`{inside} (changing call {changing})",
                text::op(cx.program, leaf.op)
            ),
        );
    }
    d = d
        .with_reason(
            "every call from the first changing call on is a recorded step, and an action \
             can resume at most 8 changing calls in order",
        )
        .with_fix(
            "finish the first steps here, emit an event, and make the remaining calls in a \
             subscriber of it",
        )
        .with_fix("move calls that need not happen in this action into their own actions");
    out.push(Finding::of(id, d));
}
