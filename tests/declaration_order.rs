//! Declarations are read in any order (spec/language.md, section 1): the
//! app files of every fixture, their declarations reversed, give the same
//! diagnostic codes. Which of two declarations is "first" (a duplicate, a
//! cycle's start) may change; what is wrong may not.

use crate::common::{fixtures_dir, Fixture};
use jadpo_compiler::span::FileId;
use std::path::{Path, PathBuf};

#[test]
fn reversing_declarations_changes_no_diagnostic_code() {
    let mut fixtures = Vec::new();
    find_fixtures(&fixtures_dir(), &mut fixtures);
    fixtures.sort();
    let mut differ = Vec::new();
    let mut reversed = 0;
    for path in fixtures {
        let fixture = Fixture::load(&path);
        let Some(other) = with_declarations_reversed(&fixture) else {
            continue;
        };
        reversed += 1;
        let (before, after) = (codes(&fixture), codes(&other));
        if before != after {
            differ.push(format!("{}: {before:?} became {after:?}", fixture.name()));
        }
    }
    assert!(reversed > 150, "only {reversed} fixtures were reversed");
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// The fixture with each of its app files' declarations in reverse order;
/// `None` when no file holds two or more (or one has a syntax error).
fn with_declarations_reversed(fixture: &Fixture) -> Option<Fixture> {
    let mut other = fixture.clone();
    let mut changed = false;
    for (path, text) in &fixture.files {
        let package = path.starts_with("packages/") || path.starts_with("vendor/");
        if package || !path.ends_with(".jadpo") {
            continue;
        }
        if let Some(text) = reversed(text) {
            other.files.insert(path.clone(), text);
            changed = true;
        }
    }
    changed.then_some(other)
}

fn reversed(text: &str) -> Option<String> {
    let (ast, diags) = jadpo_compiler::parser::parse_file(FileId(0), text);
    if !diags.is_empty() || ast.items.len() < 2 {
        return None;
    }
    let items: Option<Vec<&str>> = (ast.items.iter().rev())
        .map(|item| text.get(item.span().start as usize..item.span().end as usize))
        .collect();
    Some(items?.join("\n\n") + "\n")
}

fn codes(fixture: &Fixture) -> Vec<&'static str> {
    let mut codes: Vec<&'static str> = (fixture.check().diagnostics.iter())
        .map(|d| d.code)
        .collect();
    codes.sort_unstable();
    codes
}

fn find_fixtures(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for path in entries.flatten().map(|e| e.path()) {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let fixture = name.is_some_and(|n| {
            (n.starts_with("pass_") || n.starts_with("fail_"))
                && (path.is_dir() || n.ends_with(".jadpo"))
        });
        if fixture {
            out.push(path);
        } else if path.is_dir() {
            find_fixtures(&path, out);
        }
    }
}
