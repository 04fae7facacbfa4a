//! What every bucket algorithm shares (jump, memento, anchor, dx and the
//! join-order ones: jumpback, binomial, fliphash): the rule that every
//! node weighs 1, and jump's replica draw order.
//!
//! Weights: a bucket algorithm gives every bucket the same share of keys,
//! so a node of another weight is refused ([`check_weight`]) with a text
//! that points to the ring.
//!
//! Replicas (documented with [`crate::Jump`]): draw 0 is the owner; draw
//! `a >= 1` asks the algorithm's bucket function for the key
//! [`replica_key`]`(hash, a)` (SplitMix64 output `a` seeded with the hash),
//! skipping a bucket already chosen or a hole; after `8·n` draws (`n`
//! buckets) the rest comes from the buckets after the owner's, in order,
//! wrapping. The draw limit depends on `n` only, so `replicas(r)` is a
//! prefix of `replicas(r + 1)`. Cost: O(r) expected draws for `r <= n/2`
//! replicas, O(n ln n) for all `n`; no allocation beyond the caller's
//! buffer.

use crate::Error;
use crate::node::{Node, NodeId, NodeTable};
use crate::placement::Distinct;

/// Draws tried per bucket before the ordered fallback.
const DRAWS_PER_BUCKET: u64 = 8;

/// Key of replica draw `a` (`a >= 1`): output `a` of SplitMix64 seeded with
/// `hash` (Steele, Lea & Flood 2014): `mix(hash + a × 0x9e3779b97f4a7c15)`.
pub fn replica_key(hash: u64, a: u64) -> u64 {
    let mut z = hash.wrapping_add(a.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The shared replica order of every bucket algorithm (module docs):
/// `bucket_of` maps a key to a bucket, `node_of` a bucket of the `size`-long array to
/// its node (`None` for a hole). See the module documentation.
pub(crate) fn replica_draws(
    hash: u64,
    want: usize,
    size: u32,
    out: &mut Vec<NodeId>,
    bucket_of: impl Fn(u64) -> Option<u32>,
    node_of: impl Fn(u32) -> Option<NodeId>,
) {
    out.clear();
    let Some(first) = bucket_of(hash).filter(|_| want > 0) else {
        return;
    };
    let mut picks = Distinct::new(out, want);
    let mut push = |b: u32| {
        if let Some(id) = node_of(b) {
            picks.push(id);
        }
        picks.is_full()
    };
    if push(first) {
        return;
    }
    // The number of draws depends on the bucket count only, never on
    // `want`: the picks are one fixed sequence cut at `want`, so
    // `replicas(r)` is a prefix of `replicas(r + 1)`.
    let draws = u64::from(size).saturating_mul(DRAWS_PER_BUCKET);
    for a in 1..draws {
        if let Some(b) = bucket_of(replica_key(hash, a))
            && push(b)
        {
            return;
        }
    }
    for i in 1..u64::from(size) {
        if push(((u64::from(first) + i) % u64::from(size)) as u32) {
            return;
        }
    }
}

/// Refuses any node of `table` whose weight is not 1 ([`check_weight`]).
pub(crate) fn check_unweighted(algorithm: &'static str, table: &NodeTable) -> Result<(), Error> {
    table
        .iter()
        .try_for_each(|node| check_weight(algorithm, node))
}

/// Validates `node` and refuses a weight other than 1 in the name of
/// `algorithm`: every bucket gets the same share.
pub(crate) fn check_weight(algorithm: &'static str, node: &Node) -> Result<(), Error> {
    node.validate()?;
    if node.weight == 1.0 {
        return Ok(());
    }
    Err(Error::Unsupported {
        algorithm,
        operation: format!("weigh node {:?} at {}", node.name, node.weight),
        reason: "every bucket gets the same share of keys; give each node weight 1 (the ring supports weights)",
        node: Some(node.name.clone()),
    })
}
