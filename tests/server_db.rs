//! `jadpo db status` and `jadpo db prune` with the commands alone (design
//! `server.md` 14.4 and 18): billing run by `jadpo dev` with an entity
//! more, then changed (the entity gone, a field new, its schedule
//! renamed). Status lists the start's change and what the store keeps and
//! changes nothing; prune without `--yes` drops nothing, with it refuses
//! until a server of the build has started, then drops exactly what was
//! kept; a changed type makes status exit 1. A reload of `jadpo dev`
//! whose build the stores, the config or the fakes set up at start would
//! serve otherwise asks for a restart. On Postgres (through
//! `scripts/with-postgres.sh`), status reads a store `jadpo serve` set up
//! and prune forgets a removed schedule.

use std::path::Path;

use crate::server_support::{copy_billing, dev_at, scratch, text, Backend, Ops};

/// Replaces `from` (which must be there) with `to` in the app's file `rel`.
fn edit(app: &Path, rel: &str, from: &str, to: &str) {
    let path = app.join(rel);
    let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
    assert!(source.contains(from), "{rel} has no `{from}`");
    std::fs::write(&path, source.replace(from, to)).unwrap_or_else(|e| panic!("{e}"));
}

/// `jadpo db ARGS` on the app's store; its exit status and its output.
fn db(ops: &Ops, args: &[&str]) -> (Option<i32>, String) {
    let out = ops.jadpo(&[&["db"], args].concat());
    (out.status.code(), text(&out))
}

const ARCHIVE: &str = "entity Subscription {";
const WITH_ARCHIVE: &str = "entity Archive {\n    store: primary\n    key: Text\n    note: Text\n}\n\nentity Subscription {";
const PLAN: &str = "    plan: stripe.PriceId\n}";

#[test]
fn db_status_lists_what_a_build_left_and_prune_drops_it() {
    let dir = scratch("db-prune");
    let app = copy_billing(&dir, "billing");
    let db_file = dir.join("dev.sqlite");
    let ops = Ops {
        app: app.clone(),
        dir: dir.clone(),
        store: Backend::Sqlite(db_file.clone()),
    };
    edit(&app, "src/model.jadpo", ARCHIVE, WITH_ARCHIVE);
    let server = dev_at(&app, &db_file, "dev");
    assert!(
        server.wait_for("committed", 20).is_some(),
        "the schedule's first tick ran"
    );
    server.stop();
    let (code, out) = db(&ops, &["status"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("entities: as the app declares them"), "{out}");

    edit(&app, "src/model.jadpo", WITH_ARCHIVE, ARCHIVE);
    edit(
        &app,
        "src/model.jadpo",
        PLAN,
        "    plan: stripe.PriceId\n    note: Text? optional\n}",
    );
    edit(
        &app,
        "src/entries.jadpo",
        "nightly_price_check",
        "nightly_price_review",
    );
    let (code, out) = db(&ops, &["status"]);
    assert_eq!(code, Some(0), "{out}");
    for line in [
        "  a start of this build makes:\n    add column subscription.note\n",
        "    table archive (2 columns): its entity was removed\n",
        "  schedules the app no longer has:\n    nightly_price_check (last tick ",
    ] {
        assert!(out.contains(line), "no `{line}` in:\n{out}");
    }
    let (_, json) = db(&ops, &["status", "--format", "json"]);
    let doc: serde_json::Value =
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
    crate::server_outcomes::validate("db-status.schema.json", &doc);
    assert_eq!(doc["stores"][0]["kept"][0]["table"], "archive", "{json}");
    assert_eq!(doc["refused"], false, "{json}");

    let (code, out) = db(&ops, &["prune"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("nothing dropped"), "{out}");
    let (code, out) = db(&ops, &["prune", "--yes"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("start a server of it first"), "{out}");

    // The build's start adds the column and says what is kept.
    let server = dev_at(&app, &db_file, "dev");
    for line in [
        "store primary: added subscription.note",
        "store primary keeps what earlier builds left (1 table, 1 schedule): `jadpo db status` lists it",
    ] {
        assert!(server.wait_for(line, 20).is_some(), "no `{line}`");
    }
    server.stop();
    let (code, out) = db(&ops, &["prune", "--yes"]);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        out,
        "primary: dropped table archive\nprimary: forgot schedule nightly_price_check\n"
    );
    let (code, out) = db(&ops, &["status"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(!out.contains("kept"), "{out}");

    edit(
        &app,
        "src/model.jadpo",
        "note: Text? optional",
        "note: Int? optional",
    );
    let (code, out) = db(&ops, &["status"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains(
            "a start of this build is refused:\n    `Subscription.note` was stored as text"
        ),
        "{out}"
    );
    // `jadpo dev` refuses it too, and names both ways on.
    let cmd = crate::server_support::dev_command(&app, &db_file, "dev", &[]);
    let why = crate::server_support::spawn(cmd).err().unwrap_or_default();
    assert!(
        why.contains("`Subscription.note` was stored as text"),
        "{why}"
    );
    assert!(
        why.contains("`jadpo db status` lists every change"),
        "{why}"
    );
    assert!(
        why.contains("`jadpo dev --reset` starts the store empty"),
        "{why}"
    );
}

/// Reloads under `jadpo dev` after `change`, and checks it asked for a
/// restart with `why` and kept the running build.
fn refused_reload(name: &str, change: impl Fn(&Path), why: &str) {
    let dir = scratch(name);
    let app = copy_billing(&dir, "billing");
    let server = crate::server_support::dev_with(&app, &dir.join("dev.sqlite"), "dev", &["reload"]);
    // The reloader reads the files' times once it runs: the edit comes
    // after that.
    std::thread::sleep(std::time::Duration::from_secs(1));
    change(&app);
    let said = server.wait_for(why, 20).is_some();
    let all = server.stop_with_lines();
    assert!(said, "no `{why}` in:\n{all}");
    assert!(all.contains("restart `jadpo dev`"), "{all}");
    assert!(!all.contains("reloaded: build"), "{all}");
}

/// A reload whose build reads other config values asks for a restart:
/// the engine and the providers keep the values read at start, and a
/// build reading a value they lack would fault its deliveries.
#[test]
fn a_reload_that_changes_the_config_asks_for_a_restart() {
    let price = |app: &Path| {
        let (from, to) = ("basic_price: \"price_basic\"", "basic_price: \"price_pro\"");
        edit(app, "tests/dev.jadpo", from, to);
    };
    refused_reload(
        "db-reload-config",
        price,
        "reload: the config values changed",
    );
}

/// A reload whose fixture's fakes answer otherwise asks for a restart: the
/// fake provider server keeps the fakes it started with.
#[test]
fn a_reload_that_changes_the_fakes_asks_for_a_restart() {
    let customer = |app: &Path| edit(app, "tests/dev.jadpo", "id: \"cus_1\"", "id: \"cus_2\"");
    refused_reload(
        "db-reload-fakes",
        customer,
        "reload: the fixture's fakes changed",
    );
}

/// A reload whose build writes an entity's rows otherwise (a field more)
/// asks for a restart and keeps the running build: the store set up for
/// it would drop the new field's values without a word.
#[test]
fn a_reload_that_changes_a_table_asks_for_a_restart() {
    let field = |app: &Path| {
        edit(
            app,
            "src/model.jadpo",
            PLAN,
            "    plan: stripe.PriceId\n    note: Text? optional\n}",
        );
    };
    refused_reload(
        "db-reload",
        field,
        "reload: `Subscription`'s fields changed",
    );
}

/// `jadpo db status` and `prune` on a Postgres store `jadpo serve` set
/// up, through `scripts/with-postgres.sh` (skipped without it).
#[test]
fn db_status_and_prune_on_postgres() {
    let Some(url) = crate::server_support::postgres() else {
        return;
    };
    let dir = scratch("db-postgres");
    let ops = Ops::postgres(&dir, "db_postgres", &url);
    let server = ops.start("dev");
    // The schedule's row is written with its first tick: without it there
    // is nothing to forget below.
    assert!(
        server.wait_for("committed", 20).is_some(),
        "the schedule's first tick ran"
    );
    server.stop();
    let (code, out) = db(&ops, &["status"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.starts_with("store primary (Postgres)\n"), "{out}");
    assert!(out.contains("entities: as the app declares them"), "{out}");
    assert!(!out.contains(&url), "a URL may hold a password: {out}");

    edit(
        &ops.app,
        "src/entries.jadpo",
        "nightly_price_check",
        "nightly_price_review",
    );
    let (code, out) = db(&ops, &["prune", "--yes"]);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(out, "primary: forgot schedule nightly_price_check\n");
}
