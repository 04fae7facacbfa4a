//! The stale-read check (`--check-stale KEYS`): beside the workload, two
//! threads write versioned values of their own keys `check:0..K` through
//! the same path as the workload (the placement's servers, or the proxy)
//! and read every key back, across the change and the proxy's warm-up
//! window. A read whose version is older than the last write of that key
//! acknowledged before the read was sent is stale; it must never happen.
//!
//! Each key has one owner thread (`i mod 2`), so its writes are in order:
//! a write takes the next version, stores it in the check's own
//! "database" (an array) and either `set`s it (write-through) or
//! `delete`s the key (cache-aside invalidation; the owner's next read
//! misses and sets the stored version back); once the server answered,
//! the version is acknowledged. Both threads read every key; only the
//! owner fills a miss (a reader that does not own a key could put back a
//! version older than a write that happened meanwhile: the classic
//! cache-aside race, not the cache's). So every value ever stored for a
//! key is at least every version acknowledged before it, and a read of an
//! older one is a copy that should have been overwritten or removed: an
//! old server's, say, during a warm-up window.
//!
//! Paced at 5 % of `--rps` (at least 20 requests/s), a fifth of them
//! writes; it never touches the database, so the figures of the run do
//! not count it. Cost: K × 16 bytes; O(1) per request.

use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant};

use anyhow::Result;
use serde::Serialize;

use crate::keys::Rng;
use crate::run::Shared;

/// The check's threads (key `i`'s owner is thread `i mod THREADS`).
pub const THREADS: usize = 2;
/// The share of the workload's rate the check sends.
const SHARE_OF_RPS: f64 = 0.05;
/// Its least rate, requests per second.
const LEAST_RPS: f64 = 20.0;
/// The share of an owner's requests that are writes.
const WRITES: f64 = 0.2;

/// The key of check item `i` (apart from the workload's `user:` keys).
pub fn key(i: u64) -> String {
    format!("check:{i}")
}

fn value(version: u64) -> Vec<u8> {
    version.to_string().into_bytes()
}

/// The versions and the counts of one placement's check.
#[derive(Debug)]
pub struct Checker {
    keys: u64,
    rps: f64,
    seed: u64,
    /// Per key: the last version whose write the server acknowledged.
    acked: Vec<AtomicU64>,
    /// Per key: the version its owner last wrote (its "database").
    stored: Vec<AtomicU64>,
    writes: AtomicU64,
    reads: AtomicU64,
    hits: AtomicU64,
    reads_after: AtomicU64,
    stale: AtomicU64,
    stale_after: AtomicU64,
    errors: AtomicU64,
}

/// What the check saw, for the report.
#[derive(Debug, Clone, Serialize)]
pub struct Checked {
    pub keys: u64,
    pub writes: u64,
    pub reads: u64,
    pub hits: u64,
    /// Reads sent after the change.
    pub reads_after: u64,
    /// Reads of a version older than the last acknowledged write.
    pub stale: u64,
    /// Of them, those sent after the change.
    pub stale_after: u64,
    /// Requests that failed (a killed server).
    pub errors: u64,
}

impl Checker {
    /// The check of `keys` keys at 5 % of `rps`.
    pub fn new(keys: u64, rps: f64, seed: u64) -> Checker {
        let zeros = || (0..keys).map(|_| AtomicU64::new(0)).collect();
        Checker {
            keys,
            rps: (rps * SHARE_OF_RPS).max(LEAST_RPS),
            seed,
            acked: zeros(),
            stored: zeros(),
            writes: AtomicU64::new(0),
            reads: AtomicU64::new(0),
            hits: AtomicU64::new(0),
            reads_after: AtomicU64::new(0),
            stale: AtomicU64::new(0),
            stale_after: AtomicU64::new(0),
            errors: AtomicU64::new(0),
        }
    }

    /// Stores version 0 of every key on its server. Bounded by K.
    pub fn preload(&self, shared: &Shared) -> Result<()> {
        let route = shared.route.load_full();
        for i in 0..self.keys {
            let key = key(i);
            if let Some(server) = route.server(&key) {
                shared.caches[server]
                    .set(&key, &value(0))
                    .map_err(|e| anyhow::anyhow!("preload {key}: {e}"))?;
            }
        }
        Ok(())
    }

    /// Thread `t`'s requests until the run ends.
    pub fn worker(&self, shared: &Shared, t: usize) {
        let mut rng = Rng::new(self.seed ^ 0xC0FF_EE00, t as u64 + 1);
        let rate = self.rps / THREADS as f64;
        let mut start = Instant::now();
        let mut issued = 0u64;
        while !shared.ending() && self.keys > 0 {
            let due = start + Duration::from_secs_f64(issued as f64 / rate);
            let now = Instant::now();
            if due > now {
                sleep((due - now).min(Duration::from_millis(20)));
                continue;
            }
            if now - due > Duration::from_secs(1) {
                (start, issued) = (now, 0);
            }
            issued += 1;
            let i = rng.next_u64() % self.keys;
            let owner = i as usize % THREADS == t;
            if owner && rng.unit() < WRITES {
                self.write(shared, i, rng.unit() < 0.5);
            } else {
                self.read(shared, i, owner);
            }
        }
    }

    fn write(&self, shared: &Shared, i: u64, through: bool) {
        let version = self.acked[i as usize].load(Ordering::SeqCst) + 1;
        self.stored[i as usize].store(version, Ordering::SeqCst);
        let key = key(i);
        let Some(server) = shared.route.load().server(&key) else {
            return;
        };
        let cache = &shared.caches[server];
        let done = match through {
            true => cache.set(&key, &value(version)),
            false => cache.delete(&key).map(|_| ()),
        };
        match done {
            Ok(()) => {
                self.acked[i as usize].store(version, Ordering::SeqCst);
                self.writes.fetch_add(1, Ordering::Relaxed);
            }
            Err(_) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    fn read(&self, shared: &Shared, i: u64, owner: bool) {
        let acked = self.acked[i as usize].load(Ordering::SeqCst);
        let after = shared.tracking();
        let key = key(i);
        let Some(server) = shared.route.load().server(&key) else {
            return;
        };
        let cache = &shared.caches[server];
        self.reads.fetch_add(1, Ordering::Relaxed);
        if after {
            self.reads_after.fetch_add(1, Ordering::Relaxed);
        }
        match cache.get(&key) {
            Ok(Some(bytes)) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                let version = std::str::from_utf8(&bytes)
                    .ok()
                    .and_then(|s| s.parse::<u64>().ok());
                if version.is_none_or(|v| v < acked) {
                    self.stale.fetch_add(1, Ordering::Relaxed);
                    if after {
                        self.stale_after.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            Ok(None) if owner => {
                let version = self.stored[i as usize].load(Ordering::SeqCst);
                if cache.set(&key, &value(version)).is_err() {
                    self.errors.fetch_add(1, Ordering::Relaxed);
                }
            }
            Ok(None) => {}
            Err(_) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// The counts so far.
    pub fn checked(&self) -> Checked {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Checked {
            keys: self.keys,
            writes: get(&self.writes),
            reads: get(&self.reads),
            hits: get(&self.hits),
            reads_after: get(&self.reads_after),
            stale: get(&self.stale),
            stale_after: get(&self.stale_after),
            errors: get(&self.errors),
        }
    }
}
