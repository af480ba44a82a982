//! Values at run time, and their canonical encoding (design section 9):
//! RFC 8785 (JCS) JSON of the typed value, members by field name, absent
//! optional fields omitted, `none` as `null`, a `Decimal` as its shortest
//! exact decimal string, an `Instant` as RFC 3339 UTC with nanoseconds, a
//! `Duration` in whole milliseconds, an enum as its variant's name. The
//! fingerprint of a value is BLAKE3 of that encoding.

use std::sync::Arc;

use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::{Prim, Ty, TypeKind, Types};
use rust_decimal::Decimal;
use serde_json::{Map, Number, Value as Json};

/// Nanoseconds since 1970-01-01T00:00:00Z.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(pub i128);

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Unit,
    None,
    Bool(bool),
    Int(i64),
    Decimal(Decimal),
    Text(Arc<str>),
    Uuid(u128),
    Instant(Instant),
    /// Whole milliseconds.
    Duration(i64),
    /// An enum's variant.
    Enum(Name),
    List(Arc<[Value]>),
    Record(Arc<Record>),
}

/// A record's given fields, sorted by name (an absent optional field is not
/// there), so equal records compare equal whatever order they were built in.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    fields: Vec<(Name, Value)>,
}

impl Record {
    pub fn new(mut fields: Vec<(Name, Value)>) -> Record {
        fields.sort_by_key(|f| f.0);
        fields.dedup_by(|a, b| a.0 == b.0);
        Record { fields }
    }

    /// A field's value; an absent optional field reads as `none`.
    pub fn get(&self, name: Name) -> Value {
        self.fields
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(Value::None, |(_, v)| v.clone())
    }

    pub fn fields(&self) -> &[(Name, Value)] {
        &self.fields
    }
}

impl Value {
    pub fn text(s: &str) -> Value {
        Value::Text(s.into())
    }

    pub fn record(fields: Vec<(Name, Value)>) -> Value {
        Value::Record(Arc::new(Record::new(fields)))
    }

    pub fn as_record(&self) -> Option<&Record> {
        match self {
            Value::Record(r) => Some(r),
            _ => None,
        }
    }

    /// The value as JSON under the canonical encoding.
    pub fn to_json(&self) -> Json {
        match self {
            Value::Unit | Value::None => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(n) => Json::Number(Number::from(*n)),
            Value::Decimal(d) => Json::String(d.normalize().to_string()),
            Value::Text(s) => Json::String(s.to_string()),
            Value::Uuid(u) => Json::String(uuid_text(*u)),
            Value::Instant(i) => Json::String(instant_text(*i)),
            Value::Duration(ms) => Json::Number(Number::from(*ms)),
            Value::Enum(v) => Json::String(v.as_str().to_string()),
            Value::List(items) => Json::Array(items.iter().map(Value::to_json).collect()),
            Value::Record(r) => {
                let mut map = Map::new();
                for (name, v) in &r.fields {
                    map.insert(name.as_str().to_string(), v.to_json());
                }
                Json::Object(map)
            }
        }
    }

    /// The canonical bytes (RFC 8785), written directly: the values Jadpo
    /// has are objects with identifier keys (so byte order is UTF-16 order),
    /// arrays, strings, integers, booleans and `null`. `tests::agrees_with_serde_jcs`
    /// compares this with the `serde_jcs` crate.
    pub fn canonical(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64);
        self.write_canonical(&mut out);
        out
    }

    fn write_canonical(&self, out: &mut Vec<u8>) {
        match self {
            Value::Unit | Value::None => out.extend_from_slice(b"null"),
            Value::Bool(true) => out.extend_from_slice(b"true"),
            Value::Bool(false) => out.extend_from_slice(b"false"),
            Value::Int(n) => write_int(out, *n),
            Value::Duration(ms) => write_int(out, *ms),
            Value::Text(s) => write_string(out, s),
            Value::Enum(v) => write_string(out, v.as_str()),
            Value::Decimal(d) => write_string(out, &d.normalize().to_string()),
            Value::Uuid(u) => write_string(out, &uuid_text(*u)),
            Value::Instant(i) => write_string(out, &instant_text(*i)),
            Value::List(items) => {
                out.push(b'[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    v.write_canonical(out);
                }
                out.push(b']');
            }
            Value::Record(r) => {
                out.push(b'{');
                for (i, (name, v)) in r.fields.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write_string(out, name.as_str());
                    out.push(b':');
                    v.write_canonical(out);
                }
                out.push(b'}');
            }
        }
    }

    /// BLAKE3 of the canonical bytes.
    pub fn fingerprint(&self) -> [u8; 32] {
        *blake3::hash(&self.canonical()).as_bytes()
    }

    /// One fingerprint per top-level field (BLAKE3 keyed by the BLAKE3 of
    /// the field's name), so a divergence can name the fields that differ.
    pub fn field_fingerprints(&self) -> Vec<(Name, [u8; 32])> {
        let Value::Record(r) = self else {
            return Vec::new();
        };
        r.fields
            .iter()
            .map(|(name, v)| {
                let fp = blake3::keyed_hash(&field_key(*name), &v.canonical());
                (*name, *fp.as_bytes())
            })
            .collect()
    }

    /// How `Text(e)` writes the value.
    pub fn as_text(&self) -> String {
        match self {
            Value::Text(s) => s.to_string(),
            Value::Int(n) => n.to_string(),
            Value::Decimal(d) => d.normalize().to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Uuid(u) => uuid_text(*u),
            Value::Instant(i) => instant_text(*i),
            Value::Duration(ms) => jadpo_compiler::duration::text_signed(*ms),
            Value::Enum(v) => v.as_str().to_string(),
            Value::None => "none".to_string(),
            other => other.to_json().to_string(),
        }
    }
}

/// BLAKE3 of a field's name: the key of its field fingerprint, computed
/// once per name and thread.
fn field_key(name: Name) -> [u8; 32] {
    use std::cell::RefCell;
    use std::collections::HashMap;
    thread_local! {
        static KEYS: RefCell<HashMap<Name, [u8; 32]>> = RefCell::new(HashMap::new());
    }
    KEYS.with(|keys| {
        *keys
            .borrow_mut()
            .entry(name)
            .or_insert_with(|| *blake3::hash(name.as_str().as_bytes()).as_bytes())
    })
}

/// An integer as RFC 8785 writes it. Jadpo's `Int` is exact, so one
/// beyond 2^53 is written exactly too (JCS would round it as a double).
fn write_int(out: &mut Vec<u8>, n: i64) {
    use std::io::Write;
    // Writing to a vector cannot fail.
    let _ = write!(out, "{n}");
}

/// A string as RFC 8785 writes it: `"` and `\` escaped, the control
/// characters as `\b \t \n \f \r` or `\u00xx`, everything else as UTF-8.
fn write_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\u{8}' => out.extend_from_slice(b"\\b"),
            '\t' => out.extend_from_slice(b"\\t"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\u{c}' => out.extend_from_slice(b"\\f"),
            '\r' => out.extend_from_slice(b"\\r"),
            c if (c as u32) < 0x20 => {
                use std::io::Write;
                // Writing to a vector cannot fail.
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.push(b'"');
}

fn uuid_text(u: u128) -> String {
    let hex = format!("{u:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

fn parse_uuid(s: &str) -> Option<u128> {
    let hex: String = s.chars().filter(|c| *c != '-').collect();
    (hex.len() == 32)
        .then(|| u128::from_str_radix(&hex, 16).ok())
        .flatten()
}

/// RFC 3339 in UTC with nanoseconds: `2026-01-15T12:00:00.000000000Z`.
pub fn instant_text(i: Instant) -> String {
    use std::sync::OnceLock;
    type Items = Vec<time::format_description::BorrowedFormatItem<'static>>;
    static FORMAT: OnceLock<Items> = OnceLock::new();
    let format = FORMAT.get_or_init(|| {
        time::format_description::parse_borrowed::<2>(
            "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:9]Z",
        )
        .unwrap_or_default()
    });
    time::OffsetDateTime::from_unix_timestamp_nanos(i.0)
        .ok()
        .and_then(|t| t.format(format).ok())
        .unwrap_or_else(|| format!("@{}ns", i.0))
}

/// An RFC 3339 instant (any offset), as nanoseconds since the epoch.
pub fn parse_instant(text: &str) -> Option<Instant> {
    let t =
        time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()?;
    Some(Instant(t.unix_timestamp_nanos()))
}

/// Hex of a fingerprint or key.
pub fn hex(bytes: &[u8]) -> String {
    // Every step key is hex: a table, not the formatter.
    fn digit(n: u8) -> char {
        char::from(if n < 10 { b'0' + n } else { b'a' + n - 10 })
    }
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(digit(b >> 4));
        out.push(digit(b & 15));
    }
    out
}

/// Why a JSON value is not a value of a type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError(pub String);

/// Reads JSON as a value of `ty` (an answer decoded with the current
/// package, or a recorded one replayed).
pub fn decode(types: Types<'_>, ty: &Ty, json: &Json) -> Result<Value, DecodeError> {
    decode_at(types, ty, json, &|n: &str| n.to_string(), 0)
}

/// [`decode`] with record fields under wire names (a binding's case and
/// renames).
pub fn decode_named(
    types: Types<'_>,
    ty: &Ty,
    json: &Json,
    names: &dyn Fn(&str) -> String,
) -> Result<Value, DecodeError> {
    decode_at(types, ty, json, names, 0)
}

const MAX_DEPTH: usize = 64;

fn decode_at(
    types: Types<'_>,
    ty: &Ty,
    json: &Json,
    names: &dyn Fn(&str) -> String,
    depth: usize,
) -> Result<Value, DecodeError> {
    if depth > MAX_DEPTH {
        return Err(DecodeError("the value nests too deeply".into()));
    }
    let wrong = |what: &str| DecodeError(format!("expected {what}, found {json}"));
    match ty.unbounded() {
        Ty::Error | Ty::NoneValue => Ok(Value::None),
        Ty::Optional(inner) => match json {
            Json::Null => Ok(Value::None),
            other => decode_at(types, inner, other, names, depth + 1),
        },
        Ty::List(inner) => match json {
            Json::Array(items) => {
                let values: Result<Vec<Value>, DecodeError> = items
                    .iter()
                    .map(|i| decode_at(types, inner, i, names, depth + 1))
                    .collect();
                Ok(Value::List(values?.into()))
            }
            _ => Err(wrong("a list")),
        },
        Ty::Prim(p) => decode_prim(*p, json).ok_or_else(|| wrong(p.as_str())),
        Ty::Named(t) => match types.def(*t).map(|d| &d.kind) {
            Some(TypeKind::Alias(inner)) => decode_at(types, inner, json, names, depth + 1),
            Some(TypeKind::Enum(variants)) => match json {
                Json::String(s) => variants
                    .iter()
                    .find(|v| v.as_str() == s)
                    .map(|v| Value::Enum(*v))
                    .ok_or_else(|| wrong("one of the enum's variants")),
                _ => Err(wrong("an enum variant")),
            },
            Some(TypeKind::Record(fields)) => {
                let Json::Object(map) = json else {
                    return Err(wrong("a record"));
                };
                let mut out = Vec::with_capacity(fields.len());
                for f in fields {
                    match map.get(&names(f.name.as_str())) {
                        Some(v) => {
                            out.push((f.name, decode_at(types, &f.ty, v, names, depth + 1)?))
                        }
                        None if f.optional => {}
                        None => {
                            return Err(DecodeError(format!("the field `{}` is missing", f.name)))
                        }
                    }
                }
                Ok(Value::record(out))
            }
            Some(TypeKind::Pending) | None => Err(DecodeError("an unknown type".into())),
        },
        Ty::Bounded(inner, _) => decode_at(types, inner, json, names, depth + 1),
    }
}

fn decode_prim(p: Prim, json: &Json) -> Option<Value> {
    Some(match (p, json) {
        (Prim::Unit, _) => Value::Unit,
        (Prim::Bool, Json::Bool(b)) => Value::Bool(*b),
        (Prim::Int, Json::Number(n)) => Value::Int(n.as_i64()?),
        (Prim::Decimal, Json::String(s)) => Value::Decimal(s.parse().ok()?),
        (Prim::Decimal, Json::Number(n)) => Value::Decimal(n.to_string().parse().ok()?),
        (Prim::Text, Json::String(s)) => Value::text(s),
        (Prim::Uuid, Json::String(s)) => Value::Uuid(parse_uuid(s)?),
        (Prim::Instant, Json::String(s)) => Value::Instant(parse_instant(s)?),
        (Prim::Duration, Json::Number(n)) => Value::Duration(n.as_i64()?),
        _ => return None,
    })
}
