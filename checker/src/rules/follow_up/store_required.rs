//! # follow_up.store_required: follow-ups have no outbox to go to
//!
//! ## What it checks
//!
//! An action that stages follow-ups (itself or through the actions it
//! calls, package actions included) writes no store (itself or through the
//! actions it calls), and the application has no `events: { store: }`.
//! It is judged on the actions that commit on their own: those run by an
//! entry point, or called by no other action (a called action's follow-ups
//! commit with its caller). This is an app rule: it is never judged on a
//! package alone.
//!
//! ## Why it matters
//!
//! Follow-ups are inserted into an outbox in the same transaction as the
//! action's writes, so they exist if and only if the action commits. The
//! outbox lives in the store the action writes; an action that writes none
//! needs the application's `events: { store: }` to hold it.
//!
//! ## Failing example
//!
//! ```jadpo
//! type Code = Text { max_length: 16 }
//!
//! event Remind {
//!     code: Code
//! }
//!
//! action remind(code: Code) -> Unit {
//!     emit Remind { code: code }
//! }
//! ```
//!
//! ## Fixed example
//!
//! ```jadpo
//! application Example {
//!     events: { store: primary }
//! }
//!
//! store primary { kind: postgres }
//!
//! type Code = Text { max_length: 16 }
//!
//! event Remind {
//!     code: Code
//! }
//!
//! action remind(code: Code) -> Unit {
//!     emit Remind { code: code }
//! }
//! ```
//!
//! ## Related
//!
//! `step.store_required`.

use super::stager;
use crate::analysis::follow_up::staging_sites;
use crate::rules::step::store_required::record_holders;
use crate::rules::{rule_info, Cx, Finding};

rule_info!(
    "follow_up",
    "store_required",
    Error,
    "an action stages follow-ups, writes no store, and the application has no events store"
);

/// Labels shown for the places that stage follow-ups.
const SHOWN: usize = 3;

pub fn check(cx: &Cx, out: &mut Vec<Finding>) {
    if !cx.is_app() || cx.program.app.events_store.is_some() {
        return;
    }
    for id in record_holders(cx) {
        let stages = cx.analysed.follow_ups.get(id).is_some_and(|f| f.emits);
        let writes = cx.summary(id).is_some_and(|s| !s.misc.stores.is_empty());
        if !stages || writes {
            continue;
        }
        let action = cx.program.action(id);
        let mut d = INFO.report(action.name_span,
            format!(
                "`{}` stages follow-ups but writes no store, and the application has no `events: {{ store: }}` for its outbox",
                action.qualified
            ),
        )
        .with_label("stages follow-ups, writes no store");
        let fus = &cx.analysed.follow_ups;
        let mut places = Vec::new();
        staging_sites(
            &|a| fus.get(a).is_some_and(|f| f.emits),
            &action.body,
            &mut places,
        );
        for (span, s) in places.into_iter().take(SHOWN) {
            d = d.with_related(
                span,
                format!("{} stages follow-ups here", stager(cx.program, s)),
            );
        }
        if let Some(app) = cx.program.app.span {
            d = d.with_related(app, "no `events: { store: }` here");
        }
        d = d
            .with_reason(
                "follow-ups are inserted into an outbox in the action's commit transaction; the \
                 outbox lives in the store the action writes, else in the application's events store",
            )
            .with_fix("add `events: { store: <store> }` to the `application` declaration")
            .with_fix("or have the action write an entity kept in a store");
        out.push(Finding::of(id, d));
    }
}
