//! `--compare`: every algorithm side by side, the table the article promises
//! in "what replaces the ring".
//!
//! For each algorithm at each cluster size (`--nodes` N and 10 N: 10 and
//! 100 by default), on the first `min(--keys, 200,000)` keys: the
//! share of keys moved when node N joins and when the last node leaves, next
//! to the optimum `1/(N+1)` and `1/N`; whether every move involved only the
//! changed node; the largest load over the mean; one lookup's time (hashing
//! included, one thread); the snapshot's heap bytes, as each algorithm
//! counts its own ([`Placement::heap_bytes`]); the build time. The
//! node that leaves is the last one to join, the only one every algorithm
//! (jump included) can remove.
//!
//! Cost: O(K) lookups per algorithm and size (K = the keys compared) plus
//! the builds, except the "ring, allocated" row, O(N² · T) (see
//! [`MAX_ALLOCATED_NODES`], above which it is skipped).

use std::time::Instant;

use ringwise::{Algorithm, Allocator, AnyPlacement, KeyHasher, Node, Placement};
use serde::Serialize;

use crate::config::{Config, Experiment, nodes_named};
use crate::error::SimError;
use crate::keys::{KeyText, Keys};
use crate::skipped::Skipped;

/// Cluster sizes compared: the run's `nodes` and ten times as many.
pub fn sizes(config: &Config) -> [u32; 2] {
    [config.nodes, config.nodes * 10]
}

/// The most keys the comparison uses (the first ones): enough for its
/// figures, and quick at every size.
pub const KEYS: u64 = 200_000;

/// Keys used by the comparison: the first `min(keys, KEYS)`.
pub fn key_count(config: &Config) -> u64 {
    config.keys.min(KEYS)
}

/// Virtual nodes of the ring in the comparison (the library default).
pub const RING_VNODES: u32 = ringwise::DEFAULT_VNODES;

/// One algorithm at one cluster size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareRow {
    pub algorithm: String,
    pub nodes: u32,
    /// Share moved when node N joins, and the optimum `1/(N+1)`.
    pub add_moved: f64,
    pub add_optimal: f64,
    /// True when every moved key went to the joining node.
    pub add_only_new: bool,
    /// Share moved when the last node leaves, and the optimum `1/N`.
    pub remove_moved: f64,
    pub remove_optimal: f64,
    /// True when every moved key came from the leaving node.
    pub remove_only_removed: bool,
    /// Largest node load over the mean load (before any change).
    pub max_load: f64,
    /// Smallest node load over the mean load: the least-loaded node's share
    /// of its fair share (0 when a node gets no key).
    pub min_load: f64,
    pub lookup_ns: f64,
    pub memory_bytes: usize,
    pub build_ms: f64,
}

/// Random ring points per node compared beside the default ring.
pub const RING_POINTS: [u32; 2] = [16, 1000];

/// Allocated points per node of the "ring, allocated" row.
pub const ALLOCATED_POINTS: u32 = 16;

/// What one row compares.
#[derive(Debug, Clone, Copy)]
enum Variant {
    /// A registry algorithm (the ring with [`RING_VNODES`]).
    Algorithm(Algorithm),
    /// The ring with this many random points per node.
    Ring(u32),
    /// The ring with this many allocated points per node.
    Allocated(u32),
}

impl Variant {
    fn label(self) -> String {
        match self {
            Variant::Algorithm(a) => a.to_string(),
            Variant::Ring(v) => format!("ring, {v} points"),
            Variant::Allocated(t) => format!("ring, allocated {t}"),
        }
    }

    /// The cluster of `nodes`, the milliseconds it took to build, and the
    /// same with `joining` added.
    fn build(
        self,
        config: &Config,
        nodes: Vec<Node>,
        joining: Node,
    ) -> Result<(AnyPlacement, f64, AnyPlacement), SimError> {
        let started = Instant::now();
        let ms = |started: Instant| started.elapsed().as_secs_f64() * 1e3;
        let (algorithm, vnodes) = match self {
            Variant::Algorithm(a) => (a, RING_VNODES),
            Variant::Ring(v) => (Algorithm::Ring, v),
            Variant::Allocated(t) => {
                let allocator = Allocator::new(t)?;
                let mut ring = config.placement_of(Algorithm::Ring, Vec::new(), RING_VNODES)?;
                let join = |ring: &AnyPlacement, node: Node| -> Result<AnyPlacement, SimError> {
                    let view = ring.as_ring().expect("a ring");
                    let points = allocator.allocate(view, &node)?;
                    Ok(ring.with_node_points(node, points)?)
                };
                for node in nodes {
                    ring = join(&ring, node)?;
                }
                let build_ms = ms(started);
                let joined = join(&ring, joining)?;
                return Ok((ring, build_ms, joined));
            }
        };
        let before = config.placement_of(algorithm, nodes, vnodes)?;
        let build_ms = ms(started);
        let joined = before.with_node(joining)?;
        Ok((before, build_ms, joined))
    }
}

/// The largest cluster the "ring, allocated" row is computed for. The
/// allocator places nodes one at a time, each against the ring as it
/// stands, so the row costs O(N² · T) for N nodes of T points: measured
/// (release, two shared cores) 0.2 s at 100 nodes, 1.6 s at 300, 18.5 s at
/// 1,000 (the whole `--nodes 100` comparison: 20.4 s, now 1.9 s).
/// Above this the row is left out with that reason ([`Skipped`]), in text,
/// CSV and JSON alike; the default run (10 and 100 nodes) keeps it.
pub const MAX_ALLOCATED_NODES: u32 = 300;

/// Why the "ring, allocated" row at `n` nodes is left out.
fn allocated_skipped(n: u32) -> Skipped {
    Skipped {
        experiment: Experiment::Compare,
        reason: format!(
            "ring, allocated {ALLOCATED_POINTS} at {n} nodes: allocating the nodes one at a \
             time costs O(N^2 * T) (1.6 s at 300 nodes, 18.5 s at 1,000), so the row is computed \
             up to {MAX_ALLOCATED_NODES} nodes"
        ),
    }
}

/// Compares every built-in algorithm, and the ring with random and
/// allocated points (up to [`MAX_ALLOCATED_NODES`]; a row left out is
/// added to `skipped`).
pub fn run(
    config: &Config,
    keys: &Keys,
    skipped: &mut Vec<Skipped>,
) -> Result<Vec<CompareRow>, SimError> {
    let hashes = keys.prefix(key_count(config));
    let mut variants: Vec<Variant> = Algorithm::ALL
        .iter()
        .map(|&a| Variant::Algorithm(a))
        .collect();
    let ring = 1 + variants
        .iter()
        .position(|v| matches!(v, Variant::Algorithm(Algorithm::Ring)))
        .unwrap_or(0);
    let extra = RING_POINTS
        .map(Variant::Ring)
        .into_iter()
        .chain([Variant::Allocated(ALLOCATED_POINTS)]);
    variants.splice(ring..ring, extra);
    let mut rows = Vec::new();
    for variant in variants {
        for n in sizes(config) {
            if matches!(variant, Variant::Allocated(_)) && n > MAX_ALLOCATED_NODES {
                skipped.push(allocated_skipped(n));
                continue;
            }
            rows.push(one(config, variant, n, &hashes)?);
        }
    }
    Ok(rows)
}

fn one(config: &Config, variant: Variant, n: u32, hashes: &[u64]) -> Result<CompareRow, SimError> {
    let names: Vec<String> = (0..=n).map(|i| format!("node-{i}")).collect();
    let joining = Node::new(names[n as usize].clone());
    let (before, build_ms, joined) =
        variant.build(config, nodes_named(&names[..n as usize]), joining)?;
    let left = before.without_node(&names[n as usize - 1])?;

    let owners = |p: &AnyPlacement| -> Vec<String> {
        let nodes = p.nodes();
        hashes
            .iter()
            .map(|&h| {
                p.owner(h)
                    .and_then(|id| nodes.name(id))
                    .unwrap_or("")
                    .to_owned()
            })
            .collect()
    };
    let (b, j, l) = (owners(&before), owners(&joined), owners(&left));
    let moved = |after: &[String]| b.iter().zip(after).filter(|(x, y)| x != y).count();
    let only = |after: &[String], node: &str, to: bool| {
        b.iter()
            .zip(after)
            .filter(|(x, y)| x != y)
            .all(|(x, y)| if to { y == node } else { x == node })
    };
    let mut load = std::collections::HashMap::<&str, u64>::new();
    for name in &b {
        *load.entry(name).or_default() += 1;
    }
    let mean = hashes.len() as f64 / f64::from(n);
    let total = hashes.len() as f64;
    Ok(CompareRow {
        algorithm: variant.label(),
        nodes: n,
        add_moved: moved(&j) as f64 / total,
        add_optimal: 1.0 / f64::from(n + 1),
        add_only_new: only(&j, &names[n as usize], true),
        remove_moved: moved(&l) as f64 / total,
        remove_optimal: 1.0 / f64::from(n),
        remove_only_removed: only(&l, &names[n as usize - 1], false),
        max_load: load.values().copied().max().unwrap_or(0) as f64 / mean,
        // A node without any key is absent from `load`.
        min_load: match load.len() == n as usize {
            true => load.values().copied().min().unwrap_or(0) as f64 / mean,
            false => 0.0,
        },
        lookup_ns: lookup_ns(config, &before),
        memory_bytes: before.heap_bytes(),
        build_ms,
    })
}

/// One thread, hashing included, over 100,000 keys `user:i`.
fn lookup_ns(config: &Config, placement: &AnyPlacement) -> f64 {
    const TIMED: u64 = 100_000;
    let mut key = KeyText::new("user:", 0);
    let mut sink = 0u32;
    let started = Instant::now();
    for _ in 0..TIMED {
        sink ^= placement
            .owner(config.hash.hash(key.as_bytes()))
            .unwrap_or(0);
        key.increment();
    }
    std::hint::black_box(sink);
    started.elapsed().as_nanos() as f64 / TIMED as f64
}
