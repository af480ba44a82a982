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

use jadpo_runtime::store::schema::{ColumnKind, EntitySchema, FieldSchema};
use jadpo_runtime::store::{ErrorKind, StoreError};

use super::ddl::{column_type, latest, migration_table, migrations, version_type};
use super::rows::time;
use super::{quoted, Cx, P};

/// What was done, for the server's start-up line; for `Inspect`, what a
/// start would do and what the store keeps (`jadpo db status`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Migrated {
    /// Runtime migrations applied (their versions); for `Inspect`, those
    /// a start would apply.
    pub runtime: Vec<u32>,
    /// `created table subscription`, `added subscription.note`, ...
    pub entities: Vec<String>,
    /// `Inspect`: the entity changes a start would make, in order
    /// (`create table refund`, `add column subscription.note`, ...).
    pub pending: Vec<String>,
    /// `Inspect`: why a start would refuse this build.
    pub refused: Vec<String>,
    /// What earlier builds left that this one does not use (kept by
    /// every mode but `Prune`).
    pub kept: Vec<Kept>,
    /// Schedules the store holds a last tick of that the app no longer
    /// declares, with that tick.
    pub schedules: Vec<(String, Option<String>)>,
}

impl Migrated {
    /// What a server says at start of store `store`'s setup: what it
    /// changed, and that earlier builds left something; nothing when
    /// neither.
    pub fn lines(&self, store: &str) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(last) = self.runtime.last() {
            out.push(format!(
                "store {store}: runtime tables set up to version {last}"
            ));
        }
        if !self.entities.is_empty() {
            out.push(format!("store {store}: {}", self.entities.join(", ")));
        }
        let columns = self
            .kept
            .iter()
            .filter(|k| matches!(k, Kept::Column { .. }));
        let counts = [
            (columns.count(), "column"),
            (
                self.kept
                    .iter()
                    .filter(|k| matches!(k, Kept::Table { .. }))
                    .count(),
                "table",
            ),
            (self.schedules.len(), "schedule"),
        ];
        let parts: Vec<String> = counts
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}{}", if *n == 1 { "" } else { "s" }))
            .collect();
        if !parts.is_empty() {
            out.push(format!(
                "store {store} keeps what earlier builds left ({}): `jadpo db status` lists it, `jadpo db prune --yes` drops it",
                parts.join(", ")
            ));
        }
        out
    }
}

/// A column or table an earlier build made and this one no longer uses:
/// kept, so an older server sharing the store during a deploy still
/// works, until `jadpo db prune --yes`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kept {
    Column {
        table: String,
        column: String,
        kind: String,
    },
    Table {
        table: String,
        columns: usize,
    },
}

/// How a store's setup is allowed to change it: `Check` refuses any
/// change (the server's `--migrate check`); `Inspect` changes nothing and
/// reports (`jadpo db status`); `Prune` drops what earlier builds left
/// (`jadpo db prune --yes`) and nothing else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Apply {
    Auto,
    Check,
    Inspect,
    Prune,
}

impl Apply {
    /// Whether the setup's transaction is kept: `Inspect` rolls back even
    /// the runtime tables it made to look.
    pub fn commits(self) -> bool {
        self != Apply::Inspect
    }
}

pub fn run(cx: &mut Cx<'_>, apply: Apply) -> Result<Migrated, StoreError> {
    let mut done = Migrated::default();
    runtime(cx, apply, &mut done)?;
    let found = entities(cx)?;
    match apply {
        Apply::Auto | Apply::Check => {
            for change in &found.changes {
                change.make(cx, apply, &mut done)?;
            }
            done.kept = found.kept;
            done.schedules = found.schedules;
        }
        Apply::Inspect => report(found, &mut done),
        Apply::Prune => prune(cx, found, &mut done)?,
    }
    Ok(done)
}

/// The runtime tables' migrations: applied (for `Inspect`, in the
/// transaction it rolls back, so the entities can be read).
fn runtime(cx: &mut Cx<'_>, apply: Apply, done: &mut Migrated) -> Result<(), StoreError> {
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
        match apply {
            Apply::Check => {
                return Err(cx.error(
                    ErrorKind::Incompatible,
                    format!("its runtime tables need migration {version}, and `--migrate check` applies none"),
                ))
            }
            Apply::Prune => {
                return Err(cx.error(
                    ErrorKind::Incompatible,
                    format!("its runtime tables need migration {version}: start a server of this build first, which applies it, then prune"),
                ))
            }
            Apply::Auto | Apply::Inspect => {}
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
    Ok(())
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

/// One change the build needs, in the order a start makes them.
enum Change<'s> {
    /// The build cannot run on this store: the reason.
    Refuse(String),
    Create(&'s EntitySchema),
    AddColumn(&'s EntitySchema, &'s FieldSchema, usize),
    /// The entity's `_v` view, made again after its table changed.
    View(&'s EntitySchema),
    CreateIndex(&'s EntitySchema, String, &'s [String]),
    DropIndex(&'s EntitySchema, String),
}

/// The build's entities against what the store holds.
struct Found<'s> {
    changes: Vec<Change<'s>>,
    kept: Vec<Kept>,
    schedules: Vec<(String, Option<String>)>,
}

fn entities<'s>(cx: &mut Cx<'s>) -> Result<Found<'s>, StoreError> {
    let recorded = recorded(cx)?;
    let schema = cx.schema;
    let mut changes = Vec::new();
    let mut kept = Vec::new();
    for e in &schema.entities {
        let before = changes.len();
        match recorded.get(&e.table) {
            None => changes.push(Change::Create(e)),
            Some(held) => extend(cx, e, &held.fields, &mut changes)?,
        }
        if changes[before..]
            .iter()
            .any(|c| !matches!(c, Change::Refuse(_)))
        {
            changes.push(Change::View(e));
        }
        let held = recorded.get(&e.table);
        for (name, fields) in &schema.indexes {
            if *name != e.id {
                continue;
            }
            let index = index_name(&e.table, fields);
            if !held.is_some_and(|h| h.indexes.contains(&index)) {
                changes.push(Change::CreateIndex(e, index, fields));
            }
        }
        for index in held.map(|h| &h.indexes[..]).unwrap_or_default() {
            let wanted = schema
                .indexes
                .iter()
                .any(|(id, fields)| *id == e.id && index_name(&e.table, fields) == *index);
            if !wanted {
                changes.push(Change::DropIndex(e, index.clone()));
            }
        }
        for (column, was) in held.map(|h| &h.fields[..]).unwrap_or_default() {
            if !e.fields.iter().any(|f| f.name.as_str() == column) {
                kept.push(Kept::Column {
                    table: e.table.clone(),
                    column: column.clone(),
                    kind: was.kind.as_str().to_string(),
                });
            }
        }
    }
    for (table, held) in &recorded {
        if !schema.entities.iter().any(|e| e.table == *table) {
            kept.push(Kept::Table {
                table: table.clone(),
                columns: held.fields.len(),
            });
        }
    }
    let schedules = removed_schedules(cx)?;
    Ok(Found {
        changes,
        kept,
        schedules,
    })
}

/// What `schema` records, by table.
fn recorded(cx: &mut Cx<'_>) -> Result<BTreeMap<String, Held>, StoreError> {
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
    Ok(recorded)
}

/// The schedules the store holds a last tick of that the app no longer
/// declares, by name.
fn removed_schedules(cx: &mut Cx<'_>) -> Result<Vec<(String, Option<String>)>, StoreError> {
    let rows = cx.rows(
        &format!(
            "SELECT name, last_tick FROM {} ORDER BY name",
            cx.t("jadpo_schedule")
        ),
        &[],
    )?;
    let mut out = Vec::new();
    for row in rows {
        let mut r = super::rows::Reader::new(cx.store, row);
        let name = r.text("a schedule's name")?;
        let last = r.opt_text();
        if !cx.schema.schedules.contains(&name) {
            out.push((name, last));
        }
    }
    Ok(out)
}

impl Change<'_> {
    /// Makes the change (`Auto`), or refuses it (`Check`, and any
    /// `Refuse`).
    fn make(&self, cx: &mut Cx<'_>, apply: Apply, done: &mut Migrated) -> Result<(), StoreError> {
        match self {
            Change::Refuse(why) => return Err(cx.error(ErrorKind::Incompatible, why.clone())),
            _ if apply == Apply::Check => {
                return Err(cx.error(
                    ErrorKind::Incompatible,
                    format!(
                        "{} is needed, and `--migrate check` applies none",
                        self.what()
                    ),
                ))
            }
            Change::Create(e) => create(cx, e, done)?,
            Change::AddColumn(e, f, position) => {
                let name = f.name.as_str();
                cx.exec(
                    &format!(
                        "ALTER TABLE {} ADD COLUMN {} {}",
                        cx.t(&e.table),
                        quoted(name),
                        column_type(cx.dialect, f.kind)
                    ),
                    &[],
                )?;
                record_field(cx, e, name, Some(f.kind), !f.nullable, *position)?;
                done.entities.push(format!("added {}.{name}", e.table));
            }
            Change::View(e) => view(cx, e)?,
            Change::CreateIndex(e, name, fields) => {
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
            Change::DropIndex(e, name) => {
                cx.exec(&format!("DROP INDEX IF EXISTS {}", cx.t(name)), &[])?;
                forget_field(cx, &e.table, Some(&format!("{INDEX}{name}")))?;
                done.entities.push(format!("dropped index {name}"));
            }
        }
        Ok(())
    }

    /// The change, as `--migrate check` names what it would need.
    fn what(&self) -> String {
        match self {
            Change::Refuse(why) => why.clone(),
            Change::Create(e) => format!("a table for `{}`", e.name),
            Change::AddColumn(e, f, _) => format!("a column for `{}.{}`", e.name, f.name.as_str()),
            Change::View(e) => format!("the view {}_v", e.table),
            Change::CreateIndex(_, name, _) => format!("the index {name}"),
            Change::DropIndex(_, name) => format!("dropping the index {name}"),
        }
    }

    /// The change, as `jadpo db status` lists what a start would make.
    fn pending(&self) -> Option<String> {
        Some(match self {
            Change::Refuse(_) | Change::View(_) => return None,
            Change::Create(e) => format!("create table {}", e.table),
            Change::AddColumn(e, f, _) => format!("add column {}.{}", e.table, f.name.as_str()),
            Change::CreateIndex(_, name, _) => format!("create index {name}"),
            Change::DropIndex(_, name) => format!("drop index {name}"),
        })
    }
}

/// `Inspect`: what a start would do, and what the store keeps.
fn report(found: Found<'_>, done: &mut Migrated) {
    for change in &found.changes {
        match change {
            Change::Refuse(why) => done.refused.push(why.clone()),
            other => done.pending.extend(other.pending()),
        }
    }
    done.kept = found.kept;
    done.schedules = found.schedules;
}

/// `Prune`: drops what earlier builds left, once the store is this
/// build's in every other way (a pending change may need a kept column,
/// as an index over it, so the build's start comes first).
fn prune(cx: &mut Cx<'_>, found: Found<'_>, done: &mut Migrated) -> Result<(), StoreError> {
    if let Some(change) = found.changes.first() {
        return Err(cx.error(
            ErrorKind::Incompatible,
            format!(
                "this build still needs {}: start a server of it first, then prune",
                change.what()
            ),
        ));
    }
    let schema = cx.schema;
    for kept in &found.kept {
        match kept {
            Kept::Column { table, column, .. } => {
                // A view naming the column would stop its drop.
                cx.exec(
                    &format!("DROP VIEW IF EXISTS {}", cx.t(&format!("{table}_v"))),
                    &[],
                )?;
                cx.exec(
                    &format!("ALTER TABLE {} DROP COLUMN {}", cx.t(table), quoted(column)),
                    &[],
                )?;
                forget_field(cx, table, Some(column))?;
                done.entities
                    .push(format!("dropped column {table}.{column}"));
            }
            Kept::Table { table, .. } => {
                cx.exec(
                    &format!("DROP VIEW IF EXISTS {}", cx.t(&format!("{table}_v"))),
                    &[],
                )?;
                cx.exec(&format!("DROP TABLE IF EXISTS {}", cx.t(table)), &[])?;
                forget_field(cx, table, None)?;
                done.entities.push(format!("dropped table {table}"));
            }
        }
    }
    for e in &schema.entities {
        let dropped = |k: &Kept| matches!(k, Kept::Column { table, .. } if *table == e.table);
        if found.kept.iter().any(dropped) {
            view(cx, e)?;
        }
    }
    for (name, _) in &found.schedules {
        cx.exec(
            &format!("DELETE FROM {} WHERE name = $1", cx.t("jadpo_schedule")),
            &[P::text(name)],
        )?;
        done.entities.push(format!("forgot schedule {name}"));
    }
    Ok(())
}

/// Removes a field's row from `schema` (without a field, the entity's).
fn forget_field(cx: &mut Cx<'_>, table: &str, field: Option<&str>) -> Result<(), StoreError> {
    let t = cx.t("jadpo_schema");
    match field {
        Some(field) => cx.exec(
            &format!("DELETE FROM {t} WHERE entity = $1 AND field = $2"),
            &[P::text(table), P::text(field)],
        ),
        None => cx.exec(
            &format!("DELETE FROM {t} WHERE entity = $1"),
            &[P::text(table)],
        ),
    }?;
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

fn create(cx: &mut Cx<'_>, e: &EntitySchema, done: &mut Migrated) -> Result<(), StoreError> {
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

/// The changes an entity the store already holds needs, in field order:
/// new columns, or why the build cannot have them.
fn extend<'s>(
    cx: &mut Cx<'_>,
    e: &'s EntitySchema,
    fields: &[(String, Recorded)],
    changes: &mut Vec<Change<'s>>,
) -> Result<(), StoreError> {
    let key = e.fields.first().map(|f| f.name.as_str());
    let kept_key = fields.first().map(|(n, _)| n.as_str());
    if key.is_some() && kept_key.is_some() && key != kept_key {
        changes.push(Change::Refuse(format!(
            "`{}`'s key (its first field) was `{}` and this build makes it `{}`: a changed key is refused",
            e.name,
            kept_key.unwrap_or_default(),
            key.unwrap_or_default()
        )));
        return Ok(());
    }
    let mut rows = None;
    for (i, f) in e.fields.iter().enumerate() {
        let name = f.name.as_str();
        match fields.iter().find(|(n, _)| n == name).map(|(_, r)| r) {
            Some(was) if was.kind != f.kind => {
                changes.push(Change::Refuse(format!(
                    "`{}.{name}` was stored as {} and this build makes it {}: a changed type is refused; keep the field's type, or add a new field",
                    e.name,
                    was.kind.as_str(),
                    f.kind.as_str()
                )));
            }
            Some(_) => {}
            None if !f.nullable && count_rows(cx, e, &mut rows)? > 0 => {
                changes.push(Change::Refuse(format!(
                    "`{}.{name}` is a new required field, and `{}` has {} rows that would have no value for it: make it optional (`{name}: T? optional`), or start from an empty store",
                    e.name,
                    e.name,
                    rows.unwrap_or_default()
                )));
            }
            None => changes.push(Change::AddColumn(e, f, i)),
        }
    }
    Ok(())
}

/// The entity's rows, counted once.
fn count_rows(
    cx: &mut Cx<'_>,
    e: &EntitySchema,
    rows: &mut Option<i64>,
) -> Result<i64, StoreError> {
    if let Some(n) = rows {
        return Ok(*n);
    }
    let got = cx.rows(&format!("SELECT COUNT(*) FROM {}", cx.t(&e.table)), &[])?;
    let n = super::rows::first_int(got);
    *rows = Some(n);
    Ok(n)
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
