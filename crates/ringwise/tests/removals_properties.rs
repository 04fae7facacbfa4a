//! Property tests of `Anchor` and `Dx` over random histories of joins and
//! removals, against explicit models: each reference's data structure as
//! its code keeps it (AnchorHash's four arrays with the whole removal stack,
//! initial removals included; DxHash's failed-bucket set, a stack that
//! every removal is pushed on, and its own copy of `java.util.Random`),
//! with names on buckets. The library keeps the never-used buckets implied
//! and a tail removal unstacked; the models keep neither shortcut, so any
//! drift between the two shows as a different bucket. Also: minimal
//! disruption, LIFO round trips, distinct working replicas, totality, the
//! capacity limits and their errors, and which snapshots a cluster file
//! can describe.

use std::collections::HashSet;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;
use ringwise::{Algorithm, Anchor, AnyPlacement, ClusterSpec, Dx, Error, Node, Params, Placement};

use crate::support::{self, crc32c_u64, owner_name};

/// The algorithm's data structure as its reference keeps it.
trait Model: Clone {
    fn new(capacity: u32, n: u32) -> Self;
    /// Removes bucket `b`.
    fn remove(&mut self, b: u32);
    /// Restores the last removed bucket and returns it.
    fn add(&mut self) -> u32;
    fn bucket(&self, hash: u64) -> u32;
}

/// `AnchorHashQre`: A, W, L, K and the stack `r`, initial removals pushed.
#[derive(Clone)]
struct AnchorModel {
    a: Vec<u32>,
    w: Vec<u32>,
    l: Vec<u32>,
    k: Vec<u32>,
    r: Vec<u32>,
    n: u32,
}

impl Model for AnchorModel {
    fn new(capacity: u32, n: u32) -> Self {
        let ids: Vec<u32> = (0..capacity).collect();
        let a = ids.iter().map(|&i| if i < n { 0 } else { i }).collect();
        let r = (n..capacity).rev().collect();
        AnchorModel {
            a,
            w: ids.clone(),
            l: ids.clone(),
            k: ids,
            r,
            n,
        }
    }

    fn remove(&mut self, b: u32) {
        let b = b as usize;
        self.r.push(b as u32);
        self.n -= 1;
        let n = self.n as usize;
        self.w[self.l[b] as usize] = self.w[n];
        self.l[self.w[n] as usize] = self.l[b];
        self.k[b] = self.w[n];
        self.a[b] = self.n;
    }

    fn add(&mut self) -> u32 {
        let b = self.r.pop().expect("room");
        let n = self.n as usize;
        self.l[self.w[n] as usize] = self.n;
        self.w[self.l[b as usize] as usize] = b;
        self.n += 1;
        self.a[b as usize] = 0;
        self.k[b as usize] = b;
        b
    }

    fn bucket(&self, key: u64) -> u32 {
        let mut bs = crc32c_u64(key, 0);
        let mut b = bs % self.a.len() as u32;
        while self.a[b as usize] != 0 {
            bs = crc32c_u64(key.wrapping_sub(u64::from(bs)), u64::from(bs));
            let h = bs % self.a[b as usize];
            if self.a[h as usize] == 0 || self.a[h as usize] < self.a[b as usize] {
                b = h;
            } else if h == b {
                b = self.k[b as usize];
            } else {
                let (i, mut t) = (b, h);
                while self.a[i as usize] <= self.a[t as usize] {
                    t = self.k[t as usize];
                }
                b = t;
            }
        }
        b
    }
}

/// `DxEngine`: the failed set, the removal stack, `new Random(hash)`.
#[derive(Clone)]
struct DxModel {
    failed: Vec<bool>,
    removed: Vec<u32>,
    size: u32,
}

impl Model for DxModel {
    fn new(capacity: u32, n: u32) -> Self {
        let failed = (0..capacity).map(|b| b >= n).collect();
        DxModel {
            failed,
            removed: Vec::new(),
            size: n,
        }
    }

    fn remove(&mut self, b: u32) {
        self.size -= 1;
        self.failed[b as usize] = true;
        self.removed.push(b);
    }

    fn add(&mut self) -> u32 {
        let b = self.removed.pop().unwrap_or(self.size);
        self.failed[b as usize] = false;
        self.size += 1;
        b
    }

    fn bucket(&self, hash: u64) -> u32 {
        // java.util.Random: seed scrambled, 48-bit LCG, nextInt(bound).
        let mut seed = (hash ^ 0x5_DEEC_E66D) & ((1 << 48) - 1);
        let mut next = || {
            seed = (seed.wrapping_mul(0x5_DEEC_E66D).wrapping_add(0xB)) & ((1 << 48) - 1);
            (seed >> 17) as i32
        };
        let bound = self.failed.len() as i32;
        loop {
            let mut r = next();
            let m = bound - 1;
            if bound & m == 0 {
                r = ((i64::from(bound) * i64::from(r)) >> 31) as i32;
            } else {
                let mut u = r;
                r = u % bound;
                while u.wrapping_sub(r).wrapping_add(m) < 0 {
                    u = next();
                    r = u % bound;
                }
            }
            if !self.failed[r as usize] {
                return r as u32;
            }
        }
    }
}

/// The model with node names on its buckets.
#[derive(Clone)]
struct Named<M> {
    model: M,
    names: Vec<Option<String>>,
}

impl<M: Model> Named<M> {
    fn new(names: &[String], capacity: u32) -> Self {
        let mut on = vec![None; capacity as usize];
        for (slot, name) in on.iter_mut().zip(names) {
            *slot = Some(name.clone());
        }
        Named {
            model: M::new(capacity, names.len() as u32),
            names: on,
        }
    }

    fn owner(&self, hash: u64) -> Option<&str> {
        if self.names.iter().all(Option::is_none) {
            return None;
        }
        self.names[self.model.bucket(hash) as usize].as_deref()
    }
}

fn build(algorithm: Algorithm, names: &[String], capacity: u32) -> AnyPlacement {
    let params = Params {
        capacity,
        ..Params::DEFAULT
    };
    AnyPlacement::build(algorithm, support::nodes(names), &params).expect("valid")
}

fn names(max: usize) -> impl Strategy<Value = Vec<String>> {
    let name = (0u32..300).prop_map(|i| format!("n{i}"));
    support::distinct(vec(name, 0..=max), String::as_str)
}

/// Replays `ops` (kind 0 or 1: remove the picked node when there is one;
/// else join a fresh name, or a removed one for kind 2, when there is
/// room) on the placement and the model, checking every hash after every
/// step; returns the final placement.
fn replay<M: Model>(
    algorithm: Algorithm,
    names: &[String],
    capacity: u32,
    ops: &[(u8, Index)],
    hashes: &[u64],
) -> Result<AnyPlacement, TestCaseError> {
    let (mut p, mut model) = (
        build(algorithm, names, capacity),
        Named::<M>::new(names, capacity),
    );
    let mut gone: Vec<String> = Vec::new();
    for (i, &(kind, pick)) in ops.iter().enumerate() {
        let (next, joined, name) = if kind < 2 && !p.is_empty() || p.len() == capacity as usize {
            let name = p
                .nodes()
                .iter()
                .nth(pick.index(p.len()))
                .expect("member")
                .name
                .clone();
            let b = model
                .names
                .iter()
                .position(|n| n.as_deref() == Some(&name))
                .expect("named");
            model.model.remove(b as u32);
            model.names[b] = None;
            gone.push(name.clone());
            (p.without_node(&name).expect("member"), false, name)
        } else {
            let name = match (kind, gone.is_empty()) {
                (2, false) => gone.remove(pick.index(gone.len())),
                _ => format!("fresh{i}"),
            };
            let b = model.model.add();
            model.names[b as usize] = Some(name.clone());
            (p.with_node(Node::new(&name)).expect("room"), true, name)
        };
        for &h in hashes {
            let (old, new) = (owner_name(&p, h), owner_name(&next, h));
            prop_assert_eq!(new, model.owner(h), "{} hash {}", algorithm, h);
            if joined {
                prop_assert!(
                    old == new || new == Some(name.as_str()),
                    "{old:?} -> {new:?}"
                );
            } else {
                prop_assert!(
                    old == new || old == Some(name.as_str()),
                    "{old:?} -> {new:?}"
                );
            }
        }
        p = next;
    }
    Ok(p)
}

fn capacity_for(names: &[String], extra: u32) -> u32 {
    names.len() as u32 + extra
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn anchor_histories_match_the_model_and_move_minimally(
        names in names(30), extra in 1u32..20,
        ops in vec((0u8..4, any::<Index>()), 0..40),
        hashes in vec(any::<u64>(), 100),
    ) {
        let capacity = capacity_for(&names, extra);
        replay::<AnchorModel>(Algorithm::Anchor, &names, capacity, &ops, &hashes)?;
    }

    #[test]
    fn dx_histories_match_the_model_and_move_minimally(
        names in names(30), extra in 1u32..20,
        ops in vec((0u8..4, any::<Index>()), 0..40),
        hashes in vec(any::<u64>(), 100),
    ) {
        let capacity = capacity_for(&names, extra);
        replay::<DxModel>(Algorithm::Dx, &names, capacity, &ops, &hashes)?;
    }

    /// Leave then join (the same name) restores the snapshot exactly; the
    /// replicas are distinct working nodes, the owner first.
    #[test]
    fn round_trips_and_replicas(
        anchor in any::<bool>(),
        names in names(30), extra in 1u32..10,
        ops in vec((0u8..4, any::<Index>()), 0..20),
        pick in any::<Index>(), n in 0usize..40,
        hashes in vec(any::<u64>(), 30),
    ) {
        let capacity = capacity_for(&names, extra);
        let p = if anchor {
            replay::<AnchorModel>(Algorithm::Anchor, &names, capacity, &ops, &[])?
        } else {
            replay::<DxModel>(Algorithm::Dx, &names, capacity, &ops, &[])?
        };
        prop_assume!(!p.is_empty());
        let name = p.nodes().iter().nth(pick.index(p.len())).expect("member").name.clone();
        let back = p.without_node(&name).expect("member").with_node(Node::new(name)).expect("room");
        let mut out = Vec::new();
        for h in hashes {
            prop_assert_eq!(owner_name(&back, h), owner_name(&p, h));
            p.replicas_into(h, n, &mut out);
            prop_assert_eq!(out.len(), n.min(p.len()));
            prop_assert_eq!(out.iter().collect::<HashSet<_>>().len(), out.len());
            prop_assert!(out.iter().all(|&id| (id as usize) < p.len()));
            if n > 0 {
                prop_assert_eq!(out.first().copied(), p.owner(h));
            }
        }
    }
}

#[test]
fn totality_on_zero_one_and_two_nodes() {
    let hashes: Vec<u64> = (0..1000u64).map(|i| ringwise::replica_key(i, 7)).collect();
    for algorithm in [Algorithm::Anchor, Algorithm::Dx] {
        let two = build(algorithm, &["a".into(), "b".into()], 4);
        let one = two.without_node("a").expect("member");
        let zero = one.without_node("b").expect("member");
        support::assert_total(&zero, &one, &two, &hashes);
        // LIFO: b comes back on its bucket, then a on its own.
        let back = zero.with_node(Node::new("b")).expect("room");
        let back = back.with_node(Node::new("a")).expect("room");
        for &h in &hashes {
            assert_eq!(owner_name(&back, h), owner_name(&two, h), "{algorithm}");
        }
    }
}

#[test]
fn a_join_beyond_capacity_is_refused_and_capacity_is_checked() {
    for algorithm in [Algorithm::Anchor, Algorithm::Dx] {
        let full = build(algorithm, &["a".into(), "b".into()], 2);
        assert_eq!(
            full.with_node(Node::new("c")).err(),
            Some(Error::CapacityFull {
                algorithm: algorithm.name(),
                capacity: 2,
                node: "c".into(),
            })
        );
        // After a removal there is room again, and the same error after.
        let room = full
            .without_node("a")
            .expect("member")
            .with_node(Node::new("c"));
        assert!(room.expect("room").with_node(Node::new("d")).is_err());
        for capacity in [1, ringwise::MAX_CAPACITY + 1] {
            let params = Params {
                capacity,
                ..Params::DEFAULT
            };
            let error = AnyPlacement::build(algorithm, support::nodes(["a", "b"]), &params);
            assert!(
                matches!(
                    error,
                    Err(Error::InvalidParameter {
                        parameter: "capacity",
                        ..
                    })
                ),
                "{algorithm} capacity {capacity}: {error:?}"
            );
        }
        // The default: twice the nodes, at least 256.
        let nodes: Vec<String> = (0..300).map(|i| format!("n{i}")).collect();
        let big = build(algorithm, &nodes, 0);
        let small = build(algorithm, &nodes[..3], 0);
        let capacity = |p: &AnyPlacement| match p {
            AnyPlacement::Anchor(a) => a.capacity(),
            AnyPlacement::Dx(d) => d.capacity(),
            _ => unreachable!(),
        };
        assert_eq!((capacity(&big), capacity(&small)), (600, 256));
    }
}

/// A cluster file describes a snapshot whose removals were all taken back,
/// or only the last bucket left (a fresh build of fewer nodes), with its
/// capacity written and no `removed` list; a hole is written as
/// `removed = [bucket]` and rebuilds the same owners; once a join fills the
/// hole, the list is gone again.
#[test]
fn pinned_writes_holes_as_removed_buckets() {
    for algorithm in [Algorithm::Anchor, Algorithm::Dx] {
        let spec = ClusterSpec::new(algorithm, support::nodes(["c", "a", "b"])).expect("spec");
        let p = spec.build().expect("builds").placement().clone();
        let tail = p.without_node("b").expect("member");
        let pinned = spec.pinned(&tail).expect("the last bucket left");
        let text = pinned.to_toml();
        assert!(text.contains("capacity = 256"), "{text}");
        assert!(!text.contains("removed"), "{text}");
        let rebuilt = ClusterSpec::from_toml(&text)
            .expect("reads")
            .build()
            .expect("builds");
        for h in (0..2000u64).map(|i| ringwise::replica_key(i, 3)) {
            assert_eq!(owner_name(rebuilt.placement(), h), owner_name(&tail, h));
        }
        let hole = p.without_node("c").expect("member");
        let written = spec.pinned(&hole).expect("a hole is written").to_toml();
        assert!(written.contains("removed = [0]"), "{written}");
        let rebuilt = ClusterSpec::from_toml(&written)
            .expect("reads")
            .build()
            .expect("builds");
        for h in (0..2000u64).map(|i| ringwise::replica_key(i, 3)) {
            assert_eq!(owner_name(rebuilt.placement(), h), owner_name(&hole, h));
        }
        let healed = hole.with_node(Node::new("d")).expect("room");
        let pinned = spec.pinned(&healed).expect("the hole is filled");
        assert!(pinned.removed.is_empty(), "{algorithm}: the hole is filled");
    }
}

/// The concrete types answer as the registry's.
#[test]
fn the_types_agree_with_the_registry() {
    let names: Vec<String> = (0..10).map(|i| format!("n{i}")).collect();
    let anchor = Anchor::new(support::nodes(&names), 40).expect("valid");
    let dx = Dx::new(support::nodes(&names), 40).expect("valid");
    let (any_anchor, any_dx) = (
        build(Algorithm::Anchor, &names, 40),
        build(Algorithm::Dx, &names, 40),
    );
    for h in (0..1000u64).map(|i| ringwise::replica_key(i, 11)) {
        assert_eq!(anchor.owner(h), any_anchor.owner(h));
        assert_eq!(dx.owner(h), any_dx.owner(h));
    }
}
