//! # step.context: a multi-step action reached from a schedule or a route without the key
//!
//! ## What it checks
//!
//! An action with two or more changing calls on some path (calls inside
//! called actions included) is reached, directly or through calls, from a
//! `schedule`, or from a `route` without `idempotency_key: required`. The
//! finding names the entry point and the chain of calls from it. This is an
//! app rule: it is judged on the app's entry points, never on a package alone.
//!
//! ## Why it matters
//!
//! A multi-step action keeps a record keyed by the action's key so a rerun
//! replays the steps already done. A subscriber's delivery has that key; a
//! route has it only when its API requires the client's Idempotency-Key. A
//! schedule tick or an unkeyed request has none, so a retry would start over
//! and repeat the first steps.
//!
//! ## Failing example
//!
//! ```jadpo
//! action signup(email: stripe.Email) fails stripe.CardDeclined, stripe.InvalidEmail -> stripe.CustomerId {
//!     var customer = attempt stripe.customers.create(stripe.CustomerCreate { email: email })
//!     attempt stripe.charges.create(stripe.ChargeCreate { customer: customer.id amount: 100 currency: "usd" })
//!     return customer.id
//! }
//!
//! route POST /signups {
//!     auth: none
//!     input: stripe.Email
//!     output: stripe.CustomerId
//!     run: signup(input)
//! }
//! ```
//!
//! ## Fixed example
//!
//! The route requires the client's key, so a retried request resumes the record.
//!
//! ```jadpo
//! action signup(email: stripe.Email) fails stripe.CardDeclined, stripe.InvalidEmail -> stripe.CustomerId {
//!     var customer = attempt stripe.customers.create(stripe.CustomerCreate { email: email })
//!     attempt stripe.charges.create(stripe.ChargeCreate { customer: customer.id amount: 100 currency: "usd" })
//!     return customer.id
//! }
//!
//! route POST /signups {
//!     auth: none
//!     idempotency_key: required
//!     input: stripe.Email
//!     output: stripe.CustomerId
//!     run: signup(input)
//! }
//! ```
//!
//! The other fix: answer 202, emit an event, and make the calls in a
//! subscriber of it.
//!
//! ## Related
//!
//! `step.too_many`, `step.store_required`.

use jadpo_compiler::ir::{Entry, EntryKind};

use crate::analysis::rope::flatten;
use crate::rules::text;
use crate::rules::{rule_info, Cx, Finding};

rule_info!(
    "step",
    "context",
    Error,
    "a multi-step action is reached from a schedule or from a route that does not require Idempotency-Key"
);

pub fn check(cx: &Cx, out: &mut Vec<Finding>) {
    if !cx.is_app() {
        return;
    }
    for entry in &cx.program.entries {
        if let Some(f) = judge(cx, entry) {
            out.push(f);
        }
    }
}

fn judge(cx: &Cx, entry: &Entry) -> Option<Finding> {
    let (primary, kind_word) = match &entry.kind {
        EntryKind::Route {
            key_required: true, ..
        }
        | EntryKind::Subscriber { .. } => return None,
        EntryKind::Route { key_span, .. } => (key_span.unwrap_or(entry.run_span), "route"),
        EntryKind::Schedule { .. } => (entry.run_span, "schedule"),
    };
    let id = entry.action?;
    let summary = cx.summary(id)?;
    let count = summary.count_all.as_ref()?;
    if count.n < 2 {
        return None;
    }
    let leaves = flatten(&count.w);
    let mut chain = vec![format!("`{}`", text::action(cx.program, id))];
    for (_, a) in text::common_via(cx.program, &leaves) {
        chain.push(format!("`{}`", text::action(cx.program, a)));
    }
    let holder = chain.last().cloned().unwrap_or_default();
    let chain_text = chain.join(", which calls ");
    let mut d = INFO.report(
        primary,
        format!(
            "{} runs {chain_text}, a multi-step action with {} changing calls, without an \
             idempotency key",
            entry.label, count.n
        ),
    );
    let label = match kind_word {
        "route" => "this route does not require Idempotency-Key",
        _ => "a schedule tick has no idempotency key",
    };
    // One label when both would point at the same place (two arrows at one
    // span read as noise).
    d = if primary == entry.run_span {
        d.with_label(format!("runs {chain_text}; {label}"))
    } else {
        d.with_label(label)
            .with_related(entry.run_span, format!("runs {chain_text}"))
    };
    for (step, changing, leaf) in text::steps(cx.program, &leaves) {
        if changing == 0 {
            continue;
        }
        let (span, inside) = text::leaf_place(cx, leaf);
        d = d.with_related(
            span,
            format!("step {step}: `{}`{inside}", text::op(cx.program, leaf.op)),
        );
    }
    d = d.with_reason(format!(
        "{holder} keeps a record of its steps under the action's key so a rerun does not repeat \
         them; only a subscriber's delivery or a route that requires Idempotency-Key gives it one"
    ));
    d = match kind_word {
        "route" => d
            .with_fix("require the key: `idempotency_key: required`")
            .with_fix("or answer 202 and do the steps in a subscriber: emit an event here and run the steps from a subscriber of it"),
        _ => d
            .with_fix("do the steps in a subscriber: have the schedule's action emit an event and run the steps from a subscriber of it")
            .with_fix("or run them from a route that requires the key: `idempotency_key: required`"),
    };
    Some(Finding::of(id, d))
}
