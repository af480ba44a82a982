//! `textDocument/completion`: what can be written at the cursor, read from
//! the last analysis (the program) and the text before the cursor.
//!
//! - after `pkg.`: the package's operations (whether each changes and is
//!   keyed), and its types, failures and public actions;
//! - inside `T { ... }` where a field name goes: the fields of `T` not yet
//!   given, with their types;
//! - after `failure ` in a `match` over a call: the failures the call can
//!   end with that no arm handles yet;
//! - at the start of a setting: the settings of a route, subscriber,
//!   schedule or fixture, and the options of `emit ... with {`, that are
//!   not given yet; after `where:` or `set: {` of `update`, `delete` or
//!   `query`: the entity's fields;
//! - elsewhere: the names in scope at the cursor (innermost first; see
//!   [`scope`]), then the app's actions, functions, types,
//!   failures, events and entities, and the packages.

use jadpo_compiler::ast::SourceFileAst;
use jadpo_compiler::ir::{Owner, Program, Ty, TypeId, TypeKind};

use super::scope;
use lsp_types::{CompletionItem, CompletionItemKind};

/// The completion items at byte `offset` of `text`.
pub fn complete(
    program: &Program,
    ast: &SourceFileAst,
    text: &str,
    offset: usize,
) -> Vec<CompletionItem> {
    let before = text.get(..offset).unwrap_or(text);
    let word = trailing_word(before);
    if let Some((qualifier, _)) = word.rsplit_once('.') {
        return qualified(program, qualifier);
    }
    let at_word = &before[..before.len() - word.len()];
    if at_word.trim_end().ends_with("failure") && at_word.ends_with(' ') {
        if let Some(items) = unhandled(program, at_word) {
            return items;
        }
    }
    if let Some(items) = settings(program, at_word) {
        return items;
    }
    if let Some((ty, given)) = open_construction(program, at_word) {
        return fields(program, ty, &given);
    }
    let mut items: Vec<CompletionItem> = scope::locals(ast, text, offset as u32)
        .into_iter()
        .rev()
        .map(|l| item(l.name, CompletionItemKind::VARIABLE, l.detail))
        .collect();
    items.extend(globals(program));
    let mut seen = std::collections::HashSet::new();
    items.retain(|i| seen.insert(i.label.clone()));
    items
}

/// The name (with dots) ending at the cursor.
fn trailing_word(before: &str) -> &str {
    let start = before
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_alphanumeric() || *c == '_' || *c == '.')
        .last()
        .map_or(before.len(), |(i, _)| i);
    &before[start..]
}

fn item(label: String, kind: CompletionItemKind, detail: String) -> CompletionItem {
    CompletionItem {
        label,
        kind: Some(kind),
        detail: Some(detail),
        ..CompletionItem::default()
    }
}

/// After `pkg.`: what the package offers an app.
fn qualified(program: &Program, qualifier: &str) -> Vec<CompletionItem> {
    let Some(pkg) = program.packages.find_id(|p| p.name.as_str() == qualifier) else {
        return Vec::new();
    };
    let mine = |owner: &Owner| matches!(owner, Owner::Package(p) if *p == pkg);
    let keyed = program.packages[pkg]
        .idempotency
        .as_ref()
        .map(|i| i.header.clone());
    let mut items = Vec::new();
    for op in program.operations.iter().filter(|o| o.package == pkg) {
        let how = match (op.changes, op.keyed, &keyed) {
            (false, ..) => "a read".to_string(),
            (true, true, Some(header)) => format!("changes; keyed ({header})"),
            (true, _, _) if op.idempotent => "changes; safe to repeat".to_string(),
            (true, ..) => "changes; unkeyed".to_string(),
        };
        let detail = format!(
            "operation({}) -> {}: {how}",
            program.type_name(&op.request),
            program.type_name(&op.answer)
        );
        items.push(item(op.name.clone(), CompletionItemKind::METHOD, detail));
    }
    for (i, t) in program.types.iter().enumerate() {
        if mine(&t.owner) && t.span.is_some() {
            let detail = program.type_name(&Ty::Named(TypeId(i as u32)));
            items.push(item(
                t.name.as_str().to_string(),
                CompletionItemKind::STRUCT,
                detail,
            ));
        }
    }
    for f in program.failures.iter().filter(|f| mine(&f.owner)) {
        let name = f.qualified.rsplit('.').next().unwrap_or(&f.qualified);
        items.push(item(
            name.to_string(),
            CompletionItemKind::EVENT,
            format!("failure ({:?})", f.kind),
        ));
    }
    for a in program
        .actions
        .iter()
        .filter(|a| mine(&a.owner) && a.public)
    {
        items.push(item(
            a.name.as_str().to_string(),
            CompletionItemKind::FUNCTION,
            "public action".into(),
        ));
    }
    items
}

/// The innermost `T {` still open before the cursor, where a field name
/// goes next, with the fields already given.
fn open_construction(program: &Program, before: &str) -> Option<(TypeId, Vec<String>)> {
    let (head, body) = open_brace(before)?;
    let ty = record_named(program, trailing_word(head.trim_end()))?;
    // A field name goes at the start of an entry: after `{`, a line break,
    // or a finished `name: value`.
    let last = body.rsplit('\n').next().unwrap_or(body);
    let finished = |c: char| c == '}' || c.is_alphanumeric() || c == '"';
    if last.contains(':') && !last.trim_end().ends_with(finished) {
        return None;
    }
    Some((ty, given_fields(body)))
}

/// `name:` at the top level of a construction's text so far.
fn given_fields(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut word_start = None;
    for (i, c) in body.char_indices() {
        match c {
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => depth = depth.saturating_sub(1),
            ':' if depth == 0 => {
                if let Some(s) = word_start {
                    out.push(body[s..i].trim().to_string());
                }
            }
            _ => {}
        }
        if c.is_alphanumeric() || c == '_' {
            if word_start.is_none() {
                word_start = Some(i);
            }
        } else if c != ':' {
            word_start = None;
        }
    }
    out
}

/// The innermost `{` open before `at`, with the text before it and after.
fn open_brace(at: &str) -> Option<(&str, &str)> {
    let bytes = at.as_bytes();
    let mut depth = 0usize;
    for i in (0..bytes.len()).rev() {
        match bytes[i] {
            b'}' => depth += 1,
            b'{' if depth > 0 => depth -= 1,
            b'{' => return Some((&at[..i], &at[i + 1..])),
            _ => {}
        }
    }
    None
}

/// At the start of an entry (after `{`, or on a fresh line).
fn at_entry_start(body: &str) -> bool {
    let last = body.rsplit('\n').next().unwrap_or(body);
    last.trim().is_empty() || body.trim().is_empty()
}

/// Settings of a route, subscriber, schedule or fixture, the options of
/// `emit ... with {`, and the entity's fields in `where:` / `set: {`.
fn settings(program: &Program, at: &str) -> Option<Vec<CompletionItem>> {
    let (head, body) = open_brace(at)?;
    let line = head.rsplit('\n').next().unwrap_or(head).trim_start();
    let keys: Vec<&str> = if line.starts_with("route ") {
        jadpo_compiler::resolve::ROUTE_KEYS.to_vec()
    } else if line.starts_with("subscriber ") || line.starts_with("schedule ") {
        vec!["run"]
    } else if line.starts_with("fixture ") {
        let mut keys = jadpo_compiler::resolve::FIXTURE_SETTINGS.to_vec();
        keys.push("fake");
        keys
    } else if head.trim_end().ends_with("with") {
        jadpo_compiler::resolve::EMIT_OPTIONS.to_vec()
    } else if let Some(entity) = write_target(line) {
        return Some(entity_fields(program, entity, body));
    } else {
        return None;
    };
    if !at_entry_start(body) {
        return None;
    }
    let given = given_fields(body);
    Some(
        keys.into_iter()
            .filter(|k| !given.iter().any(|g| g == k))
            .map(|k| {
                let mut it = item(
                    k.to_string(),
                    CompletionItemKind::PROPERTY,
                    "setting".into(),
                );
                if k != "fake" {
                    it.insert_text = Some(format!("{k}: "));
                }
                it
            })
            .collect(),
    )
}

/// The entity of `update E {`, `delete E {` or `query MODE E {`.
fn write_target(line: &str) -> Option<&str> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| matches!(*w, "update" | "delete" | "query"))?;
    let skip = if words[at] == "query" { 2 } else { 1 };
    words.get(at + skip).copied()
}

/// The entity's fields after `where:` or inside `set: {`.
fn entity_fields(program: &Program, entity: &str, body: &str) -> Vec<CompletionItem> {
    let Some(e) = program.entities.iter().find(|e| e.qualified == entity) else {
        return Vec::new();
    };
    let wants_field = body.trim_end().ends_with("where:")
        || body.trim_end().ends_with("set: {")
        || body.ends_with("{ ");
    if !wants_field {
        return Vec::new();
    }
    fields(program, e.ty, &[])
}

/// After `failure ` in a `match` over a call: the failures the call can
/// end with that no arm handles yet.
fn unhandled(program: &Program, at: &str) -> Option<Vec<CompletionItem>> {
    let (head, body) = open_brace(at)?;
    let scrutinee = head.rsplit("match ").next()?.trim();
    let scrutinee = scrutinee.strip_prefix("attempt ").unwrap_or(scrutinee);
    let callee = scrutinee.split('(').next()?.trim();
    let failures: Vec<&str> = match callee.split_once('.') {
        Some((pkg, op)) => {
            let p = program
                .packages
                .iter()
                .position(|k| k.name.as_str() == pkg)?;
            let op = program
                .operations
                .iter()
                .find(|o| o.package.0 as usize == p && o.name == op)?;
            op.failures
                .iter()
                .map(|f| program.failure(*f).qualified.as_str())
                .collect()
        }
        None => {
            let a = program
                .actions
                .iter()
                .find(|a| a.owner == Owner::App && a.name.as_str() == callee)?;
            a.fails
                .iter()
                .map(|(f, _)| program.failure(*f).qualified.as_str())
                .collect()
        }
    };
    let handled: Vec<&str> = body
        .split("failure ")
        .skip(1)
        .filter_map(|rest| rest.split_whitespace().next())
        .collect();
    Some(
        failures
            .into_iter()
            .filter(|f| !handled.contains(f))
            .map(|f| {
                item(
                    f.to_string(),
                    CompletionItemKind::EVENT,
                    "failure not handled yet".into(),
                )
            })
            .collect(),
    )
}

/// The record type written `name` (`Paid`, `stripe.CustomerCreate`).
fn record_named(program: &Program, name: &str) -> Option<TypeId> {
    let (pkg, short) = match name.rsplit_once('.') {
        Some((p, s)) => (Some(p), s),
        None => (None, name),
    };
    program.types.iter().enumerate().find_map(|(i, t)| {
        let owner_ok = match (&t.owner, pkg) {
            (Owner::App, None) => true,
            (Owner::Package(p), Some(name)) => program
                .packages
                .get(*p)
                .is_some_and(|k| k.name.as_str() == name),
            _ => false,
        };
        (owner_ok && t.name.as_str() == short && matches!(t.kind, TypeKind::Record(_)))
            .then_some(TypeId(i as u32))
    })
}

fn fields(program: &Program, ty: TypeId, given: &[String]) -> Vec<CompletionItem> {
    let Some(TypeKind::Record(fields)) = program.types.get(ty).map(|t| &t.kind) else {
        return Vec::new();
    };
    fields
        .iter()
        .filter(|f| !given.iter().any(|g| g == f.name.as_str()))
        .map(|f| {
            let mut detail = program.type_name(&f.ty);
            if f.optional {
                detail.push_str(" (optional)");
            }
            let mut it = item(
                f.name.as_str().to_string(),
                CompletionItemKind::FIELD,
                detail,
            );
            it.insert_text = Some(format!("{}: ", f.name.as_str()));
            it
        })
        .collect()
}

/// The app's own declarations and the packages.
fn globals(program: &Program) -> Vec<CompletionItem> {
    let mut items = Vec::new();
    for a in program.actions.iter().filter(|a| a.owner == Owner::App) {
        items.push(item(
            a.name.as_str().to_string(),
            CompletionItemKind::FUNCTION,
            format!("action -> {}", program.type_name(&a.ret)),
        ));
    }
    for f in &program.functions {
        items.push(item(
            f.name.as_str().to_string(),
            CompletionItemKind::FUNCTION,
            format!("function -> {}", program.type_name(&f.ret)),
        ));
    }
    for (i, t) in program.types.iter().enumerate() {
        if t.owner == Owner::App && t.span.is_some() {
            let detail = program.type_name(&Ty::Named(TypeId(i as u32)));
            items.push(item(
                t.name.as_str().to_string(),
                CompletionItemKind::STRUCT,
                format!("type {detail}"),
            ));
        }
    }
    for f in program.failures.iter().filter(|f| f.owner == Owner::App) {
        items.push(item(
            f.qualified.clone(),
            CompletionItemKind::EVENT,
            format!("failure ({:?})", f.kind),
        ));
    }
    for e in program.events.iter().filter(|e| e.owner == Owner::App) {
        items.push(item(
            e.qualified.clone(),
            CompletionItemKind::STRUCT,
            "event".into(),
        ));
    }
    for e in program.entities.iter().filter(|e| e.owner == Owner::App) {
        items.push(item(
            e.qualified.clone(),
            CompletionItemKind::CLASS,
            "entity".into(),
        ));
    }
    for p in &program.packages {
        items.push(item(
            p.name.as_str().to_string(),
            CompletionItemKind::MODULE,
            format!("package {}", p.version),
        ));
    }
    items
}
