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
use crate::keys::KeyText;

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

/// Runs the experiment on the first `config.rendezvous_keys` keys.
pub fn run<P: Placement>(
    config: &Config,
    build: &(impl Fn(Vec<Node>, u32) -> Result<P, Error> + Sync),
) -> Result<RendezvousRow, SimError> {
    let n = config.nodes as usize;
    let keys = config.rendezvous_keys.min(config.keys);
    // "node-3:" etc.; the last one is the joining node.
    let prefixes: Vec<Vec<u8>> = (0..=n).map(|i| format!("node-{i}:").into_bytes()).collect();
    const CHUNK: u64 = 4096;
    let (moved, to_new) = (0..keys.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let start = c * CHUNK;
            let mut key = KeyText::new("user:", start);
            let mut buf = Vec::with_capacity(64);
            let (mut moved, mut to_new) = (0u64, 0u64);
            for _ in start..(start + CHUNK).min(keys) {
                let (old, old_score) = best(config.hash, &prefixes[..n], key.as_bytes(), &mut buf);
                let (_, new_score) = best(config.hash, &prefixes[n..], key.as_bytes(), &mut buf);
                let new = if new_score > old_score { n } else { old };
                if new != old {
                    moved += 1;
                    to_new += u64::from(new == n);
                }
                key.increment();
            }
            (moved, to_new)
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
