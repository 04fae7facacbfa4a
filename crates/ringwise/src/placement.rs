//! `Placement`: what every placement snapshot offers.
//!
//! Algorithms answer in dense [`NodeId`]s over `u64` hashes; names live in
//! the [`NodeTable`], and key bytes become hashes in [`crate::Keyed`], the
//! one key → node path. The trait is object-safe (`Box<dyn Placement>`
//! works): the membership changes, which return a new snapshot of the same
//! type, are excluded from the vtable by `where Self: Sized`. Generic code
//! such as the simulator uses them directly and stays monomorphic in its hot
//! loops.
//!
//! Costs differ by algorithm and are stated on each type: `owner` is O(1)
//! expected for the ring, maglev, slots, jumpback, binomial and fliphash,
//! O(ln N) for jump, O(N) for rendezvous, O(k log N) for multi-probe.

use crate::Error;
use crate::node::{Node, NodeId, NodeTable};

/// An immutable placement snapshot.
pub trait Placement: Send + Sync {
    /// The node that owns `hash`; `None` only when there is no node.
    /// Never allocates.
    #[must_use]
    fn owner(&self, hash: u64) -> Option<NodeId>;

    /// Up to `n` distinct nodes for `hash`, in the algorithm's preference
    /// order, written into `out` (cleared first). Allocates only if `out`
    /// must grow.
    fn replicas_into(&self, hash: u64, n: usize, out: &mut Vec<NodeId>);

    /// The members behind the ids.
    fn nodes(&self) -> &NodeTable;

    /// The owners of many hashes, one per hash, into `out` (cleared first;
    /// left empty when there is no node). Placements may make this faster
    /// than one `owner` call per hash (the ring overlaps the memory reads of
    /// many hashes, and sweeps ascending input in one pass); any order of
    /// hashes is correct.
    fn owners_into(&self, hashes: &[u64], out: &mut Vec<NodeId>) {
        out.clear();
        if !self.is_empty() {
            // With nodes, `owner` is always `Some`: a `map` (of known
            // length, unlike `filter_map`) lets `extend` reserve once and
            // store without a capacity check per hash.
            out.extend(hashes.iter().map(|&h| self.owner(h).unwrap_or_default()));
        }
    }

    /// Heap bytes held by the snapshot's lookup structures, the node table
    /// aside: what one more snapshot of this size costs.
    fn heap_bytes(&self) -> usize;

    /// Number of nodes.
    fn len(&self) -> usize {
        self.nodes().len()
    }

    /// True when there is no node.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A new snapshot with `node` added; `self` is unchanged.
    fn with_node(&self, node: Node) -> Result<Self, Error>
    where
        Self: Sized;

    /// A new snapshot without the node called `name`; `self` is unchanged.
    fn without_node(&self, name: &str) -> Result<Self, Error>
    where
        Self: Sized;
}

/// Picks below this count are checked for repeats by a linear scan of the
/// picks (cheaper than hashing for a handful); from it on, by a hash set.
const LINEAR_PICKS: usize = 16;

/// The distinct ids a `replicas_into` picks, in `out`, with an O(1)
/// expected `contains`: `replicas(R)` costs O(R) set operations, not the
/// O(R²) of `out.contains` at every step (10,000 replicas of 10,000 nodes
/// took up to 350 ms per key that way).
///
/// No allocation beyond `out` itself: `out` is grown to `want` picks plus,
/// from [`LINEAR_PICKS`] on, an open-addressing table of `2·want` rounded up
/// to a power of two (ids stored as `id + 1`, 0 empty) behind them, so at
/// most `5·want` ids. Dropping it cuts `out` back to the picks.
///
/// Example: want = 20 → table of 64 slots at `out[20..84]`; id 7 hashes to
/// `(8 · 0x9e3779b1) >> 26 & 63` and probes forward to the first empty slot.
pub(crate) struct Distinct<'a> {
    out: &'a mut Vec<NodeId>,
    len: usize,
    want: usize,
    /// Table slots − 1, or 0 for the linear scan.
    mask: usize,
}

impl<'a> Distinct<'a> {
    /// Keeps the ids already in `out` (distinct, at most `want`) as picks.
    pub(crate) fn new(out: &'a mut Vec<NodeId>, want: usize) -> Self {
        let len = out.len().min(want);
        out.truncate(len);
        let slots = if want < LINEAR_PICKS {
            0
        } else {
            (2 * want).next_power_of_two()
        };
        out.resize(want + slots, 0);
        let mut picks = Distinct {
            out,
            len: 0,
            want,
            mask: slots.saturating_sub(1),
        };
        for i in 0..len {
            let id = picks.out[i];
            picks.insert(id);
            picks.len += 1;
        }
        picks
    }

    /// True when `id` was picked already.
    pub(crate) fn contains(&self, id: NodeId) -> bool {
        if self.mask == 0 {
            return self.out[..self.len].contains(&id);
        }
        let mut i = self.slot(id);
        loop {
            match self.out[self.want + i] {
                0 => return false,
                stored if stored == id.wrapping_add(1) => return true,
                _ => i = (i + 1) & self.mask,
            }
        }
    }

    /// Picks `id` unless it was picked already or enough were; true if
    /// picked.
    pub(crate) fn push(&mut self, id: NodeId) -> bool {
        if self.is_full() || self.contains(id) {
            return false;
        }
        self.out[self.len] = id;
        self.insert(id);
        self.len += 1;
        true
    }

    /// True when `want` ids are picked.
    pub(crate) fn is_full(&self) -> bool {
        self.len == self.want
    }

    /// The picks so far, in order.
    pub(crate) fn picks(&self) -> &[NodeId] {
        &self.out[..self.len]
    }

    /// Fills the rest with the ids after the first pick (0 when none),
    /// wrapping at `len`: the fallback of the placements whose probes may
    /// miss some nodes (maglev's retries, envoy-rendezvous's attempts), so
    /// that a replica list always reaches its length. O(len) at most.
    pub(crate) fn fill_after_first(&mut self, len: u32) {
        let start = self.picks().first().copied().unwrap_or(0);
        for step in 1..len {
            if self.is_full() {
                return;
            }
            self.push((start + step) % len);
        }
    }

    fn slot(&self, id: NodeId) -> usize {
        // Fibonacci hashing: the top bits of `(id + 1) · 2^32/φ`.
        (u64::from(id.wrapping_add(1)).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as usize
            & self.mask
    }

    /// Records `id` in the table (the caller checked it is new).
    fn insert(&mut self, id: NodeId) {
        if self.mask == 0 {
            return;
        }
        let mut i = self.slot(id);
        while self.out[self.want + i] != 0 {
            i = (i + 1) & self.mask;
        }
        self.out[self.want + i] = id.wrapping_add(1);
    }
}

impl Drop for Distinct<'_> {
    fn drop(&mut self) {
        self.out.truncate(self.len);
    }
}

#[cfg(test)]
mod tests {
    use super::Distinct;

    #[test]
    fn distinct_keeps_order_refuses_repeats_and_cuts_out_back() {
        for want in [0, 1, 5, 15, 16, 17, 100, 1000] {
            let mut out = Vec::new();
            let mut model = Vec::new();
            {
                let mut picks = Distinct::new(&mut out, want);
                // Ids with many repeats, some near u32::MAX.
                for i in 0..(3 * want as u32 + 10) {
                    let id = if i % 7 == 0 {
                        u32::MAX - 1 - i % 3
                    } else {
                        (i * 31) % 97
                    };
                    let fresh = !model.contains(&id) && model.len() < want;
                    assert_eq!(picks.push(id), fresh, "want {want}, id {id}");
                    if fresh {
                        model.push(id);
                    }
                    assert_eq!(picks.picks(), &model[..]);
                }
            }
            assert_eq!(out, model);
        }
    }

    #[test]
    fn distinct_resumes_from_what_out_holds() {
        let mut out = vec![4, 9, 2];
        {
            let mut picks = Distinct::new(&mut out, 40);
            assert!(picks.contains(9));
            assert!(!picks.push(2));
            assert!(picks.push(3));
        }
        assert_eq!(out, [4, 9, 2, 3]);
    }
}
