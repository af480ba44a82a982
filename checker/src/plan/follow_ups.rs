//! The plan's `follow_ups` list of one action: each follow-up it stages,
//! with its options and worst-case size, and each call of an action that
//! stages follow-ups. An option known only at run time is marked
//! `checked_at_staging: true`. The outbox is the action's `record_store`.

use std::collections::BTreeMap;

use jadpo_compiler::ir::{ActionId, Node, Target};

use super::{site, FollowUpPlan, OptionPlan};
use crate::analysis::follow_up::{options, own_emits, size};
use crate::Cx;

/// The `follow_ups` entry of action `id`, in evaluation order.
pub fn plan_follow_ups(cx: &Cx, id: ActionId) -> Vec<FollowUpPlan> {
    let Some(action) = cx.program.actions.get(id) else {
        return Vec::new();
    };
    let mut out: Vec<(u32, FollowUpPlan)> = own_emits(&action.body)
        .into_iter()
        .map(|(emit, loops)| {
            let s = size::emit_size(cx.program, emit);
            let options: BTreeMap<String, OptionPlan> = emit
                .options
                .iter()
                .map(|o| {
                    let plan = OptionPlan {
                        value: options::to_json(&o.value),
                        checked_at_staging: !options::is_literal(&o.value),
                    };
                    (o.key.as_str().to_string(), plan)
                })
                .collect();
            let event = cx.program.events.get(emit.event);
            let entry = FollowUpPlan::Emit {
                event: event.map(|e| e.qualified.clone()),
                site: site(cx, emit.span),
                loop_max: loops,
                options,
                worst_case_bytes: s.total(),
                unbounded_fields: s.unbounded.iter().map(|n| n.as_str().to_string()).collect(),
            };
            (emit.span.start, entry)
        })
        .collect();
    action.body.for_each_node(&mut |node| {
        let Node::Effect(effect) = node else { return };
        let Target::Action(callee) = effect.target else {
            return;
        };
        if cx.analysed.follow_ups.get(callee).is_some_and(|f| f.emits) {
            let name = cx.program.actions.get(callee).map(|a| a.qualified.as_str());
            let entry = FollowUpPlan::Through {
                through: name.map(str::to_string),
                site: site(cx, effect.span),
            };
            out.push((effect.span.start, entry));
        }
    });
    out.sort_by_key(|(start, _)| *start);
    out.into_iter().map(|(_, v)| v).collect()
}
