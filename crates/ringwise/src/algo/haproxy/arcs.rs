//! HAProxy's tree in successor form: the exact arcs `diff` merges.
//!
//! The rings' exact diff (`movement/arcs.rs`) reads a placement as sorted
//! points where "the first point `>=` the hash owns it". HAProxy answers
//! the **nearer** of the two points around a key instead, ties to the
//! earlier one ([`Haproxy`]'s module docs), and that partition has the same
//! shape once each point is moved to the last key it owns: between
//! consecutive points `p` and `q` (gap `g = q - p`, wrapping), a key `k`
//! goes to `p` when `k - p <= q - k`, that is `k <= p + ⌊g/2⌋`. So the
//! successor-form point of `p` is `m = p + ⌊g/2⌋`, owned by `p`'s server,
//! and `q`'s server owns `(m, m']`.
//!
//! Worked example: points 10 (server A) and 15 (B): `g = 5`, `m = 12`;
//! key 12 is 2 from A and 3 from B (A), key 13 is 3 from A and 2 from B
//! (B); at `g = 4` (points 10 and 14) key 12 is a tie, and `m = 10 + 2 =
//! 12` gives it to A, the earlier point, as HAProxy does.
//!
//! Equal points (two servers' 32-bit collisions) give the first one `m =
//! p` (`g = 0`): a key equal to the point goes to it, as HAProxy's lookup
//! finds the first point `>=` the key; the second owns what follows up to
//! its own midpoint. Only the last point's `m` can pass `2^32` (the gap to
//! the first point wraps): it then comes first.
//!
//! The 32-bit key is the top half of the 64-bit ringwise hash, so `m`
//! stands for every hash up to `m·2^32 + 2^32 - 1`, and the diff's ranges
//! are exact hash ranges. With `avalanche` the key HAProxy compares is
//! `full_hash` of those 32 bits, a bijection of `u32`: the arcs are of
//! that mixed value, so the moved fraction and the flows stay exact (every
//! mixed value stands for the same number of hashes) but an arc is not a
//! range of hashes. The same arcs give each server's exact share
//! ([`Haproxy::stats`], what `inspect` and `plan` print). Cost: O(P) time
//! and memory for P points.

use crate::algo::haproxy::Haproxy;
use crate::node::NodeId;
use crate::stats::PlacementStats;

impl Haproxy {
    /// `(successor-form point, owner)` in ring order, 64-bit (module docs):
    /// the first such point `>=` a key's (mixed) hash owns it. O(P).
    pub(crate) fn successor_points(&self) -> Vec<(u64, NodeId)> {
        let n = self.points.len();
        let mut out: Vec<(u64, NodeId)> = Vec::with_capacity(n);
        let mut wrapped = None;
        for i in 0..n {
            let (p, q) = (self.points[i], self.points[(i + 1) % n]);
            let m = p.wrapping_add(q.wrapping_sub(p) / 2);
            let entry = (u64::from(m) << 32 | 0xFFFF_FFFF, self.owners[i]);
            match m < p {
                true => wrapped = Some(entry),
                false => out.push(entry),
            }
        }
        if let Some(entry) = wrapped {
            out.insert(0, entry);
        }
        out
    }

    /// Each server's points and exact share of the keys, from the arcs
    /// each owns in successor form (of the mixed hash with `avalanche`,
    /// which covers as many hashes per value). O(P).
    pub fn stats(&self) -> PlacementStats {
        PlacementStats::from_arcs(&self.nodes, self.successor_points().into_iter())
    }
}

#[cfg(test)]
mod tests {
    use crate::node::Node;
    use crate::placement::Placement;

    use super::*;

    /// The owner by successor points, as `movement/arcs.rs` reads them.
    fn successor_owner(points: &[(u64, NodeId)], hash: u64) -> NodeId {
        let at = points.partition_point(|&(p, _)| p < hash);
        points[at % points.len()].1
    }

    #[test]
    fn successor_points_answer_as_the_nearest_point() {
        for avalanche in [false, true] {
            let nodes = vec![
                Node::new("a"),
                Node::new("b").weight(3.0),
                Node::new("c").id(9),
                Node::new("d").weight(2.0),
            ];
            let h = Haproxy::new(nodes, avalanche, 1 << 24).expect("valid");
            let succ = h.successor_points();
            assert_eq!(succ.len(), h.points.len());
            assert!(succ.windows(2).all(|w| w[0].0 <= w[1].0), "sorted");
            // Every point, its neighbours and the midpoints between points,
            // where the rule changes sides, then spread keys.
            let mut keys: Vec<u32> = Vec::new();
            for w in h.points.windows(2) {
                let mid = w[0] + (w[1] - w[0]) / 2;
                keys.extend([w[0], w[0].wrapping_add(1), mid, mid.wrapping_add(1)]);
            }
            keys.extend([0, 1, u32::MAX, h.points[h.points.len() - 1].wrapping_add(1)]);
            keys.extend((0..20_000u32).map(|i| i.wrapping_mul(0x9E37_79B9)));
            for k in keys {
                let hash = u64::from(k) << 32 | 0x1234;
                let mixed = u64::from(h.key(hash)) << 32 | 0x1234;
                assert_eq!(
                    h.owner(hash),
                    Some(successor_owner(&succ, mixed)),
                    "key {k}, avalanche {avalanche}"
                );
            }
        }
    }

    #[test]
    fn stats_are_the_shares_the_lookups_give() {
        for avalanche in [false, true] {
            let nodes = vec![Node::new("a"), Node::new("b").weight(3.0), Node::new("c")];
            let h = Haproxy::new(nodes, avalanche, 1 << 24).expect("valid");
            let stats = h.stats();
            // Every 2^12-th 32-bit key: 2^20 keys, so each share is within
            // a few 2^-20 of the exact one (arcs end at arbitrary keys).
            let mut counts = [0u32; 3];
            for i in 0..1u64 << 20 {
                counts[h.owner(i << 44).expect("owner") as usize] += 1;
            }
            for (node, count) in stats.nodes.iter().zip(counts) {
                let counted = f64::from(count) / f64::from(1u32 << 20);
                assert!(
                    (node.share - counted).abs() < 1e-3,
                    "{}: {} vs {counted}, avalanche {avalanche}",
                    node.name,
                    node.share
                );
            }
        }
    }

    #[test]
    fn one_server_owns_the_circle() {
        let h = Haproxy::new(vec![Node::new("a")], false, 1 << 24).expect("valid");
        let succ = h.successor_points();
        assert_eq!(succ.len(), 16);
        assert!(succ.iter().all(|&(_, id)| id == succ[0].1));
    }
}
