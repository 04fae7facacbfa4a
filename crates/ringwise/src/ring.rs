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
//! Cost: `P` points take 12 bytes each (`u64` point + `u32` owner, packed)
//! plus a bucket index of at most 4 bytes per point. Lookup hashes the key,
//! reads one index entry and searches a bucket of one or two entries: O(1)
//! expected. Building sorts by bucket in O(P); adding or removing a node
//! merges sorted lists in O(P) without rehashing anyone else.
//!
//! Quirks: weights are rounded to whole points, so a weight below
//! `0.5 / vnodes` still gets one point. Replica walks are O(points visited),
//! which is small unless a node with very few points is asked for.

use crate::hash::{KeyHasher, StableHash};
use crate::node::{Node, NodeId, NodeTable};
use crate::placement::{Placement, delegate_lookups};
use crate::{Error, MAX_POINTS, MAX_VNODES};

mod index;
mod stats;

pub use stats::{NodeStats, RingStats};

use index::{BucketIndex, Entry};

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
    entries: Vec<Entry>,
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
        let counts: Vec<u64> = nodes
            .iter()
            .map(|n| point_count(vnodes, n.weight))
            .collect();
        let total = counts.iter().fold(0u64, |sum, &c| sum.saturating_add(c));
        if total > MAX_POINTS {
            return Err(Error::TooManyPoints { points: total });
        }
        let mut entries = Vec::with_capacity(total as usize);
        for (id, (node, &count)) in nodes.iter().zip(&counts).enumerate() {
            node_points(&hasher, &node.name, count, id as NodeId, &mut entries);
        }
        let (entries, index) = index::sort_entries(entries);
        Ok(Ring {
            index,
            hasher,
            vnodes,
            nodes,
            entries,
        })
    }

    /// A new snapshot with `node` added. Other nodes keep every point, so the
    /// only keys that move are those the new node takes.
    pub fn with_node(&self, node: Node) -> Result<Self, Error>
    where
        H: Clone,
    {
        let (nodes, at) = self.nodes.with(node)?;
        let added = nodes
            .get(at)
            .map_or(1, |n| point_count(self.vnodes, n.weight));
        let total = self.entries.len() as u64 + added;
        if total > MAX_POINTS {
            return Err(Error::TooManyPoints { points: total });
        }
        let mut fresh = Vec::with_capacity(added as usize);
        node_points(&self.hasher, nodes.name_of(at), added, at, &mut fresh);
        fresh.sort_unstable();
        let entries = merge(&self.entries, &fresh, at);
        let changed: Vec<u64> = fresh.iter().map(|e| e.point).collect();
        let index = self.index.adjusted(&entries, &changed, true);
        Ok(self.snapshot(nodes, entries, index))
    }

    /// A new snapshot without the node called `name`: only its keys move, to
    /// the next point clockwise of each of its points.
    pub fn without_node(&self, name: &str) -> Result<Self, Error>
    where
        H: Clone,
    {
        let (nodes, at) = self.nodes.without(name)?;
        let gone = self
            .nodes
            .get(at)
            .map_or(0, |n| point_count(self.vnodes, n.weight));
        let mut entries = Vec::with_capacity(self.entries.len() - gone as usize);
        let mut changed = Vec::with_capacity(gone as usize);
        for e in &self.entries {
            if e.owner == at {
                changed.push(e.point);
            } else {
                // Ids above the removed node's shift down by one.
                let owner = e.owner - u32::from(e.owner > at);
                entries.push(Entry { owner, ..*e });
            }
        }
        let index = self.index.adjusted(&entries, &changed, false);
        Ok(self.snapshot(nodes, entries, index))
    }

    fn snapshot(&self, nodes: NodeTable, entries: Vec<Entry>, index: BucketIndex) -> Self
    where
        H: Clone,
    {
        Ring {
            index,
            hasher: self.hasher.clone(),
            vnodes: self.vnodes,
            nodes,
            entries,
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
        self.successor(hash).map(|i| self.entries[i].owner)
    }

    /// The name of the node that owns `key`.
    #[inline]
    pub fn locate(&self, key: impl AsRef<[u8]>) -> Option<&str> {
        let id = self.owner(self.hash(key.as_ref()))?;
        Some(self.nodes.name_of(id))
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
        for owner in self.clockwise(start) {
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
        for owner in self.clockwise(start) {
            if out.len() == distinct_zones {
                break;
            }
            let zone = self.nodes.zone_of(owner);
            if !out.iter().any(|&o| self.nodes.zone_of(o) == zone) {
                out.push(owner);
            }
        }
        for owner in self.clockwise(start) {
            if out.len() == want {
                break;
            }
            if !out.contains(&owner) {
                out.push(owner);
            }
        }
    }

    /// The owner of each hash, into `out` (cleared first; empty for an empty
    /// ring). Ascending hashes are swept in one pass over the points, which
    /// is several times faster than one lookup each; any order is correct.
    pub fn owners_into(&self, hashes: &[u64], out: &mut Vec<NodeId>) {
        out.clear();
        if self.entries.is_empty() {
            return;
        }
        out.reserve(hashes.len());
        let len = self.entries.len();
        let (mut i, mut previous) = (0, 0);
        for &hash in hashes {
            if hash < previous {
                i = self.index.lower_bound(&self.entries, hash);
            } else {
                // Step forward while few points lie between two hashes; jump
                // through the index when many do.
                let mut steps = 0;
                while i < len && self.entries[i].point < hash {
                    i += 1;
                    steps += 1;
                    if steps == 8 {
                        i = self.index.lower_bound(&self.entries, hash);
                        break;
                    }
                }
            }
            previous = hash;
            out.push(self.entries[if i == len { 0 } else { i }].owner);
        }
    }

    /// Names of the first `n` distinct nodes clockwise from `key`.
    pub fn replicas(&self, key: impl AsRef<[u8]>, n: usize) -> Vec<&str> {
        let mut ids = Vec::with_capacity(n.min(self.nodes.len()));
        self.replicas_into(self.hash(key.as_ref()), n, &mut ids);
        ids.into_iter().map(|id| self.nodes.name_of(id)).collect()
    }

    /// Points per node, exact ownership shares and their spread.
    pub fn stats(&self) -> RingStats {
        RingStats::new(&self.nodes, self.iter())
    }

    /// Index of the first point `>= hash`, wrapping to 0.
    #[inline]
    fn successor(&self, hash: u64) -> Option<usize> {
        if self.entries.is_empty() {
            return None;
        }
        let i = self.index.lower_bound(&self.entries, hash);
        Some(if i == self.entries.len() { 0 } else { i })
    }

    /// Owners from `start` once around the ring.
    fn clockwise(&self, start: usize) -> impl Iterator<Item = NodeId> + '_ {
        let (before, after) = self.entries.split_at(start);
        after.iter().chain(before).map(|e| e.owner)
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
        self.entries.len()
    }

    /// `(point, owner)` in ring order.
    pub fn iter(
        &self,
    ) -> impl DoubleEndedIterator<Item = (u64, NodeId)> + ExactSizeIterator + Clone + '_ {
        self.entries.iter().map(|e| (e.point, e.owner))
    }

    /// Heap bytes held by the entries and the index (the node table aside).
    pub fn heap_bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<Entry>() + self.index.heap_bytes()
    }
}

impl<H: KeyHasher + Clone + Send + Sync> Placement for Ring<H> {
    delegate_lookups!(Ring<H>);

    fn owners_into(&self, hashes: &[u64], out: &mut Vec<NodeId>) {
        Ring::owners_into(self, hashes, out);
    }

    fn with_node(&self, node: Node) -> Result<Self, Error> {
        Ring::with_node(self, node)
    }

    fn without_node(&self, name: &str) -> Result<Self, Error> {
        Ring::without_node(self, name)
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
fn node_points<H: KeyHasher>(hasher: &H, name: &str, count: u64, id: NodeId, out: &mut Vec<Entry>) {
    let mut buf = Vec::with_capacity(name.len() + 21);
    buf.extend_from_slice(name.as_bytes());
    buf.extend_from_slice(b"#0");
    let prefix = name.len() + 1;
    for _ in 0..count {
        out.push(Entry {
            point: hasher.hash(&buf),
            owner: id,
        });
        increment_decimal(&mut buf, prefix);
    }
}

/// Adds one to the decimal number that starts at `buf[from]`, like an
/// odometer: `"N#9"` becomes `"N#10"`, `"N#199"` becomes `"N#200"`. Cheaper
/// than formatting every index, and the same text as Python's f-string.
fn increment_decimal(buf: &mut Vec<u8>, from: usize) {
    for i in (from..buf.len()).rev() {
        if buf[i] == b'9' {
            buf[i] = b'0';
        } else {
            buf[i] += 1;
            return;
        }
    }
    buf.insert(from, b'1');
}

/// Merges the old entries with the new node's sorted `fresh` ones in
/// O(P): old ids at or above `at` shift up by one (the table is in name
/// order), and the runs of old entries between two new ones are copied whole.
fn merge(old: &[Entry], fresh: &[Entry], at: NodeId) -> Vec<Entry> {
    let shift = |e: &Entry| Entry {
        point: e.point,
        owner: e.owner + u32::from(e.owner >= at),
    };
    let mut out = Vec::with_capacity(old.len() + fresh.len());
    let mut rest = old;
    for new in fresh {
        // Runs average P / added entries: a forward scan beats a binary
        // search that jumps across the whole remaining array.
        let run = rest.iter().take_while(|e| shift(e) < *new).count();
        out.extend(rest[..run].iter().map(shift));
        out.push(*new);
        rest = &rest[run..];
    }
    out.extend(rest.iter().map(shift));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_counter_matches_format() {
        let mut buf = b"node#0".to_vec();
        for n in 0..=100_000u64 {
            assert_eq!(buf, format!("node#{n}").into_bytes());
            increment_decimal(&mut buf, 5);
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
