//! Runs the parser alone on `tests/fixtures/syntax/**/fail_*.jadpo`: checks
//! the inline `// ^^^ syntax.code` annotations against the parser's
//! diagnostics and snapshots a plain rendering of each message.

use jadpo_compiler::diag::Diagnostic;
use jadpo_compiler::parser::parse_file;
use jadpo_compiler::span::FileId;
use std::path::{Path, PathBuf};

fn fixture_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            fixture_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "jadpo") {
            out.push(path);
        }
    }
}

/// (byte offset of the first caret's column on the annotated line, code)
fn annotations(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut line_start = 0;
    let mut target: Option<usize> = None;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let is_annotation = trimmed.starts_with("//") && trimmed[2..].trim_start().starts_with('^');
        if is_annotation {
            let caret = line.find('^').unwrap_or(0);
            let code = line[caret..].trim_start_matches('^').trim().to_string();
            if let Some(target) = target {
                found.push((target + caret, code));
            }
        } else {
            target = Some(line_start);
        }
        line_start += line.len();
    }
    found
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

fn render(text: &str, diags: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in diags {
        let (line, col) = line_col(text, d.span.start as usize);
        out.push_str(&format!("{} at {line}:{col}: {}\n", d.code, d.summary));
        if let Some(label) = &d.label {
            out.push_str(&format!("  label: {label}\n"));
        }
        for related in &d.related {
            let (line, col) = line_col(text, related.span.start as usize);
            out.push_str(&format!("  related {line}:{col}: {}\n", related.message));
        }
        if let Some(reason) = &d.reason {
            out.push_str(&format!("  reason: {reason}\n"));
        }
        for fix in &d.fixes {
            out.push_str(&format!("  fix: {}\n", fix.message));
        }
    }
    out
}

#[test]
fn syntax_fixtures_match_their_annotations() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/syntax");
    let mut files = Vec::new();
    fixture_files(&root, &mut files);
    assert!(!files.is_empty(), "no syntax fixtures found under {root:?}");
    let mut problems = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let (_, mut diags) = parse_file(FileId(0), &text);
        diags.sort_by_key(|d| (d.span.start, d.code));
        let expected = annotations(&text);
        let actual: Vec<(usize, String)> = diags
            .iter()
            .map(|d| (d.span.start as usize, d.code.to_string()))
            .collect();
        let name = path
            .strip_prefix(&root)
            .unwrap_or(path)
            .display()
            .to_string();
        let is_pass = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("pass_"));
        if is_pass && !diags.is_empty() || expected != actual {
            problems.push(format!(
                "{name}: expected {expected:?}, got {actual:?}\n{}",
                render(&text, &diags)
            ));
        }
        let snapshot_name = name.replace(['/', '\\'], "__").replace(".jadpo", "");
        insta::assert_snapshot!(
            format!("syntax__{snapshot_name}"),
            format!("{text}\n----\n{}", render(&text, &diags))
        );
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
