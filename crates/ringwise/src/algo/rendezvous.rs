//! `Rendezvous`: highest random weight hashing, weighted by the log method.
//!
//! Paper: Thaler & Ravishankar, "A Name-Based Mapping Scheme for Rendezvous",
//! 1996 (HRW). Weights: Schindelhauer & Schomaker, "Weighted Distributed
//! Hash Tables", SPAA 2005 (the logarithmic method), the idea behind Ceph's
//! `straw2` buckets.
//!
//! How it works: every node `i` has a seed `s_i = xxh3_64(name)`. For a key
//! hash `h` each node draws a uniform number
//!
//! ```text
//! x = mix13(h XOR s_i)                 // SplitMix64's finalizer
//! u = ((x >> 12) + 0.5) / 2^52          // in (0, 1), never 0 or 1
//! score_i = w_i / -ln(u)
//! ```
//!
//! and the key belongs to the highest score; equal scores go to the smaller
//! [`NodeId`] (name order). Replicas are the nodes by descending score.
//! When all weights are equal the score is the draw `x >> 12` itself, which
//! ranks the same way without a logarithm.
//!
//! Why it is fair: `-ln(u)` is exponentially distributed, so `-ln(u) / w_i`
//! is exponential with rate `w_i`, and the smallest of independent
//! exponentials is the one of rate `w_i` with probability `w_i / sum(w)`.
//! A 3:1 split of weights gives 75% / 25% of the keys.
//!
//! Why 52 bits and `+ 0.5`: `(k + 0.5)` for `k < 2^52` needs 53 significant
//! bits, exactly what an `f64` holds, so `u` is exact and lies in
//! `[2^-53, 1 - 2^-53]`. With 53 bits the top value `2^53 - 0.5` would round
//! to `2^53` and make `u = 1`, `ln(u) = 0` and the score infinite.
//!
//! Why a hand-written `ln`: `f64::ln` calls the platform's libm, and libms
//! may differ in the last bit, which could flip a near tie from one platform
//! to another. [`ln`] uses only `+ - * /`, which IEEE 754 rounds the same
//! everywhere (Ceph's `crush_ln` is a fixed-point table for the same reason).
//!
//! Minimal movement: a node's scores depend only on its own name and weight,
//! so adding, removing or reweighting one node moves keys only to or from it.
//! Placement is independent of the order nodes were given in.
//!
//! Cost: 16 bytes per node (seed and weight) beside the table. `owner` is
//! O(N): one 64-bit mix per node, plus one `ln` per node when weights differ. `replicas_into` for `n`
//! of `N` nodes is O(n·N) by repeated selection for small `n`, O(N log N)
//! by sorting the caller's buffer otherwise. Fine for tens to a few thousand
//! nodes; beyond that prefer a ring or Maglev.

use std::cmp::Ordering;

use xxhash_rust::xxh3::xxh3_64;

use crate::Error;
use crate::algo::params::{Params, Pinned, Registered};
use crate::node::{Node, NodeId, NodeTable};
use crate::placement::Placement;

/// Replica counts up to this use O(n·N) selection; above, a sort.
const SELECT_LIMIT: usize = 4;

/// An immutable rendezvous (HRW) snapshot.
#[derive(Debug, Clone)]
pub struct Rendezvous {
    nodes: NodeTable,
    /// `xxh3_64(name)` per node, in id order.
    seeds: Vec<u64>,
    /// Weight per node, in id order.
    weights: Vec<f64>,
    /// True when every weight is the same: then the draw alone ranks.
    uniform: bool,
}

impl Rendezvous {
    /// Validates `nodes` and builds the snapshot.
    pub fn new(nodes: impl IntoIterator<Item = Node>) -> Result<Self, Error> {
        Ok(Self::from_table(NodeTable::new(nodes)?))
    }

    /// Builds the snapshot over an already validated node table.
    pub fn from_table(nodes: NodeTable) -> Self {
        let seeds = nodes.iter().map(|n| xxh3_64(n.name.as_bytes())).collect();
        let weights: Vec<f64> = nodes.iter().map(|n| n.weight).collect();
        let uniform = weights.windows(2).all(|w| w[0] == w[1]);
        Rendezvous {
            nodes,
            seeds,
            weights,
            uniform,
        }
    }

    /// The score of node `id` for `hash`: `w / -ln(u)`, finite and positive
    /// (0 for an id this snapshot does not have).
    #[inline]
    pub fn score(&self, hash: u64, id: NodeId) -> f64 {
        let i = id as usize;
        match (self.seeds.get(i), self.weights.get(i)) {
            (Some(&seed), Some(&weight)) => weight / -ln(unit(hash, seed)),
            _ => 0.0,
        }
    }

    /// The best `(score, id)` ranked strictly below `bound` (all when `None`).
    /// Ranks are distinct because ids are, so repeated calls walk the
    /// descending order without repeating a node.
    fn best_below(&self, hash: u64, bound: Option<(f64, NodeId)>) -> Option<(f64, NodeId)> {
        let mut best: Option<(f64, NodeId)> = None;
        for i in 0..self.seeds.len() {
            let candidate = self.candidate(hash, i);
            let below = bound.is_none_or(|b| rank(candidate, b) == Ordering::Less);
            if below && best.is_none_or(|b| rank(candidate, b) == Ordering::Greater) {
                best = Some(candidate);
            }
        }
        best
    }

    /// The ranking key of node `i` for `hash`. With equal weights it is the
    /// 52-bit draw itself: `w / -ln(u)` grows with `u`, so the order is the
    /// same without the logarithm, 10× cheaper. (Two adjacent draws whose
    /// logarithms round together would tie here and not there: chance below
    /// 2^-50 per key, documented rather than paid for.)
    #[inline]
    fn candidate(&self, hash: u64, i: usize) -> (f64, NodeId) {
        let x = mix(hash, self.seeds[i]);
        let score = if self.uniform {
            (x >> 12) as f64
        } else {
            self.weights[i] / -ln(unit_of(x))
        };
        (score, i as NodeId)
    }
}

/// Orders `(score, id)`: higher score ranks higher, then smaller id.
#[inline]
fn rank(a: (f64, NodeId), b: (f64, NodeId)) -> Ordering {
    a.0.total_cmp(&b.0).then(b.1.cmp(&a.1))
}

/// The uniform draw of a node with `seed` for `hash`, in `(0, 1)`: the top
/// 52 bits of the mix plus one half, over `2^52`. Exact in an `f64`.
#[inline]
fn unit(hash: u64, seed: u64) -> f64 {
    unit_of(mix(hash, seed))
}

/// The draw of the node with `seed` for `hash`: SplitMix64's finalizer
/// (Stafford's Mix13) of `hash XOR seed`. Both inputs are already uniform
/// 64-bit hashes and the finalizer is a bijection with full avalanche, so
/// every node sees an independent-looking permutation of the key hashes,
/// at three multiplications instead of a full XXH3 call.
#[inline]
fn mix(hash: u64, seed: u64) -> u64 {
    let mut z = hash ^ seed;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `((x >> 12) + 0.5) / 2^52`.
#[inline]
fn unit_of(x: u64) -> f64 {
    ((x >> 12) as f64 + 0.5) * (1.0 / (1u64 << 52) as f64)
}

/// Natural logarithm of a positive normal `x` from `+ - * /` only, so it is
/// bit-identical on every IEEE 754 platform. Within a few ulps of `f64::ln`.
///
/// `x = m · 2^e` with `m` in `[√½, √2)`; `ln m = 2·atanh(s)` with
/// `s = (m - 1) / (m + 1)`, `|s| < 0.172`, so the odd series
/// `s + s³/3 + s⁵/5 + ...` is below one ulp after 12 terms. Worked example:
/// `x = 0.75 = 1.5 · 2^-1`; `1.5 > √2`, so `m = 0.75, e = 0`;
/// `s = -0.25 / 1.75 = -1/7`; `2·(s + s³/3 + ...) = -0.28768...` = `ln 0.75`.
fn ln(x: f64) -> f64 {
    const LN_2: f64 = std::f64::consts::LN_2;
    let bits = x.to_bits();
    let mut e = ((bits >> 52) & 0x7ff) as i64 - 1023;
    // The same significand with exponent 0: m in [1, 2).
    let mut m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    if m > std::f64::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut term = s;
    let mut sum = 0.0;
    for k in 0..12 {
        sum += term / f64::from(2 * k + 1);
        term *= s2;
    }
    e as f64 * LN_2 + 2.0 * sum
}

impl Placement for Rendezvous {
    /// The node with the highest score; ties go to the smaller id. O(N):
    /// one mix per node (plus one `ln` each when weights differ).
    #[inline]
    fn owner(&self, hash: u64) -> Option<NodeId> {
        if !self.uniform {
            return self.best_below(hash, None).map(|(_, id)| id);
        }
        // Equal weights: the largest 52-bit draw, the first (smallest id)
        // of equal ones; integer compares only, the same order as
        // `candidate`.
        let mut best: Option<(u64, usize)> = None;
        for (i, &seed) in self.seeds.iter().enumerate() {
            let draw = mix(hash, seed) >> 12;
            if best.is_none_or(|(b, _)| draw > b) {
                best = Some((draw, i));
            }
        }
        best.map(|(_, i)| i as NodeId)
    }

    /// Up to `n` distinct nodes by descending score (ties: smaller id first),
    /// into `out` (cleared first). O(n·N) for `n <= 4`, O(N log N) above.
    /// Allocates only if `out` must grow.
    fn replicas_into(&self, hash: u64, n: usize, out: &mut Vec<NodeId>) {
        out.clear();
        let want = n.min(self.nodes.len());
        if want <= SELECT_LIMIT {
            let mut previous = None;
            while out.len() < want {
                let Some(next) = self.best_below(hash, previous) else {
                    break;
                };
                out.push(next.1);
                previous = Some(next);
            }
        } else {
            out.extend(0..self.nodes.len() as NodeId);
            out.sort_unstable_by(|&a, &b| {
                rank(
                    self.candidate(hash, b as usize),
                    self.candidate(hash, a as usize),
                )
            });
            out.truncate(want);
        }
    }

    fn nodes(&self) -> &NodeTable {
        &self.nodes
    }

    /// A seed and a weight per node.
    fn heap_bytes(&self) -> usize {
        self.seeds.capacity() * 8 + self.weights.capacity() * 8
    }

    /// Only keys whose new top score is the added node's move (to it).
    fn with_node(&self, node: Node) -> Result<Self, Error> {
        Ok(Self::from_table(self.nodes.with(node)?.0))
    }

    /// Only the removed node's keys move, each to its second-highest score.
    fn without_node(&self, name: &str) -> Result<Self, Error> {
        Ok(Self::from_table(self.nodes.without(name)?.0))
    }
}

impl Registered for Rendezvous {
    /// Scores follow from the names and weights.
    fn pin(&self) -> Result<Pinned, Error> {
        Ok(Pinned::default())
    }

    fn build(nodes: Vec<Node>, _: &Params) -> Result<Self, Error> {
        Self::new(nodes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ln_matches_std_within_a_few_ulps() {
        let mut x = 1.0 / (1u64 << 52) as f64;
        while x < 1.0 {
            let root = x * std::f64::consts::SQRT_2;
            for y in [x, x * 1.37, root.next_down(), root, root.next_up(), x * 1.9] {
                let (ours, std) = (ln(y), y.ln());
                let tolerance = 4.0 * f64::EPSILON * std.abs().max(1.0);
                assert!(
                    (ours - std).abs() <= tolerance,
                    "ln({y}) = {ours}, std {std}"
                );
            }
            x *= 2.0;
        }
        assert_eq!(ln(1.0), 0.0);
        assert!((ln(0.75) - 0.75f64.ln()).abs() < 1e-16);
    }

    #[test]
    fn unit_stays_inside_the_open_interval() {
        let top = ((u64::MAX >> 12) as f64 + 0.5) / (1u64 << 52) as f64;
        let bottom = 0.5 / (1u64 << 52) as f64;
        assert!(top < 1.0 && bottom > 0.0);
        assert!(-ln(top) > 0.0 && (-ln(bottom)).is_finite());
    }

    #[test]
    fn empty_answers_none() {
        let r = Rendezvous::new([]).expect("empty");
        assert_eq!(r.owner(42), None);
        let mut out = vec![3];
        r.replicas_into(42, 2, &mut out);
        assert!(out.is_empty());
    }
}
