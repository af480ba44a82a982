//! How an app's entities become tables (design `server.md` section 14): one
//! table per entity of a store, named in snake_case, the first field its
//! primary key, one typed column per field and `_version`. Field types map
//! to columns: Text, Uuid and Enum as text; Int as a 64-bit integer; Bool as
//! a boolean; Decimal as exact text (numeric on Postgres); Instant as
//! RFC 3339 text with 9 digits, which round-trips exactly and sorts;
//! Duration as integer milliseconds; Object and List as canonical JSON. A
//! `T?` is the same column, nullable. Built from the program, with no IO,
//! for the SQL stores to read; values go to and from [`Column`]s here, so
//! both stores convert alike.

use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::{EntityId, Prim, Program, Ty, TypeDef, TypeKind, Types};

use crate::value::{decode, instant_text, parse_instant, Instant, Value};

/// The entities of one store of an app, and the queries the program makes
/// of them.
#[derive(Clone, Debug)]
pub struct Schema {
    pub app: String,
    /// The store's name (`primary`).
    pub store: String,
    pub entities: Vec<EntitySchema>,
    /// Field lists queried with `where:`, one index each.
    pub indexes: Vec<(EntityId, Vec<String>)>,
    /// The app's schedules by name: a store keeps each one's last tick,
    /// and lists those of schedules the app no longer has.
    pub schedules: Vec<String>,
    /// The program's type table, to read JSON columns back.
    types: Vec<TypeDef>,
}

#[derive(Clone, Debug)]
pub struct EntitySchema {
    pub id: EntityId,
    /// `Subscription`
    pub name: String,
    /// `subscription`
    pub table: String,
    pub fields: Vec<FieldSchema>,
}

#[derive(Clone, Debug)]
pub struct FieldSchema {
    pub name: Name,
    pub kind: ColumnKind,
    /// `T?`, or an `optional` field.
    pub nullable: bool,
    pub ty: Ty,
}

/// A column's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnKind {
    Text,
    Int,
    Bool,
    Decimal,
    Instant,
    Duration,
    Json,
}

impl ColumnKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ColumnKind::Text => "text",
            ColumnKind::Int => "int",
            ColumnKind::Bool => "bool",
            ColumnKind::Decimal => "decimal",
            ColumnKind::Instant => "instant",
            ColumnKind::Duration => "duration",
            ColumnKind::Json => "json",
        }
    }

    pub fn parse(text: &str) -> Option<ColumnKind> {
        [
            ColumnKind::Text,
            ColumnKind::Int,
            ColumnKind::Bool,
            ColumnKind::Decimal,
            ColumnKind::Instant,
            ColumnKind::Duration,
            ColumnKind::Json,
        ]
        .into_iter()
        .find(|k| k.as_str() == text)
    }
}

/// A column's value, as both SQL stores bind and read it.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    Null,
    Int(i64),
    Bool(bool),
    Text(String),
}

impl EntitySchema {
    pub fn key(&self) -> Option<&FieldSchema> {
        self.fields.first()
    }
}

impl Schema {
    /// The entities of store `store` in `program` (all of them when the
    /// program names no store, as a test's does), and the indexes of its
    /// queries.
    pub fn of(program: &Program, store: &str, app: &str) -> Schema {
        let types = program.type_table();
        let mut entities = Vec::new();
        for (id, e) in program.entities.iter_enumerated() {
            let here = e.store.is_none_or(|s| s.as_str() == store);
            if !here {
                continue;
            }
            let fields = match types.def(e.ty).map(|d| &d.kind) {
                Some(TypeKind::Record(fields)) => fields
                    .iter()
                    .map(|f| FieldSchema {
                        name: f.name,
                        kind: kind_of(types, &f.ty),
                        nullable: f.optional || matches!(f.ty.unbounded(), Ty::Optional(_)),
                        ty: f.ty.clone(),
                    })
                    .collect(),
                _ => Vec::new(),
            };
            entities.push(EntitySchema {
                id,
                name: e.qualified.clone(),
                table: snake(&e.qualified),
                fields,
            });
        }
        Schema {
            app: app.to_string(),
            store: store.to_string(),
            entities,
            indexes: Vec::new(),
            schedules: program
                .entries
                .iter()
                .filter_map(|e| e.schedule_name().map(str::to_string))
                .collect(),
            types: program.types.iter().cloned().collect(),
        }
    }

    /// How a store set up for `self` would read or write `other`'s rows
    /// otherwise: the first difference in its entities (their ids, names
    /// and tables), their fields (names, columns, nullability and the
    /// structure of each field's type, spans and type ids aside) or the
    /// indexes; `None` when a store set up for one serves the other.
    /// `jadpo dev` swaps a build in on reload only then.
    pub fn differs(&self, other: &Schema) -> Option<String> {
        if self.indexes != other.indexes {
            return Some("the field lists queried with `where:` changed".into());
        }
        let names = |s: &Schema| -> Vec<(EntityId, String)> {
            s.entities.iter().map(|e| (e.id, e.name.clone())).collect()
        };
        if names(self) != names(other) {
            return Some("the entities changed".into());
        }
        for (a, b) in self.entities.iter().zip(&other.entities) {
            let fields = |e: &EntitySchema| -> Vec<(Name, ColumnKind, bool)> {
                e.fields
                    .iter()
                    .map(|f| (f.name, f.kind, f.nullable))
                    .collect()
            };
            if fields(a) != fields(b) {
                return Some(format!("`{}`'s fields changed", a.name));
            }
            for (f, g) in a.fields.iter().zip(&b.fields) {
                if shape(Types(&self.types), &f.ty) != shape(Types(&other.types), &g.ty) {
                    return Some(format!("`{}.{}`'s type changed", a.name, f.name));
                }
            }
        }
        None
    }

    /// The indexes the plan's `queries` need: one per field list of an
    /// entity of this store, but none for the key alone (the primary key
    /// serves it).
    pub fn with_queries(mut self, queries: &[jadpo_plan::QueryPlan]) -> Schema {
        for q in queries {
            let Some(e) = self.entities.iter().find(|e| e.name == q.entity) else {
                continue;
            };
            let key = e.key().map(|k| k.name.as_str());
            if q.fields.len() == 1 && q.fields.first().map(String::as_str) == key {
                continue;
            }
            let fields = q.fields.clone();
            if !self
                .indexes
                .iter()
                .any(|(id, f)| *id == e.id && *f == fields)
            {
                self.indexes.push((e.id, fields));
            }
        }
        self
    }

    pub fn entity(&self, id: EntityId) -> Option<&EntitySchema> {
        self.entities.iter().find(|e| e.id == id)
    }

    /// A row's value from its columns, in field order.
    pub fn row_value(&self, entity: &EntitySchema, columns: Vec<Column>) -> Result<Value, String> {
        let mut fields = Vec::with_capacity(entity.fields.len());
        for (f, c) in entity.fields.iter().zip(columns) {
            let v = from_column(Types(&self.types), f, c)?;
            if v != Value::None {
                fields.push((f.name, v));
            }
        }
        Ok(Value::record(fields))
    }
}

/// The column a type is stored in.
fn kind_of(types: Types<'_>, ty: &Ty) -> ColumnKind {
    match ty.unbounded() {
        Ty::Optional(inner) => kind_of(types, inner),
        Ty::Prim(Prim::Int) => ColumnKind::Int,
        Ty::Prim(Prim::Bool) => ColumnKind::Bool,
        Ty::Prim(Prim::Decimal) => ColumnKind::Decimal,
        Ty::Prim(Prim::Instant) => ColumnKind::Instant,
        Ty::Prim(Prim::Duration) => ColumnKind::Duration,
        Ty::Prim(Prim::Text | Prim::Uuid) => ColumnKind::Text,
        Ty::Named(t) => match types.def(*t).map(|d| &d.kind) {
            Some(TypeKind::Alias(inner)) => kind_of(types, inner),
            Some(TypeKind::Enum(_)) => ColumnKind::Text,
            _ => ColumnKind::Json,
        },
        _ => ColumnKind::Json,
    }
}

/// A field's value as its column holds it.
pub fn to_column(kind: ColumnKind, value: &Value) -> Column {
    match (kind, value) {
        (_, Value::None | Value::Unit) => Column::Null,
        (ColumnKind::Int, Value::Int(n)) => Column::Int(*n),
        (ColumnKind::Duration, Value::Duration(ms)) => Column::Int(*ms),
        (ColumnKind::Bool, Value::Bool(b)) => Column::Bool(*b),
        (ColumnKind::Instant, Value::Instant(i)) => Column::Text(instant_text(*i)),
        (ColumnKind::Json, v) => Column::Text(String::from_utf8_lossy(&v.canonical()).into_owned()),
        (_, v) => Column::Text(v.as_text()),
    }
}

/// A field's value read back from its column.
fn from_column(types: Types<'_>, f: &FieldSchema, c: Column) -> Result<Value, String> {
    let bad = |what: &str| format!("column `{}` holds {what}", f.name);
    Ok(match (f.kind, c) {
        (_, Column::Null) => Value::None,
        (ColumnKind::Int, Column::Int(n)) => Value::Int(n),
        (ColumnKind::Duration, Column::Int(n)) => Value::Duration(n),
        (ColumnKind::Bool, Column::Bool(b)) => Value::Bool(b),
        (ColumnKind::Bool, Column::Int(n)) => Value::Bool(n != 0),
        (ColumnKind::Instant, Column::Text(t)) => {
            Value::Instant(parse_instant(&t).ok_or_else(|| bad("a time that does not parse"))?)
        }
        (ColumnKind::Json | ColumnKind::Text | ColumnKind::Decimal, Column::Text(t)) => {
            let json = match f.kind {
                ColumnKind::Json => serde_json::from_str(&t).map_err(|e| bad(&e.to_string()))?,
                _ => serde_json::Value::String(t),
            };
            decode(types, &f.ty, &json).map_err(|e| bad(&e.0))?
        }
        _ => return Err(bad("a value of another type")),
    })
}

/// `SubscriptionStarted` to `subscription_started`; a package's entity
/// (`stripe.Customer`) to `stripe__customer`.
pub fn snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, part) in name.split('.').enumerate() {
        if i > 0 {
            out.push_str("__");
        }
        for (j, c) in part.chars().enumerate() {
            if c.is_ascii_uppercase() {
                if j > 0 {
                    out.push('_');
                }
                out.push(c.to_ascii_lowercase());
            } else {
                out.push(c);
            }
        }
    }
    out
}

/// The time a store writes for `now`.
pub fn time_text(i: Instant) -> String {
    instant_text(i)
}

/// A type's structure as text: declared types expanded by name and kind
/// (each once; a second use, or a recursive one, by name), spans and ids
/// left out, so two programs' types compare by what a column holds.
fn shape(types: Types<'_>, ty: &Ty) -> String {
    let mut out = String::new();
    let mut seen = std::collections::HashSet::new();
    shape_into(types, ty, &mut seen, &mut out);
    out
}

fn shape_into(
    types: Types<'_>,
    ty: &Ty,
    seen: &mut std::collections::HashSet<jadpo_compiler::ir::TypeId>,
    out: &mut String,
) {
    use std::fmt::Write;
    match ty {
        Ty::Named(t) => {
            let Some(def) = types.def(*t) else {
                out.push('?');
                return;
            };
            let _ = write!(out, "{}", def.name);
            if !seen.insert(*t) {
                return;
            }
            match &def.kind {
                TypeKind::Pending => out.push_str("=pending"),
                TypeKind::Alias(inner) => {
                    out.push('=');
                    shape_into(types, inner, seen, out);
                }
                TypeKind::Enum(names) => {
                    let _ = write!(out, "={names:?}");
                }
                TypeKind::Record(fields) => {
                    out.push('{');
                    for f in fields {
                        let _ = write!(out, "{}{}:", f.name, if f.optional { "?" } else { "" });
                        shape_into(types, &f.ty, seen, out);
                        out.push(',');
                    }
                    out.push('}');
                }
            }
        }
        Ty::List(inner) => {
            out.push('[');
            shape_into(types, inner, seen, out);
            out.push(']');
        }
        Ty::Optional(inner) => {
            shape_into(types, inner, seen, out);
            out.push('?');
        }
        Ty::Bounded(inner, bounds) => {
            shape_into(types, inner, seen, out);
            let _ = write!(out, "{bounds:?}");
        }
        Ty::Error | Ty::Prim(_) | Ty::NoneValue => {
            let _ = write!(out, "{ty:?}");
        }
    }
}
