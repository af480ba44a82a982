//! Builds the table of the front end's diagnostic codes from their
//! documentation: one Markdown file per code, `codes/<family>/<name>.md`,
//! whose first line is `# <family>.<name>: <summary>`. The file is the
//! single source of the code's summary and of `jadpo explain`.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("codes");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut rows: Vec<(String, String, String)> = Vec::new();
    let mut families: Vec<_> = fs::read_dir(&root)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    families.sort();
    for family in families.iter().filter(|p| p.is_dir()) {
        println!("cargo:rerun-if-changed={}", family.display());
        let mut files: Vec<_> = fs::read_dir(family)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort();
        for file in files
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
        {
            println!("cargo:rerun-if-changed={}", file.display());
            let text = fs::read_to_string(file).unwrap_or_default();
            let (code, summary) = heading(&text);
            rows.push((code, summary, file.display().to_string()));
        }
    }
    let mut out = String::from("/// Every diagnostic code of the front end, sorted by code.\npub static CODES: &[CodeInfo] = &[\n");
    for (code, summary, path) in rows {
        let severity = "Error";
        let _ = writeln!(
            out,
            "    CodeInfo {{ code: {code:?}, severity: Severity::{severity}, summary: {summary:?}, doc: include_str!({path:?}) }},"
        );
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap_or_default()).join("codes.rs");
    let _ = fs::write(dest, out);
}

/// `# type.mismatch: a value ...` as its code and summary.
fn heading(text: &str) -> (String, String) {
    let first = text.lines().next().unwrap_or_default();
    let rest = first.trim_start_matches('#').trim();
    match rest.split_once(": ") {
        Some((code, summary)) => (code.to_string(), summary.to_string()),
        None => (rest.to_string(), String::new()),
    }
}
