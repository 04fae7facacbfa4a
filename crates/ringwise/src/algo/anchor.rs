//! `Anchor`: AnchorHash, a fixed set of buckets any of which can leave.
//!
//! Paper: Mendelson, Vargaftik, Barabash, Lorenz, Keslassy, Orda,
//! "AnchorHash: A Scalable Consistent Hash", arXiv:1812.09674 (IEEE/ACM
//! ToN 2021). Reference: the authors' own C++, `AnchorHashQre`
//! (`anchorhash/cpp-anchorhash`, MIT), bit for bit: `owner(h)` is its
//! `ComputeBucket(h, 0)`, with the same CRC-32C (`crc32q`) and the same
//! removal and restore updates. Why that one: it is the authors', it takes
//! a 64-bit key, which is what a [`Placement`] receives (SUPSI's Java port
//! rehashes through a string hash of its own byte layout, and translates a
//! self-hit differently). Vectors: `tests/fixtures/anchor_vectors.txt`.
//!
//! How it works: the *anchor* is `capacity` buckets, fixed at build. The
//! first `n` work (nodes in listed = join order), the rest count as removed
//! in order `capacity-1, ..., n`. Per bucket `b`: `A[b]` is 0 while it works,
//! else the working size right after it left; `K[b]` the bucket that took
//! its place (itself while working); `W`/`L`, the working buckets as a
//! compact array and each bucket's last position in it (kept only for
//! membership changes). Removing `b` moves the last working position's
//! bucket `W[N-1]` into `b`'s position, records `K[b] = W[N-1]`,
//! `A[b] = N-1`, and pushes `b` on a stack; a join pops the stack (LIFO) and
//! undoes exactly that, so leave-then-join restores every owner.
//!
//! Lookup of `h`: `bs = crc32c(h, 0)`, `b = bs mod capacity`; while `A[b] > 0`
//! (removed): `bs = crc32c(h - bs, bs)`, `c = bs mod A[b]` (one of as many
//! buckets as worked when `b` left); if `A[c] < A[b]` (`c` worked then)
//! `b = c`, else follow `K` from `c` (from `K[b]` if `c = b`) while the bucket
//! left no later than `b` did (`updates.rs`: the membership changes).
//!
//! Worked example, capacity 4, working {0, 1, 2} (A = [0, 0, 0, 3]); remove
//! 0: N = 2, `W[0] = W[2] = 2`, so `K[0] = 2`, `A[0] = 2`. A key with first
//! bucket 3 rehashes into `0..3`; landing on 0, `A[0] = 2 < 3` means 0 still
//! worked when 3 left, so b = 0; 0 is removed (`A[0] = 2`): rehash into
//! `0..2`; landing on 1 (working): the answer is 1. A key landing on 0
//! again would follow `K[0] = 2`.
//!
//! Cost: lookup is O(1 + ln(capacity / n)) expected CRC steps (the paper's
//! bound), each a few table reads; O(capacity) per membership change (a new
//! snapshot copies the arrays). Memory: 20 bytes per bucket (`A` and `K`
//! side by side, `W`, `L`, the bucket → node map) plus 4 per removal.
//!
//! Quirks: placement depends on join order, removal history and
//! `capacity`: a new capacity moves keys, so fix it with room to grow
//! (`capacity = ...`; default twice the nodes, at least 256). A join
//! beyond it is [`Error::CapacityFull`]. A cluster file records the
//! removal history as the removals no join has undone, in order
//! (`removed`); [`Anchor::with_removed`] replays them on a build over every
//! bucket in use, which yields the same `A`, `K`, `W`, `L` (a join undoes
//! the last removal exactly; `algo/removals.rs`). The first hash keeps 32
//! bits of the key hash (the reference's CRC); no weights; zones are
//! ignored.

mod fast_mod;
mod updates;

use fast_mod::{fast_mod, magic};

use crate::Error;
use crate::algo::buckets::{check_weight, replica_draws};
use crate::algo::owners::Owners;
use crate::algo::params::{Param, Params, Pinned, Registered};
use crate::hash::crc32c_u64;
use crate::node::{Node, NodeId, NodeTable};
use crate::placement::Placement;

/// The lookup's per-bucket state, side by side for one cache line read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cell {
    /// 0 while working; else the working size right after the removal.
    a: u32,
    /// The replacement (the bucket itself while working).
    k: u32,
}

/// AnchorHash over nodes in join order. Immutable; membership changes
/// return new snapshots.
#[derive(Debug, Clone, PartialEq)]
pub struct Anchor {
    nodes: NodeTable,
    cells: Vec<Cell>,
    /// The working buckets as a compact array (positions `0..size`).
    w: Vec<u32>,
    /// Each bucket's last position in `w`.
    l: Vec<u32>,
    /// Bucket → node.
    owners: Owners,
    /// Removals not yet undone, the last on top. Below them lie, implied,
    /// the never-used buckets `fresh..capacity` (`fresh` on top).
    removed: Vec<u32>,
    fresh: u32,
    size: u32,
    /// `⌈2^64 / capacity⌉`, so the first `mod capacity` is two
    /// multiplications instead of a division (`fast_mod`).
    magic: u64,
}

impl Anchor {
    /// `nodes` on buckets `0..n` of `capacity` (at least `n`). Every node
    /// must have weight 1 ([`Error::Unsupported`] otherwise).
    pub fn new(nodes: Vec<Node>, capacity: u32) -> Result<Self, Error> {
        Self::with_removed(nodes, capacity, &[])
    }

    /// The state of a build whose buckets `0..n` work: buckets `n..` are
    /// removed in order capacity-1 down to n, each when the working size
    /// was its own number: `A[b] = b`, `K[b] = b`.
    fn fresh(nodes: NodeTable, owners: Owners, n: u32) -> Self {
        let capacity = owners.capacity();
        let cells = (0..capacity)
            .map(|b| Cell {
                a: if b < n { 0 } else { b },
                k: b,
            })
            .collect();
        Anchor {
            nodes,
            cells,
            w: (0..capacity).collect(),
            l: (0..capacity).collect(),
            owners,
            removed: Vec::new(),
            fresh: n,
            size: n,
            magic: magic(capacity),
        }
    }

    /// `nodes` in bucket order on the buckets of `0..nodes + removed` that
    /// `removed` leaves out, after removing those buckets in the order
    /// given from a build over all of them: the snapshot any history of
    /// joins and leaves with these pending removals produces
    /// (`algo/removals.rs`). `capacity` as [`Anchor::new`]'s, for every
    /// bucket in use (0: twice that, at least 256). Refuses entries out of
    /// range or repeated, a list that removes every bucket
    /// ([`Error::InvalidLayout`]) and a capacity below the buckets in use.
    /// O(capacity + m log m).
    pub fn with_removed(nodes: Vec<Node>, capacity: u32, removed: &[u32]) -> Result<Self, Error> {
        let (table, owners) = Owners::build("anchor", &nodes, capacity, removed)?;
        // Every bucket in use works, then the pending removals happen.
        let total = (nodes.len() + removed.len()) as u32;
        let mut anchor = Self::fresh(table, owners, total);
        for &b in removed {
            anchor.remove_bucket(b);
        }
        Ok(anchor)
    }

    /// The removals a join has not undone, in the order they happened
    /// (the last is the next bucket [`Anchor::with_node`] restores).
    pub fn removal_order(&self) -> &[u32] {
        &self.removed
    }

    /// The working bucket of `hash`; `None` without nodes.
    pub fn bucket(&self, hash: u64) -> Option<u32> {
        if self.size == 0 {
            return None;
        }
        let mut bs = crc32c_u64(hash, 0);
        let mut b = fast_mod(bs, self.capacity(), self.magic);
        loop {
            let ab = self.cells[b as usize].a;
            if ab == 0 {
                return Some(b);
            }
            // The reference shifts key and seed by the last CRC ("for
            // better balance - avoid patterns").
            bs = crc32c_u64(hash.wrapping_sub(u64::from(bs)), u64::from(bs));
            let c = bs % ab;
            b = if self.cells[c as usize].a < ab {
                c
            } else {
                self.translate(b, c)
            };
        }
    }

    /// Where a key of removed bucket `i` that rehashed onto `j` (which left
    /// no earlier than `i`) goes: along `K` until a bucket that left before
    /// `i` (or works). A self-hit takes `K[i]` directly, as the reference.
    fn translate(&self, i: u32, j: u32) -> u32 {
        if i == j {
            return self.cells[i as usize].k;
        }
        let ai = self.cells[i as usize].a;
        let mut b = j;
        while ai <= self.cells[b as usize].a {
            b = self.cells[b as usize].k;
        }
        b
    }

    /// The fixed number of buckets, working or not.
    pub fn capacity(&self) -> u32 {
        self.cells.len() as u32
    }

    /// Removals a join has not undone yet (holes in the bucket range; a
    /// cluster file lists them as `removed`).
    pub fn removed_count(&self) -> usize {
        self.removed.len()
    }

    /// The expected work of one `owner` call, in CRC rehash steps: `1 +
    /// ln(capacity / n)` for `n` working nodes (the paper's bound, whatever
    /// the order of removals), infinite without nodes. O(1): for a caller
    /// (the CLI's `plan`) to refuse up front what it cannot do quickly.
    pub fn expected_steps(&self) -> f64 {
        let working = self.nodes.len() as f64;
        1.0 + (f64::from(self.capacity()) / working).ln()
    }

    /// Node of each working bucket, in bucket order.
    pub fn bucket_order(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.owners.working()
    }

    fn node_of(&self, bucket: u32) -> Option<NodeId> {
        self.owners.get(bucket)
    }
}

impl Placement for Anchor {
    /// The node that owns `hash`. O(1 + ln(capacity / N)) expected.
    #[inline]
    fn owner(&self, hash: u64) -> Option<NodeId> {
        self.bucket(hash).and_then(|b| self.node_of(b))
    }

    /// Up to `n` distinct working nodes, the owner first, drawn as
    /// [`crate::Jump`]'s replicas are (lookups of `replica_key(hash, a)`,
    /// then the buckets after the owner's); the draw limit depends on the
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

    /// The per-bucket arrays and the removal stack.
    fn heap_bytes(&self) -> usize {
        self.cells.capacity() * std::mem::size_of::<Cell>()
            + (self.w.capacity() + self.l.capacity() + self.removed.capacity())
                * std::mem::size_of::<u32>()
            + self.owners.heap_bytes()
    }

    /// Adds `node` on the last removed bucket: only keys it takes move.
    /// [`Error::CapacityFull`] when every bucket works.
    fn with_node(&self, node: Node) -> Result<Self, Error> {
        check_weight("anchor", &node)?;
        let name = node.name.clone();
        let (nodes, at) = self.nodes.with(node)?;
        let mut next = self.clone();
        let Some(b) = next.restore_bucket() else {
            return Err(Error::CapacityFull {
                algorithm: "anchor",
                capacity: self.capacity(),
                node: name,
            });
        };
        next.nodes = nodes;
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
        next.remove_bucket(b);
        next.owners.leave(b, at);
        Ok(next)
    }
}

impl Registered for Anchor {
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
        let capacity = params.capacity_for("anchor", nodes.len())?;
        Self::new(nodes, capacity)
    }

    fn replay(nodes: Vec<Node>, params: &Params, removed: &[u32]) -> Result<Self, Error> {
        Self::with_removed(nodes, params.capacity, removed)
    }

    const REMOVES_ANY: bool = true;

    const READS: &'static [Param] = &[Param::Capacity];
}
