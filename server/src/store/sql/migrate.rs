//! Setting a store up for a build (design `server.md` section 14.4): the
//! runtime tables' forward-only migrations (a store set up by a newer jadpo
//! is refused), then the build's entities against what the store already
//! holds, as `schema` records it. Applied: new entities, new optional
//! fields, new or dropped indexes. Kept: a removed field or entity keeps
//! its column or table. Refused, naming the entity and the field: a new
//! required field on a table with rows, or a changed type. Every applied
//! change is additive, so two builds can share the store during a deploy.
//! The caller runs this in one exclusive transaction.

use std::collections::BTreeMap;

use jadpo_runtime::store::schema::{ColumnKind, EntitySchema};
use jadpo_runtime::store::{ErrorKind, StoreError};

use super::ddl::{column_type, latest, migration_table, migrations, version_type};
use super::rows::time;
use super::{quoted, Cx, P};

/// What was done, for the server's start-up line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Migrated {
    /// Runtime migrations applied (their versions).
    pub runtime: Vec<u32>,
    /// `created table subscription`, `added subscription.note`, ...
    pub entities: Vec<String>,
}

/// How a store's setup is allowed to change it: `check` refuses any
/// change (the server's `--migrate check`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Apply {
    Auto,
    Check,
}

pub fn run(cx: &mut Cx<'_>, apply: Apply) -> Result<Migrated, StoreError> {
    let mut done = Migrated::default();
    let table = migration_table(cx.dialect).replace("{p}", cx.prefix);
    cx.exec(&table, &[])?;
    let versions = cx.rows(
        &format!("SELECT version FROM {}", cx.t("jadpo_migration")),
        &[],
    )?;
    let applied: Vec<i64> = versions
        .into_iter()
        .filter_map(|r| r.into_iter().next().and_then(|p| p.as_int()))
        .collect();
    let newest = applied.iter().copied().max().unwrap_or(0);
    let known = i64::from(latest(cx.dialect));
    if newest > known {
        return Err(cx.error(
            ErrorKind::NewerSchema,
            format!(
                "its runtime tables are at version {newest}; this jadpo knows up to {known}: run the newer jadpo, or a store of its own"
            ),
        ));
    }
    for (version, statements) in migrations(cx.dialect) {
        if applied.contains(&i64::from(version)) {
            continue;
        }
        if apply == Apply::Check {
            return Err(cx.error(
                ErrorKind::Incompatible,
                format!("its runtime tables need migration {version}, and `--migrate check` applies none"),
            ));
        }
        for s in statements {
            cx.exec(&s.replace("{p}", cx.prefix), &[])?;
        }
        let now = time(cx.now);
        cx.exec(
            &format!(
                "INSERT INTO {} (version, applied_at) VALUES ($1, $2)",
                cx.t("jadpo_migration")
            ),
            &[P::Int(i64::from(version)), now],
        )?;
        done.runtime.push(version);
    }
    entities(cx, apply, &mut done)?;
    Ok(done)
}

/// A field as `schema` records it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Recorded {
    kind: ColumnKind,
    required: bool,
}

/// What `schema` holds of one entity: its fields in position order (the
/// first is the key), and its indexes by name.
#[derive(Default)]
struct Held {
    fields: Vec<(String, Recorded)>,
    indexes: Vec<String>,
}

/// An index's row in `schema`: its field is `@index NAME`.
const INDEX: &str = "@index ";

fn entities(cx: &mut Cx<'_>, apply: Apply, done: &mut Migrated) -> Result<(), StoreError> {
    let rows = cx.rows(
        &format!(
            "SELECT entity, field, kind, required FROM {} ORDER BY entity, position",
            cx.t("jadpo_schema")
        ),
        &[],
    )?;
    let mut recorded: BTreeMap<String, Held> = BTreeMap::new();
    for row in rows {
        let mut r = super::rows::Reader::new(cx.store, row);
        let entity = r.text("a schema row's entity")?;
        let field = r.text("a schema row's field")?;
        let kind = r.text("a schema row's kind")?;
        let required = r.int("a schema row's required")? != 0;
        let held = recorded.entry(entity).or_default();
        if let Some(index) = field.strip_prefix(INDEX) {
            held.indexes.push(index.to_string());
            continue;
        }
        let kind = ColumnKind::parse(&kind)
            .ok_or_else(|| super::rows::damaged(cx.store, "a schema row's kind"))?;
        held.fields.push((field, Recorded { kind, required }));
    }
    let schema = cx.schema;
    for e in &schema.entities {
        let before = done.entities.len();
        match recorded.get(&e.table) {
            None => create(cx, apply, e, done)?,
            Some(held) => extend(cx, apply, e, &held.fields, done)?,
        }
        if done.entities.len() > before {
            view(cx, e)?;
        }
        let wanted: Vec<(String, Vec<String>)> = schema
            .indexes
            .iter()
            .filter(|(id, _)| *id == e.id)
            .map(|(_, fields)| (index_name(&e.table, fields), fields.clone()))
            .collect();
        let held = recorded
            .get(&e.table)
            .map(|h| h.indexes.clone())
            .unwrap_or_default();
        indexes(cx, apply, e, &wanted, &held, done)?;
    }
    Ok(())
}

/// `order_by_customer_state`; a name longer than Postgres keeps (63
/// bytes, with the store's prefix) ends in a hash of the fields instead,
/// so two long lists never meet in one truncated name.
fn index_name(table: &str, fields: &[String]) -> String {
    let plain = format!("{table}_by_{}", fields.join("_"));
    if plain.len() <= 40 {
        return plain;
    }
    let hash = blake3::hash(fields.join("\0").as_bytes()).to_hex();
    let short: String = table.chars().take(20).collect();
    format!("{short}_by_{}", hash.get(..16).unwrap_or(""))
}

/// Creates the indexes the build's queries need and drops those it no
/// longer does.
fn indexes(
    cx: &mut Cx<'_>,
    apply: Apply,
    e: &EntitySchema,
    wanted: &[(String, Vec<String>)],
    held: &[String],
    done: &mut Migrated,
) -> Result<(), StoreError> {
    for (name, fields) in wanted {
        if held.contains(name) {
            continue;
        }
        refuse_in_check(cx, apply, &format!("the index {name}"))?;
        let cols: Vec<String> = fields.iter().map(|f| quoted(f)).collect();
        cx.exec(
            &format!(
                "CREATE INDEX IF NOT EXISTS {} ON {} ({})",
                cx.t(name),
                cx.t(&e.table),
                cols.join(", ")
            ),
            &[],
        )?;
        record_field(cx, e, &format!("{INDEX}{name}"), None, false, 0)?;
        done.entities.push(format!("created index {name}"));
    }
    for name in held {
        if wanted.iter().any(|(w, _)| w == name) {
            continue;
        }
        refuse_in_check(cx, apply, &format!("dropping the index {name}"))?;
        cx.exec(&format!("DROP INDEX IF EXISTS {}", cx.t(name)), &[])?;
        cx.exec(
            &format!(
                "DELETE FROM {} WHERE entity = $1 AND field = $2",
                cx.t("jadpo_schema")
            ),
            &[P::text(&e.table), P::Text(format!("{INDEX}{name}"))],
        )?;
        done.entities.push(format!("dropped index {name}"));
    }
    Ok(())
}

/// `<entity>_v`: the table with native types where the database has
/// them (Postgres: instants as `timestamptz`, durations as `interval`),
/// for people reading the store; the runtime reads the table.
fn view(cx: &mut Cx<'_>, e: &EntitySchema) -> Result<(), StoreError> {
    let cols: Vec<String> = e
        .fields
        .iter()
        .map(|f| {
            let c = quoted(f.name.as_str());
            match (cx.dialect, f.kind) {
                (super::Dialect::Postgres, ColumnKind::Instant) => {
                    format!("{c}::timestamptz AS {c}")
                }
                (super::Dialect::Postgres, ColumnKind::Duration) => {
                    format!("{c} * interval '1 millisecond' AS {c}")
                }
                _ => c,
            }
        })
        .chain(std::iter::once("_version".to_string()))
        .collect();
    let name = cx.t(&format!("{}_v", e.table));
    cx.exec(&format!("DROP VIEW IF EXISTS {name}"), &[])?;
    cx.exec(
        &format!(
            "CREATE VIEW {name} AS SELECT {} FROM {}",
            cols.join(", "),
            cx.t(&e.table)
        ),
        &[],
    )?;
    Ok(())
}

fn refuse_in_check(cx: &Cx<'_>, apply: Apply, what: &str) -> Result<(), StoreError> {
    match apply {
        Apply::Check => Err(cx.error(
            ErrorKind::Incompatible,
            format!("{what} is needed, and `--migrate check` applies none"),
        )),
        Apply::Auto => Ok(()),
    }
}

fn create(
    cx: &mut Cx<'_>,
    apply: Apply,
    e: &EntitySchema,
    done: &mut Migrated,
) -> Result<(), StoreError> {
    refuse_in_check(cx, apply, &format!("a table for `{}`", e.name))?;
    let mut cols = Vec::with_capacity(e.fields.len() + 1);
    for (i, f) in e.fields.iter().enumerate() {
        let ty = column_type(cx.dialect, f.kind);
        let key = if i == 0 { " PRIMARY KEY" } else { "" };
        cols.push(format!("{} {ty}{key}", quoted(f.name.as_str())));
    }
    cols.push(format!("_version {} NOT NULL", version_type(cx.dialect)));
    cx.exec(
        &format!("CREATE TABLE {} ({})", cx.t(&e.table), cols.join(", ")),
        &[],
    )?;
    for (i, f) in e.fields.iter().enumerate() {
        record_field(cx, e, f.name.as_str(), Some(f.kind), !f.nullable, i)?;
    }
    done.entities.push(format!("created table {}", e.table));
    Ok(())
}

fn extend(
    cx: &mut Cx<'_>,
    apply: Apply,
    e: &EntitySchema,
    fields: &[(String, Recorded)],
    done: &mut Migrated,
) -> Result<(), StoreError> {
    let key = e.fields.first().map(|f| f.name.as_str());
    let kept_key = fields.first().map(|(n, _)| n.as_str());
    if key.is_some() && kept_key.is_some() && key != kept_key {
        return Err(cx.error(
            ErrorKind::Incompatible,
            format!(
                "`{}`'s key (its first field) was `{}` and this build makes it `{}`: a changed key is refused",
                e.name,
                kept_key.unwrap_or_default(),
                key.unwrap_or_default()
            ),
        ));
    }
    let mut rows = None;
    for (i, f) in e.fields.iter().enumerate() {
        let name = f.name.as_str();
        match fields.iter().find(|(n, _)| n == name).map(|(_, r)| r) {
            Some(was) if was.kind != f.kind => {
                return Err(cx.error(
                    ErrorKind::Incompatible,
                    format!(
                        "`{}.{name}` was stored as {} and this build makes it {}: a changed type is refused; keep the field's type, or add a new field",
                        e.name,
                        was.kind.as_str(),
                        f.kind.as_str()
                    ),
                ));
            }
            Some(_) => {}
            None => {
                let required = !f.nullable;
                if required {
                    let n = match rows {
                        Some(n) => n,
                        None => {
                            let got =
                                cx.rows(&format!("SELECT COUNT(*) FROM {}", cx.t(&e.table)), &[])?;
                            let n = got
                                .into_iter()
                                .next()
                                .and_then(|r| r.into_iter().next())
                                .and_then(|p| p.as_int())
                                .unwrap_or(0);
                            rows = Some(n);
                            n
                        }
                    };
                    if n > 0 {
                        return Err(cx.error(
                            ErrorKind::Incompatible,
                            format!(
                                "`{}.{name}` is a new required field, and `{}` has {n} rows that would have no value for it: make it optional (`{name}: T? optional`), or start from an empty store",
                                e.name, e.name
                            ),
                        ));
                    }
                }
                refuse_in_check(cx, apply, &format!("a column for `{}.{name}`", e.name))?;
                cx.exec(
                    &format!(
                        "ALTER TABLE {} ADD COLUMN {} {}",
                        cx.t(&e.table),
                        quoted(name),
                        column_type(cx.dialect, f.kind)
                    ),
                    &[],
                )?;
                record_field(cx, e, name, Some(f.kind), required, i)?;
                done.entities.push(format!("added {}.{name}", e.table));
            }
        }
    }
    Ok(())
}

/// Records a field (or, without a kind, an index) in `schema`.
fn record_field(
    cx: &mut Cx<'_>,
    e: &EntitySchema,
    field: &str,
    kind: Option<ColumnKind>,
    required: bool,
    position: usize,
) -> Result<(), StoreError> {
    cx.exec(
        &format!(
            "INSERT INTO {} (entity, field, kind, required, position) VALUES ($1, $2, $3, $4, $5)",
            cx.t("jadpo_schema")
        ),
        &[
            P::text(&e.table),
            P::text(field),
            P::text(kind.map_or("index", ColumnKind::as_str)),
            P::Int(i64::from(required)),
            P::Int(position as i64),
        ],
    )?;
    Ok(())
}
