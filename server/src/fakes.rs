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
use std::io::Write;
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
    state: Mutex<State>,
}

struct State {
    fake: Fake,
    journal: Option<Journal>,
}

/// The journal file, shared by every process that names it: each send
/// takes its lock, reads what other processes appended since (keeping
/// their keys), and appends its own, as one provider's state.
struct Journal {
    file: File,
    program: &'static Program,
    /// How much of the file this process has read.
    read: u64,
}

impl SharedFake {
    pub fn new(scripts: BTreeMap<OpId, Script>) -> SharedFake {
        SharedFake {
            state: Mutex::new(State {
                fake: Fake::new(scripts),
                journal: None,
            }),
        }
    }

    /// A fake that keeps its keys in `path`, with every process naming the
    /// same file.
    pub fn journaled(
        scripts: BTreeMap<OpId, Script>,
        program: &'static Program,
        path: &Path,
    ) -> Result<SharedFake, String> {
        if let Ok(meta) = std::fs::metadata(path) {
            if !meta.is_file() || meta.len() > MAX_JOURNAL {
                return Err(format!(
                    "{} is not a fake journal (a regular file of at most 64 MiB)",
                    path.display()
                ));
            }
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        let mut state = State {
            fake: Fake::new(scripts),
            journal: Some(Journal {
                file,
                program,
                read: 0,
            }),
        };
        state.catch_up();
        Ok(SharedFake {
            state: Mutex::new(state),
        })
    }

    /// The effects so far in this process.
    pub fn effects(&self) -> Vec<Effect> {
        self.state
            .lock()
            .map(|s| s.fake.effects().to_vec())
            .unwrap_or_default()
    }
}

impl State {
    /// Keeps the keys other processes (or an earlier run) journaled.
    fn catch_up(&mut self) {
        let Some(j) = &mut self.journal else { return };
        let Ok(len) = j.file.metadata().map(|m| m.len()) else {
            return;
        };
        if len <= j.read || len > MAX_JOURNAL {
            return;
        }
        use std::io::{Read, Seek, SeekFrom};
        let mut text = String::new();
        if j.file.seek(SeekFrom::Start(j.read)).is_err() {
            return;
        }
        if (&j.file)
            .take(len - j.read)
            .read_to_string(&mut text)
            .is_err()
        {
            return;
        }
        // Only whole lines: a line being written is read next time.
        let whole = text.rfind('\n').map_or(0, |i| i + 1);
        j.read += whole as u64;
        for line in text.get(..whole).unwrap_or("").lines() {
            keep_line(&mut self.fake, j.program, line);
        }
    }
}

fn keep_line(fake: &mut Fake, program: &Program, line: &str) {
    let Ok(j) = serde_json::from_str::<serde_json::Value>(line) else {
        return;
    };
    let (Some(key), Some(fp), Some(op)) = (
        j["key"].as_str(),
        j["fingerprint"].as_str().and_then(unhex),
        j["operation"].as_str(),
    ) else {
        return;
    };
    if fake.keeps(key) {
        return;
    }
    if let Some(answer) = answer_of(program, op, &j) {
        fake.keep(key, fp, answer);
    }
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

/// The zombie test's slow provider: a `crash-hooks` build reads
/// `JADPO_FAKE_DELAY_MS` and waits that long before each send, holding no
/// lock, so a test can stop the process between a step's record and its
/// send.
fn slow_provider() {
    if !cfg!(feature = "crash-hooks") {
        return;
    }
    let ms = std::env::var("JADPO_FAKE_DELAY_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0)
        .min(60_000);
    if ms > 0 {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

/// One attempt's view: each send takes the lock for itself only.
struct Locked<'a> {
    state: &'a Mutex<State>,
}

impl Provider for Locked<'_> {
    fn send(&mut self, call: &Call<'_>) -> Answer {
        slow_provider();
        let Ok(mut state) = self.state.lock() else {
            return Answer::Unavailable;
        };
        // Across processes, one send at a time: the file's lock.
        let locked = state.journal.as_ref().map(|j| j.file.lock().is_ok());
        state.catch_up();
        let was_kept = call.key.is_some_and(|k| state.fake.keeps(k));
        let before = state.fake.effects().len();
        let answer = state.fake.send(call);
        let acted = state.fake.effects().len() > before;
        let kept = call
            .key
            .filter(|_| !was_kept)
            .and_then(|k| state.fake.kept_answer(k));
        if let (Some(j), true) = (state.journal.as_mut(), acted || kept.is_some()) {
            let mut line = json!({
                "operation": call.operation,
                "key": call.key,
                "fingerprint": hex(&call.fingerprint),
                "acted": acted,
                "pid": std::process::id(),
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
            // On disk before the answer is used, as a provider's own
            // record would be.
            let text = format!("{line}\n");
            if (&j.file).write_all(text.as_bytes()).is_ok() {
                let _ = j.file.sync_data();
                j.read += text.len() as u64;
            }
        }
        if let (Some(true), Some(j)) = (locked, state.journal.as_ref()) {
            let _ = j.file.unlock();
        }
        answer
    }
}

impl Providers for SharedFake {
    fn provider<'a>(&'a self, _: &'static Program) -> Box<dyn Provider + 'a> {
        Box::new(Locked { state: &self.state })
    }
}
