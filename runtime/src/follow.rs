//! A follow-up staged by `emit` (`spec/follow-ups.md`): its options with
//! their defaults (queue `default`, priority 2, max_attempts 25, no tags,
//! `run_at` the action's `clock.now`, no metadata), and its unique key. A
//! computed option out of range is a fault: literal ones were checked when
//! compiling.

use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::code::Emit;
use jadpo_compiler::ir::Program;

use crate::eval::{fault, R};
use crate::store::{DeliveryState, Follow};
use crate::value::{hex, Instant, Value};

// The states an existing unique follow-up blocks a new one in, by default:
// the checker's, so the two cannot disagree.
use jadpo_plan::DEFAULT_STATES;

/// The first and last instants `run_at` may be: years 1 to 9999.
const EARLIEST: i128 = -62_135_596_800 * 1_000_000_000;
const LATEST: i128 = 253_402_300_799 * 1_000_000_000;

pub fn staged(
    program: &Program,
    emit: &Emit,
    payload: Value,
    options: &Value,
    now: Instant,
) -> R<Follow> {
    let event = program.event(emit.event).qualified.clone();
    let n = names();
    let opt = |name: Name| options.as_record().map_or(Value::None, |r| r.get(name));
    let queue = match opt(n.queue) {
        Value::Text(q) => q.to_string(),
        _ => "default".to_string(),
    };
    let priority = int_or(opt(n.priority), 2);
    let max_attempts = int_or(opt(n.max_attempts), 25);
    let tags: Vec<String> = match opt(n.tags) {
        Value::List(items) => items.iter().map(Value::as_text).collect(),
        _ => Vec::new(),
    };
    let run_at = match opt(n.run_at) {
        Value::Instant(i) => i,
        _ => now,
    };
    check(&queue, priority, max_attempts, &tags, run_at)?;
    let unique = match opt(n.unique) {
        Value::Record(u) => {
            let by_args = u.get(n.by_args) != Value::Bool(false);
            let named: Vec<String> = match u.get(n.states) {
                Value::List(items) => items.iter().map(Value::as_text).collect(),
                _ => DEFAULT_STATES.iter().map(|s| s.to_string()).collect(),
            };
            let mut states = Vec::with_capacity(named.len());
            for name in &named {
                match DeliveryState::parse(name) {
                    Some(s) => states.push(s),
                    None => {
                        return fault(format!("a follow-up's unique state `{name}` is no state"))
                    }
                }
            }
            Some((unique_key(&event, by_args.then_some(&payload)), states))
        }
        _ => None,
    };
    let metadata = match opt(n.metadata) {
        Value::None => Value::record(Vec::new()),
        other => other,
    };
    Ok(Follow {
        // The id and the deliveries are the commit's to give.
        id: String::new(),
        event,
        payload,
        queue,
        priority,
        max_attempts,
        tags,
        run_at,
        metadata,
        unique,
        deliveries: Vec::new(),
    })
}

fn int_or(v: Value, default: i64) -> i64 {
    match v {
        Value::Int(n) => n,
        _ => default,
    }
}

fn check(queue: &str, priority: i64, max_attempts: i64, tags: &[String], run_at: Instant) -> R<()> {
    if !(1..=4).contains(&priority) {
        return fault(format!(
            "a follow-up's priority is {priority}; it must be 1 to 4"
        ));
    }
    if !(1..=1000).contains(&max_attempts) {
        return fault(format!(
            "a follow-up's max_attempts is {max_attempts}; it must be 1 to 1000"
        ));
    }
    if queue.chars().count() > 200 || queue.contains('\0') {
        return fault("a follow-up's queue is over 200 characters or holds a NUL");
    }
    if tags.len() > 20 || tags.iter().any(|t| t.contains('\0')) {
        return fault("a follow-up has over 20 tags, or a tag holds a NUL");
    }
    if !(EARLIEST..=LATEST).contains(&run_at.0) {
        return fault("a follow-up's run_at is outside the years 1 to 9999");
    }
    Ok(())
}

/// The unique key: the event's name, and with `by_args` its whole payload.
pub fn unique_key(event: &str, payload: Option<&Value>) -> String {
    let mut h = blake3::Hasher::new_derive_key("jadpo-follow-up-unique-v1");
    h.update(&(event.len() as u32).to_le_bytes());
    h.update(event.as_bytes());
    if let Some(p) = payload {
        h.update(&p.canonical());
    }
    hex(h.finalize().as_bytes())
}

/// The option names, interned once.
struct Names {
    queue: Name,
    priority: Name,
    max_attempts: Name,
    tags: Name,
    run_at: Name,
    unique: Name,
    metadata: Name,
    by_args: Name,
    states: Name,
}

fn names() -> &'static Names {
    static NAMES: std::sync::OnceLock<Names> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| Names {
        queue: Name::new("queue"),
        priority: Name::new("priority"),
        max_attempts: Name::new("max_attempts"),
        tags: Name::new("tags"),
        run_at: Name::new("run_at"),
        unique: Name::new("unique"),
        metadata: Name::new("metadata"),
        by_args: Name::new("by_args"),
        states: Name::new("states"),
    })
}
