//! Hot keys: reads of a key that takes a large share of the traffic (the
//! article's celebrity key with 30 % of it) spread over the key's first
//! replicas with bounded loads (`--hot-keys R`).
//!
//! The rule. The proxy counts single-key `get`s in periods of
//! [`PERIOD`] with a space-saving sketch of [`TRACKED`] keys (Metwally,
//! Agrawal and El Abbadi, *Efficient Computation of Frequent and Top-k
//! Elements in Data Streams*, 2005: a key with more than 1/TRACKED of the
//! reads is always tracked); a key is hot when it took more than
//! `--hot-share` of the last period's reads (at least [`MIN_READS`] of
//! them). A hot key's `get` goes to the first of its R replicas (the
//! placement's preference order, its owner first) whose reads in the
//! current period are at most `(1 + ε)` times the mean per server plus
//! one (Mirrokni, Thorup and Zadimoghaddam's bound, *Consistent Hashing
//! with Bounded Loads*, 2018), else to its owner. A replica other than the
//! owner that misses reads the owner and keeps a copy (`add`), as during
//! warm-up ([`crate::warm`]).
//!
//! Writes: with `--hot-keys`, a write of a key hot in the last
//! [`RECENT`] is made under the key's lock and deletes it on its other R -
//! 1 replicas, awaited, as a replica's copy is made under that lock
//! ([`crate::locks`]): a copy read before the write is deleted after it
//! or never made. Every other write deletes the key on those replicas
//! without waiting, and once more after the request timeout. Keys that are
//! not hot are only ever read from their owner, and no key is spread while
//! a membership change is being settled ([`crate::routing`]).
//!
//! Cost: one lock and O(TRACKED) scan per single-key `get` while enabled;
//! a replica walk of R for a hot key; R - 1 extra requests per write.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::routing::Table;
use crate::server::Server;

/// Keys the sketch tracks.
pub const TRACKED: usize = 64;
/// How long a counting period lasts.
pub const PERIOD: Duration = Duration::from_millis(500);
/// Reads a period needs before any key is called hot.
pub const MIN_READS: u64 = 200;
/// How long after it was last hot a key's writes are still made under
/// its lock: longer than a copy can take (one period and the request
/// timeout, which tests keep under it).
pub const RECENT: Duration = Duration::from_secs(10);

/// The hot-key settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HotKeys {
    /// Replicas a hot key's reads spread over (2 or more).
    pub replicas: usize,
    /// The share of a period's reads that makes a key hot.
    pub share: f64,
    /// The load bound's ε.
    pub epsilon: f64,
}

/// The state: the sketch of this period, the hot keys of the last.
#[derive(Debug)]
pub struct Hot {
    settings: HotKeys,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    started: Instant,
    counts: Vec<(Vec<u8>, u64)>,
    reads: u64,
    hot: Vec<Vec<u8>>,
    /// Keys hot in the last [`RECENT`], with when they last were (at
    /// most [`TRACKED`] per period).
    recent: Vec<(Vec<u8>, Instant)>,
}

impl Hot {
    /// Hot-key spreading with `settings`.
    pub fn new(settings: HotKeys) -> Hot {
        Hot {
            settings,
            state: Mutex::new(State {
                started: Instant::now(),
                counts: Vec::with_capacity(TRACKED),
                reads: 0,
                hot: Vec::new(),
                recent: Vec::new(),
            }),
        }
    }

    /// The settings.
    pub fn settings(&self) -> HotKeys {
        self.settings
    }

    /// Counts a read of `key`; whether `key` was hot in the last period.
    pub fn read(&self, key: &[u8]) -> bool {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.started.elapsed() >= PERIOD {
            let floor = self.settings.share * state.reads as f64;
            let enough = state.reads >= MIN_READS;
            let hot = state
                .counts
                .iter()
                .filter(|(_, n)| enough && *n as f64 > floor);
            state.hot = hot.map(|(k, _)| k.clone()).collect();
            let now = Instant::now();
            state
                .recent
                .retain(|(_, at)| now.duration_since(*at) < RECENT);
            for key in state.hot.clone() {
                match state.recent.iter_mut().find(|(k, _)| *k == key) {
                    Some(entry) => entry.1 = now,
                    None => state.recent.push((key, now)),
                }
            }
            state.counts.clear();
            state.reads = 0;
            state.started = Instant::now();
        }
        state.reads += 1;
        // Space-saving: count a tracked key, else take the place of the
        // least counted one with its count plus one.
        match state.counts.iter().position(|(k, _)| k == key) {
            Some(i) => state.counts[i].1 += 1,
            None if state.counts.len() < TRACKED => state.counts.push((key.to_vec(), 1)),
            None => {
                let (least, _) = (state.counts.iter().enumerate())
                    .min_by_key(|(_, (_, n))| *n)
                    .map(|(i, (_, n))| (i, *n))
                    .unwrap_or((0, 0));
                let count = state.counts[least].1 + 1;
                state.counts[least] = (key.to_vec(), count);
            }
        }
        state.hot.iter().any(|k| k == key)
    }

    /// Whether `key` was hot in the last [`RECENT`] (its writes are made
    /// under its lock).
    pub fn recently_hot(&self, key: &[u8]) -> bool {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.recent.iter().any(|(k, _)| k == key)
    }

    /// Where a hot key's read goes: the first of its replicas within the
    /// load bound, else its owner.
    pub fn choose<'t>(&self, table: &'t Table, key: &[u8]) -> Option<&'t Arc<Server>> {
        let owner = table.owner(key)?;
        let mut ids = Vec::with_capacity(self.settings.replicas);
        table
            .keyed
            .replicas_into(key, self.settings.replicas, &mut ids);
        let loads: u64 = table.servers.iter().map(|s| s.period_reads()).sum();
        let mean = loads as f64 / table.servers.len().max(1) as f64;
        let bound = (1.0 + self.settings.epsilon) * mean + 1.0;
        ids.iter()
            .map(|&id| &table.servers[id as usize])
            .find(|s| !s.is_ejected() && (s.period_reads() as f64) < bound)
            .or(Some(owner))
    }

    /// The other replicas of `key` (not its owner), for writes.
    pub fn others<'t>(&self, table: &'t Table, key: &[u8]) -> Vec<&'t Arc<Server>> {
        let mut ids = Vec::with_capacity(self.settings.replicas);
        table
            .keyed
            .replicas_into(key, self.settings.replicas, &mut ids);
        ids.iter()
            .skip(1)
            .map(|&id| &table.servers[id as usize])
            .collect()
    }
}

/// Starts every server's read counter anew each [`PERIOD`].
pub async fn periods(servers: impl Fn() -> Vec<Arc<Server>>) {
    let mut tick = tokio::time::interval(PERIOD);
    loop {
        tick.tick().await;
        for server in servers() {
            server.new_period();
        }
    }
}
