//! `Dx`: DxHash, pseudo-random probes of a fixed set of buckets.
//!
//! Paper: Dong & Wang, "DxHash: A Scalable Consistent Hash Based on the
//! Pseudo-Random Sequence", arXiv:2107.07930 (2021). Reference: SUPSI's
//! `DxEngine` (`SUPSI-DTI-ISIN/java-consistent-hashing-algorithms`, by the
//! MementoHash authors), bit for bit: `owner(h)` is its `getBucket` for a key
//! whose hash is `h`, its generator `java.util.Random` (`dx/java_random.rs`).
//! Why that one: no code by the DxHash authors turned up in our search, and
//! SUPSI's draws depend on the key hash only, so a 64-bit hash (what a
//! [`Placement`] receives) reproduces it exactly. Vectors:
//! `tests/fixtures/dx_vectors.txt`.
//!
//! How it works: `capacity` buckets, fixed at build; the first `n` work
//! (nodes in listed = join order). A key seeds a pseudo-random generator
//! with its hash and draws buckets in `0..capacity` until one works: each
//! key has its own fixed sequence of buckets, and owns the first working one.
//! Removing a bucket moves only its keys (each to its next working draw);
//! a join takes the last removed bucket back (LIFO; a never-used one when
//! none is removed) and exactly its keys return.
//!
//! Worked example, capacity 4, working {0, 1, 2}: a key whose sequence is
//! 3, 1, 0, ... skips 3 (never used) and lands on 1. Remove 1: it goes on
//! to 0. A join restores bucket 1 and the key returns to it.
//!
//! Cost: `capacity / n` draws expected per lookup (one multiply and a
//! table read each): 2 at the default capacity (twice the nodes), 20 with
//! 90 % of the buckets removed. O(capacity) per membership change (a new
//! snapshot). Memory: 4 bytes per bucket (bucket → node; the reference
//! keeps a bit set beside its own node list) plus 4 per removal.
//!
//! Quirks: placement depends on join order, removal history and `capacity`
//! (a new capacity moves keys; default twice the nodes, at least 256); a
//! join beyond capacity is [`Error::CapacityFull`]. A cluster file records
//! the removal history as the removals no join has undone, in order
//! (`removed`); [`Dx::with_removed`] replays them (`algo/removals.rs`).
//! Java's generator keeps 48 bits of the seed: hashes equal in their low
//! 48 bits share a bucket.
//! The draw loop ends while a node works (the generator's period covers
//! every bucket) but has no fixed bound: a very sparse table (few nodes in
//! a large capacity) is slow. No weights; zones are ignored.

mod java_random;

use java_random::JavaRandom;

use crate::Error;
use crate::algo::buckets::{check_weight, replica_draws};
use crate::algo::owners::Owners;
use crate::algo::params::{Param, Params, Pinned, Registered};
use crate::node::{Node, NodeId, NodeTable};
use crate::placement::Placement;

/// DxHash over nodes in join order. Immutable; membership changes return
/// new snapshots.
#[derive(Debug, Clone, PartialEq)]
pub struct Dx {
    nodes: NodeTable,
    /// Bucket → node.
    owners: Owners,
    /// Removals not yet undone, the last on top. With none, buckets
    /// `size..capacity` are the never-used ones and a join takes `size`.
    removed: Vec<u32>,
    size: u32,
}

impl Dx {
    /// `nodes` on buckets `0..n` of `capacity` (at least `n`; 0 for the
    /// default). Every node must have weight 1 ([`Error::Unsupported`]
    /// otherwise).
    pub fn new(nodes: Vec<Node>, capacity: u32) -> Result<Self, Error> {
        Self::with_removed(nodes, capacity, &[])
    }

    /// `nodes` in bucket order on the buckets of `0..nodes + removed` that
    /// `removed` leaves out, after removing those buckets in the order
    /// given from a build over all of them: the snapshot any history of
    /// joins and leaves with these pending removals produces
    /// (`algo/removals.rs`). `capacity` as [`Dx::new`]'s, for every bucket
    /// in use (0: twice that, at least 256). Refuses entries out of range
    /// or repeated, a list that removes every bucket
    /// ([`Error::InvalidLayout`]) and a capacity below the buckets in use.
    /// O(capacity + m log m).
    pub fn with_removed(nodes: Vec<Node>, capacity: u32, removed: &[u32]) -> Result<Self, Error> {
        let (table, owners) = Owners::build("dx", &nodes, capacity, removed)?;
        let mut dx = Dx {
            owners,
            nodes: table,
            removed: Vec::new(),
            size: (nodes.len() + removed.len()) as u32,
        };
        for &b in removed {
            dx.drop_bucket(b);
        }
        Ok(dx)
    }

    /// The removals a join has not undone, in the order they happened
    /// (the last is the next bucket [`Dx::with_node`] restores).
    pub fn removal_order(&self) -> &[u32] {
        &self.removed
    }

    /// The working bucket of `hash`; `None` without nodes.
    pub fn bucket(&self, hash: u64) -> Option<u32> {
        if self.size == 0 {
            return None;
        }
        let mut random = JavaRandom::new(hash);
        loop {
            let b = random.next_int(self.capacity());
            if self.owners.is_working(b) {
                return Some(b);
            }
        }
    }

    /// The fixed number of buckets, working or not.
    pub fn capacity(&self) -> u32 {
        self.owners.capacity()
    }

    /// Removals a join has not undone yet (a cluster file lists them as
    /// `removed`).
    pub fn removed_count(&self) -> usize {
        self.removed.len()
    }

    /// The expected work of one `owner` call, in draws: `capacity / n` for
    /// `n` working nodes (each draw hits a working bucket with probability
    /// `n / capacity`, whatever the order of removals), infinite without
    /// nodes. O(1): for a caller (the CLI's `plan`) to refuse up front what
    /// it cannot do quickly.
    pub fn expected_steps(&self) -> f64 {
        f64::from(self.capacity()) / self.nodes.len() as f64
    }

    /// Node of each working bucket, in bucket order.
    pub fn bucket_order(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.owners.working()
    }

    /// Bucket `b` stops working. The reference pushes every removal; the
    /// last bucket of an unbroken range would come back first anyway (it
    /// is `size`), so leaving it implied keeps the state of a fresh build.
    fn drop_bucket(&mut self, b: u32) {
        self.size -= 1;
        if !(self.removed.is_empty() && b == self.size) {
            self.removed.push(b);
        }
    }

    fn node_of(&self, bucket: u32) -> Option<NodeId> {
        self.owners.get(bucket)
    }
}

impl Placement for Dx {
    /// The node that owns `hash`: `capacity / N` draws expected.
    #[inline]
    fn owner(&self, hash: u64) -> Option<NodeId> {
        self.bucket(hash).and_then(|b| self.node_of(b))
    }

    /// Up to `n` distinct working nodes, the owner first, drawn as
    /// [`crate::Jump`]'s replicas are; the draw limit depends on the
    /// capacity only, so `replicas(r)` is a prefix of `replicas(r + 1)`.
    fn replicas_into(&self, hash: u64, n: usize, out: &mut Vec<NodeId>) {
        let want = n.min(self.nodes.len());
        let size = self.capacity();
        replica_draws(
            hash,
            want,
            size,
            out,
            |h| self.bucket(h),
            |b| self.node_of(b),
        );
    }

    fn nodes(&self) -> &NodeTable {
        &self.nodes
    }

    /// The bucket → node map and the removal stack.
    fn heap_bytes(&self) -> usize {
        self.owners.heap_bytes() + self.removed.capacity() * std::mem::size_of::<u32>()
    }

    /// Adds `node` on the last removed bucket (else the first never-used
    /// one): only keys it takes move. [`Error::CapacityFull`] when every
    /// bucket works.
    fn with_node(&self, node: Node) -> Result<Self, Error> {
        check_weight("dx", &node)?;
        let name = node.name.clone();
        let (nodes, at) = self.nodes.with(node)?;
        if self.size == self.capacity() {
            return Err(Error::CapacityFull {
                algorithm: "dx",
                capacity: self.capacity(),
                node: name,
            });
        }
        let mut next = self.clone();
        let b = next.removed.pop().unwrap_or(self.size);
        next.nodes = nodes;
        next.size += 1;
        next.owners.join(b, at);
        Ok(next)
    }

    /// Removes the node called `name`, wherever it is: only its keys move.
    fn without_node(&self, name: &str) -> Result<Self, Error> {
        let (nodes, at) = self.nodes.without(name)?;
        let Some(b) = self.owners.bucket_of(at) else {
            return Err(Error::UnknownNode { name: name.into() });
        };
        let mut next = self.clone();
        next.nodes = nodes;
        next.drop_bucket(b);
        next.owners.leave(b, at);
        Ok(next)
    }
}

impl Registered for Dx {
    /// Its bucket order, capacity and the buckets removed and not taken back.
    fn pin(&self) -> Result<Pinned, Error> {
        Ok(Pinned {
            order: Some(self.bucket_order().collect()),
            capacity: Some(self.capacity()),
            removed: self.removal_order().to_vec(),
            ..Pinned::default()
        })
    }

    fn build(nodes: Vec<Node>, params: &Params) -> Result<Self, Error> {
        let capacity = params.capacity_for("dx", nodes.len())?;
        Self::new(nodes, capacity)
    }

    fn replay(nodes: Vec<Node>, params: &Params, removed: &[u32]) -> Result<Self, Error> {
        Self::with_removed(nodes, params.capacity, removed)
    }

    const REMOVES_ANY: bool = true;

    const READS: &'static [Param] = &[Param::Capacity];
}
