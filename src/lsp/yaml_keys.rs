//! Completion in `package.yaml`: the keys that may follow at the cursor's
//! indentation (those not given yet in the same block), and the values of
//! a boolean or an enumerated key. Read from the manifest's JSON schema
//! (spec/package.schema.json, compiled in), the same file the schema tests
//! hold the loader to, so the editor offers what the loader accepts.
//!
//! The structure is read from indentation, as YAML's block style has it:
//! the keys above the cursor with less indentation and nothing after their
//! colon are its parents. Flow style (`{ status: 409 }`) offers nothing.

use lsp_types::{CompletionItem, CompletionItemKind, Documentation};
use serde_json::Value;

const SCHEMA: &str = include_str!("../../spec/package.schema.json");

/// The completion items at byte `offset` of a `package.yaml`'s `text`.
pub fn complete(text: &str, offset: usize) -> Vec<CompletionItem> {
    let Ok(schema) = serde_json::from_str::<Value>(SCHEMA) else {
        return Vec::new();
    };
    let before = text.get(..offset).unwrap_or(text);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let (column, typed) = key_column(&before[line_start..]);
    let Some(path) = parents(&before[..line_start], column) else {
        return Vec::new();
    };
    let Some(block) = path
        .iter()
        .try_fold(&schema, |node, key| child(&schema, node, key))
    else {
        return Vec::new();
    };
    if let Some((key, _)) = typed.split_once(':') {
        return child(&schema, block, key.trim()).map_or_else(Vec::new, |v| values(&schema, v));
    }
    if !typed.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Vec::new();
    }
    let rest = text.get(line_start..).unwrap_or("");
    let given = siblings(&before[..line_start], rest, column);
    keys(&schema, block, &given)
}

/// The column where a line's key starts (after its indentation and any
/// `- ` of a list item), and the text from there.
fn key_column(line: &str) -> (usize, &str) {
    let mut rest = line.trim_start_matches(' ');
    while let Some(item) = rest.strip_prefix("- ") {
        rest = item.trim_start_matches(' ');
    }
    (line.len() - rest.len(), rest)
}

/// A line's key, when the line holds one (`key:` or `key: value`), and
/// whether a value follows on the same line.
fn key_of(rest: &str) -> Option<(&str, bool)> {
    let (key, after) = rest.split_once(':')?;
    let key = key.trim().trim_matches(|c| c == '"' || c == '\'');
    let after = after.split(" #").next().unwrap_or("").trim();
    (!key.is_empty() && !key.starts_with('#')).then_some((key, !after.is_empty()))
}

/// The lines that hold something (not blank, not a comment).
fn content(line: &str) -> bool {
    let t = line.trim_start();
    !t.is_empty() && !t.starts_with('#')
}

/// The keys enclosing `column`, outermost first; None when a line above
/// with less indentation holds a value (the cursor is in no block).
fn parents(above: &str, column: usize) -> Option<Vec<&str>> {
    let mut path = Vec::new();
    let mut limit = column;
    for line in above.lines().rev().filter(|l| content(l)) {
        if limit == 0 {
            break;
        }
        let (c, rest) = key_column(line);
        if c >= limit {
            continue;
        }
        match key_of(rest) {
            Some((key, false)) => path.push(key),
            _ => return None,
        }
        limit = c;
    }
    path.reverse();
    Some(path)
}

/// The keys at `column` in the cursor's block, above and below it.
fn siblings<'t>(above: &'t str, from_cursor: &'t str, column: usize) -> Vec<&'t str> {
    let in_block = |lines: &mut dyn Iterator<Item = &'t str>| -> Vec<&'t str> {
        lines
            .filter(|l| content(l))
            .map(key_column)
            .take_while(|(c, _)| *c >= column)
            .filter(|(c, _)| *c == column)
            .filter_map(|(_, rest)| key_of(rest).map(|(k, _)| k))
            .collect()
    };
    let mut given = in_block(&mut above.lines().rev());
    given.extend(in_block(&mut from_cursor.lines().skip(1)));
    given
}

/// The schema a `$ref` names, or the node itself.
fn deref<'s>(schema: &'s Value, node: &'s Value) -> &'s Value {
    node.get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .and_then(|name| schema.get("$defs")?.get(name))
        .unwrap_or(node)
}

/// The object alternative of a node (`oneOf` with a `{ path: }` form).
fn object<'s>(schema: &'s Value, node: &'s Value) -> &'s Value {
    let node = deref(schema, node);
    node.get("oneOf")
        .and_then(Value::as_array)
        .and_then(|alts| {
            alts.iter()
                .map(|a| deref(schema, a))
                .find(|a| a.get("properties").is_some())
        })
        .unwrap_or(node)
}

/// The schema of `key` inside `node`: a named property, or the value of a
/// map with free names (`operations`, `packages`).
fn child<'s>(schema: &'s Value, node: &'s Value, key: &str) -> Option<&'s Value> {
    let node = object(schema, node);
    node.get("properties")
        .and_then(|p| p.get(key))
        .or_else(|| node.get("additionalProperties").filter(|a| a.is_object()))
}

fn keys(schema: &Value, block: &Value, given: &[&str]) -> Vec<CompletionItem> {
    let block = object(schema, block);
    let required: Vec<&str> = block
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = block.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .filter(|(name, _)| !given.contains(&name.as_str()))
        .map(|(name, prop)| {
            let mut detail = describe(schema, prop);
            if required.contains(&name.as_str()) {
                detail = format!("required; {detail}");
            }
            let nested = matches!(kind(deref(schema, prop)), "object" | "map");
            CompletionItem {
                label: name.clone(),
                kind: Some(CompletionItemKind::PROPERTY),
                detail: Some(detail),
                documentation: description(schema, prop).map(Documentation::String),
                insert_text: Some(if nested {
                    format!("{name}:")
                } else {
                    format!("{name}: ")
                }),
                ..CompletionItem::default()
            }
        })
        .collect()
}

/// `true`/`false` for a boolean, the choices of an enumeration.
fn values(schema: &Value, node: &Value) -> Vec<CompletionItem> {
    let node = deref(schema, node);
    let choices: Vec<String> = match node.get("enum").and_then(Value::as_array) {
        Some(choices) => choices
            .iter()
            .filter_map(|c| c.as_str().map(str::to_string))
            .collect(),
        None if kind(node) == "boolean" => vec!["true".into(), "false".into()],
        None => return Vec::new(),
    };
    let default = node
        .get("default")
        .map(|d| d.to_string().trim_matches('"').to_string());
    choices
        .into_iter()
        .map(|c| CompletionItem {
            detail: Some(if default.as_deref() == Some(c.as_str()) {
                "the default".into()
            } else {
                "value".into()
            }),
            label: c,
            kind: Some(CompletionItemKind::VALUE),
            ..CompletionItem::default()
        })
        .collect()
}

fn kind(node: &Value) -> &'static str {
    match node.get("type").and_then(Value::as_str) {
        Some("object") if node.get("properties").is_none() => "map",
        Some("object") => "object",
        Some("array") => "list",
        Some("boolean") => "boolean",
        Some("integer") => "integer",
        Some("string") => "string",
        _ if node.get("enum").is_some() => "one of",
        _ => "value",
    }
}

/// The item's detail: its kind (or the definition it names), its range
/// or choices, and its default.
fn describe(schema: &Value, prop: &Value) -> String {
    let target = deref(schema, prop);
    let named = prop
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.rsplit('/').next());
    let mut text = match (named, kind(target)) {
        (Some("duration"), _) => "duration".to_string(),
        (Some(name), "string" | "integer") if name != "declaredName" => {
            format!("{} ({name})", kind(target))
        }
        (_, "list") => format!(
            "list of {}",
            target
                .get("items")
                .map_or("value".into(), |i| describe(schema, i))
        ),
        (_, "one of") => format!("one of {}", choices(target)),
        (_, "map") => "map".to_string(),
        (_, "object") => "object".to_string(),
        (Some("declaredName"), _) => "name of a declared type or failure".to_string(),
        (_, k) => k.to_string(),
    };
    if let (Some(min), Some(max)) = (target.get("minimum"), target.get("maximum")) {
        text.push_str(&format!(" {min}..{max}"));
    }
    if let Some(default) = prop.get("default").or_else(|| target.get("default")) {
        text.push_str(&format!(
            "; default {}",
            default.to_string().trim_matches('"')
        ));
    }
    text
}

fn choices(node: &Value) -> String {
    node.get("enum")
        .and_then(Value::as_array)
        .map(|c| {
            c.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

fn description(schema: &Value, prop: &Value) -> Option<String> {
    prop.get("description")
        .or_else(|| deref(schema, prop).get("description"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(text: &str) -> Vec<String> {
        let offset = text.find('|').expect("a cursor");
        let text = text.replacen('|', "", 1);
        let mut labels: Vec<String> = complete(&text, offset)
            .into_iter()
            .map(|i| i.label)
            .collect();
        labels.sort();
        labels
    }

    #[test]
    fn top_level_keys_not_yet_given() {
        assert_eq!(
            labels("package: x\n|\nversion: 1.0.0\n"),
            ["operations", "packages", "provider"]
        );
    }

    #[test]
    fn an_operation_takes_its_fields() {
        let text = "package: x\noperations:\n  charges.create:\n    changes: true\n    |\n";
        let found = labels(text);
        assert!(found.contains(&"idempotent".to_string()), "{found:?}");
        assert!(!found.contains(&"changes".to_string()), "{found:?}");
    }

    #[test]
    fn nested_provider_keys() {
        let text = "provider:\n  idempotency:\n    header: Idempotency-Key\n    |\n";
        let found = labels(text);
        assert!(
            found.contains(&"in_use".to_string()) && found.contains(&"window".to_string()),
            "{found:?}"
        );
        assert_eq!(
            labels("provider:\n  |\n"),
            ["attempts", "http", "idempotency", "timeout"]
        );
        let http = labels("provider:\n  http:\n    base_url: https://x.example\n    |\n");
        assert!(
            http.contains(&"auth".to_string()) && http.contains(&"case".to_string()),
            "{http:?}"
        );
    }

    #[test]
    fn values_of_booleans_and_enums() {
        assert_eq!(
            labels("provider:\n  idempotency:\n    new_key_on: |\n"),
            ["answer", "none"]
        );
        assert_eq!(
            labels("operations:\n  a:\n    changes: |\n"),
            ["false", "true"]
        );
    }

    #[test]
    fn free_names_and_values_offer_nothing() {
        assert!(labels("operations:\n  |\n").is_empty());
        assert!(labels("package: |\n").is_empty());
        assert!(labels("package: x\n  |\n").is_empty());
    }
}
