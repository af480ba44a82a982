//! # decline.unused: a decline matches no finding
//!
//! ## What it checks
//!
//! A `decline <code> "reason"` written before an action names a warning the
//! action does not have, or a code no rule reports.
//!
//! ## Why it matters
//!
//! A stale decline reads as if the action had a known, accepted problem. It
//! also would silently hide the warning if the action later gained it for a
//! new reason.
//!
//! ## Failing example
//!
//! ```jadpo
//! decline step.late_failure "refunds are done by hand"
//! action noop() -> Unit {
//! }
//! ```
//!
//! ## Fixed example
//!
//! ```jadpo
//! action noop() -> Unit {
//! }
//! ```
//!
//! ## How to decline
//!
//! `decline.unused` itself cannot be declined: remove the stale decline.
//!
//! ## Related
//!
//! `decline.not_a_warning`, `step.late_failure`.

use jadpo_compiler::diag::{nearest, Diagnostic, Severity};
use jadpo_compiler::ir::{ActionId, Decline};

use crate::rules::text;
use crate::rules::{registry, rule_info, Cx};
use jadpo_compiler::diag::Edit;

rule_info!("decline", "unused", Warning, "a decline matches no finding");

pub fn diagnostic(cx: &Cx, id: ActionId, decline: &Decline, known: bool) -> Diagnostic {
    let action = text::action(cx.program, id);
    if known {
        return INFO.report(decline.span,
            format!("`{action}` has no `{}` warning to decline", decline.code),
        )
        .with_label("this decline matches nothing")
        .with_reason("a stale decline would hide the warning if the action gained it later for another reason")
        .with_edit_fix(
            "remove the decline",
            vec![Edit {
                span: decline.span,
                replacement: String::new(),
            }],
        );
    }
    let warnings = registry()
        .filter(|r| r.severity == Severity::Warning)
        .map(|r| r.code);
    let mut d = INFO
        .report(
            decline.span,
            format!("`{}` is not a code any rule reports", decline.code),
        )
        .with_label("this decline matches nothing")
        .with_reason("a decline names the code of a warning reported for this action");
    match nearest(&decline.code, warnings) {
        Some(near) => d = d.with_fix(format!("did you mean `{near}`?")),
        None => d = d.with_fix("remove the decline"),
    }
    d
}
