//! One attempt of a delivery (design section 9): the code runs against the
//! store and the provider, with every outside call from the first changing
//! call on made a step. A step is recorded before it is sent and again
//! when its answer comes; a later attempt replays answered steps without
//! sending them, checking the operation and the request's fingerprint, and
//! judges a step in doubt by its key and window. Writes and follow-ups are
//! staged and committed in one transaction when the action returns.

use std::collections::BTreeMap;

use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::code::{Emit, QueryMode, Write as WriteCode};
use jadpo_compiler::ir::{EntityId, FailureId, FailureKind, OpId, Program, Ty, TypeKind};
use jadpo_compiler::manifest::NewKeyOn;
use jadpo_compiler::span::Span;
use jadpo_plan::{ActionPlan, Point, StepPlan};

use crate::check::check_value;
use crate::eval::{fault, Divergence, Effects, Failed, Flow, Read, Stop, WriteValues, R};
use crate::provider::{Answer, Call, Provider};
use crate::record::{step_key, Doubt, Mode, RowState, Sealer, StepRow, StoredRecord, MAX_ANSWER};
use crate::store::{matches, Follow, Lease, Store, Write};
use crate::value::{decode, Instant, Value};

/// A crash to strike at a step's point (the crash matrix), once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CrashAt {
    pub step: u32,
    pub point: Point,
}

/// A planned action's steps by call site, each with the action calls
/// leading to it and its index in the plan's steps.
pub type StepsBySite = BTreeMap<Span, Vec<(Vec<Span>, usize)>>;

/// What stays the same over a delivery's attempts.
pub struct Setting<'a> {
    pub program: &'a Program,
    pub plan: &'a ActionPlan,
    pub build_id: &'a str,
    /// The plan's steps by call site, each with the action calls leading
    /// to it.
    pub steps: &'a StepsBySite,
    pub delivery: &'a str,
    pub config: &'a BTreeMap<Name, Value>,
    pub sealer: &'a Sealer,
    pub mode: Mode,
}

/// The facts an outside call is sent by.
#[derive(Clone, Debug)]
struct Facts {
    keyed: bool,
    window_ms: Option<u64>,
    margin_ms: Option<u64>,
    replays_failures: bool,
    new_key_on: Option<NewKeyOn>,
    attempts: u32,
}

/// What an attempt saw of each step, for the listing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seen {
    Replayed,
    Answered,
    InDoubt,
    /// It answered, but the answer is over [`MAX_ANSWER`]: the delivery
    /// faults and the answer is not recorded.
    TooLarge,
}

/// What an attempt saw of one step: how it went, the listing's detail, and
/// the answer (its canonical JSON, cut) for a test's crash-run listings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sight {
    pub seen: Seen,
    pub detail: String,
    pub answer: String,
}

impl Sight {
    fn of(seen: Seen, detail: impl Into<String>) -> Sight {
        Sight {
            seen,
            detail: detail.into(),
            answer: String::new(),
        }
    }

    fn answer(program: &Program, seen: Seen, op: OpId, answer: &R<Value>) -> Sight {
        let text = match answer {
            Ok(v) => String::from_utf8_lossy(&v.canonical()).into_owned(),
            Err(Flow::Fail(f)) => format!(
                "{} {}",
                program.failure(f.failure).qualified,
                String::from_utf8_lossy(&f.fields.canonical())
            ),
            Err(_) => String::new(),
        };
        Sight {
            seen,
            detail: detail_of(program, op, answer),
            answer: cut(&text, 120),
        }
    }
}

/// An entity's rows as this attempt has changed them: for each key, the
/// committed version it was based on (`None` when created here) and the
/// row (`None` when deleted here).
type Staged = BTreeMap<(EntityId, Vec<u8>), (Option<u64>, Option<Value>)>;

pub struct Attempt<'s, 'w> {
    pub s: &'s Setting<'s>,
    pub store: &'w mut dyn Store,
    pub provider: &'w mut dyn Provider,
    pub lease: Lease,
    /// When this attempt started (the test clock).
    pub started: Instant,
    /// `clock.now` for the code.
    pub clock: Instant,
    pub record: Option<StoredRecord>,
    pub crash: &'w mut Option<CrashAt>,
    /// Whether the crash was reached.
    pub crashed: bool,
    position: u32,
    changed: bool,
    staged: Staged,
    pub follow_ups: Vec<Follow>,
    /// What this attempt saw of each step, with the listing's detail.
    pub seen: BTreeMap<u32, Sight>,
}

impl<'s, 'w> Attempt<'s, 'w> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        s: &'s Setting<'s>,
        store: &'w mut dyn Store,
        provider: &'w mut dyn Provider,
        lease: Lease,
        started: Instant,
        crash: &'w mut Option<CrashAt>,
    ) -> Self {
        let record = store.record(s.delivery);
        let clock = match (&record, s.mode) {
            (Some(r), Mode::Steps) => r.started_at,
            _ => started,
        };
        Attempt {
            s,
            store,
            provider,
            lease,
            started,
            clock,
            record,
            crash,
            crashed: false,
            position: 0,
            changed: false,
            staged: Staged::new(),
            follow_ups: Vec::new(),
            seen: BTreeMap::new(),
        }
    }

    /// Before the code runs: a record kept in another mode, or under a
    /// build whose step shape its steps are not a prefix of, is held.
    pub fn check_record(&self) -> R<()> {
        let Some(rec) = &self.record else {
            return Ok(());
        };
        if rec.mode != self.s.mode {
            return held(Divergence {
                step: 0,
                operation: String::new(),
                why: format!(
                    "the record was kept as {} and this build keeps {}",
                    rec.mode.as_str(),
                    self.s.mode.as_str()
                ),
                fields: Vec::new(),
            });
        }
        if rec.build_id == self.s.build_id || rec.shape_digest == self.s.plan.step_shape_digest {
            return Ok(());
        }
        let ops: Vec<&str> = rec.steps.iter().map(|r| r.operation.as_str()).collect();
        let Some(at) = first_off_path(&self.s.plan.step_shape, &ops) else {
            return Ok(());
        };
        held(Divergence {
            step: at as u32 + 1,
            operation: ops.get(at).copied().unwrap_or_default().to_string(),
            why: format!(
                "this build changed the step shape: its paths do not make recorded step {} next",
                at + 1
            ),
            fields: Vec::new(),
        })
    }

    /// After the action returned or failed: every recorded step must have
    /// been replayed.
    pub fn check_all_replayed(&self) -> R<()> {
        let Some(rec) = &self.record else {
            return Ok(());
        };
        if self.s.mode != Mode::Steps {
            return Ok(());
        }
        match rec.steps.get(self.position as usize) {
            Some(row) => held(Divergence {
                step: row.position,
                operation: row.operation.clone(),
                why: format!(
                    "step {} was recorded, but the action ended after step {}",
                    row.position, self.position
                ),
                fields: Vec::new(),
            }),
            None => Ok(()),
        }
    }

    /// The staged writes as the commit applies them.
    pub fn writes(&self) -> Vec<Write> {
        let mut out = Vec::new();
        for ((entity, key), (base, row)) in &self.staged {
            let (entity, key) = (*entity, key.clone());
            match (base, row) {
                (None, Some(value)) => out.push(Write::Create {
                    entity,
                    key,
                    value: value.clone(),
                }),
                (Some(version), Some(value)) => out.push(Write::Update {
                    entity,
                    key,
                    version: *version,
                    value: value.clone(),
                }),
                (Some(version), None) => out.push(Write::Delete {
                    entity,
                    key,
                    version: *version,
                }),
                (None, None) => {}
            }
        }
        out
    }

    fn save(&mut self) -> R<()> {
        let Some(rec) = &self.record else {
            return Ok(());
        };
        self.store
            .put_record(self.s.delivery, self.lease, rec)
            .map_err(|_| Flow::Stop(Stop::LeaseLost))
    }

    /// Strikes the planned crash the first time its step reaches its point.
    fn crash_point(&mut self, step: u32, point: Point) -> R<()> {
        match *self.crash {
            Some(c) if c.step == step && c.point == point => {
                *self.crash = None;
                self.crashed = true;
                Err(Flow::Stop(Stop::Crash))
            }
            _ => Ok(()),
        }
    }

    fn facts(&self, op: OpId, site: Span, via: &[Span]) -> Facts {
        let planned: Option<&StepPlan> = self
            .s
            .steps
            .get(&site)
            .and_then(|calls| calls.iter().find(|(v, _)| v.as_slice() == via))
            .and_then(|(_, i)| self.s.plan.steps.get(*i));
        if let Some(p) = planned {
            return Facts {
                keyed: p.keyed,
                window_ms: p.window_ms,
                margin_ms: p.margin_ms,
                replays_failures: p.replays_failures,
                new_key_on: p.new_key_on,
                attempts: p.attempts.max(1),
            };
        }
        let o = self.s.program.op(op);
        let idem = self
            .s
            .program
            .packages
            .get(o.package)
            .and_then(|p| p.idempotency.as_ref());
        let keyed = o.keyed && idem.is_some();
        let window = o.window_ms;
        Facts {
            keyed,
            window_ms: window,
            margin_ms: window.map(jadpo_plan::margin_ms),
            replays_failures: keyed && idem.is_some_and(|i| i.replays_failures),
            new_key_on: idem.filter(|_| keyed).map(|i| i.new_key_on),
            attempts: o.attempts.max(1),
        }
    }

    fn transient(&self, answer: &Answer) -> Flow {
        let kind = match answer {
            Answer::RateLimited => FailureKind::RateLimited,
            _ => FailureKind::Unavailable,
        };
        Flow::Fail(Failed {
            failure: self.s.program.standard_failure(kind),
            fields: Value::Unit,
        })
    }

    /// A call that is no step: sent as it is, its attempts within this
    /// attempt.
    fn send_plain(&mut self, op: OpId, request: &Value, facts: &Facts) -> R<Value> {
        let operation = &self.s.program.op(op).qualified;
        let call = Call {
            op,
            operation,
            request,
            fingerprint: request.fingerprint(),
            key: None,
            repeat_safe: true,
            changes: self.s.program.op(op).changes,
        };
        let mut last = Answer::Unavailable;
        for _ in 0..facts.attempts {
            last = self.provider.send(&call);
            match last {
                Answer::Done(v) => return Ok(v),
                Answer::Failed { failure, fields } => {
                    return Err(Flow::Fail(Failed { failure, fields }))
                }
                Answer::InUse | Answer::Unavailable | Answer::RateLimited | Answer::ServerError => {
                }
                Answer::Lost => {
                    return Err(Flow::Stop(Stop::RetryLater(format!(
                        "the answer of `{operation}` was lost"
                    ))))
                }
                Answer::Mismatch => {
                    return fault(format!(
                        "`{operation}` answered \"different request\" without a key"
                    ))
                }
            }
        }
        Err(self.transient(&last))
    }

    /// A step: replayed from the record, judged in doubt, or sent new.
    fn step(&mut self, op: OpId, request: Value, facts: Facts) -> R<Value> {
        let pos = self.position;
        let program: &'s Program = self.s.program;
        let operation = program.op(op).qualified.as_str();
        let fingerprint = request.fingerprint();
        let existing = self
            .record
            .as_ref()
            .and_then(|r| r.steps.get(pos as usize - 1))
            .cloned();
        let generation = match existing {
            Some(row) => {
                if row.operation != operation {
                    return held(Divergence {
                        step: pos,
                        operation: row.operation.clone(),
                        why: format!(
                            "step {pos} was recorded as `{}`, and is now `{operation}`",
                            row.operation
                        ),
                        fields: Vec::new(),
                    });
                }
                if self.s.mode == Mode::Steps && row.fingerprint != Some(fingerprint) {
                    return held(Divergence {
                        step: pos,
                        operation: operation.to_string(),
                        why: format!("step {pos}'s request differs from the recorded one"),
                        fields: differing_fields(&row, &request),
                    });
                }
                if let RowState::Answered(sealed) = &row.state {
                    let answer = self.replay(op, pos, sealed);
                    let sight = Sight::answer(self.s.program, Seen::Replayed, op, &answer);
                    self.seen.insert(pos, sight);
                    return answer;
                }
                self.judge(op, &row, &facts)?
            }
            None => {
                self.begin_step(pos, operation, &request, fingerprint, &facts)?;
                0
            }
        };
        self.send_step(op, pos, &request, fingerprint, &facts, generation)
    }

    /// Records a new step as sent, before it is sent.
    fn begin_step(
        &mut self,
        pos: u32,
        operation: &str,
        request: &Value,
        fingerprint: [u8; 32],
        facts: &Facts,
    ) -> R<()> {
        let steps_mode = self.s.mode == Mode::Steps;
        let rec = self.record.get_or_insert_with(|| StoredRecord {
            build_id: self.s.build_id.to_string(),
            shape_digest: self.s.plan.step_shape_digest.clone(),
            mode: self.s.mode,
            started_at: self.clock,
            steps: Vec::new(),
        });
        rec.steps.truncate(pos as usize - 1);
        rec.steps.push(StepRow {
            position: pos,
            operation: operation.to_string(),
            fingerprint: steps_mode.then_some(fingerprint),
            field_fingerprints: if steps_mode {
                request.field_fingerprints()
            } else {
                Vec::new()
            },
            sent_at: self.started,
            key_generation: 0,
            runner_generation: self.lease.0,
            key: facts.keyed.then(|| step_key(self.s.delivery, pos, 0)),
            state: RowState::Sent {
                doubt: Doubt::Unknown,
            },
        });
        self.save()
    }

    /// A step in doubt, judged at this attempt's start: sent again (under
    /// which key generation), or parked.
    fn judge(&mut self, op: OpId, row: &StepRow, facts: &Facts) -> R<u32> {
        let o = self.s.program.op(op);
        let pos = row.position;
        let doubt = match row.state {
            RowState::Sent { doubt } => doubt,
            _ => Doubt::Unknown,
        };
        let resend = |generation: u32| Ok(generation);
        if !o.changes || (o.idempotent && !facts.keyed) {
            return resend(row.key_generation);
        }
        if !o.idempotent {
            return park(
                pos,
                format!(
                    "`{}` takes no key and may have acted: its outcome is unknown",
                    o.qualified
                ),
            );
        }
        if doubt == Doubt::ServerError && facts.replays_failures {
            if facts.new_key_on == Some(NewKeyOn::Answer) {
                return self.regenerate(pos, row.key_generation + 1);
            }
            let until = facts
                .window_ms
                .map(|w| row.sent_at.0 + i128::from(w) * 1_000_000);
            return park(
                pos,
                format!(
                    "the provider answered 5xx and repeats it for this key until {}",
                    until.map_or("its window ends".to_string(), |u| {
                        crate::value::instant_text(Instant(u))
                    })
                ),
            );
        }
        let window = facts.window_ms.unwrap_or(0) as i128 * 1_000_000;
        let margin = facts.margin_ms.unwrap_or(0) as i128 * 1_000_000;
        if self.started.0 < row.sent_at.0 + window - margin {
            return resend(row.key_generation);
        }
        park(
            pos,
            format!(
                "its key's window (less its margin) passed at {}",
                crate::value::instant_text(Instant(row.sent_at.0 + window - margin))
            ),
        )
    }

    /// Sends a step in doubt again under the next key generation
    /// (`new_key_on: answer`).
    fn regenerate(&mut self, pos: u32, generation: u32) -> R<u32> {
        if let Some(row) = self
            .record
            .as_mut()
            .and_then(|r| r.steps.get_mut(pos as usize - 1))
        {
            row.key_generation = generation;
            row.key = Some(step_key(self.s.delivery, pos, generation));
            row.sent_at = self.started;
            row.state = RowState::Sent {
                doubt: Doubt::Unknown,
            };
        }
        self.save()?;
        Ok(generation)
    }

    fn set_state(&mut self, pos: u32, state: RowState) -> R<()> {
        if let Some(row) = self
            .record
            .as_mut()
            .and_then(|r| r.steps.get_mut(pos as usize - 1))
        {
            row.state = state;
        }
        self.save()
    }

    /// The provider did not act: the step never happened, so it is no
    /// longer in the record.
    fn unsend(&mut self, pos: u32) -> R<()> {
        if let Some(rec) = self.record.as_mut() {
            rec.steps.truncate(pos as usize - 1);
        }
        self.save()
    }

    fn send_step(
        &mut self,
        op: OpId,
        pos: u32,
        request: &Value,
        fingerprint: [u8; 32],
        facts: &Facts,
        generation: u32,
    ) -> R<Value> {
        self.crash_point(pos, Point::BeforeSend)?;
        let program: &'s Program = self.s.program;
        let o = program.op(op);
        let operation = o.qualified.as_str();
        // The row was written with the key of this generation.
        let row_key = self
            .record
            .as_ref()
            .and_then(|r| r.steps.get(pos as usize - 1))
            .and_then(|row| row.key.clone())
            .filter(|_| facts.keyed);
        let key = match row_key {
            Some(k) => Some(k),
            None => facts
                .keyed
                .then(|| step_key(self.s.delivery, pos, generation)),
        };
        let repeat_safe = o.idempotent && !o.keyed;
        let mut last = Answer::Unavailable;
        for _ in 0..facts.attempts {
            let call = Call {
                op,
                operation,
                request,
                fingerprint,
                key: key.as_deref(),
                repeat_safe,
                changes: o.changes,
            };
            last = self.provider.send(&call);
            self.crash_point(pos, Point::AfterSendBeforeRecord)?;
            match &last {
                Answer::Done(_) | Answer::Failed { .. } => return self.answered(op, pos, last),
                Answer::ServerError if o.changes => {
                    self.set_state(
                        pos,
                        RowState::Sent {
                            doubt: Doubt::ServerError,
                        },
                    )?;
                    self.seen
                        .insert(pos, Sight::of(Seen::InDoubt, "answered 5xx"));
                    return Err(Flow::Stop(Stop::RetryLater(format!(
                        "step {pos} `{operation}` answered 5xx: in doubt"
                    ))));
                }
                Answer::Lost => {
                    self.seen.insert(pos, Sight::of(Seen::InDoubt, "no answer"));
                    return Err(Flow::Stop(Stop::RetryLater(format!(
                        "the answer of step {pos} `{operation}` was lost: in doubt"
                    ))));
                }
                Answer::Mismatch => {
                    return held(Divergence {
                        step: pos,
                        operation: operation.to_string(),
                        why: "the provider answered \"different request\" for the step's key"
                            .into(),
                        fields: Vec::new(),
                    })
                }
                Answer::InUse | Answer::Unavailable | Answer::RateLimited | Answer::ServerError => {
                }
            }
        }
        self.unsend(pos)?;
        if last == Answer::InUse {
            return Err(Flow::Stop(Stop::RetryLater(format!(
                "step {pos} `{operation}`: the provider's key is in use"
            ))));
        }
        Err(self.transient(&last))
    }

    /// An answer arrived: recorded (encrypted, in steps mode), then given
    /// to the code.
    fn answered(&mut self, op: OpId, pos: u32, answer: Answer) -> R<Value> {
        if self.s.mode == Mode::Steps {
            // The limit is on the answer's own canonical encoding, not on
            // the record's wrapper around it (design section 9).
            let size = answer_size(&answer);
            if size > MAX_ANSWER {
                let operation = &self.s.program.op(op).qualified;
                self.seen
                    .insert(pos, Sight::of(Seen::TooLarge, format!("{size} bytes")));
                return fault(format!(
                    "step {pos} `{operation}` answered {size} bytes; a recorded answer is at most {MAX_ANSWER}"
                ));
            }
            let plain = encode_answer(self.s.program, &answer);
            let sealed = self.s.sealer.seal(self.s.delivery, pos, &plain);
            self.set_state(pos, RowState::Answered(sealed))?;
        } else {
            self.set_state(pos, RowState::Dispatched)?;
        }
        let answer = match answer {
            Answer::Done(v) => Ok(v),
            Answer::Failed { failure, fields } => Err(Flow::Fail(Failed { failure, fields })),
            _ => fault("an answer that is not one"),
        };
        let sight = Sight::answer(self.s.program, Seen::Answered, op, &answer);
        self.seen.insert(pos, sight);
        self.crash_point(pos, Point::AfterRecord)?;
        answer
    }

    /// A recorded answer, decoded with the current package.
    fn replay(&mut self, op: OpId, pos: u32, sealed: &crate::record::Sealed) -> R<Value> {
        let Some(plain) = self.s.sealer.open(self.s.delivery, pos, sealed) else {
            return fault(format!(
                "step {pos}'s recorded answer cannot be opened with the application's steps key"
            ));
        };
        match decode_answer(self.s.program, op, &plain) {
            Ok(Answer::Done(v)) => Ok(v),
            Ok(Answer::Failed { failure, fields }) => Err(Flow::Fail(Failed { failure, fields })),
            Ok(_) => fault(format!("step {pos}'s recorded answer is not an answer")),
            Err(why) => fault(format!(
                "step {pos}'s recorded answer cannot be read with the current package: {why}"
            )),
        }
    }

    /// The rows of an entity as this attempt sees them: committed, with its
    /// own staged writes applied, in key order.
    fn visible(
        &self,
        entity: EntityId,
        filter: &[(Name, Value)],
    ) -> Vec<(Vec<u8>, Option<u64>, Value)> {
        let mut rows: BTreeMap<Vec<u8>, (Option<u64>, Value)> = self
            .store
            .select(entity, filter)
            .into_iter()
            .map(|r| (r.key, (Some(r.version), r.value)))
            .collect();
        for ((e, key), (base, row)) in &self.staged {
            if *e != entity {
                continue;
            }
            match row {
                Some(v) if matches(v, filter) => {
                    rows.insert(key.clone(), (*base, v.clone()));
                }
                _ => {
                    rows.remove(key);
                }
            }
        }
        rows.into_iter().map(|(k, (b, v))| (k, b, v)).collect()
    }

    /// The key of a row: its entity's first field.
    fn key_of(&self, entity: EntityId, row: &Value) -> Vec<u8> {
        let ty = self.s.program.entity(entity).ty;
        let first = match self.s.program.type_table().def(ty).map(|d| &d.kind) {
            Some(TypeKind::Record(fields)) => fields.first().map(|f| f.name),
            _ => None,
        };
        match (first, row.as_record()) {
            (Some(name), Some(r)) => r.get(name).canonical(),
            _ => row.canonical(),
        }
    }
}

fn held<T>(d: Divergence) -> R<T> {
    Err(Flow::Stop(Stop::Held(d)))
}

fn park<T>(step: u32, why: String) -> R<T> {
    Err(Flow::Stop(Stop::Park { step, why }))
}

/// The top-level request fields whose fingerprints differ from the row's.
fn differing_fields(row: &StepRow, request: &Value) -> Vec<String> {
    let now = request.field_fingerprints();
    let mut names: Vec<String> = Vec::new();
    for (name, fp) in &now {
        if !row
            .field_fingerprints
            .iter()
            .any(|(n, f)| n == name && f == fp)
        {
            names.push(name.as_str().to_string());
        }
    }
    for (name, _) in &row.field_fingerprints {
        if !now.iter().any(|(n, _)| n == name) {
            names.push(name.as_str().to_string());
        }
    }
    names.sort();
    names.dedup();
    names
}

/// Where `ops` stop being the operations of a path from a start of
/// `shape` (the index of the first that no path makes there); `None` when
/// they are a path's first steps.
fn first_off_path(shape: &jadpo_plan::Shape, ops: &[&str]) -> Option<usize> {
    let mut front: Vec<usize> = shape.starts.clone();
    for (i, op) in ops.iter().enumerate() {
        let here: Vec<usize> = front
            .iter()
            .copied()
            .filter(|n| {
                shape
                    .nodes
                    .get(*n)
                    .is_some_and(|node| node.operation == *op)
            })
            .collect();
        if here.is_empty() {
            return Some(i);
        }
        let mut next: Vec<usize> = shape
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

/// The bytes of an answer's canonical encoding: the value answered, or the
/// fields of the failure decided.
fn answer_size(answer: &Answer) -> usize {
    match answer {
        Answer::Done(v) => v.canonical().len(),
        Answer::Failed { fields, .. } => fields.canonical().len(),
        _ => 0,
    }
}

/// An answer's canonical plaintext: `{"answer": value}` or
/// `{"failure": code-name, "fields": ...}`.
fn encode_answer(program: &Program, answer: &Answer) -> Vec<u8> {
    let words = words();
    let value = match answer {
        Answer::Done(v) => Value::record(vec![(words.answer, v.clone())]),
        Answer::Failed { failure, fields } => Value::record(vec![
            (
                words.failure,
                Value::text(&program.failure(*failure).qualified),
            ),
            (words.fields, fields.clone()),
        ]),
        _ => Value::None,
    };
    value.canonical()
}

struct Words {
    answer: Name,
    failure: Name,
    fields: Name,
    id: Name,
}

fn words() -> &'static Words {
    static WORDS: std::sync::OnceLock<Words> = std::sync::OnceLock::new();
    WORDS.get_or_init(|| Words {
        answer: Name::new("answer"),
        failure: Name::new("failure"),
        fields: Name::new("fields"),
        id: Name::new("id"),
    })
}

/// What a listing shows of an answer: its `id`, else its first field
/// (`deleted: true`), else its type's name; `done` for an operation that
/// answers nothing; or the failure it gave.
fn detail_of(program: &Program, op: OpId, answer: &R<Value>) -> String {
    match answer {
        Ok(Value::Record(r)) => {
            if let Value::Text(id) = r.get(words().id) {
                return id.to_string();
            }
            let types = program.type_table();
            let ty = &program.op(op).answer;
            // The first declared field the answer holds.
            let first = types.record(ty).and_then(|(_, defs)| {
                defs.iter()
                    .map(|d| (d.name, r.get(d.name)))
                    .find(|(_, v)| *v != Value::None)
            });
            match first {
                Some((field, v)) if is_scalar(&v) => format!(
                    "{field}: {}",
                    cut(&String::from_utf8_lossy(&v.canonical()), 32)
                ),
                _ => types.name(ty, &program.packages),
            }
        }
        Ok(Value::Unit) => "done".into(),
        Ok(v) => cut(&String::from_utf8_lossy(&v.canonical()), 32),
        Err(Flow::Fail(f)) => format!("failed {}", program.failure(f.failure).qualified),
        Err(_) => String::new(),
    }
}

fn is_scalar(v: &Value) -> bool {
    !matches!(v, Value::Record(_) | Value::List(_))
}

/// At most `n` characters of a text, with `…` when it is cut.
fn cut(text: &str, n: usize) -> String {
    match text.char_indices().nth(n) {
        Some((cut, _)) => format!("{}…", text.get(..cut).unwrap_or(text)),
        None => text.to_string(),
    }
}

fn decode_answer(program: &Program, op: OpId, plain: &[u8]) -> Result<Answer, String> {
    let json: serde_json::Value = serde_json::from_slice(plain).map_err(|e| e.to_string())?;
    if let Some(v) = json.get("answer") {
        let ty = &program.op(op).answer;
        return decode(program.type_table(), ty, v)
            .map(Answer::Done)
            .map_err(|e| e.0);
    }
    let name = json
        .get("failure")
        .and_then(|f| f.as_str())
        .ok_or("neither an answer nor a failure")?;
    let failure = program
        .failures
        .iter()
        .position(|f| f.qualified == name)
        .map(|i| FailureId(i as u32))
        .ok_or(format!("the failure `{name}` no longer exists"))?;
    let fields = match json.get("fields") {
        Some(f) if !f.is_null() => {
            let defs = program.failure(failure).fields.clone();
            let obj = f
                .as_object()
                .ok_or("the failure's fields are not a record")?;
            let mut out = Vec::new();
            for d in &defs {
                if let Some(v) = obj.get(d.name.as_str()) {
                    let value = decode(program.type_table(), &d.ty, v).map_err(|e| e.0)?;
                    out.push((d.name, value));
                }
            }
            Value::record(out)
        }
        _ => Value::Unit,
    };
    Ok(Answer::Failed { failure, fields })
}

impl Effects for Attempt<'_, '_> {
    fn call_op(&mut self, op: OpId, request: Value, site: Span, via: &[Span]) -> R<Value> {
        let changes = self.s.program.op(op).changes;
        let facts = self.facts(op, site, via);
        if !(self.changed || changes) {
            return self.send_plain(op, &request, &facts);
        }
        self.changed = true;
        self.position += 1;
        if self.s.mode == Mode::Dispatch && !changes {
            // A single call's record keeps only its changing call.
            self.position -= 1;
            return self.send_plain(op, &request, &facts);
        }
        self.step(op, request, facts)
    }

    fn write(&mut self, program: &Program, w: WriteValues<'_>) -> R<Value> {
        match w {
            WriteValues::Create { write, row } => {
                let WriteCode::Create {
                    entity, conflict, ..
                } = write
                else {
                    return fault("a create that is not one");
                };
                let key = self.key_of(*entity, &row);
                let exists = self.visible(*entity, &[]).iter().any(|(k, _, _)| *k == key);
                if exists {
                    return match conflict {
                        Some(f) => Err(Flow::Fail(Failed {
                            failure: *f,
                            fields: Value::Unit,
                        })),
                        None => fault(format!(
                            "`create {}`: a row with its key exists, and the write names no `conflict:`",
                            program.entity(*entity).qualified
                        )),
                    };
                }
                let base = self
                    .staged
                    .get(&(*entity, key.clone()))
                    .and_then(|(b, _)| *b);
                self.staged
                    .insert((*entity, key), (base, Some(row.clone())));
                Ok(row)
            }
            WriteValues::Update { write, filter, set } => {
                let WriteCode::Update {
                    entity, missing, ..
                } = write
                else {
                    return fault("an update that is not one");
                };
                let rows = self.visible(*entity, &filter);
                if rows.is_empty() {
                    return missing_row(*missing);
                }
                let defs = entity_fields(program, *entity);
                let mut first = None;
                for (key, base, row) in rows {
                    let Some(r) = row.as_record() else { continue };
                    let mut fields: Vec<(Name, Value)> = r.fields().to_vec();
                    for (name, v) in &set {
                        if let Some(def) = defs.iter().find(|d| d.0 == *name) {
                            if let Err(p) = check_value(program.type_table(), &def.1, v) {
                                return fault(format!(
                                    "`update`: `{name}` cannot hold this value: {p}"
                                ));
                            }
                        }
                        fields.retain(|(n, _)| n != name);
                        fields.push((*name, v.clone()));
                    }
                    let updated = Value::record(fields);
                    first.get_or_insert(updated.clone());
                    let base = self
                        .staged
                        .get(&(*entity, key.clone()))
                        .map_or(base, |(b, _)| *b);
                    self.staged.insert((*entity, key), (base, Some(updated)));
                }
                Ok(first.unwrap_or(Value::Unit))
            }
            WriteValues::Delete { write, filter } => {
                let WriteCode::Delete {
                    entity, missing, ..
                } = write
                else {
                    return fault("a delete that is not one");
                };
                let rows = self.visible(*entity, &filter);
                if rows.is_empty() {
                    return missing_row(*missing);
                }
                for (key, base, _) in rows {
                    let base = self
                        .staged
                        .get(&(*entity, key.clone()))
                        .map_or(base, |(b, _)| *b);
                    self.staged.insert((*entity, key), (base, None));
                }
                Ok(Value::Unit)
            }
        }
    }

    fn read(&mut self, _program: &Program, read: Read<'_>) -> R<Value> {
        let rows = self.visible(read.query.entity, &read.filter);
        match read.query.mode {
            QueryMode::Optional => Ok(rows.into_iter().next().map_or(Value::None, |(_, _, v)| v)),
            QueryMode::Required => match rows.into_iter().next() {
                Some((_, _, v)) => Ok(v),
                None => missing_row(read.query.missing),
            },
            QueryMode::Many => {
                let limit = read.query.limit.unwrap_or(1000) as usize;
                let list: Vec<Value> = rows.into_iter().take(limit).map(|(_, _, v)| v).collect();
                Ok(Value::List(list.into()))
            }
        }
    }

    fn emit(&mut self, program: &Program, emit: &Emit, payload: Value, options: Value) -> R<()> {
        let follow = crate::follow::staged(program, emit, payload, &options, self.clock)?;
        self.follow_ups.push(follow);
        Ok(())
    }

    fn config(&self, name: Name) -> R<Value> {
        match self.s.config.get(&name) {
            Some(v) => Ok(v.clone()),
            None => fault(format!("no value is given for `config.{name}`")),
        }
    }

    fn now(&self) -> Instant {
        self.clock
    }
}

fn missing_row(missing: Option<FailureId>) -> R<Value> {
    match missing {
        Some(f) => Err(Flow::Fail(Failed {
            failure: f,
            fields: Value::Unit,
        })),
        None => Ok(Value::Unit),
    }
}

/// An entity's declared fields and their types.
fn entity_fields(program: &Program, entity: EntityId) -> Vec<(Name, Ty)> {
    let ty = program.entity(entity).ty;
    match program.type_table().def(ty).map(|d| &d.kind) {
        Some(TypeKind::Record(fields)) => fields.iter().map(|f| (f.name, f.ty.clone())).collect(),
        _ => Vec::new(),
    }
}

/// `hex` of the first 4 bytes of a key, for listings.
pub fn short(key: &str) -> String {
    key.chars().take(8).collect::<String>() + "…"
}
