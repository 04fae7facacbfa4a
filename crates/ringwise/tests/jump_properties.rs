//! Property tests of `Jump`: join order, append/pop movement, replicas,
//! totality and errors.

use std::collections::HashSet;

use proptest::collection::vec;
use proptest::prelude::*;
use ringwise::{Error, Jump, Node, Placement, jump_consistent_hash, replica_key};

use crate::support::{self, owner_name};

/// 0–`max` nodes with distinct names, in a random (join) order.
fn names(max: usize) -> impl Strategy<Value = Vec<String>> {
    let name = prop_oneof![(0u32..500).prop_map(|i| format!("n{i}")), "[a-zé🦀]{1,5}"];
    support::distinct(vec(name, 0..=max), String::as_str)
}

fn jump<S: AsRef<str>>(names: &[S]) -> Jump {
    Jump::new(support::nodes(names)).expect("valid nodes")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn buckets_follow_join_order(names in names(60), hashes in vec(any::<u64>(), 50)) {
        let j = jump(&names);
        let order: Vec<&str> = j.buckets().iter().filter_map(|&id| j.nodes().name(id)).collect();
        prop_assert_eq!(&order, &names.iter().map(String::as_str).collect::<Vec<_>>());
        for h in hashes {
            let expected = (!names.is_empty())
                .then(|| names[jump_consistent_hash(h, names.len() as u32) as usize].as_str());
            prop_assert_eq!(owner_name(&j, h), expected);
        }
    }

    #[test]
    fn appending_moves_keys_only_to_the_new_node(
        names in names(60), extra in "[A-Z]{1,4}", hashes in vec(any::<u64>(), 300)
    ) {
        let before = jump(&names);
        let after = before.with_node(Node::new(extra.clone())).expect("new name");
        prop_assert_eq!(after.nodes().name(*after.buckets().last().expect("one bucket")), Some(extra.as_str()));
        for h in hashes {
            let (old, new) = (owner_name(&before, h), owner_name(&after, h));
            prop_assert!(old == new || new == Some(extra.as_str()), "{old:?} -> {new:?}");
        }
        // Popping the node again gives back the very same snapshot.
        prop_assert_eq!(after.without_node(&extra).expect("last node"), before);
    }

    #[test]
    fn popping_moves_only_the_last_nodes_keys(names in names(60), hashes in vec(any::<u64>(), 300)) {
        prop_assume!(!names.is_empty());
        let before = jump(&names);
        let last = names.last().expect("non-empty");
        let after = before.without_node(last).expect("last node");
        prop_assert_eq!(&after, &jump(&names[..names.len() - 1]));
        for h in hashes {
            let (old, new) = (owner_name(&before, h), owner_name(&after, h));
            prop_assert!(old == new || old == Some(last.as_str()), "{old:?} -> {new:?}");
            prop_assert_ne!(new, Some(last.as_str()));
        }
    }

    #[test]
    fn only_the_last_node_can_leave(names in names(60), pick in any::<prop::sample::Index>()) {
        prop_assume!(names.len() >= 2);
        let name = &names[pick.index(names.len() - 1)];
        let err = jump(&names).without_node(name).expect_err("not the last node");
        prop_assert_eq!(err, Error::Unsupported {
            algorithm: "jump",
            operation: format!("remove {name:?}"),
            reason: "jump hash can only remove the last bucket; use memento for arbitrary removals",
            node: None,
        });
    }

    #[test]
    fn replicas_are_distinct_and_start_with_the_owner(
        names in names(40), n in 0usize..50, hashes in vec(any::<u64>(), 30)
    ) {
        let j = jump(&names);
        let mut out = Vec::new();
        for h in hashes {
            j.replicas_into(h, n, &mut out);
            prop_assert_eq!(out.len(), n.min(names.len()));
            prop_assert_eq!(out.iter().collect::<HashSet<_>>().len(), out.len());
            if n > 0 {
                prop_assert_eq!(out.first().copied(), j.owner(h));
            }
            prop_assert!(out.iter().all(|&id| (id as usize) < names.len()));
        }
    }
}

/// The documented replica order, re-implemented from the module docs: draw
/// 0 is the owner's bucket, draw `a` jumps with `replica_key(hash, a)`,
/// repeats are skipped, and after 8 draws per replica the buckets after the
/// owner's follow in order.
fn documented_replicas(names: &[String], hash: u64, n: usize) -> Vec<String> {
    let size = names.len() as u32;
    let want = n.min(names.len());
    let mut buckets: Vec<u32> = Vec::new();
    let draws = (0..(want * 8) as u64).map(|a| {
        let key = if a == 0 { hash } else { replica_key(hash, a) };
        jump_consistent_hash(key, size)
    });
    let first = jump_consistent_hash(hash, size);
    let fallback = (1..size).map(|i| (first + i) % size);
    for b in draws.chain(fallback) {
        if buckets.len() < want && !buckets.contains(&b) {
            buckets.push(b);
        }
    }
    buckets.iter().map(|&b| names[b as usize].clone()).collect()
}

proptest! {
    #[test]
    fn replicas_follow_the_documented_order(
        names in names(30), n in 0usize..35, hashes in vec(any::<u64>(), 20)
    ) {
        let j = jump(&names);
        let mut out = Vec::new();
        for h in hashes {
            j.replicas_into(h, n, &mut out);
            let got: Vec<String> = out.iter().filter_map(|&id| j.nodes().name(id)).map(String::from).collect();
            prop_assert_eq!(got, documented_replicas(&names, h, n));
        }
    }
}

#[test]
fn totality_on_zero_one_and_two_nodes() {
    let empty = jump::<&str>(&[]);
    let one = jump(&["a"]);
    let two = jump(&["b", "a"]);
    // The single node is "a"; both "a" and "b" own some hash.
    assert_eq!(one.nodes().name(0), Some("a"));
    let spread = (0..1000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let hashes: Vec<u64> = spread.chain((0..100).map(|i| replica_key(i, 3))).collect();
    support::assert_total(&empty, &one, &two, &hashes);
    assert_eq!(Placement::without_node(&two, "a"), Ok(jump(&["b"])));
    assert_eq!(
        empty.without_node("a"),
        Err(Error::UnknownNode { name: "a".into() })
    );
}

/// Balance and the 1/(n+1) move fraction on 200,000 spread hashes: a
/// 10-bucket jump gives each bucket 10% ± 0.5% (about 7 standard
/// deviations), and growing to 11 moves 1/11 ± 0.5% of the keys.
#[test]
fn balance_and_move_fraction() {
    let names: Vec<String> = (0..10).map(|i| format!("node-{i}")).collect();
    let ten = jump(&names);
    let eleven = ten.with_node(Node::new("node-10")).expect("new name");
    let keys = 200_000u64;
    let (mut counts, mut moved) = ([0u64; 10], 0u64);
    for i in 0..keys {
        let h = ringwise::replica_key(i, 1);
        counts[ten.owner(h).expect("nodes") as usize] += 1;
        moved += u64::from(owner_name(&ten, h) != owner_name(&eleven, h));
    }
    for c in counts {
        assert!((c as f64 / keys as f64 - 0.1).abs() < 0.005, "{counts:?}");
    }
    assert!(
        (moved as f64 / keys as f64 - 1.0 / 11.0).abs() < 0.005,
        "{moved}"
    );
}

#[test]
fn bad_inputs_give_the_specific_error() {
    let weighted = Jump::new(vec![Node::new("a"), Node::new("b").weight(2.0)]);
    assert!(matches!(
        weighted,
        Err(Error::Unsupported {
            algorithm: "jump",
            ..
        })
    ));
    let nan = Jump::new(vec![Node::new("a").weight(f64::NAN)]);
    assert!(matches!(nan, Err(Error::InvalidWeight { .. })));
    let dup = Jump::new(vec![Node::new("a"), Node::new("a")]);
    assert_eq!(dup, Err(Error::DuplicateNode { name: "a".into() }));
    let j = jump(&["a"]);
    assert!(matches!(
        j.with_node(Node::new("b").weight(0.5)),
        Err(Error::Unsupported {
            algorithm: "jump",
            ..
        })
    ));
    assert_eq!(
        j.with_node(Node::new("a")),
        Err(Error::DuplicateNode { name: "a".into() })
    );
    assert!(matches!(
        j.with_node(Node::new("")),
        Err(Error::InvalidName { .. })
    ));
    assert_eq!(
        j.without_node("zz"),
        Err(Error::UnknownNode { name: "zz".into() })
    );
}

/// Asking for every node of 4,000 with hash 1: the 32,000 draws (8 per
/// replica) find 3,997 distinct buckets (checked with an independent Python
/// transcription), so the ordered fallback supplies the last 3. The list
/// must hold every node once, the owner first, in the documented order.
#[test]
fn asking_for_every_node_uses_the_fallback() {
    let names: Vec<String> = (0..4000).map(|i| format!("n{i}")).collect();
    let j = jump(&names);
    let mut out = Vec::new();
    j.replicas_into(1, usize::MAX, &mut out);
    assert_eq!(out.len(), 4000);
    assert_eq!(out.iter().collect::<HashSet<_>>().len(), 4000);
    assert_eq!(out.first().copied(), j.owner(1));
    let got: Vec<String> = out
        .iter()
        .filter_map(|&id| j.nodes().name(id))
        .map(String::from)
        .collect();
    assert_eq!(got, documented_replicas(&names, 1, 4000));
    let drawn: HashSet<u32> = (0..32_000u64)
        .map(|a| jump_consistent_hash(if a == 0 { 1 } else { replica_key(1, a) }, 4000))
        .collect();
    assert_eq!(drawn.len(), 3997);
}
