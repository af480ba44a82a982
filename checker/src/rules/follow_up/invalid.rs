//! # follow_up.invalid: a literal follow-up option is out of range
//!
//! ## What it checks
//!
//! Every literal in an `emit` that the runtime would reject when staging it:
//!
//! - `priority` outside 1 to 4, `max_attempts` outside 1 to 1000;
//! - a `queue` name, or the name of an emitted event, longer than 200
//!   characters (counted as characters, not bytes);
//! - more than 20 `tags`;
//! - a NUL character (`\u{0}`) in a queue name, a tag, a literal payload
//!   field or a literal `metadata` value;
//! - a `unique` `states` entry that is not a follow-up state (`scheduled`,
//!   `available`, `running`, `retryable`, `completed`, `failed`,
//!   `cancelled`, `waiting_external`).
//!
//! Each finding points at the offending literal (an event name at its
//! declaration). A computed value, such as a queue taken from a parameter,
//! is accepted: the plan marks it `checked_at_staging: true` and the runtime
//! checks it when the follow-up is staged. `run_at` is always computed
//! (Jadpo has no `Instant` literal; a string there is a `type.mismatch`), so
//! its range, the years 1 to 9999, is always checked at staging.
//!
//! ## Why it matters
//!
//! The runtime validates every follow-up when it is staged, so that nothing
//! predictably rejected reaches the commit. A literal out of range would be
//! rejected on every run: the action fails terminally each time it reaches
//! the `emit`. Postgres cannot store NUL in text or JSON, which is why NUL
//! is refused everywhere.
//!
//! ## Failing example
//!
//! ```jadpo
//! application Example {
//!     events: { store: primary }
//! }
//!
//! store primary { kind: postgres }
//!
//! type Code = Text { max_length: 16 }
//!
//! event Remind {
//!     code: Code
//! }
//!
//! action remind(code: Code) -> Unit {
//!     emit Remind { code: code } with {
//!         priority: 7
//!     }
//! }
//! ```
//!
//! ## Fixed example
//!
//! ```jadpo
//! application Example {
//!     events: { store: primary }
//! }
//!
//! store primary { kind: postgres }
//!
//! type Code = Text { max_length: 16 }
//!
//! event Remind {
//!     code: Code
//! }
//!
//! action remind(code: Code) -> Unit {
//!     emit Remind { code: code } with {
//!         priority: 4
//!     }
//! }
//! ```
//!
//! ## Related
//!
//! `follow_up.too_large`, `type.option` (an option of the wrong type).

use std::collections::BTreeMap;

use jadpo_compiler::diag::Diagnostic;
use jadpo_compiler::ir::{ActionId, Emit, EmitOption, EventId, OptionValue};
use jadpo_compiler::span::Span;

use crate::analysis::follow_up::emits_in;
use crate::analysis::follow_up::options::KNOWN_STATES;
use crate::rules::{rule_info, Cx, Finding};

rule_info!(
    "follow_up",
    "invalid",
    Error,
    "a literal follow-up option is out of range"
);

const MAX_NAME_CHARS: usize = 200;
const MAX_TAGS: usize = 20;

/// The options and payload literals of one action's emits.
pub fn check_action(cx: &Cx, id: ActionId, out: &mut Vec<Finding>) {
    for emit in emits_in(&cx.program.action(id).body) {
        let mut found = Vec::new();
        emit_problems(emit, &mut found);
        out.extend(found.into_iter().map(|d| Finding::of(id, d)));
    }
}

/// Event names too long to be a follow-up's kind, at the first emit of
/// each (runs after [`check_action`], so the findings keep their order).
pub fn check_names(cx: &Cx, out: &mut Vec<Finding>) {
    let too_long = |ev: &jadpo_compiler::ir::Event| ev.qualified.chars().count() > MAX_NAME_CHARS;
    // Most programs have none: then no body needs walking.
    if !cx.program.events.iter().any(too_long) {
        return;
    }
    let mut emitted: BTreeMap<EventId, (ActionId, Span)> = BTreeMap::new();
    for id in cx.actions() {
        for emit in emits_in(&cx.program.action(id).body) {
            emitted.entry(emit.event).or_insert((id, emit.span));
        }
    }
    for (event, (id, first)) in emitted {
        let Some(ev) = cx.program.events.get(event) else {
            continue;
        };
        if !too_long(ev) {
            continue;
        }
        let chars = ev.qualified.chars().count();
        let at = if cx.reportable(ev.span) {
            ev.span
        } else {
            first
        };
        let d = problem(
            at,
            format!(
                "event name `{}` is {chars} characters; at most {MAX_NAME_CHARS} are allowed",
                ev.qualified
            ),
            "too long",
            "the runtime keeps the event name as the follow-up's kind, of at most 200 characters",
            "give the event a shorter name",
        )
        .with_related(first, "staged here");
        out.push(Finding::of(id, d));
    }
}

/// `reason` says what the runtime accepts; every finding adds the outcome.
fn problem(span: Span, summary: String, label: &str, reason: &str, fix: &str) -> Diagnostic {
    INFO.report(span, summary)
        .with_label(label.to_string())
        .with_reason(format!(
            "{reason}, and it checks this when the follow-up is staged: the action would fail on every run that reaches this `emit`"
        ))
        .with_fix(fix.to_string())
}

fn emit_problems(emit: &Emit, out: &mut Vec<Diagnostic>) {
    for field in &emit.fields {
        if field.literal.as_deref().is_some_and(|s| s.contains('\0')) {
            out.push(nul(
                field.value_span,
                &format!("payload field `{}`", field.name),
            ));
        }
    }
    for o in &emit.options {
        option_problems(o, out);
    }
}

fn option_problems(o: &EmitOption, out: &mut Vec<Diagnostic>) {
    let at = o.value_span;
    match (o.key.as_str(), &o.value) {
        ("priority", OptionValue::Int(n)) => range(out, at, "priority", *n, 1, 4),
        ("max_attempts", OptionValue::Int(n)) => range(out, at, "max_attempts", *n, 1, 1000),
        ("queue", OptionValue::Str(s)) => queue(out, at, s),
        ("tags", OptionValue::List(items)) => tags(out, items),
        ("metadata", v) => metadata(out, at, v),
        ("unique", OptionValue::Record(items)) => {
            for (name, value, _) in items {
                if let ("states", OptionValue::List(states)) = (name.as_str(), value) {
                    unique_states(out, states);
                }
            }
        }
        _ => {}
    }
}

fn range(out: &mut Vec<Diagnostic>, at: Span, key: &str, n: i64, lo: i64, hi: i64) {
    if (lo..=hi).contains(&n) {
        return;
    }
    out.push(problem(
        at,
        format!("`{key}: {n}` is out of range; it must be from {lo} to {hi}"),
        &format!("not from {lo} to {hi}"),
        &format!("the runtime accepts a `{key}` from {lo} to {hi}"),
        &format!("write a `{key}` from {lo} to {hi}"),
    ));
}

fn nul(at: Span, what: &str) -> Diagnostic {
    problem(
        at,
        format!("the {what} contains a NUL character"),
        "contains `\\u{0}`",
        "the runtime refuses NUL characters, which Postgres cannot store in text or JSON",
        "remove the `\\u{0}`",
    )
}

fn queue(out: &mut Vec<Diagnostic>, at: Span, s: &str) {
    let chars = s.chars().count();
    if chars > MAX_NAME_CHARS {
        out.push(problem(
            at,
            format!("the queue name is {chars} characters; at most {MAX_NAME_CHARS} are allowed"),
            "too long",
            "the runtime accepts queue names of at most 200 characters",
            "use a shorter queue name",
        ));
    }
    if s.contains('\0') {
        out.push(nul(at, "queue name"));
    }
}

fn tags(out: &mut Vec<Diagnostic>, items: &[(OptionValue, Span)]) {
    if let Some((_, extra)) = items.get(MAX_TAGS) {
        out.push(problem(
            *extra,
            format!(
                "{} tags are given; at most {MAX_TAGS} are allowed",
                items.len()
            ),
            "the 21st tag",
            "the runtime accepts at most 20 tags on a follow-up",
            "keep at most 20 tags; put other details in `metadata`",
        ));
    }
    for (item, span) in items {
        if matches!(item, OptionValue::Str(s) if s.contains('\0')) {
            out.push(nul(*span, "tag"));
        }
    }
}

fn metadata(out: &mut Vec<Diagnostic>, at: Span, v: &OptionValue) {
    match v {
        OptionValue::Str(s) if s.contains('\0') => out.push(nul(at, "metadata value")),
        OptionValue::List(items) => {
            for (item, span) in items {
                metadata(out, *span, item);
            }
        }
        OptionValue::Record(items) => {
            for (_, item, span) in items {
                metadata(out, *span, item);
            }
        }
        _ => {}
    }
}

fn unique_states(out: &mut Vec<Diagnostic>, states: &[(OptionValue, Span)]) {
    for (state, span) in states {
        let OptionValue::Str(s) = state else { continue };
        if !KNOWN_STATES.contains(&s.as_str()) {
            let d = problem(
                *span,
                format!("`{}` is not a follow-up state", s.escape_debug()),
                "not a state",
                "`unique` `states` name the states in which an existing follow-up blocks a duplicate",
                "use one of `scheduled`, `available`, `running`, `retryable`, `completed`, `failed`, `cancelled`, `waiting_external`",
            );
            out.push(d);
        }
    }
}
