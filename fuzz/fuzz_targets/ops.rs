//! An operation stream (add, remove, reweight, lookup, replicas) over every
//! algorithm, checked against a naive model: the membership as a plain Vec
//! in join order, a fresh build from it, and for rings a linear scan of
//! the sorted points.
//!
//! Checked after every step: the snapshot holds exactly the model's nodes;
//! a refused change leaves the snapshot as it was and names the reason the
//! algorithm documents (`DuplicateNode`, `UnknownNode`, `Unsupported`,
//! `TooManyPoints`); a lookup owns a member (and only without nodes gives
//! `None`); where an algorithm promises that a change equals a fresh build
//! (all but jump, memento and slots, whose placement follows their
//! history), the incremental snapshot and the fresh build agree on every
//! hash; a ring's owner is the first point `>=` the hash by linear scan;
//! batch lookups equal single ones; `replicas(r)` has `min(r, N)` distinct
//! members, starts with the owner and is a prefix of `replicas(r + 1)`.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use ringwise::{Algorithm, AnyPlacement, Error, Node, NodeId, Params, Placement};

#[derive(Debug, Arbitrary)]
enum Op {
    Add(u8, u8),
    Remove(u8),
    Reweight(u8, u8),
    Lookup(u64),
    Replicas(u64, u8),
}

#[derive(Debug, Arbitrary)]
struct Input {
    algorithm: u8,
    initial: u8,
    ops: Vec<Op>,
}

const WEIGHTS: [f64; 6] = [1.0, 0.5, 2.0, 3.0, 1e-6, 1e6];

fn name(code: u8) -> String {
    format!("n{}", code % 24)
}

fn params(algorithm: Algorithm) -> Params {
    Params {
        vnodes: 8,
        table_size: 1009,
        probes: 5,
        max_points: 1 << 13,
        min_ring_size: 64,
        max_ring_size: 256,
        num_tokens: 4,
        hash: algorithm.default_hash(),
        ..Params::DEFAULT
    }
}

/// Whether a change must equal a fresh build of the model's list.
fn history_free(algorithm: Algorithm) -> bool {
    !matches!(
        algorithm,
        Algorithm::Jump
            | Algorithm::Memento
            | Algorithm::Anchor
            | Algorithm::Dx
            | Algorithm::Slots
    )
}

struct Run {
    algorithm: Algorithm,
    params: Params,
    model: Vec<Node>,
    placement: AnyPlacement,
}

impl Run {
    fn fresh(&self) -> Option<AnyPlacement> {
        AnyPlacement::build(self.algorithm, self.model.clone(), &self.params).ok()
    }

    fn check_members(&self) {
        let mut want: Vec<&str> = self.model.iter().map(|n| n.name.as_str()).collect();
        want.sort_unstable();
        let have: Vec<&str> = self
            .placement
            .nodes()
            .iter()
            .map(|n| n.name.as_str())
            .collect();
        assert_eq!(have, want, "members differ from the model");
    }

    /// Applies a change or checks that its refusal is a documented one.
    fn change(&mut self, next: Result<AnyPlacement, Error>, model: Vec<Node>) {
        match next {
            Ok(placement) => {
                self.placement = placement;
                self.model = model;
                // Ids the snapshot gave (haproxy numbers its servers) are
                // part of the membership from then on, as in the cluster
                // file `plan --write` writes: a leave renumbers nobody,
                // while a fresh build of the bare names would.
                for node in &mut self.model {
                    let nodes = self.placement.nodes();
                    node.id = nodes.id(&node.name).and_then(|id| nodes.get(id)?.id);
                }
                if history_free(self.algorithm) {
                    let fresh = self.fresh().expect("the model's nodes build afresh");
                    for h in probe_hashes() {
                        assert_eq!(
                            self.placement.owner(h),
                            fresh.owner(h),
                            "a change differs from a fresh build at {h:#x}"
                        );
                    }
                }
            }
            Err(
                Error::DuplicateNode { .. }
                | Error::UnknownNode { .. }
                | Error::Unsupported { .. }
                | Error::TooManyPoints { .. }
                | Error::CapacityFull { .. }
                | Error::InvalidParameter { .. },
            ) => {}
            Err(other) => panic!("undocumented refusal: {other:?}"),
        }
        self.check_members();
    }

    fn lookup(&self, hash: u64) {
        let owner = self.placement.owner(hash);
        assert_eq!(owner.is_some(), !self.model.is_empty());
        if let Some(id) = owner {
            assert!((id as usize) < self.model.len());
        }
        let mut batch = Vec::new();
        let hashes = [hash, hash.wrapping_add(1), 0, u64::MAX, hash / 2];
        self.placement.owners_into(&hashes, &mut batch);
        let single: Vec<NodeId> = hashes
            .iter()
            .filter_map(|&h| self.placement.owner(h))
            .collect();
        assert_eq!(batch, single, "batch lookups differ from single ones");
        if let Some(ring) = self.placement.as_ring() {
            let points: Vec<(u64, NodeId)> = ring.points().collect();
            let naive = points
                .iter()
                .find(|&&(p, _)| p >= hash)
                .or(points.first())
                .map(|&(_, id)| id);
            assert_eq!(owner, naive, "ring owner differs from a linear scan");
        }
    }

    fn replicas(&self, hash: u64, r: usize) {
        let mut out = Vec::new();
        let mut longer = Vec::new();
        self.placement.replicas_into(hash, r, &mut out);
        self.placement.replicas_into(hash, r + 1, &mut longer);
        // A ring-shaped flavour may give a very light node no point at all
        // (ketama, nginx and envoy-ring round weights as their peers do):
        // such a node is never a replica, so "up to r" is r of the nodes
        // that own points.
        let reachable = match self.placement.as_ring() {
            Some(ring) => {
                let mut owners: Vec<NodeId> = ring.points().map(|(_, id)| id).collect();
                owners.sort_unstable();
                owners.dedup();
                owners.len()
            }
            None => self.model.len(),
        };
        assert_eq!(out.len(), r.min(reachable), "replicas: too few or too many");
        assert_eq!(
            out.first().copied(),
            self.placement.owner(hash).filter(|_| r > 0)
        );
        let mut sorted = out.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), out.len(), "replicas repeat a node");
        assert!(out.iter().all(|&id| (id as usize) < self.model.len()));
        assert_eq!(
            &longer[..out.len()],
            &out[..],
            "replicas(r) is not a prefix of replicas(r+1)"
        );
    }
}

fn probe_hashes() -> impl Iterator<Item = u64> {
    (0..64u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

fuzz_target!(|input: Input| {
    let algorithm = Algorithm::ALL[input.algorithm as usize % Algorithm::ALL.len()];
    let params = params(algorithm);
    let model: Vec<Node> = (0..input.initial % 8).map(|i| Node::new(name(i))).collect();
    let Ok(placement) = AnyPlacement::build(algorithm, model.clone(), &params) else {
        return;
    };
    let mut run = Run {
        algorithm,
        params,
        model,
        placement,
    };
    for op in input.ops.iter().take(64) {
        match *op {
            Op::Add(code, weight) => {
                let node = Node::new(name(code)).weight(WEIGHTS[weight as usize % WEIGHTS.len()]);
                let mut model = run.model.clone();
                model.push(node.clone());
                let next = run.placement.with_node(node);
                run.change(next, model);
            }
            Op::Remove(code) => {
                let name = name(code);
                let model = run
                    .model
                    .iter()
                    .filter(|n| n.name != name)
                    .cloned()
                    .collect();
                let next = run.placement.without_node(&name);
                run.change(next, model);
            }
            Op::Reweight(code, weight) => {
                let name = name(code);
                let model: Vec<Node> = run
                    .model
                    .iter()
                    .filter(|n| n.name != name)
                    .cloned()
                    .collect();
                let Ok(without) = run.placement.without_node(&name) else {
                    continue;
                };
                let node = Node::new(name).weight(WEIGHTS[weight as usize % WEIGHTS.len()]);
                let mut joined = model.clone();
                joined.push(node.clone());
                let next = without.with_node(node);
                if next.is_ok() {
                    run.change(next, joined);
                }
            }
            Op::Lookup(hash) => run.lookup(hash),
            Op::Replicas(hash, r) => run.replicas(hash, r as usize % 30),
        }
    }
});
