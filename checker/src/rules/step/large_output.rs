//! # step.large_output: an operation whose answer may exceed 1 MB is called as a step
//!
//! ## What it checks
//!
//! An operation with `large_output: true` in its package is called as a step:
//! on some path it comes after a changing call (a changing call inside a
//! called action counts), or it is itself a changing call.
//!
//! ## Why it matters
//!
//! From the first changing call on, every outside call's answer is recorded,
//! encrypted, at most 1 MB, so a rerun can replay it. An answer that may be
//! larger cannot be recorded; the run would stop with a fault naming the step.
//!
//! ## Failing example
//!
//! ```jadpo
//! event InvoiceRequested {
//!     customer: stripe.CustomerId
//! }
//!
//! action bill(event: InvoiceRequested) fails stripe.CardDeclined -> Unit {
//!     attempt stripe.charges.create(stripe.ChargeCreate { customer: event.customer amount: 100 currency: "usd" })
//!     attempt stripe.invoices.list(stripe.InvoiceQuery { customer: event.customer })
//! }
//!
//! subscriber on_invoice on InvoiceRequested {
//!     run: bill(event)
//! }
//! ```
//!
//! ## Fixed example
//!
//! The large read comes before the first changing call, where nothing is recorded.
//!
//! ```jadpo
//! event InvoiceRequested {
//!     customer: stripe.CustomerId
//! }
//!
//! action bill(event: InvoiceRequested) fails stripe.CardDeclined -> Unit {
//!     attempt stripe.invoices.list(stripe.InvoiceQuery { customer: event.customer })
//!     attempt stripe.charges.create(stripe.ChargeCreate { customer: event.customer amount: 100 currency: "usd" })
//! }
//!
//! subscriber on_invoice on InvoiceRequested {
//!     run: bill(event)
//! }
//! ```
//!
//! ## Related
//!
//! `step.too_many`.

use jadpo_compiler::ir::ActionId;

use crate::analysis::values::What;
use crate::rules::text;
use crate::rules::{rule_info, Cx, Finding};

rule_info!(
    "step",
    "large_output",
    Error,
    "an operation with large_output: true is called as a step"
);

pub fn check_action(cx: &Cx, id: ActionId, out: &mut Vec<Finding>) {
    let Some(summary) = cx.summary(id) else {
        return;
    };
    let Some(large) = &summary.large_all else {
        return;
    };
    let Some((call, before)) = large.viol else {
        return;
    };
    let name = match call.what {
        What::Callee(a) => format!(
            "a call of `{}`, which calls an operation with `large_output: true`,",
            text::action(cx.program, a)
        ),
        other => text::what(cx.program, other),
    };
    let mut d = INFO
        .report(
            call.span,
            format!(
                "{name} is a step of `{}`, but its answer may exceed 1 MB",
                text::action(cx.program, id)
            ),
        )
        .with_label("its answer would be recorded as a step");
    match before {
        Some(change) => {
            d = d.with_related(
                change.span,
                format!(
                    "{} changes something first",
                    text::what(cx.program, change.what)
                ),
            );
        }
        None => {
            d = d.with_help("this operation is itself a changing call, so it is always a step");
        }
    }
    d = d
        .with_reason(
            "from the first changing call on, every outside call's answer is recorded (at \
             most 1 MB) so a rerun can replay it; `large_output: true` says this answer may \
             be larger",
        )
        .with_fix("make the call before the first changing call, where answers are not recorded")
        .with_fix("or make it in a subscriber of an event this action emits");
    out.push(Finding::of(id, d));
}
