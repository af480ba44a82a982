//! # follow_up.in_loop: follow-ups staged in a loop with no bound under 16
//!
//! ## What it checks
//!
//! Two cases, each reported once:
//!
//! - an `emit` inside `for` without `max`, directly or through a called
//!   action: one finding per such loop (the outermost one), labelling every
//!   emit or call in it that stages follow-ups;
//! - a `for ... max N` that takes a path past 16 follow-ups: the path stays
//!   within 16 when each loop body counts once, and goes over when it counts
//!   `max N` times. One finding per action, labelling the loops and emits on
//!   that path.
//!
//! A loop reported here is not reported again as `follow_up.too_many` or
//! `follow_up.too_large`: for those rules a loop without `max` counts once,
//! and a size over 64 KiB only because of a loop's `max` is left to this
//! rule.
//!
//! ## Why it matters
//!
//! The runtime stages at most 16 follow-ups per commit. A loop without
//! `max` stages one per item of a list whose length is known only at run
//! time, so the action fails as soon as the list is long enough; a `max`
//! above the limit fails the same way. `max N` means the body runs for at
//! most the first N items.
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
//! type Codes = List<Code> { max_length: 500 }
//!
//! event Remind {
//!     code: Code
//! }
//!
//! action remind_all(codes: Codes) -> Unit {
//!     for code in codes {
//!         emit Remind { code: code }
//!     }
//! }
//! ```
//!
//! ## Fixed example
//!
//! Bound the loop, or stage one follow-up carrying the list and fan out in
//! its subscriber.
//!
//! ```jadpo
//! application Example {
//!     events: { store: primary }
//! }
//!
//! store primary { kind: postgres }
//!
//! type Code = Text { max_length: 16 }
//! type Codes = List<Code> { max_length: 500 }
//!
//! event Remind {
//!     code: Code
//! }
//!
//! action remind_all(codes: Codes) -> Unit {
//!     for code in codes max 10 {
//!         emit Remind { code: code }
//!     }
//! }
//! ```
//!
//! ## Related
//!
//! `follow_up.too_many`, `follow_up.too_large`, `effect.call_in_loop`.

use std::collections::BTreeSet;

use jadpo_compiler::diag::Diagnostic;
use jadpo_compiler::ir::ActionId;

use super::{callee_over, runs, stager, Run};
use crate::analysis::follow_up::rope::items;
use crate::analysis::follow_up::{ActionFollowUps, UnboundedLoop, MAX_COUNT};
use crate::rules::{rule_info, Cx, Finding};

rule_info!(
    "follow_up",
    "in_loop",
    Error,
    "follow-ups staged in a loop with no bound under 16"
);

/// The path is within the limit with loop bodies counted once, and over it
/// with each body counted `max N` times.
pub fn max_past_limit(fu: &ActionFollowUps) -> bool {
    fu.all.once.n <= MAX_COUNT && fu.all.count.n > MAX_COUNT
}

pub fn check_action(cx: &Cx, id: ActionId, out: &mut Vec<Finding>) {
    let Some(fu) = cx.analysed.follow_ups.get(id) else {
        return;
    };
    for l in &fu.unbounded_loops {
        if let Some(d) = unbounded_loop(cx, l) {
            out.push(Finding::of(id, d));
        }
    }
    if max_past_limit(fu) {
        if let Some(d) = max_too_high(cx, id, fu) {
            out.push(Finding::of(id, d));
        }
    }
}

fn unbounded_loop(cx: &Cx, l: &UnboundedLoop) -> Option<Diagnostic> {
    let (first, rest) = l.sites.split_first()?;
    let mut d = INFO
        .report(
            first.0,
            format!(
                "{} stages follow-ups for every item of a `for` without `max`",
                stager(cx.program, first.1)
            ),
        )
        .with_label("staged once per item, with no bound")
        .with_related(l.loop_head, "this `for` has no `max`");
    for (span, s) in rest {
        d = d.with_related(
            *span,
            format!("{} stages per item too", stager(cx.program, *s)),
        );
    }
    Some(
        d.with_reason(
            "the runtime stages at most 16 follow-ups per commit, and a loop without `max` \
             stages as many as its list has items",
        )
        .with_fix("add `max N` to the `for`, so that N passes stage at most 16 follow-ups")
        .with_fix("stage one follow-up that carries the list, and fan out in its subscriber"),
    )
}

fn max_too_high(cx: &Cx, id: ActionId, fu: &ActionFollowUps) -> Option<Diagnostic> {
    let fus = &cx.analysed.follow_ups;
    let w = &fu.all.count.w;
    if callee_over(w, |a| fus.get(a).is_some_and(|f| f.all.count.n > MAX_COUNT)) {
        return None;
    }
    let runs = runs(cx, w);
    let first = runs.iter().position(|r| r.looped)?;
    let label = |r: &Run| {
        let count = match r.count() {
            1 => "1 follow-up".to_string(),
            n => format!("{n} follow-ups"),
        };
        format!("{}: {count} (total {})", r.what, r.last)
    };
    let action = cx.program.action(id);
    let primary = runs.get(first)?;
    let mut d = INFO.report(primary.span,
        format!(
            "`{}` can stage {} follow-ups on one path when its loops run to their `max`; at most {MAX_COUNT} are allowed",
            action.qualified, fu.all.count.n
        ),
    )
    .with_label(label(primary));
    let mut shown = BTreeSet::new();
    for item in items(w) {
        for (span, n) in item.loops {
            if shown.insert(span) {
                d = d.with_related(span, format!("runs at most {n} times"));
            }
        }
    }
    for (i, run) in runs.iter().enumerate() {
        if i != first {
            d = d.with_related(run.span, label(run));
        }
    }
    Some(
        d.with_reason(
            "the runtime stages at most 16 follow-ups per commit; `max N` lets the loop body \
             stage its follow-ups N times",
        )
        .with_fix("lower the loop's `max` so the path stages at most 16 follow-ups")
        .with_fix("stage one follow-up that carries the list, and fan out in its subscriber"),
    )
}
