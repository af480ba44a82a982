//! # follow_up.lock_order: two actions stage unique follow-ups in opposite orders
//!
//! ## What it checks
//!
//! Each follow-up with `unique` options takes two locks when the commit
//! inserts it, in staging order: the unique claim of its event kind and the
//! enqueue lane of its queue. For every action the checker records which
//! event kinds, and which queues, it can stage before which others on some
//! path (called actions included; a resource counts where it is first
//! taken, and a loop body's first pass gives the order). Two different
//! actions that stage the same two event kinds, or the same two queues, in
//! opposite orders are reported once per pair, naming both actions and both
//! orders. Queues computed at run time are not judged; an emit without
//! `queue:` uses the queue `default`.
//!
//! ## Why it matters
//!
//! Two commits that take the same locks in opposite orders can deadlock
//! when they run together. Postgres aborts one of them and the runtime
//! retries its commit a few times; past that the action waits for its
//! lease to expire and runs again. Staging in one fixed order, everywhere,
//! avoids it.
//!
//! ## Failing example
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
//! event Invoice {
//!     code: Code
//! }
//!
//! event Receipt {
//!     code: Code
//! }
//!
//! action close(code: Code) -> Unit {
//!     emit Invoice { code: code } with { unique: { by_args: true } }
//!     emit Receipt { code: code } with { unique: { by_args: true } }
//! }
//!
//! action refund(code: Code) -> Unit {
//!     emit Receipt { code: code } with { unique: { by_args: true } }
//!     emit Invoice { code: code } with { unique: { by_args: true } }
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
//! event Invoice {
//!     code: Code
//! }
//!
//! event Receipt {
//!     code: Code
//! }
//!
//! action close(code: Code) -> Unit {
//!     emit Invoice { code: code } with { unique: { by_args: true } }
//!     emit Receipt { code: code } with { unique: { by_args: true } }
//! }
//!
//! action refund(code: Code) -> Unit {
//!     emit Invoice { code: code } with { unique: { by_args: true } }
//!     emit Receipt { code: code } with { unique: { by_args: true } }
//! }
//! ```
//!
//! ## How to decline
//!
//! When the two actions never commit at the same time, write
//! `decline follow_up.lock_order "refunds run only after close"` on the line
//! before the action the finding points at.
//!
//! ## Related
//!
//! `follow_up.self_collision`, `follow_up.too_many`.

use std::collections::BTreeMap;

use jadpo_compiler::diag::Diagnostic;
use jadpo_compiler::ir::ActionId;

use super::event;
use crate::analysis::follow_up::locks::{Place, Res};
use crate::rules::{rule_info, text, Cx, Finding};

rule_info!(
    "follow_up",
    "lock_order",
    Warning,
    "two actions stage unique follow-ups in opposite orders"
);

type Orders<'a> = BTreeMap<(&'a Res, &'a Res), Vec<(ActionId, (Place, Place))>>;

pub fn check(cx: &Cx, out: &mut Vec<Finding>) {
    let mut orders: Orders = BTreeMap::new();
    for id in cx.actions() {
        let Some(fu) = cx.analysed.follow_ups.get(id) else {
            continue;
        };
        for ((x, y), places) in &fu.locks_all.pairs {
            orders.entry((x, y)).or_default().push((id, *places));
        }
    }
    for ((x, y), list) in &orders {
        if x >= y {
            continue;
        }
        let Some(back) = orders.get(&(*y, *x)) else {
            continue;
        };
        let found = list
            .iter()
            .find_map(|a| back.iter().find(|b| b.0 != a.0).map(|b| (a, b)));
        if let Some((a, b)) = found {
            out.push(Finding::of(a.0, diagnostic(cx, x, y, a, b)));
        }
    }
}

fn res(cx: &Cx, r: &Res) -> String {
    match r {
        Res::Kind(e) => format!("event `{}`", event(cx.program, *e)),
        Res::Queue(q) => format!("queue `{q}`"),
    }
}

/// " (in `callee`)" when the place is a call of the action that stages it.
fn via(cx: &Cx, p: &Place) -> String {
    p.via
        .map(|a| format!(" (in `{}`)", text::action(cx.program, a)))
        .unwrap_or_default()
}

fn diagnostic(
    cx: &Cx,
    x: &Res,
    y: &Res,
    a: &(ActionId, (Place, Place)),
    b: &(ActionId, (Place, Place)),
) -> Diagnostic {
    let (xs, ys) = (res(cx, x), res(cx, y));
    let (an, bn) = (text::action(cx.program, a.0), text::action(cx.program, b.0));
    let (a1, a2) = a.1;
    let (b1, b2) = b.1;
    INFO.report(a1.span,
        format!("`{an}` stages {xs} before {ys}, and `{bn}` stages them in the opposite order"),
    )
    .with_label(format!("`{an}` takes {xs} first{}", via(cx, &a1)))
    .with_related(a2.span, format!("then {ys}{}", via(cx, &a2)))
    .with_related(b1.span, format!("`{bn}` takes {ys} first{}", via(cx, &b1)))
    .with_related(b2.span, format!("then {xs}{}", via(cx, &b2)))
    .with_reason(
        "each unique follow-up takes its event kind's unique claim and its queue's lane lock when \
         the commit inserts it; two commits taking them in opposite orders can deadlock",
    )
    .with_fix(format!("stage {xs} and {ys} in the same order in both actions"))
    .with_help("if the two actions never commit at the same time, decline the warning before the action with a reason")
}
