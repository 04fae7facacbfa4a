//! How a placement shares the hash space among its nodes:
//! [`PlacementStats`], one [`NodeStats`] per node, like Envoy's min/max
//! hash-ring gauges. Every placement can be asked (`ringwise inspect`,
//! Python's `stats()`, [`crate::Keyed::sampled_stats`]); only the rings
//! know their shares exactly.
//!
//! Exact, from a ring's arcs ([`crate::RingView::stats`]): point `i` owns
//! the hashes in `(p[i-1], p[i]]`; point 0 also owns the wrap
//! `(p[last], 2^64)`. Summing these arcs as integers gives each node's
//! exact share of the hash space, which is the expected share of uniformly
//! hashed keys. Example on a 100-slot toy ring with points A@10, B@45,
//! C@80: A owns `(80, 100) ∪ [0, 10]` = 30 slots, B owns 35, C owns 35.
//!
//! Sampled, for every other placement ([`PlacementStats::from_shares`]):
//! the shares come from looking keys up. Either way `max`, `min` and
//! `spread` compare each share with what the node's weight asks for.
//! Cost: O(P) for P points, O(N) from shares.

use crate::node::{NodeId, NodeTable};

/// Ownership of one node.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeStats {
    /// The node's id in the placement's table.
    pub id: NodeId,
    /// Its name.
    pub name: String,
    /// Its weight.
    pub weight: f64,
    /// Its zone, if any.
    pub zone: Option<String>,
    /// Points it has on the ring (0 where the placement has none or the
    /// caller gave none).
    pub points: u64,
    /// Fraction of the hash space it owns: exact from arcs, measured
    /// otherwise.
    pub share: f64,
    /// Fraction its weight asks for: `weight / total weight`.
    pub expected: f64,
}

impl NodeStats {
    /// `share / expected`: 1.0 is a perfect fit.
    pub fn ratio(&self) -> f64 {
        self.share / self.expected
    }
}

/// Ownership of a whole placement: what `inspect` and `stats()` report.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacementStats {
    /// One entry per node, in id (name) order.
    pub nodes: Vec<NodeStats>,
    /// Largest `share / expected`.
    pub max: f64,
    /// Smallest `share / expected`.
    pub min: f64,
    /// Population standard deviation of `share / expected` divided by its
    /// mean; for equal weights, the seed's stddev of load over mean load.
    pub spread: f64,
}

impl PlacementStats {
    /// Exact statistics of a ring from its `(point, owner)` entries in
    /// ascending point order (module docs). O(P).
    pub(crate) fn from_arcs(
        table: &NodeTable,
        entries: impl DoubleEndedIterator<Item = (u64, NodeId)> + Clone,
    ) -> Self {
        let mut arcs = vec![0u128; table.len()];
        let mut counts = vec![0u64; table.len()];
        let last = entries.clone().next_back();
        let mut previous = last.map_or(0, |(p, _)| i128::from(p) - (1i128 << 64));
        for (point, owner) in entries {
            arcs[owner as usize] += (i128::from(point) - previous) as u128;
            counts[owner as usize] += 1;
            previous = i128::from(point);
        }
        let shares: Vec<f64> = arcs.iter().map(|&a| a as f64 / 2f64.powi(64)).collect();
        PlacementStats::from_shares(table, &counts, &shares)
    }

    /// Statistics from each node's `points` and measured `share` (both in id
    /// order; a missing entry counts as 0): for placements without arcs,
    /// whose shares are sampled.
    pub fn from_shares(table: &NodeTable, points: &[u64], shares: &[f64]) -> Self {
        let total_weight = table.total_weight();
        let nodes: Vec<NodeStats> = table
            .iter()
            .enumerate()
            .map(|(i, node)| NodeStats {
                id: i as NodeId,
                name: node.name.clone(),
                weight: node.weight,
                zone: node.zone.clone(),
                points: points.get(i).copied().unwrap_or(0),
                share: shares.get(i).copied().unwrap_or(0.0),
                expected: node.weight / total_weight,
            })
            .collect();
        let ratios: Vec<f64> = nodes.iter().map(NodeStats::ratio).collect();
        PlacementStats {
            max: ratios.iter().copied().fold(f64::NAN, f64::max),
            min: ratios.iter().copied().fold(f64::NAN, f64::min),
            spread: relative_stddev(&ratios),
            nodes,
        }
    }
}

/// Population standard deviation over mean (0 for fewer than one value).
fn relative_stddev(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    variance.sqrt() / mean
}

/// The former name of [`PlacementStats`], from when only rings had
/// statistics; kept so `ringwise::RingStats` still works.
#[doc(hidden)]
pub type RingStats = PlacementStats;
