//! `decline.*`: declines written next to actions, and applying them. A
//! decline suppresses one warning code for its action; declining an error,
//! or a decline that matches nothing, is itself reported.

pub mod not_a_warning;
pub mod unused;

use jadpo_compiler::diag::Severity;
use jadpo_compiler::ir::ActionId;

use super::{lookup, Cx, Finding};

/// Drops the warnings declined by their action, and reports declines that
/// are wrong or match nothing.
pub fn apply(cx: &Cx, findings: Vec<Finding>) -> Vec<Finding> {
    // A set: an app can decline thousands of findings, and a list made
    // this check quadratic in them.
    let mut used: std::collections::HashSet<(ActionId, usize)> = Default::default();
    let mut kept: Vec<Finding> = Vec::with_capacity(findings.len());
    for f in findings {
        let declined = f.diag.severity == Severity::Warning
            && f.action.is_some_and(|a| {
                cx.program
                    .action(a)
                    .declines
                    .iter()
                    .enumerate()
                    .any(|(i, d)| {
                        if d.code == f.diag.code {
                            used.insert((a, i));
                            true
                        } else {
                            false
                        }
                    })
            });
        if !declined {
            kept.push(f);
        }
    }
    for id in cx.actions() {
        for (i, decline) in cx.program.action(id).declines.iter().enumerate() {
            match lookup(&decline.code) {
                Some(rule) if rule.severity == Severity::Error => {
                    kept.push(Finding::of(
                        id,
                        not_a_warning::diagnostic(cx, decline, rule),
                    ));
                }
                Some(_) if used.contains(&(id, i)) => {}
                found => kept.push(Finding::of(
                    id,
                    unused::diagnostic(cx, id, decline, found.is_some()),
                )),
            }
        }
    }
    kept
}
