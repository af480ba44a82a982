//! A request's JSON read as the route's input type, strictly (design
//! section 16.3): an unknown field is the client's mistake in the
//! request's shape (400); a missing field, a value of another type or one
//! breaking its constraints is an invalid value (422). Every mistake is
//! reported with its JSON pointer (RFC 6901), not only the first.

use jadpo_compiler::ir::{Prim, Ty, TypeKind, Types};
use jadpo_runtime::check::check_value;
use jadpo_runtime::value::{decode, Value};
use serde_json::Value as Json;

/// One mistake in a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mistake {
    /// `/card/number`
    pub pointer: String,
    pub reason: String,
    /// The request's shape is wrong (an unknown field): 400, not 422.
    pub shape: bool,
}

const MAX_DEPTH: usize = 64;
/// Mistakes reported at most; the rest are counted in the last.
const MAX_MISTAKES: usize = 50;

/// Reads `json` as a `ty`, or says every way it is not one.
pub fn strict(types: Types<'_>, ty: &Ty, json: &Json) -> Result<Value, Vec<Mistake>> {
    let mut mistakes = Vec::new();
    let value = walk(types, ty, json, "", 0, &mut mistakes);
    if mistakes.len() > MAX_MISTAKES {
        let more = mistakes.len() - MAX_MISTAKES;
        mistakes.truncate(MAX_MISTAKES);
        mistakes.push(Mistake {
            pointer: String::new(),
            reason: format!("and {more} more mistakes"),
            shape: false,
        });
    }
    match value {
        Some(v) if mistakes.is_empty() => Ok(v),
        _ => Err(mistakes),
    }
}

/// RFC 6901: `~` is `~0`, `/` is `~1`.
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

fn walk(
    types: Types<'_>,
    ty: &Ty,
    json: &Json,
    at: &str,
    depth: usize,
    out: &mut Vec<Mistake>,
) -> Option<Value> {
    if depth > MAX_DEPTH {
        out.push(Mistake {
            pointer: at.to_string(),
            reason: "the value nests too deeply".into(),
            shape: true,
        });
        return None;
    }
    let value = match record_fields(types, ty) {
        Some(fields) => record(types, &fields, json, at, depth, out)?,
        None => match (ty.unbounded(), json) {
            (Ty::Optional(_), Json::Null) => Value::None,
            (Ty::Optional(inner), other) => walk(types, inner, other, at, depth + 1, out)?,
            (Ty::List(inner), Json::Array(items)) => {
                let mut values = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let here = format!("{at}/{i}");
                    if let Some(v) = walk(types, inner, item, &here, depth + 1, out) {
                        values.push(v);
                    }
                }
                Value::List(values.into())
            }
            _ => match decode(types, ty, json) {
                Ok(v) => v,
                Err(e) => {
                    out.push(Mistake {
                        pointer: at.to_string(),
                        reason: expected(types, ty).unwrap_or(e.0),
                        shape: false,
                    });
                    return None;
                }
            },
        },
    };
    if let Err(why) = check_value(types, ty, &value) {
        out.push(Mistake {
            pointer: at.to_string(),
            reason: why,
            shape: false,
        });
        return None;
    }
    Some(value)
}

fn record(
    types: Types<'_>,
    fields: &[jadpo_compiler::ir::FieldDef],
    json: &Json,
    at: &str,
    depth: usize,
    out: &mut Vec<Mistake>,
) -> Option<Value> {
    let Json::Object(map) = json else {
        out.push(Mistake {
            pointer: at.to_string(),
            reason: "expected an object".into(),
            shape: false,
        });
        return None;
    };
    let before = out.len();
    for key in map.keys() {
        if !fields.iter().any(|f| f.name.as_str() == key) {
            let known: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
            out.push(Mistake {
                pointer: format!("{at}/{}", escape(key)),
                reason: format!("unknown field; the fields are {}", known.join(", ")),
                shape: true,
            });
        }
    }
    let mut values = Vec::with_capacity(fields.len());
    for f in fields {
        let here = format!("{at}/{}", escape(f.name.as_str()));
        match map.get(f.name.as_str()) {
            Some(j) => {
                if let Some(v) = walk(types, &f.ty, j, &here, depth + 1, out) {
                    values.push((f.name, v));
                }
            }
            None if f.optional || matches!(f.ty.unbounded(), Ty::Optional(_)) => {}
            None => out.push(Mistake {
                pointer: here,
                reason: "this field is required".into(),
                shape: false,
            }),
        }
    }
    (out.len() == before).then(|| Value::record(values))
}

fn record_fields(types: Types<'_>, ty: &Ty) -> Option<Vec<jadpo_compiler::ir::FieldDef>> {
    match ty.unbounded() {
        Ty::Named(t) => match types.def(*t).map(|d| &d.kind) {
            Some(TypeKind::Record(fields)) => Some(fields.clone()),
            Some(TypeKind::Alias(inner)) => record_fields(types, inner),
            _ => None,
        },
        _ => None,
    }
}

/// What a value of `ty` looks like, in the client's terms.
fn expected(types: Types<'_>, ty: &Ty) -> Option<String> {
    Some(match ty.unbounded() {
        Ty::Prim(p) => match p {
            Prim::Int => "expected a whole number".into(),
            Prim::Decimal => "expected a decimal number, as a string (\"12.50\")".into(),
            Prim::Bool => "expected true or false".into(),
            Prim::Text => "expected a string".into(),
            Prim::Uuid => "expected a UUID string".into(),
            Prim::Instant => "expected an RFC 3339 time (\"2026-01-15T12:00:00Z\")".into(),
            Prim::Duration => "expected a duration in milliseconds".into(),
            _ => return None,
        },
        Ty::Named(t) => match types.def(*t).map(|d| &d.kind) {
            Some(TypeKind::Enum(variants)) => {
                let names: Vec<&str> = variants.iter().map(|v| v.as_str()).collect();
                format!("expected one of {}", names.join(", "))
            }
            Some(TypeKind::Alias(inner)) => return expected(types, inner),
            _ => return None,
        },
        Ty::List(_) => "expected a list".into(),
        _ => return None,
    })
}
