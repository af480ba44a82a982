//! Does a crash run end as the clean run did? Compared (design section
//! 10): each delivery's outcome (reported first: it names the cause), the
//! verdict, each entity's committed rows,
//! the outbox and each fake's effects, the last three as multisets.
//! Records, keys, attempt counts and times are not compared.

use jadpo_compiler::ir::Program;

use super::run::{describe_end, Ran};
use super::{Failure, FailureKind};
use crate::delivery::End;
use crate::CrashAt;

/// The first way `crashed` differs from `clean`, as the test's failure.
pub fn first_difference(
    program: &Program,
    clean: &Ran,
    crashed: &Ran,
    delivery: usize,
    crash: CrashAt,
) -> Option<Failure> {
    let difference = difference(program, clean, crashed)?;
    let of = |r: &Ran| {
        r.deliveries
            .get(delivery)
            .map(|d| d.steps.clone())
            .unwrap_or_default()
    };
    let target = clean.deliveries.get(delivery)?;
    Some(Failure {
        kind: FailureKind::CrashRun,
        message: format!(
            "a crash at step {} {} of delivery `{}` changes what the test does: {difference}",
            crash.step,
            crash.point.as_str(),
            target.id
        ),
        span: target.span,
        steps: of(clean),
        crash_steps: of(crashed),
    })
}

fn difference(program: &Program, clean: &Ran, crashed: &Ran) -> Option<String> {
    for (a, b) in clean.deliveries.iter().zip(&crashed.deliveries) {
        if !same_end(&a.end, &b.end) {
            return Some(format!(
                "delivery `{}` {} in the clean run, but {} after the crash",
                a.id,
                describe_end(program, &a.end),
                describe_end(program, &b.end)
            ));
        }
    }
    if let Some(f) = crashed.failures.first() {
        return Some(format!(
            "the crash run fails where the clean run passes ({})",
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
    if let Some(d) = multiset_difference(&clean.effects, &crashed.effects) {
        return Some(format!("the providers' effects differ: {d}"));
    }
    None
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
