//! The tables of a store (design `server.md` section 14.2), in each
//! dialect, and the forward-only migrations of the runtime tables. Every
//! table name starts with the store's prefix (`primary__`), so several
//! stores can share a file or a schema. Times are RFC 3339 text with nine
//! digits (they sort as text); flags are integers 0 and 1.

use jadpo_runtime::store::schema::ColumnKind;

use super::Dialect;

/// The runtime tables' migrations, in order: (version, statements with
/// `{p}` for the prefix). A store whose `migration` table names a higher
/// version than the last here was set up by a newer jadpo and is refused.
pub fn migrations(d: Dialect) -> Vec<(u32, Vec<String>)> {
    let (blob, serial, int) = match d {
        Dialect::Sqlite => ("BLOB", "INTEGER PRIMARY KEY AUTOINCREMENT", "INTEGER"),
        Dialect::Postgres => ("BYTEA", "BIGSERIAL PRIMARY KEY", "BIGINT"),
    };
    let v1 = vec![
        format!(
            "CREATE TABLE \"{{p}}jadpo_delivery\" (
                id TEXT PRIMARY KEY,
                source TEXT NOT NULL,
                source_ref TEXT,
                action TEXT NOT NULL,
                subscriber TEXT,
                queue TEXT NOT NULL,
                priority {int} NOT NULL,
                tags TEXT NOT NULL,
                max_attempts {int} NOT NULL,
                state TEXT NOT NULL,
                run_at TEXT NOT NULL,
                attempt {int} NOT NULL DEFAULT 0,
                rescues {int} NOT NULL DEFAULT 0,
                lease_gen {int} NOT NULL DEFAULT 0,
                lease_until TEXT,
                runner TEXT,
                build_id TEXT NOT NULL,
                args {blob} NOT NULL,
                created_at TEXT NOT NULL,
                ended_at TEXT,
                reason TEXT,
                steps TEXT NOT NULL DEFAULT '[]',
                unique_key TEXT,
                unique_states TEXT
            )"
        ),
        "CREATE INDEX \"{p}jadpo_delivery_waiting\" ON \"{p}jadpo_delivery\" (queue, priority, run_at, id) WHERE state IN ('scheduled', 'available', 'retryable')".to_string(),
        "CREATE INDEX \"{p}jadpo_delivery_source\" ON \"{p}jadpo_delivery\" (source_ref)".to_string(),
        "CREATE INDEX \"{p}jadpo_delivery_running\" ON \"{p}jadpo_delivery\" (lease_until) WHERE state = 'running'".to_string(),
        format!(
            "CREATE TABLE \"{{p}}jadpo_event\" (
                seq {serial},
                id TEXT NOT NULL UNIQUE,
                kind TEXT NOT NULL,
                payload TEXT NOT NULL,
                emitted_by TEXT NOT NULL,
                created_at TEXT NOT NULL,
                queue TEXT NOT NULL,
                priority {int} NOT NULL,
                max_attempts {int} NOT NULL,
                tags TEXT NOT NULL,
                run_at TEXT NOT NULL,
                metadata TEXT NOT NULL,
                unique_key TEXT,
                unique_states TEXT
            )"
        ),
        format!(
            "CREATE TABLE \"{{p}}jadpo_unique_claim\" (
                key TEXT PRIMARY KEY,
                event TEXT NOT NULL,
                blocking {int} NOT NULL
            )"
        ),
        format!(
            "CREATE TABLE \"{{p}}jadpo_record\" (
                delivery TEXT PRIMARY KEY,
                format {int} NOT NULL,
                build_id TEXT NOT NULL,
                shape_digest TEXT NOT NULL,
                mode TEXT NOT NULL,
                started_at TEXT NOT NULL,
                lease_gen {int} NOT NULL
            )"
        ),
        format!(
            "CREATE TABLE \"{{p}}jadpo_step\" (
                delivery TEXT NOT NULL,
                position {int} NOT NULL,
                operation TEXT NOT NULL,
                fingerprint {blob},
                field_fingerprints TEXT NOT NULL,
                sent_at TEXT NOT NULL,
                key_gen {int} NOT NULL,
                runner_gen {int} NOT NULL,
                key TEXT,
                state TEXT NOT NULL,
                doubt TEXT,
                nonce {blob},
                ciphertext {blob},
                PRIMARY KEY (delivery, position)
            )"
        ),
        "CREATE TABLE \"{p}jadpo_handled\" (delivery TEXT PRIMARY KEY, committed_at TEXT NOT NULL)"
            .to_string(),
        format!(
            "CREATE TABLE \"{{p}}jadpo_route_key\" (
                route TEXT NOT NULL,
                principal TEXT NOT NULL,
                key TEXT NOT NULL,
                fingerprint {blob} NOT NULL,
                delivery TEXT NOT NULL,
                created_at TEXT NOT NULL,
                status {int},
                headers TEXT,
                body {blob},
                PRIMARY KEY (route, principal, key)
            )"
        ),
        "CREATE INDEX \"{p}jadpo_route_key_delivery\" ON \"{p}jadpo_route_key\" (delivery)"
            .to_string(),
        "CREATE TABLE \"{p}jadpo_item\" (
                delivery TEXT PRIMARY KEY,
                outcome TEXT NOT NULL,
                reason TEXT NOT NULL,
                opened_at TEXT NOT NULL,
                answers_dropped_at TEXT,
                closed_at TEXT,
                closed_by TEXT
            )"
        .to_string(),
        format!(
            "CREATE TABLE \"{{p}}jadpo_schedule\" (
                name TEXT PRIMARY KEY,
                every_ms {int} NOT NULL,
                last_tick TEXT
            )"
        ),
        format!(
            "CREATE TABLE \"{{p}}jadpo_schema\" (
                entity TEXT NOT NULL,
                field TEXT NOT NULL,
                kind TEXT NOT NULL,
                required {int} NOT NULL,
                position {int} NOT NULL,
                PRIMARY KEY (entity, field)
            )"
        ),
    ];
    // Retention reads rows by age once a minute (design section 20): each
    // of its queries reads an index instead of its whole table, so a
    // store keeping a day of deliveries does not hold the writer for a
    // scan of every row it keeps.
    let v2 = vec![
        "CREATE INDEX \"{p}jadpo_delivery_completed\" ON \"{p}jadpo_delivery\" (ended_at) WHERE state = 'completed'".to_string(),
        "CREATE INDEX \"{p}jadpo_event_created\" ON \"{p}jadpo_event\" (created_at)".to_string(),
        "CREATE INDEX \"{p}jadpo_route_key_created\" ON \"{p}jadpo_route_key\" (created_at)".to_string(),
        "CREATE INDEX \"{p}jadpo_item_open\" ON \"{p}jadpo_item\" (opened_at) WHERE answers_dropped_at IS NULL".to_string(),
    ];
    vec![(1, v1), (2, v2)]
}

/// The version the last migration leaves.
pub fn latest(d: Dialect) -> u32 {
    migrations(d).last().map_or(0, |(v, _)| *v)
}

/// The table that records which runtime migrations ran.
pub fn migration_table(d: Dialect) -> &'static str {
    match d {
        Dialect::Sqlite => {
            "CREATE TABLE IF NOT EXISTS \"{p}jadpo_migration\" (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
        }
        Dialect::Postgres => {
            "CREATE TABLE IF NOT EXISTS \"{p}jadpo_migration\" (version BIGINT PRIMARY KEY, applied_at TEXT NOT NULL)"
        }
    }
}

/// A column's SQL type. Every entity column but the key is nullable in
/// SQL: a field the build removed keeps its column and must take nothing,
/// and a required field is required by the runtime, which checks every
/// value before it is written.
pub fn column_type(d: Dialect, kind: ColumnKind) -> &'static str {
    match (d, kind) {
        (Dialect::Sqlite, ColumnKind::Int | ColumnKind::Duration | ColumnKind::Bool) => "INTEGER",
        (Dialect::Sqlite, _) => "TEXT",
        (Dialect::Postgres, ColumnKind::Int | ColumnKind::Duration) => "BIGINT",
        (Dialect::Postgres, ColumnKind::Bool) => "BOOLEAN",
        (Dialect::Postgres, ColumnKind::Decimal) => "NUMERIC",
        (Dialect::Postgres, ColumnKind::Json) => "JSONB",
        (Dialect::Postgres, _) => "TEXT",
    }
}

/// The integer type of `_version`.
pub fn version_type(d: Dialect) -> &'static str {
    match d {
        Dialect::Sqlite => "INTEGER",
        Dialect::Postgres => "BIGINT",
    }
}
