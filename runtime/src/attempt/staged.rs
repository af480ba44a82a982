//! What an attempt stages until its commit: writes (each based on the
//! version of the row it read) and follow-ups, and the rows it sees: the
//! committed rows with its own staged writes applied. An entity's key is
//! its first declared field; `create` fails with its `conflict:` failure
//! when a committed or staged row has the key, and `update` and `delete`
//! with `missing:` when `where:` matches nothing.

use std::collections::BTreeMap;

use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::code::{QueryMode, Write as WriteCode};
use jadpo_compiler::ir::{EntityId, FailureId, Program, Ty, TypeKind};

use super::{unread, Attempt};
use crate::check::check_value;
use crate::eval::{fault, Failed, Flow, Read, WriteValues, R};
use crate::store::{matches, Write};
use crate::value::Value;

/// An entity's rows as an attempt has changed them: for each key, the
/// committed version it was based on (`None` when created here) and the
/// row (`None` when deleted here).
#[derive(Default)]
pub(super) struct Staged(BTreeMap<RowKey, (Option<u64>, Option<Value>)>);

/// An entity and a row's key in it.
type RowKey = (EntityId, Vec<u8>);

impl Staged {
    pub fn new() -> Staged {
        Staged::default()
    }

    /// The staged writes as the commit applies them.
    pub fn writes(&self) -> Vec<Write> {
        let mut out = Vec::new();
        for ((entity, key), (base, row)) in &self.0 {
            let (entity, key) = (*entity, key.clone());
            match (base, row) {
                (None, Some(value)) => out.push(Write::Create {
                    entity,
                    key,
                    value: value.clone(),
                }),
                (Some(version), Some(value)) => out.push(Write::Update {
                    entity,
                    key,
                    version: *version,
                    value: value.clone(),
                }),
                (Some(version), None) => out.push(Write::Delete {
                    entity,
                    key,
                    version: *version,
                }),
                (None, None) => {}
            }
        }
        out
    }

    /// The version a staged row was based on, else `base`.
    fn base(&self, entity: EntityId, key: &[u8], base: Option<u64>) -> Option<u64> {
        self.0
            .get(&(entity, key.to_vec()))
            .map_or(base, |(b, _)| *b)
    }

    fn put(&mut self, entity: EntityId, key: Vec<u8>, base: Option<u64>, row: Option<Value>) {
        self.0.insert((entity, key), (base, row));
    }
}

type Visible = Vec<(Vec<u8>, Option<u64>, Value)>;

impl Attempt<'_, '_> {
    /// The rows of an entity as this attempt sees them: committed, with its
    /// own staged writes applied, in key order.
    fn visible(&self, entity: EntityId, filter: &[(Name, Value)]) -> R<Visible> {
        let mut rows: BTreeMap<Vec<u8>, (Option<u64>, Value)> = self
            .store
            .select(entity, filter)
            .map_err(unread)?
            .into_iter()
            .map(|r| (r.key, (Some(r.version), r.value)))
            .collect();
        for ((e, key), (base, row)) in &self.staged.0 {
            if *e != entity {
                continue;
            }
            match row {
                Some(v) if matches(v, filter) => {
                    rows.insert(key.clone(), (*base, v.clone()));
                }
                _ => {
                    rows.remove(key);
                }
            }
        }
        Ok(rows.into_iter().map(|(k, (b, v))| (k, b, v)).collect())
    }

    /// The key of a row: its entity's first field, and that field's
    /// condition (a lookup of the row by key).
    fn key_of(&self, entity: EntityId, row: &Value) -> (Vec<u8>, Vec<(Name, Value)>) {
        let ty = self.s.program.entity(entity).ty;
        let first = match self.s.program.type_table().def(ty).map(|d| &d.kind) {
            Some(TypeKind::Record(fields)) => fields.first().map(|f| f.name),
            _ => None,
        };
        match (first, row.as_record()) {
            (Some(name), Some(r)) => {
                let value = r.get(name);
                (value.canonical(), vec![(name, value)])
            }
            _ => (row.canonical(), Vec::new()),
        }
    }

    pub(super) fn stage_write(&mut self, program: &Program, w: WriteValues<'_>) -> R<Value> {
        match w {
            WriteValues::Create { write, row } => self.create(program, write, row),
            WriteValues::Update { write, filter, set } => self.update(program, write, filter, set),
            WriteValues::Delete { write, filter } => {
                let WriteCode::Delete {
                    entity, missing, ..
                } = write
                else {
                    return fault("a delete that is not one");
                };
                let rows = self.visible(*entity, &filter)?;
                if rows.is_empty() {
                    return missing_row(*missing);
                }
                for (key, base, _) in rows {
                    let base = self.staged.base(*entity, &key, base);
                    self.staged.put(*entity, key, base, None);
                }
                Ok(Value::Unit)
            }
        }
    }

    fn create(&mut self, program: &Program, write: &WriteCode, row: Value) -> R<Value> {
        let WriteCode::Create {
            entity, conflict, ..
        } = write
        else {
            return fault("a create that is not one");
        };
        // Only the row with the key is read, not the entity's every row.
        let (key, by_key) = self.key_of(*entity, &row);
        let exists = self
            .visible(*entity, &by_key)?
            .iter()
            .any(|(k, _, _)| *k == key);
        if exists {
            return match conflict {
                Some(f) => Err(Flow::Fail(Failed {
                    failure: *f,
                    fields: Value::Unit,
                })),
                None => fault(format!(
                    "`create {}`: a row with its key exists, and the write names no `conflict:`",
                    program.entity(*entity).qualified
                )),
            };
        }
        let base = self.staged.base(*entity, &key, None);
        self.staged.put(*entity, key, base, Some(row.clone()));
        Ok(row)
    }

    fn update(
        &mut self,
        program: &Program,
        write: &WriteCode,
        filter: Vec<(Name, Value)>,
        set: Vec<(Name, Value)>,
    ) -> R<Value> {
        let WriteCode::Update {
            entity, missing, ..
        } = write
        else {
            return fault("an update that is not one");
        };
        let rows = self.visible(*entity, &filter)?;
        if rows.is_empty() {
            return missing_row(*missing);
        }
        let defs = entity_fields(program, *entity);
        let mut first = None;
        for (key, base, row) in rows {
            let Some(r) = row.as_record() else { continue };
            let mut fields: Vec<(Name, Value)> = r.fields().to_vec();
            for (name, v) in &set {
                if let Some(def) = defs.iter().find(|d| d.0 == *name) {
                    if let Err(p) = check_value(program.type_table(), &def.1, v) {
                        return fault(format!("`update`: `{name}` cannot hold this value: {p}"));
                    }
                }
                fields.retain(|(n, _)| n != name);
                fields.push((*name, v.clone()));
            }
            let updated = Value::record(fields);
            first.get_or_insert(updated.clone());
            let base = self.staged.base(*entity, &key, base);
            self.staged.put(*entity, key, base, Some(updated));
        }
        Ok(first.unwrap_or(Value::Unit))
    }

    pub(super) fn query(&mut self, _program: &Program, read: Read<'_>) -> R<Value> {
        let rows = self.visible(read.query.entity, &read.filter)?;
        match read.query.mode {
            QueryMode::Optional => Ok(rows.into_iter().next().map_or(Value::None, |(_, _, v)| v)),
            QueryMode::Required => match rows.into_iter().next() {
                Some((_, _, v)) => Ok(v),
                None => missing_row(read.query.missing),
            },
            QueryMode::Many => {
                let limit = read.query.limit.unwrap_or(1000) as usize;
                let list: Vec<Value> = rows.into_iter().take(limit).map(|(_, _, v)| v).collect();
                Ok(Value::List(list.into()))
            }
        }
    }
}

fn missing_row(missing: Option<FailureId>) -> R<Value> {
    match missing {
        Some(f) => Err(Flow::Fail(Failed {
            failure: f,
            fields: Value::Unit,
        })),
        None => Ok(Value::Unit),
    }
}

/// An entity's declared fields and their types.
fn entity_fields(program: &Program, entity: EntityId) -> Vec<(Name, Ty)> {
    let ty = program.entity(entity).ty;
    match program.type_table().def(ty).map(|d| &d.kind) {
        Some(TypeKind::Record(fields)) => fields.iter().map(|f| (f.name, f.ty.clone())).collect(),
        _ => Vec::new(),
    }
}
