//! # step.late_failure: the action can end for good after a changing call has answered
//!
//! ## What it checks
//!
//! Once the action's first changing call has answered, every point that can
//! end the action for good: an `attempt` passing on a failure other than
//! `Unavailable` or `RateLimited` from anything called after it (outside
//! calls, reads included, and app or package actions); a write that names a
//! failure, under `attempt`; `reject`; `propagate`; and a called action's
//! failure that can follow its own changing call (its surface's
//! `after_effect`), even when that call holds the first changing call. The
//! first changing operation call's own failures are not late (nothing has
//! changed when it fails), a failure in the operation's `already_undone` is
//! never late, and a `match` arm that yields a value handles its failure.
//! One finding per action, with every point labelled.
//!
//! ## Why it matters
//!
//! A change made at a provider stays made when the action then fails: the
//! customer exists, the card was charged. Jadpo has no built-in compensation,
//! so each such point is a place where the app and the provider disagree.
//!
//! ## Failing example
//!
//! ```jadpo
//! failure PaymentRefused {
//!     kind: Rejected
//!     code: "payment_refused"
//! }
//!
//! event Signup {
//!     email: stripe.Email
//! }
//!
//! action signup(event: Signup) fails PaymentRefused, stripe.InvalidEmail -> Unit {
//!     var customer = attempt stripe.customers.create(stripe.CustomerCreate { email: event.email })
//!     match stripe.charges.create(stripe.ChargeCreate { customer: customer.id amount: 100 currency: "usd" }) {
//!         success(charge) => charge
//!         failure stripe.CardDeclined => reject PaymentRefused
//!     }
//! }
//!
//! subscriber on_signup on Signup {
//!     run: signup(event)
//! }
//! ```
//!
//! ## Fixed example
//!
//! A declined card after the customer exists is answered with a value, and
//! the follow-up work happens in a subscriber of the event the action emits.
//!
//! ```jadpo
//! event Signup {
//!     email: stripe.Email
//! }
//!
//! event ChargeDeclined {
//!     customer: stripe.CustomerId
//! }
//!
//! action signup(event: Signup) fails stripe.InvalidEmail -> Unit {
//!     var customer = attempt stripe.customers.create(stripe.CustomerCreate { email: event.email })
//!     var declined = match stripe.charges.create(stripe.ChargeCreate { customer: customer.id amount: 100 currency: "usd" }) {
//!         success(charge) => false
//!         failure stripe.CardDeclined => true
//!     }
//!     if declined {
//!         emit ChargeDeclined { customer: customer.id }
//!     }
//! }
//!
//! subscriber on_signup on Signup {
//!     run: signup(event)
//! }
//! ```
//!
//! ## How to decline
//!
//! When ending the action is the intended outcome (an operator tidies up),
//! write a decline with its reason on the line before the action:
//!
//! ```text
//! decline step.late_failure "the operator refunds by hand; see runbook 12"
//! action signup(event: Signup) ... { ... }
//! ```
//!
//! A decline that matches no finding is reported as `decline.unused`.
//!
//! ## Related
//!
//! `decline.unused`, `step.unkeyed`.

use jadpo_compiler::ir::ActionId;
use jadpo_compiler::span::Span;

use crate::analysis::late::{Point, PointKind};
use crate::analysis::values::What;
use crate::rules::text;
use crate::rules::{rule_info, Cx, Finding};

rule_info!(
    "step",
    "late_failure",
    Warning,
    "the action can end for good after a changing call has answered"
);

pub fn check_action(cx: &Cx, id: ActionId, out: &mut Vec<Finding>) {
    let Some(summary) = cx.summary(id) else {
        return;
    };
    let late = &summary.late;
    if late.points.is_empty() {
        return;
    }
    let action = cx.program.action(id);
    let n = late.points.len();
    let mut d = INFO
        .report(
            action.name_span,
            format!(
                "`{}` can end for good after a changing call has answered ({n} point{})",
                action.qualified,
                if n == 1 { "" } else { "s" }
            ),
        )
        .with_label("changes made before these points stay made");
    if let Some(first) = late.first_change {
        d = d.with_related(
            first,
            "the first changing call: once it has answered, the points below are late",
        );
    }
    let mut seen: Vec<Span> = Vec::new();
    for point in &late.points {
        if seen.contains(&point.span) {
            continue;
        }
        seen.push(point.span);
        d = d.with_related(point.span, point_label(cx, point));
    }
    d = d
        .with_reason(
            "a change made at a provider stays made when the action then fails, and there \
             is no built-in compensation",
        )
        .with_fix("check the condition before the first step")
        .with_fix("record the answers and finish in a subscriber of an event the write emits")
        .with_fix("undo as another step")
        .with_help(format!(
            "if ending here is intended, write `decline step.late_failure \"<reason>\"` on the line before `action {}`",
            action.name
        ));
    out.push(Finding::of(id, d));
}

fn point_label(cx: &Cx, point: &Point) -> String {
    let failures = text::failures(cx.program, &point.failures);
    match &point.kind {
        PointKind::Attempt(What::Callee(a)) => format!(
            "`attempt` passes on {failures} from `{}` after a change",
            text::action(cx.program, *a)
        ),
        PointKind::Attempt(w @ What::Write(..)) => {
            format!(
                "{} can be refused with {failures} under `attempt`",
                text::what(cx.program, *w)
            )
        }
        PointKind::Attempt(w @ What::Check(_)) => {
            format!(
                "{} can fail with {failures} under `attempt` after a change",
                text::what(cx.program, *w)
            )
        }
        PointKind::Attempt(w) => {
            format!(
                "`attempt` passes on {failures} from {} after a change",
                text::what(cx.program, *w)
            )
        }
        PointKind::Reject => format!("`reject` ends the action with {failures} after a change"),
        PointKind::Propagate => format!("`propagate` passes on {failures} after a change"),
    }
}
