//! `fails` exactness (design "What can fail"): an action's `fails` lists
//! exactly the failures that can escape its body, never `Unavailable` or
//! `RateLimited`. Missing entries are one error at the clause (or the action's
//! name) with an edit adding them; each stale entry is an error with an edit
//! removing it.

use crate::ast;
use crate::diag::{Diagnostic, Edit};
use crate::ir::{ActionId, FailureId};
use crate::span::Span;

use super::body::{Cx, Escape, Why};
use super::Resolver;

impl<'a> Resolver<'_, 'a> {
    pub(super) fn judge_fails(&mut self, id: ActionId, decl: &ast::ActionDecl, cx: &Cx) {
        let declared = self.prog.action(id).fails.clone();
        let mut escaping: Vec<&Escape> = Vec::new();
        for e in &cx.escapes {
            if !self.is_transient(e.failure) && !escaping.iter().any(|x| x.failure == e.failure) {
                escaping.push(e);
            }
        }
        let missing: Vec<&Escape> = escaping
            .iter()
            .copied()
            .filter(|e| !declared.iter().any(|(f, _)| *f == e.failure))
            .collect();
        if !missing.is_empty() {
            self.report_missing_fails(cx, decl, &missing);
        }
        for (f, span) in &declared {
            let escapes = escaping.iter().any(|e| e.failure == *f);
            if !escapes && !cx.excused.contains(f) {
                self.report_stale_fails(cx, decl, *f, *span);
            }
        }
    }

    fn report_missing_fails(&mut self, cx: &Cx, decl: &ast::ActionDecl, missing: &[&Escape]) {
        let names: Vec<String> = missing
            .iter()
            .map(|e| self.failure_name(e.failure, cx.unit))
            .collect();
        let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        let (span, edit) = match &decl.fails {
            Some(clause) => (
                clause.span,
                Edit {
                    span: Span {
                        start: clause.span.end,
                        ..clause.span
                    },
                    replacement: format!(", {}", names.join(", ")),
                },
            ),
            None => (decl.name.span, self.insert_fails_clause(decl, &names)),
        };
        let mut d = Diagnostic::error(
            "failure.missing_in_fails",
            span,
            format!("`{}` can fail with {} but its `fails` does not say so", decl.name.name, quoted.join(", ")),
        )
        .with_label(if decl.fails.is_some() {
            format!("missing {}", quoted.join(", "))
        } else {
            "no `fails` clause".to_string()
        })
        .with_reason("`fails` lists exactly the failures that can escape the action, so callers know what to handle");
        for e in missing {
            d = d.with_related(e.span, self.why_text(e, cx));
        }
        d = d.with_edit_fix(format!("add {} to `fails`", quoted.join(", ")), vec![edit]);
        d = d.with_fix("or handle the failure inside the action with `match`");
        self.error(d);
    }

    /// Words why a failure escapes, for a related label.
    fn why_text(&self, e: &Escape, cx: &Cx) -> String {
        match &e.why {
            Why::Attempt(label) => format!(
                "`{label}` can fail with `{}`",
                self.failure_name(e.failure, cx.unit)
            ),
            Why::Rejected(written) => format!("rejected here with `{written}`"),
            Why::Propagated => format!(
                "`{}` is propagated here",
                self.failure_name(e.failure, cx.unit)
            ),
        }
    }

    /// An edit inserting `fails A, B ` before the header's `->`.
    fn insert_fails_clause(&self, decl: &ast::ActionDecl, names: &[String]) -> Edit {
        let ret = decl.returns.span;
        let text = &self.project.files.get(ret.file).text;
        let head = text.get(..ret.start as usize).unwrap_or("");
        let at = head.rfind("->").map_or(ret.start, |i| i as u32);
        Edit {
            span: Span {
                start: at,
                end: at,
                file: ret.file,
            },
            replacement: format!("fails {} ", names.join(", ")),
        }
    }

    fn report_stale_fails(&mut self, cx: &Cx, decl: &ast::ActionDecl, f: FailureId, span: Span) {
        let name = self.failure_name(f, cx.unit);
        let edits = self.fails_entry_removal(decl, span);
        let d = Diagnostic::error(
            "failure.stale_in_fails",
            span,
            format!("`{}` lists `{name}` in `fails`, but it cannot fail with it", decl.name.name),
        )
        .with_label("nothing in the action can end with this failure")
        .with_reason("`fails` lists exactly the failures that can escape; a stale entry makes callers handle a failure that never comes")
        .with_edit_fix(format!("remove `{name}` from `fails`"), edits);
        self.error(d);
    }

    /// The edit removing one entry of the `fails` clause with its comma, or
    /// the whole clause when it is the only entry.
    pub(super) fn fails_entry_removal(&self, decl: &ast::ActionDecl, span: Span) -> Vec<Edit> {
        let Some(clause) = &decl.fails else {
            return Vec::new();
        };
        let spans: Vec<Span> = clause.failures.iter().map(|p| p.span).collect();
        let Some(i) = spans.iter().position(|s| *s == span) else {
            return Vec::new();
        };
        let remove = match (
            i.checked_sub(1).and_then(|p| spans.get(p)),
            spans.get(i + 1),
        ) {
            (Some(prev), _) => Span {
                start: prev.end,
                ..span
            },
            (None, Some(next)) => Span {
                end: next.start,
                ..span
            },
            (None, None) => clause.span,
        };
        vec![Edit {
            span: remove,
            replacement: String::new(),
        }]
    }
}
