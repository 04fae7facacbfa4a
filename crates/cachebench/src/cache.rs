//! Connections to the memcached servers: one `memcache::Client` (the
//! `memcache` crate, text protocol over TCP) per server, over an r2d2 pool
//! of one connection per worker thread. Placement is ours (`Route`), so
//! each client talks to exactly one server.
//!
//! The pool is built without r2d2's check-out test (memcache's own builder
//! sends a `version` round trip before every request) and without waiting
//! for the server: a server that is down (killed by `--kill`) fails each
//! request fast (connection refused or reset) and the caller counts a miss.

use std::time::Duration;

use anyhow::{Context, Result};
use memcache::{Client, ConnectionManager, Url};

/// How long a request may wait for a pooled connection (the socket's
/// read and write timeouts, 0.5 s, are the URL's `timeout`).
const TIMEOUT: Duration = Duration::from_millis(500);

/// One memcached server.
pub struct Cache {
    /// `host:port`.
    pub address: String,
    client: Client,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("address", &self.address)
            .finish()
    }
}

impl Cache {
    /// A client of `address` (`host:port`) with up to `connections` open.
    pub fn connect(address: &str, connections: u32) -> Result<Cache> {
        let url = Url::parse(&format!(
            "memcache://{address}?protocol=ascii&tcp_nodelay=true&timeout=0.5"
        ))
        .with_context(|| format!("`{address}` is not a memcached address (HOST:PORT)"))?;
        let pool = r2d2::Pool::builder()
            .max_size(connections.max(1))
            .min_idle(Some(0))
            .test_on_check_out(false)
            .connection_timeout(TIMEOUT)
            .build_unchecked(ConnectionManager::new(url));
        let client = Client::with_pool(pool).context("memcache client")?;
        Ok(Cache {
            address: address.to_owned(),
            client,
        })
    }

    /// `get key`: `Ok(None)` is a miss, `Err` a server that did not answer.
    pub fn get(&self, key: &str) -> Result<Option<Vec<u8>>, memcache::MemcacheError> {
        self.client.get::<Vec<u8>>(key)
    }

    /// `set key value 0 0`.
    pub fn set(&self, key: &str, value: &[u8]) -> Result<(), memcache::MemcacheError> {
        self.client.set(key, value, 0)
    }

    /// `delete key` (the invalidation after a write).
    pub fn delete(&self, key: &str) -> Result<bool, memcache::MemcacheError> {
        self.client.delete(key)
    }

    /// `flush_all`: forget everything (between placements on `--servers`).
    pub fn flush(&self) -> Result<()> {
        self.client
            .flush()
            .with_context(|| format!("flush_all on memcached {}", self.address))
    }
}
