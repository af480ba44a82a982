//! The plan (`jadpo build`): deterministic JSON the runtime reads. For each
//! app action: its entries, steps, changing-call count, step shape and
//! digest, deadline budget, record store, crash points and staged
//! follow-ups; and a build id, the BLAKE3 of everything else. For a package
//! (`jadpo publish`): the surface of its public actions. `spec/plan.md`
//! describes every field.
//!
//! Objects are `serde_json::Map`s, which sort their keys, so the same
//! program always gives the same bytes.

pub mod shape;

use jadpo_compiler::ir::{ActionId, EntryKind, Owner};
use jadpo_compiler::span::Span;
use serde_json::{json, Map, Value};

use crate::rules::Cx;
use shape::StepGraph;

pub const FORMAT: u32 = 1;

/// `file:line:col`, 1-based, columns in characters, for a few sites; use
/// [`Lines`] for many.
pub fn site(cx: &Cx, span: Span) -> String {
    if span.file.0 as usize >= cx.files.len() {
        return String::from("?");
    }
    let file = cx.files.get(span.file);
    let before = file.text.get(..span.start as usize).unwrap_or("");
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("{}:{line}:{col}", file.path)
}

/// Line starts of every file, so a site costs a binary search.
pub struct Lines {
    starts: Vec<Vec<usize>>,
}

impl Lines {
    pub fn new(cx: &Cx) -> Lines {
        let starts = cx
            .files
            .iter()
            .map(|(_, f)| {
                let mut v = vec![0];
                v.extend(f.text.match_indices('\n').map(|(i, _)| i + 1));
                v
            })
            .collect();
        Lines { starts }
    }

    /// `file:line:col`, 1-based, columns in characters.
    pub fn site(&self, cx: &Cx, span: Span) -> String {
        let (Some(starts), true) = (
            self.starts.get(span.file.0 as usize),
            (span.file.0 as usize) < cx.files.len(),
        ) else {
            return String::from("?");
        };
        let file = cx.files.get(span.file);
        let offset = span.start as usize;
        let line = starts.partition_point(|&s| s <= offset).max(1);
        let line_start = starts.get(line - 1).copied().unwrap_or(0);
        let col = file
            .text
            .get(line_start..offset)
            .map_or(0, |t| t.chars().count())
            + 1;
        format!("{}:{line}:{col}", file.path)
    }
}

pub fn build(cx: &Cx) -> Value {
    let mut plan = if cx.is_app() {
        app_plan(cx)
    } else {
        package_surface(cx)
    };
    let id = blake3::hash(plan.to_string().as_bytes())
        .to_hex()
        .to_string();
    if let Value::Object(map) = &mut plan {
        map.insert("build_id".into(), Value::String(id));
    }
    plan
}

/// One app action's entry of the plan, exactly as [`build`] writes it,
/// without planning the other actions (the language server's hover); `None`
/// for an action outside the app. `lines` is [`Lines::new`], kept by the
/// caller between calls.
pub fn action(cx: &Cx, lines: &Lines, id: ActionId) -> Option<Value> {
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
    Some(action_plan(cx, lines, id, &entry_ids))
}

fn app_plan(cx: &Cx) -> Value {
    let lines = Lines::new(cx);
    let by_action = entries_by_action(cx);
    let mut actions: Vec<(String, Value)> = cx
        .actions()
        .map(|id| {
            let entries = by_action.get(id.0 as usize).map_or(&[][..], Vec::as_slice);
            (
                cx.program.action(id).qualified.clone(),
                action_plan(cx, &lines, id, entries),
            )
        })
        .collect();
    actions.sort_by(|a, b| a.0.cmp(&b.0));
    object([
        ("plan_format", json!(FORMAT)),
        ("app", json!(cx.program.app.name)),
        (
            "actions",
            Value::Array(actions.into_iter().map(|(_, v)| v).collect()),
        ),
    ])
}

fn package_surface(cx: &Cx) -> Value {
    let crate::Scope::Package(name) = cx.scope else {
        return Value::Null;
    };
    let version = cx
        .program
        .packages
        .iter()
        .find(|p| p.name.as_str() == name)
        .map_or(String::new(), |p| p.version.clone());
    let mut actions: Vec<(String, Value)> = cx
        .actions()
        .filter(|id| cx.program.action(*id).public)
        .map(|id| (cx.program.action(id).qualified.clone(), surface(cx, id)))
        .collect();
    actions.sort_by(|a, b| a.0.cmp(&b.0));
    object([
        ("plan_format", json!(FORMAT)),
        ("package", json!(name)),
        ("version", json!(version)),
        (
            "actions",
            Value::Array(actions.into_iter().map(|(_, v)| v).collect()),
        ),
    ])
}

/// A public package action's surface: what its callers' analysis reuses.
pub fn surface(cx: &Cx, id: ActionId) -> Value {
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
    object([
        ("name", json!(action.qualified)),
        ("failures", json!(failures)),
        ("after_effect", json!(after)),
        ("changing_calls", json!(changing)),
        ("step_shape", shape_json(cx, &graph)),
        (
            "step_shape_digest",
            json!(shape::digest(cx.program, &graph)),
        ),
        ("deadline_budget_ms", json!(budget)),
    ])
}

fn action_plan(cx: &Cx, lines: &Lines, id: ActionId, entry_ids: &[usize]) -> Value {
    let action = cx.program.action(id);
    let summary = cx.summary(id);
    let changing = summary.map_or(0, |s| s.changing_calls());
    let graph = shape::build(cx.program, id);
    let callers: Vec<String> = cx
        .analysed
        .callers
        .get(id.0 as usize)
        .into_iter()
        .flatten()
        .filter(|c| cx.program.action(**c).owner == Owner::App)
        .map(|c| cx.program.action(*c).qualified.clone())
        .collect();
    let mut crash_points = Vec::new();
    for i in 0..graph.steps.len() {
        for point in ["before_send", "after_send_before_record", "after_record"] {
            crash_points.push(json!({ "step": i, "point": point }));
        }
    }
    let mut callers = callers;
    callers.sort();
    object([
        ("name", json!(action.qualified)),
        ("site", json!(lines.site(cx, action.name_span))),
        ("entries", entries(cx, lines, entry_ids)),
        ("called_by", json!(callers)),
        ("changing_calls", json!(changing)),
        ("multi_step", json!(changing >= 2)),
        ("steps", steps_json(cx, lines, &graph)),
        ("step_shape", shape_json(cx, &graph)),
        (
            "step_shape_digest",
            json!(shape::digest(cx.program, &graph)),
        ),
        (
            "deadline_budget_ms",
            json!(summary.map_or(0, |s| s.deadline_budget_ms())),
        ),
        ("record_store", record_store(cx, id)),
        ("crash_points", Value::Array(crash_points)),
        ("follow_ups", staged_follow_ups(cx, id)),
    ])
}

/// The events the action stages (`crate::follow_up::plan`).
fn staged_follow_ups(cx: &Cx, id: ActionId) -> Value {
    crate::follow_up::plan::plan_follow_ups(cx, id)
}

/// The indexes of the entry points that run each action, computed once so
/// the plan stays linear in the number of actions and entries.
fn entries_by_action(cx: &Cx) -> Vec<Vec<usize>> {
    let mut by_action = vec![Vec::new(); cx.program.actions.len()];
    for (i, e) in cx.program.entries.iter().enumerate() {
        if let Some(list) = e.action.and_then(|a| by_action.get_mut(a.0 as usize)) {
            list.push(i);
        }
    }
    by_action
}

fn entries(cx: &Cx, lines: &Lines, entry_ids: &[usize]) -> Value {
    let mut list: Vec<Value> = Vec::new();
    for e in entry_ids.iter().filter_map(|i| cx.program.entries.get(*i)) {
        let mut m = Map::new();
        m.insert("label".into(), json!(e.label));
        m.insert("site".into(), json!(lines.site(cx, e.span)));
        match &e.kind {
            EntryKind::Route {
                method,
                path,
                key_required,
                deadline_ms,
                ..
            } => {
                m.insert("kind".into(), json!("route"));
                m.insert("method".into(), json!(method));
                m.insert("path".into(), json!(path));
                m.insert("idempotency_key_required".into(), json!(key_required));
                m.insert("deadline_ms".into(), json!(deadline_ms));
            }
            EntryKind::Subscriber { event } => {
                m.insert("kind".into(), json!("subscriber"));
                let name = event.map(|ev| cx.program.event(ev).qualified.clone());
                m.insert("event".into(), json!(name));
            }
            EntryKind::Schedule => {
                m.insert("kind".into(), json!("schedule"));
            }
        }
        list.push(Value::Object(m));
    }
    Value::Array(list)
}

fn record_store(cx: &Cx, id: ActionId) -> Value {
    let written = cx.summary(id).and_then(|s| s.misc.first_store);
    match (written, &cx.program.app.events_store) {
        (Some(store), _) => json!({ "store": store.as_str(), "from": "writes" }),
        (None, Some((store, _))) => json!({ "store": store.as_str(), "from": "events_store" }),
        (None, None) => Value::Null,
    }
}

fn steps_json(cx: &Cx, lines: &Lines, graph: &StepGraph) -> Value {
    let mut out = Vec::new();
    for (i, step) in graph.steps.iter().enumerate() {
        let op = cx.program.op(step.node.op);
        let pkg = cx.program.packages.get(op.package.0 as usize);
        let idem = pkg.and_then(|p| p.idempotency.as_ref());
        let keyed = op.keyed && idem.is_some();
        let window = idem.filter(|_| keyed).map(|i| i.window_ms);
        let via: Vec<Value> = step
            .node
            .via
            .iter()
            .map(|(span, a)| json!({ "action": cx.program.action(*a).qualified, "site": lines.site(cx, *span) }))
            .collect();
        out.push(json!({
            "id": i,
            "site": lines.site(cx, step.node.span),
            "via": Value::Array(via),
            "operation": op.qualified,
            "changing": op.changes,
            "idempotent": op.idempotent,
            "keyed": keyed,
            "positions": { "first": step.first, "last": step.last },
            "window_ms": window,
            "margin_ms": window.map(|w| (w / 10).min(3_600_000)),
            "replays_failures": idem.is_some_and(|i| i.replays_failures) && keyed,
            "new_key_on": idem.filter(|_| keyed).map(|i| i.new_key_on),
            "timeout_ms": op.timeout_ms,
            "attempts": op.attempts,
        }));
    }
    Value::Array(out)
}

fn shape_json(cx: &Cx, graph: &StepGraph) -> Value {
    let nodes: Vec<Value> = graph
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let op = cx.program.op(s.node.op);
            json!({ "id": i, "operation": op.qualified, "changing": op.changes })
        })
        .collect();
    let edges: Vec<Value> = graph.edges.iter().map(|(a, b)| json!([a, b])).collect();
    object([
        ("nodes", Value::Array(nodes)),
        ("starts", json!(graph.starts)),
        ("edges", Value::Array(edges)),
        ("truncated", json!(graph.truncated)),
    ])
}

/// A JSON object from its fields, moving each value: `json!` would serialize
/// (deep-copy) every nested `Value` it is given.
fn object<const N: usize>(fields: [(&str, Value); N]) -> Value {
    let mut map = Map::new();
    for (key, value) in fields {
        map.insert(key.to_string(), value);
    }
    Value::Object(map)
}
