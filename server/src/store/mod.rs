//! The stores an app runs on, opened from their URLs: `sqlite:PATH` (the
//! embedded default) or `postgres://...` / `postgresql://...` (shared by
//! several processes). Both implement every interface of
//! `jadpo_runtime::store` over one set of operations (`sql/`).

pub mod clock;
mod pg_pool;
pub mod postgres;
pub mod several;
pub mod sql;
pub mod sqlite;

use std::sync::Arc;

use jadpo_runtime::store::schema::Schema;
use jadpo_runtime::store::{ErrorKind, Store, StoreError};

pub use sql::migrate::{Apply, Kept, Migrated};

/// How a store URL is opened.
#[derive(Clone, Copy, Debug)]
pub struct OpenOptions {
    pub sqlite: sqlite::Options,
    pub apply: Apply,
}

impl Default for OpenOptions {
    fn default() -> OpenOptions {
        OpenOptions {
            sqlite: sqlite::Options::default(),
            apply: Apply::Auto,
        }
    }
}

/// The file a `sqlite:` URL names (`sqlite:PATH` or `sqlite://PATH`).
pub fn sqlite_path(url: &str) -> Option<&str> {
    let path = url.strip_prefix("sqlite:")?;
    Some(path.strip_prefix("//").unwrap_or(path))
}

/// Opens the stores of `bindings` (each a URL and the store's schema), in
/// their order. Those whose `sqlite:` URLs name one file are opened
/// together in it, each under its prefix behind the file's one writer
/// (design section 14: SQLite keeps an app's stores in one file).
pub fn open_each(
    bindings: Vec<(String, Schema)>,
    options: OpenOptions,
) -> Result<OpenedStores, StoreError> {
    let mut opened = OpenedStores::default();
    for store in opened_each(bindings, options)? {
        let (name, setup) = store.setup();
        opened.setup.push((name.to_string(), setup.clone()));
        opened.stores.push(store.into_store());
    }
    Ok(opened)
}

/// The stores [`open_each`] opened, and what setting each up did.
#[derive(Default)]
pub struct OpenedStores {
    pub stores: Vec<Arc<dyn Store>>,
    /// By store name, in the stores' order.
    pub setup: Vec<(String, Migrated)>,
}

impl OpenedStores {
    /// What a server says of its stores' setup at start.
    pub fn setup_lines(&self) -> Vec<String> {
        self.setup.iter().flat_map(|(n, m)| m.lines(n)).collect()
    }
}

/// Sets up the stores of `bindings` as `apply` says and closes them: what
/// each holds against its build (`Apply::Inspect`, `jadpo db status`), or
/// what pruning dropped (`Apply::Prune`), by store name, in their order.
pub fn set_up_each(
    bindings: Vec<(String, Schema)>,
    apply: Apply,
) -> Result<Vec<(String, Migrated)>, StoreError> {
    let options = OpenOptions {
        sqlite: sqlite::Options {
            exclusive: false,
            ..sqlite::Options::default()
        },
        apply,
    };
    Ok(opened_each(bindings, options)?
        .iter()
        .map(|o| {
            let (name, setup) = o.setup();
            (name.to_string(), setup.clone())
        })
        .collect())
}

/// A store as opened, before it is one of the app's `dyn Store`s.
enum Opened {
    Sqlite(sqlite::SqliteStore),
    Postgres(Box<postgres::PostgresStore>),
}

impl Opened {
    fn setup(&self) -> (&str, &Migrated) {
        match self {
            Opened::Sqlite(s) => (s.name(), &s.migrated),
            Opened::Postgres(s) => (s.name(), &s.migrated),
        }
    }

    fn into_store(self) -> Arc<dyn Store> {
        match self {
            Opened::Sqlite(s) => Arc::new(s),
            Opened::Postgres(s) => Arc::new(*s),
        }
    }
}

fn opened_each(
    bindings: Vec<(String, Schema)>,
    options: OpenOptions,
) -> Result<Vec<Opened>, StoreError> {
    let mut opened: Vec<Option<Opened>> = Vec::with_capacity(bindings.len());
    let mut files: std::collections::BTreeMap<String, Vec<(usize, Schema)>> = Default::default();
    for (i, (url, schema)) in bindings.into_iter().enumerate() {
        match sqlite_path(&url) {
            Some(path) => {
                files.entry(path.to_string()).or_default().push((i, schema));
                opened.push(None);
            }
            None => opened.push(Some(open_one(&url, schema, options)?)),
        }
    }
    let sqlite = sqlite::Options {
        apply: options.apply,
        ..options.sqlite
    };
    for (path, stores) in files {
        let (at, schemas): (Vec<usize>, Vec<Schema>) = stores.into_iter().unzip();
        let path = std::path::Path::new(&path);
        for (i, store) in at
            .into_iter()
            .zip(sqlite::SqliteStore::open_all(path, schemas, sqlite)?)
        {
            opened[i] = Some(Opened::Sqlite(store));
        }
    }
    Ok(opened.into_iter().flatten().collect())
}

/// Opens the store `schema.store` at `url`, set up for the build.
pub fn open(url: &str, schema: Schema, options: OpenOptions) -> Result<Arc<dyn Store>, StoreError> {
    open_one(url, schema, options).map(Opened::into_store)
}

fn open_one(url: &str, schema: Schema, options: OpenOptions) -> Result<Opened, StoreError> {
    if let Some(path) = sqlite_path(url) {
        let sqlite = sqlite::Options {
            apply: options.apply,
            ..options.sqlite
        };
        return Ok(Opened::Sqlite(sqlite::SqliteStore::open(
            std::path::Path::new(path),
            schema,
            sqlite,
        )?));
    }
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let store = postgres::PostgresStore::open(url, schema, options.apply)?;
        return Ok(Opened::Postgres(Box::new(store)));
    }
    Err(StoreError::new(
        &schema.store,
        ErrorKind::Unreachable,
        format!("`{url}` is no store URL: use sqlite:PATH or postgres://..."),
    ))
}
