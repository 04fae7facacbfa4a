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

use crate::Error;
use crate::algo::buckets::check_unweighted;
use crate::algo::removals;
use crate::node::{Node, NodeId, NodeTable};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Owners(Vec<NodeId>);

impl Owners {
    /// No node: the bucket is removed or never used.
    pub const NONE: NodeId = NodeId::MAX;

    /// The node table and bucket map of an `algorithm` (anchor, dx)
    /// build: unweighted `nodes`, in listed order, on the buckets of
    /// `0..nodes + removed` that `removed` leaves out (`algo/removals.rs`),
    /// in a table of `capacity` buckets (0: the default for every bucket
    /// in use). Checks, in this order: the removed list, the nodes, their
    /// weights, the capacity. O(capacity + m log m) for m removals.
    pub fn build(
        algorithm: &'static str,
        nodes: &[Node],
        capacity: u32,
        removed: &[u32],
    ) -> Result<(NodeTable, Owners), Error> {
        removals::validate(removed, nodes.len())?;
        let table = NodeTable::new(nodes.iter().cloned())?;
        check_unweighted(algorithm, &table)?;
        let capacity =
            removals::capacity_with_removed(algorithm, capacity, nodes.len(), removed.len())?;
        let mut owners = vec![Self::NONE; capacity as usize];
        let mut listed = nodes.iter();
        let mask = removals::working_mask(removed, nodes.len() + removed.len());
        for (slot, works) in owners.iter_mut().zip(mask) {
            if works && let Some(node) = listed.next() {
                *slot = table.id(&node.name).unwrap_or(Self::NONE);
            }
        }
        Ok((table, Owners(owners)))
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
