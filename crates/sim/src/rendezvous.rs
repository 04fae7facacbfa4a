//! Experiment 6: the article's rendezvous one-liner.
//!
//! `max(nodes, key=lambda node: ring_hash(f"{node}:{key}"))`: every node
//! scores every key and the highest score wins (Thaler & Ravishankar's
//! highest random weight, 1996). A joining node takes exactly the keys it
//! now scores highest on, so every move goes to it, with no virtual nodes;
//! the price is `N` hashes per lookup. Python's `max` keeps the first of
//! equal scores, and so does this code (strict `>`).

use std::time::Instant;

use rayon::prelude::*;
use ringwise::{Error, KeyHasher, Node, Placement, StableHash};
use serde::Serialize;

use crate::config::Config;
use crate::error::SimError;
use crate::keys::{KeyText, hash_each};

/// Keys timed for the lookup-cost comparison.
const TIMED_KEYS: u64 = 5_000;

/// Vnodes of the ring the lookup time is compared with.
pub const RING_VNODES: u32 = 100;

/// The rendezvous experiment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RendezvousRow {
    /// Keys measured (the first ones).
    pub keys: u64,
    /// Nodes before the join.
    pub nodes: u32,
    /// Share of keys whose owner changed when node `N` joined.
    pub moved: f64,
    /// Share of the moved keys that went to the new node.
    pub to_new: f64,
    /// Time of one rendezvous lookup at `nodes` nodes, hashing included (one
    /// thread).
    pub lookup_ns: f64,
    /// Time of one ring lookup (`RING_VNODES` vnodes), hashing included.
    pub ring_lookup_ns: f64,
}

/// The highest-scoring of the first `count` nodes for `key`: `(index, score)`.
fn best(hash: StableHash, prefixes: &[Vec<u8>], key: &[u8], buf: &mut Vec<u8>) -> (usize, u64) {
    let mut winner = (0, 0);
    for (i, prefix) in prefixes.iter().enumerate() {
        buf.clear();
        buf.extend_from_slice(prefix);
        buf.extend_from_slice(key);
        let score = hash.hash(buf);
        if i == 0 || score > winner.1 {
            winner = (i, score);
        }
    }
    winner
}

/// Keys per parallel task: 200,000 keys make 13 tasks of ~8 ms each at
/// 10 nodes, so two cores share them evenly and rayon's workers spin little.
const CHUNK: u64 = 1 << 14;

/// `(moved, to_new)` over the keys `user:{start}..` (`count` of them) when
/// the last of `prefixes` joins the others. Every node's scores of the
/// whole chunk are hashed in one [`hash_each`] call (MD5 eight lanes at a
/// time); the winner rule is [`best`]'s: the first of equal scores wins,
/// and the joining node only by a strictly higher one. Cost: `count`
/// keys formatted once, `count · prefixes.len()` hashes, memory
/// `8 · count · 2` bytes for one node's scores and the running best.
fn join_moves(hash: StableHash, prefixes: &[Vec<u8>], start: u64, count: usize) -> (u64, u64) {
    // The chunk's key texts, concatenated: `ends[j]` is where key j ends.
    let mut text = Vec::with_capacity(count * 12);
    let mut ends = Vec::with_capacity(count);
    let mut key = KeyText::new("user:", start);
    for _ in 0..count {
        text.extend_from_slice(key.as_bytes());
        ends.push(text.len());
        key.increment();
    }
    // With no old node the old code's winner was index 0, the joining
    // node's own index, so nothing moved; kept identical here.
    let Some((joining, old)) = prefixes.split_last().filter(|(_, old)| !old.is_empty()) else {
        return (0, 0);
    };
    let mut scores = vec![0u64; count];
    let mut winner = vec![(0usize, 0u64); count];
    let score = |prefix: &[u8], scores: &mut [u64]| {
        hash_each(hash, scores, |j, buf| {
            let from = if j == 0 { 0 } else { ends[j - 1] };
            buf.extend_from_slice(prefix);
            buf.extend_from_slice(&text[from..ends[j]]);
        });
    };
    for (i, prefix) in old.iter().enumerate() {
        score(prefix, &mut scores);
        for (w, &s) in winner.iter_mut().zip(&scores) {
            if i == 0 || s > w.1 {
                *w = (i, s);
            }
        }
    }
    score(joining, &mut scores);
    let moved = winner
        .iter()
        .zip(&scores)
        .filter(|((_, old_score), new_score)| *new_score > old_score)
        .count() as u64;
    (moved, moved)
}

/// Runs the experiment on the first `config.rendezvous_keys` keys.
pub fn run<P: Placement>(
    config: &Config,
    build: &(impl Fn(Vec<Node>, u32) -> Result<P, Error> + Sync),
) -> Result<RendezvousRow, SimError> {
    let n = config.nodes as usize;
    let keys = config.rendezvous_keys.min(config.keys);
    // "node-3:" etc.; the last one is the joining node.
    let prefixes: Vec<Vec<u8>> = (0..=n).map(|i| format!("node-{i}:").into_bytes()).collect();
    let (moved, to_new) = (0..keys.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let start = c * CHUNK;
            let count = (start + CHUNK).min(keys) - start;
            join_moves(config.hash, &prefixes, start, count as usize)
        })
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    let (lookup_ns, ring_lookup_ns) = time_lookups(config, build, &prefixes[..n], keys)?;
    Ok(RendezvousRow {
        keys,
        nodes: config.nodes,
        moved: moved as f64 / keys as f64,
        to_new: to_new as f64 / moved.max(1) as f64,
        lookup_ns,
        ring_lookup_ns,
    })
}

/// Times one-thread lookups of the same keys: rendezvous, then a ring.
fn time_lookups<P: Placement>(
    config: &Config,
    build: &(impl Fn(Vec<Node>, u32) -> Result<P, Error> + Sync),
    prefixes: &[Vec<u8>],
    keys: u64,
) -> Result<(f64, f64), SimError> {
    let timed = keys.min(TIMED_KEYS);
    let mut buf = Vec::with_capacity(64);
    let mut key = KeyText::new("user:", 0);
    let mut sink = 0usize;
    let started = Instant::now();
    for _ in 0..timed {
        sink ^= best(config.hash, prefixes, key.as_bytes(), &mut buf).0;
        key.increment();
    }
    let rendezvous = started.elapsed().as_nanos() as f64 / timed as f64;

    let names = (0..config.nodes).map(|i| Node::new(format!("node-{i}")));
    let ring = build(names.collect(), RING_VNODES)?;
    let mut key = KeyText::new("user:", 0);
    let started = Instant::now();
    for _ in 0..timed {
        sink ^= ring.owner(config.hash.hash(key.as_bytes())).unwrap_or(0) as usize;
        key.increment();
    }
    let ring_ns = started.elapsed().as_nanos() as f64 / timed as f64;
    std::hint::black_box(sink);
    Ok((rendezvous, ring_ns))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The loop `join_moves` replaced: one key at a time, through `best`.
    fn one_by_one(hash: StableHash, prefixes: &[Vec<u8>], start: u64, count: u64) -> (u64, u64) {
        let n = prefixes.len() - 1;
        let mut key = KeyText::new("user:", start);
        let mut buf = Vec::new();
        let (mut moved, mut to_new) = (0, 0);
        for _ in 0..count {
            let (old, old_score) = best(hash, &prefixes[..n], key.as_bytes(), &mut buf);
            let (_, new_score) = best(hash, &prefixes[n..], key.as_bytes(), &mut buf);
            let new = if new_score > old_score { n } else { old };
            if new != old {
                moved += 1;
                to_new += u64::from(new == n);
            }
            key.increment();
        }
        (moved, to_new)
    }

    #[test]
    fn batched_join_equals_one_key_at_a_time() {
        for hash in [StableHash::Md5, StableHash::Xxh3] {
            for n in [0usize, 1, 3, 10] {
                let prefixes: Vec<Vec<u8>> =
                    (0..=n).map(|i| format!("node-{i}:").into_bytes()).collect();
                for (start, count) in [(0, 0), (0, 1), (95, 1000), (99_990, 37), (0, 5000)] {
                    assert_eq!(
                        join_moves(hash, &prefixes, start, count as usize),
                        one_by_one(hash, &prefixes, start, count),
                        "{hash} n={n} start={start} count={count}"
                    );
                }
            }
        }
    }
}
