//! What moves between two placement snapshots: [`diff`] → [`Movement`].
//!
//! Operators ask "what moves if I add B?" before every membership change.
//! [`diff`] answers it for any two [`AnyPlacement`]s, each pair in the most
//! exact way the algorithms allow:
//!
//! - **Arcs** (both ring-shaped: ring, ketama, nginx, envoy-ring,
//!   cassandra): the two sorted point lists are merged, and every arc
//!   `(start, end]` between consecutive points of either ring has one old
//!   and one new owner, so the moved ranges are exact, with no sampling
//!   (`movement/arcs.rs`).
//! - **Table** (both slots, or both maglev of the same table size): the
//!   owners of every slot are compared; each slot `s` of `M` holds the
//!   exact count of 64-bit hashes `h` with `h % M == s`
//!   (`movement/table.rs`).
//! - **Sampled** (every other pair: rendezvous, multiprobe, jump, memento,
//!   two different algorithms, and any algorithm added later, without code
//!   of its own): 1,048,576 pseudo-random hashes (fixed seed) are looked up
//!   in both, with a 95 % Wilson interval on the moved fraction
//!   (`movement/sampled.rs`).
//!
//! Why jump and memento are sampled, not exact. Their flows have an exact
//! *shape*: a jump join `N → N+1` moves exactly the hashes `h` with
//! `jump(h, N+1) == N`, all of them to the new node and none between old
//! nodes (a leave of the last bucket is the mirror image; memento's leave of
//! any bucket moves only that bucket's hashes). The sampled flows keep that
//! shape exactly, since every sample obeys it. What is not computable is
//! the exact *size* of that set over the 2^64 hashes. `jump(h, N+1) == N`
//! holds when the chain of jumps `0 = b_0 < b_1 < ...` visits `N`, and
//! `b_k = floor((b_{k-1} + 1) · 2^31 / (r_k + 1))` (rounded as floats)
//! where `r_k` is the top 31 bits of the `k`-th LCG state
//! `x_k = a·x_{k-1} + 1 mod 2^64`, `x_0 = h`. One step is countable: the
//! `r_1` giving `b_1 = N` form an interval, each `r` having exactly `2^33`
//! hashes. Two steps are still countable (hashes in an interval whose
//! `a·x + 1 mod 2^64` lies in another interval: a floor sum, O(log 2^64)).
//! But a chain reaching `N` can pass through any subset of `1..N` (2^(N−1)
//! paths), each a joint condition on the top bits of `k` successive LCG
//! states, a `k`-dimensional lattice count; the states are not independent,
//! so the paper's per-step probabilities give only the model's value
//! `1/(N+1)`, which is [`Movement::optimum`], not the count. Short of
//! enumerating 2^64 hashes, the real fraction is an estimate:
//! 2^20 samples give it within a 95 % Wilson interval of about
//! ±0.02 percentage points at 1 % (a join to 100 nodes) and ±0.055 at
//! 1/11; [`Method::Sampled`] carries the interval and `plan` prints it
//! next to the estimate.
//!
//! Nodes are matched by **name**: ids are ranks of names and change when a
//! node joins. A hash that has no owner on one side (an empty snapshot)
//! moves nowhere and is not counted.
//!
//! From a `Movement`: the moved fraction of the key space next to the
//! optimum ([`Movement::optimum`]: the least any placement must move for
//! this change of membership, `1/(N+1)` for a join of equal nodes, the
//! leaving node's own keys for a leave), the donor × receiver flows, bytes
//! given a uniformly spread total ([`Movement::bytes`]).
//!
//! Sums start from `+0.0`: `Iterator::sum` of no `f64`s is `-0.0` (the
//! IEEE additive identity), which a no-op plan would print as `-0.00%`.
//!
//! Cost: arcs O(P_old + P_new) time and O(moved ranges) memory; table
//! O(M); sampled O(samples × lookup cost) (rendezvous over N nodes:
//! O(samples · N)). Quirk: 32-bit flavours (ketama, nginx) and cassandra
//! put their points in cells of the 64-bit space ([`crate::wire`]); their
//! ranges are in that space and convert to the peer's width with
//! [`crate::Width::native`].

mod arcs;
mod sampled;
mod table;

use std::collections::BTreeMap;

use crate::algo::AnyPlacement;
use crate::node::{NodeId, NodeTable};
use crate::placement::Placement;

pub use sampled::DEFAULT_SAMPLES;

/// How a [`Movement`] was computed, and so how exact it is.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Method {
    /// Exact: the two rings' arcs merged. Ranges are `(start, end]` hash
    /// positions, wrapping when `start >= end` (`start == end` is the whole
    /// circle).
    Arcs,
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

/// What moves between two snapshots; see the module doc.
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

/// What moves from `old` to `new`: exact for two rings and for two slot
/// tables of one size, sampled otherwise (see the module doc for costs).
pub fn diff(old: &AnyPlacement, new: &AnyPlacement) -> Movement {
    let names = Names::new(old.nodes(), new.nodes());
    if let (Some(a), Some(b)) = (old.as_ring(), new.as_ring()) {
        return arcs::diff(a, b, names);
    }
    if let Some(size) = table::common_size(old, new) {
        return table::diff(old, new, size, names);
    }
    sampled::diff(old, new, DEFAULT_SAMPLES, names)
}

/// [`diff`] by sampling `samples` hashes, whatever the algorithms: the
/// fallback every placement answers, also usable to check the exact ones.
pub fn diff_sampled<P: Placement, Q: Placement>(old: &P, new: &Q, samples: u64) -> Movement {
    sampled::diff(old, new, samples, Names::new(old.nodes(), new.nodes()))
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
    fn new(old: &NodeTable, new: &NodeTable) -> Self {
        let mut all: Vec<String> = old
            .iter()
            .chain(new.iter())
            .map(|n| n.name.clone())
            .collect();
        all.sort();
        all.dedup();
        let index = |t: &NodeTable| -> Vec<u32> {
            let at = |n: &crate::Node| all.binary_search(&n.name).unwrap_or(0) as u32;
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
    fn old(&self, id: NodeId) -> u32 {
        self.old[id as usize]
    }

    fn new_index(&self, id: NodeId) -> u32 {
        self.new[id as usize]
    }

    /// The movement with these names, given flows as weights over `total`.
    fn finish(
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
