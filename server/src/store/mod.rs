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

pub use sql::migrate::{Apply, Migrated};

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

/// Opens the store `schema.store` at `url`, set up for the build.
pub fn open(url: &str, schema: Schema, options: OpenOptions) -> Result<Arc<dyn Store>, StoreError> {
    if let Some(path) = url.strip_prefix("sqlite:") {
        let path = path.strip_prefix("//").unwrap_or(path);
        let sqlite = sqlite::Options {
            apply: options.apply,
            ..options.sqlite
        };
        return Ok(Arc::new(sqlite::SqliteStore::open(
            std::path::Path::new(path),
            schema,
            sqlite,
        )?));
    }
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return Ok(Arc::new(postgres::PostgresStore::open(
            url,
            schema,
            options.apply,
        )?));
    }
    Err(StoreError::new(
        &schema.store,
        ErrorKind::Unreachable,
        format!("`{url}` is no store URL: use sqlite:PATH or postgres://..."),
    ))
}
