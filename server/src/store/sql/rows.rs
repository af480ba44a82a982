//! The runtime's data as table rows and back: steps, deliveries, items,
//! events, and entity columns in each dialect. A row that does not read
//! back is a damaged store, said as such.

use jadpo_compiler::intern::Name;
use jadpo_runtime::record::{Doubt, Mode, RowState, Sealed, StepRow};
use jadpo_runtime::store::schema::{Column, ColumnKind};
use jadpo_runtime::store::{
    DeliveryRow, DeliveryState, ErrorKind, Follow, Item, NewDelivery, Outboxed, Source,
    StepSummary, StoreError,
};
use jadpo_runtime::value::{hex, instant_text, parse_instant, Instant, Value};
use serde_json::{json, Value as Json};

use super::{Dialect, P};

pub fn time(i: Instant) -> P {
    P::Text(instant_text(i))
}

pub fn opt_time(i: Option<Instant>) -> P {
    i.map_or(P::Null, time)
}

/// A damaged row, named.
/// The first column of the first row as an integer (a count), 0 without
/// one.
pub fn first_int(rows: Vec<Vec<P>>) -> i64 {
    rows.into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .and_then(|p| p.as_int())
        .unwrap_or(0)
}

pub fn damaged(store: &str, what: &str) -> StoreError {
    StoreError::new(
        store,
        ErrorKind::Corrupt,
        format!("a row does not read back: {what}"),
    )
}

/// Reads the columns of one row in order, each a typed value or a
/// damaged-row error.
pub struct Reader<'a> {
    store: &'a str,
    cols: std::vec::IntoIter<P>,
}

impl<'a> Reader<'a> {
    pub fn new(store: &'a str, row: Vec<P>) -> Reader<'a> {
        Reader {
            store,
            cols: row.into_iter(),
        }
    }

    fn next(&mut self) -> P {
        self.cols.next().unwrap_or(P::Null)
    }

    pub fn text(&mut self, what: &str) -> Result<String, StoreError> {
        match self.next() {
            P::Text(s) => Ok(s),
            P::Bytes(b) => String::from_utf8(b).map_err(|_| damaged(self.store, what)),
            _ => Err(damaged(self.store, what)),
        }
    }

    pub fn opt_text(&mut self) -> Option<String> {
        match self.next() {
            P::Text(s) => Some(s),
            _ => None,
        }
    }

    pub fn int(&mut self, what: &str) -> Result<i64, StoreError> {
        self.next()
            .as_int()
            .ok_or_else(|| damaged(self.store, what))
    }

    pub fn time(&mut self, what: &str) -> Result<Instant, StoreError> {
        let t = self.text(what)?;
        parse_instant(&t).ok_or_else(|| damaged(self.store, what))
    }

    pub fn opt_time(&mut self) -> Option<Instant> {
        self.opt_text().and_then(|t| parse_instant(&t))
    }

    pub fn bytes(&mut self) -> Option<Vec<u8>> {
        self.next().into_bytes()
    }

    pub fn raw(&mut self) -> P {
        self.next()
    }
}

/// A step's state as its row keeps it: (state, doubt, nonce, ciphertext).
pub fn step_state(state: &RowState) -> (P, P, P, P) {
    match state {
        RowState::Sent { doubt } => (
            P::text("sent"),
            P::text(match doubt {
                Doubt::Unknown => "unknown",
                Doubt::ServerError => "server_error",
            }),
            P::Null,
            P::Null,
        ),
        RowState::Answered(s) => (
            P::text("answered"),
            P::Null,
            P::Bytes(s.nonce.to_vec()),
            P::Bytes(s.ciphertext.clone()),
        ),
        RowState::Dispatched => (P::text("dispatched"), P::Null, P::Null, P::Null),
    }
}

/// The field fingerprints as JSON: `[[name, hex], ...]`.
pub fn field_fingerprints(fps: &[(Name, [u8; 32])]) -> String {
    let list: Vec<Json> = fps
        .iter()
        .map(|(n, f)| json!([n.as_str(), hex(f)]))
        .collect();
    Json::Array(list).to_string()
}

fn unhex32(s: &str) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    if s.len() != 64 {
        return None;
    }
    for (i, slot) in out.iter_mut().enumerate() {
        *slot = u8::from_str_radix(s.get(i * 2..i * 2 + 2)?, 16).ok()?;
    }
    Some(out)
}

/// A step from its row: position, operation, fingerprint,
/// field_fingerprints, sent_at, key_gen, runner_gen, key, state, doubt,
/// nonce, ciphertext.
pub fn step_row(store: &str, row: Vec<P>) -> Result<StepRow, StoreError> {
    let mut r = Reader::new(store, row);
    let position = r.int("a step's position")? as u32;
    let operation = r.text("a step's operation")?;
    let fingerprint = r
        .bytes()
        .and_then(|b| <[u8; 32]>::try_from(b.as_slice()).ok());
    let fps: Json = serde_json::from_str(&r.text("a step's field fingerprints")?)
        .map_err(|_| damaged(store, "a step's field fingerprints"))?;
    let field_fingerprints = fps
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|pair| {
            let name = pair.get(0)?.as_str()?;
            let fp = unhex32(pair.get(1)?.as_str()?)?;
            Some((Name::new(name), fp))
        })
        .collect();
    let sent_at = r.time("a step's send time")?;
    let key_generation = r.int("a step's key generation")? as u32;
    let runner_generation = r.int("a step's runner generation")? as u64;
    let key = r.opt_text();
    let state_text = r.text("a step's state")?;
    let doubt = r.opt_text();
    let nonce = r.bytes();
    let ciphertext = r.bytes();
    let state = match state_text.as_str() {
        "sent" => RowState::Sent {
            doubt: match doubt.as_deref() {
                Some("server_error") => Doubt::ServerError,
                _ => Doubt::Unknown,
            },
        },
        "answered" => {
            let nonce = nonce
                .and_then(|n| <[u8; 24]>::try_from(n.as_slice()).ok())
                .ok_or_else(|| damaged(store, "an answer's nonce"))?;
            RowState::Answered(Sealed {
                nonce,
                ciphertext: ciphertext.unwrap_or_default(),
            })
        }
        "dispatched" => RowState::Dispatched,
        _ => return Err(damaged(store, "a step's state")),
    };
    Ok(StepRow {
        position,
        operation,
        fingerprint,
        field_fingerprints,
        sent_at,
        key_generation,
        runner_generation,
        key,
        state,
    })
}

pub fn mode(store: &str, text: &str) -> Result<Mode, StoreError> {
    Mode::parse(text).ok_or_else(|| damaged(store, "a record's mode"))
}

/// A source as (kind, reference).
pub fn source(s: &Source) -> (P, P) {
    match s {
        Source::Event { event } => (P::text("event"), P::text(event)),
        Source::Route {
            route,
            principal,
            key,
        } => (
            P::text("route"),
            P::Text(json!([route, principal, key]).to_string()),
        ),
        Source::Schedule { name, tick } => (
            P::text("schedule"),
            P::Text(json!([name, instant_text(*tick)]).to_string()),
        ),
        Source::Direct => (P::text("direct"), P::Null),
    }
}

fn source_of(kind: &str, reference: Option<String>) -> Option<Source> {
    let list = || -> Option<Vec<String>> {
        let j: Json = serde_json::from_str(reference.as_deref()?).ok()?;
        j.as_array()?
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect()
    };
    Some(match kind {
        "event" => Source::Event { event: reference? },
        "route" => {
            let l = list()?;
            Source::Route {
                route: l.first()?.clone(),
                principal: l.get(1)?.clone(),
                key: l.get(2)?.clone(),
            }
        }
        "schedule" => {
            let l = list()?;
            Source::Schedule {
                name: l.first()?.clone(),
                tick: parse_instant(l.get(1)?)?,
            }
        }
        "direct" => Source::Direct,
        _ => return None,
    })
}

pub fn strings(list: &[String]) -> String {
    Json::from(list.to_vec()).to_string()
}

fn strings_of(text: &str) -> Vec<String> {
    serde_json::from_str::<Vec<String>>(text).unwrap_or_default()
}

pub fn states(list: &[DeliveryState]) -> String {
    let names: Vec<&str> = list.iter().map(|s| s.as_str()).collect();
    Json::from(names).to_string()
}

pub fn states_of(text: &str) -> Vec<DeliveryState> {
    strings_of(text)
        .iter()
        .filter_map(|s| DeliveryState::parse(s))
        .collect()
}

pub fn steps(list: &[StepSummary]) -> String {
    let rows: Vec<Json> = list
        .iter()
        .map(|s| {
            json!({
                "position": s.position,
                "operation": s.operation,
                "state": s.state,
                "sent_at": instant_text(s.sent_at),
                "key": s.key,
            })
        })
        .collect();
    Json::Array(rows).to_string()
}

fn steps_of(text: &str) -> Vec<StepSummary> {
    let j: Json = serde_json::from_str(text).unwrap_or(Json::Null);
    j.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| {
            Some(StepSummary {
                position: u32::try_from(s.get("position")?.as_u64()?).ok()?,
                operation: s.get("operation")?.as_str()?.to_string(),
                state: s.get("state")?.as_str()?.to_string(),
                sent_at: parse_instant(s.get("sent_at")?.as_str()?)?,
                key: s.get("key").and_then(Json::as_str).map(str::to_string),
            })
        })
        .collect()
}

/// The columns a delivery is read with, in [`delivery_row`]'s order.
pub const DELIVERY_COLUMNS: &str = "id, source, source_ref, action, subscriber, queue, priority, tags, max_attempts, state, run_at, attempt, rescues, lease_gen, lease_until, runner, build_id, args, created_at, ended_at, reason, steps";

pub fn delivery_row(store: &str, row: Vec<P>) -> Result<DeliveryRow, StoreError> {
    let mut r = Reader::new(store, row);
    let id = r.text("a delivery's id")?;
    let kind = r.text("a delivery's source")?;
    let reference = r.opt_text();
    let source =
        source_of(&kind, reference).ok_or_else(|| damaged(store, "a delivery's source"))?;
    Ok(DeliveryRow {
        id,
        source,
        action: r.text("a delivery's action")?,
        subscriber: r.opt_text(),
        queue: r.text("a delivery's queue")?,
        priority: r.int("a delivery's priority")?,
        tags: strings_of(&r.text("a delivery's tags")?),
        max_attempts: r.int("a delivery's max_attempts")? as u32,
        state: DeliveryState::parse(&r.text("a delivery's state")?)
            .ok_or_else(|| damaged(store, "a delivery's state"))?,
        run_at: r.time("a delivery's run_at")?,
        attempt: r.int("a delivery's attempt")? as u32,
        rescues: r.int("a delivery's rescues")? as u32,
        lease_generation: r.int("a delivery's lease generation")? as u64,
        lease_until: r.opt_time(),
        runner: r.opt_text(),
        build_id: r.text("a delivery's build id")?,
        args: r.bytes().unwrap_or_default(),
        created_at: r.time("a delivery's creation time")?,
        ended_at: r.opt_time(),
        reason: r.opt_text(),
        steps: steps_of(&r.text("a delivery's steps")?),
    })
}

/// A delivery as it was inserted: [`DELIVERY_COLUMNS`], then its unique
/// key and states.
pub fn new_delivery(store: &str, mut row: Vec<P>) -> Result<NewDelivery, StoreError> {
    let n = DELIVERY_COLUMNS.split(", ").count();
    let tail = if row.len() > n {
        row.split_off(n)
    } else {
        Vec::new()
    };
    let d = delivery_row(store, row)?;
    let mut r = Reader::new(store, tail);
    let key = r.opt_text();
    let states = r.opt_text().map(|s| states_of(&s)).unwrap_or_default();
    Ok(NewDelivery {
        id: d.id,
        source: d.source,
        action: d.action,
        subscriber: d.subscriber,
        queue: d.queue,
        priority: d.priority,
        tags: d.tags,
        max_attempts: d.max_attempts,
        run_at: d.run_at,
        args: d.args,
        build_id: d.build_id,
        unique: key.map(|k| (k, states)),
    })
}

pub const ITEM_COLUMNS: &str =
    "delivery, outcome, reason, opened_at, answers_dropped_at, closed_at, closed_by";

pub fn item_row(store: &str, row: Vec<P>) -> Result<Item, StoreError> {
    let mut r = Reader::new(store, row);
    Ok(Item {
        delivery: r.text("an item's delivery")?,
        outcome: DeliveryState::parse(&r.text("an item's outcome")?)
            .ok_or_else(|| damaged(store, "an item's outcome"))?,
        reason: r.text("an item's reason")?,
        opened_at: r.time("an item's opening time")?,
        answers_dropped_at: r.opt_time(),
        closed_at: r.opt_time(),
        closed_by: r.opt_text(),
    })
}

pub const EVENT_COLUMNS: &str = "id, kind, payload, emitted_by, created_at, queue, priority, max_attempts, tags, run_at, metadata, unique_key, unique_states";

/// An event as the outbox holds it. Its payload and metadata are read as
/// JSON values of no declared type: canonical JSON round-trips them.
pub fn event_row(store: &str, row: Vec<P>) -> Result<Outboxed, StoreError> {
    let mut r = Reader::new(store, row);
    let id = r.text("an event's id")?;
    let event = r.text("an event's kind")?;
    let payload = json_value(&r.text("an event's payload")?);
    let emitted_by = r.text("an event's emitter")?;
    let created_at = r.time("an event's creation time")?;
    let queue = r.text("an event's queue")?;
    let priority = r.int("an event's priority")?;
    let max_attempts = r.int("an event's max_attempts")?;
    let tags = strings_of(&r.text("an event's tags")?);
    let run_at = r.time("an event's run_at")?;
    let metadata = json_value(&r.text("an event's metadata")?);
    let key = r.opt_text();
    let states = r.opt_text().map(|s| states_of(&s)).unwrap_or_default();
    Ok(Outboxed {
        follow: Follow {
            id,
            event,
            payload,
            queue,
            priority,
            max_attempts,
            tags,
            run_at,
            metadata,
            unique: key.map(|k| (k, states)),
            deliveries: Vec::new(),
        },
        emitted_by,
        created_at,
    })
}

/// JSON as a value of no declared type: objects as records, numbers as
/// Ints, strings as texts.
fn json_value(text: &str) -> Value {
    fn of(j: &Json) -> Value {
        match j {
            Json::Null => Value::None,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => n
                .as_i64()
                .map_or_else(|| Value::text(&n.to_string()), Value::Int),
            Json::String(s) => Value::text(s),
            Json::Array(items) => Value::List(items.iter().map(of).collect()),
            Json::Object(map) => {
                Value::record(map.iter().map(|(k, v)| (Name::new(k), of(v))).collect())
            }
        }
    }
    serde_json::from_str::<Json>(text).map_or(Value::None, |j| of(&j))
}

/// An entity column's value as a parameter, and how the statement takes
/// it (`$1`, or `$1::text::numeric` on Postgres).
pub fn bind(d: Dialect, kind: ColumnKind, c: Column, n: usize) -> (P, String) {
    let p = match c {
        Column::Null => P::Null,
        Column::Int(i) => P::Int(i),
        Column::Bool(b) if d == Dialect::Sqlite => P::Int(i64::from(b)),
        Column::Bool(b) => P::Text(b.to_string()),
        Column::Text(t) => P::Text(t),
    };
    // Through text: the parameter is then bound as text whatever the
    // column's type.
    let cast = match (d, kind) {
        (Dialect::Postgres, ColumnKind::Decimal) => "::text::numeric",
        (Dialect::Postgres, ColumnKind::Json) => "::text::jsonb",
        (Dialect::Postgres, ColumnKind::Bool) => "::text::boolean",
        _ => "",
    };
    (p, format!("${n}{cast}"))
}

/// An entity column as a statement reads it: as text where Postgres would
/// give another type.
pub fn read(d: Dialect, kind: ColumnKind, column: &str) -> String {
    match (d, kind) {
        (Dialect::Postgres, ColumnKind::Decimal | ColumnKind::Json | ColumnKind::Bool) => {
            format!("{column}::text")
        }
        _ => column.to_string(),
    }
}

/// A column read back, by its kind.
pub fn column(kind: ColumnKind, p: P) -> Column {
    match (kind, p) {
        (_, P::Null) => Column::Null,
        (ColumnKind::Bool, P::Int(i)) => Column::Bool(i != 0),
        (ColumnKind::Bool, P::Text(t)) => Column::Bool(t == "true" || t == "t"),
        (_, P::Int(i)) => Column::Int(i),
        (_, P::Text(t)) => Column::Text(t),
        (_, P::Bytes(b)) => Column::Text(String::from_utf8_lossy(&b).into_owned()),
    }
}
