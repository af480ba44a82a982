//! What every rule and the plan writer see of one check: the program, its
//! files' units and positions, the checked scope and the analysis.

use jadpo_compiler::ir::{ActionId, Owner, Program};
use jadpo_compiler::source::{Files, Unit};
use jadpo_compiler::span::Span;

use crate::analysis::{Analysed, Summary};
use crate::Scope;

/// What every rule sees.
pub struct Cx<'a> {
    pub program: &'a Program,
    pub files: &'a Files,
    pub scope: &'a Scope,
    pub analysed: &'a Analysed,
}

impl<'a> Cx<'a> {
    /// Whether an action belongs to the unit being checked.
    pub fn in_scope(&self, id: ActionId) -> bool {
        let Some(action) = self.program.actions.get(id) else {
            return false;
        };
        match (self.scope, action.owner) {
            (Scope::App, Owner::App) => true,
            (Scope::Package(name), Owner::Package(p)) => self
                .program
                .packages
                .get(p)
                .is_some_and(|pkg| pkg.name.as_str() == name),
            _ => false,
        }
    }

    /// The actions of the unit being checked, in id order.
    pub fn actions(&self) -> impl Iterator<Item = ActionId> + '_ {
        (0..self.program.actions.len() as u32)
            .map(ActionId)
            .filter(|id| self.in_scope(*id))
    }

    pub fn is_app(&self) -> bool {
        *self.scope == Scope::App
    }

    /// Whether findings may be reported at this span.
    pub fn reportable(&self, span: Span) -> bool {
        let Some(file) = self.files.try_get(span.file) else {
            return false;
        };
        match (&file.unit, self.scope) {
            (Unit::App, Scope::App) => true,
            (Unit::Package(p), Scope::Package(name)) => p == name,
            _ => false,
        }
    }

    pub fn summary(&self, id: ActionId) -> Option<&'a Summary> {
        self.analysed.summaries.get(id)
    }
}
