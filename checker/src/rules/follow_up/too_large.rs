//! # follow_up.too_large: one path's follow-ups can exceed 64 KiB
//!
//! ## What it checks
//!
//! The worst-case serialized size of the follow-ups an action stages on one
//! path, called actions included, may be at most 64 KiB (65,536 bytes). Each
//! follow-up counts its envelope (event name, queue, metadata, tags) and its
//! payload, every field at the largest JSON its type's declared bounds allow;
//! fields without a bound are left out of the sum (they are
//! `follow_up.unbounded`). A `for ... max N` body counts N times, a loop
//! without `max` once. `spec/follow-ups.md` gives the encoding. The finding
//! shows the sum emit by emit along the largest path, with a running total
//! (a call of an action counts as one step of the sum).
//!
//! When the size is over only because a loop's `max` takes the path past 16
//! follow-ups, the finding is `follow_up.in_loop` alone.
//!
//! ## Why it matters
//!
//! Staged follow-ups stay in memory from staging until the commit, in every
//! running action and every commit waiting to finish. The runtime refuses to
//! stage past 64 KiB per commit, so the action would fail whenever its
//! values are near their declared maximum.
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
//! type Report = Text { max_length: 12000 }
//!
//! event ReportReady {
//!     body: Report
//! }
//!
//! action publish(body: Report) -> Unit {
//!     emit ReportReady { body: body }
//! }
//! ```
//!
//! ## Fixed example
//!
//! Keep the large value in a store and send its id.
//!
//! ```jadpo
//! application Example {
//!     events: { store: primary }
//! }
//!
//! store primary { kind: postgres }
//!
//! type Report = Text { max_length: 12000 }
//! type ReportId = Text { max_length: 36 }
//!
//! entity SavedReport {
//!     store: primary
//!     id: ReportId
//!     body: Report
//! }
//!
//! event ReportReady {
//!     id: ReportId
//! }
//!
//! action publish(id: ReportId, body: Report) -> Unit {
//!     attempt create SavedReport { id: id body: body }
//!     emit ReportReady { id: id }
//! }
//! ```
//!
//! ## Related
//!
//! `follow_up.unbounded`, `follow_up.too_many`, `follow_up.in_loop`.

use jadpo_compiler::ir::ActionId;

use super::{bytes, callee_over, in_loop, runs};
use crate::analysis::follow_up::MAX_BYTES;
use crate::rules::{rule_info, Cx, Finding};

rule_info!(
    "follow_up",
    "too_large",
    Error,
    "one path's follow-ups can exceed 64 KiB"
);

pub fn check_action(cx: &Cx, id: ActionId, out: &mut Vec<Finding>) {
    let fus = &cx.analysed.follow_ups;
    let Some(fu) = fus.get(id) else { return };
    let size = &fu.all.bytes;
    if size.n <= MAX_BYTES {
        return;
    }
    if in_loop::max_past_limit(fu) && fu.all.bytes_once.n <= MAX_BYTES {
        return; // the loop's `max` is the mistake: `follow_up.in_loop`
    }
    if callee_over(&size.w, |a| {
        fus.get(a).is_some_and(|f| f.all.bytes.n > MAX_BYTES)
    }) {
        return;
    }
    let action = cx.program.action(id);
    let mut d = INFO.report(action.name_span,
        format!(
            "the follow-ups `{}` stages on one path can take {} bytes; at most {} (64 KiB) are allowed",
            action.qualified,
            bytes(size.n),
            bytes(MAX_BYTES)
        ),
    )
    .with_label(format!("up to {} bytes of follow-ups", bytes(size.n)));
    let mut total = 0u64;
    for run in runs(cx, &size.w) {
        total = total.saturating_add(run.bytes);
        let each = if run.times > 1 {
            format!(
                "{} × {} = {} bytes",
                run.times,
                bytes(run.each),
                bytes(run.bytes)
            )
        } else {
            format!("{} bytes", bytes(run.bytes))
        };
        d = d.with_related(
            run.span,
            format!("{}: {each} (total {})", run.what, bytes(total)),
        );
    }
    d = d
        .with_reason(
            "staged follow-ups stay in memory until the commit, and the runtime refuses to stage \
             more than 64 KiB for one commit",
        )
        .with_fix("keep large values in a store and send their ids in the event")
        .with_fix("lower the `max_length` of the fields' types to what the values need");
    out.push(Finding::of(id, d));
}
