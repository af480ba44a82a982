//! What a store keeps between builds and how it is dropped (design
//! `server.md` 14.4 and 18, `jadpo db status` and `jadpo db prune`), on
//! SQLite and Postgres: a removed field's column, a removed entity's
//! table and a removed schedule's last tick are kept by a start and
//! listed by an inspection that changes nothing; pruning refuses while
//! the build still needs a change, then drops exactly them, keeps the
//! rows, and the build opens again.

use jadpo_compiler::ir::EntityId;
use jadpo_runtime::store::schema::Schema;
use jadpo_runtime::store::{ErrorKind, Store, Write};
use jadpo_runtime::value::Value;
use jadpo_server::store::{open, set_up_each, Apply, Kept, Migrated, OpenOptions};

use crate::support::*;

/// The first build: `Counter` with a field the second removes, and an
/// entity the second removes.
const FIRST: &str = "
entity Counter {
    store: primary
    n: Int
    label: Text
    legacy: Text? optional
}
entity Archive {
    store: primary
    key: Text
    note: Text
}
";

/// The second build: `legacy` and `Archive` gone, `note` new.
const SECOND: &str = "
entity Counter {
    store: primary
    n: Int
    label: Text
    note: Text? optional
}
";

fn schema(entities: &str, app: &str) -> Schema {
    Schema::of(
        &program_of(&format!("{SHOP_HEAD}{entities}")),
        "primary",
        app,
    )
}

fn set_up(url: &str, entities: &str, app: &str, apply: Apply) -> Result<Migrated, String> {
    let found = set_up_each(vec![(url.to_string(), schema(entities, app))], apply)
        .map_err(|e| e.to_string())?;
    Ok(found.into_iter().map(|(_, m)| m).next().unwrap_or_default())
}

fn store(url: &str, entities: &str, app: &str) -> std::sync::Arc<dyn Store> {
    open(url, schema(entities, app), OpenOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// Commits counter `n` (with `legacy` set when `legacy`).
fn count(store: &dyn Store, n: i64, legacy: bool) {
    let id = format!("d{n}");
    store
        .enqueue(&[delivery(&id, "default", 0, later(now(), -1000))], now())
        .unwrap();
    let lease = store.take(&id, 60_000, now()).unwrap().unwrap();
    let mut fields = vec![("n", Value::Int(n)), ("label", text("x"))];
    if legacy {
        fields.push(("legacy", text("old")));
    }
    let write = Write::Create {
        entity: EntityId(0),
        key: Value::Int(n).canonical(),
        value: rec(&fields),
    };
    store.commit(&commit_of(&id, vec![write]), &lease).unwrap();
}

fn lifecycle(url: &str, app: &str) {
    let first = store(url, FIRST, app);
    count(&*first, 1, true);
    let tick = delivery("s_nightly_1", "default", 0, now());
    assert!(first.tick("nightly", 60_000, &tick, now()).unwrap());
    drop(first);

    // The first build again: nothing to do, nothing kept.
    let same = set_up(url, FIRST, app, Apply::Inspect).unwrap();
    assert_eq!(same.pending, Vec::<String>::new());
    assert_eq!(same.kept, vec![]);
    assert_eq!(same.schedules.len(), 1, "the app declares no schedule");

    // The second build, inspected: a start adds `note` and keeps the rest.
    let inspected = set_up(url, SECOND, app, Apply::Inspect).unwrap();
    assert_eq!(inspected.pending, vec!["add column counter.note"]);
    assert_eq!(inspected.refused, Vec::<String>::new());
    let kept = vec![
        Kept::Column {
            table: "counter".into(),
            column: "legacy".into(),
            kind: "text".into(),
        },
        Kept::Table {
            table: "archive".into(),
            columns: 2,
        },
    ];
    assert_eq!(inspected.kept, kept);
    assert_eq!(inspected.schedules[0].0, "nightly");
    // An inspection changes nothing: the same again.
    assert_eq!(set_up(url, SECOND, app, Apply::Inspect).unwrap(), inspected);

    // Pruning waits for the build's own start.
    let refused = set_up(url, SECOND, app, Apply::Prune).unwrap_err();
    assert!(refused.contains("`Counter.note`"), "{refused}");
    assert!(refused.contains("start a server of it first"), "{refused}");

    let second = store(url, SECOND, app);
    count(&*second, 2, false);
    drop(second);
    let before = set_up(url, SECOND, app, Apply::Inspect).unwrap();
    assert_eq!(before.pending, Vec::<String>::new());
    assert_eq!(before.kept, kept, "a start keeps them");

    let pruned = set_up(url, SECOND, app, Apply::Prune).unwrap();
    assert_eq!(
        pruned.entities,
        vec![
            "dropped column counter.legacy",
            "dropped table archive",
            "forgot schedule nightly"
        ]
    );
    let after = set_up(url, SECOND, app, Apply::Inspect).unwrap();
    assert_eq!(after.kept, vec![]);
    assert_eq!(after.schedules, vec![]);
    assert_eq!(after.pending, Vec::<String>::new());

    // The rows stay, and the second build opens and writes as before.
    let again = store(url, SECOND, app);
    assert_eq!(again.select(EntityId(0), &[]).unwrap().len(), 2);
    count(&*again, 3, false);
    drop(again);
    // Bringing the field back is a new column, not the old one.
    let back = set_up(url, FIRST, app, Apply::Inspect).unwrap();
    assert_eq!(
        back.pending,
        vec!["add column counter.legacy", "create table archive"]
    );
}

#[test]
fn sqlite_keeps_what_a_build_dropped_until_pruned() {
    let dir = scratch("prune");
    let path = dir.join("app.sqlite");
    lifecycle(&format!("sqlite:{}", path.display()), "shop");
    // The view shows the table as it is now.
    let conn = rusqlite::Connection::open(&path).unwrap();
    let columns: Vec<String> = conn
        .prepare("SELECT * FROM \"primary__counter_v\"")
        .unwrap()
        .column_names()
        .map(str::to_string)
        .collect();
    assert_eq!(columns, ["n", "label", "note", "_version"]);
}

#[test]
fn an_inspection_of_a_new_store_leaves_it_as_it_was() {
    let dir = scratch("prune-new");
    let path = dir.join("app.sqlite");
    drop(rusqlite::Connection::open(&path).unwrap());
    let url = format!("sqlite:{}", path.display());
    let first = set_up(&url, SECOND, "shop", Apply::Inspect).unwrap();
    assert!(!first.runtime.is_empty(), "{first:?}");
    assert_eq!(first.pending, vec!["create table counter"]);
    assert_eq!(set_up(&url, SECOND, "shop", Apply::Inspect).unwrap(), first);
}

#[test]
fn postgres_keeps_what_a_build_dropped_until_pruned() {
    let Some(url) = postgres_url() else { return };
    lifecycle(&url, &format!("t{}_prune", std::process::id()));
}

#[test]
fn an_inspection_names_a_refused_change_and_changes_nothing() {
    let dir = scratch("prune-refused");
    let url = format!("sqlite:{}", dir.join("app.sqlite").display());
    drop(store(&url, SECOND, "shop"));
    let changed = SECOND.replace("note: Text? optional", "note: Int? optional");
    let inspected = set_up(&url, &changed, "shop", Apply::Inspect).unwrap();
    assert_eq!(inspected.refused.len(), 1, "{inspected:?}");
    assert!(
        inspected.refused[0].contains("`Counter.note` was stored as text"),
        "{inspected:?}"
    );
    let Err(e) = open(&url, schema(&changed, "shop"), OpenOptions::default()) else {
        panic!("a changed type was opened");
    };
    assert_eq!(e.kind, ErrorKind::Incompatible, "{e}");
}

/// A build that only removes a field leaves the entity's view naming its
/// column, which pruning makes again without it.
fn removed_alone(url: &str, app: &str) {
    let without = FIRST.replace("legacy: Text? optional", "");
    count(&*store(url, FIRST, app), 1, true);
    drop(store(url, &without, app));
    let pruned = set_up(url, &without, app, Apply::Prune).unwrap();
    assert_eq!(pruned.entities, vec!["dropped column counter.legacy"]);
    assert_eq!(
        store(url, &without, app)
            .select(EntityId(0), &[])
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn a_field_removed_alone_is_pruned_past_its_view() {
    let dir = scratch("prune-alone");
    let path = dir.join("app.sqlite");
    removed_alone(&format!("sqlite:{}", path.display()), "shop");
    let conn = rusqlite::Connection::open(&path).unwrap();
    let n: i64 = conn
        .query_row("SELECT COUNT(*) FROM \"primary__counter_v\"", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(n, 1, "the view reads the table");
    if let Some(url) = postgres_url() {
        removed_alone(&url, &format!("t{}_prune_alone", std::process::id()));
    }
}

/// What `jadpo dev` compares before swapping a build in on reload.
#[test]
fn a_build_is_served_by_a_store_set_up_for_another_only_with_the_same_tables() {
    let differs = |a: &str, b: &str| schema(a, "shop").differs(&schema(b, "shop"));
    // Spans and type ids move without changing a table.
    let moved = format!("\n// a comment\ntype Other = Text\n{SECOND}");
    assert_eq!(differs(SECOND, &moved), None);
    let more = SECOND.replace(
        "note: Text? optional",
        "note: Text? optional\n    extra: Text? optional",
    );
    assert_eq!(
        differs(SECOND, &more),
        Some("`Counter`'s fields changed".into())
    );
    assert_eq!(differs(SECOND, FIRST), Some("the entities changed".into()));
    let typed = SECOND.replace("note: Text? optional", "note: Int? optional");
    assert_eq!(
        differs(SECOND, &typed),
        Some("`Counter`'s fields changed".into())
    );
    let renamed = FIRST.replace("Counter", "Tally");
    assert_eq!(
        differs(FIRST, &renamed),
        Some("the entities changed".into())
    );
    // A JSON column's record gains a field: same column, other values.
    let nested = |fields: &str| {
        format!(
            "type Detail = Object {{ a: Text {fields} }}\nentity Counter {{\n    store: primary\n    n: Int\n    detail: Detail\n}}\n"
        )
    };
    // A new `where:` field list needs an index.
    let queried = schema(SECOND, "shop").with_queries(&[jadpo_plan::QueryPlan {
        entity: "Counter".into(),
        fields: vec!["label".into()],
    }]);
    assert_eq!(
        schema(SECOND, "shop").differs(&queried),
        Some("the field lists queried with `where:` changed".into())
    );
    assert_eq!(differs(&nested(""), &nested("")), None);
    assert_eq!(
        differs(&nested(""), &nested("b: Int")),
        Some("`Counter.detail`'s type changed".into())
    );
}
