//! Does a crash run end as the clean run did? Compared (design section
//! 10): the verdict, each delivery's outcome, each entity's committed rows,
//! the outbox and each fake's effects, the last three as multisets.
//! Records, keys, attempt counts and times are not compared.

use jadpo_compiler::ir::Program;

use super::run::{describe_end, Ran};
use super::{Failure, FailureKind};
use crate::delivery::{End, ListedStep};
use crate::CrashAt;

/// The first way `crashed` differs from `clean`, as the test's failure,
/// with the step listings of the delivery the difference is in (the
/// crashed one unless another delivery ended otherwise) and the first step
/// whose line or answer differs between them.
pub fn first_difference(
    program: &Program,
    clean: &Ran,
    crashed: &Ran,
    delivery: usize,
    crash: CrashAt,
) -> Option<Failure> {
    let (difference, at) = difference(program, clean, crashed)?;
    let shown = at.unwrap_or(delivery);
    let of = |r: &Ran| {
        r.deliveries
            .get(shown)
            .map(|d| d.steps.clone())
            .unwrap_or_default()
    };
    let target = clean.deliveries.get(delivery)?;
    let (steps, crash_steps) = (of(clean), of(crashed));
    Some(Failure {
        kind: FailureKind::CrashRun,
        message: format!(
            "a crash at step {} {} of delivery `{}` changes what the test does: {difference}",
            crash.step,
            crash.point.as_str(),
            target.id
        ),
        span: target.span,
        differs_at: first_differing_step(&steps, &crash_steps),
        steps,
        crash_steps,
    })
}

/// The position of the first step whose listing line (times aside) or
/// answer differs between two listings.
pub fn first_differing_step(a: &[ListedStep], b: &[ListedStep]) -> Option<u32> {
    // An answer replayed from the record is the answer the step got.
    let state = |s: &ListedStep| match s.state {
        "replayed" => "answered",
        other => other,
    };
    let same = |x: &ListedStep, y: &ListedStep| {
        (x.position, &x.operation, state(x), &x.detail, &x.answer)
            == (y.position, &y.operation, state(y), &y.detail, &y.answer)
    };
    let n = a.len().max(b.len());
    (0..n).find_map(|i| match (a.get(i), b.get(i)) {
        (Some(x), Some(y)) if same(x, y) => None,
        (Some(x), _) => Some(x.position),
        (None, Some(y)) => Some(y.position),
        (None, None) => None,
    })
}

/// The first difference, causes before symptoms: each delivery's outcome,
/// the providers' effects, the committed rows, the outbox, and only then
/// the verdict (a failed assertion is usually one of those seen by a test).
/// With it, the delivery that ended otherwise, when that is the difference.
fn difference(program: &Program, clean: &Ran, crashed: &Ran) -> Option<(String, Option<usize>)> {
    for (i, (a, b)) in clean.deliveries.iter().zip(&crashed.deliveries).enumerate() {
        if !same_end(&a.end, &b.end) {
            let text = format!(
                "delivery `{}` {} in the clean run, but {} after the crash",
                a.id,
                describe_end(program, &a.end),
                describe_end(program, &b.end)
            );
            return Some((text, Some(i)));
        }
    }
    difference_in_state(program, clean, crashed).map(|d| (d, None))
}

fn difference_in_state(program: &Program, clean: &Ran, crashed: &Ran) -> Option<String> {
    if let Some(d) = effects_difference(&clean.effects, &crashed.effects) {
        return Some(d);
    }
    for (entity, rows) in &clean.rows {
        let other = crashed.rows.get(entity).map_or(&[][..], |r| &r[..]);
        if let Some(d) = multiset_difference(rows, other) {
            let name = &program.entity(*entity).qualified;
            return Some(format!("the committed rows of `{name}` differ: {d}"));
        }
    }
    if let Some(d) = multiset_difference(&clean.outbox, &crashed.outbox) {
        return Some(format!("the outbox differs: {d}"));
    }
    if let Some(f) = crashed.failures.first() {
        return Some(format!(
            "the crash run fails where the clean run passes: {}",
            f.message
        ));
    }
    if clean.deliveries.len() != crashed.deliveries.len() {
        return Some(format!(
            "the clean run made {} deliveries, the crash run {}",
            clean.deliveries.len(),
            crashed.deliveries.len()
        ));
    }
    None
}

/// Effects (`operation fingerprint answer`): first by how many times each
/// operation acted, the plainest way to say "charged twice".
fn effects_difference(clean: &[String], crashed: &[String]) -> Option<String> {
    if clean == crashed {
        return None;
    }
    let count = |all: &[String]| {
        let mut by_op: std::collections::BTreeMap<String, usize> = Default::default();
        for e in all {
            let op = e.split(' ').next().unwrap_or_default().to_string();
            *by_op.entry(op).or_default() += 1;
        }
        by_op
    };
    let (a, b) = (count(clean), count(crashed));
    let ops: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for op in ops {
        let (x, y) = (
            a.get(op).copied().unwrap_or(0),
            b.get(op).copied().unwrap_or(0),
        );
        if x != y {
            return Some(format!(
                "`{op}` acted {} after the crash, {} in the clean run",
                times(y),
                times(x)
            ));
        }
    }
    let d = multiset_difference(clean, crashed)?;
    Some(format!("the providers' effects differ: {d}"))
}

fn times(n: usize) -> String {
    match n {
        1 => "once".to_string(),
        2 => "twice".to_string(),
        n => format!("{n} times"),
    }
}

/// Completed with an equal answer, failed with the same failure, parked
/// or held at the same step; other endings by their word.
fn same_end(a: &End, b: &End) -> bool {
    match (a, b) {
        (End::Completed(x), End::Completed(y)) => x == y,
        (End::Failed(x), End::Failed(y)) => x.failure == y.failure,
        (End::Parked { step: x, .. }, End::Parked { step: y, .. }) => x == y,
        (End::Held(x), End::Held(y)) => x.step == y.step,
        _ => a.word() == b.word(),
    }
}

/// Two sorted multisets: what one has more of than the other.
fn multiset_difference(clean: &[String], crashed: &[String]) -> Option<String> {
    if clean == crashed {
        return None;
    }
    let only = |a: &[String], b: &[String]| -> Vec<String> {
        let mut rest: Vec<&String> = b.iter().collect();
        let mut out = Vec::new();
        for x in a {
            match rest.iter().position(|y| *y == x) {
                Some(i) => {
                    rest.remove(i);
                }
                None => out.push(x.clone()),
            }
        }
        out
    };
    let extra = only(crashed, clean);
    let missing = only(clean, crashed);
    let mut parts = Vec::new();
    if !extra.is_empty() {
        parts.push(format!(
            "the crash run has {} more: {}",
            extra.len(),
            extra.join("; ")
        ));
    }
    if !missing.is_empty() {
        parts.push(format!(
            "it lacks {}: {}",
            missing.len(),
            missing.join("; ")
        ));
    }
    Some(parts.join(", and "))
}
