//! `jadpo lsp` against `jadpo check`, edit by edit: drives the built
//! server over stdio as an editor does (incremental `didChange` range
//! edits, bursts over two files, saves, closes, files changed on disk
//! behind the editor's back), and after every edit compares what it
//! published for EVERY file of the app with a fresh `jadpo check --format
//! json` of a copy of the app holding the same texts. The server keeps
//! parses, resolved items, action summaries, rule findings and disk reads
//! between edits; a cache that answers with a stale result shows here as a
//! difference.
//!
//! The edits come from a fixed seed (`JADPO_LSP_DIFF_SEED` picks another)
//! and a tiny xorshift: a comment line (with non-ASCII characters, for
//! UTF-16 columns) inserted, a line removed or doubled (lines with calls
//! often, so callers' findings change), one occurrence of a name changed,
//! a `}` added or removed, undo (a stack, as editors keep), two files
//! edited before the server answers, two changes in one `didChange`,
//! saves, closes without saving, files changed, created and removed on
//! disk (announced by `didChangeWatchedFiles` or not), a file reverted.
//! A failure prints every step so far and the file's text.
//!
//! Intended differences, compared like with like:
//! - Files of packages kept inside the app folder (`packages/...`, path
//!   packages such as `vendor/...`) are the author's own: `jadpo check`
//!   and the server both show their findings in those files (`app_view`
//!   in src/check.rs).
//! - Spans in embedded files (`<stdlib>`, `<bundled>`) cannot be shown in
//!   the editor: such diagnostics and related locations are left out on
//!   the `jadpo check` side, as the server leaves them out.
//! - The server's message is `jadpo check`'s summary, label, `reason:`,
//!   `fix:` and `help:` lines joined (src/lsp/convert.rs); positions are
//!   0-based lines and UTF-16 columns, computed here from the JSON's bytes.

use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "common/lsp_stdio.rs"]
mod lsp_stdio;

use lsp_stdio::{answers, copy_dir, editor_capabilities, uri, Server};

const WAIT: Duration = Duration::from_secs(60);

/// The apps edited, with how many edits each gets.
const APPS: &[(&str, usize)] = &[
    ("examples/billing", 110),
    ("examples/mistakes", 80),
    (
        "tests/fixtures/packages/resolve/vendored/pass_vendored_package_and_path",
        60,
    ),
    (
        "tests/fixtures/rules/effect/recursion/fail_cycle_through_package_calls",
        60,
    ),
    (
        "tests/fixtures/rules/step/too_many/fail_package_and_app_calls",
        80,
    ),
    (
        "tests/fixtures/packages/resolve/cycle/fail_two_packages",
        20,
    ),
    (FOLLOW_UPS, 60),
];

/// An app written here: follow-ups whose events are declared in another
/// file than the emits (the rules read the declarations' spans, which are
/// not in the emitting action's key), a loop, a subscriber.
const FOLLOW_UPS: &str = "(written here) follow_ups";

const FOLLOW_UP_FILES: &[(&str, &str)] = &[
    ("jadpo.yaml", "app: follow_ups\n"),
    (
        "src/app.jadpo",
        "application Example {\n    events: { store: primary }\n}\n\nstore primary { kind: postgres }\n",
    ),
    (
        "src/events.jadpo",
        "type Code = Text { max_length: 16 }\ntype Codes = List<Code> { max_length: 500 }\n\nevent Remind {\n    code: Code\n}\n\nevent Batch {\n    first: Code\n    codes: Codes\n    note: Text\n}\n",
    ),
    (
        "src/batch.jadpo",
        "action batch(first: Code, codes: Codes, note: Text) -> Unit {\n    emit Batch { first: first codes: codes note: note }\n}\n\naction remind(code: Code) -> Unit {\n    emit Remind { code: code } with {\n        priority: 7\n    }\n}\n",
    ),
    (
        "src/loops.jadpo",
        "action remind_all(codes: Codes) -> Unit {\n    for code in codes {\n        emit Remind { code: code }\n    }\n}\n\naction stage(code: Code) -> Unit {\n    emit Remind { code: code } with {\n        unique: { by_args: false states: [\"running\"] }\n    }\n}\n\naction again(event: Remind) -> Unit {\n    attempt stage(event.code)\n}\n\nsubscriber remind_again on Remind {\n    run: again(event)\n}\n",
    ),
];

#[test]
fn every_edit_publishes_what_a_fresh_check_reports() {
    let started = Instant::now();
    let seed = std::env::var("JADPO_LSP_DIFF_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_2026_u64);
    let bases: Vec<PathBuf> = (0..APPS.len()).map(copy_app).collect();
    // The server keeps what it read from disk only for files unchanged
    // for 3 seconds (a change within the clock's tick could hide); waiting
    // makes every first copy kept, so a stale one would show.
    std::thread::sleep(Duration::from_millis(3500));
    let mut total = 0;
    for (i, ((app, edits), base)) in APPS.iter().zip(bases).enumerate() {
        let mut session = Session::start(app, base, seed.wrapping_add(i as u64 * 7919));
        session.run(*edits);
        total += session.step;
        eprintln!(
            "lsp_differential: {app}: {} edits, {} diagnostics compared, codes {:?}",
            session.step, session.compared, session.codes
        );
        session.finish();
    }
    eprintln!(
        "lsp_differential: {total} edits compared in {:.1}s",
        started.elapsed().as_secs_f64()
    );
}

// ---------------------------------------------------------------- client

/// A `jadpo lsp` process over stdio, and the latest diagnostics it
/// published per file.
struct Client {
    server: Server,
    /// The last `publishDiagnostics` per URI.
    latest: BTreeMap<String, Vec<Value>>,
    /// URIs published since the last [`Client::take_published`].
    published: BTreeSet<String>,
}

impl Client {
    fn start(cwd: &Path) -> Client {
        Client {
            server: Server::start(cwd),
            latest: BTreeMap::new(),
            published: BTreeSet::new(),
        }
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.server.notify(method, params);
    }

    /// Sends a request and waits for its answer, noting every diagnostics
    /// notification that comes before it. The server checks changed apps
    /// and publishes before it answers a request, so once the answer is
    /// in, so is every diagnostic of the edits sent before.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.server.send_request(method, params);
        let deadline = Instant::now() + WAIT;
        loop {
            let message = self.server.next(deadline, method);
            if message["method"] == "textDocument/publishDiagnostics" {
                let params = &message["params"];
                let uri = params["uri"].as_str().unwrap_or("").to_string();
                let list = params["diagnostics"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                self.published.insert(uri.clone());
                self.latest.insert(uri, list);
            } else if answers(&message, id, method) {
                return message["result"].clone();
            }
        }
    }

    fn take_published(&mut self) -> BTreeSet<String> {
        std::mem::take(&mut self.published)
    }
}

// ---------------------------------------------------------------- texts

/// A tiny xorshift: the same edits on every run, no extra crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        let i = self.below(items.len());
        items.get(i)
    }
}

/// The 0-based line and UTF-16 column of a byte offset (clamped, and moved
/// back to a character boundary, as the server does).
fn position(text: &str, offset: usize) -> Value {
    let mut at = offset.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line = before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column: usize = before[line_start..].chars().map(char::len_utf16).sum();
    json!({ "line": line, "character": column })
}

fn range(text: &str, start: usize, end: usize) -> Value {
    json!({ "start": position(text, start), "end": position(text, end) })
}

/// Byte offsets where the lines of `text` start (not the end of the text).
fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
    starts.retain(|&s| s < text.len());
    starts
}

fn line_end(text: &str, start: usize) -> usize {
    text[start..]
        .find('\n')
        .map_or(text.len(), |i| start + i + 1)
}

fn line_removed(text: &str, line: usize) -> Edit {
    Edit {
        start: line,
        end: line_end(text, line),
        text: String::new(),
    }
}

fn line_doubled(text: &str, line: usize) -> Edit {
    Edit {
        start: line,
        end: line,
        text: text[line..line_end(text, line)].to_string(),
    }
}

/// Identifiers of `text` with their byte offsets.
fn identifiers(text: &str) -> Vec<(usize, &str)> {
    let bytes = text.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts =
            (bytes[i].is_ascii_alphabetic() || bytes[i] == b'_') && (i == 0 || !word(bytes[i - 1]));
        if starts {
            let end = (i..bytes.len())
                .find(|&j| !word(bytes[j]))
                .unwrap_or(bytes.len());
            found.push((i, &text[i..end]));
            i = end;
        } else {
            i += 1;
        }
    }
    found
}

/// Two copies of app `index` of [`APPS`] in a fresh temporary folder:
/// `edited` for the server, `checked` for `jadpo check`.
fn copy_app(index: usize) -> PathBuf {
    let (app, _) = APPS.get(index).copied().unwrap_or_default();
    let base = std::env::temp_dir().join(format!("jadpo-lsp-diff-{}-{index}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    for copy in ["edited", "checked"] {
        let to = base.join(copy);
        if app == FOLLOW_UPS {
            for (file, text) in FOLLOW_UP_FILES {
                let path = to.join(file);
                std::fs::create_dir_all(path.parent().expect("a folder")).expect("folder");
                std::fs::write(path, text).expect("write");
            }
        } else {
            copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join(app), &to);
        }
    }
    base
}

/// Text files under `dir`, by path relative to it.
fn read_tree(dir: &Path, rel: &str, out: &mut BTreeMap<String, String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).expect("folder").flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        let child = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        if entry.path().is_dir() {
            read_tree(&entry.path(), &child, out);
        } else if let Ok(text) = std::fs::read_to_string(entry.path()) {
            out.insert(child, text);
        }
    }
}

// ---------------------------------------------------------------- session

/// One byte-range replacement in a file's text.
#[derive(Clone, Debug)]
struct Edit {
    start: usize,
    end: usize,
    text: String,
}

struct Session {
    name: String,
    client: Client,
    /// The app the server edits, and the copy `jadpo check` reads.
    lsp: PathBuf,
    mirror: PathBuf,
    /// Every text file of the app as first copied.
    original: BTreeMap<String, String>,
    /// What is on the server's disk.
    disk: BTreeMap<String, String>,
    /// Open documents: text and version.
    open: BTreeMap<String, (String, i64)>,
    /// Inverses of the edits made, latest last, for undoing them as an
    /// editor's undo stack does.
    undo: Vec<(String, Edit)>,
    rng: Rng,
    step: usize,
    /// Every edit so far, for reproducing a failure.
    log: Vec<String>,
    /// Files edited in this step: the server must publish for each.
    touched: BTreeSet<String>,
    /// Files created during the session, and those removed again.
    created: usize,
    removed: BTreeSet<String>,
    /// Diagnostics compared, and their codes, to show what was covered.
    compared: usize,
    codes: BTreeSet<String>,
}

impl Session {
    fn start(app: &str, base: PathBuf, seed: u64) -> Session {
        let (lsp, mirror) = (base.join("edited"), base.join("checked"));
        let mut original = BTreeMap::new();
        read_tree(&lsp, "", &mut original);
        let mut client = Client::start(&lsp);
        client.request(
            "initialize",
            json!({ "processId": null, "rootUri": uri(&lsp), "capabilities": editor_capabilities() }),
        );
        client.notify("initialized", json!({}));
        Session {
            name: app.to_string(),
            client,
            lsp,
            mirror,
            disk: original.clone(),
            original,
            open: BTreeMap::new(),
            undo: Vec::new(),
            rng: Rng(seed | 1),
            step: 0,
            log: Vec::new(),
            touched: BTreeSet::new(),
            created: 0,
            removed: BTreeSet::new(),
            compared: 0,
            codes: BTreeSet::new(),
        }
    }

    fn run(&mut self, edits: usize) {
        let first = self.editable().first().cloned().expect("an app file");
        self.ensure_open(&first);
        self.settle_and_compare("open");
        while self.step < edits {
            self.step += 1;
            let what = self.random_step();
            self.settle_and_compare(&what);
        }
    }

    fn finish(mut self) {
        self.client.request("shutdown", Value::Null);
        self.client.notify("exit", Value::Null);
        if let Some(base) = self.lsp.parent() {
            let _ = std::fs::remove_dir_all(base);
        }
    }

    /// Files an editor would edit: sources and manifests.
    fn editable(&self) -> Vec<String> {
        let all: BTreeSet<&String> = self.disk.keys().chain(self.open.keys()).collect();
        (all.into_iter())
            .filter(|f| f.ends_with(".jadpo") || f.ends_with(".yaml"))
            .cloned()
            .collect()
    }

    fn text(&self, file: &str) -> &str {
        match self.open.get(file) {
            Some((text, _)) => text,
            None => self.disk.get(file).map_or("", String::as_str),
        }
    }

    fn doc_uri(&self, file: &str) -> String {
        uri(&self.lsp.join(file))
    }

    /// A file to edit: sources four times as often as manifests.
    fn pick_file(&mut self) -> String {
        let all = self.editable();
        let sources: Vec<String> = all
            .iter()
            .filter(|f| f.ends_with(".jadpo"))
            .cloned()
            .collect();
        let pool = if !sources.is_empty() && self.rng.below(5) != 0 {
            sources
        } else {
            all
        };
        self.rng.pick(&pool).cloned().expect("an editable file")
    }

    fn ensure_open(&mut self, file: &str) {
        if self.open.contains_key(file) {
            return;
        }
        let text = self.text(file).to_string();
        let doc = self.doc_uri(file);
        self.client.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": doc, "languageId": "jadpo", "version": 1, "text": text } }),
        );
        self.open.insert(file.to_string(), (text, 1));
        self.touched.insert(file.to_string());
        self.log.push(format!("open {file}"));
    }

    /// Sends edits to one file as one `didChange` and keeps their inverses
    /// for undoing them.
    fn change(&mut self, file: &str, edits: Vec<Edit>) {
        let inverses = self.send_change(file, edits);
        self.undo
            .extend(inverses.into_iter().map(|e| (file.to_string(), e)));
    }

    /// Sends edits to one file as one `didChange` (each range in the text
    /// left by the edits before it, as the protocol says); returns their
    /// inverses in the order they were made.
    fn send_change(&mut self, file: &str, edits: Vec<Edit>) -> Vec<Edit> {
        self.ensure_open(file);
        let Some((text, version)) = self.open.get_mut(file) else {
            return Vec::new();
        };
        let mut changes = Vec::new();
        let mut inverses = Vec::new();
        for e in edits {
            changes.push(json!({ "range": range(text, e.start, e.end), "text": e.text }));
            let old = text[e.start..e.end].to_string();
            text.replace_range(e.start..e.end, &e.text);
            inverses.push(Edit {
                start: e.start,
                end: e.start + e.text.len(),
                text: old,
            });
        }
        *version += 1;
        let version = *version;
        let doc = self.doc_uri(file);
        self.client.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": doc, "version": version }, "contentChanges": changes }),
        );
        self.touched.insert(file.to_string());
        self.log.push(format!(
            "change {file}: {}",
            serde_json::to_string(&json!(changes)).unwrap_or_default()
        ));
        inverses
    }

    /// One random step; returns what it did.
    fn random_step(&mut self) -> String {
        let roll = self.rng.below(100);
        match roll {
            0..=44 => {
                let file = self.pick_file();
                let edit = self.random_edit(&file);
                self.change(&file, vec![edit]);
                format!("edit {file}")
            }
            45..=64 => self.undo_last(),
            65..=70 => self.burst(),
            71..=74 => {
                let file = self.pick_file();
                let first = self.random_edit(&file);
                let text = self.text(&file).to_string();
                let mut after = text.clone();
                after.replace_range(first.start..first.end, &first.text);
                let second = self.edit_in(&file, &after);
                self.change(&file, vec![first, second]);
                format!("two changes in one didChange to {file}")
            }
            75..=80 => self.save(),
            81..=83 => self.close(),
            84..=86 => self.behind_the_back(),
            87 => self.create_file(),
            88 => self.remove_file(),
            _ => self.revert(),
        }
    }

    fn random_edit(&mut self, file: &str) -> Edit {
        let text = self.text(file).to_string();
        self.edit_in(file, &text)
    }

    /// An edit as an author makes one: a comment line, a line removed or
    /// doubled, a name changed at one place, a brace added or removed.
    fn edit_in(&mut self, file: &str, text: &str) -> Edit {
        let starts = line_starts(text);
        // Lines with a call: doubling or removing one changes the steps of
        // its action, and so what its callers (maybe in other files) do.
        let calls: Vec<usize> = (starts.iter().copied())
            .filter(|&s| text[s..line_end(text, s)].contains("attempt "))
            .collect();
        let any_line = self.rng.pick(&starts).copied().unwrap_or(0);
        let call_line = self.rng.pick(&calls).copied().unwrap_or(any_line);
        let comment = if file.ends_with(".yaml") { "#" } else { "//" };
        match self.rng.below(14) {
            0 | 1 => Edit {
                start: any_line,
                end: any_line,
                text: format!("{comment} edit {} ☕😀\n", self.step),
            },
            2 | 3 => line_removed(text, any_line),
            4 | 5 => line_doubled(text, any_line),
            6 | 7 => line_doubled(text, call_line),
            8 => line_removed(text, call_line),
            9..=11 => self.rename(text),
            12 => {
                let mut at = self.rng.below(text.len() + 1);
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                Edit {
                    start: at,
                    end: at,
                    text: "}".to_string(),
                }
            }
            _ => {
                let braces: Vec<usize> = text.match_indices('}').map(|(i, _)| i).collect();
                match self.rng.pick(&braces) {
                    Some(&at) => Edit {
                        start: at,
                        end: at + 1,
                        text: String::new(),
                    },
                    None => self.rename(text),
                }
            }
        }
    }

    /// One occurrence of a name replaced by another name of the file, or
    /// misspelt.
    fn rename(&mut self, text: &str) -> Edit {
        let names = identifiers(text);
        let Some(&(at, name)) = self.rng.pick(&names) else {
            return Edit {
                start: 0,
                end: 0,
                text: "x".to_string(),
            };
        };
        let other = self.rng.pick(&names).map_or("x", |(_, n)| *n);
        let new = if self.rng.below(2) == 0 && other != name {
            other.to_string()
        } else {
            format!("{name}x")
        };
        Edit {
            start: at,
            end: at + name.len(),
            text: new,
        }
    }

    fn undo_last(&mut self) -> String {
        match self.undo.pop() {
            Some((file, edit)) if self.open.contains_key(&file) => {
                self.send_change(&file, vec![edit]);
                format!("undo in {file}")
            }
            _ => {
                let file = self.pick_file();
                let edit = self.random_edit(&file);
                self.change(&file, vec![edit]);
                format!("edit {file} (nothing to undo)")
            }
        }
    }

    /// Edits to two files before the server has answered either.
    fn burst(&mut self) -> String {
        let a = self.pick_file();
        let b = self.pick_file();
        let edit = self.random_edit(&a);
        self.change(&a, vec![edit]);
        let edit = self.random_edit(&b);
        self.change(&b, vec![edit]);
        format!("burst over {a} and {b}")
    }

    /// Writes an open file to disk and says so.
    fn save(&mut self) -> String {
        let files: Vec<String> = self.open.keys().cloned().collect();
        let Some(file) = self.rng.pick(&files).cloned() else {
            return self.revert();
        };
        let text = self.text(&file).to_string();
        std::fs::write(self.lsp.join(&file), &text).expect("save");
        self.disk.insert(file.clone(), text);
        let doc = self.doc_uri(&file);
        self.client.notify(
            "textDocument/didSave",
            json!({ "textDocument": { "uri": doc } }),
        );
        self.touched.insert(file.clone());
        self.log.push(format!("save {file}"));
        format!("save {file}")
    }

    /// Closes an open file without saving: the disk's text counts again.
    fn close(&mut self) -> String {
        let files: Vec<String> = self.open.keys().cloned().collect();
        let Some(file) = self.rng.pick(&files).cloned() else {
            return self.behind_the_back();
        };
        self.open.remove(&file);
        self.undo.retain(|(f, _)| *f != file);
        let doc = self.doc_uri(&file);
        self.client.notify(
            "textDocument/didClose",
            json!({ "textDocument": { "uri": doc } }),
        );
        self.touched.insert(file.clone());
        self.log.push(format!("close {file}"));
        format!("close {file}")
    }

    /// A file not open in the editor changed on disk (a `git checkout`, a
    /// generator), announced by a watched-files notification or not (the
    /// server must see it by the file's times: the next edit anywhere
    /// checks the app again).
    fn behind_the_back(&mut self) -> String {
        let closed: Vec<String> = (self.editable().into_iter())
            .filter(|f| !self.open.contains_key(f))
            .collect();
        let Some(file) = self.rng.pick(&closed).cloned() else {
            return self.save();
        };
        let edit = self.random_edit(&file);
        let mut text = self.text(&file).to_string();
        text.replace_range(edit.start..edit.end, &edit.text);
        std::fs::write(self.lsp.join(&file), &text).expect("write");
        self.disk.insert(file.clone(), text);
        self.log.push(format!(
            "on disk {file}: {}",
            serde_json::to_string(
                &json!({ "start": edit.start, "end": edit.end, "text": edit.text })
            )
            .unwrap_or_default()
        ));
        self.look_again(&file, 2);
        format!("changed on disk {file}")
    }

    /// A new source file appears on disk next to another one: a small
    /// action, or a copy of a whole file (its declarations then clash).
    fn create_file(&mut self) -> String {
        let sources: Vec<String> = (self.editable().into_iter())
            .filter(|f| f.ends_with(".jadpo"))
            .collect();
        let Some(model) = self.rng.pick(&sources).cloned() else {
            return self.behind_the_back();
        };
        self.created += 1;
        let folder = model.rsplit_once('/').map_or("", |(d, _)| d);
        let name = format!("extra_{}.jadpo", self.created);
        let file = if folder.is_empty() {
            name
        } else {
            format!("{folder}/{name}")
        };
        let text = if self.rng.below(2) == 0 {
            self.text(&model).to_string()
        } else {
            format!("action extra_{}() -> Unit {{\n}}\n", self.created)
        };
        std::fs::write(self.lsp.join(&file), &text).expect("create");
        self.disk.insert(file.clone(), text);
        self.log
            .push(format!("created on disk {file} (from {model})"));
        self.look_again(&file, 1);
        format!("created {file}")
    }

    /// A file created before, not open, removed from disk.
    fn remove_file(&mut self) -> String {
        let created: Vec<String> = (self.disk.keys())
            .filter(|f| !self.original.contains_key(*f) && !self.open.contains_key(*f))
            .cloned()
            .collect();
        let Some(file) = self.rng.pick(&created).cloned() else {
            return self.create_file();
        };
        std::fs::remove_file(self.lsp.join(&file)).expect("remove");
        self.disk.remove(&file);
        self.removed.insert(file.clone());
        self.log.push(format!("removed from disk {file}"));
        self.look_again(&file, 3);
        format!("removed {file}")
    }

    /// After a change on disk: a watched-files notification, or an edit to
    /// an open file (the server must then see the change by itself).
    /// `kind` is the protocol's: 1 created, 2 changed, 3 deleted.
    fn look_again(&mut self, file: &str, kind: u8) {
        if self.rng.below(2) == 0 {
            let doc = self.doc_uri(file);
            self.client.notify(
                "workspace/didChangeWatchedFiles",
                json!({ "changes": [ { "uri": doc, "type": kind } ] }),
            );
            self.log.push("watched files changed".to_string());
        } else {
            let other = match self.open.keys().next().cloned() {
                Some(open) => open,
                None => self.pick_file(),
            };
            let edit = self.random_edit(&other);
            self.change(&other, vec![edit]);
        }
    }

    /// An open file back to its first text, sent whole as an editor's
    /// "revert file" does.
    fn revert(&mut self) -> String {
        let mut file = self.pick_file();
        if !self.original.contains_key(&file) {
            file = "jadpo.yaml".to_string();
        }
        self.ensure_open(&file);
        let text = self.original.get(&file).cloned().unwrap_or_default();
        let Some((open, version)) = self.open.get_mut(&file) else {
            return String::new();
        };
        *open = text.clone();
        *version += 1;
        let version = *version;
        self.undo.retain(|(f, _)| *f != file);
        let doc = self.doc_uri(&file);
        self.client.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": doc, "version": version }, "contentChanges": [ { "text": text } ] }),
        );
        self.touched.insert(file.clone());
        self.log.push(format!("revert {file}"));
        format!("revert {file}")
    }

    // ------------------------------------------------------------ compare

    /// Waits until the server has published for this step, then compares
    /// every file's latest diagnostics with a fresh check.
    fn settle_and_compare(&mut self, what: &str) {
        let probe = self.doc_uri("jadpo.yaml");
        self.client.request(
            "textDocument/documentSymbol",
            json!({ "textDocument": { "uri": probe } }),
        );
        let published = self.client.take_published();
        for file in std::mem::take(&mut self.touched) {
            let doc = self.doc_uri(&file);
            assert!(
                published.contains(&doc),
                "{}: step {} ({what}): no diagnostics published for the edited {file}",
                self.name,
                self.step
            );
        }
        let expected = self.expected();
        let actual = self.actual();
        let files: BTreeSet<&String> = expected.keys().chain(actual.keys()).collect();
        for list in expected.values() {
            self.compared += list.len();
            for d in list {
                if let Some(code) = d["code"].as_str() {
                    self.codes.insert(code.to_string());
                }
            }
        }
        for file in files {
            let want = expected.get(file).cloned().unwrap_or_default();
            let got = actual.get(file).cloned().unwrap_or_default();
            if want != got {
                self.fail(what, file, &want, &got);
            }
        }
    }

    fn fail(&self, what: &str, file: &str, want: &[Value], got: &[Value]) -> ! {
        let pretty = |v: &[Value]| serde_json::to_string_pretty(v).unwrap_or_default();
        panic!(
            "{}: after step {} ({what}) the server shows for {file}:\n{}\nbut a fresh `jadpo check` reports:\n{}\nsteps so far:\n{}\ntext of {file}:\n{}",
            self.name,
            self.step,
            pretty(got),
            pretty(want),
            self.log.join("\n"),
            self.text(file)
        );
    }

    /// What the server published last, per file of the app.
    fn actual(&self) -> BTreeMap<String, Vec<Value>> {
        let prefix = format!("{}/", uri(&self.lsp));
        let mut out = BTreeMap::new();
        for (doc, list) in &self.client.latest {
            let Some(file) = doc.strip_prefix(&prefix) else {
                continue;
            };
            let shown: Vec<Value> = list.iter().map(|d| from_server(d, &prefix)).collect();
            if !shown.is_empty() {
                out.insert(file.to_string(), shown);
            }
        }
        out
    }

    /// What a fresh `jadpo check --format json` of the same texts reports,
    /// plus the own findings of packages inside the app folder.
    fn expected(&self) -> BTreeMap<String, Vec<Value>> {
        let mut texts = self.disk.clone();
        for (file, (text, _)) in &self.open {
            texts.insert(file.clone(), text.clone());
        }
        for file in &self.removed {
            let _ = std::fs::remove_file(self.mirror.join(file));
        }
        for (file, text) in &texts {
            let path = self.mirror.join(file);
            if std::fs::read_to_string(&path).ok().as_deref() != Some(text) {
                std::fs::write(&path, text).expect("write the checked copy");
            }
        }
        let mut out: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        for (file, d) in self.checked(&texts) {
            out.entry(file).or_default().push(d);
        }
        out
    }

    fn checked(&self, texts: &BTreeMap<String, String>) -> Vec<(String, Value)> {
        let output = Command::new(env!("CARGO_BIN_EXE_jadpo"))
            .args(["check", "--format", "json", "."])
            .current_dir(&self.mirror)
            .output()
            .expect("run jadpo check");
        let doc: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
            panic!(
                "jadpo check --format json printed no JSON ({e}): {}",
                String::from_utf8_lossy(&output.stderr)
            )
        });
        let list = doc["diagnostics"].as_array().cloned().unwrap_or_default();
        list.iter()
            .filter_map(|d| {
                let file = d["location"]["file"].as_str()?;
                if file.starts_with('<') {
                    return None;
                }
                let file = file.trim_start_matches("./").to_string();
                let shown = from_check(d, texts);
                Some((file, shown))
            })
            .collect()
    }
}

// ---------------------------------------------------------------- shapes

/// What is compared of a diagnostic.
fn shape(code: &Value, severity: u64, message: String, range: Value, related: Vec<Value>) -> Value {
    json!({ "code": code, "severity": severity, "message": message, "range": range, "related": related })
}

fn from_server(d: &Value, prefix: &str) -> Value {
    let related = (d["relatedInformation"]
        .as_array()
        .cloned()
        .unwrap_or_default())
    .iter()
    .map(|r| {
        let doc = r["location"]["uri"].as_str().unwrap_or("");
        json!({
            "file": doc.strip_prefix(prefix).unwrap_or(doc),
            "range": r["location"]["range"],
            "message": r["message"],
        })
    })
    .collect();
    let message = d["message"].as_str().unwrap_or("").to_string();
    let severity = d["severity"].as_u64().unwrap_or(0);
    shape(&d["code"], severity, message, d["range"].clone(), related)
}

/// The server's message: summary, label, reason, fixes and help, joined.
fn message(
    summary: &str,
    label: Option<&str>,
    reason: Option<&str>,
    fixes: &[&str],
    help: Option<&str>,
) -> String {
    let mut out = summary.to_string();
    if let Some(label) = label {
        out.push('\n');
        out.push_str(label);
    }
    if let Some(reason) = reason {
        out.push_str("\nreason: ");
        out.push_str(reason);
    }
    for fix in fixes {
        out.push_str("\nfix: ");
        out.push_str(fix);
    }
    if let Some(help) = help {
        out.push_str("\nhelp: ");
        out.push_str(help);
    }
    out
}

/// A `jadpo check --format json` location as a file and LSP range.
fn located(location: &Value, texts: &BTreeMap<String, String>) -> Option<(String, Value)> {
    let file = location["file"].as_str()?.trim_start_matches("./");
    if file.starts_with('<') {
        return None;
    }
    let text = texts
        .get(file)
        .unwrap_or_else(|| panic!("`jadpo check` names a file not in the app: {file}"));
    let byte = |key: &str| location[key].as_u64().unwrap_or(0) as usize;
    Some((
        file.to_string(),
        range(text, byte("start_byte"), byte("end_byte")),
    ))
}

fn from_check(d: &Value, texts: &BTreeMap<String, String>) -> Value {
    let (_, at) = located(&d["location"], texts).unwrap_or_default();
    let related = (d["related"].as_array().cloned().unwrap_or_default())
        .iter()
        .filter_map(|r| {
            let (file, at) = located(&r["location"], texts)?;
            Some(json!({ "file": file, "range": at, "message": r["message"] }))
        })
        .collect();
    let fixes: Vec<&str> = (d["fixes"].as_array().map(Vec::as_slice).unwrap_or_default())
        .iter()
        .filter_map(|f| f["message"].as_str())
        .collect();
    let text = message(
        d["summary"].as_str().unwrap_or(""),
        d["label"].as_str(),
        d["reason"].as_str(),
        &fixes,
        d["help"].as_str(),
    );
    let severity = if d["severity"] == "warning" { 2 } else { 1 };
    shape(&d["code"], severity, text, at, related)
}
