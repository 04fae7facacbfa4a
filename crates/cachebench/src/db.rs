//! The database behind the cache: an SQLite file (rusqlite, SQLite compiled
//! in) with one row per key, `items(key TEXT PRIMARY KEY, value BLOB,
//! version INTEGER)`. A cache miss is one indexed read (`SELECT value ...
//! WHERE key = ?`, the primary-key index); a write (the workload's
//! invalidations) bumps `version`. Each worker thread opens its own
//! connection (WAL, so readers never wait for the writer).
//!
//! `--db-latency MS` sleeps that long inside every read, to model a
//! database across a network; the reads are counted by the caller.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension, params};

/// The key of item `i`, as the seed article names its keys.
pub fn key(i: u64) -> String {
    format!("user:{i}")
}

/// The stored value of item `i`: `size` bytes that depend on `i`.
pub fn value(i: u64, size: usize) -> Vec<u8> {
    let text = format!("value of user:{i};");
    text.bytes().cycle().take(size).collect()
}

/// The database file and its settings.
#[derive(Debug, Clone)]
pub struct Database {
    path: PathBuf,
    latency: Duration,
}

impl Database {
    /// Creates `dir/items.sqlite` holding `keys` rows of `value_size`
    /// bytes (one transaction). Cost: O(K log K).
    pub fn create(dir: &Path, keys: u64, value_size: usize, latency: Duration) -> Result<Self> {
        let path = dir.join("items.sqlite");
        let mut connection = Connection::open(&path)
            .with_context(|| format!("create the database {}", path.display()))?;
        connection
            .execute_batch(
                "PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF;
                 CREATE TABLE items (key TEXT PRIMARY KEY, value BLOB NOT NULL,
                                     version INTEGER NOT NULL) WITHOUT ROWID;",
            )
            .context("create the items table")?;
        let transaction = connection.transaction()?;
        {
            let mut insert = transaction
                .prepare("INSERT INTO items (key, value, version) VALUES (?1, ?2, 0)")?;
            for i in 0..keys {
                insert.execute(params![key(i), value(i, value_size)])?;
            }
        }
        transaction.commit().context("fill the items table")?;
        Ok(Database { path, latency })
    }

    /// A connection for one worker thread.
    pub fn open(&self) -> Result<Reader> {
        let connection = Connection::open(&self.path)
            .with_context(|| format!("open the database {}", self.path.display()))?;
        connection.busy_timeout(Duration::from_secs(5))?;
        connection.execute_batch("PRAGMA synchronous = OFF;")?;
        Ok(Reader {
            connection,
            latency: self.latency,
        })
    }
}

/// One thread's connection.
#[derive(Debug)]
pub struct Reader {
    connection: Connection,
    latency: Duration,
}

impl Reader {
    /// The value of `key` (one indexed read, plus `--db-latency`).
    pub fn read(&self, key: &str) -> Result<Option<Vec<u8>>> {
        if !self.latency.is_zero() {
            std::thread::sleep(self.latency);
        }
        let mut statement = self
            .connection
            .prepare_cached("SELECT value FROM items WHERE key = ?1")?;
        let value = statement
            .query_row(params![key], |row| row.get(0))
            .optional()?;
        Ok(value)
    }

    /// A write: bumps the row's version (the value a cache must then forget).
    pub fn write(&self, key: &str) -> Result<()> {
        let mut statement = self
            .connection
            .prepare_cached("UPDATE items SET version = version + 1 WHERE key = ?1")?;
        statement.execute(params![key])?;
        Ok(())
    }
}
