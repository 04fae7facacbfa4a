//! Property tests of the ring's guarantees on random clusters of 0–200 nodes.

use std::collections::HashSet;

use proptest::collection::vec;
use proptest::prelude::*;
use ringwise::{KeyHasher, Keyed, Node, NodeId, Placement, Ring, StableHash, Vnodes};

use crate::support::{self, owner_name};

/// A deliberately weak hash with 256 values: most points collide, so the
/// tie-break by node name decides almost every lookup.
#[derive(Debug, Clone, Copy)]
struct Weak8;

impl KeyHasher for Weak8 {
    fn hash(&self, bytes: &[u8]) -> u64 {
        u64::from(StableHash::Xxh3.hash(bytes) as u8) << 56
    }
}

fn node() -> impl Strategy<Value = Node> {
    let zone = prop::option::of(prop_oneof![Just("z1"), Just("z2"), Just("z3"), Just("z4")]);
    (support::name(), 0.05f64..4.0, zone).prop_map(|(name, weight, zone)| {
        let node = Node::new(name).weight(weight);
        match zone {
            Some(z) => node.zone(z),
            None => node,
        }
    })
}

/// 0–200 nodes with distinct names.
fn nodes(max: usize) -> impl Strategy<Value = Vec<Node>> {
    support::distinct(vec(node(), 0..=max), |n| &n.name)
}

fn build<H>(hasher: H, vnodes: u32, nodes: Vec<Node>) -> Ring<Vnodes<H>>
where
    H: KeyHasher + Clone + std::fmt::Debug + Send + Sync,
{
    Ring::builder()
        .hasher(hasher)
        .vnodes(vnodes)
        .nodes(nodes)
        .build()
        .expect("valid cluster")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn order_of_nodes_does_not_matter(
        nodes in nodes(200), vnodes in 1u32..40, hashes in vec(any::<u64>(), 100)
    ) {
        let forward = build(StableHash::Xxh3, vnodes, nodes.clone());
        let backward = build(StableHash::Xxh3, vnodes, nodes.into_iter().rev().collect());
        prop_assert!(forward.iter().eq(backward.iter()));
        for h in hashes {
            prop_assert_eq!(owner_name(&forward, h), owner_name(&backward, h));
        }
    }

    #[test]
    fn adding_a_node_moves_keys_only_to_it(
        nodes in nodes(200), extra in node(), vnodes in 1u32..40, hashes in vec(any::<u64>(), 300)
    ) {
        prop_assume!(!nodes.iter().any(|n| n.name == extra.name));
        let before = build(StableHash::Xxh3, vnodes, nodes);
        let after = before.with_node(extra.clone()).expect("new name");
        for h in hashes {
            let (b, a) = (owner_name(&before, h), owner_name(&after, h));
            prop_assert!(b == a || a == Some(extra.name.as_str()), "{b:?} -> {a:?}");
        }
    }

    #[test]
    fn removing_a_node_moves_only_its_keys(
        nodes in nodes(200), pick in any::<prop::sample::Index>(), vnodes in 1u32..40,
        hashes in vec(any::<u64>(), 300)
    ) {
        prop_assume!(!nodes.is_empty());
        let gone = nodes[pick.index(nodes.len())].name.clone();
        let before = build(StableHash::Xxh3, vnodes, nodes);
        let after = before.without_node(&gone).expect("member");
        for h in hashes {
            let (b, a) = (owner_name(&before, h), owner_name(&after, h));
            prop_assert!(b == a || b == Some(gone.as_str()), "{b:?} -> {a:?}");
            prop_assert_ne!(a, Some(gone.as_str()));
        }
    }

    #[test]
    fn replicas_are_distinct_and_start_with_the_owner(
        nodes in nodes(60), vnodes in 1u32..20, n in 0usize..70, hashes in vec(any::<u64>(), 50)
    ) {
        let ring = build(StableHash::Xxh3, vnodes, nodes);
        let mut out = Vec::new();
        for h in hashes {
            ring.replicas_into(h, n, &mut out);
            prop_assert_eq!(out.len(), n.min(ring.len()));
            prop_assert_eq!(out.iter().collect::<HashSet<_>>().len(), out.len());
            if n > 0 {
                prop_assert_eq!(out.first().copied(), ring.owner(h));
            }
        }
    }

    #[test]
    fn zoned_replicas_use_new_zones_first(
        nodes in nodes(60), vnodes in 1u32..20, n in 0usize..70, hashes in vec(any::<u64>(), 50)
    ) {
        let ring = build(StableHash::Xxh3, vnodes, nodes);
        let mut out: Vec<NodeId> = Vec::new();
        for h in hashes {
            ring.zoned_replicas_into(h, n, &mut out);
            prop_assert_eq!(out.len(), n.min(ring.len()));
            prop_assert_eq!(out.iter().collect::<HashSet<_>>().len(), out.len());
            let distinct = n.min(ring.nodes().zone_count());
            let zones: HashSet<u32> =
                out[..distinct].iter().filter_map(|&id| ring.nodes().zone_id(id)).collect();
            prop_assert_eq!(zones.len(), distinct, "zones repeat while unused ones remain");
            if n > 0 {
                prop_assert_eq!(out.first().copied(), ring.owner(h));
            }
        }
    }

    #[test]
    fn any_change_sequence_equals_a_fresh_build_even_with_collisions(
        start in nodes(40), changes in vec((any::<bool>(), node()), 0..30), vnodes in 1u32..8,
    ) {
        let mut ring = build(Weak8, vnodes, start.clone());
        let mut members = start;
        for (remove, node) in changes {
            let present = members.iter().position(|m| m.name == node.name);
            match (remove, present) {
                (true, Some(i)) => {
                    ring = ring.without_node(&node.name).expect("member");
                    members.remove(i);
                }
                (false, None) => {
                    ring = ring.with_node(node.clone()).expect("new name");
                    members.push(node);
                }
                _ => {}
            }
        }
        let fresh = build(Weak8, vnodes, members);
        prop_assert!(ring.iter().eq(fresh.iter()));
        prop_assert_eq!(ring.nodes(), fresh.nodes());
        for h in (0..=255u64).map(|b| b << 56) {
            prop_assert_eq!(owner_name(&ring, h), owner_name(&fresh, h));
        }
    }

    #[test]
    fn batch_owners_equal_single_lookups(
        nodes in nodes(60), vnodes in 1u32..50, mut hashes in vec(any::<u64>(), 0..400),
        sorted in any::<bool>(),
    ) {
        let ring = build(StableHash::Xxh3, vnodes, nodes);
        if sorted {
            hashes.sort_unstable();
        }
        let mut out = vec![7];
        ring.owners_into(&hashes, &mut out);
        let single: Vec<NodeId> = hashes.iter().filter_map(|&h| ring.owner(h)).collect();
        prop_assert_eq!(out, single);
    }

    #[test]
    fn readding_a_node_restores_its_points(nodes in nodes(50), vnodes in 1u32..30) {
        prop_assume!(!nodes.is_empty());
        let ring = build(StableHash::Xxh3, vnodes, nodes.clone());
        let node = nodes[0].clone();
        let back = ring.without_node(&node.name).and_then(|r| r.with_node(node));
        prop_assert!(ring.iter().eq(back.expect("round trip").iter()));
    }
}

#[test]
fn one_node_owns_everything() {
    let ring = build(StableHash::Md5, 3, vec![Node::new("solo")]);
    for h in [0, 1, u64::MAX / 3, u64::MAX] {
        assert_eq!(owner_name(&ring, h), Some("solo"));
    }
    assert_eq!(
        Keyed::new(ring.clone(), StableHash::Md5).replicas("k", 5),
        ["solo"]
    );
    let stats = ring.stats();
    assert_eq!(stats.nodes[0].share, 1.0);
}

#[test]
fn empty_ring_and_removing_the_last_node() {
    let ring = build(StableHash::Xxh3, 10, vec![Node::new("only")]);
    let empty = ring.without_node("only").expect("member");
    assert!(empty.is_empty());
    let again = empty.with_node(Node::new("only")).expect("new");
    let empty = Keyed::new(empty, StableHash::Xxh3);
    assert_eq!(empty.locate("k"), None);
    assert!(empty.replicas("k", 3).is_empty());
    assert!(again.iter().eq(ring.iter()));
}

#[test]
fn unicode_names_are_ordered_by_bytes() {
    // Same point for every vnode: ties resolve by UTF-8 byte order of names,
    // which is also Python's code-point order.
    #[derive(Debug, Clone, Copy)]
    struct Constant;
    impl KeyHasher for Constant {
        fn hash(&self, _: &[u8]) -> u64 {
            42
        }
    }
    let names = ["я", "z", "日本", "🦀", "Z", "é"];
    let ring = build(Constant, 2, names.iter().map(|&n| Node::new(n)).collect());
    let mut sorted = names;
    sorted.sort_by_key(|n| n.chars().map(u32::from).collect::<Vec<_>>());
    assert_eq!(owner_name(&ring, 0), Some(sorted[0]));
    assert_eq!(Keyed::new(ring, Constant).replicas("anything", 6), sorted);
}

#[test]
fn stats_shares_sum_to_one() {
    let nodes = (0..17).map(|i| Node::new(format!("n{i}")).weight(1.0 + f64::from(i % 3)));
    let ring = build(StableHash::Xxh3, 200, nodes.collect());
    let stats = ring.stats();
    let total: f64 = stats.nodes.iter().map(|n| n.share).sum();
    assert!((total - 1.0).abs() < 1e-9, "{total}");
    assert!(stats.min <= 1.0 && stats.max >= 1.0 && stats.spread > 0.0);
    let points: u64 = stats.nodes.iter().map(|n| n.points).sum();
    assert_eq!(points as usize, ring.point_count());
}

#[test]
fn bad_nodes_are_rejected_with_specific_errors() {
    use ringwise::Error;
    let err = |nodes: Vec<Node>| Ring::builder().nodes(nodes).build().expect_err("invalid");
    assert!(matches!(
        err(vec![Node::new("")]),
        Error::InvalidName { .. }
    ));
    assert!(matches!(
        err(vec![Node::new("a\nb")]),
        Error::InvalidName { .. }
    ));
    assert!(matches!(
        err(vec![Node::new("a"), Node::new("a")]),
        Error::DuplicateNode { .. }
    ));
    for weight in [0.0, -1.0, f64::NAN, f64::INFINITY, 2e6] {
        assert!(matches!(
            err(vec![Node::new("a").weight(weight)]),
            Error::InvalidWeight { .. }
        ));
    }
    assert!(matches!(
        err(vec![Node::new("a").zone("")]),
        Error::InvalidZone { .. }
    ));
    let zero = Ring::builder().vnodes(0).node(Node::new("a")).build();
    assert!(matches!(zero, Err(Error::InvalidVnodes { vnodes: 0 })));
    let huge = Ring::builder()
        .vnodes(1_000_000)
        .node(Node::new("a").weight(1000.0))
        .build();
    assert!(matches!(huge, Err(Error::TooManyPoints { .. })));
    let ring = Ring::builder().node(Node::new("a")).build().expect("valid");
    assert!(matches!(
        ring.with_node(Node::new("a")),
        Err(Error::DuplicateNode { .. })
    ));
    assert!(matches!(
        ring.without_node("b"),
        Err(Error::UnknownNode { .. })
    ));
}
