//! The answer of a movement diff: [`Movement`] with its [`Method`], exact
//! [`MovedRange`]s and donor → receiver [`Flow`]s, the optimum it is
//! measured against ([`Movement::optimum`]), and `Names`, which the three
//! ways of diffing (`arcs.rs`, `table.rs`, `sampled.rs`) share to match
//! nodes by name and to build the answer.
//!
//! Nodes are matched by **name**: ids are ranks of names and change when a
//! node joins. Sums start from `+0.0`: `Iterator::sum` of no `f64`s is
//! `-0.0`, which a no-op plan would print as `-0.00%`. Cost: O(N log N)
//! for the names, O(flows) for the sums.

use std::collections::BTreeMap;

use crate::node::{Node, NodeId, NodeTable};

/// How a [`Movement`] was computed, and so how exact it is.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Method {
    /// Exact: the two rings' arcs merged. Ranges are `(start, end]` hash
    /// positions, wrapping when `start >= end` (`start == end` is the whole
    /// circle).
    Arcs,
    /// Exact: two HAProxy trees with `avalanche` merged in the space of the
    /// mixed key hash (`full_hash`, a bijection of the 32-bit key): the
    /// moved fraction and the flows are exact, but an arc of the mixed hash
    /// is no range of the hash, so no ranges are listed.
    MixedArcs,
    /// Exact: slot tables of `size` slots compared. Ranges are inclusive
    /// slot numbers `start..=end`.
    Table {
        /// Slots in the table (16384 for slots, the prime for maglev).
        size: u64,
    },
    /// Estimated from `samples` random hashes; the moved fraction lies in
    /// `low..=high` with 95 % confidence (Wilson interval). No ranges.
    Sampled {
        /// Hashes looked up in both snapshots.
        samples: u64,
        /// Lower end of the 95 % interval of the moved fraction.
        low: f64,
        /// Upper end.
        high: f64,
    },
}

impl Method {
    /// True for the exact methods (arcs, table).
    pub fn is_exact(&self) -> bool {
        !matches!(self, Method::Sampled { .. })
    }
}

/// A run of hash positions (or slots) whose owner changed from `from` to
/// `to` (indices into [`Movement::nodes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MovedRange {
    /// Arcs: exclusive start position; table: first slot.
    pub start: u64,
    /// Arcs: inclusive end position; table: last slot.
    pub end: u64,
    /// The old owner.
    pub from: u32,
    /// The new owner.
    pub to: u32,
}

impl MovedRange {
    /// Hash positions in an arc `(start, end]`, wrapping; `2^64` when
    /// `start == end`.
    pub fn arc_len(&self) -> u128 {
        match self.end.wrapping_sub(self.start) {
            0 => 1 << 64,
            n => u128::from(n),
        }
    }
}

/// The fraction of the key space that goes from one node to another.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Flow {
    /// The donor (index into [`Movement::nodes`]).
    pub from: u32,
    /// The receiver.
    pub to: u32,
    /// Fraction of the whole key space.
    pub fraction: f64,
}

/// What moves between two snapshots, as [`crate::diff`] answers it.
#[derive(Debug, Clone, PartialEq)]
pub struct Movement {
    /// How it was computed.
    pub method: Method,
    /// Every node of either snapshot, by name, sorted.
    pub nodes: Vec<String>,
    /// Expected share (weight over total) of each node before, 0 if absent.
    pub expected_before: Vec<f64>,
    /// The same after.
    pub expected_after: Vec<f64>,
    /// Exact moved ranges in ascending order (empty when sampled).
    pub ranges: Vec<MovedRange>,
    /// Donor → receiver fractions, sorted by `(from, to)`, none zero.
    pub flows: Vec<Flow>,
}

impl Movement {
    /// Fraction of the key space whose owner changed.
    pub fn moved(&self) -> f64 {
        // fold from +0.0, not sum(): no flows must read 0, not -0.
        self.flows.iter().fold(0.0, |sum, f| sum + f.fraction)
    }

    /// The least any placement must move for this change of membership:
    /// `max(out, in)`, since every moved key leaves one node and enters
    /// another, where
    ///
    /// - `out` = the keys the leaving nodes held in the **old placement**
    ///   (their actual share, which all moves: exact for rings and tables,
    ///   sampled otherwise, like the diff), plus what the staying nodes
    ///   whose weight share fell must give;
    /// - `in` = the fair (weight) share of the joining nodes, plus what
    ///   the staying nodes whose weight share rose must receive.
    ///
    /// The staying nodes' part compares their weights among themselves
    /// (shares renormalised over the staying nodes, scaled by what they
    /// hold after), so a join or leave alone adds nothing to it and a pure
    /// reweight gives the positive share changes: node-2 of 4 equal nodes
    /// reweighted to 2 goes from 25 % to 40 %, optimum 15 %.
    ///
    /// Examples: an equal node joining `N` gives `1/(N+1)` (the article's
    /// 3 TB / 11 = 273 GB); a leave gives exactly what the leaving node
    /// owned (a ring node holding 27.48 % instead of its fair 33.33 % gives
    /// 27.48 %, so a ring leave is always 1x). A ratio `moved / optimum`
    /// below 1 is then possible only for joins that give the new node less
    /// than its fair share, or within a sampled interval.
    pub fn optimum(&self) -> f64 {
        let given = self.given();
        let (before, after) = (&self.expected_before, &self.expected_after);
        let stays = |i: &usize| before[*i] > 0.0 && after[*i] > 0.0;
        let all = 0..self.nodes.len();
        let left = all.clone().filter(|&i| before[i] > 0.0 && after[i] == 0.0);
        let joined = all.clone().filter(|&i| before[i] == 0.0 && after[i] > 0.0);
        let out = left.fold(0.0, |s, i| s + given[i]);
        let into = joined.fold(0.0, |s, i| s + after[i]);
        let (sb, sa) = all
            .clone()
            .filter(stays)
            .fold((0.0, 0.0), |(sb, sa), i| (sb + before[i], sa + after[i]));
        let (mut gives, mut gains) = (0.0, 0.0);
        for i in all.filter(stays) {
            let change = sa * (after[i] / sa - before[i] / sb);
            gives += (-change).max(0.0);
            gains += change.max(0.0);
        }
        (out + gives).max(into + gains)
    }

    /// The fraction each node gives away, by node index.
    pub fn given(&self) -> Vec<f64> {
        self.per_node(|f| f.from)
    }

    /// The fraction each node receives, by node index.
    pub fn received(&self) -> Vec<f64> {
        self.per_node(|f| f.to)
    }

    /// Bytes of each flow when `total` bytes are spread like the hashes.
    pub fn bytes(&self, total: f64) -> Vec<(u32, u32, f64)> {
        let flows = self.flows.iter();
        flows.map(|f| (f.from, f.to, f.fraction * total)).collect()
    }

    /// The name of node index `i` (`"?"` past the end).
    pub fn name(&self, i: u32) -> &str {
        self.nodes.get(i as usize).map_or("?", String::as_str)
    }

    fn per_node(&self, side: impl Fn(&Flow) -> u32) -> Vec<f64> {
        let mut out = vec![0.0; self.nodes.len()];
        for f in &self.flows {
            out[side(f) as usize] += f.fraction;
        }
        out
    }
}

/// Node ids of both snapshots mapped to one sorted list of names.
pub(crate) struct Names {
    nodes: Vec<String>,
    old: Vec<u32>,
    new: Vec<u32>,
    expected_before: Vec<f64>,
    expected_after: Vec<f64>,
}

impl Names {
    /// The names of both tables, sorted, and each id's index among them.
    pub(super) fn new(old: &NodeTable, new: &NodeTable) -> Self {
        let mut all: Vec<String> = old
            .iter()
            .chain(new.iter())
            .map(|n| n.name.clone())
            .collect();
        all.sort();
        all.dedup();
        let index = |t: &NodeTable| -> Vec<u32> {
            let at = |n: &Node| all.binary_search(&n.name).unwrap_or(0) as u32;
            t.iter().map(at).collect()
        };
        let expected = |t: &NodeTable| {
            let mut shares = vec![0.0; all.len()];
            let total = t.total_weight();
            for (node, &i) in t.iter().zip(&index(t)) {
                shares[i as usize] = node.weight / total;
            }
            shares
        };
        Names {
            old: index(old),
            new: index(new),
            expected_before: expected(old),
            expected_after: expected(new),
            nodes: all,
        }
    }

    /// The name index of an old id, a new id.
    pub(super) fn old(&self, id: NodeId) -> u32 {
        self.old[id as usize]
    }

    pub(super) fn new_index(&self, id: NodeId) -> u32 {
        self.new[id as usize]
    }

    /// The movement with these names, given flows as weights over `total`.
    pub(super) fn finish(
        self,
        method: Method,
        ranges: Vec<MovedRange>,
        flows: BTreeMap<(u32, u32), u128>,
        total: f64,
    ) -> Movement {
        let flows = flows
            .into_iter()
            .filter(|&(_, w)| w > 0)
            .map(|((from, to), w)| Flow {
                from,
                to,
                fraction: w as f64 / total,
            })
            .collect();
        Movement {
            method,
            nodes: self.nodes,
            expected_before: self.expected_before,
            expected_after: self.expected_after,
            ranges,
            flows,
        }
    }
}
