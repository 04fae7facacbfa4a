//! Consistent hashing with bounded loads, over any placement.
//!
//! Paper: Mirrokni, Thorup, Zadimoghaddam, "Consistent Hashing with Bounded
//! Loads", SODA 2018 (arXiv:1608.01350); deployed as HAProxy's
//! `hash-balance-factor` and Vimeo's "bounded-load" balancer.
//!
//! How it works: every node may hold at most `⌈(1+ε) · m · wᵢ / W⌉` of the
//! `m` items (`wᵢ / W` its share of the weight). An item goes to the first
//! node of its preference list (the placement's `replicas` order: clockwise
//! on a ring) that is still under its bound. With `ε = 0.25` no node ever
//! carries more than 1.25× its fair share, however skewed the keys, while
//! most items still sit on their first choice.
//!
//! Two forms:
//! - [`Bounded::assign`]: a fixed set of items (keys, partitions), placed in
//!   the order given; deterministic for the same placement and items.
//! - [`Bounded::acquire`]: live requests. The bound uses the number of
//!   requests in flight including the new one; the returned [`Lease`]
//!   releases its slot when dropped. Counters are atomics, so any number of
//!   threads may acquire and release at once; two racing acquirers may both
//!   see the last free slot, so a node can exceed its bound by the number of
//!   simultaneous racers (never more), a documented trade for lock freedom.
//!
//! Cost: an item costs one `owner` lookup when its owner has room, which is
//! the usual case; otherwise its preference list is read in doubling
//! prefixes (2, 4, 8, ... nodes) until a node with room appears. Within one
//! `assign` loads only grow, so a node found full stays full: each hash that
//! spills keeps its walk (the prefix read and the first entry not known
//! full, in a `BTreeMap` by hash: deterministic, O(log D) per spill for D
//! distinct spilled hashes), and a repeated hash resumes there. So `assign`
//! of K items with D distinct hashes reads at most `K + Σ 4·(ℓ_h + 1)`
//! preference-list entries plus `Σ ℓ_h` cursor steps, where `ℓ_h ≤ N` is how
//! many full nodes hash `h` walked past: O(K + D·spill) in general, and one
//! hot key repeated K times over N nodes is O(K + N), never O(K · N)
//! (it was K · N). Memory: the walks, at most the entries
//! read. `acquire` reads doubling prefixes on each spill (leases come and
//! go, nothing is kept): O(1 + spill) per call. The capacities sum to at
//! least `(1+ε)·m ≥ m`, so a free node always exists.
//! Quirk: movement on membership change is no longer minimal (an item may
//! shift because another node filled up), `O(1/ε²)` expected per change.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::Error;
use crate::node::NodeId;
use crate::placement::Placement;

/// A placement with load bounds `(1+ε)` times the fair share.
#[derive(Debug)]
pub struct Bounded<P> {
    placement: P,
    epsilon: f64,
    /// Normalized weights `wᵢ / W`.
    shares: Vec<f64>,
    in_flight: Vec<AtomicU64>,
    total: AtomicU64,
}

impl<P: Placement> Bounded<P> {
    /// Bounds `placement` at `(1 + epsilon)` times each node's fair share;
    /// `epsilon` must be a finite number above 0.
    pub fn new(placement: P, epsilon: f64) -> Result<Self, Error> {
        if !(epsilon.is_finite() && epsilon > 0.0) {
            return Err(Error::InvalidParameter {
                algorithm: "bounded",
                parameter: "epsilon",
                value: epsilon.to_string(),
                expected: "a number above 0, e.g. 0.25 for at most 1.25x the average load",
            });
        }
        let nodes = placement.nodes();
        let total_weight = nodes.total_weight();
        let shares = nodes.iter().map(|n| n.weight / total_weight).collect();
        let in_flight = (0..nodes.len()).map(|_| AtomicU64::new(0)).collect();
        Ok(Bounded {
            placement,
            epsilon,
            shares,
            in_flight,
            total: AtomicU64::new(0),
        })
    }

    /// The placement underneath.
    pub fn placement(&self) -> &P {
        &self.placement
    }

    /// The most items node `id` may hold when `items` are placed in all.
    pub fn capacity(&self, id: NodeId, items: u64) -> u64 {
        let share = self.shares.get(id as usize).copied().unwrap_or(0.0);
        ((1.0 + self.epsilon) * items as f64 * share).ceil() as u64
    }

    /// Places `hashes` in order, each on the first node of its preference
    /// list under its capacity. Returns one node per hash; empty when the
    /// placement has no node.
    pub fn assign(&self, hashes: &[u64]) -> Vec<NodeId> {
        self.assign_counted(hashes).0
    }

    /// [`Bounded::assign`] and the number of preference-list entries it
    /// read (each `owner` call counts one; each `replicas_into(h, k)` call
    /// counts `k`): the work the module docs bound, for tests that count
    /// it instead of timing it.
    #[doc(hidden)]
    pub fn assign_counted(&self, hashes: &[u64]) -> (Vec<NodeId>, u64) {
        let n = self.placement.len();
        if n == 0 {
            return (Vec::new(), 0);
        }
        let m = hashes.len() as u64;
        let mut load = vec![0u64; n];
        // The walk of each hash that spilled, by hash: loads only grow during
        // one assignment, so a node found full stays full and a repeated hash
        // resumes where its walk stopped instead of reading its list from the
        // start again (100,000 copies of one key over 10,000 nodes took 29 s
        // on ring). A BTreeMap: no random hasher, the same work every run.
        let mut walks: BTreeMap<u64, Walk> = BTreeMap::new();
        let mut owners = Vec::with_capacity(hashes.len());
        let mut read = 0u64;
        for &h in hashes {
            let has_room = |id: NodeId| load[id as usize] < self.capacity(id, m);
            // The owner usually has room: one lookup.
            read += 1;
            let owner = self.placement.owner(h).unwrap_or(0);
            let pick = if has_room(owner) {
                owner
            } else {
                let walk = walks.entry(h).or_default();
                self.resume(h, n, walk, &mut read, has_room)
                    // Capacities sum to at least m, so some node has room;
                    // the fallback keeps this total even for a placement
                    // whose preference list misses nodes.
                    .unwrap_or_else(|| least_loaded(&load))
            };
            load[pick as usize] += 1;
            owners.push(pick);
        }
        (owners, read)
    }

    /// The first node with room on `hash`'s preference list from where its
    /// last walk stopped; the list is read in doubling prefixes (2, 4, 8,
    /// ... up to all `n` nodes) and kept, so each hash reads at most about
    /// twice as far as its walk goes, once.
    fn resume(
        &self,
        hash: u64,
        n: usize,
        walk: &mut Walk,
        read: &mut u64,
        has_room: impl Fn(NodeId) -> bool,
    ) -> Option<NodeId> {
        loop {
            while let Some(&id) = walk.list.get(walk.at) {
                if has_room(id) {
                    return Some(id);
                }
                walk.at += 1;
            }
            if walk.list.len() >= n || walk.done {
                return None;
            }
            let want = (walk.list.len().max(1) * 2).min(n);
            self.placement.replicas_into(hash, want, &mut walk.list);
            *read += want as u64;
            // A list shorter than asked will not grow: stop there.
            walk.done = walk.list.len() < want;
        }
    }

    /// Takes a slot for a live request with key hash `hash` on the first node
    /// of its preference list under its bound; `None` without nodes. The
    /// slot is released when the lease is dropped.
    pub fn acquire(&self, hash: u64) -> Option<Lease<'_, P>> {
        let n = self.placement.len();
        if n == 0 {
            return None;
        }
        let items = self.total.fetch_add(1, Ordering::AcqRel) + 1;
        let has_room = |id: NodeId| {
            self.in_flight[id as usize].load(Ordering::Acquire) < self.capacity(id, items)
        };
        // The first choice (the owner) usually has room: no allocation then.
        let first = self.placement.owner(hash).unwrap_or(0);
        let chosen = if has_room(first) {
            first
        } else {
            // Doubling prefixes here too, not the whole list of N: leases
            // come and go, so nothing is kept between calls.
            let mut walk = Walk::default();
            self.resume(hash, n, &mut walk, &mut 0, has_room)
                .unwrap_or(first)
        };
        self.in_flight[chosen as usize].fetch_add(1, Ordering::AcqRel);
        Some(Lease {
            bounded: self,
            node: chosen,
        })
    }

    /// Requests in flight on node `id`.
    pub fn in_flight(&self, id: NodeId) -> u64 {
        self.in_flight
            .get(id as usize)
            .map_or(0, |c| c.load(Ordering::Acquire))
    }
}

/// Where one hash's walk down its preference list stands: the prefix read
/// so far, and the first entry not known to be full.
#[derive(Debug, Default)]
struct Walk {
    list: Vec<NodeId>,
    at: usize,
    /// The placement gave fewer nodes than asked: the list is complete.
    done: bool,
}

fn least_loaded(load: &[u64]) -> NodeId {
    (0..load.len()).min_by_key(|&i| load[i]).unwrap_or(0) as NodeId
}

/// A request's slot on a node; dropping it frees the slot.
#[derive(Debug)]
pub struct Lease<'a, P> {
    bounded: &'a Bounded<P>,
    node: NodeId,
}

impl<P> Lease<'_, P> {
    /// The node serving this request.
    pub fn node(&self) -> NodeId {
        self.node
    }
}

impl<P> Drop for Lease<'_, P> {
    fn drop(&mut self) {
        self.bounded.in_flight[self.node as usize].fetch_sub(1, Ordering::AcqRel);
        self.bounded.total.fetch_sub(1, Ordering::AcqRel);
    }
}
