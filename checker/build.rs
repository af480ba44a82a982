//! Extracts each rule file's `//!` documentation into `OUT_DIR/docs/<code>.md`,
//! so the rule file stays the single source of `jadpo explain`, the spec pages
//! and editor help.

use std::fs;
use std::path::Path;

fn main() {
    let rules = Path::new("src/rules");
    println!("cargo:rerun-if-changed=src/rules");
    let out = match std::env::var("OUT_DIR") {
        Ok(dir) => Path::new(&dir).join("docs"),
        Err(_) => return,
    };
    let _ = fs::create_dir_all(&out);
    let Ok(families) = fs::read_dir(rules) else {
        return;
    };
    for family in families.flatten() {
        let family_path = family.path();
        if !family_path.is_dir() {
            continue;
        }
        println!("cargo:rerun-if-changed={}", family_path.display());
        let family_name = family.file_name().to_string_lossy().to_string();
        let Ok(files) = fs::read_dir(&family_path) else {
            continue;
        };
        for file in files.flatten() {
            let path = file.path();
            let Some(stem) = path.file_stem().map(|s| s.to_string_lossy().to_string()) else {
                continue;
            };
            if path.extension().is_none_or(|e| e != "rs") || stem == "mod" {
                continue;
            }
            println!("cargo:rerun-if-changed={}", path.display());
            let text = fs::read_to_string(&path).unwrap_or_default();
            let doc = doc_of(&text);
            let _ = fs::write(out.join(format!("{family_name}.{stem}.md")), doc);
        }
    }
}

/// The leading `//!` lines with the marker and one space removed.
fn doc_of(text: &str) -> String {
    let mut doc = String::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("//!") else {
            break;
        };
        doc.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        doc.push('\n');
    }
    doc
}
