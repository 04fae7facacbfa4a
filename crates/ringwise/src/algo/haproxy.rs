//! `Haproxy`: HAProxy's `hash-type consistent` backends.
//!
//! Source: haproxy `src/lb_chash.c` (`chash_init_server_tree`,
//! `chash_queue_dequeue_srv`, `chash_get_server_hash`), `src/backend.c`
//! (`get_server_hh`, `gen_hash`), `src/cfgparse.c` (automatic server ids),
//! `src/server.c` (runtime `add server`), `include/haproxy/server-t.h`
//! (`SRV_EWGHT_RANGE`), tag v2.6.0 of github.com/haproxy/haproxy (Debian 12
//! ships 2.6.12, the version the peer test runs); the lookup and the point
//! keys of the default `hash-key id` are the same at v3.0.0.
//!
//! How it works: server `s` of weight `w` (whole, 1 to 256) and numeric id
//! `puid` holds `16·w` points (`BE_WEIGHT_SCALE` = 16), point `j` at
//! `full_hash(puid·4096 + j)` in 32-bit arithmetic ([`crate::full_hash`];
//! 4096 = `SRV_EWGHT_RANGE`). A key's 32-bit hash `k` (sdbm by default, or
//! djb2, wt6, crc32: the top 32 bits of the ringwise key hash, which puts
//! those at the middle of their cell) goes first through `full_hash` when
//! `avalanche` is set. Then HAProxy takes the point `next` (the first `>=
//! k`, wrapping) and the one before it, `prev` (wrapping), and answers the
//! **closer** of the two: `prev` when `k - prev <= next - k` (wrapping
//! `u32` differences), so a tie goes to `prev` and a key equal to a point
//! to that point. It is not the clockwise successor of the other rings.
//!
//! Ids: a node's `id` where given (`server ... id N`), else HAProxy's
//! automatic one (cfgparse.c): a counter starts at 1 and goes up by one
//! at **every** server in listed order, explicit or not; a server without
//! an id takes the first id not taken from the counter on (`get_next_id`),
//! and the counter continues after it. So `a id 3, c` gives `c` id 2, and
//! `a id 2, b, c` gives 3 and 4 (id 1 stays free), as the running haproxy
//! shows (`show servers state`). A node that joins later without one
//! takes the smallest free id (runtime `add server`). Ids are kept by the snapshot (and written by `plan --write`):
//! a disabled or removed server does not renumber the others.
//!
//! Worked example: servers `a`, `b` (ids 1, 2), weight 1: 16 points each;
//! `a`'s first is `full_hash(4096)`, `b`'s first `full_hash(8192)`.
//!
//! Cost: `16·w` points per node, 8 bytes each (point and owner), plus a
//! bucket index of 2 to 4 bytes a point; `owner` reads the key's bucket
//! and searches its 1 or 2 points (about; O(log P) at worst), no
//! allocation. A membership or weight change
//! rebuilds the sorted points, O(P log P). A node's points depend only on
//! its id and weight, and a key's answer is the nearer of its two
//! neighbouring points, so a join moves keys only to the new node (a key
//! that stays with an old point was nearer to it than to the new one, so
//! nearer than to the farther old neighbour) and a leave only the leaver's
//! keys. Listed order matters only through automatic ids (and ties).
//!
//! Quirks: `puid·4096` wraps at 2^32, so ids equal modulo 2^20 give the
//! same points: HAProxy takes them, ringwise refuses them (one server would
//! shadow the other). Equal points of two servers (32-bit collisions) rank
//! in listed order, HAProxy's insertion order at start-up (after run-time
//! changes its order may differ). With one usable server HAProxy skips the
//! hash; the answer is the same. `hash-balance-factor` is not a placement
//! (see `lookup --balance-factor`); the 3.x `hash-key addr|addr-port|guid`
//! point keys are not reproduced.

use std::collections::BTreeSet;

// The bounded-load view (`hash-balance-factor`); a child module, which
// reads the tree's fields, and is named from lib.rs, so that this file
// imports nothing of it.
pub(crate) mod balance;
// Successor-form points for the exact movement diff.
mod arcs;
// The servers' numeric ids as HAProxy assigns them.
mod ids;

use crate::Error;
use crate::algo::haproxy::ids::numbered;
use crate::algo::ketama::whole_weight;
use crate::algo::params::{Param, Params, Pinned, Registered};
use crate::budget::reserve::reserve_peak;
use crate::hash::{StableHash, full_hash};
use crate::node::{Node, NodeId, NodeTable};
use crate::placement::{Distinct, Placement};

/// Points per unit of weight (`BE_WEIGHT_SCALE`).
const POINTS_PER_WEIGHT: u32 = 16;

/// The largest weight HAProxy takes (`SRV_UWGHT_MAX`).
const MAX_HAPROXY_WEIGHT: u64 = 256;

/// The point keys of one id (`SRV_EWGHT_RANGE`).
const ID_STRIDE: u32 = 4096;

/// HAProxy's consistent-hash tree of one backend.
#[derive(Debug, Clone)]
pub struct Haproxy {
    nodes: NodeTable,
    /// Ids in listed order (start-up order, then joins).
    listed: Vec<NodeId>,
    /// Sorted point values.
    points: Vec<u32>,
    /// The owner of each point.
    owners: Vec<NodeId>,
    /// `index[b]`: the first point `>= b << shift`, for `2^bits` buckets
    /// of the 32-bit circle, `bits = floor(log2 P)` (so about 1 to 2
    /// points a bucket), plus `P` at the end.
    index: Vec<u32>,
    /// `32 - bits`: a key's bucket is `k >> shift`.
    shift: u32,
    avalanche: bool,
    max_points: u64,
}

impl Haproxy {
    /// Points per unit of weight (HAProxy's `BE_WEIGHT_SCALE`).
    pub const POINTS_PER_WEIGHT: u32 = POINTS_PER_WEIGHT;

    /// The heaviest server weight HAProxy takes.
    pub const MAX_WEIGHT: u64 = MAX_HAPROXY_WEIGHT;

    /// The tree of `nodes` (in listed order, ids given or automatic);
    /// `avalanche` mixes key hashes with `full_hash`. Refuses weights
    /// that are not whole numbers from 1 to 256, repeated ids and ids equal
    /// modulo 2^20, and more than `max_points` points.
    pub fn new(nodes: Vec<Node>, avalanche: bool, max_points: u64) -> Result<Self, Error> {
        let nodes = numbered(nodes)?;
        Haproxy::from_numbered(nodes, None, avalanche, max_points)
    }

    /// Whether key hashes go through `full_hash` first.
    pub fn avalanche(&self) -> bool {
        self.avalanche
    }

    /// The points in ring order as `(32-bit point, owner)`.
    pub fn points(&self) -> impl Iterator<Item = (u32, NodeId)> + '_ {
        self.points.iter().copied().zip(self.owners.iter().copied())
    }

    /// The index of the point HAProxy picks for the 32-bit key hash `k`.
    #[inline]
    fn pick(&self, k: u32) -> usize {
        let n = self.points.len();
        // The points of k's bucket are all that can be the first `>= k`:
        // those before are below the bucket, those after above it.
        let b = (u64::from(k) >> self.shift) as usize;
        let (lo, hi) = (self.index[b] as usize, self.index[b + 1] as usize);
        let at = lo + self.points[lo..hi].partition_point(|&p| p < k);
        let next = if at == n { 0 } else { at };
        let prev = if at == 0 { n - 1 } else { at - 1 };
        let dp = k.wrapping_sub(self.points[prev]);
        let dn = self.points[next].wrapping_sub(k);
        if dp <= dn { prev } else { next }
    }

    /// The 32-bit key hash of a ringwise hash.
    #[inline]
    fn key(&self, hash: u64) -> u32 {
        let k = (hash >> 32) as u32;
        if self.avalanche { full_hash(k) } else { k }
    }

    /// The tree of `listed` (ids filled in), over `table` when the caller
    /// made it already (a join or leave: [`NodeTable::with`]).
    fn from_numbered(
        listed: Vec<Node>,
        table: Option<NodeTable>,
        avalanche: bool,
        max_points: u64,
    ) -> Result<Self, Error> {
        let mut total = 0u64;
        for node in &listed {
            let weight = whole_weight("haproxy", node)?;
            if weight > MAX_HAPROXY_WEIGHT {
                return Err(Error::Unsupported {
                    algorithm: "haproxy",
                    operation: format!("weigh node {:?} {}", node.name, node.weight),
                    reason: "HAProxy takes server weights from 1 to 256",
                    node: Some(node.name.clone()),
                });
            }
            total += weight * u64::from(POINTS_PER_WEIGHT);
        }
        if total > max_points {
            return Err(Error::TooManyPoints {
                points: total,
                limit: max_points,
            });
        }
        reserve_peak("an haproxy build", total.saturating_mul(24))?;
        let nodes = match table {
            Some(table) => table,
            None => NodeTable::new(listed.iter().cloned())?,
        };
        let order: Vec<NodeId> = listed.iter().filter_map(|n| nodes.id(&n.name)).collect();
        // (point, listed rank, j, owner): equal points rank in insertion order.
        let mut entries: Vec<(u32, u32, u32, NodeId)> = Vec::with_capacity(total as usize);
        for (rank, (node, &owner)) in listed.iter().zip(&order).enumerate() {
            let puid = node.id.unwrap_or(0);
            let count = node.weight as u32 * POINTS_PER_WEIGHT;
            for j in 0..count {
                let point = full_hash(puid.wrapping_mul(ID_STRIDE).wrapping_add(j));
                entries.push((point, rank as u32, j, owner));
            }
        }
        entries.sort_unstable();
        let points: Vec<u32> = entries.iter().map(|e| e.0).collect();
        let (index, shift) = bucket_index(&points);
        Ok(Haproxy {
            nodes,
            listed: order,
            points,
            owners: entries.iter().map(|e| e.3).collect(),
            index,
            shift,
            avalanche,
            max_points,
        })
    }

    /// The nodes in listed order, with their ids.
    fn listed_nodes(&self) -> Vec<Node> {
        let nodes = self.listed.iter().filter_map(|&id| self.nodes.get(id));
        nodes.cloned().collect()
    }
}

/// The bucket index of sorted `points` and its shift ([`Haproxy`]'s
/// fields): `2^floor(log2 P)` buckets, at most 2^24 (P is at most 2^28).
/// O(P + buckets). Worked example: 48 points give 32 buckets, shift 27,
/// so key `0x1800_0000` is in bucket 3 and only the points in
/// `[0x1800_0000, 0x2000_0000)` are searched.
fn bucket_index(points: &[u32]) -> (Vec<u32>, u32) {
    let bits = points.len().max(1).ilog2().min(24);
    let buckets = 1usize << bits;
    let shift = 32 - bits;
    let mut index = Vec::with_capacity(buckets + 1);
    let mut at = 0usize;
    for b in 0..buckets as u64 {
        while at < points.len() && (u64::from(points[at]) >> shift) < b {
            at += 1;
        }
        index.push(at as u32);
    }
    index.push(points.len() as u32);
    (index, shift)
}

impl Placement for Haproxy {
    #[inline]
    fn owner(&self, hash: u64) -> Option<NodeId> {
        if self.points.is_empty() {
            return None;
        }
        Some(self.owners[self.pick(self.key(hash))])
    }

    /// The owner, then the next distinct servers clockwise from its point
    /// (where HAProxy walks when it must avoid a server).
    fn replicas_into(&self, hash: u64, n: usize, out: &mut Vec<NodeId>) {
        out.clear();
        if self.points.is_empty() {
            return;
        }
        let mut picks = Distinct::new(out, n.min(self.nodes.len()));
        let start = self.pick(self.key(hash));
        let len = self.owners.len();
        for step in 0..len {
            if picks.is_full() {
                break;
            }
            picks.push(self.owners[(start + step) % len]);
        }
    }

    fn nodes(&self) -> &NodeTable {
        &self.nodes
    }

    fn heap_bytes(&self) -> usize {
        self.points.capacity() * 4
            + self.owners.capacity() * 4
            + self.index.capacity() * 4
            + self.listed.capacity() * 4
    }

    /// Joins at the given id, or the smallest free one.
    fn with_node(&self, mut node: Node) -> Result<Self, Error> {
        let mut listed = self.listed_nodes();
        if node.id.is_none() {
            let used: BTreeSet<u32> = listed.iter().filter_map(|n| n.id).collect();
            node.id = (1..=crate::node::MAX_NODE_ID).find(|i| !used.contains(i));
        }
        let (table, _) = self.nodes.with(node.clone())?;
        listed.push(node);
        let listed = numbered(listed)?;
        Haproxy::from_numbered(listed, Some(table), self.avalanche, self.max_points)
    }

    fn without_node(&self, name: &str) -> Result<Self, Error> {
        if !self.nodes.contains(name) {
            return Err(Error::UnknownNode { name: name.into() });
        }
        let (table, _) = self.nodes.without(name)?;
        let mut listed = self.listed_nodes();
        listed.retain(|n| n.name != name);
        Haproxy::from_numbered(listed, Some(table), self.avalanche, self.max_points)
    }
}

impl Registered for Haproxy {
    /// The nodes carry their ids (the table keeps them); the listed order
    /// is kept for ties.
    fn pin(&self) -> Result<Pinned, Error> {
        Ok(Pinned {
            order: Some(self.listed.clone()),
            ..Pinned::default()
        })
    }

    fn build(nodes: Vec<Node>, params: &Params) -> Result<Self, Error> {
        Haproxy::new(nodes, params.avalanche, params.max_points)
    }

    fn default_hash() -> StableHash {
        StableHash::Sdbm
    }

    const READS: &'static [Param] = &[Param::Avalanche, Param::MaxPoints];
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(nodes: Vec<Node>) -> Haproxy {
        Haproxy::new(nodes, false, 1 << 24).expect("valid")
    }

    #[test]
    fn automatic_ids_skip_explicit_ones() {
        let h = build(vec![
            Node::new("a"),
            Node::new("b").id(2),
            Node::new("c"),
            Node::new("d").id(1),
            Node::new("e"),
        ]);
        let id = |name: &str| {
            h.nodes()
                .get(h.nodes().id(name).expect("member"))
                .and_then(|n| n.id)
        };
        // The counter: 1 at a (1 and 2 taken: 3), 5 at c, 7 at e, as
        // haproxy 2.6.12 numbers them.
        assert_eq!(
            ["a", "b", "c", "d", "e"].map(id),
            [Some(3), Some(2), Some(5), Some(1), Some(7)]
        );
        let h2 = build(vec![Node::new("a").id(2), Node::new("b"), Node::new("c")]);
        let id2 = |name: &str| {
            h2.nodes()
                .get(h2.nodes().id(name).expect("m"))
                .and_then(|n| n.id)
        };
        assert_eq!(["a", "b", "c"].map(id2), [Some(2), Some(3), Some(4)]);
        let h3 = build(vec![Node::new("a").id(3), Node::new("c")]);
        let id3 = |name: &str| {
            h3.nodes()
                .get(h3.nodes().id(name).expect("m"))
                .and_then(|n| n.id)
        };
        assert_eq!(id3("c"), Some(2));
        // A later join takes the smallest free id, a leave renumbers nobody.
        let h = h.without_node("b").expect("member");
        let h = h.with_node(Node::new("f")).expect("new");
        let id = |name: &str| {
            h.nodes()
                .get(h.nodes().id(name).expect("member"))
                .and_then(|n| n.id)
        };
        assert_eq!(id("f"), Some(2));
        assert_eq!(id("e"), Some(7));
    }

    #[test]
    fn colliding_ids_are_refused() {
        let twice = Haproxy::new(
            vec![Node::new("a").id(7), Node::new("b").id(7)],
            false,
            1 << 24,
        );
        assert!(matches!(twice, Err(Error::InvalidNodeId { id: 7, .. })));
        let wrapped = vec![Node::new("a").id(3), Node::new("b").id(3 + (1 << 20))];
        assert!(matches!(
            Haproxy::new(wrapped, false, 1 << 24),
            Err(Error::InvalidNodeId { .. })
        ));
        let heavy = Haproxy::new(vec![Node::new("a").weight(257.0)], false, 1 << 24);
        assert!(matches!(heavy, Err(Error::Unsupported { .. })));
    }

    #[test]
    fn points_follow_the_ids() {
        let h = build(vec![Node::new("a"), Node::new("b").weight(2.0)]);
        assert_eq!(h.points().count(), 48);
        let mut want: Vec<u32> = (0..16).map(|j| full_hash(4096 + j)).collect();
        want.extend((0..32).map(|j| full_hash(8192 + j)));
        want.sort_unstable();
        let got: Vec<u32> = h.points().map(|(p, _)| p).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn the_nearest_point_wins_and_ties_go_back() {
        let h = build(vec![Node::new("a"), Node::new("b")]);
        let pts: Vec<(u32, NodeId)> = h.points().collect();
        let key = |k: u32| u64::from(k) << 32 | 0x8000_0000;
        for pair in pts.windows(2) {
            let ((p, a), (q, b)) = (pair[0], pair[1]);
            let mid = p + (q - p) / 2;
            assert_eq!(h.owner(key(p)), Some(a), "on a point");
            assert_eq!(h.owner(key(mid)), Some(a), "a tie or nearer before");
            if mid < q {
                assert_eq!(h.owner(key(mid + 1)), Some(b), "nearer after");
            }
        }
        // Around the wrap: the last point and the first.
        let (first, last) = (pts[0], pts[pts.len() - 1]);
        let gap = first.0.wrapping_sub(last.0);
        assert_eq!(h.owner(key(last.0.wrapping_add(gap / 2))), Some(last.1));
        assert_eq!(
            h.owner(key(last.0.wrapping_add(gap / 2 + 1))),
            Some(first.1)
        );
    }
}
