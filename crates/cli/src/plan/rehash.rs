//! A change of key hash (a new `secret`, or another `hash`): every key is
//! hashed anew, so where it lands after does not depend on where it was.
//!
//! With independent hashes a key owned by `a` before goes to `b` with
//! probability `p_new(b)`, so the flow `a → b` is `p_old(a) · p_new(b)`
//! and the moved fraction is `1 − Σ_n p_old(n) · p_new(n)` over the nodes
//! present in both (`p` = the node's share of the key space: exact arc
//! sums for rings, sampled otherwise, as `inspect` measures them). Example:
//! three equal ring nodes rotating their secret move about 1 − 3 · (1/3)²
//! = 2/3 of the keys. `--keys FILE` looks each key up under both hashes
//! (`plan/keys.rs`), exactly. No secret is ever printed: the output says
//! "secret changed".
//!
//! Cost: the shares (O(P) for rings, O(samples) lookups otherwise) and
//! O(N_old · N_new) flows, at most [`MAX_PAIRS`].

use std::collections::BTreeMap;

use anyhow::anyhow;
use ringwise::{AnyPlacement, Flow, Keyed, Method, Movement, Placement, PlacementStats};

use crate::Failure;
use crate::inspect::shares;

/// The most `(donor, receiver)` pairs listed: 10^6 (1,000 nodes on each
/// side), a few tens of MB of output.
pub const MAX_PAIRS: u64 = 1_000_000;

/// The expected movement of a rehash, on the node list and expected
/// shares of `diff` (which knows every node of both sides).
pub fn movement(
    old: &Keyed<AnyPlacement>,
    new: &Keyed<AnyPlacement>,
    diff: Movement,
) -> Result<Movement, Failure> {
    let pairs = old.placement().len() as u64 * new.placement().len() as u64;
    let ((before, s_old), (after, s_new)) = (shares(old), shares(new));
    // Shares by name through a sorted map: a linear search per name made
    // this O(N²) before the pair limit was even checked (50,000 nodes took
    // 40 s to be refused). O(N log N).
    let by_name = |stats: &PlacementStats| -> BTreeMap<String, f64> {
        stats
            .nodes
            .iter()
            .map(|n| (n.name.clone(), n.share))
            .collect()
    };
    let (before, after) = (by_name(&before), by_name(&after));
    let share =
        |shares: &BTreeMap<String, f64>, name: &str| shares.get(name).copied().unwrap_or(0.0);
    let names = &diff.nodes;
    let p_old: Vec<f64> = names.iter().map(|n| share(&before, n)).collect();
    let p_new: Vec<f64> = names.iter().map(|n| share(&after, n)).collect();
    // From +0.0, not sum()'s -0.0: no nodes sum to 0, as
    // `Movement::moved` sums its flows.
    let stay = p_old.iter().zip(&p_new).fold(0.0, |s, (a, b)| s + a * b);
    let moved = (1.0 - stay).max(0.0);
    if pairs > MAX_PAIRS {
        return Err(Failure::usage(anyhow!(
            "the key hash changes, so every key is rehashed: {:.2}% of the keys are expected \
             to change owner (1 - sum of p_old * p_new); listing the flows between {} and {} \
             nodes ({pairs} pairs) is over the limit of {MAX_PAIRS}; --keys FILE prices the \
             change on real keys",
            moved * 100.0,
            old.placement().len(),
            new.placement().len()
        )));
    }
    let mut flows = Vec::new();
    for (a, &pa) in p_old.iter().enumerate() {
        for (b, &pb) in p_new.iter().enumerate() {
            if a != b && pa * pb > 0.0 {
                let (from, to) = (a as u32, b as u32);
                flows.push(Flow {
                    from,
                    to,
                    fraction: pa * pb,
                });
            }
        }
    }
    Ok(Movement {
        method: method(moved, &p_old, &p_new, s_old, s_new),
        ranges: Vec::new(),
        flows,
        ..diff
    })
}

/// Exact (`Arcs`) when both sides' shares are; otherwise `Sampled`, with a
/// 95 % interval from the shares' sampling errors: `Var(p̂) = p(1−p)/S`,
/// and the sum's variance `Σ p_new² Var(p̂_old) + p_old² Var(p̂_new)`.
fn method(moved: f64, p_old: &[f64], p_new: &[f64], s_old: u64, s_new: u64) -> Method {
    if s_old == 0 && s_new == 0 {
        return Method::Arcs;
    }
    let var = |p: f64, s: u64| {
        if s == 0 {
            0.0
        } else {
            p * (1.0 - p) / s as f64
        }
    };
    // From +0.0 like `stay`: no nodes give a variance of 0, not -0.
    let term = |(&a, &b): (&f64, &f64)| b * b * var(a, s_old) + a * a * var(b, s_new);
    let variance = p_old.iter().zip(p_new).fold(0.0, |s, pair| s + term(pair));
    let half = 1.96 * variance.sqrt();
    Method::Sampled {
        samples: s_old.max(s_new),
        low: (moved - half).max(0.0),
        high: (moved + half).min(1.0),
    }
}
