//! What the SQLite and Postgres stores share: one connection interface
//! ([`Conn`]), the two dialects' differences ([`Dialect`]), the tables
//! (design `server.md` section 14, [`ddl`]), the rules for entity changes
//! between builds ([`migrate`]), and every store operation written once
//! over them ([`ops`]). A store adds how it connects, how it batches its
//! writes, and its clock.

pub mod ddl;
pub mod migrate;
pub mod ops;
pub mod rows;

use jadpo_runtime::store::{ErrorKind, StoreError};

/// A parameter or a column's value. Runtime tables hold only these; entity
/// columns are converted by kind ([`rows::bind`], [`rows::read`]).
#[derive(Clone, Debug, PartialEq)]
pub enum P {
    Null,
    Int(i64),
    Text(String),
    Bytes(Vec<u8>),
}

impl P {
    pub fn text(s: impl Into<String>) -> P {
        P::Text(s.into())
    }

    pub fn opt_text(s: Option<impl Into<String>>) -> P {
        s.map_or(P::Null, |s| P::Text(s.into()))
    }

    pub fn as_text(&self) -> Option<&str> {
        match self {
            P::Text(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            P::Int(n) => Some(*n),
            P::Text(s) => s.parse().ok(),
            _ => None,
        }
    }

    pub fn into_bytes(self) -> Option<Vec<u8>> {
        match self {
            P::Bytes(b) => Some(b),
            P::Text(s) => Some(s.into_bytes()),
            _ => None,
        }
    }
}

/// A connection inside a transaction: the store opened it and will commit
/// or roll it back.
pub trait Conn {
    /// Runs a statement; how many rows it changed.
    fn exec(&mut self, sql: &str, params: &[P]) -> Result<u64, StoreError>;
    /// Runs a query; its rows, each column as a [`P`].
    fn rows(&mut self, sql: &str, params: &[P]) -> Result<Vec<Vec<P>>, StoreError>;
    /// Runs statements in order; how many rows each changed. A connection
    /// over the network sends them all before it reads an answer (one
    /// round trip); a caller that acts on a count (a fence) must be inside
    /// a transaction it rolls back, since every statement has run.
    fn exec_all(&mut self, statements: &[(String, Vec<P>)]) -> Result<Vec<u64>, StoreError> {
        statements
            .iter()
            .map(|(sql, params)| self.exec(sql, params))
            .collect()
    }
    /// Runs queries in order; each one's rows. Sent as [`Conn::exec_all`]
    /// sends them.
    fn rows_all(
        &mut self,
        statements: &[(String, Vec<P>)],
    ) -> Result<Vec<Vec<Vec<P>>>, StoreError> {
        statements
            .iter()
            .map(|(sql, params)| self.rows(sql, params))
            .collect()
    }
    /// Runs a transaction's last statements as [`Conn::rows_all`] does. A
    /// connection over the network that began the transaction itself
    /// (Postgres's pipelined commit) sends its `COMMIT` with them, in the
    /// same round trip, and the transaction has ended when this returns:
    /// committed when every statement succeeded, rolled back otherwise.
    /// A store that commits for its caller (SQLite's writer) only runs
    /// them.
    fn rows_all_last(
        &mut self,
        statements: &[(String, Vec<P>)],
    ) -> Result<Vec<Vec<Vec<P>>>, StoreError> {
        self.rows_all(statements)
    }
    /// Whether the last failure was a unique violation (a key taken).
    fn unique_violation(&self, e: &StoreError) -> bool {
        e.detail.contains("UNIQUE constraint") || e.detail.contains("duplicate key")
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// What an operation runs against: a connection in a transaction, the
/// dialect, the store's name and table prefix, and the time.
pub struct Cx<'a> {
    pub conn: &'a mut dyn Conn,
    pub dialect: Dialect,
    /// The store's name (`primary`), for errors.
    pub store: &'a str,
    /// `primary__`: every table of the store starts with it.
    pub prefix: &'a str,
    pub schema: &'a jadpo_runtime::store::schema::Schema,
    /// The store's clock for this operation: the caller's on SQLite, the
    /// database's on Postgres.
    pub now: jadpo_runtime::value::Instant,
}

impl Cx<'_> {
    /// A table of the store: `"primary__jadpo_delivery"`.
    pub fn t(&self, name: &str) -> String {
        format!("\"{}{name}\"", self.prefix)
    }

    pub fn exec(&mut self, sql: &str, params: &[P]) -> Result<u64, StoreError> {
        self.conn.exec(sql, params)
    }

    pub fn rows(&mut self, sql: &str, params: &[P]) -> Result<Vec<Vec<P>>, StoreError> {
        self.conn.rows(sql, params)
    }

    pub fn exec_all(&mut self, statements: &[(String, Vec<P>)]) -> Result<Vec<u64>, StoreError> {
        self.conn.exec_all(statements)
    }

    pub fn rows_all(
        &mut self,
        statements: &[(String, Vec<P>)],
    ) -> Result<Vec<Vec<Vec<P>>>, StoreError> {
        self.conn.rows_all(statements)
    }

    pub fn rows_all_last(
        &mut self,
        statements: &[(String, Vec<P>)],
    ) -> Result<Vec<Vec<Vec<P>>>, StoreError> {
        self.conn.rows_all_last(statements)
    }

    pub fn error(&self, kind: ErrorKind, detail: impl Into<String>) -> StoreError {
        StoreError::new(self.store, kind, detail)
    }
}

/// `$1`-style placeholders as SQLite's `?1`.
pub fn sqlite_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$' && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('?');
        } else {
            out.push(c);
        }
    }
    out
}

/// An identifier quoted for either dialect.
pub fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}
