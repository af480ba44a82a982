//! # step.unkeyed: an unkeyed changing call shares a path with another changing call
//!
//! ## What it checks
//!
//! A path with two or more changing calls (counting the calls inside called
//! app and package actions) includes one whose operation is not
//! `idempotent: true` in its package. Each path is judged on its own: two
//! calls in different branches never share a record.
//!
//! ## Why it matters
//!
//! A multi-step action resumes step by step. A step in doubt (sent, no
//! answer recorded) is sent again under the same key, which is safe only
//! when the provider takes the key or the call is safe to repeat as it is.
//! A call with neither (GitHub issues, Twilio messages, Postmark email) could
//! happen twice, so it must stay the only changing call in its action.
//!
//! ## Failing example
//!
//! ```jadpo
//! event PaymentTaken {
//!     customer: stripe.CustomerId
//! }
//!
//! action charge_and_notify(event: PaymentTaken)
//!     fails stripe.CardDeclined, github.RepositoryMissing, github.ValidationFailed -> Unit
//! {
//!     attempt stripe.charges.create(stripe.ChargeCreate { customer: event.customer amount: 100 currency: "usd" })
//!     attempt github.issues.create(github.IssueCreate { owner: "acme" repo: "billing" title: "charged" })
//! }
//!
//! subscriber on_payment on PaymentTaken {
//!     run: charge_and_notify(event)
//! }
//! ```
//!
//! ## Fixed example
//!
//! The unkeyed call moves to a subscriber of an event the action emits, where
//! it is the only changing call.
//!
//! ```jadpo
//! event PaymentTaken {
//!     customer: stripe.CustomerId
//! }
//!
//! event Charged {
//!     customer: stripe.CustomerId
//! }
//!
//! action charge(event: PaymentTaken) fails stripe.CardDeclined -> Unit {
//!     attempt stripe.charges.create(stripe.ChargeCreate { customer: event.customer amount: 100 currency: "usd" })
//!     emit Charged { customer: event.customer }
//! }
//!
//! action notify(event: Charged) fails github.RepositoryMissing, github.ValidationFailed -> Unit {
//!     attempt github.issues.create(github.IssueCreate { owner: "acme" repo: "billing" title: "charged" })
//! }
//!
//! subscriber on_payment on PaymentTaken {
//!     run: charge(event)
//! }
//!
//! subscriber on_charged on Charged {
//!     run: notify(event)
//! }
//! ```
//!
//! ## Related
//!
//! `step.too_many`, `step.context`.

use jadpo_compiler::ir::ActionId;

use crate::analysis::rope::{flatten, Rope};
use crate::analysis::values::UStates;
use crate::rules::text;
use crate::rules::{rule_info, Cx, Finding};

rule_info!(
    "step",
    "unkeyed",
    Error,
    "an unkeyed changing call shares a path with another changing call"
);

pub fn check_action(cx: &Cx, id: ActionId, out: &mut Vec<Finding>) {
    let Some(summary) = cx.summary(id) else {
        return;
    };
    let Some(states) = &summary.unkeyed_all else {
        return;
    };
    let Some(Some(witness)) = states.s.get(UStates::BAD) else {
        return;
    };
    let Some(unkeyed) = &witness.unkeyed else {
        return;
    };
    let Some(leaf) = flatten(&Some(unkeyed.clone())).into_iter().next() else {
        return;
    };
    let primary = match &**unkeyed {
        Rope::Call { span, .. } => *span,
        _ => leaf.span,
    };
    let op = text::op(cx.program, leaf.op);
    let inside = leaf
        .via
        .last()
        .map(|(_, a)| format!(" in `{}`", text::action(cx.program, *a)))
        .unwrap_or_default();
    let action = cx.program.action(id);
    let mut d = INFO
        .report(
            primary,
            format!(
                "`{op}`{inside} is not idempotent, but `{}` makes another changing call on \
             the same path",
                action.qualified
            ),
        )
        .with_label(format!(
            "`{op}`{inside} takes no key and is not safe to repeat"
        ));
    for other in witness.others.iter() {
        for leaf in flatten(&Some(other.clone())) {
            let (span, inside) = text::leaf_place(cx, &leaf);
            d = d.with_related(
                span,
                format!(
                    "another changing call on the same path: `{}`{inside}",
                    text::op(cx.program, leaf.op)
                ),
            );
        }
    }
    d = d
        .with_reason(
            "a path with several changing calls is resumed step by step, and a step in \
             doubt is sent again; only a call that takes the provider's key or is safe to \
             repeat can be sent twice",
        )
        .with_fix(format!(
            "emit an event and make `{op}` in a subscriber of it, as the only changing call \
             of that action"
        ))
        .with_fix("use an operation marked `idempotent: true` in its package instead".to_string());
    out.push(Finding::of(id, d));
}
