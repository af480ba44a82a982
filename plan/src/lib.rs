//! The plan as typed data: what `jadpo build` writes (the checker computes
//! it; its JSON has sorted keys, so the bytes are those `spec/plan.md`
//! describes) and what the runtime, the server, the language server's
//! hover and `jadpo plan diff` read. A crate of its own so the runtime
//! depends on the plan, never on the checker's analysis. Fields marked
//! `serde(skip)` exist only in process: the spans and ids that let the
//! runtime find a step by its call site without reading `file:line:col`
//! back.

use std::collections::BTreeMap;

use jadpo_compiler::ir::{ActionId, OpId};
use jadpo_compiler::manifest::NewKeyOn;
use jadpo_compiler::span::Span;
use serde::{Deserialize, Serialize};

/// The plan of an app (`jadpo build`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    pub plan_format: u32,
    #[serde(default)]
    pub build_id: String,
    pub app: String,
    pub actions: Vec<ActionPlan>,
    /// The `where:` field lists the program queries, one index each.
    #[serde(default)]
    pub queries: Vec<QueryPlan>,
    /// The checksum of the app bundle written beside the plan (`jadpo
    /// build`), so the build id covers the sources; absent otherwise.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub bundle: String,
}

/// An entity's rows looked up by fields (`query`, `update` and `delete`
/// with `where:`): the store keeps an index on them.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueryPlan {
    pub entity: String,
    /// The fields, in the order the entity declares them.
    pub fields: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionPlan {
    pub name: String,
    pub site: String,
    pub entries: Vec<EntryPlan>,
    pub called_by: Vec<String>,
    pub changing_calls: u32,
    pub multi_step: bool,
    pub steps: Vec<StepPlan>,
    pub step_shape: Shape,
    pub step_shape_digest: String,
    pub deadline_budget_ms: u64,
    pub record_store: Option<RecordStore>,
    pub crash_points: Vec<CrashPoint>,
    pub follow_ups: Vec<FollowUpPlan>,
    /// The action in the program the plan was built from.
    #[serde(skip)]
    pub action: Option<ActionId>,
    /// The stores whose entities it writes, itself or through the actions
    /// it calls, by name (the server refuses an action writing two: its
    /// commit could not be one transaction).
    #[serde(skip)]
    pub stores_written: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum EntryPlan {
    Route {
        label: String,
        site: String,
        method: String,
        path: String,
        idempotency_key_required: bool,
        deadline_ms: Option<u64>,
    },
    Subscriber {
        label: String,
        site: String,
        event: Option<String>,
    },
    Schedule {
        label: String,
        site: String,
    },
}

impl EntryPlan {
    pub fn label(&self) -> &str {
        match self {
            EntryPlan::Route { label, .. }
            | EntryPlan::Subscriber { label, .. }
            | EntryPlan::Schedule { label, .. } => label,
        }
    }
}

/// An outside call that is a step on some path of the action.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepPlan {
    /// The step's number in `steps`, from 1; `step_shape` and
    /// `crash_points` refer to it.
    pub id: usize,
    pub site: String,
    pub via: Vec<Via>,
    pub operation: String,
    pub changing: bool,
    pub idempotent: bool,
    pub keyed: bool,
    pub positions: Positions,
    pub window_ms: Option<u64>,
    pub margin_ms: Option<u64>,
    pub replays_failures: bool,
    pub new_key_on: Option<NewKeyOn>,
    pub timeout_ms: u64,
    pub attempts: u32,
    /// The call site: the operation's callee span.
    #[serde(skip)]
    pub call: Span,
    /// The action calls leading to it, outermost first, by call site.
    #[serde(skip)]
    pub via_calls: Vec<Span>,
    #[serde(skip)]
    pub op: Option<OpId>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Via {
    pub action: String,
    pub site: String,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Positions {
    pub first: u32,
    pub last: u32,
}

/// The steps as a graph: which step may directly follow which.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shape {
    pub nodes: Vec<ShapeNode>,
    pub starts: Vec<usize>,
    pub edges: Vec<(usize, usize)>,
    #[serde(default)]
    pub truncated: bool,
}

impl Shape {
    /// The first of a record's steps (by their operations) that no path of
    /// this shape makes next, counted from 0; `None` when the steps so far
    /// are the first steps of a path, so the build resumes the record.
    pub fn first_off_path(&self, ops: &[&str]) -> Option<usize> {
        let mut front: Vec<usize> = self.starts.clone();
        for (i, op) in ops.iter().enumerate() {
            let here: Vec<usize> = front
                .iter()
                .copied()
                .filter(|n| {
                    // Step ids count from 1, nodes are listed in id order.
                    n.checked_sub(1)
                        .and_then(|i| self.nodes.get(i))
                        .is_some_and(|node| node.id == *n && node.operation == *op)
                })
                .collect();
            if here.is_empty() {
                return Some(i);
            }
            let mut next: Vec<usize> = self
                .edges
                .iter()
                .filter(|(from, _)| here.contains(from))
                .map(|(_, to)| *to)
                .collect();
            next.sort_unstable();
            next.dedup();
            front = next;
        }
        None
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShapeNode {
    pub id: usize,
    pub operation: String,
    #[serde(default)]
    pub changing: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordStore {
    pub store: String,
    /// `writes` or `events_store`.
    pub from: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrashPoint {
    /// A step's `id`.
    pub step: usize,
    pub point: Point,
}

/// Where a crash can strike a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Point {
    /// The send is recorded; nothing is sent.
    BeforeSend,
    /// The provider acted; its answer is not recorded.
    AfterSendBeforeRecord,
    /// The answer is recorded.
    AfterRecord,
}

impl Point {
    pub const ALL: [Point; 3] = [
        Point::BeforeSend,
        Point::AfterSendBeforeRecord,
        Point::AfterRecord,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Point::BeforeSend => "before_send",
            Point::AfterSendBeforeRecord => "after_send_before_record",
            Point::AfterRecord => "after_record",
        }
    }
}

/// A follow-up the action stages (`emit`), or a call of an action that
/// stages some.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FollowUpPlan {
    Emit {
        event: Option<String>,
        site: String,
        loop_max: Vec<Option<u32>>,
        options: BTreeMap<String, OptionPlan>,
        worst_case_bytes: u64,
        unbounded_fields: Vec<String>,
    },
    Through {
        through: Option<String>,
        site: String,
    },
}

/// An emit option as written: its literal value (or `null`), and whether it
/// is known only when the follow-up is staged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OptionPlan {
    pub value: serde_json::Value,
    pub checked_at_staging: bool,
}

/// A package's surface (`jadpo publish`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Surface {
    pub plan_format: u32,
    #[serde(default)]
    pub build_id: String,
    pub package: String,
    pub version: String,
    pub actions: Vec<SurfaceAction>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SurfaceAction {
    pub name: String,
    pub failures: Vec<String>,
    pub after_effect: Vec<String>,
    pub changing_calls: u32,
    pub step_shape: Shape,
    pub step_shape_digest: String,
    pub deadline_budget_ms: u64,
}

/// What the checker built: an app's plan or a package's surface.
#[derive(Clone, Debug)]
pub enum Built {
    App(Plan),
    Package(Surface),
}

/// The JSON of a plan or surface: keys sorted, so the same plan always
/// gives the same bytes.
pub fn to_json<T: Serialize>(value: &T) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}

impl Built {
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Built::App(p) => to_json(p),
            Built::Package(s) => to_json(s),
        }
    }

    pub fn app(&self) -> Option<&Plan> {
        match self {
            Built::App(p) => Some(p),
            Built::Package(_) => None,
        }
    }
}

impl Plan {
    pub fn action(&self, name: &str) -> Option<&ActionPlan> {
        self.actions.iter().find(|a| a.name == name)
    }
}

/// The plan format `jadpo build` writes; bumped when a field changes
/// meaning or goes.
pub const FORMAT: u32 = 2;

/// The first format whose step ids count from 1 (format 1's from 0).
pub const FORMAT_STEPS_FROM_ONE: u32 = 2;

/// The margin before a key's window ends: the smaller of a tenth of the
/// window and one hour.
pub fn margin_ms(window_ms: u64) -> u64 {
    (window_ms / 10).min(3_600_000)
}

/// The unique states of a follow-up when `unique` gives no `states:`
/// (design section 14.3): a duplicate is skipped while an earlier one is
/// in any of them.
pub const DEFAULT_STATES: [&str; 5] = [
    "scheduled",
    "available",
    "running",
    "retryable",
    "completed",
];
