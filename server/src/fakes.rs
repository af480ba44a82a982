//! The providers of `jadpo dev`: a fixture's fakes, one for the whole
//! server, so their keys and their effects outlive each attempt as a
//! provider's would. With a journal (`.jadpo/fakes.jsonl` beside the dev
//! store) they outlive the process too: every send that acted or kept an
//! answer for a key is appended (and synced) before the answer returns,
//! and a restarted server keeps the same keys. The journal is also the
//! effect log the real crash matrix reads: an (operation, key) that acted
//! twice is a repeated charge.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::Mutex;

use jadpo_compiler::ir::{OpId, Program};
use jadpo_runtime::fake::{Effect, Fake, Script};
use jadpo_runtime::provider::{Answer, Call, Provider};
use jadpo_runtime::value::{decode, hex};
use serde_json::json;

use crate::engine::Providers;

/// The most of a journal read back at start.
const MAX_JOURNAL: u64 = 64 * 1024 * 1024;

pub struct SharedFake {
    fake: Mutex<Fake>,
    journal: Option<Mutex<File>>,
}

impl SharedFake {
    pub fn new(scripts: BTreeMap<OpId, Script>) -> SharedFake {
        SharedFake {
            fake: Mutex::new(Fake::new(scripts)),
            journal: None,
        }
    }

    /// A fake that keeps its keys in `path`, restoring those kept there.
    pub fn journaled(
        scripts: BTreeMap<OpId, Script>,
        program: &Program,
        path: &Path,
    ) -> Result<SharedFake, String> {
        let mut fake = Fake::new(scripts);
        if let Ok(meta) = std::fs::metadata(path) {
            if !meta.is_file() || meta.len() > MAX_JOURNAL {
                return Err(format!(
                    "{} is not a fake journal (a regular file of at most 64 MiB)",
                    path.display()
                ));
            }
            restore(&mut fake, program, path)?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        Ok(SharedFake {
            fake: Mutex::new(fake),
            journal: Some(Mutex::new(file)),
        })
    }

    /// The effects so far in this process.
    pub fn effects(&self) -> Vec<Effect> {
        self.fake
            .lock()
            .map(|f| f.effects().to_vec())
            .unwrap_or_default()
    }
}

fn restore(fake: &mut Fake, program: &Program, path: &Path) -> Result<(), String> {
    let file = File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    for line in std::io::BufReader::new(file).lines() {
        let Ok(line) = line else { break };
        // A line cut short by a crash is the last one: it is skipped.
        let Ok(j) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        let (Some(key), Some(fp), Some(op)) = (
            j["key"].as_str(),
            j["fingerprint"].as_str().and_then(unhex),
            j["operation"].as_str(),
        ) else {
            continue;
        };
        let Some(answer) = answer_of(program, op, &j) else {
            continue;
        };
        fake.keep(key, fp, answer);
    }
    Ok(())
}

fn answer_of(program: &Program, operation: &str, j: &serde_json::Value) -> Option<Answer> {
    let types = program.type_table();
    if let Some(id) = j["failure"].as_u64() {
        let id = jadpo_compiler::ir::FailureId(u32::try_from(id).ok()?);
        let f = program.failures.get(id)?;
        let fields = if f.fields.is_empty() {
            jadpo_runtime::value::Value::Unit
        } else {
            let mut values = Vec::with_capacity(f.fields.len());
            for field in &f.fields {
                if let Some(v) = j["fields"].get(field.name.as_str()) {
                    values.push((field.name, decode(types, &field.ty, v).ok()?));
                }
            }
            jadpo_runtime::value::Value::record(values)
        };
        return Some(Answer::Failed {
            failure: id,
            fields,
        });
    }
    let op = program
        .operations
        .iter()
        .find(|o| o.qualified == operation)?;
    Some(Answer::Done(decode(types, &op.answer, &j["answer"]).ok()?))
}

fn unhex(text: &str) -> Option<[u8; 32]> {
    if text.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, slot) in out.iter_mut().enumerate() {
        *slot = u8::from_str_radix(text.get(i * 2..i * 2 + 2)?, 16).ok()?;
    }
    Some(out)
}

/// One attempt's view: each send takes the lock for itself only.
struct Locked<'a> {
    fake: &'a Mutex<Fake>,
    journal: Option<&'a Mutex<File>>,
}

impl Provider for Locked<'_> {
    fn send(&mut self, call: &Call<'_>) -> Answer {
        let Ok(mut fake) = self.fake.lock() else {
            return Answer::Unavailable;
        };
        let was_kept = call.key.is_some_and(|k| fake.keeps(k));
        let before = fake.effects().len();
        let answer = fake.send(call);
        let acted = fake.effects().len() > before;
        let kept = call
            .key
            .filter(|_| !was_kept)
            .and_then(|k| fake.kept_answer(k));
        drop(fake);
        if let (Some(journal), true) = (self.journal, acted || kept.is_some()) {
            let mut line = json!({
                "operation": call.operation,
                "key": call.key,
                "fingerprint": hex(&call.fingerprint),
                "acted": acted,
            });
            // What the key keeps, which a lost answer hides from the
            // caller.
            match kept.map(|(_, a)| a) {
                Some(Answer::Done(v)) => line["answer"] = v.to_json(),
                Some(Answer::Failed { failure, fields }) => {
                    line["failure"] = json!(failure.0);
                    line["fields"] = fields.to_json();
                }
                _ => {}
            }
            if let Ok(mut file) = journal.lock() {
                // The journal is on disk before the answer is used, as a
                // provider's own record would be.
                let _ = writeln!(file, "{line}");
                let _ = file.sync_data();
            }
        }
        answer
    }
}

impl Providers for SharedFake {
    fn provider(&self) -> Box<dyn Provider + '_> {
        Box::new(Locked {
            fake: &self.fake,
            journal: self.journal.as_ref(),
        })
    }
}
