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
//! expected for the ring, maglev and slots, O(ln N) for jump, O(N) for
//! rendezvous, O(k log N) for multi-probe.

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
            out.extend(hashes.iter().filter_map(|&h| self.owner(h)));
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
