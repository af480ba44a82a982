//! Hover: on an outside call, its step numbers in the action and the
//! operation's facts; on an action's name or a call of it, the action's
//! changing calls, deadline budget, step-shape digest and the entry points
//! that reach it. Step facts come from the plan `jadpo build` writes.

use super::find;
use crate::workspace::Snapshot;
use jadpo_checker::plan::{ActionPlan, StepPlan};
use jadpo_compiler::duration;
use jadpo_compiler::ir::{ActionId, Effect, OpId, Program, Target};
use jadpo_compiler::span::FileId;
use std::rc::Rc;

/// The hover text (markdown) at a position.
pub fn hover(snap: &Snapshot, file: FileId, offset: usize) -> Option<String> {
    let program = snap.program.as_ref()?;
    if let Some(id) = find::action_named_at(program, file, offset) {
        return Some(action_facts(snap, program, id));
    }
    if let Some((holder, effect)) = find::effect_at(program, file, offset) {
        return Some(call_facts(snap, program, holder, effect));
    }
    let id = find::entry_run_at(program, file, offset)?;
    Some(action_facts(snap, program, id))
}

fn call_facts(snap: &Snapshot, program: &Program, holder: ActionId, effect: &Effect) -> String {
    let holder_name = &program.action(holder).qualified;
    let plan = plan_action(snap, holder_name);
    let steps: Vec<&StepPlan> = plan
        .as_deref()
        .map(|a| a.steps.iter().collect())
        .unwrap_or_default();
    let here = effect.span;
    match &effect.target {
        Target::Op(op) => {
            let mine: Vec<&StepPlan> = steps
                .iter()
                .filter(|s| s.call == here && s.via_calls.is_empty())
                .copied()
                .collect();
            let position = step_text(&mine, &steps, holder_name);
            format!(
                "**`{}`**: {position}\n\n{}",
                program.op(*op).qualified,
                op_facts(program, *op)
            )
        }
        Target::Action(callee) => {
            let through: Vec<&StepPlan> = steps
                .iter()
                .filter(|s| s.via_calls.first() == Some(&here))
                .copied()
                .collect();
            let position = step_text(&through, &steps, holder_name);
            format!(
                "call of {}\n\nits calls: {position}",
                action_facts(snap, program, *callee)
            )
        }
        Target::Write(write) => format!(
            "**write** to `{}`: not an outside call, never a step",
            program.entity(write.entity).qualified
        ),
        Target::Check(check) => match check.query {
            Some(entity) => format!(
                "**store read** of `{}`: not an outside call, never a step; fails with `{}` when no row matches",
                program.entity(entity).qualified,
                program.failure(check.failure).qualified
            ),
            None => "**validated construction**: checked when it runs, fails with `InvalidValue`; not an outside call, never a step".to_string(),
        },
    }
}

/// "step 2 of at most 4 in `subscribe`", from the plan's possible
/// positions of the matching steps.
fn step_text(mine: &[&StepPlan], all: &[&StepPlan], holder: &str) -> String {
    let first = mine.iter().map(|s| s.positions.first).min();
    let last = mine.iter().map(|s| s.positions.last).max();
    let most = all.iter().map(|s| s.positions.last).max().unwrap_or(0);
    match (first, last) {
        (Some(a), Some(b)) if a == b => format!("step {a} of at most {most} in `{holder}`"),
        (Some(a), Some(b)) => format!("step {a} to {b} of at most {most} in `{holder}`"),
        _ if all.is_empty() && mine.is_empty() => {
            format!("not a step: `{holder}` has no plan (only the app's actions are planned) or no steps")
        }
        _ => {
            format!("not a step of `{holder}` (a read before every changing call is not recorded)")
        }
    }
}

fn op_facts(program: &Program, id: OpId) -> String {
    crate::describe::operation_facts(program, id)
}

fn action_facts(snap: &Snapshot, program: &Program, id: ActionId) -> String {
    let action = program.action(id);
    let Some(plan) = plan_action(snap, &action.qualified) else {
        return format!(
            "**action `{}`** (a package's action: not planned in this app)",
            action.qualified
        );
    };
    let changing = plan.changing_calls;
    let mut lines = vec![
        format!("**action `{}`**", action.qualified),
        String::new(),
        format!(
            "- changing calls: {changing}{}",
            if changing >= 2 {
                " (multi-step: its steps are recorded)"
            } else {
                ""
            }
        ),
        format!(
            "- deadline budget: {}",
            duration::text(plan.deadline_budget_ms)
        ),
        format!("- step shape digest: `{}`", plan.step_shape_digest),
    ];
    let entries = reaching_entries(snap, &action.qualified);
    lines.push(if entries.is_empty() {
        "- reached from: no entry point".to_string()
    } else {
        format!("- reached from: {}", entries.join(", "))
    });
    lines.join("\n")
}

/// Entry points that run the action, directly or through app callers.
fn reaching_entries(snap: &Snapshot, name: &str) -> Vec<String> {
    let mut seen = vec![name.to_string()];
    let mut queue = vec![name.to_string()];
    let mut labels = Vec::new();
    while let Some(current) = queue.pop() {
        let Some(plan) = plan_action(snap, &current) else {
            continue;
        };
        for e in &plan.entries {
            let via = if current == name {
                String::new()
            } else {
                format!(" (through `{current}`)")
            };
            labels.push(format!("`{}`{via}", e.label()));
        }
        for c in &plan.called_by {
            if !seen.iter().any(|s| s == c) {
                seen.push(c.clone());
                queue.push(c.clone());
            }
        }
    }
    labels.sort();
    labels.dedup();
    labels
}

fn plan_action(snap: &Snapshot, name: &str) -> Option<Rc<ActionPlan>> {
    snap.plan_action(name)
}
