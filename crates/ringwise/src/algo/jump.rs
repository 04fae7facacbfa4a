//! `Jump`: jump consistent hash over buckets in join order.
//!
//! Paper: Lamping & Veach, "A Fast, Minimal Memory, Consistent Hash
//! Algorithm", arXiv:1406.2294 (2014). Guava's `Hashing.consistentHash` is
//! the same function.
//!
//! How it works: a key's hash seeds a 64-bit LCG. The key sits in bucket `b`
//! and each step draws the next bucket `j > b` it would *jump* to as the
//! bucket count grows; the last `b` below `n` is the answer. With `n + 1`
//! buckets a key either stays or moves to bucket `n`, with probability
//! `1/(n+1)`: adding a bucket moves only the keys the new bucket takes, and
//! removing the last one moves only its keys.
//!
//! Placement depends on join order *by construction*: bucket `i` is the
//! `i`-th node given to [`Jump::new`] or appended by [`Jump::with_node`].
//! The same set of nodes in another order maps keys differently. Only the
//! last bucket can leave ([`crate::Memento`] removes any node); there are no
//! weights.
//!
//! Cost: O(ln n) expected LCG steps per lookup and no memory beyond the
//! bucket → node table (4 bytes per node).
//!
//! Replicas: draw 0 is the owner; draw `a >= 1` jumps with the key
//! [`crate::replica_key`]`(hash, a)`, output `a` of SplitMix64 seeded with the hash;
//! a draw that repeats a chosen bucket is skipped. After `8·n` draws (`n`
//! buckets) the rest comes from the buckets after the owner's, in bucket
//! order (wrapping), so asking for every node costs O(n ln n) draws at most
//! instead of a long coupon collection. The draw limit depends on `n` only,
//! so the picks are one sequence and `replicas(r)` is always a prefix of
//! `replicas(r + 1)`. Repeats are found in O(1) expected (a hash set in the
//! caller's buffer), so `r` replicas cost O(r) expected draws while
//! `r <= n/2`, and O(n ln n) for all `n`. Example, 3 buckets, 2 replicas:
//! draws of buckets 2, 2, 0 give the nodes of buckets `[2, 0]`.

use crate::Error;
use crate::algo::join_order::JoinOrder;
use crate::algo::params::{Params, Pinned, Registered};
use crate::node::{Node, NodeId, NodeTable};
use crate::placement::Placement;

/// The multiplier of the reference LCG.
const LCG_MULTIPLIER: u64 = 2_862_933_555_777_941_757;

/// The bucket in `0..buckets` for `key`, bit for bit as the reference C++
/// (and go-jump, and Guava's `consistentHash` with the long's bits as key).
///
/// The float order matters: the quotient `2^31 / ((key >> 33) + 1)` is
/// rounded first, then multiplied by `b + 1` and truncated, exactly as in
/// `JumpConsistentHash`. Worked step for key 1 at `b = 0`: the LCG gives
/// `2862933555777941758`, `>> 33` = 333289331, so
/// `j = floor(1 × 2^31 / 333289332) = floor(6.443...) = 6`: key 1 stays in
/// bucket 0 for up to 6 buckets and is in bucket 6 from 7 on.
///
/// `buckets = 0` has no answer; it returns 0 (never panics), and every
/// placement checks for emptiness first.
pub fn jump_consistent_hash(mut key: u64, buckets: u32) -> u32 {
    let n = i64::from(buckets);
    let (mut b, mut j) = (0i64, 0i64);
    while j < n {
        b = j;
        key = key.wrapping_mul(LCG_MULTIPLIER).wrapping_add(1);
        let quotient = (1u64 << 31) as f64 / ((key >> 33) + 1) as f64;
        // `as` saturates, so a product past i64::MAX still ends the loop.
        j = ((b + 1) as f64 * quotient) as i64;
    }
    b as u32
}

/// Jump hash over nodes in join order. Immutable; membership changes return
/// new snapshots.
#[derive(Debug, Clone, PartialEq)]
pub struct Jump {
    /// Bucket → node, in join order.
    table: JoinOrder,
}

impl Jump {
    /// Nodes in bucket order: the first is bucket 0. Every node must have
    /// weight 1 ([`Error::Unsupported`] otherwise).
    pub fn new(nodes: Vec<Node>) -> Result<Self, Error> {
        JoinOrder::new("jump", nodes).map(|table| Jump { table })
    }

    /// The bucket of `hash`; `None` without nodes.
    #[inline]
    pub fn bucket(&self, hash: u64) -> Option<u32> {
        let size = self.table.size();
        (size > 0).then(|| jump_consistent_hash(hash, size))
    }

    /// Bucket → node id, in join order.
    pub fn buckets(&self) -> &[NodeId] {
        self.table.buckets()
    }
}

impl Placement for Jump {
    /// The node that owns `hash`. O(ln N) expected loop steps, no memory
    /// read but the bucket's id.
    #[inline]
    fn owner(&self, hash: u64) -> Option<NodeId> {
        self.bucket(hash).and_then(|b| self.table.node(b))
    }

    /// Up to `n` distinct nodes for `hash`, the owner first (module docs).
    /// O(n · ln N) expected; O(n·N) at worst through the ordered fallback.
    fn replicas_into(&self, hash: u64, n: usize, out: &mut Vec<NodeId>) {
        self.table.replicas_into(hash, n, out, jump_consistent_hash);
    }

    /// The node table (name order) behind the ids.
    fn nodes(&self) -> &NodeTable {
        self.table.nodes()
    }

    /// One id per bucket.
    fn heap_bytes(&self) -> usize {
        self.table.heap_bytes()
    }

    /// Appends `node` as the new last bucket: only keys it takes move.
    fn with_node(&self, node: Node) -> Result<Self, Error> {
        self.table
            .with_node("jump", node)
            .map(|table| Jump { table })
    }

    /// Removes the last-joined node: only its keys move. Any other node is
    /// [`Error::Unsupported`].
    fn without_node(&self, name: &str) -> Result<Self, Error> {
        let reason =
            "jump hash can only remove the last bucket; use memento for arbitrary removals";
        let table = self.table.without_node("jump", reason, name)?;
        Ok(Jump { table })
    }
}

impl Registered for Jump {
    /// Its buckets follow join order: the file lists the nodes in it.
    fn pin(&self) -> Result<Pinned, Error> {
        Ok(Pinned {
            order: Some(self.buckets().to_vec()),
            ..Pinned::default()
        })
    }

    fn build(nodes: Vec<Node>, _: &Params) -> Result<Self, Error> {
        Self::new(nodes)
    }
}
