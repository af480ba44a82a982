//! The embedded store (design `server.md` sections 14 and 17): SQLite from
//! the bundled library, nothing to install. One writer thread owns the only
//! write connection; every write is a message to it, and it runs the
//! messages waiting at once in one `BEGIN IMMEDIATE` transaction with a
//! savepoint each (group commit), answering each sender once the commit is
//! durable. It does not wait for more: under load the queue fills while a
//! commit syncs, and the next batch takes all of it. Reads use their own
//! WAL connections. A lock file refuses a second server on the file; a
//! damaged file or one set up by a newer jadpo is refused at open.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::EntityId;
use jadpo_runtime::record::{StepRow, StoredRecord};
use jadpo_runtime::store::schema::Schema;
use jadpo_runtime::store::{
    ClaimRequest, Claimed, Commit, CommitError, Commits, DeliveryRow, ErrorKind, Fenced, Item,
    Items, KeyClaim, KeyRequest, Lease, ListFilter, NewDelivery, Next, Operate, Operated, Outboxed,
    Pruned, Queue, Records, Retention, RouteKeys, Row, Rows, Store, StoreError, StoredResponse,
};
use jadpo_runtime::value::{Instant, Value};
use rusqlite::{Connection, OpenFlags};

use super::clock::now;
use super::sql::migrate::{self, Apply, Migrated};
use super::sql::{ops, sqlite_placeholders, Conn, Cx, Dialect, P};

/// How the file is opened.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// `synchronous=FULL` (the default): a commit is on disk when it is
    /// answered. `jadpo dev` uses NORMAL.
    pub full_sync: bool,
    /// Take the lock file: a server does; an operator command does not
    /// (it writes with a 5 s busy timeout instead).
    pub exclusive: bool,
    /// `--migrate auto|check`.
    pub apply: Apply,
    /// A cap on the file's size in bytes: a write past it is refused
    /// with "is full", as a full disk is (tests fill a store this way).
    pub max_bytes: Option<u64>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            full_sync: true,
            exclusive: true,
            apply: Apply::Auto,
            max_bytes: None,
        }
    }
}

/// Read connections kept open between reads. A read past them opens one
/// and closes it after: an open costs more than most reads (the pragmas,
/// every statement prepared again), so the pool covers the requests and
/// runners that read at once under load.
const READERS: usize = 32;

type Finish = Box<dyn FnOnce(Option<&StoreError>) + Send>;
/// A write: runs in the batch's transaction unless the slot already holds
/// why the transaction is gone; sets the slot when its failure took the
/// transaction with it (SQLite rolls back by itself on a full disk).
type Job = Box<dyn FnOnce(&Connection, &mut Option<StoreError>) -> Finish + Send>;

/// The store error inside an operation's error, to name why a batch was
/// lost.
trait StoreCause {
    fn cause(&self) -> Option<&StoreError>;
}

impl StoreCause for StoreError {
    fn cause(&self) -> Option<&StoreError> {
        Some(self)
    }
}

impl StoreCause for Fenced {
    fn cause(&self) -> Option<&StoreError> {
        match self {
            Fenced::Store(e) => Some(e),
            Fenced::LeaseLost => None,
        }
    }
}

impl StoreCause for CommitError {
    fn cause(&self) -> Option<&StoreError> {
        match self {
            CommitError::Store(e) => Some(e),
            _ => None,
        }
    }
}

/// Jobs one transaction takes at most.
const MAX_BATCH: usize = 256;

pub struct SqliteStore {
    name: String,
    prefix: String,
    schema: Arc<Schema>,
    file: Arc<DbFile>,
    /// What opening it set up.
    pub migrated: Migrated,
}

/// What the stores of one file share (design section 14: one file, a
/// prefix per store): its one writer, its read connections, its lock.
struct DbFile {
    path: PathBuf,
    jobs: Mutex<Option<Sender<Job>>>,
    writer: Mutex<Option<JoinHandle<()>>>,
    readers: Mutex<Vec<Connection>>,
    /// The lock file, held while a store of the file is open.
    _lock: Option<File>,
    /// Transactions the writer committed (each one sync with FULL).
    transactions: Arc<AtomicU64>,
}

fn error(store: &str, e: &rusqlite::Error) -> StoreError {
    use rusqlite::ffi::ErrorCode as C;
    let kind = match e.sqlite_error_code() {
        Some(C::DiskFull) => ErrorKind::Full,
        Some(C::ReadOnly) => ErrorKind::ReadOnly,
        Some(C::DatabaseCorrupt | C::NotADatabase) => ErrorKind::Corrupt,
        Some(C::DatabaseBusy | C::DatabaseLocked) => ErrorKind::Busy,
        Some(C::CannotOpen) => ErrorKind::Unreachable,
        _ => ErrorKind::Failed,
    };
    StoreError::new(store, kind, e.to_string())
}

/// A connection as the shared operations see it.
struct Sql<'c> {
    conn: &'c Connection,
    store: &'c str,
}

fn bind(p: &P) -> rusqlite::types::Value {
    use rusqlite::types::Value as V;
    match p {
        P::Null => V::Null,
        P::Int(i) => V::Integer(*i),
        P::Text(s) => V::Text(s.clone()),
        P::Bytes(b) => V::Blob(b.clone()),
    }
}

impl Conn for Sql<'_> {
    fn exec(&mut self, sql: &str, params: &[P]) -> Result<u64, StoreError> {
        let sql = sqlite_placeholders(sql);
        let mut stmt = self
            .conn
            .prepare_cached(&sql)
            .map_err(|e| error(self.store, &e))?;
        let values: Vec<rusqlite::types::Value> = params.iter().map(bind).collect();
        stmt.execute(rusqlite::params_from_iter(values))
            .map(|n| n as u64)
            .map_err(|e| error(self.store, &e))
    }

    fn rows(&mut self, sql: &str, params: &[P]) -> Result<Vec<Vec<P>>, StoreError> {
        use rusqlite::types::ValueRef as V;
        let sql = sqlite_placeholders(sql);
        let mut stmt = self
            .conn
            .prepare_cached(&sql)
            .map_err(|e| error(self.store, &e))?;
        let n = stmt.column_count();
        let values: Vec<rusqlite::types::Value> = params.iter().map(bind).collect();
        let mut rows = stmt
            .query(rusqlite::params_from_iter(values))
            .map_err(|e| error(self.store, &e))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(|e| error(self.store, &e))? {
            let mut cols = Vec::with_capacity(n);
            for i in 0..n {
                let v = row.get_ref(i).map_err(|e| error(self.store, &e))?;
                cols.push(match v {
                    V::Null => P::Null,
                    V::Integer(i) => P::Int(i),
                    V::Real(f) => P::Text(f.to_string()),
                    V::Text(t) => P::Text(String::from_utf8_lossy(t).into_owned()),
                    V::Blob(b) => P::Bytes(b.to_vec()),
                });
            }
            out.push(cols);
        }
        Ok(out)
    }
}

impl SqliteStore {
    /// Opens (and sets up) the store `schema.store` in the file at `path`.
    pub fn open(path: &Path, schema: Schema, options: Options) -> Result<SqliteStore, StoreError> {
        let name = schema.store.clone();
        Self::open_all(path, vec![schema], options)?
            .pop()
            .ok_or_else(|| StoreError::new(&name, ErrorKind::Failed, "no store was opened"))
    }

    /// Opens (and sets up) every store of `schemas` in the one file at
    /// `path`, each under its own prefix, behind one writer: an app's
    /// several stores in one file (design section 14).
    pub fn open_all(
        path: &Path,
        schemas: Vec<Schema>,
        options: Options,
    ) -> Result<Vec<SqliteStore>, StoreError> {
        let names: Vec<&str> = schemas.iter().map(|s| s.store.as_str()).collect();
        let name = names.join("+");
        let lock = if options.exclusive {
            Some(lock_file(&name, path)?)
        } else {
            None
        };
        let conn = connect(&name, path, options)?;
        check_whole(&name, &conn)?;
        let mut opened = Vec::with_capacity(schemas.len());
        for schema in schemas {
            let prefix = format!("{}__", schema.store);
            let migrated = migrate_in(&conn, &schema.store, &prefix, &schema, options.apply)?;
            opened.push((prefix, schema, migrated));
        }
        let (jobs, receiver) = mpsc::channel::<Job>();
        let thread_name = name.clone();
        let transactions = Arc::new(AtomicU64::new(0));
        let counted = transactions.clone();
        let writer = std::thread::Builder::new()
            .name(format!("jadpo-sqlite-{name}"))
            .spawn(move || write_loop(&conn, &thread_name, &receiver, &counted))
            .map_err(|e| {
                StoreError::new(&name, ErrorKind::Failed, format!("no writer thread: {e}"))
            })?;
        let file = Arc::new(DbFile {
            path: path.to_path_buf(),
            jobs: Mutex::new(Some(jobs)),
            writer: Mutex::new(Some(writer)),
            readers: Mutex::new(Vec::new()),
            _lock: lock,
            transactions,
        });
        Ok(opened
            .into_iter()
            .map(|(prefix, schema, migrated)| SqliteStore {
                name: schema.store.clone(),
                prefix,
                schema: Arc::new(schema),
                file: file.clone(),
                migrated,
            })
            .collect())
    }

    /// Write transactions committed since the store opened: with group
    /// commit, fewer than the writes they carried.
    pub fn transactions(&self) -> u64 {
        self.file.transactions.load(Ordering::Relaxed)
    }

    /// Runs `op` on the writer, in its own savepoint of the next batch;
    /// answers once the batch's commit is durable.
    fn write<T, E>(
        &self,
        op: impl FnOnce(&mut Cx<'_>) -> Result<T, E> + Send + 'static,
    ) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + StoreCause + Send + 'static,
    {
        let (tx, rx) = mpsc::sync_channel::<Result<T, E>>(1);
        let (store, prefix, schema) = (self.name.clone(), self.prefix.clone(), self.schema.clone());
        let job: Job = Box::new(
            move |conn: &Connection, lost: &mut Option<StoreError>| -> Finish {
                let result = match lost {
                    Some(e) => Err(E::from(e.clone())),
                    None => savepoint(conn, &store, &prefix, &schema, op),
                };
                if lost.is_none() && conn.is_autocommit() {
                    let why = result.as_ref().err().and_then(StoreCause::cause).cloned();
                    *lost = Some(why.unwrap_or_else(|| {
                        StoreError::new(
                            &store,
                            ErrorKind::Failed,
                            "SQLite rolled the transaction back",
                        )
                    }));
                }
                Box::new(move |failed: Option<&StoreError>| {
                    let out = match failed {
                        Some(e) => Err(E::from(e.clone())),
                        None => result,
                    };
                    let _ = tx.send(out);
                })
            },
        );
        let gone = || {
            E::from(StoreError::new(
                &self.name,
                ErrorKind::Unreachable,
                "the store is closed",
            ))
        };
        let sent = self
            .file
            .jobs
            .lock()
            .map_err(|_| gone())?
            .as_ref()
            .map(|j| j.send(job).is_ok())
            .unwrap_or(false);
        if !sent {
            return Err(gone());
        }
        rx.recv().unwrap_or_else(|_| Err(gone()))
    }

    /// Runs `op` on a read connection (committed data only).
    fn read<T>(
        &self,
        op: impl FnOnce(&mut Cx<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let conn = match self.file.readers.lock().ok().and_then(|mut r| r.pop()) {
            Some(c) => c,
            None => {
                let options = Options {
                    exclusive: false,
                    ..Options::default()
                };
                connect(&self.name, &self.file.path, options)?
            }
        };
        let result = {
            let mut sql = Sql {
                conn: &conn,
                store: &self.name,
            };
            let mut cx = Cx {
                conn: &mut sql,
                dialect: Dialect::Sqlite,
                store: &self.name,
                prefix: &self.prefix,
                schema: &self.schema,
                now: now(),
            };
            op(&mut cx)
        };
        if let Ok(mut r) = self.file.readers.lock() {
            if r.len() < READERS {
                r.push(conn);
            }
        }
        result
    }
}

impl Drop for DbFile {
    fn drop(&mut self) {
        if let Ok(mut jobs) = self.jobs.lock() {
            jobs.take();
        }
        if let Some(writer) = self.writer.lock().ok().and_then(|mut w| w.take()) {
            let _ = writer.join();
        }
    }
}

fn lock_file(store: &str, path: &Path) -> Result<File, StoreError> {
    let mut lock_path = path.as_os_str().to_owned();
    lock_path.push(".lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| {
            StoreError::new(
                store,
                ErrorKind::Unreachable,
                format!(
                    "cannot open its lock file {}: {e}",
                    PathBuf::from(&lock_path).display()
                ),
            )
        })?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(StoreError::new(
            store,
            ErrorKind::Busy,
            format!(
                "another jadpo server has {} open (its lock file is held); SQLite serves one process: stop the other, or move the store to Postgres",
                path.display()
            ),
        )),
        Err(std::fs::TryLockError::Error(e)) => Err(StoreError::new(store, ErrorKind::Failed, format!("cannot lock {}: {e}", path.display()))),
    }
}

fn connect(store: &str, path: &Path, options: Options) -> Result<Connection, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| error(store, &e))?;
    let sync = if options.full_sync { "FULL" } else { "NORMAL" };
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .map_err(|e| error(store, &e))?;
    conn.execute_batch(&format!(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = {sync}; PRAGMA foreign_keys = OFF;"
    ))
    .map_err(|e| error(store, &e))?;
    if let Some(max) = options.max_bytes {
        let page: i64 = conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .map_err(|e| error(store, &e))?;
        let pages = (max / page.max(512) as u64).max(1);
        conn.execute_batch(&format!("PRAGMA max_page_count = {pages}"))
            .map_err(|e| error(store, &e))?;
    }
    conn.set_prepared_statement_cache_capacity(128);
    Ok(conn)
}

/// A damaged file is refused before anything is written to it.
fn check_whole(store: &str, conn: &Connection) -> Result<(), StoreError> {
    let verdict: String = conn
        .query_row("PRAGMA quick_check", [], |r| r.get(0))
        .map_err(|e| error(store, &e))?;
    if verdict != "ok" {
        return Err(StoreError::new(
            store,
            ErrorKind::Corrupt,
            format!("its file fails SQLite's check: {verdict}"),
        ));
    }
    Ok(())
}

fn migrate_in(
    conn: &Connection,
    store: &str,
    prefix: &str,
    schema: &Schema,
    apply: Apply,
) -> Result<Migrated, StoreError> {
    conn.execute_batch("BEGIN EXCLUSIVE")
        .map_err(|e| error(store, &e))?;
    let result = {
        let mut sql = Sql { conn, store };
        let mut cx = Cx {
            conn: &mut sql,
            dialect: Dialect::Sqlite,
            store,
            prefix,
            schema,
            now: now(),
        };
        migrate::run(&mut cx, apply)
    };
    let end = match result.is_ok() && apply.commits() {
        true => "COMMIT",
        false => "ROLLBACK",
    };
    conn.execute_batch(end).map_err(|e| error(store, &e))?;
    result
}

/// Runs one job's operation in a savepoint: rolled back alone when it
/// fails, so the batch goes on.
fn savepoint<T, E: From<StoreError>>(
    conn: &Connection,
    store: &str,
    prefix: &str,
    schema: &Schema,
    op: impl FnOnce(&mut Cx<'_>) -> Result<T, E>,
) -> Result<T, E> {
    conn.execute_batch("SAVEPOINT job")
        .map_err(|e| E::from(error(store, &e)))?;
    let result = {
        let mut sql = Sql { conn, store };
        let mut cx = Cx {
            conn: &mut sql,
            dialect: Dialect::Sqlite,
            store,
            prefix,
            schema,
            now: now(),
        };
        op(&mut cx)
    };
    if result.is_err() && conn.is_autocommit() {
        // SQLite rolled the whole transaction back (a full disk): there is
        // no savepoint left to roll back to; the error says why.
        return result;
    }
    let end = match result {
        Ok(_) => "RELEASE job",
        Err(_) => "ROLLBACK TO job; RELEASE job",
    };
    if let Err(e) = conn.execute_batch(end) {
        return Err(E::from(error(store, &e)));
    }
    result
}

fn write_loop(conn: &Connection, store: &str, jobs: &Receiver<Job>, transactions: &AtomicU64) {
    while let Ok(first) = jobs.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        if let Err(e) = conn.execute_batch("BEGIN IMMEDIATE") {
            let e = error(store, &e);
            for job in batch {
                // Each job learns the store could not begin.
                let finish = job(conn, &mut Some(e.clone()));
                finish(Some(&e));
            }
            continue;
        }
        let mut lost = None;
        let finishes: Vec<Finish> = batch.into_iter().map(|job| job(conn, &mut lost)).collect();
        // A transaction SQLite rolled back took every write of the batch:
        // each sender learns its write did not happen.
        let failed = match lost {
            Some(e) => Some(e),
            None => conn.execute_batch("COMMIT").err().map(|e| {
                let _ = conn.execute_batch("ROLLBACK");
                error(store, &e)
            }),
        };
        transactions.fetch_add(1, Ordering::Relaxed);
        for finish in finishes {
            finish(failed.as_ref());
        }
    }
}

impl Records for SqliteStore {
    fn record(&self, delivery: &str) -> Result<Option<StoredRecord>, StoreError> {
        self.read(|cx| ops::record(cx, delivery))
    }

    fn put_step(
        &self,
        delivery: &str,
        lease: &Lease,
        record: &StoredRecord,
        step: &StepRow,
    ) -> Result<(), Fenced> {
        let (delivery, lease, record, step) =
            (delivery.to_string(), *lease, record.clone(), step.clone());
        self.write(move |cx| ops::put_step(cx, &delivery, &lease, &record, &step))
    }

    fn truncate_steps(&self, delivery: &str, lease: &Lease, position: u32) -> Result<(), Fenced> {
        let (delivery, lease) = (delivery.to_string(), *lease);
        self.write(move |cx| ops::truncate_steps(cx, &delivery, &lease, position))
    }
}

impl Rows for SqliteStore {
    fn select(&self, entity: EntityId, filter: &[(Name, Value)]) -> Result<Vec<Row>, StoreError> {
        self.read(|cx| ops::select(cx, entity, filter))
    }
}

impl Commits for SqliteStore {
    fn commit(&self, commit: &Commit, lease: &Lease) -> Result<(), CommitError> {
        let (commit, lease) = (commit.clone(), *lease);
        self.write(move |cx| ops::commit(cx, &commit, &lease))
    }
}

impl Queue for SqliteStore {
    fn enqueue(&self, deliveries: &[NewDelivery], now: Instant) -> Result<(), StoreError> {
        let deliveries = deliveries.to_vec();
        self.write(move |cx| {
            cx.now = now;
            ops::enqueue(cx, &deliveries)
        })
    }

    fn claim(&self, request: &ClaimRequest) -> Result<Vec<Claimed>, StoreError> {
        let request = request.clone();
        self.write(move |cx| {
            cx.now = request.now;
            ops::claim(cx, &request)
        })
    }

    fn take(
        &self,
        delivery: &str,
        lease_ms: u64,
        now: Instant,
    ) -> Result<Option<Lease>, StoreError> {
        let delivery = delivery.to_string();
        self.write(move |cx| {
            cx.now = now;
            ops::take(cx, &delivery, lease_ms)
        })
    }

    fn heartbeat(
        &self,
        delivery: &str,
        lease: &Lease,
        lease_ms: u64,
        now: Instant,
    ) -> Result<Lease, Fenced> {
        let (delivery, lease) = (delivery.to_string(), *lease);
        self.write(move |cx| {
            cx.now = now;
            ops::heartbeat(cx, &delivery, &lease, lease_ms)
        })
    }

    fn release(
        &self,
        delivery: &str,
        lease: &Lease,
        next: &Next,
        now: Instant,
    ) -> Result<(), Fenced> {
        let (delivery, lease, next) = (delivery.to_string(), *lease, next.clone());
        self.write(move |cx| {
            cx.now = now;
            ops::release(cx, &delivery, &lease, &next)
        })
    }

    fn tick(
        &self,
        schedule: &str,
        every_ms: u64,
        delivery: &NewDelivery,
        now: Instant,
    ) -> Result<bool, StoreError> {
        let (schedule, delivery) = (schedule.to_string(), delivery.clone());
        self.write(move |cx| {
            cx.now = now;
            ops::tick(cx, &schedule, every_ms, &delivery)
        })
    }

    fn delivery(&self, id: &str) -> Result<Option<DeliveryRow>, StoreError> {
        self.read(|cx| ops::delivery(cx, id))
    }

    fn adopt(
        &self,
        row: &DeliveryRow,
        lease: &Lease,
    ) -> Result<jadpo_runtime::store::Adopted, StoreError> {
        let (row, lease) = (row.clone(), *lease);
        self.write(move |cx| ops::adopt(cx, &row, &lease))
    }

    fn handled(&self, id: &str) -> Result<bool, StoreError> {
        self.read(|cx| ops::handled(cx, id))
    }

    fn events(&self, limit: usize) -> Result<Vec<Outboxed>, StoreError> {
        self.read(|cx| ops::events(cx, limit))
    }
}

impl RouteKeys for SqliteStore {
    fn claim_key(&self, request: &KeyRequest) -> Result<KeyClaim, StoreError> {
        // A replay or a reuse is read, not queued behind the writer's
        // batch: the stored answer of a key never changes.
        if let Some(settled) = self.read(|cx| ops::settled_key(cx, request))? {
            return Ok(settled);
        }
        let request = request.clone();
        self.write(move |cx| {
            cx.now = request.now;
            ops::claim_key(cx, &request)
        })
    }

    fn release_key(
        &self,
        route: &str,
        principal: &str,
        key: &str,
        lease: &Lease,
    ) -> Result<(), Fenced> {
        let (route, principal, key, lease) = (
            route.to_string(),
            principal.to_string(),
            key.to_string(),
            *lease,
        );
        self.write(move |cx| ops::release_key(cx, &route, &principal, &key, &lease))
    }
}

impl Items for SqliteStore {
    fn items(&self, open_only: bool) -> Result<Vec<Item>, StoreError> {
        self.read(|cx| ops::items(cx, open_only))
    }

    fn close_item(
        &self,
        delivery: &str,
        closed_by: &str,
        now: Instant,
    ) -> Result<bool, StoreError> {
        let (delivery, closed_by) = (delivery.to_string(), closed_by.to_string());
        self.write(move |cx| {
            cx.now = now;
            ops::close_item(cx, &delivery, &closed_by)
        })
    }
}

impl Operate for SqliteStore {
    fn list(&self, filter: &ListFilter) -> Result<Vec<DeliveryRow>, StoreError> {
        self.read(|cx| ops::list(cx, filter))
    }

    fn ids_starting(&self, prefix: &str, max: usize) -> Result<Vec<String>, StoreError> {
        self.read(|cx| ops::ids_starting(cx, prefix, max))
    }

    fn retry(
        &self,
        id: &str,
        not_done: bool,
        by: &str,
        now: Instant,
    ) -> Result<Operated, StoreError> {
        let (id, by) = (id.to_string(), by.to_string());
        self.write(move |cx| {
            cx.now = now;
            ops::retry(cx, &id, not_done, &by)
        })
    }

    fn abandon(
        &self,
        id: &str,
        reason: &str,
        by: &str,
        response: Option<&StoredResponse>,
        now: Instant,
    ) -> Result<Operated, StoreError> {
        let (id, reason, by, response) = (
            id.to_string(),
            reason.to_string(),
            by.to_string(),
            response.cloned(),
        );
        self.write(move |cx| {
            cx.now = now;
            ops::abandon(cx, &id, &reason, &by, response.as_ref())
        })
    }

    fn unfinished(&self) -> Result<Vec<(String, StoredRecord)>, StoreError> {
        self.read(ops::unfinished)
    }

    fn prune(&self, now: Instant, keep: Retention, max: usize) -> Result<Pruned, StoreError> {
        self.write(move |cx| {
            cx.now = now;
            ops::prune(cx, keep, max)
        })
    }

    fn forget(&self, id: &str) -> Result<Operated, StoreError> {
        let id = id.to_string();
        self.write(move |cx| ops::forget(cx, &id))
    }
}

impl Store for SqliteStore {
    fn name(&self) -> &str {
        &self.name
    }
}

#[cfg(test)]
mod tests {
    use jadpo_compiler::ir::Program;
    use jadpo_runtime::store::schema::Schema;
    use jadpo_runtime::store::ClaimRequest;

    use super::{Options, SqliteStore};
    use crate::store::sql::ops::{claim_query, AGED, CLAIMABLE};
    use crate::store::sql::{Cx, P};

    /// SQLite's plan of `sql`, one line a step.
    fn plan(cx: &mut Cx<'_>, sql: &str, params: &[P]) -> Vec<String> {
        cx.rows(&format!("EXPLAIN QUERY PLAN {sql}"), params)
            .expect("a query plan")
            .into_iter()
            .filter_map(|row| row.get(3).and_then(|p| p.as_text()).map(str::to_string))
            .collect()
    }

    /// Whether a plan reads an index and never a whole table.
    fn indexed(lines: &[String]) -> bool {
        lines.iter().any(|l| l.contains("INDEX"))
            && !lines
                .iter()
                .any(|l| l.starts_with("SCAN") && !l.contains("INDEX"))
    }

    fn scratch_store(name: &str) -> (SqliteStore, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!("jadpo-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        let schema = Schema::of(&Program::default(), "primary", "shop");
        let store = SqliteStore::open(&dir.join("s.sqlite"), schema, Options::default())
            .expect("a scratch store");
        (store, dir)
    }

    /// Each part of a claim reads one of the partial indexes: a claim that
    /// scanned every delivery the store keeps made each commit with events
    /// wait for a scan of every finished route run (10 ms at 23,000).
    #[test]
    fn a_claim_reads_the_partial_indexes() {
        let (store, dir) = scratch_store("claim-plan");
        let request = ClaimRequest {
            queues: Vec::new(),
            max: 8,
            lease_ms: 30_000,
            runner: "r".into(),
            now: super::now(),
        };
        for due in CLAIMABLE {
            let lines = store
                .read(|cx| {
                    let (sql, params) = claim_query(cx, &request, due);
                    Ok(plan(cx, &sql, &params))
                })
                .expect("a read");
            assert!(indexed(&lines), "{due}: {lines:?}");
        }
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Retention's reads by age each read an index: once a minute they run
    /// in the writer, which a scan of a day's deliveries would hold.
    #[test]
    fn retention_reads_by_age_on_indexes() {
        let (store, dir) = scratch_store("aged-plan");
        for aged in AGED {
            let lines = store
                .read(|cx| {
                    let sql = aged.sql(cx);
                    Ok(plan(cx, &sql, &[P::text("2026-01-01"), P::Int(10)]))
                })
                .expect("a read");
            assert!(indexed(&lines), "{aged:?}: {lines:?}");
        }
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
