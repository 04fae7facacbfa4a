//! One memcached server of the pool: its connections, its health and its
//! counters.
//!
//! Health follows twemproxy's `auto_eject_hosts` (`nc_server.c`,
//! `server_failure`): a request that fails (no connection, a broken one,
//! no answer within the timeout) counts one failure, an answer resets the
//! count; at `failure_limit` failures in a row the server is ejected, and
//! its keys go to their next owner ([`crate::routing`]) once the pool has
//! published the change. Unlike twemproxy, a server comes back only
//! through the pool ([`crate::pool`]): after `retry_timeout` the pool
//! flushes it on every connection (it may hold values that were
//! overwritten while it was out, and requests sent before it stopped may
//! still be applied: each connection's flush comes after them), and
//! re-admits it when every flush is answered. `failure_limit` 0 never
//! ejects. Ejections and re-admissions are logged ([`crate::log`]).
//!
//! Cost: a few relaxed atomics per request.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::backend::Backend;

/// When a server is taken out of the ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ejection {
    /// Failures in a row that eject it (0: never).
    pub failure_limit: u32,
    /// How long it stays out.
    pub retry_timeout: Duration,
}

/// A server's counters (since the proxy started).
#[derive(Debug, Default)]
pub struct Counters {
    /// Requests sent to it.
    pub requests: AtomicU64,
    /// Keys a retrieval found on it.
    pub hits: AtomicU64,
    /// Keys a retrieval did not find on it.
    pub misses: AtomicU64,
    /// Keys found on it as the previous owner during a warm-up window
    /// (and copied to their new owner).
    pub fallback_hits: AtomicU64,
    /// Requests that failed (no answer).
    pub errors: AtomicU64,
    /// Times it was ejected.
    pub ejections: AtomicU64,
    /// Sweeps finished on it ([`crate::sweep`]).
    pub sweeps: AtomicU64,
    /// Keys those sweeps deleted (copies of keys it did not own).
    pub swept: AtomicU64,
    /// Times it was flushed (joining, re-admitted, or unable to sweep).
    pub flushes: AtomicU64,
}

/// A server and its connections.
#[derive(Debug)]
pub struct Server {
    address: String,
    connections: Vec<Backend>,
    ejection: Ejection,
    failures: AtomicU32,
    /// Milliseconds since `started` from which it may be tried again; 0:
    /// in.
    ejected_until: AtomicU64,
    started: Instant,
    /// Requests in the current hot-key period ([`crate::hot`]'s load).
    period: AtomicU64,
    /// What it did.
    pub counters: Counters,
}

impl Server {
    /// Starts `connections` connections to `address` (each connects on
    /// its first request).
    pub fn start(
        address: String,
        connections: usize,
        connect_timeout: Duration,
        ejection: Ejection,
    ) -> Server {
        let connections = (0..connections.max(1))
            .map(|_| Backend::start(address.clone(), connect_timeout))
            .collect();
        Server {
            address,
            connections,
            ejection,
            failures: AtomicU32::new(0),
            ejected_until: AtomicU64::new(0),
            started: Instant::now(),
            period: AtomicU64::new(0),
            counters: Counters::default(),
        }
    }

    /// `host:port`.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Client `client`'s connection: a client keeps one per server, so
    /// its requests to a server stay in order.
    pub fn connection(&self, client: usize) -> &Backend {
        self.counters.requests.fetch_add(1, Ordering::Relaxed);
        self.period.fetch_add(1, Ordering::Relaxed);
        &self.connections[client % self.connections.len()]
    }

    /// How many connections it has (a barrier such as a flush is sent on
    /// each: client `i`'s is [`Server::connection`]`(i)`).
    pub fn connection_count(&self) -> usize {
        self.connections.len()
    }

    /// Requests sent to it in the current hot-key period.
    pub fn period_reads(&self) -> u64 {
        self.period.load(Ordering::Relaxed)
    }

    /// Starts a new hot-key period.
    pub fn new_period(&self) {
        self.period.store(0, Ordering::Relaxed);
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Whether it is ejected (until the pool re-admits it).
    pub fn is_ejected(&self) -> bool {
        self.ejected_until.load(Ordering::Relaxed) != 0
    }

    /// Whether it is ejected and its retry timeout has passed.
    pub fn retry_due(&self) -> bool {
        let until = self.ejected_until.load(Ordering::Relaxed);
        until != 0 && until <= self.now_ms()
    }

    /// Ejected now, whatever the failure limit (a joining server that did
    /// not answer its flush).
    pub fn eject_now(&self) {
        if !self.is_ejected() {
            self.counters.ejections.fetch_add(1, Ordering::Relaxed);
            crate::note!(
                "server {} ejected: it did not answer its flush; retried in {} ms",
                self.address,
                self.ejection.retry_timeout.as_millis()
            );
        }
        self.retry_later();
    }

    /// Its retry failed: tried again after another retry timeout.
    pub fn retry_later(&self) {
        let until = self.now_ms() + self.ejection.retry_timeout.as_millis() as u64;
        self.ejected_until.store(until.max(1), Ordering::Relaxed);
    }

    /// Flushed and answering: in again.
    pub fn readmit(&self) {
        self.failures.store(0, Ordering::Relaxed);
        self.ejected_until.store(0, Ordering::Relaxed);
    }

    /// A request to it got an answer.
    pub fn answered(&self) {
        if self.failures.load(Ordering::Relaxed) != 0 {
            self.failures.store(0, Ordering::Relaxed);
        }
    }

    /// A request to it failed; ejects it at the limit.
    pub fn failed(&self) {
        self.counters.errors.fetch_add(1, Ordering::Relaxed);
        let failures = self.failures.fetch_add(1, Ordering::Relaxed) + 1;
        let limit = self.ejection.failure_limit;
        let until = (self.now_ms() + self.ejection.retry_timeout.as_millis() as u64).max(1);
        // Once: two failing requests at the limit eject it once.
        let ejects = limit > 0
            && failures >= limit
            && (self.ejected_until)
                .compare_exchange(0, until, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok();
        if ejects {
            self.counters.ejections.fetch_add(1, Ordering::Relaxed);
            crate::note!(
                "server {} ejected after {failures} failures in a row; retried in {} ms",
                self.address,
                self.ejection.retry_timeout.as_millis()
            );
        }
    }
}
