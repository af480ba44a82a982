//! # decline.not_a_warning: a decline names an error, which cannot be declined
//!
//! ## What it checks
//!
//! A `decline <code> "reason"` written before an action names a code whose
//! severity is error. Only warnings can be declined.
//!
//! ## Why it matters
//!
//! An error marks a program the runtime cannot run safely; declining it
//! would only hide that. Warnings mark choices the author may make on
//! purpose, with a reason.
//!
//! ## Failing example
//!
//! ```jadpo
//! decline step.too_many "we know"
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
//! ## Related
//!
//! `decline.unused`, `step.late_failure`.

use jadpo_compiler::diag::Diagnostic;
use jadpo_compiler::ir::Decline;

use crate::rules::{rule_info, Cx, RuleInfo};

rule_info!(
    "decline",
    "not_a_warning",
    Error,
    "a decline names an error, which cannot be declined"
);

pub fn diagnostic(_cx: &Cx, decline: &Decline, rule: &RuleInfo) -> Diagnostic {
    INFO.report(
        decline.span,
        format!("`{}` is an error and cannot be declined", decline.code),
    )
    .with_label("only warnings can be declined")
    .with_reason(format!(
        "`{}` ({}) marks a program that cannot run safely; hiding it would not make it safe",
        rule.code, rule.summary
    ))
    .with_fix(format!(
        "remove this decline and fix what `{}` reports",
        decline.code
    ))
}
