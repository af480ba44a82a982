//! Every store operation, written once over [`Conn`](super::Conn) for both SQL stores.
//! Each runs inside a transaction its store opened (on SQLite, a savepoint
//! of the writer's batch): a failure rolls back everything it did. A
//! fenced operation's first statement matches the delivery's lease
//! generation; no match is a lost lease, and nothing it wrote is kept
//! (statements sent with the fence in one round trip are rolled back; on
//! Postgres a step record is one statement whose writes read the fence's
//! row, see `at_once`).
//! The semantics are `MemStore`'s (`jadpo_runtime::store`), which the
//! conformance suite holds both to.

use std::collections::BTreeSet;

use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::EntityId;
use jadpo_runtime::record::{StepRow, StoredRecord};
use jadpo_runtime::store::schema::to_column;
use jadpo_runtime::store::{
    abandon_refusal, before, in_doubt, next_generation, retry_refusal, ListFilter, Operated,
    Pruned, Retention, LAPSED_WHY,
};
use jadpo_runtime::store::{
    Adopted, ClaimRequest, Claimed, Commit, CommitError, DeliveryRow, DeliveryState, ErrorKind,
    Fenced, Follow, Item, KeyClaim, KeyRequest, Lease, NewDelivery, Next, Outboxed, Row,
    StoreError, StoredResponse, Write, ADOPTED_QUEUE, MAX_RESCUES, RESCUES_WHY,
};
use jadpo_runtime::value::{Instant, Value};

use super::rows::{self, time, Reader, DELIVERY_COLUMNS, EVENT_COLUMNS, ITEM_COLUMNS};
use super::{quoted, Cx, Dialect, P};

type Res<T> = Result<T, StoreError>;

fn until(now: Instant, lease_ms: u64) -> Instant {
    Instant(now.0 + i128::from(lease_ms) * 1_000_000)
}

/// The first statement of a fenced operation (design section 17): extends
/// the delivery's `lease_until` by a lease where its lease generation is
/// the caller's, so a runner that writes keeps its lease between
/// heartbeats. `false`: the lease is lost.
fn fence(cx: &mut Cx<'_>, delivery: &str, lease: &Lease) -> Res<bool> {
    let (sql, params) = fencing(cx, delivery, lease);
    Ok(cx.exec(&sql, &params)? == 1)
}

/// [`fence`]'s statement, for an operation that sends it with others.
fn fencing(cx: &Cx<'_>, delivery: &str, lease: &Lease) -> (String, Vec<P>) {
    let until = until(cx.now, lease.ms);
    (
        format!(
            "UPDATE {} SET lease_until = $3 WHERE id = $1 AND lease_gen = $2",
            cx.t("jadpo_delivery")
        ),
        vec![
            P::text(delivery),
            P::Int(lease.generation as i64),
            time(until),
        ],
    )
}

// ---------------------------------------------------------------- records

pub fn record(cx: &mut Cx<'_>, delivery: &str) -> Res<Option<StoredRecord>> {
    let head = cx.rows(
        &format!(
            "SELECT format, build_id, shape_digest, mode, started_at FROM {} WHERE delivery = $1",
            cx.t("jadpo_record")
        ),
        &[P::text(delivery)],
    )?;
    let Some(head) = head.into_iter().next() else {
        return Ok(None);
    };
    let mut r = Reader::new(cx.store, head);
    let format = r.int("a record's format")? as u32;
    let build_id = r.text("a record's build id")?;
    let shape_digest = r.text("a record's shape digest")?;
    let mode = rows::mode(cx.store, &r.text("a record's mode")?)?;
    let started_at = r.time("a record's start")?;
    let steps = cx.rows(
        &format!(
            "SELECT position, operation, fingerprint, field_fingerprints, sent_at, key_gen, runner_gen, key, state, doubt, nonce, ciphertext FROM {} WHERE delivery = $1 ORDER BY position",
            cx.t("jadpo_step")
        ),
        &[P::text(delivery)],
    )?;
    let store = cx.store;
    let steps = steps
        .into_iter()
        .map(|row| rows::step_row(store, row))
        .collect::<Res<Vec<_>>>()?;
    Ok(Some(StoredRecord {
        format,
        build_id,
        shape_digest,
        mode,
        started_at,
        steps,
    }))
}

pub fn put_step(
    cx: &mut Cx<'_>,
    delivery: &str,
    lease: &Lease,
    record: &StoredRecord,
    step: &StepRow,
) -> Result<(), Fenced> {
    let mut header = vec![P::text(delivery)];
    header.extend(header_values(record));
    header.push(P::Int(lease.generation as i64));
    let mut row = vec![P::text(delivery)];
    row.extend(step_values(step));
    let statements = [
        (
            format!(
                "INSERT INTO {} (delivery, format, build_id, shape_digest, mode, started_at, lease_gen) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (delivery) DO UPDATE SET lease_gen = excluded.lease_gen",
                cx.t("jadpo_record")
            ),
            header,
        ),
        truncating(cx, delivery, step.position),
        (
            format!(
                "INSERT INTO {} (delivery, position, operation, fingerprint, field_fingerprints, sent_at, key_gen, runner_gen, key, state, doubt, nonce, ciphertext) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
                cx.t("jadpo_step")
            ),
            row,
        ),
    ];
    fenced(cx, delivery, lease, statements)
}

/// A record header's columns after its delivery: format, build id,
/// shape digest, mode, start.
fn header_values(record: &StoredRecord) -> [P; 5] {
    [
        P::Int(i64::from(record.format)),
        P::text(&record.build_id),
        P::text(&record.shape_digest),
        P::text(record.mode.as_str()),
        time(record.started_at),
    ]
}

/// A step's columns after its delivery, from its position to its
/// ciphertext.
fn step_values(step: &StepRow) -> [P; 12] {
    let (state, doubt, nonce, ciphertext) = rows::step_state(&step.state);
    [
        P::Int(i64::from(step.position)),
        P::text(&step.operation),
        step.fingerprint.map_or(P::Null, |f| P::Bytes(f.to_vec())),
        P::Text(rows::field_fingerprints(&step.field_fingerprints)),
        time(step.sent_at),
        P::Int(i64::from(step.key_generation)),
        P::Int(step.runner_generation as i64),
        P::opt_text(step.key.clone()),
        state,
        doubt,
        nonce,
        ciphertext,
    ]
}

/// A fenced record write on Postgres as one statement, so one implicit
/// transaction (design section 17): its first part extends the lease
/// where the generation matches (`$1` the delivery, `$2` the generation,
/// `$3` the lease in milliseconds, from the database's clock), and each of
/// `writes` reads that part's row (`f`), so a lost lease writes nothing.
/// `params` are `$4` on. The statement answers the fence's row count.
fn at_once(
    cx: &Cx<'_>,
    delivery: &str,
    lease: &Lease,
    writes: &[String],
    params: Vec<P>,
) -> (String, Vec<P>) {
    use std::fmt::Write as _;
    let mut sql = format!(
        "WITH f AS (UPDATE {} SET lease_until = {} WHERE id = $1 AND lease_gen = $2 RETURNING id)",
        cx.t("jadpo_delivery"),
        db_until(3)
    );
    for (i, w) in writes.iter().enumerate() {
        let _ = write!(sql, ", w{i} AS ({w})");
    }
    sql.push_str(" SELECT count(*) FROM f");
    let mut all = vec![
        P::text(delivery),
        P::Int(lease.generation as i64),
        P::Int(i64::try_from(lease.ms).unwrap_or(i64::MAX)),
    ];
    all.extend(params);
    (sql, all)
}

/// The database's clock now, in the stores' 9-digit RFC 3339 text (times
/// so written compare as they sort).
const DB_NOW: &str =
    "to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"000Z\"')";

/// `lease_until` a lease (parameter `$slot`, milliseconds) from the
/// database's clock, written as [`DB_NOW`] writes the time.
fn db_until(slot: usize) -> String {
    format!(
        "to_char((clock_timestamp() + ${slot}::bigint * interval '1 millisecond') AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"000Z\"')"
    )
}

/// [`put_step`] as one statement (see `at_once`). The step replaces
/// its position's row in place and later ones go, which is what removing
/// from its position on and inserting it does.
pub fn put_step_at_once(
    cx: &Cx<'_>,
    delivery: &str,
    lease: &Lease,
    record: &StoredRecord,
    step: &StepRow,
) -> (String, Vec<P>) {
    let (r, s) = (cx.t("jadpo_record"), cx.t("jadpo_step"));
    let writes = [
        format!(
            "INSERT INTO {r} (delivery, format, build_id, shape_digest, mode, started_at, lease_gen) \
             SELECT id, $4::bigint, $5::text, $6::text, $7::text, $8::text, $2::bigint FROM f \
             ON CONFLICT (delivery) DO UPDATE SET lease_gen = excluded.lease_gen \
             WHERE {r}.lease_gen <> excluded.lease_gen"
        ),
        format!("DELETE FROM {s} WHERE delivery IN (SELECT id FROM f) AND position > $9::bigint"),
        format!(
            "INSERT INTO {s} (delivery, position, operation, fingerprint, field_fingerprints, sent_at, key_gen, runner_gen, key, state, doubt, nonce, ciphertext) \
             SELECT id, $9::bigint, $10::text, $11::bytea, $12::text, $13::text, $14::bigint, $15::bigint, $16::text, $17::text, $18::text, $19::bytea, $20::bytea FROM f \
             ON CONFLICT (delivery, position) DO UPDATE SET operation = excluded.operation, \
             fingerprint = excluded.fingerprint, field_fingerprints = excluded.field_fingerprints, \
             sent_at = excluded.sent_at, key_gen = excluded.key_gen, runner_gen = excluded.runner_gen, \
             key = excluded.key, state = excluded.state, doubt = excluded.doubt, nonce = excluded.nonce, \
             ciphertext = excluded.ciphertext"
        ),
    ];
    let mut params: Vec<P> = header_values(record).into();
    params.extend(step_values(step));
    at_once(cx, delivery, lease, &writes, params)
}

/// [`truncate_steps`] as one statement (see `at_once`).
pub fn truncate_at_once(
    cx: &Cx<'_>,
    delivery: &str,
    lease: &Lease,
    position: u32,
) -> (String, Vec<P>) {
    let removal = format!(
        "DELETE FROM {} WHERE delivery IN (SELECT id FROM f) AND position >= $4::bigint",
        cx.t("jadpo_step")
    );
    at_once(
        cx,
        delivery,
        lease,
        &[removal],
        vec![P::Int(i64::from(position))],
    )
}

pub fn truncate_steps(
    cx: &mut Cx<'_>,
    delivery: &str,
    lease: &Lease,
    position: u32,
) -> Result<(), Fenced> {
    let removal = truncating(cx, delivery, position);
    fenced(cx, delivery, lease, [removal])
}

/// Runs `statements` behind the fence, all sent at once: a lost lease
/// fails the operation, and its transaction rolls them back.
fn fenced(
    cx: &mut Cx<'_>,
    delivery: &str,
    lease: &Lease,
    statements: impl IntoIterator<Item = (String, Vec<P>)>,
) -> Result<(), Fenced> {
    let all: Vec<(String, Vec<P>)> = std::iter::once(fencing(cx, delivery, lease))
        .chain(statements)
        .collect();
    let counts = cx.exec_all(&all)?;
    if counts.first() != Some(&1) {
        return Err(Fenced::LeaseLost);
    }
    Ok(())
}

/// The statement removing a record's steps from `position` on.
fn truncating(cx: &Cx<'_>, delivery: &str, position: u32) -> (String, Vec<P>) {
    (
        format!(
            "DELETE FROM {} WHERE delivery = $1 AND position >= $2",
            cx.t("jadpo_step")
        ),
        vec![P::text(delivery), P::Int(i64::from(position))],
    )
}

// ------------------------------------------------------------------- rows

pub fn select(cx: &mut Cx<'_>, entity: EntityId, filter: &[(Name, Value)]) -> Res<Vec<Row>> {
    let Some(e) = cx.schema.entity(entity) else {
        return Ok(Vec::new());
    };
    let d = cx.dialect;
    let cols: Vec<String> = e
        .fields
        .iter()
        .map(|f| rows::read(d, f.kind, &quoted(f.name.as_str())))
        .collect();
    let mut params = Vec::with_capacity(filter.len());
    let mut wheres = Vec::with_capacity(filter.len());
    for (name, v) in filter {
        let Some(f) = e.fields.iter().find(|f| f.name == *name) else {
            // A field the entity does not have matches no row.
            return Ok(Vec::new());
        };
        let column = quoted(name.as_str());
        if matches!(v, Value::None) {
            wheres.push(format!("{column} IS NULL"));
            continue;
        }
        let (p, slot) = rows::bind(d, f.kind, to_column(f.kind, v), params.len() + 1);
        params.push(p);
        wheres.push(format!("{column} = {slot}"));
    }
    let key = e
        .key()
        .map_or("_version".to_string(), |k| quoted(k.name.as_str()));
    let sql = format!(
        "SELECT {}, _version FROM {}{} ORDER BY {key}",
        cols.join(", "),
        cx.t(&e.table),
        if wheres.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", wheres.join(" AND "))
        }
    );
    let found = cx.rows(&sql, &params)?;
    let mut out = Vec::with_capacity(found.len());
    for mut row in found {
        let version =
            row.pop()
                .and_then(|p| p.as_int())
                .ok_or_else(|| rows::damaged(cx.store, "a row's version"))? as u64;
        let columns = e
            .fields
            .iter()
            .zip(row)
            .map(|(f, p)| rows::column(f.kind, p))
            .collect();
        let value = cx
            .schema
            .row_value(e, columns)
            .map_err(|why| rows::damaged(cx.store, &format!("`{}`: {why}", e.name)))?;
        let key = e
            .key()
            .and_then(|k| value.as_record().map(|r| r.get(k.name)))
            .unwrap_or(Value::None)
            .canonical();
        out.push(Row {
            key,
            version,
            value,
        });
    }
    Ok(out)
}

/// The statement of one of a commit's writes; it changes one row unless
/// another delivery changed the row first (the version it read), or the
/// key exists already. `None`: the entity has no key, a conflict.
fn write_statement(cx: &Cx<'_>, w: &Write) -> Result<Option<(String, Vec<P>)>, CommitError> {
    let entity = w.entity();
    let Some(e) = cx.schema.entity(entity) else {
        return Err(CommitError::Store(cx.error(
            ErrorKind::Failed,
            format!("entity {} is not stored here", entity.0),
        )));
    };
    let d = cx.dialect;
    let key_field = e.key().map(|k| (k.name, k.kind));
    let Some((key_name, key_kind)) = key_field else {
        return Ok(None);
    };
    let key_col = quoted(key_name.as_str());
    match w {
        Write::Create { value, .. } | Write::Update { value, .. } => {
            let r = value.as_record();
            let mut params = Vec::new();
            let mut cols = Vec::new();
            let mut slots = Vec::new();
            for f in &e.fields {
                let v = r.map_or(Value::None, |r| r.get(f.name));
                let (p, slot) = rows::bind(d, f.kind, to_column(f.kind, &v), params.len() + 1);
                params.push(p);
                cols.push(quoted(f.name.as_str()));
                slots.push(slot);
            }
            match w {
                Write::Create { .. } => {
                    let sql = format!(
                        "INSERT INTO {} ({}, _version) VALUES ({}, 1) ON CONFLICT ({key_col}) DO NOTHING",
                        cx.t(&e.table),
                        cols.join(", "),
                        slots.join(", ")
                    );
                    Ok(Some((sql, params)))
                }
                Write::Update { version, .. } => {
                    let sets: Vec<String> = cols
                        .iter()
                        .zip(&slots)
                        .skip(1)
                        .map(|(c, s)| format!("{c} = {s}"))
                        .collect();
                    let n = params.len();
                    let key_slot = slots.first().cloned().unwrap_or_default();
                    params.push(P::Int(*version as i64));
                    let sql = format!(
                        "UPDATE {} SET {}{}_version = _version + 1 WHERE {key_col} = {key_slot} AND _version = ${}",
                        cx.t(&e.table),
                        sets.join(", "),
                        if sets.is_empty() { "" } else { ", " },
                        n + 1
                    );
                    Ok(Some((sql, params)))
                }
                Write::Delete { .. } => Ok(None),
            }
        }
        Write::Delete { key, version, .. } => {
            let key_value = e.key().map(|k| key_value(k, key)).unwrap_or(Value::None);
            let (p, slot) = rows::bind(d, key_kind, to_column(key_kind, &key_value), 1);
            let sql = format!(
                "DELETE FROM {} WHERE {key_col} = {slot} AND _version = $2",
                cx.t(&e.table)
            );
            Ok(Some((sql, vec![p, P::Int(*version as i64)])))
        }
    }
}

/// A key's value from its canonical bytes (the runtime gives a delete the
/// key it read).
fn key_value(k: &jadpo_runtime::store::schema::FieldSchema, key: &[u8]) -> Value {
    match serde_json::from_slice::<serde_json::Value>(key) {
        Ok(serde_json::Value::String(s)) => Value::text(&s),
        Ok(serde_json::Value::Number(n)) => n.as_i64().map_or(Value::None, Value::Int),
        Ok(serde_json::Value::Bool(b)) => Value::Bool(b),
        Ok(other) if k.kind == jadpo_runtime::store::schema::ColumnKind::Json => {
            Value::text(&other.to_string())
        }
        _ => Value::None,
    }
}

// ----------------------------------------------------------------- commit

pub fn commit(cx: &mut Cx<'_>, c: &Commit, lease: &Lease) -> Result<(), CommitError> {
    if cx.dialect == Dialect::Postgres {
        return commit_pipelined(cx, c, lease);
    }
    // The fence and the writes in one round trip: a lost lease or a
    // conflict rolls the whole transaction back, so what was sent after
    // it is never kept.
    let mut checked = vec![fencing(cx, &c.delivery, lease)];
    for w in &c.writes {
        match write_statement(cx, w)? {
            Some(statement) => checked.push(statement),
            None => return Err(CommitError::Conflict),
        }
    }
    let counts = cx.exec_all(&checked)?;
    if counts.first() != Some(&1) {
        return Err(CommitError::LeaseLost);
    }
    if counts.iter().skip(1).any(|n| *n != 1) {
        return Err(CommitError::Conflict);
    }
    let done = committed(cx, c)?;
    // The events and their deliveries, the record's removal, the handled
    // marker, the delivery's step list and a route's answer in one round
    // trip.
    cx.exec_all(&done)?;
    set_state(cx, &c.delivery, DeliveryState::Completed).map_err(CommitError::from)
}

/// [`commit`] on Postgres in two round trips, its transaction begun by
/// the store with the first and committed with the second (see
/// `Conn::rows_all_last`). First the fence, which extends the lease at
/// the database's clock and reads the delivery's state and unique claim
/// under its row lock, with the writes, each returning the row it
/// changed; then, when the lease held and every write found its version,
/// the events and deliveries, the record's removal, the handled marker,
/// the step list, a route's answer, the state and the unique claim's
/// count, with `COMMIT`. It reads no clock of its own.
fn commit_pipelined(cx: &mut Cx<'_>, c: &Commit, lease: &Lease) -> Result<(), CommitError> {
    let d = cx.t("jadpo_delivery");
    let mut checked = vec![(
        format!(
            "UPDATE {d} SET lease_until = {} WHERE id = $1 AND lease_gen = $2 RETURNING state, unique_key, unique_states",
            db_until(3)
        ),
        vec![
            P::text(&c.delivery),
            P::Int(lease.generation as i64),
            P::Int(lease.ms as i64),
        ],
    )];
    for w in &c.writes {
        match write_statement(cx, w)? {
            Some((sql, params)) => checked.push((format!("{sql} RETURNING 1"), params)),
            None => return Err(CommitError::Conflict),
        }
    }
    let mut answers = cx.rows_all(&checked)?.into_iter();
    let Some(fence) = answers.next().and_then(|rows| rows.into_iter().next()) else {
        return Err(CommitError::LeaseLost);
    };
    if answers.any(|rows| rows.len() != 1) {
        return Err(CommitError::Conflict);
    }
    let mut done = committed(cx, c)?;
    done.push((
        format!("UPDATE {d} SET state = $2 WHERE id = $1"),
        vec![
            P::text(&c.delivery),
            P::text(DeliveryState::Completed.as_str()),
        ],
    ));
    let mut r = Reader::new(cx.store, fence);
    let before = DeliveryState::parse(&r.text("a delivery's state")?)
        .ok_or_else(|| rows::damaged(cx.store, "a delivery's state"))?;
    if let Some(key) = r.opt_text() {
        let states = r
            .opt_text()
            .map(|s| rows::states_of(&s))
            .unwrap_or_default();
        let (key, after) = ((key.as_str(), &states[..]), DeliveryState::Completed);
        done.extend(unique_statements(cx, &c.delivery, key, before, after));
    }
    cx.rows_all_last(&done)?;
    Ok(())
}

/// What a commit writes once its fence and writes held, but the state:
/// its events and their deliveries, the record's removal, the handled
/// marker, the delivery's step list and a route's answer.
fn committed(cx: &mut Cx<'_>, c: &Commit) -> Result<Vec<(String, Vec<P>)>, CommitError> {
    let mut done = insert_events(cx, &c.follow_ups, &c.delivery, c.at)?;
    let id = P::text(&c.delivery);
    for table in ["jadpo_step", "jadpo_record"] {
        done.push((
            format!("DELETE FROM {} WHERE delivery = $1", cx.t(table)),
            vec![id.clone()],
        ));
    }
    done.push((
        format!(
            "INSERT INTO {} (delivery, committed_at) VALUES ($1, $2) ON CONFLICT (delivery) DO NOTHING",
            cx.t("jadpo_handled")
        ),
        vec![id.clone(), time(c.at)],
    ));
    done.push((
        format!(
            "UPDATE {} SET steps = $2, ended_at = $3, lease_until = NULL WHERE id = $1",
            cx.t("jadpo_delivery")
        ),
        vec![id, P::Text(rows::steps(&c.steps)), time(c.at)],
    ));
    if let Some(r) = &c.response {
        done.push(response_statement(cx, &c.delivery, r));
    }
    Ok(done)
}

/// Inserts a commit's events with their deliveries: same-key follow-ups
/// collapse in staging order, then unique keys are claimed in key order
/// (two commits never wait on each other the other way round), and a key
/// whose claim holds is skipped. Answers the statements that insert them,
/// for the commit to send with its others (a claim read here is under
/// its key's lock, and no statement of this commit changes it first).
fn insert_events(
    cx: &mut Cx<'_>,
    follows: &[Follow],
    by: &str,
    at: Instant,
) -> Res<Vec<(String, Vec<P>)>> {
    let mut seen = BTreeSet::new();
    let mut kept: Vec<&Follow> = Vec::with_capacity(follows.len());
    for f in follows {
        if let Some((key, _)) = &f.unique {
            if !seen.insert(key.clone()) {
                continue;
            }
        }
        kept.push(f);
    }
    let mut keys: Vec<&str> = kept
        .iter()
        .filter_map(|f| f.unique.as_ref().map(|(k, _)| k.as_str()))
        .collect();
    keys.sort_unstable();
    for k in &keys {
        lock_key(cx, k)?;
    }
    let mut out = Vec::new();
    for f in kept {
        if let Some((key, _)) = &f.unique {
            let held = cx.rows(
                &format!(
                    "SELECT blocking FROM {} WHERE key = $1",
                    cx.t("jadpo_unique_claim")
                ),
                &[P::text(key)],
            )?;
            let blocking = rows::first_int(held);
            if blocking > 0 {
                continue;
            }
        }
        event_statements(cx, f, by, at, &mut out);
    }
    let waits = out.iter().any(|(_, waiting)| *waiting);
    let mut statements: Vec<(String, Vec<P>)> = out.into_iter().map(|(s, _)| s).collect();
    if waits {
        statements.extend(notifying(cx));
    }
    Ok(statements)
}

/// Serialises commits that claim one unique key (Postgres; SQLite's one
/// writer already does).
fn lock_key(cx: &mut Cx<'_>, key: &str) -> Res<()> {
    if cx.dialect == Dialect::Postgres {
        let hash = blake3::hash(key.as_bytes());
        let mut first = [0u8; 8];
        first.copy_from_slice(hash.as_bytes().get(..8).unwrap_or(&[0; 8]));
        cx.rows(
            "SELECT pg_advisory_xact_lock($1)",
            &[P::Int(i64::from_le_bytes(first))],
        )?;
    }
    Ok(())
}

/// A unique claim's `unique_key` and `unique_states` columns (NULL for
/// none), as events and deliveries store it.
fn unique_columns(unique: &Option<(String, Vec<DeliveryState>)>) -> (P, P) {
    match unique {
        Some((k, s)) => (P::text(k), P::Text(rows::states(s))),
        None => (P::Null, P::Null),
    }
}

/// The statements inserting an event, its unique claim and its
/// deliveries, each with whether a dispatcher waits for it.
fn event_statements(
    cx: &Cx<'_>,
    f: &Follow,
    by: &str,
    at: Instant,
    out: &mut Vec<((String, Vec<P>), bool)>,
) {
    let (key, states) = unique_columns(&f.unique);
    let event = (
        format!(
            "INSERT INTO {} (id, kind, payload, emitted_by, created_at, queue, priority, max_attempts, tags, run_at, metadata, unique_key, unique_states) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT (id) DO NOTHING",
            cx.t("jadpo_event")
        ),
        vec![
            P::text(&f.id),
            P::text(&f.event),
            P::Text(String::from_utf8_lossy(&f.payload.canonical()).into_owned()),
            P::text(by),
            time(at),
            P::text(&f.queue),
            P::Int(f.priority),
            P::Int(f.max_attempts),
            P::Text(rows::strings(&f.tags)),
            time(f.run_at),
            P::Text(String::from_utf8_lossy(&f.metadata.canonical()).into_owned()),
            key,
            states,
        ],
    );
    out.push((event, false));
    let first = initial_state(f.run_at, at);
    if let Some((key, states)) = &f.unique {
        if states.contains(&first) {
            let blocking = f.deliveries.len().max(1) as i64;
            let claim = (
                format!(
                    "INSERT INTO {t} (key, event, blocking) VALUES ($1, $2, $3) ON CONFLICT (key) DO UPDATE SET blocking = {t}.blocking + excluded.blocking",
                    t = cx.t("jadpo_unique_claim")
                ),
                vec![P::text(key), P::text(&f.id), P::Int(blocking)],
            );
            out.push((claim, false));
        }
    }
    for d in &f.deliveries {
        out.push((delivery_insert(cx, d, at), !d.queue.starts_with('@')));
    }
}

fn initial_state(run_at: Instant, now: Instant) -> DeliveryState {
    if run_at > now {
        DeliveryState::Scheduled
    } else {
        DeliveryState::Available
    }
}

/// The channel a Postgres store's dispatchers LISTEN on: its app and
/// store, as a Postgres identifier (at most 63 bytes, else a digest).
pub fn channel(schema: &jadpo_runtime::store::schema::Schema) -> String {
    let plain = format!("jadpo_{}_{}", schema.app, schema.store);
    if plain.len() <= 63
        && plain
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return plain.to_ascii_lowercase();
    }
    let digest = blake3::hash(plain.as_bytes()).to_hex();
    format!("jadpo_{}", &digest[..32])
}

/// On Postgres, wakes every dispatcher that listens once the transaction
/// commits (notices of one transaction are delivered together, once).
fn notify(cx: &mut Cx<'_>) -> Res<()> {
    if let Some((sql, params)) = notifying(cx) {
        cx.rows(&sql, &params)?;
    }
    Ok(())
}

/// [`notify`]'s statement (none on SQLite).
fn notifying(cx: &Cx<'_>) -> Option<(String, Vec<P>)> {
    (cx.dialect == Dialect::Postgres).then(|| {
        (
            "SELECT pg_notify($1, '')".to_string(),
            vec![P::text(channel(cx.schema))],
        )
    })
}

fn insert_delivery(cx: &mut Cx<'_>, d: &NewDelivery, now: Instant) -> Res<u64> {
    // A route's delivery runs in its request; any other waits for a
    // dispatcher, in this process or another.
    if !d.queue.starts_with('@') {
        notify(cx)?;
    }
    let (sql, params) = delivery_insert(cx, d, now);
    cx.exec(&sql, &params)
}

/// The statement inserting a delivery (skipped when its id exists).
fn delivery_insert(cx: &Cx<'_>, d: &NewDelivery, now: Instant) -> (String, Vec<P>) {
    leased_insert(cx, d, now, None, SKIP_TAKEN_ID)
}

/// A delivery whose id exists is kept as it is.
const SKIP_TAKEN_ID: &str = " ON CONFLICT (id) DO NOTHING";

/// [`delivery_insert`], taken as it is inserted when a lease is given:
/// running at the lease's generation, leased until its end (as [`take`]
/// leaves a delivery it takes). `on_conflict` ends the statement: what a
/// delivery whose id exists meets (skipped, raised, or a failure when
/// empty).
fn leased_insert(
    cx: &Cx<'_>,
    d: &NewDelivery,
    now: Instant,
    lease: Option<(Instant, u64)>,
    on_conflict: &str,
) -> (String, Vec<P>) {
    let (source, reference) = rows::source(&d.source);
    let (key, states) = unique_columns(&d.unique);
    let state = match lease {
        Some(_) => DeliveryState::Running,
        None => initial_state(d.run_at, now),
    };
    let (lease_until, generation) = match lease {
        Some((until, generation)) => (Some(until), generation as i64),
        None => (None, 0),
    };
    (
        format!(
            "INSERT INTO {} (id, source, source_ref, action, subscriber, queue, priority, tags, max_attempts, state, run_at, build_id, args, created_at, unique_key, unique_states, lease_gen, lease_until) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18){on_conflict}",
            cx.t("jadpo_delivery")
        ),
        vec![
            P::text(&d.id),
            source,
            reference,
            P::text(&d.action),
            P::opt_text(d.subscriber.clone()),
            P::text(&d.queue),
            P::Int(d.priority),
            P::Text(rows::strings(&d.tags)),
            P::Int(i64::from(d.max_attempts)),
            P::text(state.as_str()),
            time(d.run_at),
            P::text(&d.build_id),
            P::Bytes(d.args.clone()),
            time(now),
            key,
            states,
            P::Int(generation),
            rows::opt_time(lease_until),
        ],
    )
}

/// Moves a delivery to `state`, keeping its event's unique claim's count:
/// a move out of the blocking states gives its share up, and the claim
/// goes with the last share.
fn set_state(cx: &mut Cx<'_>, id: &str, state: DeliveryState) -> Res<()> {
    let d = cx.t("jadpo_delivery");
    let found = match cx.dialect {
        // One round trip: the state before the update comes back with the
        // claim's columns (SQLite's RETURNING cannot name the FROM table,
        // and its one writer pays no round trips).
        Dialect::Postgres => {
            let (sql, params) = state_statement(cx, id, state, "", "");
            cx.rows(&sql, &params)?
        }
        Dialect::Sqlite => {
            let found = cx.rows(
                &format!("SELECT state, unique_key, unique_states FROM {d} WHERE id = $1"),
                &[P::text(id)],
            )?;
            cx.exec(
                &format!("UPDATE {d} SET state = $2 WHERE id = $1"),
                &[P::text(id), P::text(state.as_str())],
            )?;
            found
        }
    };
    moved(cx, id, state, found.into_iter().next())
}

/// [`set_state`] on Postgres as one statement: the state before comes
/// back with the delivery's unique key and states, then `returning`.
/// `sets` adds assignments (parameters from `$3` on).
fn state_statement(
    cx: &Cx<'_>,
    id: &str,
    state: DeliveryState,
    sets: &str,
    returning: &str,
) -> (String, Vec<P>) {
    let d = cx.t("jadpo_delivery");
    (
        format!(
            "UPDATE {d} SET state = $2{sets} FROM (SELECT id AS was_id, state AS was FROM {d} WHERE id = $1 FOR UPDATE) AS old WHERE {d}.id = old.was_id RETURNING old.was, {d}.unique_key, {d}.unique_states{returning}"
        ),
        vec![P::text(id), P::text(state.as_str())],
    )
}

/// Keeps a unique claim's count once a delivery moved to `state`: `found`
/// is its state before, its unique key and its unique states.
fn moved(cx: &mut Cx<'_>, id: &str, state: DeliveryState, found: Option<Vec<P>>) -> Res<()> {
    let Some(row) = found else {
        return Ok(());
    };
    let mut r = Reader::new(cx.store, row);
    let before = DeliveryState::parse(&r.text("a delivery's state")?)
        .ok_or_else(|| rows::damaged(cx.store, "a delivery's state"))?;
    let key = r.opt_text();
    let states = r
        .opt_text()
        .map(|s| rows::states_of(&s))
        .unwrap_or_default();
    match key {
        Some(key) => unique_moved(cx, id, (&key, &states), before, state),
        None => Ok(()),
    }
}

/// Keeps the count of unique claim `key` (blocking while a delivery is in
/// `states`) once delivery `id` moved from `before` to `state`.
fn unique_moved(
    cx: &mut Cx<'_>,
    id: &str,
    (key, states): (&str, &[DeliveryState]),
    before: DeliveryState,
    state: DeliveryState,
) -> Res<()> {
    for (sql, params) in unique_statements(cx, id, (key, states), before, state) {
        cx.exec(&sql, &params)?;
    }
    Ok(())
}

/// [`unique_moved`]'s statements, in order: none when the move neither
/// enters nor leaves `states`.
fn unique_statements(
    cx: &Cx<'_>,
    id: &str,
    (key, states): (&str, &[DeliveryState]),
    before: DeliveryState,
    state: DeliveryState,
) -> Vec<(String, Vec<P>)> {
    let (was, is) = (states.contains(&before), states.contains(&state));
    let claims = cx.t("jadpo_unique_claim");
    match (was, is) {
        (false, true) => vec![(
            format!(
                "INSERT INTO {claims} (key, event, blocking) VALUES ($1, $2, 1) ON CONFLICT (key) DO UPDATE SET blocking = {claims}.blocking + 1"
            ),
            vec![P::text(key), P::text(id)],
        )],
        (true, false) => vec![
            (
                format!("UPDATE {claims} SET blocking = blocking - 1 WHERE key = $1"),
                vec![P::text(key)],
            ),
            (
                format!("DELETE FROM {claims} WHERE key = $1 AND blocking <= 0"),
                vec![P::text(key)],
            ),
        ],
        _ => Vec::new(),
    }
}

fn store_response(cx: &mut Cx<'_>, delivery: &str, r: &StoredResponse) -> Res<()> {
    let (sql, params) = response_statement(cx, delivery, r);
    cx.exec(&sql, &params)?;
    Ok(())
}

/// The statement storing a route's answer with its key claim.
fn response_statement(cx: &Cx<'_>, delivery: &str, r: &StoredResponse) -> (String, Vec<P>) {
    let headers: Vec<serde_json::Value> = r
        .headers
        .iter()
        .map(|(k, v)| serde_json::json!([k, v]))
        .collect();
    (
        format!(
            "UPDATE {} SET status = $2, headers = $3, body = $4 WHERE delivery = $1",
            cx.t("jadpo_route_key")
        ),
        vec![
            P::text(delivery),
            P::Int(i64::from(r.status)),
            P::Text(serde_json::Value::Array(headers).to_string()),
            P::Bytes(r.body.clone()),
        ],
    )
}

// ------------------------------------------------------------------ queue

pub fn enqueue(cx: &mut Cx<'_>, deliveries: &[NewDelivery]) -> Res<()> {
    let now = cx.now;
    for d in deliveries {
        insert_delivery(cx, d, now)?;
    }
    Ok(())
}

/// The deliveries a claim may take, in two parts that each read one of
/// the design's partial indexes (section 14.2): waiting ones due by now,
/// and running ones whose lease lapsed. One query with `OR` of the two
/// reads neither index: it scans every delivery the store keeps.
/// The two parts a claim reads; `NOW` is the claim's time.
pub(crate) const CLAIMABLE: [&str; 2] = [
    "state IN ('scheduled', 'available', 'retryable') AND run_at <= NOW",
    "state = 'running' AND lease_until <= NOW",
];

/// One part of a claim's read: `$1` is how many at most; the time is the
/// database's clock on Postgres (a claim there reads no clock of its
/// own), the caller's on SQLite.
pub(crate) fn claim_query(cx: &Cx<'_>, request: &ClaimRequest, due: &str) -> (String, Vec<P>) {
    let mut params = vec![P::Int(request.max as i64)];
    let now = match cx.dialect {
        // Read once, as an index's bound (a volatile clock in the
        // condition would be read per row, and no index could bound it).
        Dialect::Postgres => format!("(SELECT {DB_NOW})"),
        Dialect::Sqlite => {
            params.push(time(cx.now));
            "$2".to_string()
        }
    };
    let due = due.replace("NOW", &now);
    // Queues named `@...` are the runtime's own (a route's deliveries run
    // in their requests): only a dispatcher that names one claims from it.
    let queues = if request.queues.is_empty() {
        " AND queue NOT LIKE '@%'".to_string()
    } else {
        let slots: Vec<String> = request
            .queues
            .iter()
            .map(|q| {
                params.push(P::text(q));
                format!("${}", params.len())
            })
            .collect();
        format!(" AND queue IN ({})", slots.join(", "))
    };
    let lock = match cx.dialect {
        Dialect::Postgres => " FOR UPDATE SKIP LOCKED",
        Dialect::Sqlite => "",
    };
    let sql = format!(
        "SELECT id, state, rescues, priority, run_at, unique_key, unique_states FROM {} WHERE {due}{queues} ORDER BY priority, run_at, id LIMIT $1{lock}",
        cx.t("jadpo_delivery")
    );
    (sql, params)
}

/// A claimable delivery.
struct Due {
    /// Its place in the claim's order: priority, run_at, id.
    order: (i64, String, String),
    /// Running under a lapsed lease (a rescue), not waiting.
    running: bool,
    rescues: i64,
    /// Its state as read (under its row lock on Postgres).
    state: DeliveryState,
    /// Its event's unique claim: the key and the blocking states.
    unique: Option<(String, Vec<DeliveryState>)>,
}

/// The first `request.max` claimable deliveries in the order of priority,
/// run_at and id, both parts merged.
fn claimable(cx: &mut Cx<'_>, request: &ClaimRequest) -> Res<Vec<Due>> {
    let mut all = Vec::new();
    // Both parts in one round trip.
    let queries: Vec<(String, Vec<P>)> = CLAIMABLE
        .iter()
        .map(|due| claim_query(cx, request, due))
        .collect();
    for row in cx.rows_all(&queries)?.into_iter().flatten() {
        let mut r = Reader::new(cx.store, row);
        let id = r.text("a delivery's id")?;
        let state = DeliveryState::parse(&r.text("a delivery's state")?)
            .ok_or_else(|| rows::damaged(cx.store, "a delivery's state"))?;
        let rescues = r.int("a delivery's rescues")?;
        let priority = r.int("a delivery's priority")?;
        let run_at = r.text("a delivery's run_at")?;
        let key = r.opt_text();
        let states = r.opt_text().map(|s| rows::states_of(&s));
        all.push(Due {
            order: (priority, run_at, id),
            running: state == DeliveryState::Running,
            rescues,
            state,
            unique: key.map(|k| (k, states.unwrap_or_default())),
        });
    }
    all.sort_by(|a, b| a.order.cmp(&b.order));
    all.truncate(request.max);
    Ok(all)
}

pub fn claim(cx: &mut Cx<'_>, request: &ClaimRequest) -> Res<Vec<Claimed>> {
    let mut due = claimable(cx, request)?;
    let mut kept = Vec::with_capacity(due.len());
    for d in due.drain(..) {
        if d.running && d.rescues + 1 >= i64::from(MAX_RESCUES) {
            end_rescued(cx, &d.order.2)?;
            continue;
        }
        kept.push(d);
    }
    if cx.dialect == Dialect::Postgres {
        return take_all(cx, &kept, request);
    }
    let lease_until = until(cx.now, request.lease_ms);
    let mut out = Vec::with_capacity(kept.len());
    for d in &kept {
        let id = &d.order.2;
        set_state(cx, id, DeliveryState::Running)?;
        let (sql, params) = lease_statement(cx, id, d.running, lease_until, &request.runner);
        let Some(row) = cx.rows(&sql, &params)?.into_iter().next() else {
            continue;
        };
        out.push(claimed(cx, row, request, d.running)?);
    }
    Ok(out)
}

/// A claimed delivery from the columns its lease statement returned.
fn claimed(cx: &Cx<'_>, row: Vec<P>, request: &ClaimRequest, rescued: bool) -> Res<Claimed> {
    let delivery = rows::delivery_row(cx.store, row)?;
    let until = delivery
        .lease_until
        .ok_or_else(|| rows::damaged(cx.store, "a claimed delivery's lease"))?;
    Ok(Claimed {
        lease: Lease {
            generation: delivery.lease_generation,
            until,
            ms: request.lease_ms,
        },
        delivery,
        rescued,
    })
}

/// The statement raising a claimed delivery's generation and taking its
/// lease, its columns returned.
fn lease_statement(
    cx: &Cx<'_>,
    id: &str,
    rescued: bool,
    lease_until: Instant,
    runner: &str,
) -> (String, Vec<P>) {
    let d = cx.t("jadpo_delivery");
    (
        format!(
            "UPDATE {d} SET {} WHERE id = $1 RETURNING {DELIVERY_COLUMNS}",
            lease_sets(&d, rescued, 2)
        ),
        vec![P::text(id), time(lease_until), P::text(runner)],
    )
}

/// A claim's assignments to delivery table `d`: the generation raised,
/// the lease until `$n`, the runner `$n+1`, and an attempt counted (a
/// rescue when `rescued`).
fn lease_sets(d: &str, rescued: bool, n: usize) -> String {
    let counter = if rescued { "rescues" } else { "attempt" };
    format!(
        "lease_gen = {d}.lease_gen + 1, lease_until = ${n}, runner = ${}, {counter} = {d}.{counter} + 1",
        n + 1
    )
}

/// Takes every claimed delivery on Postgres in the claim's last round
/// trip, with its `COMMIT` (`Conn::rows_all_last`): each one's state,
/// generation and lease (until the database's clock plus the lease) in
/// one statement returning its columns, then the unique claims' counts,
/// known from the states the read returned under the rows' locks.
fn take_all(cx: &mut Cx<'_>, due: &[Due], request: &ClaimRequest) -> Res<Vec<Claimed>> {
    let d = cx.t("jadpo_delivery");
    let lease_until = db_until(2);
    let mut last: Vec<(String, Vec<P>)> = due
        .iter()
        .map(|due| {
            let counter = if due.running { "rescues" } else { "attempt" };
            (
                format!(
                    "UPDATE {d} SET state = 'running', lease_gen = {d}.lease_gen + 1, lease_until = {lease_until}, runner = $3, {counter} = {d}.{counter} + 1 WHERE id = $1 RETURNING {DELIVERY_COLUMNS}"
                ),
                vec![
                    P::text(&due.order.2),
                    P::Int(request.lease_ms as i64),
                    P::text(&request.runner),
                ],
            )
        })
        .collect();
    for due in due {
        if let Some((key, states)) = &due.unique {
            let (id, running) = (&due.order.2, DeliveryState::Running);
            last.extend(unique_statements(cx, id, (key, states), due.state, running));
        }
    }
    if last.is_empty() {
        return Ok(Vec::new());
    }
    let answers = cx.rows_all_last(&last)?;
    let mut out = Vec::with_capacity(due.len());
    for (rows, due) in answers.into_iter().zip(due) {
        if let Some(row) = rows.into_iter().next() {
            out.push(claimed(cx, row, request, due.running)?);
        }
    }
    Ok(out)
}

/// A delivery whose runner stopped [`MAX_RESCUES`] times ends `fault`,
/// with an operator item.
fn end_rescued(cx: &mut Cx<'_>, id: &str) -> Res<()> {
    set_state(cx, id, DeliveryState::Fault)?;
    let now = cx.now;
    cx.exec(
        &format!(
            "UPDATE {} SET rescues = rescues + 1, reason = $2, lease_until = NULL, ended_at = $3 WHERE id = $1",
            cx.t("jadpo_delivery")
        ),
        &[P::text(id), P::text(RESCUES_WHY), time(now)],
    )?;
    open_item(cx, id, DeliveryState::Fault, RESCUES_WHY)
}

fn open_item(cx: &mut Cx<'_>, id: &str, state: DeliveryState, why: &str) -> Res<()> {
    let now = cx.now;
    cx.exec(
        &format!(
            "INSERT INTO {t} (delivery, outcome, reason, opened_at) VALUES ($1, $2, $3, $4) ON CONFLICT (delivery) DO UPDATE SET outcome = excluded.outcome, reason = excluded.reason, opened_at = excluded.opened_at, closed_at = NULL, closed_by = NULL",
            t = cx.t("jadpo_item")
        ),
        &[P::text(id), P::text(state.as_str()), P::text(why), time(now)],
    )?;
    Ok(())
}

pub fn take(cx: &mut Cx<'_>, id: &str, lease_ms: u64) -> Res<Option<Lease>> {
    let lease_until = until(cx.now, lease_ms);
    let n = cx.exec(
        &format!(
            "UPDATE {} SET lease_gen = lease_gen + 1, lease_until = $2 WHERE id = $1",
            cx.t("jadpo_delivery")
        ),
        &[P::text(id), time(lease_until)],
    )?;
    if n == 0 {
        return Ok(None);
    }
    let Some(d) = delivery(cx, id)? else {
        return Ok(None);
    };
    if !d.state.ended() {
        set_state(cx, id, DeliveryState::Running)?;
    }
    Ok(Some(Lease {
        generation: d.lease_generation,
        until: lease_until,
        ms: lease_ms,
    }))
}

pub fn heartbeat(cx: &mut Cx<'_>, id: &str, lease: &Lease, lease_ms: u64) -> Result<Lease, Fenced> {
    let lease_until = until(cx.now, lease_ms);
    let n = cx.exec(
        &format!(
            "UPDATE {} SET lease_until = $3 WHERE id = $1 AND lease_gen = $2",
            cx.t("jadpo_delivery")
        ),
        &[
            P::text(id),
            P::Int(lease.generation as i64),
            time(lease_until),
        ],
    )?;
    if n != 1 {
        return Err(Fenced::LeaseLost);
    }
    Ok(Lease {
        generation: lease.generation,
        until: lease_until,
        ms: lease_ms,
    })
}

pub fn release(cx: &mut Cx<'_>, id: &str, lease: &Lease, next: &Next) -> Result<(), Fenced> {
    if !fence(cx, id, lease)? {
        return Err(Fenced::LeaseLost);
    }
    let now = cx.now;
    let t = cx.t("jadpo_delivery");
    match next {
        Next::Retry {
            run_at,
            why,
            counted,
            steps,
        } => {
            set_state(cx, id, DeliveryState::Retryable)?;
            let uncount = if *counted {
                ""
            } else {
                ", attempt = CASE WHEN attempt > 0 THEN attempt - 1 ELSE 0 END"
            };
            cx.exec(
                &format!(
                    "UPDATE {t} SET run_at = $2, reason = $3, lease_until = NULL, steps = $4{uncount} WHERE id = $1"
                ),
                &[
                    P::text(id),
                    time(*run_at),
                    P::text(why),
                    P::Text(rows::steps(steps)),
                ],
            )?;
        }
        Next::End {
            state,
            why,
            steps,
            response,
        } => {
            set_state(cx, id, *state)?;
            cx.exec(
                &format!(
                    "UPDATE {t} SET reason = $2, lease_until = NULL, ended_at = $3, steps = $4 WHERE id = $1"
                ),
                &[P::text(id), P::text(why), time(now), P::Text(rows::steps(steps))],
            )?;
            open_item(cx, id, *state, why)?;
            if let Some(r) = response {
                store_response(cx, id, r)?;
            }
        }
        Next::Completed { steps } => {
            set_state(cx, id, DeliveryState::Completed)?;
            cx.exec(
                &format!(
                    "UPDATE {t} SET reason = NULL, lease_until = NULL, ended_at = $2, steps = $3 WHERE id = $1"
                ),
                &[P::text(id), time(now), P::Text(rows::steps(steps))],
            )?;
        }
    }
    Ok(())
}

pub fn tick(cx: &mut Cx<'_>, schedule: &str, every_ms: u64, d: &NewDelivery) -> Res<bool> {
    let t = cx.t("jadpo_schedule");
    cx.exec(
        &format!("INSERT INTO {t} (name, every_ms, last_tick) VALUES ($1, $2, NULL) ON CONFLICT (name) DO NOTHING"),
        &[P::text(schedule), P::Int(every_ms as i64)],
    )?;
    // Times are canonical text with nine digits: they sort as they compare.
    let moved = cx.exec(
        &format!("UPDATE {t} SET last_tick = $2, every_ms = $3 WHERE name = $1 AND (last_tick IS NULL OR last_tick < $2)"),
        &[P::text(schedule), time(d.run_at), P::Int(every_ms as i64)],
    )?;
    if moved == 0 {
        return Ok(false);
    }
    let now = cx.now;
    Ok(insert_delivery(cx, d, now)? == 1)
}

pub fn delivery(cx: &mut Cx<'_>, id: &str) -> Res<Option<DeliveryRow>> {
    let found = cx.rows(
        &format!(
            "SELECT {DELIVERY_COLUMNS} FROM {} WHERE id = $1",
            cx.t("jadpo_delivery")
        ),
        &[P::text(id)],
    )?;
    match found.into_iter().next() {
        Some(row) => rows::delivery_row(cx.store, row).map(Some),
        None => Ok(None),
    }
}

/// [`Queue::adopt`](jadpo_runtime::store::Queue::adopt): the copy is
/// inserted, or raised to the lease's generation while it is lower and
/// the copy is not completed, in one statement.
pub fn adopt(cx: &mut Cx<'_>, row: &DeliveryRow, lease: &Lease) -> Res<Adopted> {
    let copy = NewDelivery {
        id: row.id.clone(),
        source: row.source.clone(),
        action: row.action.clone(),
        subscriber: row.subscriber.clone(),
        queue: ADOPTED_QUEUE.to_string(),
        priority: row.priority,
        tags: row.tags.clone(),
        max_attempts: row.max_attempts,
        run_at: row.run_at,
        args: row.args.clone(),
        build_id: row.build_id.clone(),
        unique: None,
    };
    let now = cx.now;
    let d = cx.t("jadpo_delivery");
    let raise = format!(
        " ON CONFLICT (id) DO UPDATE SET lease_gen = excluded.lease_gen, lease_until = excluded.lease_until, state = 'running' WHERE {d}.lease_gen < excluded.lease_gen AND {d}.state <> 'completed'"
    );
    let lease_at = Some((lease.until, lease.generation));
    let (insert, params) = leased_insert(cx, &copy, now, lease_at, &raise);
    if cx.exec(&insert, &params)? == 1 {
        return Ok(Adopted::Running);
    }
    Ok(match delivery(cx, &row.id)? {
        Some(r) if r.state == DeliveryState::Completed => Adopted::Handled(r.steps),
        _ => Adopted::Stale,
    })
}

pub fn handled(cx: &mut Cx<'_>, id: &str) -> Res<bool> {
    let found = cx.rows(
        &format!(
            "SELECT 1 FROM {} WHERE delivery = $1",
            cx.t("jadpo_handled")
        ),
        &[P::text(id)],
    )?;
    Ok(!found.is_empty())
}

pub fn events(cx: &mut Cx<'_>, limit: usize) -> Res<Vec<Outboxed>> {
    let found = cx.rows(
        &format!(
            "SELECT {EVENT_COLUMNS} FROM {} ORDER BY seq LIMIT $1",
            cx.t("jadpo_event")
        ),
        &[P::Int(limit as i64)],
    )?;
    let store = cx.store;
    let mut out = Vec::with_capacity(found.len());
    for row in found {
        let mut e = rows::event_row(store, row)?;
        e.follow.deliveries = event_deliveries(cx, &e.follow.id)?;
        out.push(e);
    }
    Ok(out)
}

/// An event's deliveries, one per subscriber, in id order.
fn event_deliveries(cx: &mut Cx<'_>, event: &str) -> Res<Vec<NewDelivery>> {
    let found = cx.rows(
        &format!(
            "SELECT {DELIVERY_COLUMNS}, unique_key, unique_states FROM {} WHERE source = 'event' AND source_ref = $1 ORDER BY id",
            cx.t("jadpo_delivery")
        ),
        &[P::text(event)],
    )?;
    let store = cx.store;
    found
        .into_iter()
        .map(|row| rows::new_delivery(store, row))
        .collect()
}

// ------------------------------------------------------------- route keys

/// A route key's row: who claimed it for which body, and its stored
/// answer once there is one.
struct KeyRow {
    fingerprint: Vec<u8>,
    delivery: String,
    status: Option<i64>,
    headers: Option<String>,
    body: Option<Vec<u8>>,
}

/// A key's place: its route, principal and key (`$1` to `$3`).
fn key_at(request: &KeyRequest) -> Vec<P> {
    vec![
        P::text(&request.route),
        P::text(&request.principal),
        P::text(&request.key),
    ]
}

fn key_row(cx: &mut Cx<'_>, request: &KeyRequest, lock: &str) -> Res<Option<KeyRow>> {
    let found = cx.rows(
        &format!(
            "SELECT fingerprint, delivery, status, headers, body FROM {} WHERE route = $1 AND principal = $2 AND key = $3{lock}",
            cx.t("jadpo_route_key")
        ),
        &key_at(request),
    )?;
    let Some(row) = found.into_iter().next() else {
        return Ok(None);
    };
    let mut r = Reader::new(cx.store, row);
    Ok(Some(KeyRow {
        fingerprint: r.bytes().unwrap_or_default(),
        delivery: r.text("a key's delivery")?,
        status: r.raw().as_int(),
        headers: r.opt_text(),
        body: r.bytes(),
    }))
}

/// The answer a key's row settles for good: another body under the key,
/// or the stored response. Neither changes while the row lives.
fn settled(row: &KeyRow, request: &KeyRequest) -> Option<KeyClaim> {
    if row.fingerprint != request.fingerprint {
        return Some(KeyClaim::Reused);
    }
    let status = row.status?;
    let headers: Vec<(String, String)> = row
        .headers
        .as_deref()
        .and_then(|h| serde_json::from_str::<Vec<(String, String)>>(h).ok())
        .unwrap_or_default();
    Some(KeyClaim::Replay(StoredResponse {
        status: u16::try_from(status).unwrap_or(500),
        headers,
        body: row.body.clone().unwrap_or_default(),
    }))
}

/// What a key settled for good, read without writing: a replay or a
/// reuse answers from a read connection, never waiting for the writer.
pub fn settled_key(cx: &mut Cx<'_>, request: &KeyRequest) -> Res<Option<KeyClaim>> {
    Ok(key_row(cx, request, "")?.and_then(|row| settled(&row, request)))
}

pub fn claim_key(cx: &mut Cx<'_>, request: &KeyRequest) -> Res<KeyClaim> {
    let lock = match cx.dialect {
        Dialect::Postgres => " FOR UPDATE",
        Dialect::Sqlite => "",
    };
    // A new key first: the insert is skipped when the key exists, and
    // only then is the key's row read (locked on Postgres).
    if let Some(claim) = claim_new_key(cx, request)? {
        return Ok(claim);
    }
    let Some(row) = key_row(cx, request, lock)? else {
        // Claimed by another request that has not committed yet, or gone
        // since (pruned).
        return Ok(KeyClaim::InUse);
    };
    if let Some(answer) = settled(&row, request) {
        return Ok(answer);
    }
    let delivery_id = row.delivery;
    let row = delivery(cx, &delivery_id)?;
    if let Some(d) = row
        .as_ref()
        .filter(|d| d.state.ended() && d.state != DeliveryState::Completed)
    {
        return Ok(KeyClaim::Ended {
            delivery: delivery_id,
            state: d.state,
        });
    }
    let live = row.and_then(|d| d.lease_until).is_some_and(|u| u > cx.now);
    if live {
        return Ok(KeyClaim::InUse);
    }
    Ok(match take(cx, &delivery_id, request.lease_ms)? {
        Some(lease) => KeyClaim::TakenOver {
            delivery: delivery_id,
            lease,
        },
        None => KeyClaim::InUse,
    })
}

/// The database's clock in microseconds since the epoch.
const DB_MICROS: &str = "SELECT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000000)::bigint";

/// Claims `request`'s key when no request holds it: the key's row, and
/// its delivery inserted already taken (one statement each). `None` when
/// the key exists.
fn claim_new_key(cx: &mut Cx<'_>, request: &KeyRequest) -> Res<Option<KeyClaim>> {
    if cx.dialect == Dialect::Postgres {
        return claim_new_key_pipelined(cx, request);
    }
    let mut params = key_at(request);
    params.extend([
        P::Bytes(request.fingerprint.to_vec()),
        P::text(&request.delivery.id),
        time(cx.now),
    ]);
    let inserted = cx.exec(
        &format!(
            "INSERT INTO {} (route, principal, key, fingerprint, delivery, created_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (route, principal, key) DO NOTHING",
            cx.t("jadpo_route_key")
        ),
        &params,
    )?;
    if inserted == 0 {
        return Ok(None);
    }
    let d = &request.delivery;
    let until = until(cx.now, request.lease_ms);
    let (sql, params) = leased_insert(cx, d, cx.now, Some((until, 1)), SKIP_TAKEN_ID);
    if cx.exec(&sql, &params)? == 0 {
        // Ids are 128 random bits: fail, and roll the key back with it.
        return Err(cx.error(
            ErrorKind::Failed,
            format!("delivery `{}` exists already", d.id),
        ));
    }
    // As if inserted waiting and then taken: its unique claim counts the
    // move.
    if let Some((key, states)) = &d.unique {
        let waiting = initial_state(d.run_at, cx.now);
        unique_moved(cx, &d.id, (key, states), waiting, DeliveryState::Running)?;
    }
    Ok(Some(KeyClaim::New {
        lease: Lease {
            generation: 1,
            until,
            ms: request.lease_ms,
        },
    }))
}

/// [`claim_new_key`] on Postgres in two round trips, its transaction
/// begun by the store with the first and, for a new key, committed with
/// the second (`Conn::rows_all_last`): first the key's row (skipped when
/// the key exists) and the database's clock, which is the operation's
/// time from then on; then the delivery, inserted taken, which fails the
/// whole transaction if its id were taken, and its unique claim's count.
fn claim_new_key_pipelined(cx: &mut Cx<'_>, request: &KeyRequest) -> Res<Option<KeyClaim>> {
    let mut params = key_at(request);
    params.extend([
        P::Bytes(request.fingerprint.to_vec()),
        P::text(&request.delivery.id),
    ]);
    let first = [
        (
            format!(
                "INSERT INTO {} (route, principal, key, fingerprint, delivery, created_at) VALUES ($1, $2, $3, $4, $5, {DB_NOW}) ON CONFLICT (route, principal, key) DO NOTHING RETURNING 1",
                cx.t("jadpo_route_key")
            ),
            params,
        ),
        (DB_MICROS.to_string(), Vec::new()),
    ];
    let answers = cx.rows_all(&first)?;
    let inserted = answers.first().is_some_and(|rows| !rows.is_empty());
    let micros = answers
        .get(1)
        .and_then(|rows| rows.first())
        .and_then(|row| row.first())
        .and_then(P::as_int)
        .ok_or_else(|| rows::damaged(cx.store, "the database's clock"))?;
    cx.now = Instant(i128::from(micros) * 1000);
    if !inserted {
        return Ok(None);
    }
    let d = &request.delivery;
    let until = until(cx.now, request.lease_ms);
    // A taken id fails the transaction: the key is not kept without it.
    let (sql, params) = leased_insert(cx, d, cx.now, Some((until, 1)), "");
    let mut last = vec![(sql, params)];
    if let Some((key, states)) = &d.unique {
        let waiting = initial_state(d.run_at, cx.now);
        let running = DeliveryState::Running;
        last.extend(unique_statements(
            cx,
            &d.id,
            (key, states),
            waiting,
            running,
        ));
    }
    cx.rows_all_last(&last)?;
    Ok(Some(KeyClaim::New {
        lease: Lease {
            generation: 1,
            until,
            ms: request.lease_ms,
        },
    }))
}

pub fn release_key(
    cx: &mut Cx<'_>,
    route: &str,
    principal: &str,
    key: &str,
    lease: &Lease,
) -> Result<(), Fenced> {
    let found = cx.rows(
        &format!(
            "SELECT delivery FROM {} WHERE route = $1 AND principal = $2 AND key = $3",
            cx.t("jadpo_route_key")
        ),
        &[P::text(route), P::text(principal), P::text(key)],
    )?;
    let Some(delivery) = found
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .and_then(|p| p.as_text().map(str::to_string))
    else {
        return Err(Fenced::LeaseLost);
    };
    let n = cx.exec(
        &format!(
            "UPDATE {} SET lease_until = NULL WHERE id = $1 AND lease_gen = $2",
            cx.t("jadpo_delivery")
        ),
        &[P::text(&delivery), P::Int(lease.generation as i64)],
    )?;
    if n != 1 {
        return Err(Fenced::LeaseLost);
    }
    Ok(())
}

// ------------------------------------------------------------------ items

pub fn items(cx: &mut Cx<'_>, open_only: bool) -> Res<Vec<Item>> {
    let filter = if open_only {
        " WHERE closed_at IS NULL"
    } else {
        ""
    };
    let found = cx.rows(
        &format!(
            "SELECT {ITEM_COLUMNS} FROM {}{filter} ORDER BY opened_at, delivery",
            cx.t("jadpo_item")
        ),
        &[],
    )?;
    let store = cx.store;
    found
        .into_iter()
        .map(|row| rows::item_row(store, row))
        .collect()
}

pub fn close_item(cx: &mut Cx<'_>, delivery: &str, closed_by: &str) -> Res<bool> {
    let n = cx.exec(
        &format!(
            "UPDATE {} SET closed_at = $2, closed_by = $3 WHERE delivery = $1 AND closed_at IS NULL",
            cx.t("jadpo_item")
        ),
        &[P::text(delivery), time(cx.now), P::text(closed_by)],
    )?;
    Ok(n == 1)
}

// -------------------------------------------------------------- operators

pub fn list(cx: &mut Cx<'_>, filter: &ListFilter) -> Res<Vec<DeliveryRow>> {
    let mut sql = format!(
        "SELECT {DELIVERY_COLUMNS} FROM {} WHERE queue <> '{ADOPTED_QUEUE}'",
        cx.t("jadpo_delivery")
    );
    let mut params = Vec::new();
    if filter.not_done {
        sql.push_str(" AND state NOT IN ('completed', 'abandoned')");
    }
    if let Some(s) = filter.state {
        params.push(P::text(s.as_str()));
        sql.push_str(&format!(" AND state = ${}", params.len()));
    }
    if let Some(a) = &filter.action {
        params.push(P::text(a));
        sql.push_str(&format!(" AND action = ${}", params.len()));
    }
    if let Some(t) = filter.since {
        params.push(time(t));
        sql.push_str(&format!(" AND created_at >= ${}", params.len()));
    }
    params.push(P::Int(filter.limit.max(1) as i64));
    sql.push_str(&format!(
        " ORDER BY created_at DESC, id LIMIT ${}",
        params.len()
    ));
    let found = cx.rows(&sql, &params)?;
    let store = cx.store;
    found
        .into_iter()
        .map(|row| rows::delivery_row(store, row))
        .collect()
}

pub fn ids_starting(cx: &mut Cx<'_>, prefix: &str, max: usize) -> Res<Vec<String>> {
    // A range, not LIKE: an id's `_` would be a wildcard.
    let end = format!("{prefix}\u{10FFFF}");
    let found = cx.rows(
        &format!(
            "SELECT id FROM {} WHERE id >= $1 AND id < $2 ORDER BY id LIMIT $3",
            cx.t("jadpo_delivery")
        ),
        &[P::text(prefix), P::Text(end), P::Int(max as i64)],
    )?;
    Ok(found
        .into_iter()
        .filter_map(|r| {
            r.into_iter()
                .next()
                .and_then(|p| p.as_text().map(str::to_string))
        })
        .filter(|id| id.starts_with(prefix))
        .collect())
}

pub fn retry(cx: &mut Cx<'_>, id: &str, not_done: bool, by: &str) -> Res<Operated> {
    let Some(row) = delivery(cx, id)? else {
        return Ok(Operated::Refused(format!("there is no delivery {id}")));
    };
    let record = record(cx, id)?;
    let doubt = in_doubt(record.as_ref());
    if let Some(why) = retry_refusal(&row, doubt, not_done) {
        return Ok(Operated::Refused(why));
    }
    let now = cx.now;
    if let (true, Some(step), Some(rec)) = (not_done, doubt, record.as_ref()) {
        if let Some(s) = rec.steps.iter().find(|s| s.position == step) {
            let next = next_generation(id, s, now);
            let (state, doubt, _, _) = rows::step_state(&next.state);
            cx.exec(
                &format!(
                    "UPDATE {} SET key_gen = $3, key = $4, sent_at = $5, state = $6, doubt = $7, nonce = NULL, ciphertext = NULL WHERE delivery = $1 AND position = $2",
                    cx.t("jadpo_step")
                ),
                &[
                    P::text(id),
                    P::Int(i64::from(step)),
                    P::Int(i64::from(next.key_generation)),
                    P::opt_text(next.key.clone()),
                    time(now),
                    state,
                    doubt,
                ],
            )?;
        }
    }
    set_state(cx, id, DeliveryState::Available)?;
    notify(cx)?;
    cx.exec(
        &format!(
            "UPDATE {} SET run_at = $2, lease_gen = lease_gen + 1, lease_until = NULL, ended_at = NULL, attempt = 0, rescues = 0, reason = NULL WHERE id = $1",
            cx.t("jadpo_delivery")
        ),
        &[P::text(id), time(now)],
    )?;
    let what = if not_done {
        "retry --not-done"
    } else {
        "retry"
    };
    close_item(cx, id, &format!("{what} by {by}"))?;
    Ok(Operated::Done)
}

pub fn abandon(
    cx: &mut Cx<'_>,
    id: &str,
    reason: &str,
    by: &str,
    response: Option<&StoredResponse>,
) -> Res<Operated> {
    let Some(row) = delivery(cx, id)? else {
        return Ok(Operated::Refused(format!("there is no delivery {id}")));
    };
    let now = cx.now;
    if let Some(why) = abandon_refusal(&row, now) {
        return Ok(Operated::Refused(why));
    }
    set_state(cx, id, DeliveryState::Abandoned)?;
    cx.exec(
        &format!(
            "UPDATE {} SET ended_at = $2, lease_gen = lease_gen + 1, lease_until = NULL, reason = $3 WHERE id = $1",
            cx.t("jadpo_delivery")
        ),
        &[P::text(id), time(now), P::Text(format!("abandoned: {reason}"))],
    )?;
    cx.exec(
        &format!(
            "INSERT INTO {} (delivery, committed_at) VALUES ($1, $2) ON CONFLICT (delivery) DO NOTHING",
            cx.t("jadpo_handled")
        ),
        &[P::text(id), time(now)],
    )?;
    if let Some(r) = response {
        let open = cx.rows(
            &format!(
                "SELECT 1 FROM {} WHERE delivery = $1 AND status IS NULL",
                cx.t("jadpo_route_key")
            ),
            &[P::text(id)],
        )?;
        if !open.is_empty() {
            store_response(cx, id, r)?;
        }
    }
    let has_item = !cx
        .rows(
            &format!("SELECT 1 FROM {} WHERE delivery = $1", cx.t("jadpo_item")),
            &[P::text(id)],
        )?
        .is_empty();
    if !has_item {
        open_item(cx, id, DeliveryState::Abandoned, reason)?;
    }
    close_item(cx, id, &format!("abandon by {by}: {reason}"))?;
    Ok(Operated::Done)
}

pub fn unfinished(cx: &mut Cx<'_>) -> Res<Vec<(String, StoredRecord)>> {
    let found = cx.rows(
        &format!(
            "SELECT delivery FROM {} ORDER BY started_at, delivery",
            cx.t("jadpo_record")
        ),
        &[],
    )?;
    let ids: Vec<String> = found
        .into_iter()
        .filter_map(|r| {
            r.into_iter()
                .next()
                .and_then(|p| p.as_text().map(str::to_string))
        })
        .collect();
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(rec) = record(cx, &id)? {
            out.push((id, rec));
        }
    }
    Ok(out)
}

// -------------------------------------------------------------- retention

/// The queries retention reads rows by age with (`$1` the cutoff, `$2`
/// the batch); each reads an index of migration 2, not its whole table.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Aged {
    Completed,
    Events,
    AnsweredClaims,
    OpenClaims,
    Items,
}

#[cfg(test)]
pub(crate) const AGED: [Aged; 5] = [
    Aged::Completed,
    Aged::Events,
    Aged::AnsweredClaims,
    Aged::OpenClaims,
    Aged::Items,
];

impl Aged {
    pub(crate) fn sql(self, cx: &Cx<'_>) -> String {
        let (d, e, k) = (
            cx.t("jadpo_delivery"),
            cx.t("jadpo_event"),
            cx.t("jadpo_route_key"),
        );
        match self {
            Aged::Completed => format!(
                "SELECT id FROM {d} WHERE state = 'completed' AND ended_at < $1 ORDER BY ended_at LIMIT $2"
            ),
            Aged::Events => format!(
                "SELECT id FROM {e} WHERE created_at < $1 AND NOT EXISTS (SELECT 1 FROM {d} WHERE source = 'event' AND source_ref = {e}.id) LIMIT $2"
            ),
            Aged::AnsweredClaims => format!(
                "SELECT route, principal, key FROM {k} WHERE status IS NOT NULL AND created_at < $1 AND NOT EXISTS (SELECT 1 FROM {d} WHERE id = {k}.delivery) LIMIT $2"
            ),
            Aged::OpenClaims => format!(
                "SELECT route, principal, key, delivery FROM {k} WHERE status IS NULL AND created_at < $1 ORDER BY created_at LIMIT $2"
            ),
            Aged::Items => format!(
                "SELECT delivery FROM {} WHERE opened_at < $1 AND answers_dropped_at IS NULL LIMIT $2",
                cx.t("jadpo_item")
            ),
        }
    }
}

/// Open route claims older than `keep.open_claims_ms` (their client never
/// came back) whose delivery is not running under a live lease: the
/// delivery ends `retry_later` with an operator item, unless it ended
/// already, and the key is freed.
fn lapse_claims(cx: &mut Cx<'_>, keep: Retention, max: usize) -> Res<usize> {
    let now = cx.now;
    let k = cx.t("jadpo_route_key");
    let open = cx.rows(
        &Aged::OpenClaims.sql(cx),
        &[time(before(now, keep.open_claims_ms)), P::Int(max as i64)],
    )?;
    let mut lapsed = 0;
    for row in open {
        let mut r = Reader::new(cx.store, row);
        let (route, principal, key, id) = (
            r.text("a claim's route")?.to_string(),
            r.text("a claim's principal")?.to_string(),
            r.text("a claim's key")?.to_string(),
            r.text("a claim's delivery")?.to_string(),
        );
        let row = delivery(cx, &id)?;
        let live = row.as_ref().is_some_and(|d| {
            d.state == DeliveryState::Running && d.lease_until.is_some_and(|t| t > now)
        });
        if live {
            continue;
        }
        if row.is_some_and(|d| !d.state.ended()) {
            set_state(cx, &id, DeliveryState::RetryLater)?;
            cx.exec(
                &format!(
                    "UPDATE {} SET reason = $2, lease_gen = lease_gen + 1, lease_until = NULL, ended_at = $3 WHERE id = $1",
                    cx.t("jadpo_delivery")
                ),
                &[P::text(&id), P::text(LAPSED_WHY), time(now)],
            )?;
            open_item(cx, &id, DeliveryState::RetryLater, LAPSED_WHY)?;
        }
        cx.exec(
            &format!("DELETE FROM {k} WHERE route = $1 AND principal = $2 AND key = $3"),
            &[P::text(&route), P::text(&principal), P::text(&key)],
        )?;
        lapsed += 1;
    }
    Ok(lapsed)
}

pub fn prune(cx: &mut Cx<'_>, keep: Retention, max: usize) -> Res<Pruned> {
    let mut p = Pruned::default();
    let now = cx.now;
    let done_before = time(before(now, keep.completed_ms));
    let limit = P::Int(max as i64);
    let old = cx.rows(
        &Aged::Completed.sql(cx),
        &[done_before.clone(), limit.clone()],
    )?;
    for row in old {
        let Some(id) = row
            .into_iter()
            .next()
            .and_then(|p| p.as_text().map(str::to_string))
        else {
            continue;
        };
        // Leaving `completed` gives up its share of a unique claim.
        set_state(cx, &id, DeliveryState::Abandoned)?;
        for (table, column) in [("jadpo_delivery", "id"), ("jadpo_handled", "delivery")] {
            cx.exec(
                &format!("DELETE FROM {} WHERE {column} = $1", cx.t(table)),
                &[P::text(&id)],
            )?;
        }
        p.deliveries += 1;
    }
    let e = cx.t("jadpo_event");
    let events = cx.rows(&Aged::Events.sql(cx), &[done_before.clone(), limit.clone()])?;
    for row in events {
        if let Some(id) = row
            .into_iter()
            .next()
            .and_then(|p| p.as_text().map(str::to_string))
        {
            cx.exec(&format!("DELETE FROM {e} WHERE id = $1"), &[P::text(&id)])?;
            p.events += 1;
        }
    }
    let k = cx.t("jadpo_route_key");
    let claims = cx.rows(&Aged::AnsweredClaims.sql(cx), &[done_before, limit.clone()])?;
    for row in claims {
        let mut r = Reader::new(cx.store, row);
        let (route, principal, key) = (
            r.text("a claim's route")?,
            r.text("a claim's principal")?,
            r.text("a claim's key")?,
        );
        cx.exec(
            &format!("DELETE FROM {k} WHERE route = $1 AND principal = $2 AND key = $3"),
            &[P::text(route), P::text(principal), P::text(key)],
        )?;
        p.claims += 1;
    }
    p.lapsed = lapse_claims(cx, keep, max)?;
    let items = cx.rows(
        &Aged::Items.sql(cx),
        &[time(before(now, keep.answers_ms)), limit],
    )?;
    for row in items {
        let Some(id) = row
            .into_iter()
            .next()
            .and_then(|p| p.as_text().map(str::to_string))
        else {
            continue;
        };
        for table in ["jadpo_step", "jadpo_record"] {
            cx.exec(
                &format!("DELETE FROM {} WHERE delivery = $1", cx.t(table)),
                &[P::text(&id)],
            )?;
        }
        cx.exec(
            &format!(
                "UPDATE {} SET answers_dropped_at = $2 WHERE delivery = $1",
                cx.t("jadpo_item")
            ),
            &[P::text(&id), time(now)],
        )?;
        p.answers += 1;
    }
    Ok(p)
}

pub fn forget(cx: &mut Cx<'_>, id: &str) -> Res<Operated> {
    let Some(row) = delivery(cx, id)? else {
        return Ok(Operated::Refused(format!("there is no delivery {id}")));
    };
    if !row.state.ended() {
        return Ok(Operated::Refused(format!(
            "{id} is {}: only an ended delivery is forgotten",
            row.state.as_str()
        )));
    }
    set_state(cx, id, DeliveryState::Abandoned)?;
    for (table, column) in [
        ("jadpo_step", "delivery"),
        ("jadpo_record", "delivery"),
        ("jadpo_item", "delivery"),
        ("jadpo_handled", "delivery"),
        ("jadpo_delivery", "id"),
    ] {
        cx.exec(
            &format!("DELETE FROM {} WHERE {column} = $1", cx.t(table)),
            &[P::text(id)],
        )?;
    }
    Ok(Operated::Done)
}
