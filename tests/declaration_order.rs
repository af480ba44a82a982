//! Declarations are read in any order (spec/language.md, section 1): every
//! fixture, its app files read in reverse order and each one's
//! declarations reversed, gives the same diagnostic codes. Which of two declarations is "first" (a duplicate, a
//! cycle's start) may change; what is wrong may not.

use crate::common::{all_fixtures, Fixture};
use jadpo_compiler::span::FileId;

#[test]
fn reversing_declarations_changes_no_diagnostic_code() {
    let mut differ = Vec::new();
    let mut reversed = 0;
    for fixture in all_fixtures() {
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

/// The fixture with its app files read in reverse order (renamed so, in
/// one folder: an app's folders mean nothing) and each one's declarations
/// reversed; `None` when nothing moved (or a file has a syntax error).
fn with_declarations_reversed(fixture: &Fixture) -> Option<Fixture> {
    let mut other = fixture.clone();
    let sources: Vec<(&String, &String)> = (fixture.files.iter())
        .filter(|(path, _)| {
            let package = path.starts_with("packages/") || path.starts_with("vendor/");
            !package && path.ends_with(".jadpo")
        })
        .collect();
    let mut changed = sources.len() > 1;
    for (i, (path, text)) in sources.iter().enumerate() {
        let text = match reversed(text) {
            Some(text) => {
                changed = true;
                text
            }
            None => text.to_string(),
        };
        if sources.len() > 1 {
            other.files.remove(*path);
            let name = path.replace('/', "_");
            let place = sources.len() - i;
            other
                .files
                .insert(format!("reversed_{place:04}_{name}"), text);
        } else {
            other.files.insert(path.to_string(), text);
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
