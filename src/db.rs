//! `jadpo db status` and `jadpo db prune` (design `server.md` sections
//! 14.4 and 18): each store of an app against its build. A server's start
//! applies additive changes and keeps what a build no longer uses (a
//! removed field's column, a removed entity's table, a removed schedule's
//! last tick), so an older server can share the store during a deploy;
//! `status` lists what a start would change or refuse and what is kept,
//! and only `prune --yes` drops the kept. Both read the stores as the
//! operator commands do (`--store URL`, `JADPO_STORE_<NAME>`, the dev
//! file); `status` changes nothing.

use jadpo_runtime::store::schema::Schema;
use jadpo_server::store::{Apply, Kept, Migrated};
use serde_json::json;

use crate::cli::{DbCommand, OperatorStore};
use crate::operate::{app_at, AppAt};

pub fn run(command: &DbCommand) -> u8 {
    let result = match command {
        DbCommand::Status { format, at } => status(at, format.json()),
        DbCommand::Prune { yes, at } => prune(at, *yes),
    };
    match result {
        Ok((text, code)) => {
            print!("{text}");
            code
        }
        Err(why) => {
            eprintln!("error: {why}");
            2
        }
    }
}

/// Each store's name and where it is, as status shows it: a SQLite file,
/// or Postgres (a URL may hold a password).
type Places = Vec<(String, String)>;

/// The app's stores' places, and their bindings to set up.
fn bindings(app: &AppAt) -> (Places, Vec<(String, Schema)>) {
    let mut places = Vec::new();
    let mut bindings = Vec::new();
    for (name, url) in app.stores.names.iter().zip(&app.urls) {
        let schema = crate::dev::store_schema(&app.program, app.plan.as_ref(), name);
        let place = match jadpo_server::store::sqlite_path(url) {
            Some(path) => format!("SQLite {path}"),
            None => "Postgres".to_string(),
        };
        places.push((name.clone(), place));
        bindings.push((url.clone(), schema));
    }
    (places, bindings)
}

/// What each store holds against the app's build, without changing it.
fn inspect(at: &OperatorStore) -> Result<(Places, Vec<Migrated>), String> {
    let app = app_at(at)?;
    let (places, bindings) = bindings(&app);
    let found =
        jadpo_server::store::set_up_each(bindings, Apply::Inspect).map_err(|e| e.to_string())?;
    Ok((places, found.into_iter().map(|(_, m)| m).collect()))
}

fn status(at: &OperatorStore, json: bool) -> Result<(String, u8), String> {
    let (places, found) = inspect(at)?;
    let refused = found.iter().any(|m| !m.refused.is_empty());
    let text = match json {
        true => status_json(&places, &found),
        false => places
            .iter()
            .zip(&found)
            .map(|((name, place), m)| store_status(name, place, m))
            .collect(),
    };
    Ok((text, u8::from(refused)))
}

/// One store's part of `status`.
fn store_status(name: &str, place: &str, m: &Migrated) -> String {
    let mut out = format!("store {name} ({place})\n");
    out.push_str(&match m.runtime.as_slice() {
        [] => "  runtime tables: up to date\n".to_string(),
        versions => format!(
            "  runtime tables: a start applies migration{} {}\n",
            if versions.len() == 1 { "" } else { "s" },
            list_of(versions.iter().map(u32::to_string))
        ),
    });
    if m.pending.is_empty() && m.refused.is_empty() {
        out.push_str("  entities: as the app declares them\n");
    }
    section(&mut out, "a start of this build makes:", &m.pending);
    section(
        &mut out,
        "a start of this build is refused:",
        &m.refused.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let kept: Vec<String> = m.kept.iter().map(kept_words).collect();
    section(
        &mut out,
        "kept from earlier builds (`jadpo db prune --yes` drops them):",
        &kept,
    );
    let schedules: Vec<String> = m.schedules.iter().map(schedule_words).collect();
    section(&mut out, "schedules the app no longer has:", &schedules);
    out
}

/// A heading and its indented lines, when there are any.
fn section(out: &mut String, heading: &str, lines: &[impl AsRef<str>]) {
    if lines.is_empty() {
        return;
    }
    out.push_str(&format!("  {heading}\n"));
    for line in lines {
        out.push_str(&format!("    {}\n", line.as_ref()));
    }
}

fn list_of(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(", ")
}

fn kept_words(k: &Kept) -> String {
    match k {
        Kept::Column {
            table,
            column,
            kind,
        } => format!("column {table}.{column} ({kind}): its field was removed"),
        Kept::Table { table, columns } => {
            format!("table {table} ({columns} columns): its entity was removed")
        }
    }
}

fn schedule_words((name, last): &(String, Option<String>)) -> String {
    match last {
        Some(tick) => format!("{name} (last tick {tick})"),
        None => format!("{name} (never ticked)"),
    }
}

fn status_json(places: &[(String, String)], found: &[Migrated]) -> String {
    let stores: Vec<serde_json::Value> = places
        .iter()
        .zip(found)
        .map(|((name, _), m)| {
            json!({
                "store": name,
                "runtime_migrations": m.runtime,
                "pending": m.pending,
                "refused": m.refused,
                "kept": m.kept.iter().map(kept_json).collect::<Vec<_>>(),
                "removed_schedules": m.schedules.iter().map(|(name, last)| {
                    json!({"name": name, "last_tick": last})
                }).collect::<Vec<_>>(),
            })
        })
        .collect();
    let refused = found.iter().any(|m| !m.refused.is_empty());
    format!(
        "{}\n",
        json!({ "format": 1, "stores": stores, "refused": refused })
    )
}

fn kept_json(k: &Kept) -> serde_json::Value {
    match k {
        Kept::Column {
            table,
            column,
            kind,
        } => json!({"kind": "column", "table": table, "column": column, "type": kind}),
        Kept::Table { table, columns } => {
            json!({"kind": "table", "table": table, "columns": columns})
        }
    }
}

/// Without `yes`, what pruning would drop (exit 1 when there is any);
/// with it, drops them.
fn prune(at: &OperatorStore, yes: bool) -> Result<(String, u8), String> {
    if yes {
        return prune_now(at);
    }
    let (places, found) = inspect(at)?;
    let mut out = String::new();
    let mut any = false;
    for ((name, _), m) in places.iter().zip(&found) {
        let items: Vec<String> = m
            .kept
            .iter()
            .map(kept_words)
            .chain(
                m.schedules
                    .iter()
                    .map(|s| format!("schedule {}", schedule_words(s))),
            )
            .collect();
        any |= !items.is_empty();
        if !items.is_empty() {
            out.push_str(&format!("store {name}: pruning drops\n"));
            for item in items {
                out.push_str(&format!("  {item}\n"));
            }
        }
    }
    if !any {
        out.push_str("nothing to prune: every store holds only what the app declares\n");
        return Ok((out, 0));
    }
    out.push_str(
        "nothing dropped: run `jadpo db prune --yes` to drop them, once no server of an earlier build runs (its writes still name them)\n",
    );
    Ok((out, 1))
}

fn prune_now(at: &OperatorStore) -> Result<(String, u8), String> {
    let app = app_at(at)?;
    let (_, bindings) = bindings(&app);
    let done =
        jadpo_server::store::set_up_each(bindings, Apply::Prune).map_err(|e| e.to_string())?;
    let mut out = String::new();
    let mut count = 0;
    for (name, m) in &done {
        for line in &m.entities {
            out.push_str(&format!("{name}: {line}\n"));
            count += 1;
        }
    }
    if count == 0 {
        out.push_str("nothing to prune: every store holds only what the app declares\n");
    }
    Ok((out, 0))
}
