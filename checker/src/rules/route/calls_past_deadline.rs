//! # route.calls_past_deadline: a route's outside calls can take longer than its deadline
//!
//! ## What it checks
//!
//! For a route with `deadline:`, the sum of timeout x attempts of every
//! outside call on the route action's most expensive path (provider reads,
//! changing calls and `ai` calls alike, calls inside called actions included)
//! exceeds the deadline. A loop body counts `max N` times, or once when the
//! loop has no `max`. The finding shows the sum call by call. This is an app
//! rule.
//!
//! ## Why it matters
//!
//! A route answers its client within its deadline. If the calls on one path
//! can take longer, the client gives up while the action is still calling
//! providers, and its retry meets an action in progress.
//!
//! ## Failing example
//!
//! ```jadpo
//! action summarise(prompt: ai.Prompt) fails ai.ContentRefused -> ai.Completion {
//!     return attempt ai.generate(prompt)
//! }
//!
//! route POST /summaries {
//!     auth: none
//!     deadline: 30s
//!     input: ai.Prompt
//!     output: ai.Completion
//!     run: summarise(input)
//! }
//! ```
//!
//! ## Fixed example
//!
//! ```jadpo
//! action summarise(prompt: ai.Prompt) fails ai.ContentRefused -> ai.Completion {
//!     return attempt ai.generate(prompt)
//! }
//!
//! route POST /summaries {
//!     auth: none
//!     deadline: 150s
//!     input: ai.Prompt
//!     output: ai.Completion
//!     run: summarise(input)
//! }
//! ```
//!
//! The other fixes: lower the calls' `timeout:` or `attempts:` in their
//! package, or answer 202 and make the calls in a subscriber.
//!
//! ## Related
//!
//! `step.context`.

use jadpo_compiler::duration;
use jadpo_compiler::ir::{Entry, EntryKind};

use crate::analysis::rope::flatten;
use crate::rules::text;
use crate::rules::{rule_info, Cx, Finding};

rule_info!(
    "route",
    "calls_past_deadline",
    Error,
    "the outside calls on a route's most expensive path can take longer than its deadline"
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
    let EntryKind::Route {
        deadline_ms: Some(deadline),
        deadline_span,
        ..
    } = &entry.kind
    else {
        return None;
    };
    let id = entry.action?;
    let cost = cx.summary(id)?.cost_all.as_ref()?;
    if cost.ms <= *deadline {
        return None;
    }
    let primary = deadline_span.unwrap_or(entry.run_span);
    let mut d = INFO
        .report(
            primary,
            format!(
                "the outside calls of {} can take {}, past its deadline of {}",
                entry.label,
                duration::text(cost.ms),
                duration::text(*deadline)
            ),
        )
        .with_label(format!("deadline {}", duration::text(*deadline)));
    let mut terms = Vec::new();
    for leaf in flatten(&cost.w) {
        let Some(op) = cx.program.operations.get(leaf.op) else {
            continue;
        };
        let each = op.timeout_ms.saturating_mul(u64::from(op.attempts));
        let total = each.saturating_mul(u64::from(leaf.times));
        let times = if leaf.times > 1 {
            format!(", {} times in a loop", leaf.times)
        } else {
            String::new()
        };
        let (span, inside) = text::leaf_place(cx, &leaf);
        d = d.with_related(
            span,
            format!(
                "`{}`{inside}: {} x {} attempts{times} = {}",
                op.qualified,
                duration::text(op.timeout_ms),
                op.attempts,
                duration::text(total)
            ),
        );
        terms.push(duration::text(total));
    }
    d = d
        .with_reason(format!(
            "on its most expensive path the calls sum to {} = {}, more than the deadline of {}",
            terms.join(" + "),
            duration::text(cost.ms),
            duration::text(*deadline)
        ))
        .with_fix(format!(
            "raise `deadline:` to at least {}",
            duration::text(cost.ms)
        ))
        .with_fix("lower the calls' `timeout:` or `attempts:` in their package")
        .with_fix("or answer 202 and make the calls in a subscriber of an event the route emits");
    Some(Finding::of(id, d))
}
