//! Code actions: every diagnostic fix that carries edits becomes a quick
//! fix; a route missing `idempotency_key: required` (`step.context`) gets
//! one constructed; a checker warning can be declined for its action with
//! a reason placeholder.

use super::convert::{self, file_of};
use super::navigate::located;
use super::text::{indent_at, line_start_of, LineIndex};
use crate::workspace::{Snapshot, Workspace};
use jadpo_compiler::diag::{Diagnostic, Severity};
use jadpo_compiler::ir::{ActionId, EntryKind, Owner, Program};
use jadpo_compiler::span::{FileId, Span};
use lsp_types::{CodeAction, CodeActionKind, CodeActionOrCommand, TextEdit, Uri, WorkspaceEdit};
use std::collections::HashMap;

/// The command a quick fix becomes for a client without code action
/// literals: its arguments are the fix's title and workspace edit, and the
/// server asks the client to apply the edit (`workspace/applyEdit`).
pub const APPLY_EDIT: &str = "jadpo.applyEdit";

/// The quick fixes as commands (LSP 3.17: a client without
/// `codeActionLiteralSupport` takes `Command[]` only).
pub fn as_commands(actions: Vec<CodeActionOrCommand>) -> Vec<lsp_types::Command> {
    actions
        .into_iter()
        .filter_map(|a| match a {
            CodeActionOrCommand::Command(c) => Some(c),
            CodeActionOrCommand::CodeAction(a) => {
                let edit = serde_json::to_value(a.edit?).ok()?;
                Some(lsp_types::Command {
                    arguments: Some(vec![serde_json::json!(a.title), edit]),
                    title: a.title,
                    command: APPLY_EDIT.to_string(),
                })
            }
        })
        .collect()
}

/// The code actions for the diagnostics overlapping `start..end` in `file`.
pub fn code_actions(
    project: &Workspace,
    snap: &Snapshot,
    file: FileId,
    start: usize,
    end: usize,
) -> Vec<CodeActionOrCommand> {
    let Some(source) = file_of(snap, Span::new(file, 0, 0)) else {
        return Vec::new();
    };
    let index = LineIndex::new(&source.text);
    let mut out = Vec::new();
    for d in &snap.diagnostics {
        let overlaps =
            d.span.file == file && (d.span.start as usize) <= end && start <= d.span.end as usize;
        if !overlaps {
            continue;
        }
        let shown = convert::diagnostic(project, snap, &index, d);
        let mut offers: Vec<(String, Vec<(Span, String)>)> = d
            .fixes
            .iter()
            .filter(|f| !f.edits.is_empty())
            .map(|f| {
                let edits = f
                    .edits
                    .iter()
                    .map(|e| (e.span, e.replacement.clone()))
                    .collect();
                (f.message.clone(), edits)
            })
            .collect();
        if offers.is_empty() && d.code == "step.context" {
            offers.extend(require_key(snap, d));
        }
        offers.extend(decline(snap, d));
        for (title, edits) in offers {
            if let Some(edit) = workspace_edit(project, snap, &edits) {
                out.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title,
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![shown.clone()]),
                    edit: Some(edit),
                    ..CodeAction::default()
                }));
            }
        }
    }
    out
}

// `Uri` caches its parse in a `Cell`, but hashes and compares by its text,
// so it is a sound key (the lint cannot see that).
#[allow(clippy::mutable_key_type)]
fn workspace_edit(
    project: &Workspace,
    snap: &Snapshot,
    edits: &[(Span, String)],
) -> Option<WorkspaceEdit> {
    let mut changes: HashMap<Uri, Vec<TextEdit>> = HashMap::new();
    for (span, replacement) in edits {
        let at = located(project, snap, *span)?;
        // Edits in embedded files cannot be applied.
        project.disk_path(&file_of(snap, *span)?.path)?;
        changes
            .entry(at.uri)
            .or_default()
            .push(TextEdit::new(at.range, replacement.clone()));
    }
    Some(WorkspaceEdit::new(changes))
}

/// `idempotency_key: required` for the route a `step.context` finding is on:
/// replaces its `idempotency_key:` setting, or adds one before its first
/// setting.
fn require_key(snap: &Snapshot, d: &Diagnostic) -> Option<(String, Vec<(Span, String)>)> {
    let program = snap.program.as_ref()?;
    let entry = program.entries.iter().find(|e| {
        matches!(&e.kind, EntryKind::Route { key_span, .. }
            if key_span.unwrap_or(e.run_span) == d.span)
    })?;
    let title = format!("require Idempotency-Key on `{}`", entry.label);
    let setting = "idempotency_key: required".to_string();
    if let EntryKind::Route {
        key_span: Some(span),
        ..
    } = entry.kind
    {
        return Some((title, vec![(span, setting)]));
    }
    let route = snap
        .asts
        .iter()
        .flat_map(|a| &a.items)
        .find_map(|item| match item {
            jadpo_compiler::ast::Item::Route(r)
                if r.span.file == entry.span.file
                    && r.span.start <= entry.run_span.start
                    && entry.run_span.end <= r.span.end =>
            {
                Some(r)
            }
            _ => None,
        })?;
    let first = route.settings.first()?.span;
    let text = &file_of(snap, first)?.text;
    let indent = indent_at(text, first.start as usize);
    let at = Span::new(first.file, first.start, first.start);
    Some((title, vec![(at, format!("{setting}\n{indent}"))]))
}

/// `decline <code> "reason"` on the line before the action a checker
/// warning belongs to.
fn decline(snap: &Snapshot, d: &Diagnostic) -> Option<(String, Vec<(Span, String)>)> {
    let rule = jadpo_checker::registry::lookup(d.code)?;
    if d.severity != Severity::Warning || rule.severity != Severity::Warning {
        return None;
    }
    let program = snap.program.as_ref()?;
    let id = owning_action(program, d.span)?;
    let action = program.action(id);
    let text = &file_of(snap, action.span)?.text;
    let line = line_start_of(text, action.span.start as usize);
    let indent = indent_at(text, line);
    let at = Span::new(action.span.file, line as u32, line as u32);
    let title = format!(
        "decline `{}` for `{}` (with a reason)",
        d.code, action.qualified
    );
    Some((
        title,
        vec![(at, format!("{indent}decline {} \"reason\"\n", d.code))],
    ))
}

/// The app action (not an inline route action) a finding is about: the one
/// whose name it is on, else the innermost one holding it.
fn owning_action(program: &Program, span: Span) -> Option<ActionId> {
    let declared = |i: &ActionId| {
        let a = &program.actions[*i];
        a.owner == Owner::App && !a.qualified.starts_with("route ")
    };
    let all = program.actions.ids();
    all.clone()
        .filter(declared)
        .find(|&i| program.actions[i].name_span == span)
        .or_else(|| {
            all.filter(declared)
                .filter(|&i| {
                    let a = program.actions[i].span;
                    a.file == span.file && a.start <= span.start && span.end <= a.end
                })
                .min_by_key(|&i| program.actions[i].span.len())
        })
}
