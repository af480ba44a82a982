//! The embedded store's own behaviour: one server per file, damaged and
//! newer files refused at open, schema changes between builds, commits on
//! disk when answered, group commit under concurrent writers.

use std::path::Path;
use std::sync::Arc;

use jadpo_compiler::ir::EntityId;
use jadpo_runtime::store::schema::Schema;
use jadpo_runtime::store::{
    Commit, Commits, ErrorKind, KeyClaim, NewDelivery, Queue, RouteKeys, Rows, StoreError,
    StoredResponse, Write,
};
use jadpo_runtime::value::Value;
use jadpo_server::store::sqlite::{Options, SqliteStore};
use jadpo_server::store::{Apply, OpenOptions};

use crate::support::*;

fn open_with(path: &Path, source: &str, apply: Apply) -> Result<SqliteStore, StoreError> {
    let program = program_of(source);
    let schema = Schema::of(&program, "primary", "shop");
    SqliteStore::open(
        path,
        schema,
        Options {
            apply,
            ..Options::default()
        },
    )
}

fn open(path: &Path) -> Result<SqliteStore, StoreError> {
    open_with(path, SOURCE, Apply::Auto)
}

fn err(r: Result<SqliteStore, StoreError>) -> StoreError {
    match r {
        Ok(_) => panic!("the store opened"),
        Err(e) => e,
    }
}

fn commit_counter(store: &SqliteStore, delivery_id: &str, n: i64) {
    commit_counter_of(store, entity("Counter"), delivery_id, n);
}

/// `Counter` alone in its app is entity 0.
const ALONE: EntityId = EntityId(0);

fn commit_counter_of(store: &SqliteStore, counter: EntityId, delivery_id: &str, n: i64) {
    let past = later(now(), -1000);
    store
        .enqueue(&[delivery(delivery_id, "default", 0, past)], now())
        .unwrap();
    let lease = store.take(delivery_id, 60_000, now()).unwrap().unwrap();
    let commit = Commit {
        delivery: delivery_id.into(),
        at: now(),
        writes: vec![Write::Create {
            entity: counter,
            key: Value::Int(n).canonical(),
            value: rec(&[("n", Value::Int(n)), ("label", text("x"))]),
        }],
        follow_ups: Vec::new(),
        steps: Vec::new(),
        response: None,
    };
    store.commit(&commit, &lease).unwrap();
}

#[test]
fn a_second_server_on_one_file_is_refused() {
    let dir = scratch("sqlite-busy");
    let path = dir.join("app.sqlite");
    let first = open(&path).unwrap();
    let e = err(open(&path));
    assert_eq!(e.kind, ErrorKind::Busy, "{e}");
    assert!(e.detail.contains("another jadpo server"), "{e}");
    drop(first);
    open(&path).expect("the file is free once the first closes");
}

#[test]
fn an_operator_command_opens_beside_a_server() {
    let dir = scratch("sqlite-operator");
    let path = dir.join("app.sqlite");
    let server = open(&path).unwrap();
    commit_counter(&server, "d1", 1);
    let schema = Schema::of(program(), "primary", "shop");
    let options = Options {
        exclusive: false,
        ..Options::default()
    };
    let operator = SqliteStore::open(&path, schema, options).unwrap();
    assert!(operator.handled("d1").unwrap());
}

#[test]
fn a_file_that_is_no_database_is_refused() {
    let dir = scratch("sqlite-corrupt");
    let path = dir.join("app.sqlite");
    std::fs::write(&path, vec![0x42u8; 8192]).unwrap();
    let e = err(open(&path));
    assert_eq!(e.kind, ErrorKind::Corrupt, "{e}");
    // Nothing was written over it.
    assert_eq!(std::fs::read(&path).unwrap(), vec![0x42u8; 8192]);
}

#[test]
fn a_damaged_database_is_refused() {
    let dir = scratch("sqlite-damaged");
    let path = dir.join("app.sqlite");
    let store = open(&path).unwrap();
    for i in 0..200 {
        commit_counter(&store, &format!("d{i}"), i);
    }
    drop(store);
    // Overwrite the middle of the file: pages of tables and indexes.
    let mut bytes = std::fs::read(&path).unwrap();
    let len = bytes.len();
    for b in bytes.iter_mut().take(len - 4096).skip(4096 * 2) {
        *b = 0x5a;
    }
    std::fs::write(&path, bytes).unwrap();
    let _ = std::fs::remove_file(dir.join("app.sqlite-wal"));
    let e = err(open(&path));
    assert_eq!(e.kind, ErrorKind::Corrupt, "{e}");
}

#[test]
fn a_store_set_up_by_a_newer_jadpo_is_refused() {
    let dir = scratch("sqlite-newer");
    let path = dir.join("app.sqlite");
    drop(open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(
        "INSERT INTO \"primary__jadpo_migration\" (version, applied_at) VALUES (999, '2030-01-01T00:00:00Z')",
        [],
    )
    .unwrap();
    drop(conn);
    let e = err(open(&path));
    assert_eq!(e.kind, ErrorKind::NewerSchema, "{e}");
    assert!(e.detail.contains("999"), "{e}");
}

/// A store set up by the jadpo before migration 2 gains its retention
/// indexes at the next open; `--migrate check` names the migration and
/// applies none.
#[test]
fn a_store_at_migration_1_gains_the_retention_indexes() {
    let dir = scratch("sqlite-migration-2");
    let path = dir.join("app.sqlite");
    drop(open(&path).unwrap());
    let indexes = |conn: &rusqlite::Connection| -> Vec<String> {
        let mut stmt = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name IN ('primary__jadpo_delivery_completed', 'primary__jadpo_event_created', 'primary__jadpo_route_key_created', 'primary__jadpo_item_open') ORDER BY name")
            .unwrap();
        let names = stmt.query_map([], |r| r.get::<_, String>(0)).unwrap();
        names.map(Result::unwrap).collect()
    };
    let conn = rusqlite::Connection::open(&path).unwrap();
    assert_eq!(indexes(&conn).len(), 4);
    for name in indexes(&conn) {
        conn.execute_batch(&format!("DROP INDEX \"{name}\""))
            .unwrap();
    }
    conn.execute(
        "DELETE FROM \"primary__jadpo_migration\" WHERE version = 2",
        [],
    )
    .unwrap();
    let e = err(open_with(&path, SOURCE, Apply::Check));
    assert_eq!(e.kind, ErrorKind::Incompatible, "{e}");
    assert!(e.detail.contains("migration 2"), "{e}");
    drop(open(&path).unwrap());
    assert_eq!(indexes(&conn).len(), 4);
}

#[test]
fn a_read_only_file_is_named() {
    let dir = scratch("sqlite-readonly");
    let path = dir.join("app.sqlite");
    drop(open(&path).unwrap());
    let _ = std::fs::remove_file(dir.join("app.sqlite-wal"));
    let _ = std::fs::remove_file(dir.join("app.sqlite-shm"));
    let mut perms = std::fs::metadata(&path).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&path, perms).unwrap();
    if std::fs::OpenOptions::new().write(true).open(&path).is_ok() {
        eprintln!("skipped: this user writes read-only files (root)");
        return;
    }
    let e = err(open(&path));
    assert!(
        matches!(e.kind, ErrorKind::ReadOnly | ErrorKind::Unreachable),
        "{e}"
    );
}

#[test]
fn a_commit_is_on_disk_when_it_is_answered() {
    let dir = scratch("sqlite-durable");
    let path = dir.join("app.sqlite");
    let store = open(&path).unwrap();
    commit_counter(&store, "d1", 1);
    // Read it from another connection, as a restarted process would.
    let conn = rusqlite::Connection::open(&path).unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM \"primary__jadpo_handled\"", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(n, 1);
    drop(store);
    let store = open(&path).unwrap();
    assert!(store.handled("d1").unwrap());
    assert_eq!(store.select(entity("Counter"), &[]).unwrap().len(), 1);
}

#[test]
fn concurrent_writers_share_transactions() {
    let dir = scratch("sqlite-group");
    let path = dir.join("app.sqlite");
    let store = Arc::new(open(&path).unwrap());
    let before = store.transactions();
    std::thread::scope(|s| {
        for t in 0..16 {
            let store = store.clone();
            s.spawn(move || {
                for i in 0..25 {
                    let id = format!("d{t}_{i}");
                    let d: NewDelivery = delivery(&id, "default", 0, now());
                    store.enqueue(&[d], now()).unwrap();
                }
            });
        }
    });
    let used = store.transactions() - before;
    let claimed = store
        .claim(&jadpo_runtime::store::ClaimRequest {
            queues: vec![],
            max: 1000,
            lease_ms: 60_000,
            runner: "r".into(),
            now: later(now(), 1000),
        })
        .unwrap();
    assert_eq!(claimed.len(), 400);
    assert!(used < 400, "400 writes took {used} transactions");
}

fn counter_with(field: &str) -> String {
    format!("{SHOP_HEAD}entity Counter {{\n    store: primary\n    n: Int\n    label: Text\n    {field}\n}}\n")
}

#[test]
fn a_new_optional_field_is_added_to_a_table_with_rows() {
    let dir = scratch("sqlite-optional");
    let path = dir.join("app.sqlite");
    let store = open_with(&path, &counter_with(""), Apply::Auto).unwrap();
    commit_counter_of(&store, ALONE, "d1", 1);
    drop(store);
    let store = open_with(&path, &counter_with("note: Text? optional"), Apply::Auto).unwrap();
    assert!(
        store.migrated.entities.iter().any(|e| e.contains("note")),
        "{:?}",
        store.migrated.entities
    );
    let rows = store.select(ALONE, &[]).unwrap();
    assert_eq!(rows.len(), 1);
}

#[test]
fn a_new_required_field_on_a_table_with_rows_is_refused() {
    let dir = scratch("sqlite-required");
    let path = dir.join("app.sqlite");
    let store = open_with(&path, &counter_with(""), Apply::Auto).unwrap();
    commit_counter_of(&store, ALONE, "d1", 1);
    drop(store);
    let e = err(open_with(&path, &counter_with("owner: Text"), Apply::Auto));
    assert_eq!(e.kind, ErrorKind::Incompatible, "{e}");
    assert!(e.detail.contains("owner"), "{e}");
    // Without rows it is added.
    let dir = scratch("sqlite-required-empty");
    let path = dir.join("app.sqlite");
    drop(open_with(&path, &counter_with(""), Apply::Auto).unwrap());
    open_with(&path, &counter_with("owner: Text"), Apply::Auto).unwrap();
}

#[test]
fn a_changed_type_is_refused() {
    let dir = scratch("sqlite-type");
    let path = dir.join("app.sqlite");
    drop(open_with(&path, &counter_with("note: Text? optional"), Apply::Auto).unwrap());
    let e = err(open_with(
        &path,
        &counter_with("note: Int? optional"),
        Apply::Auto,
    ));
    assert_eq!(e.kind, ErrorKind::Incompatible, "{e}");
    assert!(e.detail.contains("note"), "{e}");
}

#[test]
fn migrate_check_refuses_any_change() {
    let dir = scratch("sqlite-check");
    let path = dir.join("app.sqlite");
    let e = err(open_with(&path, &counter_with(""), Apply::Check));
    assert_eq!(e.kind, ErrorKind::Incompatible, "{e}");
    drop(open_with(&path, &counter_with(""), Apply::Auto).unwrap());
    open_with(&path, &counter_with(""), Apply::Check).expect("nothing to change");
    let e = err(open_with(
        &path,
        &counter_with("note: Text? optional"),
        Apply::Check,
    ));
    assert_eq!(e.kind, ErrorKind::Incompatible, "{e}");
}

#[test]
fn a_url_opens_the_store_it_names() {
    let dir = scratch("sqlite-url");
    let path = dir.join("app.sqlite");
    let schema = Schema::of(program(), "primary", "shop");
    let url = format!("sqlite:{}", path.display());
    let store = jadpo_server::store::open(&url, schema.clone(), OpenOptions::default()).unwrap();
    assert_eq!(store.name(), "primary");
    drop(store);
    let Err(e) = jadpo_server::store::open("mysql://x", schema, OpenOptions::default()) else {
        panic!("opened a mysql URL");
    };
    assert_eq!(e.kind, ErrorKind::Unreachable);
    assert!(e.to_string().contains("sqlite:PATH"), "{e}");
}

/// Entities queried by their fields, after [`SHOP_HEAD`].
const QUERIED: &str = "
type Id = Text { max_length: 64 }
entity Sub {
    store: primary
    id: Id
    customer: Id
    state: Id
    at: Instant
}
failure Gone { }
action find(customer: Id, state: Id) -> Bool {
    var s = query optional Sub { where: state == state and customer == customer }
    var all = query many Sub { where: customer == customer limit: 10 }
    return s == none
}
action drop(id: Id) fails Gone -> Bool {
    delete Sub { where: id == id missing: Gone }
    return true
}
";

#[test]
fn the_plans_queries_become_indexes_and_each_entity_a_view() {
    let mut m = jadpo_compiler::load::loaders::MemLoader::new();
    m.insert("app/jadpo.yaml", "app: shop\n".as_bytes());
    let source = format!("{SHOP_HEAD}{QUERIED}");
    m.insert("app/app.jadpo", source.as_bytes());
    let compiled = jadpo_compiler::compile_with(&m, "app", jadpo_compiler::resolve::Lowering::Code);
    let program = compiled.program.expect("a program");
    let (diags, plan) =
        jadpo_checker::check_for_tests(&program, &compiled.files, jadpo_checker::Scope::App);
    let errors: Vec<_> = diags.iter().filter(|d| d.is_error()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let lists: Vec<(&str, Vec<&str>)> = plan
        .queries
        .iter()
        .map(|q| {
            (
                q.entity.as_str(),
                q.fields.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    // Fields in the entity's order, whatever the order written; the key
    // alone is listed too (the store skips it).
    assert_eq!(
        lists,
        vec![
            ("Sub", vec!["customer"]),
            ("Sub", vec!["customer", "state"]),
            ("Sub", vec!["id"]),
        ]
    );
    let dir = scratch("sqlite-indexes");
    let path = dir.join("app.sqlite");
    let schema = Schema::of(&program, "primary", "shop").with_queries(&plan.queries);
    drop(SqliteStore::open(&path, schema, Options::default()).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mut found: Vec<(String, String)> = conn
        .prepare("SELECT type, name FROM sqlite_master WHERE tbl_name LIKE 'primary__sub%' AND type IN ('index', 'view') AND name NOT LIKE 'sqlite_%'")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    found.sort();
    assert_eq!(
        found,
        vec![
            ("index".to_string(), "primary__sub_by_customer".to_string()),
            (
                "index".to_string(),
                "primary__sub_by_customer_state".to_string()
            ),
            ("view".to_string(), "primary__sub_v".to_string()),
        ]
    );
}

#[test]
fn a_full_store_is_named_and_its_failed_commit_wrote_nothing() {
    let dir = scratch("sqlite-full");
    let path = dir.join("app.sqlite");
    drop(open(&path).unwrap());
    let size = std::fs::metadata(&path).unwrap().len();
    let schema = Schema::of(program(), "primary", "shop");
    let options = Options {
        max_bytes: Some(size + 64 * 1024),
        ..Options::default()
    };
    let store = SqliteStore::open(&path, schema, options).unwrap();
    let big = "x".repeat(2000);
    let mut failed = None;
    for i in 0..1000 {
        let id = format!("d{i}");
        if let Err(e) = store.enqueue(&[delivery(&id, "default", 0, now())], now()) {
            failed = Some((id, e));
            break;
        }
        let lease = match store.take(&id, 60_000, now()) {
            Ok(lease) => lease.expect("the delivery"),
            Err(e) => {
                failed = Some((id, e));
                break;
            }
        };
        let commit = Commit {
            delivery: id.clone(),
            at: now(),
            writes: vec![Write::Create {
                entity: entity("Counter"),
                key: Value::Int(i).canonical(),
                value: rec(&[("n", Value::Int(i)), ("label", text(&big))]),
            }],
            follow_ups: Vec::new(),
            steps: Vec::new(),
            response: None,
        };
        match store.commit(&commit, &lease) {
            Ok(()) => {}
            Err(jadpo_runtime::store::CommitError::Store(e)) => {
                failed = Some((id, e));
                break;
            }
            Err(other) => panic!("{other:?}"),
        }
    }
    let Some((id, e)) = failed else {
        panic!("1000 commits fit under the cap");
    };
    assert_eq!(e.kind, ErrorKind::Full, "{e}");
    assert!(e.to_string().contains("store `primary` is full"), "{e}");
    assert!(
        !store.handled(&id).unwrap(),
        "the failed commit left no marker"
    );
    let rows = store.select(entity("Counter"), &[]).unwrap();
    assert!(!rows.is_empty());
    // Every row that landed came with its delivery's marker.
    let handled = (0..1000)
        .filter(|i| store.handled(&format!("d{i}")).unwrap())
        .count();
    assert_eq!(rows.len(), handled);
}

/// A stored answer replays from a read connection: it does not wait for
/// the write lock, which an operator command (or a long batch) may hold.
#[test]
fn a_replay_answers_while_the_write_lock_is_held() {
    let path = scratch("replay-read").join("s.sqlite");
    let store = open(&path).unwrap();
    let KeyClaim::New { lease } = store.claim_key(&key_request("k1", 1, "r_1")).unwrap() else {
        panic!("a new claim");
    };
    let response = StoredResponse {
        status: 201,
        headers: Vec::new(),
        body: b"{}".to_vec(),
    };
    let mut c = commit_of("r_1", Vec::new());
    c.response = Some(response.clone());
    store.commit(&c, &lease).unwrap();
    let other = rusqlite::Connection::open(&path).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    assert_eq!(
        store.claim_key(&key_request("k1", 1, "r_2")).unwrap(),
        KeyClaim::Replay(response)
    );
    assert_eq!(
        store.claim_key(&key_request("k1", 2, "r_3")).unwrap(),
        KeyClaim::Reused
    );
    other.execute_batch("ROLLBACK").unwrap();
}
