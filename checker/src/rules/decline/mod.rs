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
    let mut declines = Declines::new(cx);
    let mut kept: Vec<Finding> = Vec::with_capacity(findings.len());
    kept.extend(findings.into_iter().filter(|f| !declines.declines(f)));
    declines.report(&mut kept);
    kept
}

/// Declines as they are applied, one finding at a time: a caller holding
/// findings it would have to copy asks first and copies only those kept.
pub struct Declines<'c, 'a> {
    cx: &'c Cx<'a>,
    /// The declines that matched a finding, as (action, index). A set: an
    /// app can decline thousands of findings, and a list made this check
    /// quadratic in them.
    used: std::collections::HashSet<(ActionId, usize)>,
}

impl<'c, 'a> Declines<'c, 'a> {
    pub fn new(cx: &'c Cx<'a>) -> Self {
        Declines {
            cx,
            used: Default::default(),
        }
    }

    /// Whether its action declines `f` (a warning), noting the decline used.
    pub fn declines(&mut self, f: &Finding) -> bool {
        if f.diag.severity != Severity::Warning {
            return false;
        }
        let Some(a) = f.action else { return false };
        let declines = &self.cx.program.action(a).declines;
        match declines.iter().position(|d| d.code == f.diag.code) {
            Some(i) => {
                self.used.insert((a, i));
                true
            }
            None => false,
        }
    }

    /// Reports, into `kept`, the declines that are wrong or matched nothing.
    pub fn report(self, kept: &mut Vec<Finding>) {
        let cx = self.cx;
        for id in cx.actions() {
            for (i, decline) in cx.program.action(id).declines.iter().enumerate() {
                match lookup(&decline.code) {
                    Some(rule) if rule.severity == Severity::Error => {
                        kept.push(Finding::of(
                            id,
                            not_a_warning::diagnostic(cx, decline, rule),
                        ));
                    }
                    Some(_) if self.used.contains(&(id, i)) => {}
                    found => kept.push(Finding::of(
                        id,
                        unused::diagnostic(cx, id, decline, found.is_some()),
                    )),
                }
            }
        }
    }
}
