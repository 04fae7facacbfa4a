//! `MultiProbe`: multi-probe consistent hashing.
//!
//! Paper: Ben Appleton and Michael O'Reilly, "Multi-Probe Consistent
//! Hashing", arXiv:1505.00062, 2015 (compatibility notes §8). Not a wire
//! format: the hashes below are this library's choice.
//!
//! How it works: every node has one point on the ring, `xxh3_64(name)` (seed
//! 0, whatever the key hasher). A key hash `h` is probed `k` times: probe `i`
//! is `h_i = xxh3_64_with_seed(h as 8 little-endian bytes, seed i)`, for
//! `i` in `0..k`. Each probe finds its successor, the first point `>= h_i`
//! (wrapping past the largest point to the smallest), at the clockwise
//! distance `point − h_i` (mod 2^64). The owner is the successor at the
//! smallest distance; equal distances (only when points coincide) go to the
//! smallest id, i.e. the first name.
//!
//! Why it balances: with one point per node, arcs differ by a factor of
//! `ln N` and so would loads. A node behind a long arc is the successor of
//! many probes, but mostly from far away, and loses them to nodes that
//! another probe of the same key reaches from closer. The paper proves a
//! peak-to-mean load of `1 + ε` with `1 + 1/ε` probes: 21 probes, 1.05.
//!
//! Replicas: every node `j` has a score for `h`, its smallest clockwise
//! distance from any probe, `min_i (p_j − h_i)`; replicas are the nodes by
//! ascending `(score, id)`, so the first is the owner. They come from merging
//! the `k` clockwise walks: each probe keeps a cursor on its next node not yet
//! chosen, and the closest cursor wins each round. Example (a ring of 100
//! for short): probes at 10 and 50, nodes A at 20, B at 55, C at 90. Scores:
//! A `min(10, 70) = 10`, B `min(45, 5) = 5`, C `min(80, 40) = 40`, so the
//! replicas are B, A, C: B owns the key although A follows the first probe.
//!
//! Movement: a node's point depends only on its name, so adding a node moves
//! keys only to it and removing one moves only its keys.
//!
//! Cost: 12 bytes per node (point and owner). Lookup: `k` hashes and `k`
//! binary searches, `O(k log N)`; `n` replicas `O(k·n²)` without allocation
//! (the cursors live on the stack, hence [`MultiProbe::MAX_PROBES`]).
//!
//! Quirks: no weights (one point per node gives equal shares), so nodes of
//! different weights are refused with [`Error::Unsupported`]; a cluster whose
//! weights are all equal is accepted.

use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};

use crate::Error;
use crate::algo::params::{self, Param, Params, Pinned, Registered};
use crate::node::{Node, NodeId, NodeTable};
use crate::placement::{Distinct, Placement};

/// An immutable multi-probe placement over a node table.
#[derive(Debug, Clone)]
pub struct MultiProbe {
    nodes: NodeTable,
    probes: u32,
    /// Node points, ascending; equal points in id order.
    points: Vec<u64>,
    /// `owners[i]` is the node at `points[i]`.
    owners: Vec<NodeId>,
}

impl MultiProbe {
    /// The paper's recommendation: peak-to-mean load about 1.05.
    pub const DEFAULT_PROBES: u32 = params::DEFAULT_PROBES;
    /// Most probes accepted (peak-to-mean 1.004; more only costs time).
    pub const MAX_PROBES: u32 = 256;

    /// Validates `nodes` and places them with `probes` probes per key.
    pub fn new(nodes: Vec<Node>, probes: u32) -> Result<Self, Error> {
        Self::from_table(NodeTable::new(nodes)?, probes)
    }

    /// Places a validated node table with `probes` probes per key.
    pub fn from_table(nodes: NodeTable, probes: u32) -> Result<Self, Error> {
        if probes == 0 || probes > Self::MAX_PROBES {
            return Err(Error::InvalidParameter {
                algorithm: "multi-probe",
                parameter: "probes",
                value: probes.to_string(),
                expected: "between 1 and 256 probes per key, e.g. 21",
            });
        }
        check_weights(&nodes)?;
        let mut pairs: Vec<(u64, NodeId)> = (0..nodes.len() as NodeId)
            .map(|id| (xxh3_64(nodes.name_of(id).as_bytes()), id))
            .collect();
        pairs.sort_unstable();
        let (points, owners) = pairs.into_iter().unzip();
        Ok(MultiProbe {
            nodes,
            probes,
            points,
            owners,
        })
    }

    /// Probes per key.
    pub fn probes(&self) -> u32 {
        self.probes
    }

    /// Position of the first point `>= h`, wrapping to 0 (points non-empty).
    #[inline]
    fn successor(&self, h: u64) -> usize {
        let at = self.points.partition_point(|&p| p < h);
        if at == self.points.len() { 0 } else { at }
    }

    /// The first position from `at` clockwise whose node is not in `chosen`.
    /// The caller guarantees one exists (fewer chosen than nodes).
    fn next_unchosen(&self, mut at: usize, chosen: &Distinct<'_>) -> usize {
        for _ in 0..self.owners.len() {
            if !chosen.contains(self.owners[at]) {
                break;
            }
            at = if at + 1 == self.owners.len() {
                0
            } else {
                at + 1
            };
        }
        at
    }
}

impl Placement for MultiProbe {
    /// The successor at the smallest distance over all probes; `None` only
    /// without nodes. O(k log N): k probe hashes and binary searches.
    #[inline]
    fn owner(&self, hash: u64) -> Option<NodeId> {
        if self.points.is_empty() {
            return None;
        }
        (0..self.probes)
            .map(|i| {
                let h = probe(hash, i);
                let at = self.successor(h);
                (self.points[at].wrapping_sub(h), self.owners[at])
            })
            .min()
            .map(|(_, id)| id)
    }

    /// Up to `n` nodes by ascending `(score, id)` (see the module docs).
    /// O(k log N + n·k·steps), steps = positions skipped past chosen nodes.
    fn replicas_into(&self, hash: u64, n: usize, out: &mut Vec<NodeId>) {
        out.clear();
        let want = n.min(self.points.len());
        if want == 0 {
            return;
        }
        let k = self.probes as usize;
        let mut hashes = [0u64; Self::MAX_PROBES as usize];
        let mut cursors = [0u32; Self::MAX_PROBES as usize];
        for i in 0..k {
            hashes[i] = probe(hash, i as u32);
            cursors[i] = self.successor(hashes[i]) as u32;
        }
        let mut picks = Distinct::new(out, want);
        while !picks.is_full() {
            let mut best = (u64::MAX, NodeId::MAX);
            for (h, cursor) in hashes[..k].iter().zip(&mut cursors[..k]) {
                let at = self.next_unchosen(*cursor as usize, &picks);
                *cursor = at as u32;
                best = best.min((self.points[at].wrapping_sub(*h), self.owners[at]));
            }
            picks.push(best.1);
        }
    }

    /// The members behind the ids.
    fn nodes(&self) -> &NodeTable {
        &self.nodes
    }

    /// One point and one id per node.
    fn heap_bytes(&self) -> usize {
        self.points.capacity() * 8 + self.owners.capacity() * 4
    }

    fn with_node(&self, node: Node) -> Result<Self, Error> {
        Self::from_table(self.nodes.with(node)?.0, self.probes)
    }

    fn without_node(&self, name: &str) -> Result<Self, Error> {
        Self::from_table(self.nodes.without(name)?.0, self.probes)
    }
}

impl Registered for MultiProbe {
    /// Points follow from the names.
    fn pin(&self) -> Result<Pinned, Error> {
        Ok(Pinned::default())
    }

    fn build(nodes: Vec<Node>, params: &Params) -> Result<Self, Error> {
        Self::new(nodes, params.probes)
    }

    const READS: &'static [Param] = &[Param::Probes];
}

/// Probe `i` of a key hash.
#[inline]
fn probe(hash: u64, i: u32) -> u64 {
    xxh3_64_with_seed(&hash.to_le_bytes(), u64::from(i))
}

fn check_weights(nodes: &NodeTable) -> Result<(), Error> {
    let mut weights = nodes.iter().map(|n| n.weight);
    match weights.next() {
        Some(first) if weights.any(|w| w != first) => Err(Error::Unsupported {
            algorithm: "multi-probe",
            operation: "give nodes different weights".into(),
            reason: "each node has one point and an equal share of keys; \
                     give every node the same weight, or use the ring or maglev",
            node: None,
        }),
        _ => Ok(()),
    }
}
