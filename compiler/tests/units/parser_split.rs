//! Differential test of `parser::split::parse`: every fixture and example, damaged
//! at seeded random places, must give exactly the AST and diagnostics of the
//! full grammar over the whole file.

use crate::differ::difference;
use jadpo_compiler::lexer;
use jadpo_compiler::parser::{self, parse_split, parse_whole_full};
use jadpo_compiler::span::FileId;
use rayon::prelude::*;
use std::path::PathBuf;

/// A small seeded generator (xorshift), so failures can be replayed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        if n == 0 {
            0
        } else {
            (self.0 % n as u64) as usize
        }
    }
}

fn sources() -> Vec<(PathBuf, String)> {
    let mut stack = vec![
        PathBuf::from("../tests/fixtures"),
        PathBuf::from("../examples"),
    ];
    let mut found = Vec::new();
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).into_iter().flatten().flatten() {
                stack.push(entry.path());
            }
        } else if path.extension().is_some_and(|e| e == "jadpo") {
            if let Ok(text) = std::fs::read_to_string(&path) {
                found.push((path, text));
            }
        }
    }
    found.sort();
    // Small files are mostly read whole; joined files have many pieces
    // before and after the damage.
    let mut rng = Rng(7);
    let singles = found.len();
    for n in 0..singles / 2 {
        let mut joined = String::new();
        for _ in 0..12 {
            if let Some((_, text)) = found.get(rng.below(singles)) {
                joined.push_str(text);
                joined.push('\n');
            }
        }
        found.push((PathBuf::from(format!("joined-{n}")), joined));
    }
    found
}

const STRAYS: [&str; 16] = [
    "action", "if", "}", "{", "(", ")", "=", "->", "var", "fails", ",", ".", ":", "store",
    "type X =", "else",
];

/// `text` with one small piece of damage.
fn damage(text: &str, rng: &mut Rng) -> String {
    let tokens = lexer::lex(FileId(0), text).tokens;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = text.to_string();
    match rng.below(6) {
        0 => {
            if let Some(t) = tokens.get(rng.below(tokens.len())) {
                out.replace_range(t.span.range(), "");
            }
        }
        1 => {
            let at = rng.below(lines.len());
            let mut copy: Vec<&str> = lines.clone();
            if let Some(line) = lines.get(at) {
                copy.insert(at, line);
            }
            out = copy.concat();
        }
        2 => {
            let braces: Vec<usize> = text.match_indices('}').map(|(i, _)| i).collect();
            if let Some(&at) = braces.get(rng.below(braces.len())) {
                out.replace_range(at..at + 1, "");
            }
        }
        3 => {
            let stray = STRAYS[rng.below(STRAYS.len())];
            if let Some(t) = tokens.get(rng.below(tokens.len())) {
                out.insert_str(t.span.start as usize, &format!("{stray} "));
            }
        }
        4 => {
            let stray = STRAYS[rng.below(STRAYS.len())];
            let at = rng.below(lines.len());
            let mut copy: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            copy.insert(at, format!("{stray}\n"));
            out = copy.concat();
        }
        _ => {
            let at = rng.below(lines.len());
            let mut copy: Vec<&str> = lines.clone();
            if at < copy.len() {
                copy.remove(at);
            }
            out = copy.concat();
        }
    }
    out
}

/// Both paths on `text`; the message names the difference.
fn compare(text: &str, group_tokens: usize) -> Result<(), String> {
    let (split_ast, split_diags) = parse_split(FileId(0), text, group_tokens);
    let (whole_ast, whole_diags) = parse_whole_full(FileId(0), text);
    if split_diags != whole_diags {
        return Err(format!(
            "diagnostics differ\nsplit: {split_diags:#?}\nwhole: {whole_diags:#?}"
        ));
    }
    match difference(&split_ast, &whole_ast) {
        Some((at, split, whole)) => Err(format!(
            "ASTs differ (groups of {group_tokens} tokens) at line {at}\nsplit:\n{split}\nwhole:\n{whole}"
        )),
        None => Ok(()),
    }
}

/// One text to compare: where it came from and the size of its groups.
struct Case {
    name: String,
    text: String,
    group_tokens: usize,
}

/// Every file undamaged (cut into pieces of every size), then damaged
/// `rounds` times each. The damage is drawn in order from one seeded
/// generator; only the comparisons run in parallel.
fn cases(rounds: usize) -> Vec<Case> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut cases = Vec::new();
    for (path, text) in sources() {
        for group_tokens in [1, 40, parser::GROUP_TOKENS] {
            cases.push(Case {
                name: format!("{} undamaged", path.display()),
                text: text.clone(),
                group_tokens,
            });
        }
        for round in 0..rounds {
            let mut broken = damage(&text, &mut rng);
            if round % 3 == 2 {
                broken = damage(&broken, &mut rng);
            }
            // Groups of one piece, of a few, and of the real size.
            cases.push(Case {
                name: format!("{} round {round}", path.display()),
                text: broken,
                group_tokens: [1, 40, parser::GROUP_TOKENS][round % 3],
            });
        }
    }
    cases
}

/// How many damaged texts the split path read with errors, and every
/// difference found.
fn run_all(rounds: usize) -> (usize, Vec<String>) {
    let cases = cases(rounds);
    let split_used = cases
        .par_iter()
        .filter(|c| !c.name.ends_with(" undamaged"))
        .filter(|c| parser::split_found_errors(FileId(0), &c.text, c.group_tokens))
        .count();
    let failures = cases
        .par_iter()
        .filter_map(|c| {
            compare(&c.text, c.group_tokens)
                .err()
                .map(|why| format!("{}: {why}\n--- text ---\n{}", c.name, c.text))
        })
        .collect();
    (split_used, failures)
}

#[test]
fn split_parse_matches_the_whole_file_parse_on_damaged_files() {
    let rounds = std::env::var("JADPO_SPLIT_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(6);
    let run = move || run_all(rounds);
    let (split_used, failures) = parser::install(run);
    eprintln!(
        "split path used {split_used} times, {} differ",
        failures.len()
    );
    assert!(
        rounds == 0 || split_used > 1000,
        "the split path was used only {split_used} times"
    );
    assert!(
        failures.is_empty(),
        "{} of the damaged files differ; first:\n{}",
        failures.len(),
        failures
            .iter()
            .take(3)
            .map(|f| f.chars().take(3000).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n=====\n")
    );
}
