//! The shared store (design `server.md` sections 14 and 17): Postgres
//! through tokio-postgres with a pool of its own (`pg_pool.rs`), for apps
//! whose work is shared by several processes. One schema per app, `jadpo_<app>`, every
//! table prefixed by its store's name. Each operation is one transaction
//! on a pooled connection; claims take rows `FOR UPDATE SKIP LOCKED`,
//! unique keys are claimed under transaction-scoped advisory locks in key
//! order, and leases and times come from the database's clock. The trait
//! methods are synchronous (the interpreter's side runs on blocking
//! threads); each pooled connection has a single-threaded runtime that
//! its borrower drives, and a small shared runtime serves the LISTEN and
//! schedule-leader connections.

use std::str::FromStr;
use std::sync::Arc;

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
use tokio_postgres::types::{IsNull, ToSql, Type};
use tokio_postgres::{NoTls, Statement};

use super::pg_pool::{Connection, Pool};
use super::sql::migrate::{self, Apply, Migrated};
use super::sql::{ops, quoted, Conn, Cx, Dialect, P};

pub struct PostgresStore {
    name: String,
    prefix: String,
    schema: Arc<Schema>,
    rt: tokio::runtime::Runtime,
    pool: Pool,
    /// What connects, for the LISTEN connection of its own.
    config: tokio_postgres::Config,
    /// The connection that holds the schedules' leader lock, once this
    /// process holds it, or tries for it (see [`Queue::lead_schedules`]).
    leader: std::sync::Mutex<Leader>,
    /// What opening it set up.
    pub migrated: Migrated,
}

fn error(store: &str, e: &tokio_postgres::Error) -> StoreError {
    use tokio_postgres::error::SqlState as S;
    let kind = match e.code() {
        Some(c) if *c == S::DISK_FULL || *c == S::OUT_OF_MEMORY => ErrorKind::Full,
        Some(c) if *c == S::READ_ONLY_SQL_TRANSACTION => ErrorKind::ReadOnly,
        Some(c) if *c == S::DATA_CORRUPTED || *c == S::INDEX_CORRUPTED => ErrorKind::Corrupt,
        Some(c)
            if *c == S::T_R_SERIALIZATION_FAILURE
                || *c == S::T_R_DEADLOCK_DETECTED
                || *c == S::LOCK_NOT_AVAILABLE =>
        {
            ErrorKind::Busy
        }
        Some(c) if c.code().starts_with("08") || c.code().starts_with("57P") => {
            ErrorKind::Unreachable
        }
        Some(_) => ErrorKind::Failed,
        None if e.is_closed() => ErrorKind::Unreachable,
        None => ErrorKind::Unreachable,
    };
    let detail = match e.as_db_error() {
        Some(db) => format!("{}: {}", db.code().code(), db.message()),
        None => e.to_string(),
    };
    StoreError::new(store, kind, detail)
}

/// A parameter bound as the type the statement gives it.
impl ToSql for P {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut tokio_postgres::types::private::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            P::Null => Ok(IsNull::Yes),
            P::Int(i) => match *ty {
                Type::INT2 => i16::try_from(*i)?.to_sql(ty, out),
                Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
                Type::TEXT | Type::VARCHAR => i.to_string().to_sql(ty, out),
                _ => i.to_sql(ty, out),
            },
            P::Text(s) => s.as_str().to_sql(ty, out),
            P::Bytes(b) => match *ty {
                Type::TEXT | Type::VARCHAR => String::from_utf8_lossy(b).as_ref().to_sql(ty, out),
                _ => b.as_slice().to_sql(ty, out),
            },
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    tokio_postgres::types::to_sql_checked!();
}

fn column(row: &tokio_postgres::Row, i: usize) -> Result<P, tokio_postgres::Error> {
    let ty = row.columns().get(i).map(|c| c.type_().clone());
    Ok(match ty {
        Some(Type::INT8) => row.try_get::<_, Option<i64>>(i)?.map_or(P::Null, P::Int),
        Some(Type::INT4) => row
            .try_get::<_, Option<i32>>(i)?
            .map_or(P::Null, |v| P::Int(i64::from(v))),
        Some(Type::INT2) => row
            .try_get::<_, Option<i16>>(i)?
            .map_or(P::Null, |v| P::Int(i64::from(v))),
        Some(Type::BOOL) => row
            .try_get::<_, Option<bool>>(i)?
            .map_or(P::Null, |b| P::Int(i64::from(b))),
        Some(Type::BYTEA) => row
            .try_get::<_, Option<Vec<u8>>>(i)?
            .map_or(P::Null, P::Bytes),
        Some(Type::VOID) | None => P::Null,
        Some(_) => row
            .try_get::<_, Option<String>>(i)?
            .map_or(P::Null, P::Text),
    })
}

/// A pooled connection as the shared operations see it, inside a
/// transaction or for one read that needs none.
struct Sql<'c> {
    conn: &'c mut Connection,
    store: &'c str,
    /// The transaction's `BEGIN` is still to be sent: with the first
    /// statements (a pipelined transaction, [`PostgresStore::tx_pipelined`]).
    begin: bool,
    /// Its `COMMIT` was sent ([`Conn::rows_all_last`]): it has ended.
    ended: bool,
}

fn refs(params: &[P]) -> Vec<&(dyn ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
}

impl Sql<'_> {
    /// Every statement of `statements`, prepared (once per connection).
    fn prepare_all(
        &mut self,
        statements: &[(String, Vec<P>)],
    ) -> Result<Vec<Statement>, StoreError> {
        statements
            .iter()
            .map(|(sql, _)| self.conn.prepare(sql).map_err(|e| error(self.store, &e)))
            .collect()
    }

    /// Sends the transaction's `BEGIN` on its own, when a single statement
    /// goes first.
    fn begun(&mut self) -> Result<(), StoreError> {
        if !std::mem::take(&mut self.begin) {
            return Ok(());
        }
        let c = &*self.conn;
        c.block_on(c.client.batch_execute("BEGIN"))
            .map_err(|e| error(self.store, &e))
    }

    /// Runs `statements` pipelined, after `BEGIN` when it is still to be
    /// sent and before `COMMIT` when `last`: every request is sent before
    /// the first answer is awaited, in order, on the one connection.
    fn pipelined(
        &mut self,
        statements: &[(String, Vec<P>)],
        last: bool,
    ) -> Result<Vec<Vec<tokio_postgres::Row>>, StoreError> {
        let prepared = self.prepare_all(statements)?;
        let begin = std::mem::take(&mut self.begin);
        let c = &*self.conn;
        let runs = prepared
            .iter()
            .zip(statements)
            .map(|(stmt, (_, params))| async move { c.client.query(stmt, &refs(params)).await });
        let answers = c.block_on(async {
            let begun = async {
                match begin {
                    true => c.client.batch_execute("BEGIN").await,
                    false => Ok(()),
                }
            };
            // A statement that fails aborts the transaction: the `COMMIT`
            // sent after it rolls it back.
            let ended = async {
                match last {
                    true => c.client.batch_execute("COMMIT").await,
                    false => Ok(()),
                }
            };
            tokio::try_join!(begun, futures_util::future::try_join_all(runs), ended)
        });
        self.ended |= last;
        answers
            .map(|(_, rows, _)| rows)
            .map_err(|e| error(self.store, &e))
    }

    /// A row's columns as [`P`]s.
    fn values(&self, rows: &[tokio_postgres::Row]) -> Result<Vec<Vec<P>>, StoreError> {
        rows.iter()
            .map(|row| {
                (0..row.len())
                    .map(|i| column(row, i))
                    .collect::<Result<Vec<P>, _>>()
                    .map_err(|e| error(self.store, &e))
            })
            .collect()
    }
}

impl Conn for Sql<'_> {
    fn exec(&mut self, sql: &str, params: &[P]) -> Result<u64, StoreError> {
        self.begun()?;
        let stmt = self.conn.prepare(sql).map_err(|e| error(self.store, &e))?;
        let c = &*self.conn;
        c.block_on(c.client.execute(&stmt, &refs(params)))
            .map_err(|e| error(self.store, &e))
    }

    fn rows(&mut self, sql: &str, params: &[P]) -> Result<Vec<Vec<P>>, StoreError> {
        self.begun()?;
        let stmt = self.conn.prepare(sql).map_err(|e| error(self.store, &e))?;
        let c = &*self.conn;
        let rows = c
            .block_on(c.client.query(&stmt, &refs(params)))
            .map_err(|e| error(self.store, &e))?;
        self.values(&rows)
    }

    fn exec_all(&mut self, statements: &[(String, Vec<P>)]) -> Result<Vec<u64>, StoreError> {
        self.begun()?;
        let prepared = self.prepare_all(statements)?;
        let c = &*self.conn;
        // Every execute is sent before the first answer is awaited: the
        // client pipelines them, in order, on its connection.
        let runs = prepared
            .iter()
            .zip(statements)
            .map(|(stmt, (_, params))| async move { c.client.execute(stmt, &refs(params)).await });
        c.block_on(futures_util::future::try_join_all(runs))
            .map_err(|e| error(self.store, &e))
    }

    fn rows_all(
        &mut self,
        statements: &[(String, Vec<P>)],
    ) -> Result<Vec<Vec<Vec<P>>>, StoreError> {
        let answers = self.pipelined(statements, false)?;
        answers.iter().map(|rows| self.values(rows)).collect()
    }

    fn rows_all_last(
        &mut self,
        statements: &[(String, Vec<P>)],
    ) -> Result<Vec<Vec<Vec<P>>>, StoreError> {
        let answers = self.pipelined(statements, true)?;
        answers.iter().map(|rows| self.values(rows)).collect()
    }

    fn unique_violation(&self, e: &StoreError) -> bool {
        e.detail.starts_with("23505")
    }
}

/// The schedules' leader: its lock's connection, and whether it holds the
/// lock.
#[derive(Default)]
struct Leader {
    client: Option<tokio_postgres::Client>,
    leads: bool,
}

/// What a store's connections are called in `pg_stat_activity`:
/// `jadpo <app> <store>`, cut to Postgres's 63 bytes.
pub fn application_name(app: &str, store: &str) -> String {
    let mut name = format!("jadpo {app} {store}");
    let mut end = name.len().min(63);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    name.truncate(end);
    name
}

/// The advisory lock key of the schedules of `app`'s store `store`.
fn leader_key(app: &str, store: &str) -> i64 {
    let hash = blake3::hash(format!("jadpo schedules {app} {store}").as_bytes());
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&hash.as_bytes()[..8]);
    i64::from_le_bytes(bytes)
}

/// How a store's setup ended: `Inspected` rolls its transaction back.
enum Setup {
    Failed(StoreError),
    Inspected(Box<Migrated>),
}

impl From<StoreError> for Setup {
    fn from(e: StoreError) -> Setup {
        Setup::Failed(e)
    }
}

/// The database's clock, in the runtime's [`Instant`].
const NOW: &str = "SELECT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000000)::bigint";

impl PostgresStore {
    /// Connects to `url` (`postgres://...`, or `postgresql:///db?host=/run/socket`
    /// for a Unix socket) and sets up store `schema.store` of app
    /// `schema.app` in the schema `jadpo_<app>`.
    pub fn open(url: &str, schema: Schema, apply: Apply) -> Result<PostgresStore, StoreError> {
        let name = schema.store.clone();
        let unreachable = |why: String| StoreError::new(&name, ErrorKind::Unreachable, why);
        let mut config = tokio_postgres::Config::from_str(url)
            .map_err(|e| unreachable(format!("its URL does not parse: {e}")))?;
        // A host that never answers is named within seconds, not hung on.
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(std::time::Duration::from_secs(5));
        }
        // `pg_stat_activity` names each connection's app and store, unless
        // the URL names it otherwise.
        if config.get_application_name().is_none() {
            config.application_name(application_name(&schema.app, &name));
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name(format!("jadpo-pg-{name}"))
            .enable_all()
            .build()
            .map_err(|e| unreachable(format!("no runtime for its driver: {e}")))?;
        let db_schema = format!("jadpo_{}", schema.app);
        let search = format!("SET search_path TO {}", quoted(&db_schema));
        let pool = Pool::new(config.clone(), search);
        let mut store = PostgresStore {
            prefix: format!("{name}__"),
            name,
            schema: Arc::new(schema),
            rt,
            pool,
            config,
            leader: std::sync::Mutex::new(Leader::default()),
            migrated: Migrated::default(),
        };
        store.migrated = store.setup(&db_schema, apply)?;
        Ok(store)
    }

    /// The schema, the runtime tables and the entities, under one advisory
    /// lock so two processes starting together set up once.
    fn setup(&self, db_schema: &str, apply: Apply) -> Result<Migrated, StoreError> {
        let create = format!("CREATE SCHEMA IF NOT EXISTS {}", quoted(db_schema));
        let setup = self.tx(move |cx| {
            cx.exec("SELECT pg_advisory_xact_lock(7326351204)", &[])?;
            cx.exec(&create, &[])?;
            let done = migrate::run(cx, apply)?;
            match apply.commits() {
                true => Ok(done),
                // An error ends the transaction with a rollback.
                false => Err(Setup::Inspected(Box::new(done))),
            }
        });
        match setup {
            Ok(done) => Ok(done),
            Err(Setup::Inspected(done)) => Ok(*done),
            Err(Setup::Failed(e)) => Err(e),
        }
    }

    /// Runs one statement outside a transaction (a read, or a write made
    /// as one statement): one round trip instead of four (begin, the
    /// clock, the statement, commit). `cx.now` is this process's clock, so
    /// `op` must not read it.
    fn read_once<T>(
        &self,
        op: impl FnOnce(&mut Cx<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut lent = self.lend()?;
        let conn = lent.conn().ok_or_else(|| self.no_connection("none lent"))?;
        self.run_on(conn, super::clock::now(), op)
    }

    /// Runs `op` on `conn` with the store's tables and the time `now`.
    fn run_on<T>(
        &self,
        conn: &mut Connection,
        now: Instant,
        op: impl FnOnce(&mut Cx<'_>) -> T,
    ) -> T {
        let mut sql = Sql {
            conn,
            store: &self.name,
            begin: false,
            ended: false,
        };
        let mut cx = Cx {
            conn: &mut sql,
            dialect: Dialect::Postgres,
            store: &self.name,
            prefix: &self.prefix,
            schema: &self.schema,
            now,
        };
        op(&mut cx)
    }

    fn no_connection(&self, why: &str) -> StoreError {
        StoreError::new(&self.name, ErrorKind::Unreachable, why.to_string())
    }

    fn lend(&self) -> Result<super::pg_pool::Lent<'_>, StoreError> {
        self.pool.get().map_err(|e| self.no_connection(&e))
    }

    /// Runs `op` in one transaction on a pooled connection, at the
    /// database's time; commits when it succeeds.
    fn tx<T, E: From<StoreError>>(
        &self,
        op: impl FnOnce(&mut Cx<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        let name = self.name.as_str();
        let mut lent = self.lend()?;
        // Until the transaction ends, a drop (a panic) closes the
        // connection instead of handing it back.
        lent.set_clean(false);
        let conn = lent
            .conn()
            .ok_or_else(|| E::from(self.no_connection("none lent")))?;
        // `BEGIN` and the clock in one round trip: the client pipelines
        // requests sent before their answers are awaited.
        let now = conn.prepare(NOW).map_err(|e| E::from(error(name, &e)))?;
        let (begun, micros) = {
            let c = &*conn;
            c.block_on(async {
                tokio::join!(c.client.batch_execute("BEGIN"), async {
                    c.client.query_one(&now, &[]).await?.try_get::<_, i64>(0)
                })
            })
        };
        let result = match (begun, micros) {
            (Err(e), _) => return Err(E::from(error(name, &e))),
            (Ok(()), Err(e)) => Err(E::from(error(name, &e))),
            (Ok(()), Ok(micros)) => self.run_on(conn, Instant(i128::from(micros) * 1000), op),
        };
        self.end(lent, result)
    }

    /// Ends the transaction open on `lent`: commits when `result` is a
    /// success, rolls back otherwise; the connection goes back to the pool
    /// only once that is done.
    fn end<T, E: From<StoreError>>(
        &self,
        mut lent: super::pg_pool::Lent<'_>,
        result: Result<T, E>,
    ) -> Result<T, E> {
        let Some(conn) = lent.conn() else {
            return Err(E::from(self.no_connection("none lent")));
        };
        let end = if result.is_ok() { "COMMIT" } else { "ROLLBACK" };
        let ended = conn.block_on(conn.client.batch_execute(end));
        if ended.is_ok() {
            lent.set_clean(true);
        }
        match (result, ended) {
            (Ok(v), Ok(())) => Ok(v),
            (Ok(_), Err(e)) => Err(E::from(error(&self.name, &e))),
            (Err(e), _) => Err(e),
        }
    }

    /// Runs `op` in one transaction whose `BEGIN` goes with its first
    /// statements and whose `COMMIT` goes with its last ones when `op`
    /// sends them through `Conn::rows_all_last`; otherwise as [`Self::tx`]
    /// ends one. `cx.now` is this process's clock: `op` reads the
    /// database's in its statements, where it needs one.
    fn tx_pipelined<T, E: From<StoreError>>(
        &self,
        op: impl FnOnce(&mut Cx<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        let name = self.name.as_str();
        let mut lent = self.lend()?;
        lent.set_clean(false);
        let conn = lent
            .conn()
            .ok_or_else(|| E::from(self.no_connection("none lent")))?;
        let mut sql = Sql {
            conn,
            store: name,
            begin: true,
            ended: false,
        };
        let result = op(&mut Cx {
            conn: &mut sql,
            dialect: Dialect::Postgres,
            store: name,
            prefix: &self.prefix,
            schema: &self.schema,
            now: super::clock::now(),
        });
        match (!sql.begin, sql.ended, result.is_ok()) {
            // Nothing was sent, or the transaction committed with its
            // last statements: the connection is as it was lent.
            (false, _, _) | (true, true, true) => {
                lent.set_clean(true);
                result
            }
            // Its last statements failed: whatever the connection's state,
            // it is not lent again.
            (true, true, false) => result,
            (true, false, _) => self.end(lent, result),
        }
    }

    /// Runs a fenced record write made as one statement (`ops::at_once`):
    /// one round trip, its own transaction; no row fenced is a lost lease.
    fn at_once(&self, build: impl FnOnce(&Cx<'_>) -> (String, Vec<P>)) -> Result<(), Fenced> {
        let fenced = self.read_once(|cx| {
            let (sql, params) = build(cx);
            let rows = cx.rows(&sql, &params)?;
            Ok(rows.first().and_then(|r| r.first()).and_then(P::as_int))
        })?;
        if fenced != Some(1) {
            return Err(Fenced::LeaseLost);
        }
        Ok(())
    }
}

impl Records for PostgresStore {
    fn record(&self, delivery: &str) -> Result<Option<StoredRecord>, StoreError> {
        // Two reads outside a transaction: only the lease's holder writes
        // a record (every other writer is fenced), so no write lands
        // between them while it reads its own.
        self.read_once(|cx| ops::record(cx, delivery))
    }

    fn put_step(
        &self,
        delivery: &str,
        lease: &Lease,
        record: &StoredRecord,
        step: &StepRow,
    ) -> Result<(), Fenced> {
        self.at_once(|cx| ops::put_step_at_once(cx, delivery, lease, record, step))
    }

    fn truncate_steps(&self, delivery: &str, lease: &Lease, position: u32) -> Result<(), Fenced> {
        self.at_once(|cx| ops::truncate_at_once(cx, delivery, lease, position))
    }
}

impl Rows for PostgresStore {
    fn select(&self, entity: EntityId, filter: &[(Name, Value)]) -> Result<Vec<Row>, StoreError> {
        self.read_once(|cx| ops::select(cx, entity, filter))
    }
}

impl Commits for PostgresStore {
    fn commit(&self, commit: &Commit, lease: &Lease) -> Result<(), CommitError> {
        let result = self.tx_pipelined(|cx| ops::commit(cx, commit, lease));
        match result {
            // Two deliveries creating one key at once: the loser's insert
            // waits and is refused as a duplicate, a conflict like any.
            Err(CommitError::Store(e)) if e.detail.starts_with("23505") => {
                Err(CommitError::Conflict)
            }
            other => other,
        }
    }
}

/// LISTENs on `channel` on a connection of its own and calls `wake` on
/// each notice, until the runtime stops; a lost connection is opened again
/// after a second (dispatchers still poll every second meanwhile).
async fn listen_loop(
    config: tokio_postgres::Config,
    channel: String,
    wake: Arc<dyn Fn() + Send + Sync>,
) {
    use futures_util::StreamExt;
    loop {
        if let Ok((client, mut connection)) = config.connect(NoTls).await {
            let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
            let statement = format!("LISTEN {}", quoted(&channel));
            let listen = client.batch_execute(&statement);
            // The connection must be polled for the LISTEN to complete.
            let mut listen = std::pin::pin!(listen);
            let mut listening = false;
            loop {
                tokio::select! {
                    done = &mut listen, if !listening => {
                        if done.is_err() {
                            break;
                        }
                        listening = true;
                    }
                    message = messages.next() => match message {
                        Some(Ok(tokio_postgres::AsyncMessage::Notification(_))) => wake(),
                        Some(Ok(_)) => {}
                        Some(Err(_)) | None => break,
                    },
                }
            }
        }
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    }
}

impl Queue for PostgresStore {
    fn listen(&self, wake: Arc<dyn Fn() + Send + Sync>) -> Result<(), StoreError> {
        let channel = ops::channel(&self.schema);
        self.rt
            .spawn(listen_loop(self.config.clone(), channel, wake));
        Ok(())
    }

    fn enqueue(&self, deliveries: &[NewDelivery], _now: Instant) -> Result<(), StoreError> {
        self.tx(|cx| ops::enqueue(cx, deliveries))
    }

    fn claim(&self, request: &ClaimRequest) -> Result<Vec<Claimed>, StoreError> {
        self.tx_pipelined(|cx| ops::claim(cx, request))
    }

    fn take(
        &self,
        delivery: &str,
        lease_ms: u64,
        _now: Instant,
    ) -> Result<Option<Lease>, StoreError> {
        self.tx(|cx| ops::take(cx, delivery, lease_ms))
    }

    fn heartbeat(
        &self,
        delivery: &str,
        lease: &Lease,
        lease_ms: u64,
        _now: Instant,
    ) -> Result<Lease, Fenced> {
        self.tx(|cx| ops::heartbeat(cx, delivery, lease, lease_ms))
    }

    fn release(
        &self,
        delivery: &str,
        lease: &Lease,
        next: &Next,
        _now: Instant,
    ) -> Result<(), Fenced> {
        self.tx(|cx| ops::release(cx, delivery, lease, next))
    }

    /// The leader holds a session advisory lock (`pg_try_advisory_lock`)
    /// on a connection of its own, keyed by the app and store: it leads
    /// while that connection lives. The others try again on their own
    /// connection each time they are asked (every second).
    fn lead_schedules(&self) -> bool {
        let Ok(mut leader) = self.leader.lock() else {
            return false;
        };
        if leader.leads && leader.client.as_ref().is_some_and(|c| !c.is_closed()) {
            return true;
        }
        leader.leads = false;
        let key = leader_key(&self.schema.app, &self.name);
        let config = self.config.clone();
        let held = leader.client.take().filter(|c| !c.is_closed());
        let tried = self.rt.block_on(async move {
            let client = match held {
                Some(client) => client,
                None => {
                    let (client, connection) = config.connect(NoTls).await.ok()?;
                    tokio::spawn(connection);
                    client
                }
            };
            let row = client
                .query_one("SELECT pg_try_advisory_lock($1)", &[&key])
                .await
                .ok()?;
            Some((row.get::<_, bool>(0), client))
        });
        match tried {
            Some((leads, client)) => {
                leader.leads = leads;
                leader.client = Some(client);
                leads
            }
            None => false,
        }
    }

    fn tick(
        &self,
        schedule: &str,
        every_ms: u64,
        delivery: &NewDelivery,
        _now: Instant,
    ) -> Result<bool, StoreError> {
        // Several processes tick at once: the row lock of the update, and
        // the delivery's key, let one of them insert.
        self.tx(|cx| ops::tick(cx, schedule, every_ms, delivery))
    }

    fn delivery(&self, id: &str) -> Result<Option<DeliveryRow>, StoreError> {
        self.tx(|cx| ops::delivery(cx, id))
    }

    fn adopt(
        &self,
        row: &DeliveryRow,
        lease: &Lease,
    ) -> Result<jadpo_runtime::store::Adopted, StoreError> {
        self.tx(|cx| ops::adopt(cx, row, lease))
    }

    fn handled(&self, id: &str) -> Result<bool, StoreError> {
        self.tx(|cx| ops::handled(cx, id))
    }

    fn events(&self, limit: usize) -> Result<Vec<Outboxed>, StoreError> {
        self.tx(|cx| ops::events(cx, limit))
    }
}

impl RouteKeys for PostgresStore {
    fn claim_key(&self, request: &KeyRequest) -> Result<KeyClaim, StoreError> {
        // A replay or a reuse needs no lock: the stored answer of a key
        // never changes.
        if let Some(settled) = self.read_once(|cx| ops::settled_key(cx, request))? {
            return Ok(settled);
        }
        self.tx_pipelined(|cx| ops::claim_key(cx, request))
    }

    fn release_key(
        &self,
        route: &str,
        principal: &str,
        key: &str,
        lease: &Lease,
    ) -> Result<(), Fenced> {
        self.tx(|cx| ops::release_key(cx, route, principal, key, lease))
    }
}

impl Items for PostgresStore {
    fn items(&self, open_only: bool) -> Result<Vec<Item>, StoreError> {
        self.tx(|cx| ops::items(cx, open_only))
    }

    fn close_item(
        &self,
        delivery: &str,
        closed_by: &str,
        _now: Instant,
    ) -> Result<bool, StoreError> {
        self.tx(|cx| ops::close_item(cx, delivery, closed_by))
    }
}

impl Operate for PostgresStore {
    fn list(&self, filter: &ListFilter) -> Result<Vec<DeliveryRow>, StoreError> {
        self.tx(|cx| ops::list(cx, filter))
    }

    fn ids_starting(&self, prefix: &str, max: usize) -> Result<Vec<String>, StoreError> {
        self.tx(|cx| ops::ids_starting(cx, prefix, max))
    }

    fn retry(
        &self,
        id: &str,
        not_done: bool,
        by: &str,
        _now: Instant,
    ) -> Result<Operated, StoreError> {
        self.tx(|cx| {
            // One retry at a time per delivery: two operators at once see
            // each other's.
            cx.rows(
                &format!(
                    "SELECT id FROM {} WHERE id = $1 FOR UPDATE",
                    cx.t("jadpo_delivery")
                ),
                &[P::text(id)],
            )?;
            ops::retry(cx, id, not_done, by)
        })
    }

    fn abandon(
        &self,
        id: &str,
        reason: &str,
        by: &str,
        response: Option<&StoredResponse>,
        _now: Instant,
    ) -> Result<Operated, StoreError> {
        self.tx(|cx| {
            cx.rows(
                &format!(
                    "SELECT id FROM {} WHERE id = $1 FOR UPDATE",
                    cx.t("jadpo_delivery")
                ),
                &[P::text(id)],
            )?;
            ops::abandon(cx, id, reason, by, response)
        })
    }

    fn unfinished(&self) -> Result<Vec<(String, StoredRecord)>, StoreError> {
        self.tx(ops::unfinished)
    }

    fn prune(&self, now: Instant, keep: Retention, max: usize) -> Result<Pruned, StoreError> {
        // The caller's clock, so retention can be tested across days.
        self.tx(|cx| {
            cx.now = now;
            ops::prune(cx, keep, max)
        })
    }

    fn forget(&self, id: &str) -> Result<Operated, StoreError> {
        self.tx(|cx| ops::forget(cx, id))
    }
}

impl Store for PostgresStore {
    fn name(&self) -> &str {
        &self.name
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use crate::store::sql::ops::{claim_query, CLAIMABLE};
    use jadpo_compiler::ir::Program;

    /// A claim's two reads bound their partial indexes by the database's
    /// clock, read once (a clock read per row would bound nothing and
    /// scan the index whole). Run through `scripts/with-postgres.sh`.
    #[test]
    fn claims_bound_their_indexes_by_the_clock() {
        let Some(url) = std::env::var("JADPO_TEST_PG")
            .ok()
            .filter(|u| u.starts_with("postgres"))
        else {
            eprintln!("skipped: no Postgres (run through scripts/with-postgres.sh to test it)");
            return;
        };
        let app = format!("plan{}", std::process::id());
        let schema = Schema::of(&Program::default(), "primary", &app);
        let store = PostgresStore::open(&url, schema, Apply::Auto).expect("a store");
        let request = ClaimRequest {
            queues: Vec::new(),
            max: 8,
            lease_ms: 30_000,
            runner: "r".into(),
            now: crate::store::clock::now(),
        };
        for (due, column) in CLAIMABLE.iter().zip(["run_at", "lease_until"]) {
            let plan: Vec<String> = store
                .tx(|cx| {
                    cx.exec("SET LOCAL enable_seqscan = off", &[])?;
                    let (sql, params) = claim_query(cx, &request, due);
                    cx.rows(&format!("EXPLAIN {sql}"), &params)
                })
                .expect("a plan")
                .into_iter()
                .filter_map(|row| row.first().and_then(|p| p.as_text()).map(str::to_string))
                .collect();
            let bound = format!("Index Cond: ({column} <= ");
            assert!(plan.iter().any(|l| l.contains(&bound)), "{due}: {plan:#?}");
        }
    }
}
