//! Property tests of `Slots` (Redis Cluster slot table): balance after any
//! add/remove sequence, exactly the necessary moves, order independence of
//! the build, totality, replicas, explicit migration and its errors.

use std::collections::HashSet;

use proptest::collection::vec;
use proptest::prelude::*;
use ringwise::{
    Error, KeyHasher, Keyed, Node, Placement, RedisSlot, SLOT_COUNT, SlotLayout, Slots, StableHash,
    key_slot,
};

use crate::support;

fn names(max: usize) -> impl Strategy<Value = Vec<String>> {
    let name = prop_oneof![
        (0u32..500).prop_map(|i| format!("node-{i}")),
        "[a-zé日]{1,5}"
    ];
    support::distinct(vec(name, 0..=max), String::as_str)
}

fn build(names: &[String]) -> Slots {
    Slots::new(support::nodes(names)).expect("valid cluster")
}

/// The owner name of every slot.
fn owners(s: &Slots) -> Vec<Option<String>> {
    (0..SLOT_COUNT as u64)
        .map(|slot| {
            s.owner(slot)
                .and_then(|id| s.nodes().name(id))
                .map(str::to_owned)
        })
        .collect()
}

fn assert_balanced(s: &Slots) -> Result<(), TestCaseError> {
    let counts = s.slot_counts();
    prop_assert_eq!(
        counts.iter().sum::<usize>(),
        if s.is_empty() { 0 } else { SLOT_COUNT }
    );
    if let (Some(max), Some(min)) = (counts.iter().max(), counts.iter().min()) {
        prop_assert!(max - min <= 1, "counts {:?}", counts);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn build_is_balanced_contiguous_and_order_independent(names in names(80)) {
        let forward = build(&names);
        let mut reversed = names.clone();
        reversed.reverse();
        prop_assert_eq!(owners(&forward), owners(&build(&reversed)));
        assert_balanced(&forward)?;
        // Contiguous ranges in name order: owner ids never decrease.
        let ids: Vec<_> = (0..SLOT_COUNT as u64).filter_map(|s| forward.owner(s)).collect();
        prop_assert!(ids.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn changes_keep_balance_and_move_only_what_must(
        start in names(20), steps in vec((any::<bool>(), 0u32..60, any::<prop::sample::Index>()), 1..12)
    ) {
        let mut s = build(&start);
        for (add, fresh, pick) in steps {
            let before = owners(&s);
            let next = if add || s.is_empty() {
                let name = format!("new-{fresh}");
                if s.nodes().contains(&name) {
                    continue;
                }
                let next = s.with_node(Node::new(name.clone())).expect("new name");
                let after = owners(&next);
                let moved: Vec<usize> = (0..SLOT_COUNT).filter(|&i| before[i] != after[i]).collect();
                // Exactly floor(16384 / N) slots move, all to the new node.
                prop_assert_eq!(moved.len(), SLOT_COUNT / next.len());
                prop_assert!(moved.iter().all(|&i| after[i].as_deref() == Some(name.as_str())));
                next
            } else {
                let gone = s.nodes().name(pick.index(s.len()) as u32).expect("id").to_owned();
                let next = s.without_node(&gone).expect("member");
                let after = owners(&next);
                for i in 0..SLOT_COUNT {
                    if before[i].as_deref() == Some(gone.as_str()) {
                        // Moved to a remaining node (nowhere if none is left).
                        prop_assert_eq!(after[i].is_some(), !next.is_empty());
                        prop_assert!(after[i] != before[i]);
                    } else {
                        prop_assert_eq!(&after[i], &before[i]);
                    }
                }
                next
            };
            assert_balanced(&next)?;
            s = next;
        }
    }

    #[test]
    fn replicas_are_distinct_and_start_at_the_owner(
        names in names(12), n in 0usize..16, hashes in vec(any::<u64>(), 40)
    ) {
        let s = build(&names);
        let mut out = Vec::new();
        for h in hashes {
            s.replicas_into(h, n, &mut out);
            prop_assert_eq!(out.len(), n.min(s.len()));
            prop_assert_eq!(out.iter().collect::<HashSet<_>>().len(), out.len());
            if n > 0 {
                prop_assert_eq!(out.first().copied(), s.owner(h));
            }
        }
    }

    #[test]
    fn keyed_lookup_uses_the_redis_slot(names in names(10), keys in vec(vec(any::<u8>(), 0..24), 50)) {
        let keyed = Keyed::new(build(&names), StableHash::RedisCrc16);
        let s = keyed.placement();
        for key in keys {
            let slot = key_slot(&key);
            prop_assert!(usize::from(slot) < SLOT_COUNT);
            prop_assert_eq!(s.owner(RedisSlot.hash(&key)), s.owner(u64::from(slot)));
            prop_assert_eq!(
                keyed.locate(&key),
                s.owner(u64::from(slot)).and_then(|id| s.nodes().name(id))
            );
        }
    }
}

/// The default layout, redis-cli's: the second range ends at 10922.
#[test]
fn three_nodes_get_redis_clis_ranges_by_default() {
    let s = Slots::new(["c", "a", "b"].map(Node::new)).expect("valid");
    let name = |slot: u64| s.owner(slot).and_then(|id| s.nodes().name(id));
    assert_eq!(
        (name(0), name(5460), name(5461)),
        (Some("a"), Some("a"), Some("b"))
    );
    assert_eq!(
        (name(10922), name(10923), name(16383)),
        (Some("b"), Some("c"), Some("c"))
    );
    assert_eq!(s.slot_counts(), vec![5461, 5462, 5461]);
}

/// redis-cli deals one master of each host in turn: the names in name
/// order are 10.0.0.1:7000, 10.0.0.1:7001, 10.0.0.2:7000, 10.0.0.2:7001,
/// dealt as 10.0.0.1:7000, 10.0.0.2:7000, 10.0.0.1:7001, 10.0.0.2:7001.
#[test]
fn redis_cli_layout_deals_one_host_at_a_time() {
    let names = [
        "10.0.0.1:7000",
        "10.0.0.1:7001",
        "10.0.0.2:7000@17000",
        "10.0.0.2:7001",
    ];
    let s = Slots::new(names.map(Node::new)).expect("valid");
    let name = |slot: u64| s.owner(slot).and_then(|id| s.nodes().name(id));
    let firsts: Vec<_> = [0, 4096, 8192, 12288].into_iter().map(name).collect();
    assert_eq!(firsts, [names[0], names[2], names[1], names[3]].map(Some));
    // Without a `:`, every name is its own host: name order.
    let plain = Slots::new(["b", "a"].map(Node::new)).expect("valid");
    assert_eq!(
        plain.nodes().name(plain.owner(0).expect("owned")),
        Some("a")
    );
}

/// The integer layout, `slot_layout = "even"`.
#[test]
fn three_nodes_get_the_documented_ranges() {
    let s = Slots::with_layout(["c", "a", "b"].map(Node::new), SlotLayout::Even).expect("valid");
    let name = |slot: u64| s.owner(slot).and_then(|id| s.nodes().name(id));
    assert_eq!(
        (name(0), name(5460), name(5461)),
        (Some("a"), Some("a"), Some("b"))
    );
    assert_eq!(
        (name(10921), name(10922), name(16383)),
        (Some("b"), Some("c"), Some("c"))
    );
    // The slot is `hash % 16384`.
    assert_eq!(name(16384 + 5461), Some("b"));
    assert_eq!(name(u64::MAX), Some("c"));
}

#[test]
fn adding_takes_the_highest_slots_of_the_fullest_first() {
    // a, b, c hold 5461, 5461, 5462; "d" needs 4096: c gives 16383 first,
    // then a, b, c in turn, from the top of each range.
    let s = Slots::with_layout(["a", "b", "c"].map(Node::new), SlotLayout::Even).expect("valid");
    let t = s.with_node(Node::new("d")).expect("new");
    let d = t.nodes().id("d").expect("member");
    assert_eq!(t.slot_counts(), vec![4096; 4]);
    let mine: Vec<u64> = (0..SLOT_COUNT as u64)
        .filter(|&x| t.owner(x) == Some(d))
        .collect();
    // c gives 1 + 1365, a and b 1365 each: the top of every range.
    let expected: Vec<u64> = (4096..=5460)
        .chain(9557..=10921)
        .chain(15018..=16383)
        .collect();
    assert_eq!(mine, expected);
}

#[test]
fn removing_gives_ascending_slots_to_the_emptiest() {
    let s = Slots::with_layout(["a", "b", "c"].map(Node::new), SlotLayout::Even).expect("valid");
    let t = s.without_node("a").expect("member");
    // b (5461) and c (5462): b takes slot 0 (fewer), slot 1 (tie: smaller
    // id), then c, and they alternate; slot 5461 was b's already.
    let name = |slot: u64| t.owner(slot).and_then(|id| t.nodes().name(id));
    let firsts: Vec<_> = (0..5).map(name).collect();
    assert_eq!(firsts, ["b", "b", "c", "b", "c"].map(Some));
    assert_eq!((name(5460), name(5461)), (Some("c"), Some("b")));
    assert_eq!(t.slot_counts(), vec![8192, 8192]);
}

#[test]
fn totality_on_zero_one_two_nodes() {
    let mut out = vec![9];
    let empty = Slots::new([]).expect("empty");
    assert_eq!(
        Keyed::new(empty.clone(), StableHash::RedisCrc16).locate("k"),
        None
    );

    let one = empty.with_node(Node::new("solo")).expect("first node");
    assert_eq!(one.slot_counts(), vec![SLOT_COUNT]);
    let two = one.with_node(Node::new("duo")).expect("second");
    assert_eq!(two.slot_counts(), vec![8192, 8192]);
    support::assert_total(&empty, &one, &two, &[3, 12345, 8191, 8192, u64::MAX]);
    two.replicas_into(12345, 9, &mut out);
    assert_eq!(out.len(), 2);
    let dynamic: &dyn Placement = &two;
    assert_eq!(dynamic.nodes().name(1), Some("solo"));
    // "duo" (id 0) took the top half from "solo".
    assert_eq!(dynamic.owner(8191), Some(1));
    assert_eq!(dynamic.owner(8192), Some(0));
    let back = two
        .without_node("duo")
        .and_then(|s| s.without_node("solo"))
        .expect("members");
    assert!(back.is_empty() && back.owner(0).is_none());
}

#[test]
fn migrate_moves_one_slot_or_says_why_not() {
    let s = Slots::new(["a", "b"].map(Node::new)).expect("valid");
    let t = s.migrate(0, "b").expect("valid move");
    let b = t.nodes().id("b");
    assert_eq!(t.owner(0), b);
    assert!((1..SLOT_COUNT as u64).all(|x| t.owner(x) == s.owner(x)));
    assert!(matches!(
        s.migrate(16384, "a"),
        Err(Error::InvalidParameter {
            algorithm: "slots",
            parameter: "slot",
            ..
        })
    ));
    assert!(matches!(s.migrate(5, "zz"), Err(Error::UnknownNode { .. })));
    // After a migration the table can be changed further without panicking.
    let u = t.without_node("a").expect("member");
    assert_eq!(u.slot_counts(), vec![SLOT_COUNT]);
}

#[test]
fn weights_and_too_many_nodes_are_refused() {
    assert!(matches!(
        Slots::new([Node::new("a").weight(2.0)]),
        Err(Error::Unsupported {
            algorithm: "slots",
            ..
        })
    ));
    let s = Slots::new([Node::new("a")]).expect("valid");
    assert!(matches!(
        s.with_node(Node::new("b").weight(0.5)),
        Err(Error::Unsupported { .. })
    ));
    let many = (0..=SLOT_COUNT).map(|i| Node::new(format!("n{i}")));
    assert!(matches!(
        Slots::new(many),
        Err(Error::InvalidParameter {
            parameter: "nodes",
            ..
        })
    ));
    let most = Slots::new((0..SLOT_COUNT).map(|i| Node::new(format!("n{i}")))).expect("max");
    assert_eq!(most.slot_counts(), vec![1; SLOT_COUNT]);
}
