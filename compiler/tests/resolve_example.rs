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
#[test]
fn design_example_resolves_without_diagnostics_against_bundled_stripe() {
    let c = resolve_support::check_bundled(DESIGN_EXAMPLE);
    assert_eq!(render(&c), "", "the design's example must resolve cleanly");
}
