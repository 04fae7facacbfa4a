//! [`Buckets`]: one placement snapshot for every stateless bucket function,
//! the pure `(hash, n) -> bucket in 0..n` of `jumpback`
//! ([`crate::jump_back_hash`]), `binomial` ([`crate::binomial_hash`]) and
//! `fliphash` ([`crate::flip_hash`]).
//!
//! Not an algorithm itself: each algorithm's file holds its paper, its
//! function and a [`BucketFn`] naming them, and its public type is an alias
//! (`pub type JumpBack = Buckets<JumpBackFn>`). What they share is written
//! once here: the bucket → node table in join order ([`JoinOrder`]), the
//! lookup, jump's replica draw order and the membership rules.
//!
//! How it works: bucket `i` is the `i`-th node given to [`Buckets::new`] or
//! appended by a join; `owner(hash)` is the node of bucket
//! `F::bucket(hash, n)`. Only the last bucket can leave (its keys are the
//! only ones that move); every node weighs 1. Replicas are jump's draws
//! (`algo/buckets.rs`) answered by the same function.
//!
//! Cost: the function's per lookup (O(1) for all three), monomorphised and
//! inlined: no vtable, no allocation, one read of the table. 4 bytes per
//! node besides the node table; a join or leave copies the table, O(N).
//!
//! Quirk: `Debug` prints the algorithm's own type name
//! ([`BucketFn::TYPE_NAME`], e.g. `JumpBack { table: .. }`), as the three
//! separate types it replaces did.

use std::fmt;
use std::marker::PhantomData;

use crate::Error;
use crate::algo::join_order::{JoinOrder, LEAVE_LAST};
use crate::algo::params::{Params, Pinned, Registered};
use crate::node::{Node, NodeId, NodeTable};
use crate::placement::Placement;

/// A pure bucket function and its names: what a [`Buckets`] snapshot needs
/// of an algorithm. Implemented by an uninhabited marker type per
/// algorithm.
pub trait BucketFn {
    /// The registry name (`"jumpback"`), as error texts quote it.
    const NAME: &'static str;

    /// The public type's name (`"JumpBack"`), as `Debug` prints it.
    const TYPE_NAME: &'static str;

    /// The bucket in `0..buckets` of `hash` (`buckets >= 1`).
    fn bucket(hash: u64, buckets: u32) -> u32;
}

/// A stateless bucket function `F` over nodes in join order. Immutable;
/// membership changes return new snapshots.
pub struct Buckets<F: BucketFn> {
    table: JoinOrder,
    // `fn() -> F`: the snapshot holds no `F` (markers are uninhabited), so
    // it is `Send + Sync` whatever `F` is.
    function: PhantomData<fn() -> F>,
}

impl<F: BucketFn> Buckets<F> {
    fn with_table(table: JoinOrder) -> Self {
        Buckets {
            table,
            function: PhantomData,
        }
    }

    /// Nodes in bucket order: the first is bucket 0. Every node must have
    /// weight 1 ([`Error::Unsupported`] otherwise). O(N log N).
    pub fn new(nodes: Vec<Node>) -> Result<Self, Error> {
        JoinOrder::new(F::NAME, nodes).map(Self::with_table)
    }

    /// The bucket of `hash`; `None` without nodes. The function's cost:
    /// O(1) (expected for jumpback and fliphash).
    #[inline]
    pub fn bucket(&self, hash: u64) -> Option<u32> {
        let size = self.table.size();
        (size > 0).then(|| F::bucket(hash, size))
    }

    /// Bucket → node id, in join order.
    pub fn buckets(&self) -> &[NodeId] {
        self.table.buckets()
    }
}

impl<F: BucketFn> Placement for Buckets<F> {
    /// The node that owns `hash`. O(1) (expected for jumpback and
    /// fliphash), no allocation.
    #[inline]
    fn owner(&self, hash: u64) -> Option<NodeId> {
        self.bucket(hash).and_then(|b| self.table.node(b))
    }

    /// Up to `n` distinct nodes, the owner first (module docs). O(n)
    /// expected while `n <= N/2`; O(N) at worst through the fallback.
    fn replicas_into(&self, hash: u64, n: usize, out: &mut Vec<NodeId>) {
        self.table.replicas_into(hash, n, out, F::bucket);
    }

    fn nodes(&self) -> &NodeTable {
        self.table.nodes()
    }

    /// One id per bucket.
    fn heap_bytes(&self) -> usize {
        self.table.heap_bytes()
    }

    /// Appends `node` as the new last bucket: only keys it takes move. O(N).
    fn with_node(&self, node: Node) -> Result<Self, Error> {
        self.table.with_node(F::NAME, node).map(Self::with_table)
    }

    /// Removes the last-joined node: only its keys move. Any other node is
    /// [`Error::Unsupported`]. O(N).
    fn without_node(&self, name: &str) -> Result<Self, Error> {
        let table = self.table.without_node(F::NAME, LEAVE_LAST, name)?;
        Ok(Self::with_table(table))
    }
}

impl<F: BucketFn> Registered for Buckets<F> {
    fn build(nodes: Vec<Node>, _: &Params) -> Result<Self, Error> {
        Self::new(nodes)
    }

    /// Its buckets follow join order: the file lists the nodes in it.
    fn pin(&self) -> Result<Pinned, Error> {
        Ok(Pinned {
            order: Some(self.buckets().to_vec()),
            ..Pinned::default()
        })
    }
}

// Written out rather than derived: a derive would ask `F` for the trait
// too, and `Debug` would print `Buckets`.
impl<F: BucketFn> Clone for Buckets<F> {
    fn clone(&self) -> Self {
        Self::with_table(self.table.clone())
    }
}

impl<F: BucketFn> PartialEq for Buckets<F> {
    fn eq(&self, other: &Self) -> bool {
        self.table == other.table
    }
}

impl<F: BucketFn> fmt::Debug for Buckets<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(F::TYPE_NAME)
            .field("table", &self.table)
            .finish()
    }
}
