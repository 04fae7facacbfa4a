//! `JoinOrder`: the bucket → node table of the stateless bucket algorithms
//! (`jumpback`, `binomial`, `fliphash`), which answer a bucket number in
//! `0..n` from the key hash and `n` alone.
//!
//! Not an algorithm itself: it holds what those three share with
//! [`crate::Jump`], which keeps its table here too. Bucket
//! `i` is the `i`-th node given to the constructor or appended by a join;
//! only the last bucket can leave (its keys are the only ones that move);
//! every node weighs 1. Replicas follow jump's documented draw order
//! ([`crate::replica_key`] keys, distinct buckets, then the buckets after the
//! owner's in order), each algorithm answering the draws with its own
//! bucket function.
//!
//! Cost: 4 bytes per node besides the node table; a join or leave copies
//! the table, O(N).

use crate::Error;
use crate::algo::buckets::{check_unweighted, check_weight, replica_draws};
use crate::node::{Node, NodeId, NodeTable};

/// Why only the last bucket can leave.
pub(crate) const LEAVE_LAST: &str =
    "only the last-joined node (the last bucket) can leave; use memento for arbitrary removals";

/// Nodes in join order: bucket `i` is `buckets[i]`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JoinOrder {
    nodes: NodeTable,
    buckets: Vec<NodeId>,
}

impl JoinOrder {
    /// `nodes` in bucket order; refuses weights other than 1 in the name of
    /// `algorithm`.
    pub(crate) fn new(algorithm: &'static str, nodes: Vec<Node>) -> Result<Self, Error> {
        let table = NodeTable::new(nodes.iter().cloned())?;
        check_unweighted(algorithm, &table)?;
        let buckets = nodes.iter().filter_map(|n| table.id(&n.name)).collect();
        Ok(JoinOrder {
            nodes: table,
            buckets,
        })
    }

    /// The number of buckets (= nodes), as the bucket functions take it.
    #[inline]
    pub(crate) fn size(&self) -> u32 {
        self.buckets.len() as u32
    }

    /// The node of bucket `b`; `None` past the end.
    #[inline]
    pub(crate) fn node(&self, b: u32) -> Option<NodeId> {
        self.buckets.get(b as usize).copied()
    }

    /// Bucket → node id, in join order.
    pub(crate) fn buckets(&self) -> &[NodeId] {
        &self.buckets
    }

    pub(crate) fn nodes(&self) -> &NodeTable {
        &self.nodes
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.buckets.capacity() * 4
    }

    /// Up to `n` distinct nodes for `hash`, the owner first, with `bucket`
    /// the algorithm's function of (hash, bucket count).
    pub(crate) fn replicas_into(
        &self,
        hash: u64,
        n: usize,
        out: &mut Vec<NodeId>,
        bucket: impl Fn(u64, u32) -> u32,
    ) {
        let size = self.size();
        let want = n.min(self.buckets.len());
        let bucket_of = |h: u64| (size > 0).then(|| bucket(h, size));
        replica_draws(hash, want, size, out, bucket_of, |b| self.node(b));
    }

    /// `node` appended as the new last bucket.
    pub(crate) fn with_node(&self, algorithm: &'static str, node: Node) -> Result<Self, Error> {
        check_weight(algorithm, &node)?;
        let (nodes, at) = self.nodes.with(node)?;
        // Ids are name ranks: every id at or after the newcomer's shifts up.
        let mut buckets: Vec<NodeId> = self
            .buckets
            .iter()
            .map(|&id| id + u32::from(id >= at))
            .collect();
        buckets.push(at);
        Ok(JoinOrder { nodes, buckets })
    }

    /// Without the last-joined node; any other is [`Error::Unsupported`]
    /// with `reason` (usually [`LEAVE_LAST`]).
    pub(crate) fn without_node(
        &self,
        algorithm: &'static str,
        reason: &'static str,
        name: &str,
    ) -> Result<Self, Error> {
        let (nodes, at) = self.nodes.without(name)?;
        if self.buckets.last() != Some(&at) {
            return Err(Error::Unsupported {
                algorithm,
                operation: format!("remove {name:?}"),
                reason,
                node: None,
            });
        }
        let keep = &self.buckets[..self.buckets.len() - 1];
        let buckets = keep.iter().map(|&id| id - u32::from(id > at)).collect();
        Ok(JoinOrder { nodes, buckets })
    }
}
