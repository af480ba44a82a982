//! The plan (`jadpo build`): deterministic JSON the runtime reads. For each
//! app action: its entries, steps, changing-call count, step shape and
//! digest, deadline budget, record store, crash points and staged
//! follow-ups; and a build id, the BLAKE3 of everything else. For a package
//! (`jadpo publish`): the surface of its public actions. `spec/plan.md`
//! describes every field.
//!
//! The plan is typed data (`model.rs`); its JSON has sorted keys, so the
//! same program always gives the same bytes.

mod follow_ups;
pub mod shape;

use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::{ActionId, EntryKind, Owner, TypeKind};
use jadpo_compiler::span::Span;
use serde_json::Value;

use crate::Cx;
/// The typed plan (the `jadpo-plan` crate), under its old path.
pub use jadpo_plan as model;
pub use jadpo_plan::{
    margin_ms, ActionPlan, Built, CrashPoint, EntryPlan, FollowUpPlan, OptionPlan, Plan, Point,
    Positions, QueryPlan, RecordStore, Shape, ShapeNode, StepPlan, Surface, SurfaceAction, Via,
    FORMAT,
};
use shape::StepGraph;

/// `file:line:col`, 1-based, columns in characters: from the file's line
/// index (the checker reads positions, never text).
pub fn site(cx: &Cx, span: Span) -> String {
    match cx.files.position(span) {
        Some(at) => format!("{}:{}:{}", cx.files.get(span.file).path, at.line, at.column),
        None => String::from("?"),
    }
}

/// The plan of the app, or the surface of the package, being checked; its
/// build id is the BLAKE3 of its JSON without `build_id`.
pub fn build(cx: &Cx) -> Built {
    if cx.is_app() {
        let mut plan = app_plan(cx);
        plan.build_id = build_id(&plan);
        Built::App(plan)
    } else {
        let mut surface = package_surface(cx);
        surface.build_id = build_id(&surface);
        Built::Package(surface)
    }
}

/// BLAKE3 (hex) of the JSON of a plan or surface without its `build_id`.
/// BLAKE3 of a plan's JSON without its `build_id`.
pub fn build_id<T: serde::Serialize>(value: &T) -> String {
    let mut json = model::to_json(value);
    if let Value::Object(map) = &mut json {
        map.remove("build_id");
    }
    blake3::hash(json.to_string().as_bytes())
        .to_hex()
        .to_string()
}

/// One app action's entry of the plan, exactly as [`build`] writes it,
/// without planning the other actions (the language server's hover); `None`
/// for an action outside the app.
pub fn action(cx: &Cx, id: ActionId) -> Option<ActionPlan> {
    if !cx.is_app() || !cx.in_scope(id) {
        return None;
    }
    let entry_ids: Vec<usize> = cx
        .program
        .entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.action == Some(id))
        .map(|(i, _)| i)
        .collect();
    Some(action_plan(cx, id, &entry_ids))
}

/// The plan of the actions in scope, whatever the scope: for an app its
/// plan, for a package checked on its own the same shape for its own
/// actions, which `jadpo test` runs the package's tests on (a package has
/// no plan of its own; `jadpo build` never writes this one).
pub fn test_plan(cx: &Cx) -> Plan {
    let mut plan = app_plan(cx);
    plan.build_id = build_id(&plan);
    plan
}

fn app_plan(cx: &Cx) -> Plan {
    let by_action = entries_by_action(cx);
    let mut actions: Vec<ActionPlan> = cx
        .actions()
        .map(|id| {
            let entries = by_action.get(id).map_or(&[][..], Vec::as_slice);
            action_plan(cx, id, entries)
        })
        .collect();
    actions.sort_by(|a, b| a.name.cmp(&b.name));
    Plan {
        plan_format: FORMAT,
        build_id: String::new(),
        app: cx.program.app.name.clone(),
        actions,
        queries: queries(cx),
        bundle: String::new(),
    }
}

/// Every `where:` field list of the app's actions, each once, its fields
/// in the entity's order, sorted by entity and fields.
fn queries(cx: &Cx) -> Vec<QueryPlan> {
    let types = cx.program.type_table();
    let mut out: Vec<QueryPlan> = Vec::new();
    for id in cx.actions() {
        for (entity, fields) in &cx.program.action(id).reads.queries {
            let e = cx.program.entity(*entity);
            let declared: Vec<Name> = match types.def(e.ty).map(|d| &d.kind) {
                Some(TypeKind::Record(defs)) => defs.iter().map(|f| f.name).collect(),
                _ => Vec::new(),
            };
            let mut fields: Vec<&Name> = fields.iter().collect();
            fields.sort_by_key(|f| declared.iter().position(|d| d == *f));
            fields.dedup();
            out.push(QueryPlan {
                entity: e.qualified.clone(),
                fields: fields.iter().map(|f| f.as_str().to_string()).collect(),
            });
        }
    }
    out.sort();
    out.dedup();
    out
}

fn package_surface(cx: &Cx) -> Surface {
    let crate::Scope::Package(name) = cx.scope else {
        return Surface::default();
    };
    let version = cx
        .program
        .packages
        .iter()
        .find(|p| p.name.as_str() == name)
        .map_or(String::new(), |p| p.version.clone());
    let mut actions: Vec<SurfaceAction> = cx
        .actions()
        .filter(|id| cx.program.action(*id).public)
        .map(|id| surface(cx, id))
        .collect();
    actions.sort_by(|a, b| a.name.cmp(&b.name));
    Surface {
        plan_format: FORMAT,
        build_id: String::new(),
        package: name.clone(),
        version,
        actions,
    }
}

/// A public package action's surface: what its callers' analysis reuses.
pub fn surface(cx: &Cx, id: ActionId) -> SurfaceAction {
    let action = cx.program.action(id);
    let mut failures: Vec<String> = action
        .fails
        .iter()
        .map(|(f, _)| cx.program.failure(*f).qualified.clone())
        .collect();
    failures.sort();
    failures.dedup();
    let (after, changing, budget) = match cx.summary(id) {
        Some(s) => {
            let mut after: Vec<String> = s
                .late
                .after_effect
                .iter()
                .map(|f| cx.program.failure(*f).qualified.clone())
                .collect();
            after.sort();
            (after, s.changing_calls(), s.deadline_budget_ms())
        }
        None => (Vec::new(), 0, 0),
    };
    let graph = shape::build(cx.program, id);
    SurfaceAction {
        name: action.qualified.clone(),
        failures,
        after_effect: after,
        changing_calls: changing,
        step_shape: shape_of(cx, &graph),
        step_shape_digest: shape::digest(cx.program, &graph),
        deadline_budget_ms: budget,
    }
}

fn action_plan(cx: &Cx, id: ActionId, entry_ids: &[usize]) -> ActionPlan {
    let action = cx.program.action(id);
    let summary = cx.summary(id);
    let changing = summary.map_or(0, |s| s.changing_calls());
    let graph = shape::build(cx.program, id);
    let mut callers: Vec<String> = cx
        .analysed
        .callers
        .get(id)
        .into_iter()
        .flatten()
        .filter(|c| cx.program.action(**c).owner == Owner::App)
        .map(|c| cx.program.action(*c).qualified.clone())
        .collect();
    callers.sort();
    let crash_points = (1..=graph.steps.len())
        .flat_map(|step| Point::ALL.map(|point| CrashPoint { step, point }))
        .collect();
    ActionPlan {
        name: action.qualified.clone(),
        site: site(cx, action.name_span),
        entries: entries(cx, entry_ids),
        called_by: callers,
        changing_calls: changing,
        multi_step: changing >= 2,
        steps: steps_of(cx, &graph),
        step_shape: shape_of(cx, &graph),
        step_shape_digest: shape::digest(cx.program, &graph),
        deadline_budget_ms: summary.map_or(0, |s| s.deadline_budget_ms()),
        record_store: record_store(cx, id),
        crash_points,
        follow_ups: follow_ups::plan_follow_ups(cx, id),
        action: Some(id),
        stores_written: stores_written(summary),
    }
}

/// The indexes of the entry points that run each action, computed once so
/// the plan stays linear in the number of actions and entries.
fn entries_by_action(cx: &Cx) -> jadpo_compiler::index::IndexVec<ActionId, Vec<usize>> {
    let mut by_action: jadpo_compiler::index::IndexVec<ActionId, Vec<usize>> =
        vec![Vec::new(); cx.program.actions.len()].into();
    for (i, e) in cx.program.entries.iter().enumerate() {
        if let Some(list) = e.action.and_then(|a| by_action.get_mut(a)) {
            list.push(i);
        }
    }
    by_action
}

fn entries(cx: &Cx, entry_ids: &[usize]) -> Vec<EntryPlan> {
    entry_ids
        .iter()
        .filter_map(|i| cx.program.entries.get(*i))
        .map(|e| {
            let label = e.label.clone();
            let site = site(cx, e.span);
            match &e.kind {
                EntryKind::Route {
                    method,
                    path,
                    key_required,
                    deadline_ms,
                    ..
                } => EntryPlan::Route {
                    label,
                    site,
                    method: method.clone(),
                    path: path.clone(),
                    idempotency_key_required: *key_required,
                    deadline_ms: *deadline_ms,
                },
                EntryKind::Subscriber { event } => EntryPlan::Subscriber {
                    label,
                    site,
                    event: event.map(|ev| cx.program.event(ev).qualified.clone()),
                },
                EntryKind::Schedule { .. } => EntryPlan::Schedule { label, site },
            }
        })
        .collect()
}

fn stores_written(summary: Option<&crate::analysis::Summary>) -> Vec<String> {
    let mut names: Vec<String> = summary
        .map(|s| {
            s.misc
                .stores
                .iter()
                .map(|n| n.as_str().to_string())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn record_store(cx: &Cx, id: ActionId) -> Option<RecordStore> {
    let written = cx.summary(id).and_then(|s| s.misc.first_store);
    let (store, from) = match (written, &cx.program.app.events_store) {
        (Some(store), _) => (store, "writes"),
        (None, Some((store, _))) => (*store, "events_store"),
        (None, None) => return None,
    };
    Some(RecordStore {
        store: store.as_str().to_string(),
        from: from.to_string(),
    })
}

fn steps_of(cx: &Cx, graph: &StepGraph) -> Vec<StepPlan> {
    let mut out = Vec::with_capacity(graph.steps.len());
    for (i, step) in graph.steps.iter().enumerate() {
        let op = cx.program.op(step.node.op);
        let pkg = cx.program.packages.get(op.package);
        let idem = pkg.and_then(|p| p.idempotency.as_ref());
        let keyed = op.keyed && idem.is_some();
        let window = op.window_ms;
        let via = step
            .node
            .via
            .iter()
            .map(|(span, a)| Via {
                action: cx.program.action(*a).qualified.clone(),
                site: site(cx, *span),
            })
            .collect();
        out.push(StepPlan {
            id: i + 1,
            site: site(cx, step.node.span),
            via,
            operation: op.qualified.clone(),
            changing: op.changes,
            idempotent: op.idempotent,
            keyed,
            positions: Positions {
                first: step.first,
                last: step.last,
            },
            window_ms: window,
            margin_ms: window.map(margin_ms),
            replays_failures: idem.is_some_and(|i| i.replays_failures) && keyed,
            new_key_on: idem.filter(|_| keyed).map(|i| i.new_key_on),
            timeout_ms: op.timeout_ms,
            attempts: op.attempts,
            call: step.node.span,
            via_calls: step.node.via.iter().map(|(span, _)| *span).collect(),
            op: Some(step.node.op),
        });
    }
    out
}

fn shape_of(cx: &Cx, graph: &StepGraph) -> Shape {
    Shape {
        nodes: graph
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let op = cx.program.op(s.node.op);
                ShapeNode {
                    id: i + 1,
                    operation: op.qualified.clone(),
                    changing: op.changes,
                }
            })
            .collect(),
        starts: graph.starts.iter().map(|s| s + 1).collect(),
        edges: graph.edges.iter().map(|(a, b)| (a + 1, b + 1)).collect(),
        truncated: graph.truncated,
    }
}
