//! Go to definition, find references and document symbols.

use super::convert::{file_of, range};
use super::find;
use super::uri;
use crate::workspace::{Snapshot, Workspace};
use jadpo_compiler::ast::{Ident, Item, SourceFileAst};
use jadpo_compiler::ir::Target;
use jadpo_compiler::source::Unit;
use jadpo_compiler::span::{FileId, Span};
use lsp_types::{DocumentSymbol, Location, SymbolKind};

/// Where the thing at a position is declared: an action, an operation's
/// entry in `package.yaml`, an entity, or (by name) a declaration.
pub fn definition(
    project: &Workspace,
    snap: &Snapshot,
    file: FileId,
    offset: usize,
) -> Option<Location> {
    let span = definition_span(snap, file, offset)?;
    located(project, snap, span)
}

fn definition_span(snap: &Snapshot, file: FileId, offset: usize) -> Option<Span> {
    if let Some(program) = &snap.program {
        if let Some((_, effect)) = find::effect_at(program, file, offset) {
            // A call's callee is the start of the call; arguments are other
            // things, found by name below.
            let callee_end = effect_callee_end(snap, effect.span);
            if offset <= callee_end {
                return Some(match &effect.target {
                    Target::Op(op) => program.op(*op).span,
                    Target::Action(a) => program.action(*a).name_span,
                    Target::Write(w) => program.entity(w.entity).span,
                    Target::Check(c) => match c.query {
                        Some(entity) => program.entity(entity).span,
                        None => return None,
                    },
                });
            }
        }
        if let Some(a) = find::entry_run_at(program, file, offset) {
            let entry_callee = by_name(snap, file, offset);
            if entry_callee.is_none() {
                return Some(program.action(a).name_span);
            }
        }
    }
    by_name(snap, file, offset)
}

/// The end of the callee in a call's text (`stripe.customers.create` in
/// `stripe.customers.create(x)`), or the whole span for a write.
fn effect_callee_end(snap: &Snapshot, span: Span) -> usize {
    let Some(file) = file_of(snap, span) else {
        return span.end as usize;
    };
    let text = file.text.get(span.range()).unwrap_or("");
    let open = text.find(['(', '{']).unwrap_or(text.len());
    span.start as usize + open
}

/// The declaration named by the dotted name at a position: `stripe.Email`
/// looks in package `stripe`, a plain name in the app and the stdlib.
fn by_name(snap: &Snapshot, file: FileId, offset: usize) -> Option<Span> {
    let text = &file_of(snap, Span::new(file, 0, 0))?.text;
    let word = dotted_word(text, offset)?;
    let mut segments: Vec<&str> = word.split('.').collect();
    let last = segments.pop()?;
    let package = segments.first().copied();
    let here = &file_of(snap, Span::new(file, 0, 0))?.unit;
    let mut found: Vec<(u8, Span)> = Vec::new();
    for ast in &snap.asts {
        let Some(unit) = file_of(snap, Span::new(ast.file, 0, 0)).map(|f| &f.unit) else {
            continue;
        };
        let rank = match (package, unit) {
            (Some(p), Unit::Package(name)) if p == name => 0,
            (Some(_), _) => continue,
            (None, u) if u == here => 0,
            (None, Unit::Stdlib) => 1,
            (None, _) => continue,
        };
        for (ident, _, _) in declarations(ast) {
            if ident.name.as_str() == last {
                found.push((rank, ident.span));
            }
        }
    }
    found.sort();
    found.first().map(|(_, span)| *span)
}

/// The `a.b.c` name around `offset`, cut after the segment under it.
fn dotted_word(text: &str, offset: usize) -> Option<&str> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let offset = offset.min(text.len());
    let before = text.get(..offset)?;
    let start = before
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_word(*c) || *c == '.')
        .last()
        .map_or(offset, |(i, _)| i);
    let after = text.get(offset..)?;
    let end = offset + after.find(|c: char| !is_word(c)).unwrap_or(after.len());
    text.get(start..end)
        .map(|w| w.trim_matches('.'))
        .filter(|w| !w.is_empty())
}

/// Every call of the action at a position (and its declaration, when asked).
pub fn references(
    project: &Workspace,
    snap: &Snapshot,
    file: FileId,
    offset: usize,
    include_declaration: bool,
) -> Vec<Location> {
    let Some(program) = &snap.program else {
        return Vec::new();
    };
    let Some(id) = find::action_at(program, file, offset) else {
        return Vec::new();
    };
    let mut spans = Vec::new();
    if include_declaration {
        spans.push(program.action(id).name_span);
    }
    spans.extend(find::calls_of(program, id));
    spans
        .into_iter()
        .filter_map(|s| located(project, snap, s))
        .collect()
}

/// A location the editor can open: files on disk as they are, embedded
/// files (the standard library, bundled packages) copied to a private,
/// read-only folder first (`bundled.rs`).
pub fn located(project: &Workspace, snap: &Snapshot, span: Span) -> Option<Location> {
    let file = file_of(snap, span)?;
    let path = match project.disk_path(&file.path) {
        Some(path) => path,
        None => super::bundled::materialize(&file.path, &file.text)?,
    };
    Some(Location::new(
        uri::from_path(&path)?,
        range(&file.text, span),
    ))
}

/// The declarations of one file: name, kind and whole span.
fn declarations(ast: &SourceFileAst) -> Vec<(Ident, SymbolKind, Span)> {
    ast.items
        .iter()
        .filter_map(|item| {
            Some(match item {
                Item::Application(d) => (d.name, SymbolKind::MODULE, d.span),
                Item::Config(d) => (d.name, SymbolKind::STRUCT, d.span),
                Item::Store(d) => (d.name, SymbolKind::OBJECT, d.span),
                Item::Type(d) => (d.name, SymbolKind::CLASS, d.span),
                Item::Entity(d) => (d.name, SymbolKind::STRUCT, d.span),
                Item::Failure(d) => (d.name, SymbolKind::ENUM_MEMBER, d.span),
                Item::Event(d) => (d.name, SymbolKind::EVENT, d.span),
                Item::Action(d) => (d.name, SymbolKind::FUNCTION, d.span),
                Item::Function(d) => (d.name, SymbolKind::FUNCTION, d.span),
                Item::Subscriber(d) => (d.name, SymbolKind::INTERFACE, d.span),
                Item::Schedule(d) => (d.name, SymbolKind::INTERFACE, d.span),
                Item::Fixture(d) => (d.name, SymbolKind::CONSTANT, d.span),
                Item::Route(_) | Item::Test(_) | Item::Error(_) => return None,
            })
        })
        .collect()
}

/// The outline of one file: its declarations and entry points in order.
pub fn symbols(snap: &Snapshot, file: FileId) -> Vec<DocumentSymbol> {
    let Some(source) = file_of(snap, Span::new(file, 0, 0)) else {
        return Vec::new();
    };
    let Some(ast) = snap.asts.iter().find(|a| a.file == file) else {
        return Vec::new();
    };
    let text = &source.text;
    let mut out: Vec<(Span, DocumentSymbol)> = declarations(ast)
        .into_iter()
        .map(|(ident, kind, span)| {
            (
                span,
                symbol(
                    ident.name.as_str().to_string(),
                    kind,
                    range(text, span),
                    range(text, ident.span),
                ),
            )
        })
        .collect();
    for item in &ast.items {
        if let Item::Route(route) = item {
            let name = format!("route {} {}", route.method.name, route.path);
            let selection = route.method.span.to(route.path_span);
            out.push((
                route.span,
                symbol(
                    name,
                    SymbolKind::METHOD,
                    range(text, route.span),
                    range(text, selection),
                ),
            ));
        }
    }
    out.sort_by_key(|(span, _)| *span);
    out.into_iter().map(|(_, s)| s).collect()
}

#[allow(deprecated)] // `deprecated` is a required field of the struct
fn symbol(
    name: String,
    kind: SymbolKind,
    range: lsp_types::Range,
    selection: lsp_types::Range,
) -> DocumentSymbol {
    DocumentSymbol {
        name,
        detail: None,
        kind,
        tags: None,
        deprecated: None,
        range,
        selection_range: selection,
        children: None,
    }
}
