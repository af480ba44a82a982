//! Reading an `emit`'s `with { }` options as the follow-up rules need them:
//! the literal queue, the normalised unique options, and the defaults the
//! runtime applies when an option is absent (documented in
//! `spec/follow-ups.md`).

use jadpo_compiler::ir::{Emit, EmitOption, OptionValue};

/// The queue an emit without `queue:` goes to.
pub const DEFAULT_QUEUE: &str = "default";
/// Unique states when `unique` gives no `states:`.
pub use jadpo_plan::DEFAULT_STATES;
/// Every state a `states:` list may name.
pub const KNOWN_STATES: [&str; 8] = [
    "scheduled",
    "available",
    "running",
    "retryable",
    "completed",
    "failed",
    "cancelled",
    "waiting_external",
];

/// The option named `key`, when written.
pub fn option<'e>(emit: &'e Emit, key: &str) -> Option<&'e EmitOption> {
    emit.options.iter().find(|o| o.key.as_str() == key)
}

/// The queue an emit stages into: `Some(name)` when known at compile time.
pub fn queue(emit: &Emit) -> Option<String> {
    match option(emit, "queue").map(|o| &o.value) {
        None => Some(DEFAULT_QUEUE.to_string()),
        Some(OptionValue::Str(s)) => Some(s.clone()),
        Some(_) => None,
    }
}

/// An emit's unique options, normalised; `None` inside means "computed".
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct UniqueKey {
    pub by_args: Option<bool>,
    /// Sorted, without repeats.
    pub states: Option<Vec<String>>,
}

impl UniqueKey {
    /// Its `states` are known and block on a follow-up that is running or
    /// completed: the states of the trigger while its subscriber commits.
    pub fn blocks_on_trigger(&self) -> bool {
        self.states
            .as_ref()
            .is_some_and(|s| s.iter().any(|st| st == "running" || st == "completed"))
    }

    /// Both keys are fully known and equal.
    pub fn known_same(&self, other: &UniqueKey) -> bool {
        self.by_args.is_some() && self.states.is_some() && self == other
    }
}

/// The emit's unique options, or `None` when it has no `unique:` (it is then
/// never deduplicated).
pub fn unique(emit: &Emit) -> Option<UniqueKey> {
    let value = &option(emit, "unique")?.value;
    let OptionValue::Record(items) = value else {
        return Some(UniqueKey {
            by_args: None,
            states: None,
        });
    };
    let mut key = UniqueKey {
        by_args: Some(true),
        states: Some(DEFAULT_STATES.iter().map(|s| s.to_string()).collect()),
    };
    for (name, value, _) in items {
        match name.as_str() {
            "by_args" => key.by_args = bool_of(value),
            "states" => key.states = texts_of(value),
            _ => {}
        }
    }
    if let Some(states) = &mut key.states {
        states.sort();
        states.dedup();
    }
    Some(key)
}

fn bool_of(v: &OptionValue) -> Option<bool> {
    match v {
        OptionValue::Bool(b) => Some(*b),
        _ => None,
    }
}

fn texts_of(v: &OptionValue) -> Option<Vec<String>> {
    let OptionValue::List(items) = v else {
        return None;
    };
    items
        .iter()
        .map(|(item, _)| match item {
            OptionValue::Str(s) => Some(s.clone()),
            _ => None,
        })
        .collect()
}

/// Whether a value is known in full at compile time.
pub fn is_literal(v: &OptionValue) -> bool {
    match v {
        OptionValue::Computed => false,
        OptionValue::Int(_) | OptionValue::Str(_) | OptionValue::Bool(_) => true,
        OptionValue::List(items) => items.iter().all(|(v, _)| is_literal(v)),
        OptionValue::Record(items) => items.iter().all(|(_, v, _)| is_literal(v)),
    }
}

/// A literal value as JSON; computed parts become `null`.
pub fn to_json(v: &OptionValue) -> serde_json::Value {
    use serde_json::Value;
    match v {
        OptionValue::Int(n) => Value::from(*n),
        OptionValue::Str(s) => Value::from(s.as_str()),
        OptionValue::Bool(b) => Value::from(*b),
        OptionValue::Computed => Value::Null,
        OptionValue::List(items) => Value::Array(items.iter().map(|(v, _)| to_json(v)).collect()),
        OptionValue::Record(items) => Value::Object(
            items
                .iter()
                .map(|(k, v, _)| (k.as_str().to_string(), to_json(v)))
                .collect(),
        ),
    }
}
