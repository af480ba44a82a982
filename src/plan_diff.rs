//! `jadpo plan diff OLD NEW`: what deploying a new plan does to the records
//! of actions still in flight under the old one, action by action. The
//! rules are in `spec/plan-diff.md`.
//!
//! A record holds the operations of the steps made so far, in order: a walk
//! from a start of the old step shape. The runtime resumes it when that
//! sequence is also a walk of the new shape and stops it as diverged
//! otherwise. So the question per action is language inclusion between two
//! graphs whose walks are all "accepted": found breadth first over pairs
//! (old step, set of new steps reached by the same operations), which also
//! gives the shortest sequence that tells them apart.

use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Bumped whenever a field of the JSON output changes meaning.
pub const DIFF_FORMAT: u32 = 1;
/// The plan format this reads (`plan_format` in plan.json).
pub const PLAN_FORMAT: u64 = 2;
/// Pairs explored before giving up on one action (counted as changed).
const MAX_STATES: usize = 100_000;
/// Steps of the new shape looked at before giving up on one action: the
/// sets of new steps can grow, and this keeps the work linear in the plans.
const MAX_WORK: usize = 20_000_000;
/// The largest plan `plan diff` reads (a plan of 40,000 steps is 3 MB).
pub const MAX_PLAN_BYTES: u64 = 64 * 1024 * 1024;
/// Stands for "no step made yet" in a set of steps.
const START: usize = usize::MAX;

/// One action's step shape, read from a plan.
#[derive(Clone, Debug, Default)]
pub struct Shape {
    pub operations: Vec<String>,
    pub starts: Vec<usize>,
    pub next: Vec<Vec<usize>>,
    pub truncated: bool,
}

impl Shape {
    fn after(&self, step: usize) -> &[usize] {
        if step == START {
            &self.starts
        } else {
            self.next.get(step).map_or(&[], Vec::as_slice)
        }
    }

    fn op(&self, step: usize) -> &str {
        self.operations.get(step).map_or("", String::as_str)
    }
}

/// What `plan diff` reads of a plan: the typed step shape of each action
/// (`jadpo_checker::plan::Shape`), by name; other fields are not needed to
/// judge records in flight, so a plan with more fields still reads.
#[derive(serde::Deserialize)]
struct PlanView {
    actions: Vec<ActionView>,
}

#[derive(serde::Deserialize)]
struct ActionView {
    name: String,
    step_shape: jadpo_checker::plan::Shape,
}

/// Reads a plan file: a regular file (a pipe or a device is refused, not
/// waited on) of at most [`MAX_PLAN_BYTES`].
pub fn read_plan_file(path: &str) -> Result<String, String> {
    use jadpo_compiler::load::{FsLoader, Loader};
    let cannot = |e: &dyn std::fmt::Display| format!("cannot read `{path}`: {e}");
    if let Some(len) = FsLoader.size(path).filter(|len| *len > MAX_PLAN_BYTES) {
        return Err(cannot(&format!(
            "it is {len} bytes; plans are limited to {MAX_PLAN_BYTES} bytes"
        )));
    }
    match FsLoader.read_string(path) {
        Ok(Ok(text)) if text.len() as u64 <= MAX_PLAN_BYTES => Ok(text),
        Ok(Ok(_)) => Err(cannot(&format!(
            "plans are limited to {MAX_PLAN_BYTES} bytes"
        ))),
        Ok(Err(_)) => Err(cannot(&"it is not UTF-8 text")),
        Err(e) => Err(cannot(&e)),
    }
}

/// Reads a plan's actions by name. The error says what is wrong, in words.
pub fn read_plan(text: &str) -> Result<BTreeMap<String, Shape>, String> {
    let plan: Value = serde_json::from_str(text).map_err(|e| format!("it is not JSON ({e})"))?;
    // Format 1 numbered steps from 0, format 2 from 1.
    let first = match plan.get("plan_format") {
        Some(f) if f.as_u64() == Some(PLAN_FORMAT) => 1,
        Some(f) if f.as_u64() == Some(1) => 0,
        Some(f) => {
            return Err(format!(
                "its plan_format is {f}; this jadpo reads plan_format 1 and {PLAN_FORMAT}"
            ))
        }
        None => {
            return Err("it has no `plan_format`: it is not a plan written by `jadpo build`".into())
        }
    };
    let view: PlanView = serde_json::from_value(plan)
        .map_err(|e| format!("it is not a plan written by `jadpo build` ({e})"))?;
    let mut out = BTreeMap::new();
    for action in view.actions {
        let shape = read_shape(&action.step_shape, first)
            .map_err(|e| format!("action `{}`: {e}", action.name))?;
        if out.insert(action.name.clone(), shape).is_some() {
            return Err(format!("action `{}` appears twice", action.name));
        }
    }
    Ok(out)
}

/// A plan's step shape with its steps counted from 0; `first` is the id
/// of the plan's first step.
fn read_shape(shape: &jadpo_checker::plan::Shape, first: usize) -> Result<Shape, String> {
    let count = shape.nodes.len();
    let mut operations = vec![String::new(); count];
    for node in &shape.nodes {
        let slot = node
            .id
            .checked_sub(first)
            .and_then(|i| operations.get_mut(i));
        match slot {
            Some(slot) if slot.is_empty() => *slot = node.operation.clone(),
            _ => return Err("a step of `step_shape.nodes` lacks a valid `id`".into()),
        }
    }
    let index = |i: usize| {
        i.checked_sub(first)
            .filter(|i| *i < count)
            .ok_or("`step_shape` refers to a step that is not in `nodes`")
    };
    let mut starts = Vec::with_capacity(shape.starts.len());
    for s in &shape.starts {
        starts.push(index(*s)?);
    }
    let mut next = vec![Vec::new(); count];
    for (from, to) in &shape.edges {
        let (from, to) = (index(*from)?, index(*to)?);
        if let Some(list) = next.get_mut(from) {
            list.push(to);
        }
    }
    for list in &mut next {
        list.sort_unstable();
        list.dedup();
    }
    starts.sort_unstable();
    starts.dedup();
    Ok(Shape {
        operations,
        starts,
        next,
        truncated: shape.truncated,
    })
}

/// The shortest sequence of operations that one shape can make and the
/// other cannot: the steps both make (`after`), then the step only one
/// makes, and what the other could make there instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Witness {
    pub after: Vec<String>,
    pub only: String,
    pub instead: Vec<String>,
}

impl Witness {
    /// 1-based step number of the differing step.
    pub fn step(&self) -> usize {
        self.after.len() + 1
    }
}

/// Why two shapes could not be compared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Incomparable {
    Truncated,
    TooComplex,
}

/// A walk of `a` that is not a walk of `b`, shortest first; `None` when
/// every walk of `a` is a walk of `b`. Each pair found keeps only the pair
/// it was reached from, and the witness is read back along those links, so
/// memory is linear in the pairs (a copy of the walk per pair made two
/// 40,000-step chains take gigabytes).
pub fn missing_walk(a: &Shape, b: &Shape) -> Result<Option<Witness>, Incomparable> {
    if a.truncated || b.truncated {
        return Err(Incomparable::Truncated);
    }
    let start = (START, vec![START]);
    // Each found pair: its old step, and the index of the pair before it.
    let mut found: Vec<(usize, usize)> = vec![(START, usize::MAX)];
    let mut seen = std::collections::HashSet::from([start.clone()]);
    let mut queue = VecDeque::from([(start, 0usize)]);
    let mut work = 0usize;
    while let Some(((step, set), at)) = queue.pop_front() {
        for &next in a.after(step) {
            let op = a.op(next);
            let mut reached: Vec<usize> = Vec::new();
            for s in &set {
                let after = b.after(*s);
                work += after.len();
                reached.extend(after.iter().copied().filter(|s| b.op(*s) == op));
            }
            if work > MAX_WORK {
                return Err(Incomparable::TooComplex);
            }
            if reached.is_empty() {
                let instead: BTreeSet<String> = set
                    .iter()
                    .flat_map(|s| b.after(*s))
                    .map(|s| b.op(*s).to_string())
                    .collect();
                return Ok(Some(Witness {
                    after: walk_to(a, &found, at),
                    only: op.to_string(),
                    instead: instead.into_iter().collect(),
                }));
            }
            reached.sort_unstable();
            reached.dedup();
            let state = (next, reached);
            if seen.insert(state.clone()) {
                if seen.len() > MAX_STATES {
                    return Err(Incomparable::TooComplex);
                }
                found.push((next, at));
                queue.push_back((state, found.len() - 1));
            }
        }
    }
    Ok(None)
}

/// The operations of the walk that reached pair `at`, first step first.
fn walk_to(a: &Shape, found: &[(usize, usize)], mut at: usize) -> Vec<String> {
    let mut ops = Vec::new();
    while let Some(&(step, before)) = found.get(at) {
        if step == START {
            break;
        }
        ops.push(a.op(step).to_string());
        at = before;
    }
    ops.reverse();
    ops
}

/// What the new plan does to one action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// The same walks: every record resumes as before.
    Unchanged,
    /// Every old walk is still a walk; the witness is a new step.
    Appended(Witness),
    /// Some old walk is not a walk any more: the witness is the record that
    /// would stop as diverged.
    Changed(Witness),
    /// The shapes could not be compared; treated as changed.
    Unknown(Incomparable),
    Added,
    /// The action is gone; `steps` is how many steps its old shape had.
    Removed {
        steps: usize,
    },
}

impl Status {
    pub fn word(&self) -> &'static str {
        match self {
            Status::Unchanged => "unchanged",
            Status::Appended(_) => "appended",
            Status::Changed(_) | Status::Unknown(_) => "changed",
            Status::Added => "added",
            Status::Removed { .. } => "removed",
        }
    }

    /// Whether a record in flight under the old plan could be left unable
    /// to resume.
    pub fn strands(&self) -> bool {
        match self {
            Status::Changed(_) | Status::Unknown(_) => true,
            Status::Removed { steps } => *steps > 0,
            Status::Unchanged | Status::Appended(_) | Status::Added => false,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionDiff {
    pub name: String,
    pub status: Status,
}

/// Every action of either plan, sorted by name.
pub fn diff(old: &BTreeMap<String, Shape>, new: &BTreeMap<String, Shape>) -> Vec<ActionDiff> {
    let names: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    names
        .into_iter()
        .map(|name| ActionDiff {
            name: name.clone(),
            status: match (old.get(name), new.get(name)) {
                (Some(o), Some(n)) => compare(o, n),
                (Some(o), None) => Status::Removed {
                    steps: o.operations.len(),
                },
                _ => Status::Added,
            },
        })
        .collect()
}

fn compare(old: &Shape, new: &Shape) -> Status {
    match missing_walk(old, new) {
        Err(why) => Status::Unknown(why),
        Ok(Some(w)) => Status::Changed(w),
        Ok(None) => match missing_walk(new, old) {
            Err(why) => Status::Unknown(why),
            Ok(Some(w)) => Status::Appended(w),
            Ok(None) => Status::Unchanged,
        },
    }
}

/// Whether any action would strand an in-flight record.
pub fn strands(diffs: &[ActionDiff]) -> bool {
    diffs.iter().any(|d| d.status.strands())
}

/// One line per action, then a closing line.
pub fn render_human(diffs: &[ActionDiff]) -> String {
    let mut out = String::new();
    for d in diffs {
        out.push_str(&format!(
            "{:<10} {}{}\n",
            d.status.word(),
            d.name,
            detail(&d.status)
        ));
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for d in diffs {
        *counts.entry(d.status.word()).or_default() += 1;
    }
    let parts: Vec<String> = ["unchanged", "appended", "changed", "added", "removed"]
        .iter()
        .map(|w| format!("{} {w}", counts.get(w).copied().unwrap_or(0)))
        .collect();
    let verdict = if strands(diffs) {
        "in-flight records would be stranded"
    } else {
        "no in-flight record is stranded"
    };
    out.push_str(&format!("plan diff: {}: {verdict}\n", parts.join(", ")));
    out
}

fn quoted(ops: &[String]) -> String {
    ops.iter()
        .map(|o| format!("`{o}`"))
        .collect::<Vec<_>>()
        .join(" or ")
}

fn after_words(w: &Witness) -> String {
    match w.after.last() {
        Some(last) => format!(" after `{last}`"),
        None => " as the first step".to_string(),
    }
}

fn detail(status: &Status) -> String {
    match status {
        Status::Unchanged | Status::Added => String::new(),
        Status::Appended(w) => format!(
            ": step {} `{}` is new{}; in-flight records still replay",
            w.step(),
            w.only,
            after_words(w)
        ),
        Status::Changed(w) => {
            let now = if w.instead.is_empty() {
                format!("the new plan has no step {} there", w.step())
            } else {
                format!("now {}", quoted(&w.instead))
            };
            format!(
                ": step {} was `{}`{}, {now}; in-flight records that made it will stop as diverged",
                w.step(),
                w.only,
                after_words(w)
            )
        }
        Status::Unknown(Incomparable::Truncated) => {
            ": a step shape was cut short (too large), so the plans cannot be compared".into()
        }
        Status::Unknown(Incomparable::TooComplex) => {
            ": the step shapes are too complex to compare".into()
        }
        Status::Removed { steps: 0 } => ": it made no steps, so no record is in flight".into(),
        Status::Removed { steps } => format!(
            ": its shape had {steps} step{}; in-flight records of it cannot resume",
            if *steps == 1 { "" } else { "s" }
        ),
    }
}

/// The JSON document of `--format json` (`spec/plan-diff.md`).
pub fn render_json(diffs: &[ActionDiff]) -> String {
    let actions: Vec<Value> = diffs.iter().map(action_json).collect();
    let doc = json!({
        "diff_format": DIFF_FORMAT,
        "strands_in_flight": strands(diffs),
        "actions": actions,
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

fn action_json(d: &ActionDiff) -> Value {
    let difference = match &d.status {
        Status::Changed(w) => json!({
            "step": w.step(), "after": w.after,
            "old_operations": [w.only], "new_operations": w.instead,
        }),
        Status::Appended(w) => json!({
            "step": w.step(), "after": w.after,
            "old_operations": w.instead, "new_operations": [w.only],
        }),
        _ => Value::Null,
    };
    json!({
        "name": d.name,
        "status": d.status.word(),
        "strands_in_flight": d.status.strands(),
        "difference": difference,
        "message": format!("{}{}", d.name, detail(&d.status)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(ops: &[&str]) -> Shape {
        let n = ops.len();
        Shape {
            operations: ops.iter().map(|s| s.to_string()).collect(),
            starts: if n > 0 { vec![0] } else { vec![] },
            next: (0..n)
                .map(|i| if i + 1 < n { vec![i + 1] } else { vec![] })
                .collect(),
            truncated: false,
        }
    }

    #[test]
    fn a_prefix_is_appended_not_changed() {
        let old = chain(&["a", "b"]);
        let new = chain(&["a", "b", "c"]);
        assert_eq!(missing_walk(&old, &new), Ok(None));
        assert_eq!(compare(&old, &new).word(), "appended");
    }

    /// Two 40,000-step chains once took over 4 GB (a copy of the walk per
    /// pair); with links back, this is linear and quick even unoptimised.
    #[test]
    fn long_chains_compare_in_linear_memory() {
        let ops: Vec<String> = (0..40_000).map(|i| format!("op{}", i % 7)).collect();
        let ops: Vec<&str> = ops.iter().map(String::as_str).collect();
        let old = chain(&ops);
        assert_eq!(missing_walk(&old, &chain(&ops)), Ok(None));
        let mut changed = ops.clone();
        changed[39_999] = "other";
        let w = missing_walk(&old, &chain(&changed)).ok().flatten();
        let w = w.unwrap_or_else(|| panic!("the last step differs"));
        assert_eq!(w.step(), 40_000);
        assert_eq!(w.after.len(), 39_999);
        assert_eq!(w.after[..3], ["op0", "op1", "op2"]);
    }

    #[test]
    fn a_swap_names_the_first_differing_step() {
        let w = missing_walk(&chain(&["a", "b", "c"]), &chain(&["a", "c", "b"]));
        assert_eq!(
            w,
            Ok(Some(Witness {
                after: vec!["a".into()],
                only: "b".into(),
                instead: vec!["c".into()],
            }))
        );
    }
}
