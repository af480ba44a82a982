//! Finding things in the resolved program by position: the outside call,
//! action call or write under the cursor, the action whose name is there,
//! and every call of an action.

use jadpo_compiler::ir::{ActionId, Block, Effect, Node, Program, Target};
use jadpo_compiler::span::{FileId, Span};

/// Every effect of every action, with the action whose body holds it.
pub fn effects(program: &Program) -> Vec<(ActionId, &Effect)> {
    let mut out = Vec::new();
    for (i, action) in program.actions.iter().enumerate() {
        walk(&action.body, &mut |e| out.push((ActionId(i as u32), e)));
    }
    out
}

fn walk<'a>(block: &'a Block, visit: &mut dyn FnMut(&'a Effect)) {
    block.for_each_node(&mut |node| {
        if let Node::Effect(effect) = node {
            visit(effect);
        }
    });
}

/// Whether `offset` in `file` lies in the span (its end included, so a
/// cursor just after a name still finds it).
pub fn covers(span: Span, file: FileId, offset: usize) -> bool {
    span.file == file && (span.start as usize) <= offset && offset <= span.end as usize
}

/// The innermost effect at a position, with its action.
pub fn effect_at(program: &Program, file: FileId, offset: usize) -> Option<(ActionId, &Effect)> {
    effects(program)
        .into_iter()
        .filter(|(_, e)| covers(e.span, file, offset))
        .min_by_key(|(_, e)| e.span.len())
}

/// The action whose header name is at a position.
pub fn action_named_at(program: &Program, file: FileId, offset: usize) -> Option<ActionId> {
    program
        .actions
        .iter()
        .position(|a| covers(a.name_span, file, offset))
        .map(|i| ActionId(i as u32))
}

/// The action an entry point runs, when the cursor is on its `run:` call.
pub fn entry_run_at(program: &Program, file: FileId, offset: usize) -> Option<ActionId> {
    program
        .entries
        .iter()
        .filter(|e| covers(e.run_span, file, offset))
        .min_by_key(|e| e.run_span.len())
        .and_then(|e| e.action)
}

/// The action at a position: its name, a call of it, or an entry's `run:`.
pub fn action_at(program: &Program, file: FileId, offset: usize) -> Option<ActionId> {
    if let Some(id) = action_named_at(program, file, offset) {
        return Some(id);
    }
    if let Some((_, effect)) = effect_at(program, file, offset) {
        if let Target::Action(id) = effect.target {
            return Some(id);
        }
    }
    entry_run_at(program, file, offset)
}

/// The spans of every call of `id`: action calls and entries' `run:`.
pub fn calls_of(program: &Program, id: ActionId) -> Vec<Span> {
    let mut spans: Vec<Span> = effects(program)
        .into_iter()
        .filter(|(_, e)| matches!(e.target, Target::Action(a) if a == id))
        .map(|(_, e)| e.span)
        .collect();
    spans.extend(
        program
            .entries
            .iter()
            .filter(|e| e.action == Some(id))
            .map(|e| e.run_span),
    );
    spans.sort();
    spans.dedup();
    spans
}
