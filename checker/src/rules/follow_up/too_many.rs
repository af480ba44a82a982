//! # follow_up.too_many: more than 16 follow-ups staged on one path
//!
//! ## What it checks
//!
//! An action may stage at most 16 follow-ups with `emit`, counted on the path
//! with the most emits: the path through `if` branches and `match` arms that
//! stages the most, with the emits of called actions (app and package
//! actions alike) included, whether the path returns or fails. A loop body
//! counts once here; a `for ... max N` that takes the path past 16 is
//! `follow_up.in_loop` instead. The finding labels every emit on that path,
//! numbered; a call of an action is one label with the follow-ups it stages.
//!
//! ## Why it matters
//!
//! Follow-ups are inserted in the action's commit transaction, each unique
//! one under its own savepoint. Postgres keeps 64 subtransaction ids per
//! transaction in memory before overflowing to disk, which slows snapshots
//! for every other session; 16 follow-ups stay well inside that. The runtime
//! refuses to stage a 17th, so the action would fail every time it takes
//! this path.
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
//! event Remind {
//!     code: Code
//! }
//!
//! action remind_all(code: Code) -> Unit {
//!     emit Remind { code: code }
//!     emit Remind { code: code }
//!     emit Remind { code: code }
//!     emit Remind { code: code }
//!     emit Remind { code: code }
//!     emit Remind { code: code }
//!     emit Remind { code: code }
//!     emit Remind { code: code }
//!     emit Remind { code: code }
//!     emit Remind { code: code }
//!     emit Remind { code: code }
//!     emit Remind { code: code }
//!     emit Remind { code: code }
//!     emit Remind { code: code }
//!     emit Remind { code: code }
//!     emit Remind { code: code }
//!     emit Remind { code: code }
//! }
//! ```
//!
//! ## Fixed example
//!
//! Stage one follow-up that carries the work, and fan out in its subscriber
//! (each of its runs stages at most 16 again).
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
//! event RemindBatch {
//!     code: Code
//! }
//!
//! action remind_all(code: Code) -> Unit {
//!     emit RemindBatch { code: code }
//! }
//! ```
//!
//! ## Related
//!
//! `follow_up.in_loop`, `follow_up.too_large`, `step.too_many`.

use jadpo_compiler::ir::ActionId;

use super::{callee_over, runs};
use crate::analysis::follow_up::MAX_COUNT;
use crate::rules::{rule_info, Cx, Finding};

rule_info!(
    "follow_up",
    "too_many",
    Error,
    "more than 16 follow-ups staged on one path"
);

pub fn check_action(cx: &Cx, id: ActionId, out: &mut Vec<Finding>) {
    let fus = &cx.analysed.follow_ups;
    let Some(fu) = fus.get(id) else { return };
    let once = &fu.all.once;
    if once.n <= MAX_COUNT {
        return;
    }
    if callee_over(&once.w, |a| {
        fus.get(a).is_some_and(|f| f.all.once.n > MAX_COUNT)
    }) {
        return;
    }
    let action = cx.program.action(id);
    let mut d = INFO
        .report(
            action.name_span,
            format!(
                "`{}` stages {} follow-ups on one path; at most {MAX_COUNT} are allowed",
                action.qualified, once.n
            ),
        )
        .with_label(format!("{} emits on one path", once.n));
    for run in runs(cx, &once.w) {
        d = d.with_related(run.span, format!("{}: {}", run.numbers(), run.what));
    }
    d = d
        .with_reason(
            "follow-ups are inserted in the action's commit transaction, each unique one under \
             a savepoint; past 16 the runtime refuses to stage more and the action fails",
        )
        .with_fix("stage one follow-up that carries the work, and fan out in its subscriber")
        .with_fix("move emits that belong to separate work into separate actions");
    out.push(Finding::of(id, d));
}
