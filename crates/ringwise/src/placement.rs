//! `Placement`: what every placement snapshot offers.
//!
//! Algorithms answer in dense [`NodeId`]s over `u64` hashes; names live in
//! the [`NodeTable`]. The trait is object-safe (`Box<dyn Placement>` works):
//! the membership changes, which return a new snapshot of the same type, are
//! excluded from the vtable by `where Self: Sized`. Generic code such as the
//! simulator uses them directly and stays monomorphic in its hot loops.

use crate::Error;
use crate::node::{Node, NodeId, NodeTable};

/// An immutable placement snapshot.
pub trait Placement: Send + Sync {
    /// The node that owns `hash`; `None` only when there is no node.
    fn owner(&self, hash: u64) -> Option<NodeId>;

    /// Up to `n` distinct nodes for `hash`, in the algorithm's preference
    /// order, written into `out` (cleared first).
    fn replicas_into(&self, hash: u64, n: usize, out: &mut Vec<NodeId>);

    /// The members behind the ids.
    fn nodes(&self) -> &NodeTable;

    /// The owners of many hashes, one per hash, into `out` (cleared first;
    /// left empty when there is no node). Placements may make ascending
    /// input faster (the ring sweeps it in one pass); any order is correct.
    fn owners_into(&self, hashes: &[u64], out: &mut Vec<NodeId>) {
        out.clear();
        if !self.is_empty() {
            out.extend(hashes.iter().filter_map(|&h| self.owner(h)));
        }
    }

    /// Number of nodes.
    fn len(&self) -> usize {
        self.nodes().len()
    }

    /// True when there is no node.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A new snapshot with `node` added.
    fn with_node(&self, node: Node) -> Result<Self, Error>
    where
        Self: Sized;

    /// A new snapshot without the node called `name`.
    fn without_node(&self, name: &str) -> Result<Self, Error>
    where
        Self: Sized;
}

/// The lookup half of a `Placement` impl for a snapshot whose inherent
/// `owner` and `replicas_into` already do the work and whose node table is
/// its `nodes` field: `impl Placement for X { delegate_lookups!(X); ... }`.
macro_rules! delegate_lookups {
    ($t:ty) => {
        #[inline]
        fn owner(&self, hash: u64) -> Option<NodeId> {
            <$t>::owner(self, hash)
        }

        fn replicas_into(&self, hash: u64, n: usize, out: &mut Vec<NodeId>) {
            <$t>::replicas_into(self, hash, n, out);
        }

        fn nodes(&self) -> &NodeTable {
            &self.nodes
        }
    };
}
pub(crate) use delegate_lookups;
