//! # step.store_required: a multi-step action has nowhere to keep its record
//!
//! ## What it checks
//!
//! An action with two or more changing calls on some path, run by an entry
//! point (or called by no other action), writes no store (itself or through
//! the actions it calls), and the application has no `events: { store: }`.
//! This is an app rule.
//!
//! ## Why it matters
//!
//! The record of a multi-step action's steps lives in the store the action
//! writes, beside the outbox, so it commits with the action. An action that
//! writes no store needs the application's `events: { store: }` to hold it.
//!
//! ## Failing example
//!
//! ```jadpo
//! application Example {
//!     providers: { stripe: { api_key: config.stripe_key } }
//!     steps: { encryption_key: config.steps_key }
//! }
//!
//! config ExampleConfig {
//!     stripe_key: StripeKey { binding: "STRIPE_KEY" secret: true }
//!     steps_key: StepsKey { binding: "STEPS_KEY" secret: true }
//! }
//!
//! type StepsKey = Text { max_length: 128 }
//!
//! event Signup {
//!     email: stripe.Email
//! }
//!
//! action signup(event: Signup) fails stripe.CardDeclined, stripe.InvalidEmail -> Unit {
//!     var customer = attempt stripe.customers.create(stripe.CustomerCreate { email: event.email })
//!     attempt stripe.charges.create(stripe.ChargeCreate { customer: customer.id amount: 100 currency: "usd" })
//! }
//!
//! subscriber on_signup on Signup {
//!     run: signup(event)
//! }
//!
//! type StripeKey = Text { max_length: 255 }
//! ```
//!
//! ## Fixed example
//!
//! ```jadpo
//! application Example {
//!     providers: { stripe: { api_key: config.stripe_key } }
//!     steps: { encryption_key: config.steps_key }
//!     events: { store: primary }
//! }
//!
//! config ExampleConfig {
//!     stripe_key: StripeKey { binding: "STRIPE_KEY" secret: true }
//!     steps_key: StepsKey { binding: "STEPS_KEY" secret: true }
//! }
//!
//! store primary { kind: postgres }
//!
//! type StepsKey = Text { max_length: 128 }
//!
//! event Signup {
//!     email: stripe.Email
//! }
//!
//! action signup(event: Signup) fails stripe.CardDeclined, stripe.InvalidEmail -> Unit {
//!     var customer = attempt stripe.customers.create(stripe.CustomerCreate { email: event.email })
//!     attempt stripe.charges.create(stripe.ChargeCreate { customer: customer.id amount: 100 currency: "usd" })
//! }
//!
//! subscriber on_signup on Signup {
//!     run: signup(event)
//! }
//!
//! type StripeKey = Text { max_length: 255 }
//! ```
//!
//! ## Related
//!
//! `step.encryption_key_required`, `follow_up.store_required`.

use jadpo_compiler::ir::ActionId;

use crate::analysis::rope::flatten;
use crate::rules::text;
use crate::rules::{rule_info, Cx, Finding};

rule_info!(
    "step",
    "store_required",
    Error,
    "a multi-step action writes no store and the application has no events store"
);

/// Actions whose record is their own: run by an entry point, or called by
/// no other action.
pub fn record_holders<'a>(cx: &'a Cx) -> impl Iterator<Item = ActionId> + 'a {
    cx.actions().filter(|id| {
        let run_by_entry = cx.program.entries.iter().any(|e| e.action == Some(*id));
        let called = cx.analysed.callers.get(*id).is_some_and(|c| !c.is_empty());
        run_by_entry || !called
    })
}

pub fn check(cx: &Cx, out: &mut Vec<Finding>) {
    if !cx.is_app() || cx.program.app.events_store.is_some() {
        return;
    }
    for id in record_holders(cx) {
        let Some(summary) = cx.summary(id) else {
            continue;
        };
        let Some(count) = &summary.count_all else {
            continue;
        };
        if count.n < 2 || !summary.misc.stores.is_empty() {
            continue;
        }
        let action = cx.program.action(id);
        let mut d = INFO.report(action.name_span,
            format!(
                "multi-step action `{}` writes no store, and the application has no `events: {{ store: }}` to keep its record",
                action.qualified
            ),
        )
        .with_label(format!("{} changing calls on one path, no store written", count.n));
        let leaves = flatten(&count.w);
        for (step, changing, leaf) in text::steps(cx.program, &leaves).into_iter().take(3) {
            if changing == 0 {
                continue;
            }
            let (span, inside) = text::leaf_place(cx, leaf);
            d = d.with_related(
                span,
                format!("step {step}: `{}`{inside}", text::op(cx.program, leaf.op)),
            );
        }
        if let Some(app) = cx.program.app.span {
            d = d.with_related(app, "no `events: { store: }` here");
        }
        d = d
            .with_reason(
                "a multi-step action's record of steps lives in the store the action writes, \
                 beside the outbox, so it commits with the action",
            )
            .with_fix("add `events: { store: <store> }` to the `application` declaration")
            .with_fix("or have the action write an entity kept in a store");
        out.push(Finding::of(id, d));
    }
}
