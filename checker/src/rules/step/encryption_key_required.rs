//! # step.encryption_key_required: recorded answers have no secret encryption key
//!
//! ## What it checks
//!
//! The app has an action with two or more changing calls on some path (calls
//! inside called actions included), and the `application` declares no
//! `steps: { encryption_key: }`, or the key's config entry is not
//! `secret: true`. Reported once for the app. This is an app rule.
//!
//! ## Why it matters
//!
//! A multi-step action records each provider answer so a rerun can replay
//! it. Answers can hold personal data, so they are stored encrypted with the
//! application's steps key, which must come from a secret.
//!
//! ## Failing example
//!
//! ```jadpo
//! application Example {
//!     providers: { stripe: { api_key: config.stripe_key } }
//!     events: { store: primary }
//! }
//!
//! config ExampleConfig {
//!     stripe_key: StripeKey { binding: "STRIPE_KEY" secret: true }
//! }
//!
//! store primary { kind: postgres }
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
//! `step.store_required`.

use crate::rules::{rule_info, Cx, Finding};

rule_info!(
    "step",
    "encryption_key_required",
    Error,
    "the app has a multi-step action but no secret steps encryption key"
);

pub fn check(cx: &Cx, out: &mut Vec<Finding>) {
    if !cx.is_app() {
        return;
    }
    let first = cx
        .actions()
        .find(|id| cx.summary(*id).is_some_and(|s| s.changing_calls() >= 2));
    let Some(id) = first else { return };
    let action = cx.program.action(id);
    let d = match &cx.program.app.encryption_key {
        Some(key) if key.secret => return,
        Some(key) => {
            let mut d = INFO
                .report(
                    key.span,
                    "the steps encryption key does not come from a secret config entry",
                )
                .with_label("this config entry is not `secret: true`");
            if let Some(config) = key.config_span {
                d = d.with_related(config, "declared here without `secret: true`");
            }
            d.with_fix("mark the config entry `secret: true`")
        }
        None => {
            let primary = cx.program.app.span.unwrap_or(action.name_span);
            INFO.report(primary,
                "the app has multi-step actions but no `steps: { encryption_key: }` for their recorded answers",
            )
            .with_label("no `steps: { encryption_key: }` here")
            .with_fix(
                "add `steps: { encryption_key: config.steps_key }` to `application`, with a config entry marked `secret: true`",
            )
        }
    };
    let d = d
        .with_related(
            action.name_span,
            format!(
                "`{}` makes several changing calls on one path",
                action.qualified
            ),
        )
        .with_reason(
            "the answers of recorded steps can hold personal data and are stored encrypted with \
             the application's steps key, which must come from a secret",
        );
    out.push(Finding::of(id, d));
}
