//! One attempt of a claimed delivery, and how it leaves the delivery
//! (design section 17, "After an attempt"): committed is `completed` (the
//! commit said so); again is `retryable` at the backoff's time, or
//! `retry_later` once `max_attempts` attempts were counted; an ending is
//! its state with an operator item; a lost lease leaves everything to the
//! runner that took it.

use std::time::Instant as Clock;

use jadpo_runtime::delivery::{AttemptOutcome, Attempted, Limits, ListedStep};
use jadpo_runtime::store::{DeliveryRow, DeliveryState, Lease, Next, StepSummary, StoredResponse};
use jadpo_runtime::suite::describe_end;
use jadpo_runtime::value::{Instant, Value};
use jadpo_runtime::{CrashAt, Delivery, End};

use super::listing::Shown;
use super::{backoff, Engine};
use crate::store::clock::now;

/// A route's answers, stored with its claim: the committed run's, and a
/// failed run's (a run an operator must see stores none: its claim stays
/// open).
pub trait Answers {
    fn committed(&mut self, value: &Value, events: &[String]) -> StoredResponse;
    fn ended(&mut self, end: &End) -> Option<StoredResponse>;
    /// The listing's words for the client's key (a hash prefix).
    fn key_hint(&self) -> Option<String> {
        None
    }
    /// The status answered, once known.
    fn status(&self) -> Option<u16> {
        None
    }
}

/// What an attempt came to, for its caller (a route answers from it).
pub struct Ran {
    pub outcome: AttemptOutcome,
    /// The delivery's state after it; `None` when the lease was lost.
    pub state: Option<DeliveryState>,
    /// Why it did not commit.
    pub why: String,
    /// When it runs again, when it was left retryable.
    pub retry_at: Option<Instant>,
}

/// The entry's words for a delivery: `POST /subscriptions → subscribe`.
pub fn header(engine: &Engine, row: &DeliveryRow) -> String {
    use jadpo_runtime::store::Source;
    match &row.source {
        Source::Route { route, .. } => format!("{route} → {}", row.action),
        Source::Event { .. } => format!(
            "subscriber {} → {}",
            row.subscriber.as_deref().unwrap_or("?"),
            row.action
        ),
        Source::Schedule { name, .. } => format!("schedule {name} → {}", row.action),
        Source::Direct => {
            let _ = engine;
            format!("run {}", row.action)
        }
    }
}

/// Runs one attempt of `row` under `lease`. `answers` makes a route's
/// answers; `deadline` bounds a route's attempt; `crash` is the crash
/// hook's point (`JADPO_CRASH_AT`).
pub fn attempt<'a>(
    engine: &Engine,
    row: &DeliveryRow,
    lease: Lease,
    mut answers: Option<&mut (dyn Answers + 'a)>,
    deadline: Option<std::time::Instant>,
    mut crash: Option<CrashAt>,
) -> Ran {
    let build = engine.build();
    let clock = Clock::now();
    let start = now();
    let (action, args) = match build.delivery_args(row) {
        Ok(found) => found,
        Err(why) => {
            // A build that no longer has the delivery's entry holds it for
            // an operator, as a changed step shape does.
            let state = DeliveryState::Diverged;
            let ran = end_with(engine, row, lease, state, why, Vec::new(), None);
            show(engine, row, &ran, clock, None, None);
            return ran;
        }
    };
    let d = Delivery {
        id: row.id.clone(),
        action,
        args,
        config: engine.config.clone(),
        start,
        attempts: row.max_attempts,
        retry_after_ms: 0,
        limits: Limits {
            bytes: Limits::default().bytes,
            deadline,
        },
    };
    let _beating = engine.heartbeats.keep(&row.id, lease);
    let client_key = answers.as_deref().and_then(|a| a.key_hint());
    engine
        .listing
        .begin(&header(engine, row), &row.id, client_key.as_deref());
    let mut inner = engine.providers.provider(build.program);
    let mut provider = Timed {
        inner: &mut *inner,
        metrics: &engine.metrics,
        listing: &*engine.listing,
        program: build.program,
    };
    let outcome = {
        let mut respond = answers
            .as_deref_mut()
            .map(|a| move |v: &Value, ids: &[String]| a.committed(v, ids));
        build.runtime.attempt_with(
            &d,
            &*engine.store,
            &mut provider,
            lease,
            start,
            &mut crash,
            d.limits.bytes,
            respond
                .as_mut()
                .map(|r| r as &mut jadpo_runtime::delivery::Respond<'_>),
        )
    };
    use jadpo_runtime::provider::Provider as _;
    let wait_ms = provider.retry_after_ms();
    drop(inner);
    if let Attempted::Again { crashed: true, .. } = outcome.attempted {
        // The crash hook's point: the process dies where a crash would
        // stop it, before anything more is written.
        crate::crash::die();
    }
    let ran = settle(engine, row, lease, outcome, answers.as_deref_mut(), wait_ms);
    let staged = ran
        .outcome
        .applied
        .as_ref()
        .is_some_and(|a| !a.events.is_empty());
    if staged {
        // Its commit inserted subscribers' deliveries: this process's
        // dispatcher looks at once (a route's attempt runs outside it;
        // other processes are woken by the store's notices). Only then: a
        // claim is a write, and one per request halved a route's rate.
        engine.notify();
    }
    let (key, status) = answers
        .as_deref()
        .map_or((None, None), |a| (a.key_hint(), a.status()));
    show(engine, row, &ran, clock, key, status);
    count(engine, row, &ran);
    ran
}

/// Leaves the delivery as the attempt ended it.
fn settle<'a>(
    engine: &Engine,
    row: &DeliveryRow,
    lease: Lease,
    outcome: AttemptOutcome,
    answers: Option<&mut (dyn Answers + 'a)>,
    wait_ms: Option<u64>,
) -> Ran {
    let program = engine.build().program;
    let steps: Vec<StepSummary> = outcome.steps.iter().map(ListedStep::summary).collect();
    match &outcome.attempted {
        Attempted::Committed(_) => Ran {
            outcome,
            state: Some(DeliveryState::Completed),
            why: String::new(),
            retry_at: None,
        },
        Attempted::Again {
            why,
            crashed,
            not_after,
        } => {
            let counted = !crashed && !engine.stopping();
            if counted && row.attempt >= row.max_attempts {
                let plural = if row.attempt == 1 { "" } else { "s" };
                let why = format!("{why} (after {} attempt{plural})", row.attempt);
                let state = DeliveryState::RetryLater;
                let mut ran = end_with(engine, row, lease, state, why, steps, None);
                ran.outcome = outcome;
                return ran;
            }
            let jitter = jitter(&row.id, row.attempt);
            let at = if counted {
                // Never before a provider's Retry-After.
                let not_before = wait_ms
                    .map(|ms| jadpo_runtime::value::Instant(now().0 + i128::from(ms) * 1_000_000));
                backoff::next_start(
                    now(),
                    row.attempt,
                    jitter,
                    engine.settings.retry_cap_ms,
                    not_before,
                    *not_after,
                )
            } else {
                // A shutdown or a crash hook: the next runner starts at once.
                now()
            };
            let next = Next::Retry {
                run_at: at,
                why: why.clone(),
                counted,
                steps,
            };
            let released = engine.store.release(&row.id, &lease, &next, now());
            Ran {
                state: released.is_ok().then_some(DeliveryState::Retryable),
                why: why.clone(),
                retry_at: Some(at),
                outcome,
            }
        }
        Attempted::Ended(End::LeaseLost) => Ran {
            outcome,
            state: None,
            why: "another runner took the delivery's lease".into(),
            retry_at: None,
        },
        Attempted::Ended(end) => {
            let state = end.state().unwrap_or(DeliveryState::Fault);
            let why = describe_end(program, end);
            let response = answers.and_then(|a| a.ended(end));
            let mut ran = end_with(engine, row, lease, state, why, steps, response);
            ran.outcome = outcome;
            ran
        }
    }
}

/// Ends the delivery in `state` with an operator item.
fn end_with(
    engine: &Engine,
    row: &DeliveryRow,
    lease: Lease,
    state: DeliveryState,
    why: String,
    steps: Vec<StepSummary>,
    response: Option<StoredResponse>,
) -> Ran {
    let next = Next::End {
        state,
        why: why.clone(),
        steps,
        response,
    };
    let released = engine.store.release(&row.id, &lease, &next, now());
    Ran {
        outcome: AttemptOutcome {
            attempted: Attempted::Ended(End::Faulted(why.clone())),
            applied: None,
            steps: Vec::new(),
            bytes_left: 0,
        },
        state: released.is_ok().then_some(state),
        why,
        retry_at: None,
    }
}

/// The same spread for the same delivery and attempt.
fn jitter(delivery: &str, attempt: u32) -> f64 {
    let mut h = blake3::Hasher::new();
    h.update(delivery.as_bytes());
    h.update(&attempt.to_le_bytes());
    let b = h.finalize();
    let first = b.as_bytes().first().copied().unwrap_or(0);
    f64::from(first) / 256.0
}

fn count(engine: &Engine, row: &DeliveryRow, ran: &Ran) {
    match ran.state {
        None => engine.metrics.lease_lost(),
        Some(DeliveryState::Retryable) => {}
        Some(state) => {
            let entry = header(engine, row);
            let entry = entry.split(" → ").next().unwrap_or("");
            engine
                .metrics
                .delivery_ended(&row.action, entry, state.as_str());
        }
    }
}

fn show(
    engine: &Engine,
    row: &DeliveryRow,
    ran: &Ran,
    clock: Clock,
    key: Option<String>,
    status: Option<u16>,
) {
    let end = match (&ran.outcome.attempted, ran.state) {
        (Attempted::Committed(v), _) => committed_words(v, &ran.outcome),
        (_, Some(DeliveryState::Retryable)) => match ran.retry_at {
            Some(at) => format!(
                "retry at {}: {}",
                jadpo_runtime::value::instant_text(at)
                    .get(11..19)
                    .unwrap_or(""),
                ran.why
            ),
            None => format!("retry: {}", ran.why),
        },
        (_, Some(state)) => format!("{}: {}", state.as_str(), ran.why),
        (_, None) => ran.why.clone(),
    };
    engine.listing.shown(&Shown {
        header: header(engine, row),
        delivery: row.id.clone(),
        key,
        steps: ran.outcome.steps.clone(),
        end,
        status,
        ms: clock.elapsed().as_millis() as u64,
        ended: ran.state.is_some_and(|s| s != DeliveryState::Retryable),
    });
}

/// `committed: 1 write (Subscription), 1 event (SubscriptionStarted)`
fn committed_words(_v: &Value, outcome: &AttemptOutcome) -> String {
    let Some(applied) = &outcome.applied else {
        return "committed".into();
    };
    let counted = |names: &[String], one: &str, many: &str| {
        let mut distinct: Vec<&str> = names.iter().map(String::as_str).collect();
        distinct.sort_unstable();
        distinct.dedup();
        let word = if names.len() == 1 { one } else { many };
        format!("{} {word} ({})", names.len(), distinct.join(", "))
    };
    let mut parts = Vec::new();
    if !applied.writes.is_empty() {
        parts.push(counted(&applied.writes, "write", "writes"));
    }
    if !applied.events.is_empty() {
        parts.push(counted(&applied.events, "event", "events"));
    }
    if parts.is_empty() {
        "committed".into()
    } else {
        format!("committed: {}", parts.join(", "))
    }
}

/// The provider of an attempt, each send timed for
/// `jadpo_step_duration_seconds`.
struct Timed<'p> {
    inner: &'p mut dyn jadpo_runtime::provider::Provider,
    metrics: &'p crate::metrics::Metrics,
    listing: &'p dyn super::listing::Listen,
    program: &'static jadpo_compiler::ir::Program,
}

impl jadpo_runtime::provider::Provider for Timed<'_> {
    fn send(
        &mut self,
        call: &jadpo_runtime::provider::Call<'_>,
    ) -> jadpo_runtime::provider::Answer {
        use jadpo_runtime::provider::Answer;
        let live = call.step.filter(|_| self.listing.live());
        if let Some(position) = live {
            self.listing.step(&super::listing::LiveStep {
                position,
                operation: call.operation,
                state: "sent",
                detail: String::new(),
                key: call.key,
                ms: None,
            });
        }
        let started = std::time::Instant::now();
        let answer = self.inner.send(call);
        let result = match &answer {
            Answer::Done(_) => "answered",
            Answer::Failed { .. } => "failed",
            Answer::Unavailable => "unavailable",
            Answer::RateLimited => "rate_limited",
            Answer::InUse => "in_use",
            Answer::ServerError => "server_error",
            Answer::Lost => "lost",
            Answer::Mismatch => "mismatch",
            Answer::Misconfigured(_) => "misconfigured",
        };
        self.metrics
            .step_sent(call.operation, result, started.elapsed().as_secs_f64());
        if let Some(position) = live {
            let detail = match &answer {
                Answer::Done(v) => jadpo_runtime::attempt::answer_detail(self.program, call.op, v),
                Answer::Failed { failure, .. } => self.program.failure(*failure).qualified.clone(),
                _ => String::new(),
            };
            let state = match result {
                "lost" => "no answer",
                "server_error" => "answered 5xx",
                "rate_limited" => "rate limited",
                "in_use" => "key in use",
                other => other,
            };
            self.listing.step(&super::listing::LiveStep {
                position,
                operation: call.operation,
                state,
                detail,
                key: None,
                ms: Some(started.elapsed().as_millis() as u64),
            });
        }
        answer
    }

    fn replayed(&mut self, step: u32, operation: &str, detail: &str) {
        if !self.listing.live() {
            return;
        }
        self.listing.step(&super::listing::LiveStep {
            position: step,
            operation,
            state: "replayed",
            detail: detail.to_string(),
            key: None,
            ms: None,
        });
    }

    fn wire(&self) -> Option<jadpo_runtime::provider::Wire> {
        self.inner.wire()
    }

    fn retry_after_ms(&self) -> Option<u64> {
        self.inner.retry_after_ms()
    }
}
