//! What moves between two placement snapshots: [`diff`] → [`Movement`].
//!
//! Operators ask "what moves if I add B?" before every membership change.
//! [`diff`] answers it for any two [`AnyPlacement`]s, each pair in the most
//! exact way the algorithms allow:
//!
//! - **Arcs** (both ring-shaped: ring, ketama, nginx, envoy-ring,
//!   grpc-ring, cassandra, varnish-shard, dalli, redis-rb, groupcache,
//!   whatever the two flavours, so a migration between two clients that
//!   hash keys alike is exact too): the two sorted point lists are merged, and every arc
//!   `(start, end]` between consecutive points of either ring has one old
//!   and one new owner, so the moved ranges are exact, with no sampling
//!   (`movement/arcs.rs`).
//! - **Arcs of the nearest point** (both haproxy, with the same
//!   `avalanche`): each tree in successor form, every point moved to the
//!   last key it owns (`algo/haproxy/arcs.rs`), then merged as the rings
//!   are; with `avalanche` the arcs are of the mixed key hash
//!   ([`Method::MixedArcs`]: exact fraction and flows, no ranges).
//! - **Table** (both slots, or both maglev of the same table size): the
//!   owners of every slot are compared; each slot `s` of `M` holds the
//!   exact count of 64-bit hashes `h` with `h % M == s`
//!   (`movement/table.rs`); two php-memcache snapshots the same way over
//!   their 1024 buckets.
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
//! given a uniformly spread total ([`Movement::bytes`]); `movement/report.rs`
//! holds these types.
//!
//! Cost: arcs (and haproxy's) O(P_old + P_new) time and O(moved ranges) memory; table
//! O(M); sampled O(samples × lookup cost) (rendezvous over N nodes:
//! O(samples · N)). Quirk: 32-bit flavours (ketama, nginx) and cassandra
//! put their points in cells of the 64-bit space ([`crate::wire`]); their
//! ranges are in that space and convert to the peer's width with
//! [`crate::Width::native`].

mod arcs;
mod report;
mod sampled;
mod table;

use crate::algo::AnyPlacement;
use crate::placement::Placement;
use report::Names;

pub use report::{Flow, Method, MovedRange, Movement};
pub use sampled::DEFAULT_SAMPLES;

/// What moves from `old` to `new`: exact for two rings, two HAProxy trees
/// and two slot tables of one size, sampled otherwise (see the module doc for costs).
pub fn diff(old: &AnyPlacement, new: &AnyPlacement) -> Movement {
    let names = Names::new(old.nodes(), new.nodes());
    if let (Some(a), Some(b)) = (old.as_ring(), new.as_ring()) {
        return arcs::diff(a, b, names);
    }
    if let (AnyPlacement::Haproxy(a), AnyPlacement::Haproxy(b)) = (old, new)
        && a.avalanche() == b.avalanche()
    {
        return arcs::diff_haproxy(a, b, names);
    }
    if let (AnyPlacement::PhpMemcache(a), AnyPlacement::PhpMemcache(b)) = (old, new) {
        return table::diff_buckets(a, b, names);
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
