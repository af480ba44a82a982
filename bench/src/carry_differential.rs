//! The editor's resolution after random declaration edits of a generated
//! app, against a fresh compile after each: the fixtures of
//! `compiler/tests/resolve_incremental.rs` are small and each edit there is
//! chosen; here an app of a few thousand lines, whose modules all call one
//! shared package, takes edits as an author makes them while moving code
//! around: a declaration renamed, moved to another file or to the end of
//! its own, a field's or an alias's type changed, a parameter added, a
//! name another file declares declared again, a line removed, two files
//! edited at once, a file put back as it was. Most of them change the
//! context, so most resolutions are fresh ones carrying the bodies, entry
//! points and functions the edit cannot reach (`resolve/carry.rs`); the
//! others are patched (`resolve/patch.rs`).
//!
//! `JADPO_CARRY_SEEDS=FROM..TO` runs other seeds (each seed its own app
//! and edits); a failure names its seed and the last steps.

use crate::corpus::{generate, Options};
use crate::rng::Rng;
use jadpo_compiler::ir::Program;
use jadpo_compiler::load::{self, loaders::MemLoader};
use jadpo_compiler::{parser, resolve};
use std::collections::BTreeMap;

/// An app's files by path.
type App = BTreeMap<String, String>;

/// Lines of each generated app, and edits per seed.
const LINES: usize = 1_000;
const STEPS: usize = 100;

#[test]
fn random_declaration_edits_match_fresh_resolutions() {
    for seed in seeds() {
        Run::new(seed).edit(STEPS);
    }
}

fn seeds() -> std::ops::Range<u64> {
    let Ok(range) = std::env::var("JADPO_CARRY_SEEDS") else {
        return 1..3;
    };
    let parsed = range
        .split_once("..")
        .and_then(|(a, b)| Some(a.parse().ok()?..b.parse().ok()?));
    parsed.unwrap_or_else(|| panic!("JADPO_CARRY_SEEDS is FROM..TO, not {range}"))
}

/// One seed's app, its sources as generated, and the editor's state.
struct Run {
    seed: u64,
    rng: Rng,
    original: App,
    app: App,
    sources: Vec<String>,
    /// The sources every module reads: the packages' and `src/app.jadpo`.
    shared: Vec<String>,
    cache: resolve::Cache,
    previous: Option<Program>,
    log: Vec<String>,
}

impl Run {
    fn new(seed: u64) -> Run {
        let corpus = generate(Options { lines: LINES, seed });
        let original: App = corpus.files.into_iter().collect();
        let sources: Vec<String> = (original.keys())
            .filter(|p| p.ends_with(".jadpo"))
            .cloned()
            .collect();
        let shared = (sources.iter())
            .filter(|p| !p.starts_with("src/region"))
            .cloned()
            .collect();
        let mut run = Run {
            seed,
            rng: Rng::new(seed),
            app: original.clone(),
            original,
            sources,
            shared,
            cache: resolve::Cache::default(),
            previous: None,
            log: Vec::new(),
        };
        run.compare();
        run
    }

    fn edit(&mut self, steps: usize) {
        for step in 0..steps {
            let file = match self.rng.below(2) {
                0 => self.rng.pick(&self.shared).clone(),
                _ => self.rng.pick(&self.sources).clone(),
            };
            let what = self.edit_one(step, &file);
            self.log.push(format!("step {step}: {what}"));
            self.compare();
        }
    }

    /// Edits `file` (and maybe another); says what it did.
    fn edit_one(&mut self, step: usize, file: &str) -> String {
        let text = self.app.get(file).cloned().unwrap_or_default();
        let other = self.rng.pick(&self.sources).clone();
        let (new, what) = match self.rng.below(13) {
            0 => (
                format!("type Probe{step} = Int\n{text}"),
                "a type added in front",
            ),
            1 | 2 => (self.renamed(&text), "a declaration renamed"),
            3 => (self.replaced(&text, ": Int", ": Text"), "a field made Text"),
            4 => (
                self.replaced(&text, ": AccountId", ": EntryId"),
                "a field given another type",
            ),
            5 => (
                self.declared_again(&text, &other),
                "another file's name declared",
            ),
            6 | 7 => (self.given_a_parameter(&text), "a parameter added"),
            8 => (self.line_removed(&text), "a line removed"),
            9 => (self.original[file].clone(), "put back as generated"),
            10 => return self.moved(file, &text, &other),
            11 => (self.moved_down(&text), "a declaration moved to the end"),
            _ => {
                let changed = self.replaced(&self.app[&other].clone(), ": Int", ": Text");
                self.app.insert(other.clone(), changed);
                (
                    format!("type Probe{step} = Text\n{text}"),
                    "a type added in front, with a field of another file made Text",
                )
            }
        };
        self.app.insert(file.to_string(), new);
        format!("{what} in {file} (another: {other})")
    }

    /// The name of one declaration of `text` changed where it is declared.
    fn renamed(&mut self, text: &str) -> String {
        let Some((at, len)) = self.one_of(&declared(text)) else {
            return text.to_string();
        };
        format!("{}z{}", &text[..at + len], &text[at + len..])
    }

    /// One action or function of `text` given a first parameter.
    fn given_a_parameter(&mut self, text: &str) -> String {
        let headers: Vec<usize> = (declared(text).into_iter())
            .filter_map(|(at, len)| Some(at + len + text[at + len..].strip_prefix('(').map(|_| 0)?))
            .collect();
        if headers.is_empty() {
            return text.to_string();
        }
        let at = *self.rng.pick(&headers) + 1;
        format!("{}extra: Int, {}", &text[..at], &text[at..])
    }

    /// One of `ranges`, at random.
    fn one_of(&mut self, ranges: &[(usize, usize)]) -> Option<(usize, usize)> {
        (!ranges.is_empty()).then(|| *self.rng.pick(ranges))
    }

    /// One occurrence of `from`, picked at random, made `to`.
    fn replaced(&mut self, text: &str, from: &str, to: &str) -> String {
        let at: Vec<usize> = text.match_indices(from).map(|(i, _)| i).collect();
        if at.is_empty() {
            return text.to_string();
        }
        let i = *self.rng.pick(&at);
        format!("{}{to}{}", &text[..i], &text[i + from.len()..])
    }

    /// `text` with a declaration of the first name `other` declares.
    fn declared_again(&self, text: &str, other: &str) -> String {
        let other = &self.app[other];
        let Some(&(at, len)) = declared(other).first() else {
            return text.to_string();
        };
        let name = &other[at..at + len];
        if name.starts_with(char::is_uppercase) {
            format!("{text}\ntype {name} = Int\n")
        } else {
            format!("{text}\nfunction {name}() -> Int {{\n    return 1\n}}\n")
        }
    }

    fn line_removed(&mut self, text: &str) -> String {
        let starts: Vec<usize> = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .filter(|&i| i < text.len())
            .collect();
        if starts.is_empty() {
            return text.to_string();
        }
        let start = *self.rng.pick(&starts);
        let end = text[start..]
            .find('\n')
            .map_or(text.len(), |i| start + i + 1);
        format!("{}{}", &text[..start], &text[end..])
    }

    /// One declaration of `file` cut and put at the end of `other`.
    fn moved(&mut self, file: &str, text: &str, other: &str) -> String {
        let picked = self.one_of(&blocks(text)).filter(|_| other != file);
        let Some((start, end)) = picked else {
            return format!("nothing moved out of {file}");
        };
        let rest = format!("{}{}", &text[..start], &text[end..]);
        let to = format!("{}\n{}", self.app[other], &text[start..end]);
        self.app.insert(file.to_string(), rest);
        self.app.insert(other.to_string(), to);
        let first = text[start..end].lines().next().unwrap_or_default();
        format!("`{first}` moved from {file} to {other}")
    }

    fn moved_down(&mut self, text: &str) -> String {
        let Some((start, end)) = self.one_of(&blocks(text)) else {
            return text.to_string();
        };
        format!("{}{}\n{}", &text[..start], &text[end..], &text[start..end])
    }

    /// Resolves the app as the editor does and afresh; both must agree.
    fn compare(&mut self) {
        let mut loader = MemLoader::new();
        for (path, text) in &self.app {
            loader.insert(format!("app/{path}"), text.as_bytes());
        }
        let fresh = jadpo_compiler::compile(&loader, "app");
        let Ok(loaded) = load::load_project(&loader, "app") else {
            assert!(
                fresh.program.is_none(),
                "seed {}: only the editor's load failed, after\n{}",
                self.seed,
                self.log.join("\n")
            );
            self.previous = None;
            return;
        };
        let mut diags = loaded.diagnostics.clone();
        let asts = parser::parse_files(&loaded.files, &loaded.all_sources(), &mut diags);
        let program = resolve::resolve_cached(
            &loaded,
            &asts,
            &mut diags,
            &mut self.cache,
            self.previous.as_mut(),
        );
        let kept = format!("{:#?}", (&diags, Some(&program)));
        let afresh = format!("{:#?}", (&fresh.diagnostics, fresh.program.as_ref()));
        if kept != afresh {
            self.fail(&kept, &afresh);
        }
        self.previous = Some(program);
    }

    fn fail(&self, kept: &str, afresh: &str) -> ! {
        let at = (kept.lines().zip(afresh.lines()))
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        let around = |text: &str| -> String {
            let lines: Vec<&str> = text.lines().collect();
            let from = at.saturating_sub(12);
            lines[from..(at + 3).min(lines.len())].join("\n")
        };
        let last = &self.log[self.log.len().saturating_sub(5)..];
        panic!(
            "seed {}: the editor's resolution differs from a fresh one at line {at}, after\n{}\n--- editor\n{}\n--- fresh\n{}",
            self.seed,
            last.join("\n"),
            around(kept),
            around(afresh)
        );
    }
}

/// The words a top-level declaration starts with; the first [`NAMED`]
/// are followed by the name it declares.
const STARTS: [&str; 9] = [
    "type ",
    "failure ",
    "action ",
    "function ",
    "event ",
    "entity ",
    "route ",
    "subscriber ",
    "schedule ",
];
const NAMED: usize = 6;

/// Where each declaration's name is in `text`: (offset, length).
fn declared(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let public = if line.starts_with("public ") { 7 } else { 0 };
        let rest = (STARTS[..NAMED].iter())
            .find_map(|k| Some((public + k.len(), line[public..].strip_prefix(k)?)));
        if let Some((skip, rest)) = rest {
            let len = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            if len > 0 {
                out.push((at + skip, len));
            }
        }
        at += line.len();
    }
    out
}

/// The byte ranges of the top-level declarations of `text`: a line that
/// starts one, to the next line that starts with `}` when it opens a
/// brace it does not close.
fn blocks(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut at = 0;
    let mut open: Option<usize> = None;
    for line in text.split_inclusive('\n') {
        match open {
            None if STARTS.iter().any(|k| line.starts_with(k)) => {
                if line.trim_end().ends_with('{') {
                    open = Some(at);
                } else {
                    out.push((at, at + line.len()));
                }
            }
            Some(start) if line.starts_with('}') => {
                out.push((start, at + line.len()));
                open = None;
            }
            _ => {}
        }
        at += line.len();
    }
    out
}
