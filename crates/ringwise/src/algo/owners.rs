//! The bucket → node map of the fixed-capacity algorithms whose buckets
//! can be removed in any order (`anchor`, `dx`): one [`NodeId`] per
//! bucket, [`Owners::NONE`] for a removed or never-used one. Not an
//! algorithm: what both keep beside their own state (AnchorHash's `A`,
//! `K`, `W`, `L`; DxHash's removal stack), so that a join, a leave and
//! the ids' renumbering are written once.
//!
//! Node ids are ranks of names, so a join or a leave renumbers the ids
//! after it: a node named between others shifts every later id by one.
//! Cost: O(capacity) per join or leave; O(1) per lookup.

use crate::node::{Node, NodeId, NodeTable};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Owners(Vec<NodeId>);

impl Owners {
    /// No node: the bucket is removed or never used.
    pub const NONE: NodeId = NodeId::MAX;

    /// `nodes` (of `table`) on buckets `0..n` of `capacity`, in listed
    /// order.
    pub fn new(table: &NodeTable, nodes: &[Node], capacity: u32) -> Self {
        let mut owners = vec![Self::NONE; capacity as usize];
        for (slot, node) in owners.iter_mut().zip(nodes) {
            *slot = table.id(&node.name).unwrap_or(Self::NONE);
        }
        Owners(owners)
    }

    /// `nodes` (of `table`) on the buckets of `0..nodes + removed` that
    /// `removed` leaves out, in listed order (`algo/removals.rs`).
    pub fn with_holes(table: &NodeTable, nodes: &[Node], capacity: u32, removed: &[u32]) -> Self {
        let total = nodes.len() + removed.len();
        let mut owners = vec![Self::NONE; capacity as usize];
        let mut nodes = nodes.iter();
        let mask = crate::algo::removals::working_mask(removed, total);
        for (slot, works) in owners.iter_mut().zip(mask) {
            if works && let Some(node) = nodes.next() {
                *slot = table.id(&node.name).unwrap_or(Self::NONE);
            }
        }
        Owners(owners)
    }

    /// The fixed number of buckets, working or not.
    pub fn capacity(&self) -> u32 {
        self.0.len() as u32
    }

    /// The node on `bucket`, if it works.
    #[inline]
    pub fn get(&self, bucket: u32) -> Option<NodeId> {
        self.0
            .get(bucket as usize)
            .copied()
            .filter(|&id| id != Self::NONE)
    }

    /// True when a node works on `bucket`.
    #[inline]
    pub fn is_working(&self, bucket: u32) -> bool {
        self.get(bucket).is_some()
    }

    /// The node of each working bucket, in bucket order.
    pub fn working(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.0.iter().copied().filter(|&id| id != Self::NONE)
    }

    /// The node that joined as id `at` works on `bucket`; later ids shift.
    pub fn join(&mut self, bucket: u32, at: NodeId) {
        for id in self.0.iter_mut().filter(|id| **id != Self::NONE) {
            *id += u32::from(*id >= at);
        }
        self.0[bucket as usize] = at;
    }

    /// The bucket of the node with id `at`, before it leaves.
    pub fn bucket_of(&self, at: NodeId) -> Option<u32> {
        self.0.iter().position(|&id| id == at).map(|b| b as u32)
    }

    /// The node with id `at` leaves `bucket`; later ids shift back.
    pub fn leave(&mut self, bucket: u32, at: NodeId) {
        self.0[bucket as usize] = Self::NONE;
        for id in self.0.iter_mut().filter(|id| **id != Self::NONE) {
            *id -= u32::from(*id > at);
        }
    }

    /// Heap bytes of the map.
    pub fn heap_bytes(&self) -> usize {
        self.0.capacity() * std::mem::size_of::<NodeId>()
    }
}
