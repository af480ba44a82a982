//! A build the server runs: the program resolved with its code, its plan,
//! and the runtime over both, kept for the life of the process (a reload
//! in `jadpo dev` makes a new one; the old one stays for attempts still
//! running on it). Also what the server looks up in it: the routes, a
//! delivery's action and arguments, the schedules.

use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::{ActionId, EntryKind, Program, Ty, TypeKind};
use jadpo_plan::Plan;
use jadpo_runtime::store::{DeliveryRow, Source};
use jadpo_runtime::value::{decode, Value};
use jadpo_runtime::Runtime;

/// A build, for the life of the process.
pub struct Build {
    pub program: &'static Program,
    pub plan: &'static Plan,
    pub runtime: Runtime<'static>,
    pub routes: Vec<RouteDef>,
    pub schedules: Vec<ScheduleDef>,
}

/// A route as the server answers it.
#[derive(Clone, Debug)]
pub struct RouteDef {
    /// Its index in `program.entries`.
    pub entry: usize,
    pub method: String,
    /// `POST /subscriptions/{id}`
    pub label: String,
    pub segments: Vec<Segment>,
    pub key_required: bool,
    pub auth_required: bool,
    pub deadline_ms: Option<u64>,
    pub input: Option<Ty>,
    pub path: Option<Ty>,
    pub output: Ty,
    pub action: ActionId,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    Literal(String),
    /// `{id}`
    Value(String),
}

/// A schedule: its entry, its name, its period.
#[derive(Clone, Debug)]
pub struct ScheduleDef {
    pub entry: usize,
    pub name: String,
    pub every_ms: u64,
    pub action: ActionId,
}

/// During a rotation the steps key's variable with `_PREVIOUS` after it
/// (`STEPS_KEY_PREVIOUS`) holds the key before, which still opens what it
/// sealed (design section 24).
pub fn previous_steps_key(program: &Program) -> Option<String> {
    let k = program.app.encryption_key.as_ref()?;
    let entry = program.config.iter().find(|c| c.name == k.name)?;
    let var = format!("{}_PREVIOUS", entry.binding.as_deref()?);
    std::env::var(var).ok().filter(|v| !v.is_empty())
}

impl Build {
    /// Keeps `program` and `plan` for the life of the process.
    pub fn new(program: Program, plan: Plan) -> &'static Build {
        let program: &'static Program = Box::leak(Box::new(program));
        let plan: &'static Plan = Box::leak(Box::new(plan));
        let routes = routes(program);
        let schedules = schedules(program);
        Box::leak(Box::new(Build {
            program,
            plan,
            runtime: Runtime::new(program, plan).with_previous_key(previous_steps_key(program)),
            routes,
            schedules,
        }))
    }

    /// The action a delivery runs and its arguments, from what its row
    /// keeps: the event's payload, a route's input and path values, a
    /// schedule's nothing, or a direct run's arguments.
    pub fn delivery_args(&self, row: &DeliveryRow) -> Result<(ActionId, Vec<Value>), String> {
        let json: serde_json::Value = if row.args.is_empty() {
            serde_json::Value::Null
        } else {
            serde_json::from_slice(&row.args)
                .map_err(|e| format!("its arguments are damaged: {e}"))?
        };
        let types = self.program.type_table();
        match &row.source {
            Source::Event { .. } => {
                let name = row.subscriber.as_deref().unwrap_or("");
                let (entry, action) = self
                    .entry_where(|e| e.subscriber_name() == Some(name))
                    .ok_or_else(|| format!("this build has no subscriber `{name}`"))?;
                let event = match &self.program.entries[entry].kind {
                    EntryKind::Subscriber { event: Some(ev) } => self.program.event(*ev),
                    _ => return Err(format!("subscriber `{name}` has no event")),
                };
                let ty = Ty::Named(event.ty);
                let value = decode(types, &ty, &json).map_err(|e| e.0)?;
                let args = self.runtime.entry_args(entry, vec![value])?;
                Ok((action, args))
            }
            Source::Route { route, .. } => {
                let def = self
                    .routes
                    .iter()
                    .find(|r| r.label == *route)
                    .ok_or_else(|| format!("this build has no route `{route}`"))?;
                let values = route_values(def, &json, types)?;
                Ok((def.action, self.route_args(def, values)?))
            }
            Source::Schedule { name, .. } => {
                let def = self
                    .schedules
                    .iter()
                    .find(|s| s.name == *name)
                    .ok_or_else(|| format!("this build has no schedule `{name}`"))?;
                Ok((def.action, self.runtime.entry_args(def.entry, Vec::new())?))
            }
            Source::Direct => {
                let action = self
                    .program
                    .actions
                    .iter()
                    .position(|a| a.qualified == row.action)
                    .map(|i| ActionId(i as u32))
                    .ok_or_else(|| format!("this build has no action `{}`", row.action))?;
                let params = &self.program.action(action).params;
                let items = json.as_array().cloned().unwrap_or_default();
                let mut args = Vec::with_capacity(params.len());
                for ((_, ty), j) in params.iter().zip(items.iter()) {
                    args.push(decode(types, ty, j).map_err(|e| e.0)?);
                }
                Ok((action, args))
            }
        }
    }

    /// A route's action arguments from its input and path values (in
    /// that order, each when the route has it).
    pub fn route_args(&self, def: &RouteDef, values: Vec<Value>) -> Result<Vec<Value>, String> {
        let entry = &self.program.entries[def.entry];
        if entry.run_args.is_empty() {
            // An inline action takes its input and path values as they are.
            return Ok(values);
        }
        // `run:` reads `input` as local 0 and `path` as local 1, whichever
        // the route has.
        let mut given = values.into_iter();
        let input = match def.input {
            Some(_) => given.next().unwrap_or(Value::Unit),
            None => Value::Unit,
        };
        let path = match def.path {
            Some(_) => given.next().unwrap_or(Value::Unit),
            None => Value::Unit,
        };
        self.runtime.entry_args(def.entry, vec![input, path])
    }

    fn entry_where(
        &self,
        want: impl Fn(&jadpo_compiler::ir::Entry) -> bool,
    ) -> Option<(usize, ActionId)> {
        self.program
            .entries
            .iter()
            .enumerate()
            .find(|(_, e)| want(e))
            .and_then(|(i, e)| e.action.map(|a| (i, a)))
    }
}

/// A route delivery's values, as stored: `[input, path]`.
fn route_values(
    def: &RouteDef,
    json: &serde_json::Value,
    types: jadpo_compiler::ir::Types<'_>,
) -> Result<Vec<Value>, String> {
    let items = json.as_array().cloned().unwrap_or_default();
    let mut out = Vec::new();
    let mut at = items.iter();
    if let Some(ty) = &def.input {
        let j = at.next().cloned().unwrap_or_default();
        out.push(decode(types, ty, &j).map_err(|e| e.0)?);
    }
    if let Some(ty) = &def.path {
        let j = at.next().cloned().unwrap_or_default();
        out.push(decode(types, ty, &j).map_err(|e| e.0)?);
    }
    Ok(out)
}

fn routes(program: &Program) -> Vec<RouteDef> {
    let mut out = Vec::new();
    for (i, e) in program.entries.iter().enumerate() {
        let EntryKind::Route {
            method,
            path,
            key_required,
            deadline_ms,
            auth_required,
            input,
            path_values,
            output,
            ..
        } = &e.kind
        else {
            continue;
        };
        let Some(action) = e.action else { continue };
        let a = program.action(action);
        let inline = e.run_args.is_empty() && a.qualified.starts_with("route ");
        let param = |name: &str| {
            a.params
                .iter()
                .find(|(n, _)| n.as_str() == name)
                .map(|(_, t)| t.clone())
        };
        let (input, path_ty, output) = if inline {
            (param("input"), param("path"), a.ret.clone())
        } else {
            (
                input.clone(),
                path_values.clone(),
                output.clone().unwrap_or_else(|| a.ret.clone()),
            )
        };
        out.push(RouteDef {
            entry: i,
            method: method.clone(),
            label: format!("{method} {path}"),
            segments: segments(path),
            key_required: *key_required,
            auth_required: *auth_required,
            deadline_ms: *deadline_ms,
            input,
            path: path_ty,
            output,
            action,
        });
    }
    out
}

fn segments(path: &str) -> Vec<Segment> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(
            |s| match s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                Some(name) => Segment::Value(name.to_string()),
                None => Segment::Literal(s.to_string()),
            },
        )
        .collect()
}

fn schedules(program: &Program) -> Vec<ScheduleDef> {
    let mut out = Vec::new();
    for (i, e) in program.entries.iter().enumerate() {
        let EntryKind::Schedule { every_ms } = e.kind else {
            continue;
        };
        let Some(action) = e.action else { continue };
        let name = e.schedule_name().unwrap_or(&e.label).to_string();
        if every_ms > 0 {
            out.push(ScheduleDef {
                entry: i,
                name,
                every_ms,
                action,
            });
        }
    }
    out
}

/// The fields of a record type, in order.
pub fn record_fields(
    types: jadpo_compiler::ir::Types<'_>,
    ty: &Ty,
) -> Option<Vec<jadpo_compiler::ir::FieldDef>> {
    match ty.unbounded() {
        Ty::Named(t) => match types.def(*t).map(|d| &d.kind) {
            Some(TypeKind::Record(fields)) => Some(fields.clone()),
            Some(TypeKind::Alias(inner)) => record_fields(types, inner),
            _ => None,
        },
        _ => None,
    }
}

/// The name of a field, interned.
pub fn name(text: &str) -> Name {
    Name::new(text)
}
