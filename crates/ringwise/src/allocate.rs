//! Balanced point allocation: choose a joining node's points instead of
//! hashing them, so that 16 points per node balance a ring as well as
//! about 1,000 random ones.
//!
//! Based on Cassandra's token allocation (CASSANDRA-7032, Branimir Lambov,
//! Cassandra 3.0; `allocate_tokens_for_local_replication_factor` since
//! 4.0; the `dht/tokenallocator` package), which showed that a few
//! *chosen* tokens per node beat hundreds of random ones: random points
//! leave each node's ownership spread by about `1/√V` for `V` points per
//! node, while chosen points split the ranges that are too big.
//!
//! How it works. The balance measure is `Σ (own_n − t_n)² / t_n` over the
//! nodes, where `own_n` is the part of the circle node `n` holds a replica
//! of (with `R` replicas, each hash counts for `R` nodes, found by the
//! ring's own replica walk, zone-aware or not) and `t_n = R · w_n / W` is
//! its weight's share. A joining node's points are placed one at a time,
//! greedily: for every gap between two consecutive points, the change of
//! the measure is a quadratic `A·s² + B·s + C` in `s`, how far into the gap
//! the new point goes (the new point takes `s` of that range from its
//! replicas; the ranges a few points before it change replicas by a
//! constant), so the best `s` of each gap has a closed form, and the best
//! gap wins (ties: the first gap in ring order). Two refinement passes then
//! take each of the node's points out and put it back where it is best
//! now. Every point lands strictly inside a gap, so no two points collide
//! (Cassandra refuses shared tokens), and keys move only to the new node,
//! like any join.
//!
//! Worked example (`R = 1`, equal weights, 10 nodes at exactly 10 %): the
//! 11th node's target is 1/11 ≈ 9.09 %. Its first point goes into the
//! largest range `L` of a node `o` with `e_o = own_o − t ≈ 0.91 %` to
//! spare; the quadratic's best `s = (e_o + t) / 2 ≈ 5 %` is far beyond
//! `L ≈ 0.6 %`, so it takes the whole range but one hash. The node's later
//! points go where the spare is largest; as the node nears its target the
//! best `s` falls inside the gap and the last points take parts of ranges.
//!
//! Leaves. A node that leaves gives each of its ranges to the next point's
//! owner, which can leave a few nodes heavy. [`Allocator::rebalance`] moves
//! at most `K` existing points, each time the one whose removal plus best
//! re-insertion (for the same node) lowers the measure most; it stops
//! early when no move helps. Unlike a join, these moves carry keys between
//! the remaining nodes, and `ringwise plan` reports them.
//!
//! Cost: [`Allocator::allocate`] O(T · P · w · R) for `T` new points on a
//! ring of `P` points, where `w` is the replica walk (about `R` points):
//! T + 2·T placements, each pricing every gap, plus an O(P · w) recount
//! after each (about 0.3 ms per node at 100 nodes of 16 points, see
//! BENCHMARKS.md). [`Allocator::rebalance`] O(K · N · P · w · R).
//!
//! Quirks. The points are state: they must be stored and agreed on (the
//! cluster file's `points = [...]`, Cassandra's `tokens`, etcd members),
//! unlike hashed points any client recomputes from a name. The result
//! depends on the ring it is computed from, so nodes must join one at a
//! time against the current ring. With zone-aware replicas and `R` at
//! least the number of zones, every zone holds one replica of each key, so
//! zones of unequal total weight cannot all reach their share. With `R`
//! at least the node count (every node holds everything) the measure is
//! flat, and the allocator balances primary ownership (`R = 1`) instead.
//! Pricing ignores replica walks that circle the whole ring (only while a
//! zone has no point yet); the recount after each placement is exact.

mod model;

use crate::algo::ring::{RingView, point_count};
use crate::node::{Node, NodeId, NodeTable};
use crate::{Error, MAX_POINTS_CEILING};
use model::Model;

/// Most points an allocation places for one node.
pub const MAX_ALLOCATED: u64 = 4096;
/// Most replicas the allocator balances for.
pub const MAX_ALLOCATION_REPLICAS: u32 = 32;
/// Refinement passes after the greedy placement.
const REFINE_PASSES: usize = 2;
/// A move must lower the measure by more than this (floating noise).
const EPSILON: f64 = 1e-12;

/// Chooses points for ring nodes: `points` per unit of weight, balancing
/// ownership of `replicas` replicas, optionally zone-aware.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allocator {
    points: u32,
    replicas: u32,
    zones: bool,
}

/// One point of an existing node moved by [`Allocator::rebalance`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Relocation {
    /// The node, as an id of the ring it was computed on.
    pub node: NodeId,
    /// The point it gives up.
    pub from: u64,
    /// The point it takes instead.
    pub to: u64,
}

/// Replicated ownership per node, exact over the ring's ranges.
#[derive(Debug, Clone, PartialEq)]
pub struct Balance {
    /// Replicas per hash counted (`min(R, N)`).
    pub replicas: usize,
    /// Per node id: the fraction of hashes it holds a replica of, divided
    /// by `replicas` (so the shares sum to 1).
    pub share: Vec<f64>,
    /// Per node id: its weight's share.
    pub expected: Vec<f64>,
}

impl Balance {
    /// The largest `share / expected`: 1.0 is perfect.
    pub fn peak(&self) -> f64 {
        self.share
            .iter()
            .zip(&self.expected)
            .map(|(s, e)| s / e)
            .fold(0.0, f64::max)
    }
}

impl Allocator {
    /// `points` per unit of weight (a node gets `round(points · weight)`,
    /// at least one), balancing one replica without zones.
    pub fn new(points: u32) -> Result<Self, Error> {
        if points == 0 || u64::from(points) > MAX_ALLOCATED {
            return Err(invalid(
                "points",
                points,
                "1 to 4096 points per unit of weight (16 is plenty)",
            ));
        }
        Ok(Allocator {
            points,
            replicas: 1,
            zones: false,
        })
    }

    /// Balance the ownership of `replicas` replicas per key (1 to 32), as
    /// the ring's replica walk places them.
    pub fn replicas(self, replicas: u32) -> Result<Self, Error> {
        if replicas == 0 || replicas > MAX_ALLOCATION_REPLICAS {
            return Err(invalid("replicas", replicas, "1 to 32 replicas per key"));
        }
        Ok(Allocator { replicas, ..self })
    }

    /// Count replicas with the zone-aware walk ([`crate::Ring::zoned_replicas_into`]).
    pub fn zones(self, zones: bool) -> Self {
        Allocator { zones, ..self }
    }

    /// How many points a node of `weight` gets.
    pub fn count(&self, weight: f64) -> u64 {
        point_count(self.points, weight)
    }

    /// Chooses the points of `node`, which must not be on `ring` yet; the
    /// ring with them is `ring.with_node_points(node, points)`. Sorted,
    /// deterministic, none on an existing point. O(T · P · w · R).
    pub fn allocate(&self, ring: &dyn RingView, node: &Node) -> Result<Vec<u64>, Error> {
        node.validate()?;
        let count = self.count(node.weight);
        if count > MAX_ALLOCATED {
            return Err(invalid(
                "points",
                count,
                "at most 4096 points for one node: lower the points per weight or the weight",
            ));
        }
        let total = ring.point_count() as u64 + count;
        if total > MAX_POINTS_CEILING {
            return Err(Error::TooManyPoints {
                points: total,
                limit: MAX_POINTS_CEILING,
            });
        }
        let (table, at) = ring.nodes().with(node.clone())?;
        if ring.point_count() == 0 && std::env::var("RW_RAND").is_err() {
            return Ok(evenly_spaced(count));
        }
        if table.len() <= self.replicas as usize && self.replicas > 1 && std::env::var("RW_RAND").is_ok() {
            return Ok(hashed(node, count));
        }
        let shift = |id: NodeId| id + u32::from(id >= at);
        let entries = ring.points().map(|(p, id)| (p, shift(id))).collect();
        let mut model = self.model(&table, entries);
        model.joining = Some(at);
        for _ in 0..count {
            place(&mut model, at)?;
        }
        for _ in 0..REFINE_PASSES {
            for k in 0..count as usize {
                refine(&mut model, at, k);
            }
        }
        let mut points: Vec<u64> = model
            .points
            .iter()
            .zip(&model.owners)
            .filter(|&(_, &o)| o == at)
            .map(|(&p, _)| p)
            .collect();
        points.sort_unstable();
        Ok(points)
    }

    /// Up to `moves` points of existing nodes moved to even out ownership
    /// (after a leave, typically), in the order to apply them; fewer when
    /// no move helps. O(K · N · P · w · R).
    pub fn rebalance(&self, ring: &dyn RingView, moves: usize) -> Result<Vec<Relocation>, Error> {
        let mut model = self.model(ring.nodes(), ring.points().collect());
        let mut done = Vec::new();
        for _ in 0..moves {
            let Some(relocation) = relocate(&mut model) else {
                break;
            };
            done.push(relocation);
        }
        Ok(done)
    }

    /// Replicated ownership of every node of `ring`. O(P · w).
    pub fn balance(&self, ring: &dyn RingView) -> Balance {
        let model = self.model(ring.nodes(), ring.points().collect());
        let want: f64 = model.target.iter().sum();
        Balance {
            replicas: want.round() as usize,
            share: model.own.iter().map(|o| o / want).collect(),
            expected: model.target.iter().map(|t| t / want).collect(),
        }
    }

    fn model(&self, table: &NodeTable, entries: Vec<(u64, NodeId)>) -> Model {
        let ids = 0..table.len() as NodeId;
        let weights: Vec<f64> = table.iter().map(|n| n.weight).collect();
        let groups = match self.zones {
            true => ids.map(|id| table.zone_of(id)).collect(),
            false => ids.collect(),
        };
        // Every node holding every key leaves nothing to balance but the
        // primaries.
        let replicas = match self.replicas as usize {
            r if r >= table.len() => table.len().saturating_sub(1).max(1),
            r => r,
        };
        Model::new(entries, &weights, groups, replicas)
    }
}

fn invalid(parameter: &'static str, value: impl ToString, expected: &'static str) -> Error {
    Error::InvalidParameter {
        algorithm: "allocator",
        parameter,
        value: value.to_string(),
        expected,
    }
}

/// The first node's points: `count` equal arcs, each point in the middle
/// of its arc's span `[k·2^64/T, (k+1)·2^64/T)`.
fn evenly_spaced(count: u64) -> Vec<u64> {
    let count = u128::from(count);
    (0..count)
        .map(|k| (((2 * k + 1) << 64) / (2 * count)) as u64)
        .collect()
}

/// Hashed points `xxh3("name#i")`, for the first `R` nodes.
fn hashed(node: &Node, count: u64) -> Vec<u64> {
    use crate::hash::{KeyHasher, StableHash};
    let mut points: Vec<u64> = (0..count).map(|i| StableHash::Xxh3.hash(format!("{}#{i}", node.name).as_bytes())).collect();
    points.sort_unstable();
    points.dedup();
    points
}

/// One point for `node` at the best gap.
fn place(model: &mut Model, node: NodeId) -> Result<(), Error> {
    let offer = model.best_insert(node).ok_or(Error::InvalidParameter {
        algorithm: "allocator",
        parameter: "points",
        value: model.len().to_string(),
        expected: "a ring with a free hash between two points",
    })?;
    model.insert(offer.point, node);
    Ok(())
}

/// Takes `node`'s `k`-th point out and puts it back where it is best now,
/// if that lowers the measure.
fn refine(model: &mut Model, node: NodeId, k: usize) {
    let Some(index) = model
        .owners
        .iter()
        .enumerate()
        .filter(|&(_, &o)| o == node)
        .nth(k)
        .map(|(i, _)| i)
    else {
        return;
    };
    let mut trial = model.clone();
    trial.remove(index);
    if let Some(offer) = trial.best_insert(node) {
        trial.insert(offer.point, node);
        if trial.objective() < model.objective() - EPSILON {
            *model = trial;
        }
    }
}

/// The best single move of an existing point, applied; `None` when none
/// lowers the measure.
fn relocate(model: &mut Model) -> Option<Relocation> {
    let offers: Vec<_> = (0..model.target.len() as NodeId)
        .map(|n| model.best_insert(n))
        .collect();
    let (index, _) = (0..model.len())
        .filter_map(|q| {
            let offer = offers[model.owners[q] as usize]?;
            Some((q, model.remove_cost(q) + offer.delta))
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .filter(|&(_, delta)| delta < -EPSILON)?;
    let (node, from) = (model.owners[index], model.points[index]);
    let mut trial = model.clone();
    trial.remove(index);
    let offer = trial.best_insert(node)?;
    trial.insert(offer.point, node);
    if trial.objective() >= model.objective() - EPSILON {
        return None;
    }
    *model = trial;
    Some(Relocation {
        node,
        from,
        to: offer.point,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::Placement;
    use crate::{Explicit, Ring};

    /// The model's replicated ownership equals the ring's own replica
    /// lists, read at every point (each range's replicas are those of the
    /// hash at its end).
    fn check_model(ring: &Ring<Explicit>, replicas: u32, zones: bool) {
        let allocator = Allocator::new(16).unwrap().replicas(replicas).unwrap().zones(zones);
        let balance = allocator.balance(ring);
        let n = ring.nodes().len();
        let want = (replicas as usize).min(n);
        let mut own = vec![0.0; n];
        let points: Vec<(u64, NodeId)> = ring.iter().collect();
        let mut out = Vec::new();
        for (i, &(p, _)) in points.iter().enumerate() {
            let before = points[(i + points.len() - 1) % points.len()].0;
            let len = if points.len() == 1 { 1u128 << 64 } else { u128::from(p.wrapping_sub(before)) };
            if zones {
                ring.zoned_replicas_into(p, want, &mut out);
            } else {
                ring.replicas_into(p, want, &mut out);
            }
            for &id in &out {
                own[id as usize] += len as f64 / 18_446_744_073_709_551_616.0 / want as f64;
            }
        }
        let effective = if replicas as usize >= n { 1 } else { want };
        if effective == want {
            for id in 0..n {
                assert!((own[id] - balance.share[id]).abs() < 1e-9, "node {id}: {} vs {}", own[id], balance.share[id]);
            }
        }
    }

    #[test]
    fn the_model_counts_replicas_as_the_ring_does() {
        let allocator = Allocator::new(4).unwrap().replicas(3).unwrap();
        let mut ring: Ring<Explicit> = Ring::builder().scheme(Explicit).build().unwrap();
        for i in 0..12 {
            let node = Node::new(format!("n{i}")).zone(format!("z{}", i % 3));
            let points = allocator.allocate(&ring, &node).unwrap();
            ring = ring.with_node_points(node, points).unwrap();
            for r in 1..=4 {
                check_model(&ring, r, false);
                check_model(&ring, r, true);
            }
        }
    }
}
