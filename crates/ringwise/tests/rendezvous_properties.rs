//! Property tests of `Rendezvous` (weighted HRW): order independence,
//! movement only to or from the changed node, descending-score replicas,
//! totality, and the weight split.

use std::collections::HashSet;

use proptest::collection::vec;
use proptest::prelude::*;
use ringwise::{Node, NodeId, Placement, Rendezvous};

use crate::support::{self, owner_name};

fn node() -> impl Strategy<Value = Node> {
    (support::name(), 0.05f64..4.0).prop_map(|(name, weight)| Node::new(name).weight(weight))
}

/// Up to `max` nodes with distinct names.
fn nodes(max: usize) -> impl Strategy<Value = Vec<Node>> {
    support::distinct(vec(node(), 0..=max), |n| &n.name)
}

fn build(nodes: Vec<Node>) -> Rendezvous {
    Rendezvous::new(nodes).expect("valid cluster")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn order_of_nodes_does_not_matter(nodes in nodes(60), hashes in vec(any::<u64>(), 100)) {
        let forward = build(nodes.clone());
        let backward = build(nodes.into_iter().rev().collect());
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for h in hashes {
            prop_assert_eq!(owner_name(&forward, h), owner_name(&backward, h));
            forward.replicas_into(h, 3, &mut a);
            backward.replicas_into(h, 3, &mut b);
            prop_assert_eq!(a.len(), b.len());
            for (x, y) in a.iter().zip(&b) {
                prop_assert_eq!(forward.nodes().name(*x), backward.nodes().name(*y));
            }
        }
    }

    #[test]
    fn adding_a_node_moves_keys_only_to_it(
        nodes in nodes(60), extra in node(), hashes in vec(any::<u64>(), 300)
    ) {
        prop_assume!(!nodes.iter().any(|n| n.name == extra.name));
        let before = build(nodes);
        let after = before.with_node(extra.clone()).expect("new name");
        for h in hashes {
            let (old, new) = (owner_name(&before, h), owner_name(&after, h));
            prop_assert!(old == new || new == Some(extra.name.as_str()), "{old:?} -> {new:?}");
        }
    }

    #[test]
    fn removing_a_node_moves_only_its_keys(
        nodes in nodes(60), pick in any::<prop::sample::Index>(), hashes in vec(any::<u64>(), 300)
    ) {
        prop_assume!(!nodes.is_empty());
        let gone = nodes[pick.index(nodes.len())].name.clone();
        let before = build(nodes);
        let after = before.without_node(&gone).expect("member");
        let mut replicas = Vec::new();
        for h in hashes {
            let (old, new) = (owner_name(&before, h), owner_name(&after, h));
            if old == Some(gone.as_str()) {
                // The key goes to its second choice.
                before.replicas_into(h, 2, &mut replicas);
                let second = replicas.get(1).and_then(|&id| before.nodes().name(id));
                prop_assert_eq!(new, second);
            } else {
                prop_assert_eq!(old, new);
            }
        }
    }

    #[test]
    fn reweighting_moves_keys_only_to_or_from_that_node(
        nodes in nodes(40), pick in any::<prop::sample::Index>(), weight in 0.05f64..8.0,
        hashes in vec(any::<u64>(), 300)
    ) {
        prop_assume!(!nodes.is_empty());
        let changed = nodes[pick.index(nodes.len())].clone();
        let before = build(nodes);
        let after = before
            .without_node(&changed.name)
            .and_then(|r| r.with_node(changed.clone().weight(weight)))
            .expect("same names");
        let name = Some(changed.name.as_str());
        for h in hashes {
            let (old, new) = (owner_name(&before, h), owner_name(&after, h));
            prop_assert!(old == new || old == name || new == name, "{old:?} -> {new:?}");
        }
    }

    #[test]
    fn replicas_are_distinct_and_by_descending_score(
        nodes in nodes(30), n in 0usize..40, hashes in vec(any::<u64>(), 50)
    ) {
        let r = build(nodes);
        let mut out = Vec::new();
        for h in hashes {
            r.replicas_into(h, n, &mut out);
            prop_assert_eq!(out.len(), n.min(r.len()));
            prop_assert_eq!(out.iter().collect::<HashSet<_>>().len(), out.len());
            prop_assert_eq!(out.first().copied(), if n == 0 { None } else { r.owner(h) });
            for pair in out.windows(2) {
                let (a, b) = (r.score(h, pair[0]), r.score(h, pair[1]));
                prop_assert!(a > b || (a == b && pair[0] < pair[1]));
            }
        }
    }

    #[test]
    fn small_and_large_replica_paths_agree(nodes in nodes(30), h in any::<u64>()) {
        // n <= 4 selects, n > 4 sorts: the first four must be the same.
        let r = build(nodes);
        let (mut few, mut many) = (Vec::new(), Vec::new());
        r.replicas_into(h, 4, &mut few);
        r.replicas_into(h, 30, &mut many);
        prop_assert_eq!(&few[..], &many[..few.len()]);
    }
}

#[test]
fn totality_on_zero_one_two_nodes() {
    let empty = build(vec![]);
    let one = build(vec![Node::new("a")]);
    let two = build(vec![Node::new("b"), Node::new("a").weight(2.0)]);
    let spread = (0..1000u64).map(|h| h.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let hashes: Vec<u64> = [7, 0, 1, u64::MAX, 1 << 63, 12345]
        .into_iter()
        .chain(spread)
        .collect();
    // Both nodes own keys: checked there.
    support::assert_total(&empty, &one, &two, &hashes);
}

#[test]
fn weights_split_keys_proportionally() {
    // 3:1 weights over 100,000 seeded hashes: expect 75% / 25%. The standard
    // deviation of the share is 0.14%, so 1% is about 7 sigma.
    let r = build(vec![Node::new("heavy").weight(3.0), Node::new("light")]);
    let heavy: NodeId = r.nodes().id("heavy").expect("member");
    let mut x = 0x5EED_u64;
    let mut count = 0usize;
    for _ in 0..100_000 {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        count += usize::from(r.owner(x) == Some(heavy));
    }
    let share = count as f64 / 100_000.0;
    assert!((share - 0.75).abs() < 0.01, "heavy share {share}");
}

#[test]
fn unequal_weights_over_many_nodes() {
    // Weights 1..=8 over 200,000 hashes: each share within 5% (relative) of
    // w / 36.
    let nodes: Vec<Node> = (1..=8)
        .map(|w| Node::new(format!("n{w}")).weight(w as f64))
        .collect();
    let r = build(nodes);
    let mut counts = [0usize; 8];
    let mut x = 42u64;
    for _ in 0..200_000 {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        counts[r.owner(x).expect("nodes") as usize] += 1;
    }
    for (id, &c) in counts.iter().enumerate() {
        let w = r.nodes().get(id as NodeId).expect("id").weight;
        let expected = 200_000.0 * w / 36.0;
        assert!(
            (c as f64 / expected - 1.0).abs() < 0.05,
            "{id}: {c} vs {expected}"
        );
    }
}

#[test]
fn membership_errors() {
    let r = build(vec![Node::new("a")]);
    assert!(matches!(
        r.with_node(Node::new("a")),
        Err(ringwise::Error::DuplicateNode { .. })
    ));
    assert!(matches!(
        r.without_node("zz"),
        Err(ringwise::Error::UnknownNode { .. })
    ));
    assert!(matches!(
        r.with_node(Node::new("b").weight(0.0)),
        Err(ringwise::Error::InvalidWeight { .. })
    ));
}
