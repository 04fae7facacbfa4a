//! How many writes each key has had, for keys whose value is being copied
//! between servers (warm-up, hot-key replicas): a copy read before a
//! write must not be written after it.
//!
//! A copier takes the key's generation before reading the value and
//! writes the copy only if it is unchanged; every write of such a key
//! bumps it first. Cost: one lock and hash-map lookup per copy or write;
//! memory one entry per key written while copies are made (dropped with
//! the routing or the hot-key state that owns it).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

/// Write counts by key.
#[derive(Debug, Default)]
pub struct Generations(Mutex<HashMap<Vec<u8>, u64>>);

impl Generations {
    /// `key` is being written.
    pub fn bump(&self, key: &[u8]) {
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        *map.entry(key.to_vec()).or_insert(0) += 1;
    }

    /// How many writes `key` has had.
    pub fn get(&self, key: &[u8]) -> u64 {
        let map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        map.get(key).copied().unwrap_or(0)
    }

    /// Forgets every key (the hot-key state between two periods).
    pub fn clear(&self) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}
