//! Our diagnostics as LSP diagnostics: same code, summary and related
//! locations as `jadpo check`, with positions in UTF-16.

use super::text::{LineIndex, Positions};
use super::uri;
use crate::workspace::{Snapshot, Workspace};
use jadpo_compiler::diag::{Diagnostic, Severity};
use jadpo_compiler::span::{FileId, Span};
use lsp_types::{
    DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Range, Uri,
};
use std::collections::{BTreeMap, HashMap};

/// Where a span is, for the editor; `None` for spans in embedded files or
/// outside the files of this snapshot.
pub fn location(project: &Workspace, snap: &Snapshot, span: Span) -> Option<Location> {
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
    snap.files.try_get(span.file)
}

/// One diagnostic for the editor, with the file it belongs in. The message
/// is the summary, then the primary label, reason and fixes, as the human
/// renderer prints them.
pub fn diagnostic(
    project: &Workspace,
    snap: &Snapshot,
    index: &LineIndex,
    d: &Diagnostic,
) -> lsp_types::Diagnostic {
    let range = index.range(d.span.start as usize, d.span.end as usize);
    shown(d, range, |span| location(project, snap, span))
}

/// `d` for the editor, at `range`, with related spans placed by `locate`.
fn shown(
    d: &Diagnostic,
    range: Range,
    locate: impl Fn(Span) -> Option<Location>,
) -> lsp_types::Diagnostic {
    let mut message = d.summary.clone();
    if let Some(label) = &d.label {
        message.push('\n');
        message.push_str(label);
    }
    if let Some(reason) = &d.reason {
        message.push_str("\nreason: ");
        message.push_str(reason);
    }
    for fix in &d.fixes {
        message.push_str("\nfix: ");
        message.push_str(&fix.message);
    }
    if let Some(help) = &d.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    let related: Vec<DiagnosticRelatedInformation> = d
        .related
        .iter()
        .filter_map(|l| {
            Some(DiagnosticRelatedInformation {
                location: locate(l.span)?,
                message: l.message.clone(),
            })
        })
        .collect();
    lsp_types::Diagnostic {
        range,
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

/// A file that diagnostics point into, ready for the editor: its address
/// and the positions of the offsets they name.
struct Placed {
    uri: Uri,
    positions: Positions,
}

/// The diagnostics of the files `keep` picks: the app view, plus the own
/// findings of packages inside the app folder. Files are in path order.
///
/// This runs after every edit over every finding of the app, so each file
/// is placed once (its address made, its offsets converted in one pass)
/// rather than once per diagnostic or related span.
pub fn by_file(
    project: &Workspace,
    snap: &Snapshot,
    keep: impl Fn(FileId) -> bool,
) -> Vec<(Uri, Vec<lsp_types::Diagnostic>)> {
    let all: Vec<&Diagnostic> = snap
        .diagnostics
        .iter()
        .filter(|d| keep(d.span.file))
        .collect();
    let mut groups: BTreeMap<u32, Vec<&Diagnostic>> = BTreeMap::new();
    let mut offsets: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for &d in &all {
        groups.entry(d.span.file.0).or_default().push(d);
        for span in std::iter::once(d.span).chain(d.related.iter().map(|l| l.span)) {
            let wanted = offsets.entry(span.file.0).or_default();
            wanted.extend([span.start as usize, span.end as usize]);
        }
    }
    let placed: HashMap<u32, Placed> = offsets
        .into_iter()
        .filter_map(|(file, wanted)| Some((file, place(project, snap, file, wanted)?)))
        .collect();
    let locate = |span: Span| {
        let p = placed.get(&span.file.0)?;
        let range = p.positions.range(span.start as usize, span.end as usize);
        Some(Location::new(p.uri.clone(), range))
    };
    let mut out = Vec::new();
    for (file, diags) in groups {
        let Some(p) = placed.get(&file) else {
            continue;
        };
        let list = diags
            .iter()
            .map(|d| {
                let range = p
                    .positions
                    .range(d.span.start as usize, d.span.end as usize);
                shown(d, range, locate)
            })
            .collect();
        out.push((p.uri.clone(), list));
    }
    out
}

/// The address of a file and the positions of `wanted` offsets in it;
/// `None` for embedded files and files not in the snapshot.
fn place(project: &Workspace, snap: &Snapshot, file: u32, wanted: Vec<usize>) -> Option<Placed> {
    let source = file_of(snap, Span::new(FileId(file), 0, 0))?;
    let uri = uri::from_path(&project.disk_path(&source.path)?)?;
    let positions = Positions::new(&source.text, wanted);
    Some(Placed { uri, positions })
}
