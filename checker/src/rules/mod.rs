//! The rule registry: every code the checker can report, with its severity
//! and documentation. One file per rule under `rules/<family>/<name>.rs`; the
//! file's `//!` documentation is the rule's doc (extracted by `build.rs`).
//!
//! To add a rule: write its file and add it to [`RULES`]: its `INFO` and
//! its `check` (or `check_action`, for a check that judges each action on
//! its own). A finding's code and severity are the rule's
//! (`INFO.report(span, summary)`).

mod cache;
pub mod decline;
pub mod effect;
pub mod follow_up;
pub mod provider;
pub mod route;
pub mod step;
pub mod subscriber;
pub mod text;

pub use cache::{run_cached, Cache};

use jadpo_compiler::diag::Diagnostic;
use jadpo_compiler::ir::ActionId;

use crate::Cx;

/// A rule's metadata. `doc` is the rule file's own `//!` documentation.
pub type RuleInfo = jadpo_compiler::diag::CodeInfo;

/// Declares a rule's `INFO` with its doc taken from the rule file.
macro_rules! rule_info {
    ($family:literal, $name:literal, $severity:ident, $summary:literal) => {
        pub const INFO: $crate::rules::RuleInfo = $crate::rules::RuleInfo {
            code: concat!($family, ".", $name),
            severity: jadpo_compiler::diag::Severity::$severity,
            summary: $summary,
            doc: include_str!(concat!(
                env!("OUT_DIR"),
                "/docs/",
                $family,
                ".",
                $name,
                ".md"
            )),
        };
    };
}
pub(crate) use rule_info;

pub fn lookup(code: &str) -> Option<&'static RuleInfo> {
    // By code: a large app's thousands of declines are looked up on every
    // check, and a scan of the registry for each added up.
    static BY_CODE: std::sync::OnceLock<
        std::collections::HashMap<&'static str, &'static RuleInfo>,
    > = std::sync::OnceLock::new();
    let by_code = BY_CODE.get_or_init(|| registry().map(|r| (r.code, r)).collect());
    by_code.get(code).copied()
}

/// A rule's check over the whole program: reads the analysis, pushes
/// findings.
pub type CheckFn = fn(&Cx, &mut Vec<Finding>);

/// A rule's check of one action: reads that action's summary and
/// follow-ups (and its callees'), pushes findings for it only.
pub type ActionCheckFn = fn(&Cx, ActionId, &mut Vec<Finding>);

/// How a check runs: over the whole program at once, or action by action
/// (in id order), which lets the language server keep the findings of
/// actions that did not change ([`run_cached`]).
#[derive(Clone, Copy)]
pub enum Check {
    Whole(CheckFn),
    PerAction(ActionCheckFn),
}

impl Check {
    /// Runs the check over the whole program.
    pub fn run(&self, cx: &Cx, out: &mut Vec<Finding>) {
        match self {
            Check::Whole(check) => check(cx, out),
            Check::PerAction(check) => {
                for id in cx.actions() {
                    check(cx, id, out);
                }
            }
        }
    }
}

/// A rule: its metadata and the checks that report it (none for the
/// `decline` rules, judged when declines are applied).
pub struct Rule {
    pub info: RuleInfo,
    pub checks: &'static [Check],
}

const fn rule(info: RuleInfo, checks: &'static [Check]) -> Rule {
    Rule { info, checks }
}

/// Every rule, in code order within each family, with its checks.
pub static RULES: &[Rule] = &[
    rule(decline::not_a_warning::INFO, &[]),
    rule(decline::unused::INFO, &[]),
    rule(
        effect::call_after_write::INFO,
        &[Check::PerAction(effect::call_after_write::check_action)],
    ),
    rule(
        effect::call_in_loop::INFO,
        &[Check::PerAction(effect::call_in_loop::check_action)],
    ),
    rule(
        effect::recursion::INFO,
        &[Check::Whole(effect::recursion::check)],
    ),
    rule(
        follow_up::in_loop::INFO,
        &[Check::PerAction(follow_up::in_loop::check_action)],
    ),
    rule(
        follow_up::invalid::INFO,
        &[
            Check::PerAction(follow_up::invalid::check_action),
            Check::Whole(follow_up::invalid::check_names),
        ],
    ),
    rule(
        follow_up::lock_order::INFO,
        &[Check::Whole(follow_up::lock_order::check)],
    ),
    rule(
        follow_up::self_collision::INFO,
        &[Check::Whole(follow_up::self_collision::check)],
    ),
    rule(
        follow_up::store_required::INFO,
        &[Check::Whole(follow_up::store_required::check)],
    ),
    rule(
        follow_up::too_large::INFO,
        &[Check::PerAction(follow_up::too_large::check_action)],
    ),
    rule(
        follow_up::too_many::INFO,
        &[Check::PerAction(follow_up::too_many::check_action)],
    ),
    rule(
        follow_up::unbounded::INFO,
        &[Check::PerAction(follow_up::unbounded::check_action)],
    ),
    rule(
        provider::missing_setting::INFO,
        &[Check::Whole(provider::missing_setting::check)],
    ),
    rule(
        route::calls_past_deadline::INFO,
        &[Check::Whole(route::calls_past_deadline::check)],
    ),
    rule(step::context::INFO, &[Check::Whole(step::context::check)]),
    rule(
        step::encryption_key_required::INFO,
        &[Check::Whole(step::encryption_key_required::check)],
    ),
    rule(
        step::large_output::INFO,
        &[Check::PerAction(step::large_output::check_action)],
    ),
    rule(
        step::late_failure::INFO,
        &[Check::PerAction(step::late_failure::check_action)],
    ),
    rule(
        step::store_required::INFO,
        &[Check::Whole(step::store_required::check)],
    ),
    rule(
        step::too_many::INFO,
        &[Check::PerAction(step::too_many::check_action)],
    ),
    rule(
        step::unkeyed::INFO,
        &[Check::PerAction(step::unkeyed::check_action)],
    ),
    rule(
        subscriber::unguarded_create::INFO,
        &[Check::Whole(subscriber::unguarded_create::check)],
    ),
];

/// Every rule's metadata, in [`RULES`] order.
pub fn registry() -> impl Iterator<Item = &'static RuleInfo> {
    RULES.iter().map(|r| &r.info)
}

/// Every check, in [`RULES`] order (declines are applied afterwards); a
/// check's index here keys the per-action cache.
pub fn checks() -> Vec<&'static Check> {
    RULES.iter().flat_map(|r| r.checks).collect()
}

/// A diagnostic and the action it belongs to (declines apply per action).
#[derive(Clone, Debug)]
pub struct Finding {
    pub action: Option<ActionId>,
    pub diag: Diagnostic,
}

impl Finding {
    pub fn of(action: ActionId, diag: Diagnostic) -> Self {
        Finding {
            action: Some(action),
            diag,
        }
    }
}

/// Runs every check, applies declines, keeps findings in the checked unit's
/// sources, and sorts them.
pub fn run(cx: &Cx) -> Vec<Diagnostic> {
    crate::pool::install(|| run_here(cx))
}

fn run_here(cx: &Cx) -> Vec<Diagnostic> {
    use rayon::prelude::*;
    // Each check on its own thread, joined in rule order: the same
    // findings in the same order as one after the other.
    let per_check: Vec<Vec<Finding>> = checks()
        .par_iter()
        .map(|check| {
            let mut found = Vec::new();
            check.run(cx, &mut found);
            found
        })
        .collect();
    finish(cx, per_check.into_iter().flatten().collect())
}

/// Applies declines, keeps findings in the checked unit's sources, and
/// sorts them.
fn finish(cx: &Cx, findings: Vec<Finding>) -> Vec<Diagnostic> {
    finish_declined(cx, decline::apply(cx, findings))
}

/// [`finish`] for findings whose declines are applied.
fn finish_declined(cx: &Cx, findings: Vec<Finding>) -> Vec<Diagnostic> {
    let mut diags: Vec<Diagnostic> = findings
        .into_iter()
        .map(|f| f.diag)
        .filter(|d| cx.reportable(d.span))
        .collect();
    jadpo_compiler::diag::sort_diagnostics(&mut diags);
    diags
}
