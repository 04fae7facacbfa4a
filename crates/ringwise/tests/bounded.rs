//! Bounded loads: no node above `⌈(1+ε)·m·share⌉`, on skewed keys too.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::collection::vec;
use proptest::prelude::*;
use ringwise::{Bounded, Error, Node, NodeId, Placement, Ring, StableHash};

fn ring(nodes: usize, vnodes: u32) -> Ring {
    let names = (0..nodes).map(|i| Node::new(format!("n{i}")).weight(1.0 + (i % 3) as f64));
    Ring::builder()
        .hasher(StableHash::Xxh3)
        .vnodes(vnodes)
        .nodes(names)
        .build()
        .expect("valid ring")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn assignment_respects_every_capacity(
        nodes in 1usize..30, vnodes in 1u32..50, epsilon in 0.01f64..2.0,
        distinct in vec(any::<u64>(), 1..50), repeats in vec(0usize..50, 0..400),
    ) {
        // Heavy repetition of a few hashes: the skew bounded loads is for.
        let hashes: Vec<u64> = distinct.iter().copied()
            .chain(repeats.iter().map(|&i| distinct[i % distinct.len()]))
            .collect();
        let bounded = Bounded::new(ring(nodes, vnodes), epsilon).expect("valid epsilon");
        let owners = bounded.assign(&hashes);
        prop_assert_eq!(owners.len(), hashes.len());
        let m = hashes.len() as u64;
        for id in 0..nodes as NodeId {
            let load = owners.iter().filter(|&&o| o == id).count() as u64;
            prop_assert!(load <= bounded.capacity(id, m), "node {} holds {} > {}", id, load, bounded.capacity(id, m));
        }
        // Deterministic for the same input.
        prop_assert_eq!(bounded.assign(&hashes), owners);
    }

    #[test]
    fn items_stay_on_their_owner_while_it_has_room(hashes in vec(any::<u64>(), 1..200)) {
        let placement = ring(8, 100);
        let bounded = Bounded::new(placement.clone(), 100.0).expect("valid epsilon");
        let owners = bounded.assign(&hashes);
        for (h, o) in hashes.iter().zip(owners) {
            prop_assert_eq!(Some(o), placement.owner(*h));
        }
    }
}

#[test]
fn hot_keys_spill_over_instead_of_piling_up() {
    // 10 nodes, 10,000 requests for one hot key: the plain ring sends all of
    // them to one node; with ε = 0.25 none takes more than 1,250.
    let bounded = Bounded::new(ring(10, 100), 0.25).expect("valid epsilon");
    let hot = ringwise::KeyHasher::hash(&StableHash::Xxh3, b"celebrity");
    let owners = bounded.assign(&vec![hot; 10_000]);
    let mut load = [0u64; 10];
    for o in owners {
        load[o as usize] += 1;
    }
    let nodes = bounded.placement().nodes();
    let bound: f64 = 10_000.0 * (1.0 + 0.25) / nodes.total_weight();
    for (i, &l) in load.iter().enumerate() {
        let weight = nodes.get(i as NodeId).expect("node").weight;
        assert!(l as f64 <= (bound * weight).ceil(), "node {i}: {l}");
    }
    assert!(load.iter().filter(|&&l| l > 0).count() > 1);
}

#[test]
fn leases_count_and_release() {
    let bounded = Bounded::new(ring(4, 50), 0.5).expect("valid epsilon");
    let leases: Vec<_> = (0..400u64)
        .map(|i| {
            bounded
                .acquire(i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
                .expect("nodes")
        })
        .collect();
    let total: u64 = (0..4).map(|id| bounded.in_flight(id)).sum();
    assert_eq!(total, 400);
    let used: HashSet<NodeId> = leases.iter().map(|l| l.node()).collect();
    assert!(used.len() > 1);
    drop(leases);
    assert_eq!((0..4).map(|id| bounded.in_flight(id)).sum::<u64>(), 0);
}

#[test]
fn concurrent_leases_balance_back_to_zero() {
    let bounded = Bounded::new(ring(6, 40), 0.25).expect("valid epsilon");
    std::thread::scope(|scope| {
        for t in 0..4u64 {
            let bounded = &bounded;
            scope.spawn(move || {
                let mut held = Vec::new();
                for i in 0..5_000u64 {
                    held.push(bounded.acquire(t * 1_000_003 + i % 17).expect("nodes"));
                    if held.len() > 50 {
                        held.remove(0);
                    }
                }
            });
        }
    });
    assert_eq!((0..6).map(|id| bounded.in_flight(id)).sum::<u64>(), 0);
}

#[test]
fn bad_epsilon_and_empty_placements() {
    for epsilon in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            Bounded::new(ring(3, 10), epsilon),
            Err(Error::InvalidParameter {
                parameter: "epsilon",
                ..
            })
        ));
    }
    let empty = Ring::builder().build().expect("empty ring");
    let bounded = Bounded::new(empty, 0.25).expect("valid epsilon");
    assert!(bounded.acquire(1).is_none());
    assert!(bounded.assign(&[1, 2, 3]).is_empty());
}

/// A placement that counts how many preference-list entries it was asked
/// for, to check what `assign` reads.
#[derive(Debug)]
struct Counting {
    inner: Ring,
    asked: AtomicUsize,
}

impl Placement for Counting {
    fn owner(&self, hash: u64) -> Option<NodeId> {
        self.asked.fetch_add(1, Ordering::Relaxed);
        self.inner.owner(hash)
    }

    fn replicas_into(&self, hash: u64, n: usize, out: &mut Vec<NodeId>) {
        self.asked.fetch_add(n, Ordering::Relaxed);
        self.inner.replicas_into(hash, n, out);
    }

    fn nodes(&self) -> &ringwise::NodeTable {
        self.inner.nodes()
    }

    fn heap_bytes(&self) -> usize {
        self.inner.heap_bytes()
    }

    fn with_node(&self, _: Node) -> Result<Self, Error> {
        unreachable!("not used")
    }

    fn without_node(&self, _: &str) -> Result<Self, Error> {
        unreachable!("not used")
    }
}

/// `assign` built every key's whole preference list (N
/// nodes), so 10,000 nodes cost 104 ms per key. It must read the owner and
/// only as much of the list as the spills need: here, with ε = 0.25 over
/// 200 nodes, a few entries per key instead of 200. The answers are the
/// same as the whole list's (the first node with room).
#[test]
fn bounded_assign_walks_only_as_far_as_needed() {
    let nodes = 200;
    let placement = Counting {
        inner: ring(nodes, 40),
        asked: AtomicUsize::new(0),
    };
    let hashes: Vec<u64> = (0..5_000u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect();
    let bounded = Bounded::new(placement, 0.25).expect("valid epsilon");
    let owners = bounded.assign(&hashes);
    let asked = bounded.placement().asked.load(Ordering::Relaxed);
    assert!(
        asked < 8 * hashes.len(),
        "{asked} preference entries read for {} keys",
        hashes.len()
    );
    // The same picks as walking each key's whole preference list.
    let m = hashes.len() as u64;
    let mut load = vec![0u64; nodes];
    let mut list = Vec::new();
    for (&h, &got) in hashes.iter().zip(&owners) {
        bounded.placement().inner.replicas_into(h, nodes, &mut list);
        let want = list
            .iter()
            .copied()
            .find(|&id| load[id as usize] < bounded.capacity(id, m))
            .expect("room somewhere");
        assert_eq!(got, want);
        load[want as usize] += 1;
    }
}
