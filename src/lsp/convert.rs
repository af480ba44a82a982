//! Our diagnostics as LSP diagnostics: same code, summary and related
//! locations as `jadpo check`, with positions in UTF-16.

use super::project::{Project, Snapshot};
use super::text::LineIndex;
use super::uri;
use jadpo_compiler::diag::{Diagnostic, Severity};
use jadpo_compiler::span::Span;
use lsp_types::{
    DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Range, Uri,
};

/// Where a span is, for the editor; `None` for spans in embedded files or
/// outside the files of this snapshot.
pub fn location(project: &Project, snap: &Snapshot, span: Span) -> Option<Location> {
    let file = file_of(snap, span)?;
    let path = project.disk_path(&file.path)?;
    let uri = uri::from_path(&path)?;
    Some(Location::new(uri, range(&file.text, span)))
}

/// The span as a range in its file's text.
pub fn range(text: &str, span: Span) -> Range {
    LineIndex::new(text).range(span.start as usize, span.end as usize)
}

pub fn file_of(snap: &Snapshot, span: Span) -> Option<&jadpo_compiler::source::SourceFile> {
    ((span.file.0 as usize) < snap.files.len()).then(|| snap.files.get(span.file))
}

/// One diagnostic for the editor, with the file it belongs in. The message
/// is the summary, then the primary label, reason and fixes, as the human
/// renderer prints them.
pub fn diagnostic(
    project: &Project,
    snap: &Snapshot,
    index: &LineIndex,
    d: &Diagnostic,
) -> lsp_types::Diagnostic {
    let mut message = d.summary.clone();
    if let Some(label) = &d.label {
        message.push_str(&format!("\n{label}"));
    }
    if let Some(reason) = &d.reason {
        message.push_str(&format!("\nreason: {reason}"));
    }
    for fix in &d.fixes {
        message.push_str(&format!("\nfix: {}", fix.message));
    }
    if let Some(help) = &d.help {
        message.push_str(&format!("\nhelp: {help}"));
    }
    let related: Vec<DiagnosticRelatedInformation> = d
        .related
        .iter()
        .filter_map(|l| {
            Some(DiagnosticRelatedInformation {
                location: location(project, snap, l.span)?,
                message: l.message.clone(),
            })
        })
        .collect();
    lsp_types::Diagnostic {
        range: index.range(d.span.start as usize, d.span.end as usize),
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(d.code.to_string())),
        source: Some("jadpo".to_string()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        ..lsp_types::Diagnostic::default()
    }
}

/// Every file's diagnostics: the app view, plus the own findings of
/// packages inside the app folder. Files are in path order.
pub fn by_file(project: &Project, snap: &Snapshot) -> Vec<(Uri, Vec<lsp_types::Diagnostic>)> {
    let mut groups: std::collections::BTreeMap<u32, Vec<&Diagnostic>> = Default::default();
    for d in snap.diagnostics.iter().chain(&snap.package_diagnostics) {
        groups.entry(d.span.file.0).or_default().push(d);
    }
    let mut out = Vec::new();
    for (file, diags) in groups {
        let Some(source) = file_of(snap, Span::new(jadpo_compiler::span::FileId(file), 0, 0))
        else {
            continue;
        };
        let Some(uri) = project
            .disk_path(&source.path)
            .and_then(|p| uri::from_path(&p))
        else {
            continue;
        };
        let index = LineIndex::new(&source.text);
        let list = diags
            .iter()
            .map(|d| diagnostic(project, snap, &index, d))
            .collect();
        out.push((uri, list));
    }
    out
}
