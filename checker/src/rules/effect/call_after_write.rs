//! # effect.call_after_write: an outside call after a write or `emit`
//!
//! ## What it checks
//!
//! On some path a write (`create`, `update`, `delete`) or an `emit` comes
//! before an outside call, directly or inside called actions.
//!
//! ## Why it matters
//!
//! Writes and staged events are committed together at the end of the action,
//! after the last outside call, with no transaction open during calls. A
//! write before a call would either hold a transaction across the call or be
//! committed without knowing whether the call succeeded.
//!
//! ## Failing example
//!
//! ```jadpo
//! entity Customer {
//!     store: primary
//!     id: stripe.CustomerId
//! }
//!
//! event Signup {
//!     email: stripe.Email
//! }
//!
//! action signup(event: Signup) fails stripe.CardDeclined, stripe.InvalidEmail -> Unit {
//!     var customer = attempt stripe.customers.create(stripe.CustomerCreate { email: event.email })
//!     attempt create Customer { id: customer.id }
//!     attempt stripe.charges.create(stripe.ChargeCreate { customer: customer.id amount: 100 currency: "usd" })
//! }
//!
//! subscriber on_signup on Signup {
//!     run: signup(event)
//! }
//! ```
//!
//! ## Fixed example
//!
//! ```jadpo
//! entity Customer {
//!     store: primary
//!     id: stripe.CustomerId
//! }
//!
//! event Signup {
//!     email: stripe.Email
//! }
//!
//! action signup(event: Signup) fails stripe.CardDeclined, stripe.InvalidEmail -> Unit {
//!     var customer = attempt stripe.customers.create(stripe.CustomerCreate { email: event.email })
//!     attempt stripe.charges.create(stripe.ChargeCreate { customer: customer.id amount: 100 currency: "usd" })
//!     attempt create Customer { id: customer.id }
//! }
//!
//! subscriber on_signup on Signup {
//!     run: signup(event)
//! }
//! ```
//!
//! ## Related
//!
//! `step.late_failure`.

use jadpo_compiler::ir::ActionId;

use crate::analysis::values::What;
use crate::rules::text;
use crate::rules::{rule_info, Cx, Finding};

rule_info!(
    "effect",
    "call_after_write",
    Error,
    "a write or emit comes before an outside call on some path"
);

pub fn check_action(cx: &Cx, id: ActionId, out: &mut Vec<Finding>) {
    let Some(summary) = cx.summary(id) else {
        return;
    };
    let Some(order) = &summary.order_all else {
        return;
    };
    let Some((write, call)) = order.viol else {
        return;
    };
    let call_text = match call.what {
        What::Callee(a) => format!(
            "`{}`, which makes outside calls,",
            text::action(cx.program, a)
        ),
        other => text::what(cx.program, other),
    };
    let write_text = match write.what {
        What::Callee(a) => format!("`{}`, which writes,", text::action(cx.program, a)),
        other => text::what(cx.program, other),
    };
    let move_what = match write.what {
        What::Emit(_) => "the `emit`",
        What::Callee(_) => "the call that writes",
        _ => "the write",
    };
    let d = INFO
        .report(
            call.span,
            format!(
                "{call_text} is called after {write_text} in `{}`",
                text::action(cx.program, id)
            ),
        )
        .with_label("an outside call after a write")
        .with_related(write.span, format!("{write_text} comes first here"))
        .with_reason(
            "writes and emits are committed together after the last outside call, with no \
         transaction open during calls",
        )
        .with_fix(format!("move {move_what} after the last outside call"));
    out.push(Finding::of(id, d));
}
