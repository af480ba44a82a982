//! Shared helpers for the loader tests: building in-memory apps and rendering
//! load diagnostics minimally (code, summary, the spanned text, line:col).

#![allow(dead_code)]

use jadpo_compiler::diag::{sort_diagnostics, Diagnostic};
pub use jadpo_compiler::load::MemLoader;
use jadpo_compiler::load::{load_project_with, Bundled, Fatal, LoadedProject};
use jadpo_compiler::source::Files;
use jadpo_compiler::span::Span;

/// An empty standard library and no bundled packages.
pub fn no_bundled() -> &'static MemLoader {
    static EMPTY: std::sync::OnceLock<MemLoader> = std::sync::OnceLock::new();
    EMPTY.get_or_init(MemLoader::new)
}

pub fn empty_bundled() -> Bundled<'static> {
    Bundled {
        stdlib: no_bundled(),
        packages: no_bundled(),
    }
}

/// Loads `app/` from `mem` with the given bundled packages.
pub fn load(mem: &MemLoader, bundled: Bundled) -> Result<LoadedProject, Fatal> {
    load_project_with(mem, "app", bundled)
}

/// An app requiring one package by path, whose `package.yaml` is `yaml`.
pub fn app_with_package(yaml: &str) -> MemLoader {
    MemLoader::new()
        .with(
            "app/jadpo.yaml",
            "app: shop\npackages:\n  mailer: { path: vendor/mailer }\n",
        )
        .with("app/vendor/mailer/package.yaml", yaml)
        .with("app/vendor/mailer/mailer.jadpo", "// types\n")
}

/// Renders the diagnostics of a load, sorted.
pub fn render_load(result: &Result<LoadedProject, Fatal>) -> String {
    match result {
        Ok(p) => render(&p.files, &p.diagnostics),
        Err(f) => format!("FATAL\n{}", render(&f.files, &f.diagnostics)),
    }
}

pub fn render(files: &Files, diags: &[Diagnostic]) -> String {
    let mut diags = diags.to_vec();
    sort_diagnostics(&mut diags);
    let mut out = String::new();
    for d in &diags {
        out.push_str(&format!(
            "{} {}: {}\n",
            d.severity.as_str(),
            d.code,
            d.summary
        ));
        out.push_str(&format!("  --> {}\n", place(files, d.span)));
        if let Some(label) = &d.label {
            out.push_str(&format!("  label: {label}\n"));
        }
        for r in &d.related {
            out.push_str(&format!(
                "  related: {} ({})\n",
                place(files, r.span),
                r.message
            ));
        }
        if let Some(reason) = &d.reason {
            out.push_str(&format!("  reason: {reason}\n"));
        }
        for f in &d.fixes {
            out.push_str(&format!("  fix: {}\n", f.message));
            for e in &f.edits {
                out.push_str(&format!(
                    "    edit {} -> {:?}\n",
                    place(files, e.span),
                    e.replacement
                ));
            }
        }
        if let Some(help) = &d.help {
            out.push_str(&format!("  help: {help}\n"));
        }
    }
    if out.is_empty() {
        out.push_str("(no diagnostics)\n");
    }
    out
}

/// `path:line:col `spanned text``
pub fn place(files: &Files, span: Span) -> String {
    let file = files.get(span.file);
    let before = file.text.get(..span.start as usize).unwrap_or("");
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("{}:{}:{} `{}`", file.path, line, col, files.slice(span))
}

/// The codes of a load's diagnostics, sorted.
pub fn codes(result: &Result<LoadedProject, Fatal>) -> Vec<&'static str> {
    let diags = match result {
        Ok(p) => &p.diagnostics,
        Err(f) => &f.diagnostics,
    };
    let mut codes: Vec<&'static str> = diags.iter().map(|d| d.code).collect();
    codes.sort();
    codes
}
