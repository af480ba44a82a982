//! Steps: each outside call from the first changing call on is recorded
//! before it is sent and again when its answer comes; a later attempt
//! replays answered steps without sending them, checking the operation and
//! the request's fingerprint, and judges a step in doubt by its key and
//! window (design `testing.md` section 9). Every record write is fenced by
//! the attempt's lease.

use jadpo_compiler::ir::{OpId, Program};
use jadpo_compiler::manifest::NewKeyOn;
use jadpo_plan::Point;

use super::answers::{to_flow, Recorded, Seen, Sight};
use super::{fenced, Attempt, Facts};
use crate::eval::{fault, Divergence, Flow, Stop, R};
use crate::provider::{Answer, Call};
use crate::record::{
    step_key, Doubt, Mode, RowState, Sealed, StepRow, StoredRecord, FORMAT, MAX_ANSWER,
};
use crate::value::{instant_text, Instant, Value};

pub(super) fn held<T>(d: Divergence) -> R<T> {
    Err(Flow::Stop(Stop::Held(d)))
}

fn park<T>(step: u32, why: String) -> R<T> {
    Err(Flow::Stop(Stop::Park { step, why }))
}

impl<'s> Attempt<'s, '_> {
    /// A step: replayed from the record, judged in doubt, or sent new.
    pub(super) fn step(&mut self, op: OpId, request: Value, facts: Facts) -> R<Value> {
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
                    self.provider.replayed(pos, operation, &sight.detail);
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
            format: FORMAT,
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
            runner_generation: self.lease.generation,
            key: facts.keyed.then(|| step_key(self.s.delivery, pos, 0)),
            state: RowState::Sent {
                doubt: Doubt::Unknown,
            },
        });
        self.save_step(pos)
    }

    /// Writes step `pos` as the record now holds it.
    fn save_step(&mut self, pos: u32) -> R<()> {
        let Some(rec) = &self.record else {
            return Ok(());
        };
        let Some(row) = rec.steps.get(pos as usize - 1) else {
            return Ok(());
        };
        self.store
            .put_step(self.s.delivery, &self.lease, rec, row)
            .map_err(fenced)
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
        if !o.changes || (o.idempotent && !facts.keyed) {
            return Ok(row.key_generation);
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
                    until.map_or("its window ends".to_string(), |u| instant_text(Instant(u)))
                ),
            );
        }
        let window = facts.window_ms.unwrap_or(0) as i128 * 1_000_000;
        let margin = facts.margin_ms.unwrap_or(0) as i128 * 1_000_000;
        if self.started.0 < row.sent_at.0 + window - margin {
            return Ok(row.key_generation);
        }
        park(
            pos,
            format!(
                "its key's window (less its margin) passed at {}",
                instant_text(Instant(row.sent_at.0 + window - margin))
            ),
        )
    }

    /// Sends a step in doubt again under the next key generation
    /// (`new_key_on: answer`).
    fn regenerate(&mut self, pos: u32, generation: u32) -> R<u32> {
        let delivery = self.s.delivery;
        let started = self.started;
        if let Some(row) = self.row_mut(pos) {
            row.key_generation = generation;
            row.key = Some(step_key(delivery, pos, generation));
            row.sent_at = started;
            row.state = RowState::Sent {
                doubt: Doubt::Unknown,
            };
        }
        self.save_step(pos)?;
        Ok(generation)
    }

    fn row_mut(&mut self, pos: u32) -> Option<&mut StepRow> {
        self.record
            .as_mut()
            .and_then(|r| r.steps.get_mut(pos as usize - 1))
    }

    fn set_state(&mut self, pos: u32, state: RowState) -> R<()> {
        if let Some(row) = self.row_mut(pos) {
            row.state = state;
        }
        self.save_step(pos)
    }

    /// The provider did not act: the step never happened, so it is no
    /// longer in the record.
    fn unsend(&mut self, pos: u32) -> R<()> {
        if let Some(rec) = self.record.as_mut() {
            rec.steps.truncate(pos as usize - 1);
        }
        self.store
            .truncate_steps(self.s.delivery, &self.lease, pos)
            .map_err(fenced)
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
                step: Some(pos),
            };
            last = self.provider.send(&call);
            self.crash_point(pos, Point::AfterSendBeforeRecord)?;
            match &last {
                Answer::Done(_) | Answer::Failed { .. } | Answer::Misconfigured(_) => {
                    return self.answered(op, pos, last)
                }
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
            let wire = self.provider.wire();
            let Some(recorded) = Recorded::of(self.s.program, op, &answer, wire) else {
                return fault("an answer that is not one");
            };
            // The limit is on the recorded body itself (design section 9).
            let size = recorded.body.len();
            if size > MAX_ANSWER {
                let operation = &self.s.program.op(op).qualified;
                self.seen
                    .insert(pos, Sight::of(Seen::TooLarge, format!("{size} bytes")));
                return fault(format!(
                    "step {pos} `{operation}` answered {size} bytes; a recorded answer is at most {MAX_ANSWER}"
                ));
            }
            let sealed = self
                .s
                .sealer
                .seal(self.s.delivery, pos, &recorded.to_bytes());
            self.set_state(pos, RowState::Answered(sealed))?;
        } else {
            self.set_state(pos, RowState::Dispatched)?;
        }
        let answer = to_flow(answer);
        let sight = Sight::answer(self.s.program, Seen::Answered, op, &answer);
        self.seen.insert(pos, sight);
        self.crash_point(pos, Point::AfterRecord)?;
        answer
    }

    /// A recorded answer, decoded with the current package.
    fn replay(&mut self, op: OpId, pos: u32, sealed: &Sealed) -> R<Value> {
        let Some(plain) = self.s.sealer.open(self.s.delivery, pos, sealed) else {
            return fault(format!(
                "step {pos}'s recorded answer cannot be opened with the application's steps key"
            ));
        };
        let Some(recorded) = Recorded::from_bytes(&plain) else {
            return fault(format!("step {pos}'s recorded answer is cut short"));
        };
        match recorded.decode(self.s.program, op) {
            Ok(answer) => to_flow(answer),
            Err(why) => fault(format!(
                "step {pos}'s recorded answer cannot be read with the current package: {why}"
            )),
        }
    }
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
