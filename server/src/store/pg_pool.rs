//! The Postgres store's connections: at most [`MAX`], each with a
//! single-threaded runtime of its own that the borrowing thread drives
//! while it waits for an answer (as the `postgres` crate does). A round
//! trip then costs the socket alone: with one shared driver thread, each
//! one also handed the request to that thread and the answer back, two
//! thread wake-ups that cost more than the round trip on a busy machine.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use tokio_postgres::{Client, Config, NoTls, Statement};

/// Connections open at most.
const MAX: usize = 16;

/// How long a connection is idle before its socket is looked at when it
/// is lent again (see [`Connection::alive`]).
const LOOK_AFTER: Duration = Duration::from_millis(50);

/// How long a borrower waits for a connection before the store is named
/// unreachable.
const WAIT: Duration = Duration::from_secs(30);

/// One connection, its runtime and its prepared statements.
pub(super) struct Connection {
    rt: tokio::runtime::Runtime,
    pub client: Client,
    statements: HashMap<String, Statement>,
    /// When it was last handed back.
    returned: std::time::Instant,
}

impl Connection {
    fn connect(config: &Config, setup: &str) -> Result<Connection, String> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("no runtime for a connection: {e}"))?;
        let (client, connection) = rt
            .block_on(config.connect(NoTls))
            .map_err(|e| format!("no connection: {}", with_causes(&e)))?;
        // Driven whenever a borrower waits on this runtime.
        rt.spawn(async move {
            let _ = connection.await;
        });
        rt.block_on(client.batch_execute(setup))
            .map_err(|e| format!("no connection: {}", with_causes(&e)))?;
        Ok(Connection {
            rt,
            client,
            statements: HashMap::new(),
            returned: std::time::Instant::now(),
        })
    }

    /// Runs `f` to its end on this thread, driving the connection.
    pub fn block_on<F: Future>(&self, f: F) -> F::Output {
        self.rt.block_on(f)
    }

    /// Whether the server still holds this connection, as far as its
    /// socket already tells: the connection reads what has arrived (a
    /// server that ended it, or restarted, has said so) before it is lent
    /// again. It costs a look at the socket, no round trip.
    fn alive(&self) -> bool {
        // One lent again at once (a busy store) is not looked at: the look
        // costs a system call on every loan.
        if self.returned.elapsed() >= LOOK_AFTER {
            // `yield_now` wakes this task only once the runtime has polled
            // its sockets; the second lets the connection's task, woken by
            // them, read what arrived before this task goes on.
            self.rt.block_on(async {
                tokio::task::yield_now().await;
                tokio::task::yield_now().await;
            });
        }
        !self.client.is_closed()
    }

    /// `sql` prepared once per connection.
    pub fn prepare(&mut self, sql: &str) -> Result<Statement, tokio_postgres::Error> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let s = self.rt.block_on(self.client.prepare(sql))?;
        self.statements.insert(sql.to_string(), s.clone());
        Ok(s)
    }
}

/// An error with its causes ("error connecting to server: No such file
/// or directory"): the driver's own words alone do not say why.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let said = c.to_string();
        if !out.contains(&said) {
            out.push_str(": ");
            out.push_str(&said);
        }
        cause = c.source();
    }
    out
}

pub(super) struct Pool {
    config: Config,
    /// Connections open at most, and how long a borrower waits for one.
    max: usize,
    wait: Duration,
    /// Run on each new connection (the schema's search path).
    setup: String,
    state: Mutex<State>,
    freed: Condvar,
}

#[derive(Default)]
struct State {
    idle: Vec<Connection>,
    open: usize,
}

impl Pool {
    pub fn new(config: Config, setup: String) -> Pool {
        Pool::with_limits(config, setup, MAX, WAIT)
    }

    fn with_limits(config: Config, setup: String, max: usize, wait: Duration) -> Pool {
        Pool {
            config,
            max,
            wait,
            setup,
            state: Mutex::new(State::default()),
            freed: Condvar::new(),
        }
    }

    /// An idle connection, a new one while fewer than its most are open,
    /// or the next one handed back.
    pub fn get(&self) -> Result<Lent<'_>, String> {
        let deadline = std::time::Instant::now() + self.wait;
        let mut state = self.state.lock().map_err(|_| "a poisoned pool")?;
        loop {
            if let Some(c) = state.idle.pop() {
                drop(state);
                if c.alive() {
                    return Ok(self.lent(c));
                }
                drop(c);
                state = self.state.lock().map_err(|_| "a poisoned pool")?;
                state.open -= 1;
                continue;
            }
            if state.open < self.max {
                state.open += 1;
                drop(state);
                return match Connection::connect(&self.config, &self.setup) {
                    Ok(c) => Ok(self.lent(c)),
                    Err(e) => {
                        self.forget();
                        Err(e)
                    }
                };
            }
            // One deadline for the whole wait: a borrower that others keep
            // beating to the freed connections still gives up in time.
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return Err(format!(
                    "no connection within {} s: all {} are busy",
                    self.wait.as_secs(),
                    self.max
                ));
            }
            let (next, _) = self
                .freed
                .wait_timeout(state, left)
                .map_err(|_| "a poisoned pool")?;
            state = next;
        }
    }

    fn lent(&self, conn: Connection) -> Lent<'_> {
        Lent {
            pool: self,
            conn: Some(conn),
            clean: true,
        }
    }

    /// One connection fewer is open (closed, or never opened).
    fn forget(&self) {
        if let Ok(mut state) = self.state.lock() {
            state.open = state.open.saturating_sub(1);
        }
        self.freed.notify_one();
    }
}

/// A borrowed connection. Handed back when dropped, unless it was left
/// inside a transaction (a panic in an operation): then it closes, so no
/// one else gets a transaction left open.
pub(super) struct Lent<'p> {
    pool: &'p Pool,
    conn: Option<Connection>,
    clean: bool,
}

impl Lent<'_> {
    /// The connection, for the life of the loan (`None` only once
    /// dropped).
    pub fn conn(&mut self) -> Option<&mut Connection> {
        self.conn.as_mut()
    }

    /// Marks the connection inside a transaction (`false`) or out of one.
    pub fn set_clean(&mut self, clean: bool) {
        self.clean = clean;
    }
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        let Some(mut conn) = self.conn.take() else {
            return;
        };
        if !self.clean || conn.client.is_closed() {
            drop(conn);
            self.pool.forget();
            return;
        }
        conn.returned = std::time::Instant::now();
        if let Ok(mut state) = self.pool.state.lock() {
            state.idle.push(conn);
        }
        self.pool.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::Pool;

    /// The server process behind `c`.
    fn pid(c: &super::Connection) -> i32 {
        c.block_on(c.client.query_one("SELECT pg_backend_pid()", &[]))
            .expect("a pid")
            .get::<_, i32>(0)
    }

    /// The server process of the connection the pool lends, left inside a
    /// transaction when `inside`.
    fn backend(pool: &Pool, inside: bool) -> i32 {
        let mut lent = pool.get().expect("a connection");
        let c = lent.conn().expect("lent");
        let pid = pid(c);
        if inside {
            c.block_on(c.client.batch_execute("BEGIN"))
                .expect("a transaction");
            lent.set_clean(false);
        }
        pid
    }

    /// A borrower waits for a connection at most the pool's wait, then is
    /// told why; one handed back is lent again.
    #[test]
    fn a_borrower_of_a_busy_pool_gives_up_in_time() {
        let Some(config) = config() else { return };
        let pool = std::sync::Arc::new(Pool::with_limits(
            config,
            "SELECT 1".into(),
            1,
            std::time::Duration::from_millis(300),
        ));
        let held = pool.get().expect("the one connection");
        let (send, receive) = std::sync::mpsc::channel();
        let other = pool.clone();
        std::thread::spawn(move || {
            let _ = send.send(other.get().err());
        });
        let refused = receive
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the borrower still waits after 10 s");
        assert!(
            refused.is_some_and(|why| why.contains("all 1 are busy")),
            "a second connection was lent"
        );
        drop(held);
        assert!(
            pool.get().is_ok(),
            "the connection handed back was not lent"
        );
    }

    /// A connection the server ended while it was idle is not lent: the
    /// next loan is a new connection, and it answers.
    #[test]
    fn a_connection_the_server_ended_is_not_lent_again() {
        let Some(config) = config() else { return };
        let pool = Pool::new(config.clone(), "SELECT 1".into());
        let ended = backend(&pool, false);
        let other = Pool::new(config, "SELECT 1".into());
        let mut lent = other.get().expect("a connection");
        let c = lent.conn().expect("lent");
        c.block_on(
            c.client
                .query_one("SELECT pg_terminate_backend($1)", &[&ended]),
        )
        .expect("the backend ended");
        std::thread::sleep(std::time::Duration::from_millis(200));
        let mut lent = pool.get().expect("a connection");
        let c = lent.conn().expect("lent");
        let answer = c.block_on(c.client.query_one("SELECT pg_backend_pid()", &[]));
        let pid = answer.map(|row| row.get::<_, i32>(0));
        assert!(
            pid.as_ref().is_ok_and(|pid| *pid != ended),
            "the ended connection was lent: {pid:?}"
        );
    }

    /// The test server's connection settings, when there is one.
    fn config() -> Option<tokio_postgres::Config> {
        let Ok(url) = std::env::var("JADPO_TEST_PG") else {
            eprintln!("skipped: no Postgres (run through scripts/with-postgres.sh to test it)");
            return None;
        };
        if !url.starts_with("postgres") {
            return None;
        }
        Some(tokio_postgres::Config::from_str(&url).expect("a URL"))
    }

    /// A connection handed back outside a transaction is lent again; one
    /// left inside a transaction (an operation that panicked) is closed,
    /// and the next loan is a new connection outside any transaction.
    #[test]
    fn a_connection_left_in_a_transaction_is_not_lent_again() {
        let Some(config) = config() else { return };
        let pool = Pool::new(config, "SELECT 1".into());
        let first = backend(&pool, false);
        assert_eq!(
            backend(&pool, false),
            first,
            "a clean connection is lent again"
        );
        let left = backend(&pool, true);
        assert_eq!(left, first);
        let mut lent = pool.get().expect("a connection");
        let c = lent.conn().expect("lent");
        assert_ne!(pid(c), left, "the connection left open was lent");
        // A savepoint outside a transaction block is refused.
        assert!(
            c.block_on(c.client.batch_execute("SAVEPOINT s")).is_err(),
            "the loan starts inside a transaction"
        );
    }
}
