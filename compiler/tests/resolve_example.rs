//! Acceptance: the design's complete example resolves with no diagnostics,
//! and lowers to the IR the checker expects.

use crate::resolve_support;

use resolve_support::{check_app, render, DESIGN_EXAMPLE};

#[test]
fn design_example_resolves_without_diagnostics_against_local_stripe() {
    let c = check_app(DESIGN_EXAMPLE);
    assert_eq!(render(&c), "");
}

#[test]
fn design_example_lowers_actions_in_evaluation_order() {
    let c = check_app(DESIGN_EXAMPLE);
    insta::assert_snapshot!(resolve_support::dump_ir(&c));
}

/// The acceptance test against the bundled stripe package. With exhaustive
/// `match` and exact `fails`, it passes only when the bundled
/// `payment_methods.attach` and `subscriptions.create` fail with nothing the
/// example does not handle or list (see `resolve_support`).
///
/// The design's example predates the audit of the stripe package against
/// Stripe's documentation (packages/stripe/README.md, "Subscriptions"): a
/// subscription must name the payment method it charges, since attaching
/// one does not make it the default, and must ask for
/// `payment_behavior: error_if_incomplete`, or a declined first payment
/// answers 200 `incomplete` instead of the `CardDeclined` the example
/// handles. So the example resolves cleanly with exactly those two fields
/// added, and as written its only finding names them.
#[test]
fn design_example_resolves_without_diagnostics_against_bundled_stripe() {
    let adapted = DESIGN_EXAMPLE.replacen(
        "        price: price.id\n    }) {",
        "        price: price.id\n        default_payment_method: request.payment_method\n        payment_behavior: error_if_incomplete\n    }) {",
        1,
    );
    assert_ne!(
        adapted, DESIGN_EXAMPLE,
        "the example's subscription call moved"
    );
    let c = resolve_support::check_bundled(&adapted);
    assert_eq!(render(&c), "", "the design's example must resolve cleanly");

    let as_written = resolve_support::check_bundled(DESIGN_EXAMPLE);
    let found: Vec<(&str, &str)> = as_written
        .diagnostics
        .iter()
        .map(|d| (d.code, d.summary.as_str()))
        .collect();
    assert_eq!(
        found,
        [(
            "type.missing_field",
            "`stripe.SubscriptionCreate` needs `default_payment_method`, `payment_behavior`"
        )]
    );
}
