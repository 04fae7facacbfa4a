//! Key locks: what orders a copy between servers against the writes of
//! the same key, so that a copy read before a write never lands after it.
//!
//! A key whose owner changed in a change the proxy still settles
//! ([`crate::routing`]) may have copies on servers other than its owner:
//! its previous owners, which a read falls back to during the warm-up
//! window. Every fallback read and its copy to the owner, and every write
//! of such a key with its deletes on the previous owners, run while
//! holding the key's lock, and each waits for its servers' answers before
//! letting go. So for one key they happen one after another, as if
//! alone: a delete either comes after the copy (and deletes it) or
//! before the fallback read (which then finds nothing). Keys that did
//! not move take no lock.
//!
//! The locks are striped: [`STRIPES`] async mutexes, a key's stripe by
//! its hash, so memory is fixed whatever the keys (a map of every key
//! written grew to 600 MB after 2M keys); two keys of one stripe only
//! wait for each other, never see each other's data.
//!
//! Cost: one hash and one uncontended lock per moved key's request.

use std::hash::{BuildHasher, BuildHasherDefault};

use tokio::sync::{Mutex, MutexGuard};

/// How many stripes: enough that the few keys copied at one moment
/// rarely share one.
pub const STRIPES: usize = 1024;

/// The key locks of one proxy.
#[derive(Debug)]
pub struct KeyLocks {
    stripes: Box<[Mutex<()>]>,
}

impl Default for KeyLocks {
    fn default() -> Self {
        KeyLocks {
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
        }
    }
}

impl KeyLocks {
    /// Waits for `key`'s lock; held until the guard is dropped.
    pub async fn lock(&self, key: &[u8]) -> MutexGuard<'_, ()> {
        // A fixed (not per-process random) hasher: which keys share a
        // stripe does not matter, only that one key always has one.
        let hash = BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default()
            .hash_one(key);
        self.stripes[hash as usize % STRIPES].lock().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn one_key_waits_for_itself() {
        let locks = KeyLocks::default();
        let held = locks.lock(b"k").await;
        let again = tokio::time::timeout(std::time::Duration::from_millis(20), locks.lock(b"k"));
        assert!(again.await.is_err(), "a key's lock is held once");
        drop(held);
        let _ = locks.lock(b"k").await;
    }
}
