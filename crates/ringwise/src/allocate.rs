//! Balanced point allocation: choose a joining node's points instead of
//! hashing them, so that 16 points per node balance a ring better than
//! 1,000 random ones.
//!
//! Based on Cassandra's token allocation (CASSANDRA-7032 by Branimir
//! Lambov, Cassandra 3.0; `allocate_tokens_for_local_replication_factor`
//! since 4.0; the `dht/tokenallocator` package, read for its ideas, none of
//! its code): random points leave each node's ownership spread by about
//! `1/√V` for `V` points per node, while chosen points split the ranges
//! that are too big.
//!
//! One replica (`allocate/level.rs`). A point then takes
//! hashes from one node only, so a join levels the heaviest nodes down to
//! staggered levels (water-filling) and the joiner to the same level: the
//! balance holds whatever layout the names' hashes started (12 name sets,
//! 10 to 100 nodes of 16 points: 1.041 worst; the measure below reached
//! 1.049 for `node-<i>` and 1.061 for `db<i>`, and left the last joiner
//! 8 % under its weight's share, from its two-thirds split). Points
//! already chosen are stored (cluster file, etcd members), never
//! recomputed, so existing clusters keep their placement; only joins from
//! now on get the new points. The measure and the greedy below are for
//! `R > 1`.
//!
//! How it works. With `R` replicas, a hash belongs to the `R` nodes of the
//! ring's own replica walk (zone-aware or not), and the walk credits each
//! range to the point where it met each replica: a node's *replicated
//! ownership* is its points' credits. The measure, as in Cassandra, is
//!
//! `Σ_nodes ((own_n − t_n) / c_n)² + Σ_points ((credit_p − t_n/c_n) / c_n)²`
//!
//! where `t_n = R · w_n / W` is the node's weight share of the `R` copies
//! and `c_n` its point count. The node term balances nodes; the point term
//! keeps every point's share near `t_n / c_n`, which keeps the ranges of
//! even size so that later nodes find ranges worth splitting (without it,
//! the first nodes end with twice their share at `R = 3`). A joining node
//! of `T` points starts at its ideal ownership, its unplaced points
//! counting as ideal, and its node term weighs `(placed + 1) / T`, so its
//! first points are free to go where the others need them most.
//!
//! The points are placed one at a time, greedily: a gap's price is exact
//! (the new point takes part of that range from its replicas, and the
//! walks of the few ranges before it that cross the gap change replicas),
//! and the cheapest gap wins (ties: the lowest point). Gaps are priced all
//! at once, then lazily (`allocate/queue.rs`, Cassandra's heuristic): only
//! the entry on top of the queue is priced again before it is taken.
//! Two refinement passes then take each new point out and put it back
//! where it is cheapest now. The first `R` nodes, where every node holds
//! every key, split the widest range again and again at a fraction between
//! 0.553 and 0.628 drawn from a generator seeded by the point count (as
//! Cassandra starts rings), the very first point at `xxh3(name)`. Every
//! point lands strictly inside a gap, so no two points collide (Cassandra
//! refuses shared tokens), and keys move only to the new node, like any
//! join.
//!
//! Where in a gap. A new point takes the first two thirds of its gap
//! (Cassandra splits at the middle). Measured by the growth experiment
//! (`examples/allocation.rs`, 1 to 100 nodes of 16 points, worst peak/mean
//! from 10 nodes on, `R = 1`): a half 1.148, 0.6 1.064, two thirds 1.040,
//! 0.7 1.051; with `R = 3` all of them stay within 1.04. A node that takes
//! two thirds leaves a third to the donor, so ranges keep varied sizes and
//! the next joiners can take whole large ones.
//!
//! Worked example. Ring `a` at points 100 and 400 (two ranges: (400, 100]
//! wrapping, and (100, 400] of 300 hashes), `R = 1`. Node `b` joining with
//! one point prices both gaps: in (100, 400] its point is `100 + ⌊2·300/3⌋
//! = 300`, taking 200 hashes from `a`; the wrapping gap is about 2^64 long
//! and gives `b` two thirds of the circle, nearer its half. It wins.
//!
//! Leaves. A node that leaves gives each of its ranges to the next point's
//! owner, which can leave a few nodes heavy. [`Allocator::rebalance`] moves
//! at most `K` existing points, each time the one whose removal plus best
//! re-insertion (for the same node) lowers the measure most; it stops
//! early when no move helps. Unlike a join, these moves carry keys between
//! the remaining nodes; `ringwise plan` reports them.
//!
//! Cost: [`Allocator::allocate`] with one replica O(P log P + T² · P) at
//! worst (microseconds at 100 nodes); otherwise O(T · P · w) for `T` new points on a
//! ring of `P` points, where `w` is the replica walk (about `R` points):
//! one pricing of every gap, then 3·T placements (T, and two refinement
//! passes), each re-pricing a few queue entries in O(w · R + log P) and
//! recounting the ring in O(P · w) (BENCHMARKS.md: a few milliseconds for
//! the 100th node of 16 points). [`Allocator::rebalance`] O(K · N · P · w ·
//! R): every node's best gap, every point's removal. [`Allocator::balance`]
//! O(P · w).
//!
//! Quirks. The points are state: they must be stored and agreed on (the
//! cluster file's `points = [...]`, Cassandra's `tokens`, etcd members),
//! unlike hashed points any client recomputes from a name. The result
//! depends on the ring it is computed from, so nodes join one at a time
//! against the current ring. With zone-aware replicas and `R` at least the
//! number of zones, every zone holds one replica of each key, so zones of
//! unequal total weight cannot all reach their share. Pricing ignores
//! replica walks that circle the whole ring (only while a zone has no point
//! yet); the recount after each placement is exact.

mod level;
mod model;
mod queue;

use crate::Error;
use crate::algo::ring::{RingView, point_count};
use crate::budget::MAX_POINTS_CEILING;
use crate::node::{Node, NodeId, NodeTable};
use model::{Model, Scratch};
use queue::Queue;

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
    /// The smallest `share / expected`.
    pub fn low(&self) -> f64 {
        self.share
            .iter()
            .zip(&self.expected)
            .map(|(s, e)| s / e)
            .fold(f64::INFINITY, f64::min)
    }

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

    /// The levels' spread for one replica (`allocate/level.rs`): `1 / V`
    /// for `V` points per unit of weight, at most ¼. O(1).
    fn stagger(&self) -> f64 {
        (1.0 / f64::from(self.points)).min(0.25)
    }

    /// How many points a node of `weight` gets.
    pub fn count(&self, weight: f64) -> u64 {
        point_count(self.points, weight)
    }

    /// Chooses the points of `node`, which must not be on `ring` yet; the
    /// ring with them is `ring.with_node_points(node, points)`. Sorted,
    /// deterministic, none on an existing point. O(P log P + T² · P)
    /// with one replica, O(T · P · w · R) with more.
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
        if ring.nodes().len() < self.replicas as usize || ring.point_count() == 0 {
            return Ok(splits(ring, node, count));
        }
        let shift = |id: NodeId| id + u32::from(id >= at);
        let entries: Vec<(u64, NodeId)> = ring.points().map(|(p, id)| (p, shift(id))).collect();
        if self.replicas == 1 {
            let (points, owners): (Vec<u64>, Vec<NodeId>) = entries.into_iter().unzip();
            let total: f64 = table.iter().map(|n| n.weight).sum();
            let targets: Vec<f64> = table.iter().map(|n| n.weight / total).collect();
            return Ok(level::allocate(
                &points,
                &owners,
                &targets,
                at,
                count as usize,
                self.stagger(),
            ));
        }
        let mut model = self.model(&table, entries);
        model.join(at, count as usize);
        let mut scratch = Scratch::default();
        let mut queue = Queue::new(&model, at, &mut scratch);
        for _ in 0..count {
            place(&mut model, &mut queue, &mut scratch)?;
        }
        for _ in 0..REFINE_PASSES {
            for k in 0..count as usize {
                refine(&mut model, &mut queue, at, k, &mut scratch);
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
        let mut scratch = Scratch::default();
        for _ in 0..moves {
            let Some(relocation) = relocate(&mut model, &mut scratch) else {
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
            share: model.owned().iter().map(|o| o / want).collect(),
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
        Model::new(entries, &weights, groups, self.replicas as usize)
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

/// Points for the first `R` nodes, where every node holds every key and
/// there is nothing to balance yet: split the largest range again and
/// again, each time at a fraction between 0.553 (1 − 1/√5) and 0.628 of it,
/// drawn from a generator seeded with the number of points. Cassandra
/// starts its rings this way: ranges of varied sizes let later allocations
/// keep the balance at any node count, where equal ranges would leave the
/// first nodes with too much. The very first point is `xxh3(name)`.
fn splits(ring: &dyn RingView, node: &Node, count: u64) -> Vec<u64> {
    use crate::hash::{KeyHasher, StableHash};
    let mut points: Vec<u64> = ring.points().map(|(p, _)| p).collect();
    let mut chosen = Vec::with_capacity(count as usize);
    let mut seed = points.len() as u64;
    if points.is_empty() {
        let first = StableHash::Xxh3.hash(node.name.as_bytes());
        points.push(first);
        chosen.push(first);
    }
    while (chosen.len() as u64) < count {
        let p = points.len();
        let span = |i: usize| match p {
            1 => 1u128 << 64,
            _ => u128::from(points[i].wrapping_sub(points[(i + p - 1) % p])),
        };
        let widest = (0..p)
            .max_by(|&a, &b| span(a).cmp(&span(b)).then(b.cmp(&a)))
            .unwrap_or(0);
        let fraction = 0.5528 + 0.075 * unit(&mut seed);
        let offset = ((span(widest) as f64 * fraction) as u128)
            .clamp(1, span(widest).saturating_sub(1).max(1)) as u64;
        let point = points[(widest + p - 1) % p].wrapping_add(offset);
        if points.binary_search(&point).is_ok() {
            break; // a ring too full to split: fewer points
        }
        points.insert(points.partition_point(|&q| q < point), point);
        chosen.push(point);
    }
    chosen.sort_unstable();
    chosen
}

/// A SplitMix64 draw in [0, 1).
fn unit(state: &mut u64) -> f64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
}

/// One point for the queue's node at the best gap.
fn place(model: &mut Model, queue: &mut Queue, scratch: &mut Scratch) -> Result<(), Error> {
    let offer = queue.best(model, scratch).ok_or(Error::InvalidParameter {
        algorithm: "allocator",
        parameter: "points",
        value: model.len().to_string(),
        expected: "a ring with a free hash between two points",
    })?;
    model.insert(offer.point, queue.node());
    queue.inserted(model, offer.point, scratch);
    Ok(())
}

/// Takes `node`'s `k`-th point out and puts it back where it is best now,
/// if that lowers the measure.
fn refine(model: &mut Model, queue: &mut Queue, node: NodeId, k: usize, scratch: &mut Scratch) {
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
    if let Some(offer) = queue.best(&trial, scratch) {
        trial.insert(offer.point, node);
        queue.inserted(&trial, offer.point, scratch);
        if trial.objective() < model.objective() - EPSILON {
            *model = trial;
        }
    }
}

/// The best single move of an existing point, applied; `None` when none
/// lowers the measure.
fn relocate(model: &mut Model, scratch: &mut Scratch) -> Option<Relocation> {
    let offers: Vec<_> = (0..model.target.len() as NodeId)
        .map(|n| model.best_insert(n, scratch))
        .collect();
    let (index, _) = (0..model.len())
        .filter_map(|q| {
            let offer = offers[model.owners[q] as usize]?;
            Some((q, model.remove_cost(q, scratch) + offer.delta))
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .filter(|&(_, delta)| delta < -EPSILON)?;
    let (node, from) = (model.owners[index], model.points[index]);
    let mut trial = model.clone();
    trial.remove(index);
    let offer = trial.best_insert(node, scratch)?;
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
