//! `Ring`: the Karger ring with virtual nodes (the seed recipe).
//!
//! Paper: Karger, Lehman, Leighton, Panigrahy, Levine, Lewin, "Consistent
//! Hashing and Random Trees", STOC 1997; virtual nodes and replica lists as in
//! DeCandia et al., "Dynamo", SOSP 2007.
//!
//! How it works: node `N` of weight `w` gets `round(vnodes * w)` points (at
//! least one) at `hash("N#0")`, `hash("N#1")`, ... A key belongs to the first
//! point `>=` its hash, wrapping past the largest point to the first. Points
//! that are equal are ordered by node name, so ties never depend on insertion
//! order. With the `md5` hash and integer weights this is the Python
//! `ConsistentHashRing` of the seed article bit for bit: its list of
//! `(point, name)` tuples sorts exactly like our `(point, id)` pairs because
//! ids are assigned in name order (Python compares `str` by code point, which
//! is UTF-8 byte order).
//!
//! A node's points depend only on its own name and weight, so adding a node
//! moves keys only to it and removing one moves only its keys (monotonicity).
//!
//! Cost: `P` points take 12 bytes each (`u64` point + `u32` owner) plus a
//! bucket index of at most 4 bytes per point. Lookup hashes the key, reads
//! one index entry and searches a bucket holding about one point: O(1)
//! expected. Building sorts by bucket in O(P); adding or removing a node
//! merges sorted lists in O(P) without rehashing anyone else.
//!
//! Quirks: weights are rounded to whole points, so a weight below
//! `0.5 / vnodes` still gets one point. Replica walks are O(points visited),
//! which is small unless a node with very few points is asked for.

use crate::hash::{KeyHasher, StableHash};
use crate::node::{Node, NodeId, NodeTable};
use crate::{Error, MAX_POINTS, MAX_VNODES};

mod index;
mod stats;

pub use stats::{NodeStats, RingStats};

use index::BucketIndex;

/// Default virtual nodes per unit of weight (ketama's 160).
pub const DEFAULT_VNODES: u32 = 160;

/// An immutable ring. Build it with [`Ring::builder`]; change membership with
/// [`Ring::with_node`] / [`Ring::without_node`], which return new snapshots.
#[derive(Debug, Clone)]
pub struct Ring<H = StableHash> {
    hasher: H,
    vnodes: u32,
    nodes: NodeTable,
    /// Sorted by `(point, owner)`.
    points: Vec<u64>,
    owners: Vec<NodeId>,
    index: BucketIndex,
}

/// Collects the settings and nodes of a [`Ring`]; nothing is checked until
/// [`RingBuilder::build`].
#[derive(Debug, Clone)]
pub struct RingBuilder<H = StableHash> {
    hasher: H,
    vnodes: u32,
    nodes: Vec<Node>,
}

impl Ring {
    /// A builder with the defaults: `xxh3`, [`DEFAULT_VNODES`], no nodes.
    pub fn builder() -> RingBuilder {
        RingBuilder {
            hasher: StableHash::default(),
            vnodes: DEFAULT_VNODES,
            nodes: Vec::new(),
        }
    }
}

impl<H: KeyHasher> RingBuilder<H> {
    /// Uses another hash for points and keys.
    pub fn hasher<H2: KeyHasher>(self, hasher: H2) -> RingBuilder<H2> {
        RingBuilder {
            hasher,
            vnodes: self.vnodes,
            nodes: self.nodes,
        }
    }

    /// Virtual nodes per unit of weight.
    pub fn vnodes(mut self, vnodes: u32) -> Self {
        self.vnodes = vnodes;
        self
    }

    /// Adds one node.
    pub fn node(mut self, node: Node) -> Self {
        self.nodes.push(node);
        self
    }

    /// Adds nodes.
    pub fn nodes(mut self, nodes: impl IntoIterator<Item = Node>) -> Self {
        self.nodes.extend(nodes);
        self
    }

    /// Validates everything and builds the ring.
    pub fn build(self) -> Result<Ring<H>, Error> {
        let table = NodeTable::new(self.nodes)?;
        Ring::from_table(table, self.vnodes, self.hasher)
    }
}

impl<H: KeyHasher> Ring<H> {
    /// Builds a ring over an already validated node table.
    pub fn from_table(nodes: NodeTable, vnodes: u32, hasher: H) -> Result<Self, Error> {
        check_vnodes(vnodes)?;
        let counts: Vec<u64> = nodes.iter().map(|n| point_count(vnodes, n.weight)).collect();
        let total: u64 = counts.iter().sum();
        if total > MAX_POINTS {
            return Err(Error::TooManyPoints { points: total });
        }
        let mut pairs = Vec::with_capacity(total as usize);
        for (id, (node, &count)) in nodes.iter().zip(&counts).enumerate() {
            node_points(&hasher, &node.name, count, id as NodeId, &mut pairs);
        }
        let (points, owners) = index::sort_pairs(pairs);
        Ok(Ring {
            index: BucketIndex::new(&points),
            hasher,
            vnodes,
            nodes,
            points,
            owners,
        })
    }

    /// A new snapshot with `node` added. Other nodes keep every point, so the
    /// only keys that move are those the new node takes.
    pub fn with_node(&self, node: Node) -> Result<Self, Error>
    where
        H: Clone,
    {
        let (nodes, at) = self.nodes.with(node)?;
        let added = nodes.get(at).map_or(1, |n| point_count(self.vnodes, n.weight));
        let total = self.points.len() as u64 + added;
        if total > MAX_POINTS {
            return Err(Error::TooManyPoints { points: total });
        }
        let mut fresh = Vec::with_capacity(added as usize);
        node_points(&self.hasher, nodes.name(at), added, at, &mut fresh);
        fresh.sort_unstable();
        // Ids at or above the new node's shift up by one (the table is in
        // name order), then the two sorted lists merge in one pass.
        let old = self.iter().map(|(p, o)| (p, o + u32::from(o >= at)));
        let (points, owners) = merge(old, fresh.into_iter(), total as usize);
        Ok(self.snapshot(nodes, points, owners))
    }

    /// A new snapshot without the node called `name`: only its keys move, to
    /// the next point clockwise of each of its points.
    pub fn without_node(&self, name: &str) -> Result<Self, Error>
    where
        H: Clone,
    {
        let (nodes, at) = self.nodes.without(name)?;
        let (points, owners) = self
            .iter()
            .filter(|&(_, o)| o != at)
            .map(|(p, o)| (p, o - u32::from(o > at)))
            .unzip();
        Ok(self.snapshot(nodes, points, owners))
    }

    fn snapshot(&self, nodes: NodeTable, points: Vec<u64>, owners: Vec<NodeId>) -> Self
    where
        H: Clone,
    {
        Ring {
            index: BucketIndex::new(&points),
            hasher: self.hasher.clone(),
            vnodes: self.vnodes,
            nodes,
            points,
            owners,
        }
    }

    /// The hash of `key` with this ring's hasher.
    #[inline]
    pub fn hash(&self, key: &[u8]) -> u64 {
        self.hasher.hash(key)
    }

    /// The node that owns `hash`: the owner of the first point `>= hash`,
    /// wrapping. `None` only for a ring without nodes.
    #[inline]
    pub fn owner(&self, hash: u64) -> Option<NodeId> {
        self.successor(hash).map(|i| self.owners[i])
    }

    /// The name of the node that owns `key`.
    #[inline]
    pub fn locate(&self, key: impl AsRef<[u8]>) -> Option<&str> {
        let id = self.owner(self.hash(key.as_ref()))?;
        Some(self.nodes.name(id))
    }

    /// The first `n` distinct nodes clockwise from `hash` (Dynamo's preference
    /// list, the seed's `get_nodes`), written into `out` (cleared first). With
    /// `n` above the node count, every node. Allocates only if `out` grows.
    pub fn replicas_into(&self, hash: u64, n: usize, out: &mut Vec<NodeId>) {
        out.clear();
        let Some(start) = self.successor(hash) else {
            return;
        };
        let want = n.min(self.nodes.len());
        for &owner in self.clockwise(start) {
            if out.len() == want {
                break;
            }
            if !out.contains(&owner) {
                out.push(owner);
            }
        }
    }

    /// Like [`Ring::replicas_into`], but first takes nodes from zones not yet
    /// used (clockwise), and only when every zone is used fills the rest with
    /// the remaining nodes in clockwise order. Nodes without a zone count as
    /// zones of their own, so without zones this equals `replicas_into`.
    pub fn zoned_replicas_into(&self, hash: u64, n: usize, out: &mut Vec<NodeId>) {
        out.clear();
        let Some(start) = self.successor(hash) else {
            return;
        };
        let want = n.min(self.nodes.len());
        let distinct_zones = want.min(self.nodes.zone_count());
        for &owner in self.clockwise(start) {
            if out.len() == distinct_zones {
                break;
            }
            let zone = self.nodes.zone_id(owner);
            if !out.iter().any(|&o| self.nodes.zone_id(o) == zone) {
                out.push(owner);
            }
        }
        for &owner in self.clockwise(start) {
            if out.len() == want {
                break;
            }
            if !out.contains(&owner) {
                out.push(owner);
            }
        }
    }

    /// Names of the first `n` distinct nodes clockwise from `key`.
    pub fn replicas(&self, key: impl AsRef<[u8]>, n: usize) -> Vec<&str> {
        let mut ids = Vec::with_capacity(n.min(self.nodes.len()));
        self.replicas_into(self.hash(key.as_ref()), n, &mut ids);
        ids.into_iter().map(|id| self.nodes.name(id)).collect()
    }

    /// Points per node, exact ownership shares and their spread.
    pub fn stats(&self) -> RingStats {
        RingStats::new(&self.nodes, &self.points, &self.owners)
    }

    /// Index of the first point `>= hash`, wrapping to 0.
    #[inline]
    fn successor(&self, hash: u64) -> Option<usize> {
        if self.points.is_empty() {
            return None;
        }
        let i = self.index.lower_bound(&self.points, hash);
        Some(if i == self.points.len() { 0 } else { i })
    }

    /// Owners from `start` once around the ring.
    fn clockwise(&self, start: usize) -> impl Iterator<Item = &NodeId> {
        self.owners[start..].iter().chain(&self.owners[..start])
    }
}

impl<H> Ring<H> {
    /// The node table (names, weights, zones) behind the ids.
    pub fn nodes(&self) -> &NodeTable {
        &self.nodes
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True for a ring without nodes (every lookup returns `None`).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Virtual nodes per unit of weight.
    pub fn vnodes(&self) -> u32 {
        self.vnodes
    }

    /// The hasher of points and keys.
    pub fn hasher(&self) -> &H {
        &self.hasher
    }

    /// Number of points on the ring.
    pub fn point_count(&self) -> usize {
        self.points.len()
    }

    /// `(point, owner)` in ring order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (u64, NodeId)> + '_ {
        self.points.iter().copied().zip(self.owners.iter().copied())
    }

    /// Heap bytes held by points, owners and the index (the node table aside).
    pub fn heap_bytes(&self) -> usize {
        self.points.capacity() * 8 + self.owners.capacity() * 4 + self.index.heap_bytes()
    }
}

/// Points of a node: `round(vnodes * weight)`, at least one. Exact for
/// integer weights, so weight 2 at 100 vnodes is the seed's 200 points.
pub fn point_count(vnodes: u32, weight: f64) -> u64 {
    (f64::from(vnodes) * weight).round().max(1.0) as u64
}

fn check_vnodes(vnodes: u32) -> Result<(), Error> {
    if vnodes == 0 || vnodes > MAX_VNODES {
        return Err(Error::InvalidVnodes {
            vnodes: vnodes.into(),
        });
    }
    Ok(())
}

/// Appends `(hash("name#i"), id)` for `i` in `0..count`, reusing one buffer.
fn node_points<H: KeyHasher>(
    hasher: &H,
    name: &str,
    count: u64,
    id: NodeId,
    out: &mut Vec<(u64, NodeId)>,
) {
    let mut buf = Vec::with_capacity(name.len() + 21);
    buf.extend_from_slice(name.as_bytes());
    buf.push(b'#');
    let prefix = buf.len();
    for i in 0..count {
        buf.truncate(prefix);
        push_decimal(&mut buf, i);
        out.push((hasher.hash(&buf), id));
    }
}

/// Appends the decimal digits of `n` (what Python's f-string prints).
fn push_decimal(buf: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[at..]);
}

/// Merges two sequences sorted by `(point, owner)`.
fn merge(
    a: impl Iterator<Item = (u64, NodeId)>,
    b: impl Iterator<Item = (u64, NodeId)>,
    len: usize,
) -> (Vec<u64>, Vec<NodeId>) {
    let mut points = Vec::with_capacity(len);
    let mut owners = Vec::with_capacity(len);
    let (mut a, mut b) = (a.peekable(), b.peekable());
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) if x <= y => a.next(),
            (Some(_), Some(_)) => b.next(),
            (Some(_), None) => a.next(),
            (None, _) => b.next(),
        };
        let Some((point, owner)) = next else { break };
        points.push(point);
        owners.push(owner);
    }
    (points, owners)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_matches_format() {
        for n in [0, 7, 10, 99, 100, 12345, u64::MAX] {
            let mut buf = Vec::new();
            push_decimal(&mut buf, n);
            assert_eq!(buf, n.to_string().into_bytes());
        }
    }

    #[test]
    fn point_counts_round() {
        assert_eq!(point_count(100, 2.0), 200);
        assert_eq!(point_count(100, 0.004), 1);
        assert_eq!(point_count(100, 0.125), 13);
        assert_eq!(point_count(160, 1.5), 240);
    }

    #[test]
    fn empty_ring_answers_none() {
        let ring = Ring::builder().build().expect("empty ring");
        assert_eq!(ring.owner(0), None);
        assert_eq!(ring.locate("k"), None);
        let mut out = vec![7];
        ring.replicas_into(1, 3, &mut out);
        assert!(out.is_empty());
    }
}
