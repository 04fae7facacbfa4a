//! `Live`: the current snapshot for concurrent readers.
//!
//! The seed article's production advice: "build a new array and swap the
//! reference in one operation". Readers call [`Live::load`] and get one whole
//! immutable snapshot with its epoch; they never block and never see a
//! half-built ring. Writers build the next snapshot from the current one and
//! publish it; they are serialized by a mutex, so no update is lost and epochs
//! increase by exactly one per publish.
//!
//! Costs: `load` is O(1), lock-free (an atomic reference count);
//! `update`, `store` and `publish` take the writer lock, run the caller's
//! build (its own cost) and swap in O(1); the old snapshot is freed when
//! its last reader drops it.
//!
//! A snapshot that follows an external store (etcd, see the `ringwise-etcd`
//! crate) also carries the store's revision: [`Live::publish`] refuses a
//! revision at or below the current one, so a late writer (a relist that
//! raced a watch event) can never move readers back in time.

use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;

/// A placement together with the epoch at which it was published.
#[derive(Debug)]
pub struct Snapshot<P> {
    /// 0 for the first snapshot, then +1 per publish.
    pub epoch: u64,
    /// The revision of the store the placement was read from (etcd's
    /// revision); 0 for a placement published without one. Never
    /// decreases.
    pub revision: u64,
    /// The immutable placement.
    pub placement: P,
}

/// A shared holder of the current [`Snapshot`].
#[derive(Debug)]
pub struct Live<P> {
    current: ArcSwap<Snapshot<P>>,
    writer: Mutex<()>,
}

impl<P> Live<P> {
    /// Publishes `placement` as epoch 0.
    pub fn new(placement: P) -> Self {
        Self::at_revision(placement, 0)
    }

    /// Publishes `placement`, read at `revision` of its store, as epoch 0.
    pub fn at_revision(placement: P, revision: u64) -> Self {
        Live {
            current: ArcSwap::from_pointee(Snapshot {
                epoch: 0,
                revision,
                placement,
            }),
            writer: Mutex::new(()),
        }
    }

    /// The current snapshot: lock-free, never blocks on writers.
    pub fn load(&self) -> Arc<Snapshot<P>> {
        self.current.load_full()
    }

    /// Builds the next placement from the current one and publishes it,
    /// returning the new epoch. If `next` fails nothing changes.
    pub fn update<E>(&self, next: impl FnOnce(&P) -> Result<P, E>) -> Result<u64, E> {
        // A writer that panicked left no half-published state: the swap below
        // is the only write, so a poisoned lock is safe to take.
        let _writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let current = self.current.load();
        let placement = next(&current.placement)?;
        let epoch = current.epoch + 1;
        let revision = current.revision;
        self.current.store(Arc::new(Snapshot {
            epoch,
            revision,
            placement,
        }));
        Ok(epoch)
    }

    /// Publishes `placement`, read at `revision` of its store, as the next
    /// epoch, unless the current snapshot is already at `revision` or
    /// later: then nothing changes and the answer is `None`. Checked and
    /// stored under the writer lock, so of two racing publishers the older
    /// revision never wins.
    pub fn publish(&self, revision: u64, placement: P) -> Option<u64> {
        let _writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let current = self.current.load();
        if revision <= current.revision {
            return None;
        }
        let epoch = current.epoch + 1;
        self.current.store(Arc::new(Snapshot {
            epoch,
            revision,
            placement,
        }));
        Some(epoch)
    }

    /// Publishes `placement` as the next epoch, replacing whatever was there.
    pub fn store(&self, placement: P) -> u64 {
        match self.update(|_| Ok::<P, std::convert::Infallible>(placement)) {
            Ok(epoch) => epoch,
            Err(never) => match never {},
        }
    }
}
