//! Maglev: Envoy's published tables, then property tests on random clusters.

use std::collections::{HashMap, HashSet};

use proptest::collection::vec;
use proptest::prelude::*;
use ringwise::{Error, Maglev, Node, NodeId, Placement};

use crate::support;

/// The owner's name of every slot, read as Envoy's tests read them: the key
/// hash is the slot index, so `owner(i)` is `table[i]`.
/// Empty without nodes.
fn table(maglev: &Maglev) -> Vec<&str> {
    if maglev.is_empty() {
        return Vec::new();
    }
    (0..maglev.table_size())
        .map(|h| name(maglev, maglev.owner(h).expect("a node owns every slot")))
        .collect()
}

fn name(maglev: &Maglev, id: NodeId) -> &str {
    maglev.nodes().name(id).expect("an id of this table")
}

fn addresses(ports: std::ops::RangeInclusive<u32>) -> Vec<Node> {
    ports.map(|p| Node::new(format!("127.0.0.1:{p}"))).collect()
}

/// Slots per node name.
fn counts(maglev: &Maglev) -> HashMap<&str, u64> {
    let mut counts = HashMap::new();
    for owner in table(maglev) {
        *counts.entry(owner).or_insert(0) += 1;
    }
    counts
}

// Envoy `test/extensions/load_balancing_policies/maglev/maglev_lb_test.cc`,
// test `Basic` (compatibility notes §5.1): hosts `127.0.0.1:90..95`, M = 7.
#[test]
fn envoy_basic_addresses() {
    let maglev = Maglev::new(addresses(90..=95), 7).expect("valid");
    let expected = [":92", ":94", ":90", ":91", ":95", ":90", ":93"];
    let expected: Vec<String> = expected.iter().map(|p| format!("127.0.0.1{p}")).collect();
    assert_eq!(table(&maglev), expected);
}

// Same file, `BasicWithHostName`: hosts hashed by hostname `"90".."95"`.
#[test]
fn envoy_basic_hostnames() {
    let nodes = (90..=95).map(|p| Node::new(p.to_string())).collect();
    let maglev = Maglev::new(nodes, 7).expect("valid");
    assert_eq!(table(&maglev), ["92", "95", "90", "93", "94", "91", "90"]);
}

// Same file, `Weighted`: `:90` weight 1, `:91` weight 2, M = 17, with
// `min_entries_per_host` 6 and `max_entries_per_host` 11.
#[test]
fn envoy_weighted() {
    let nodes = vec![
        Node::new("127.0.0.1:90").weight(1.0),
        Node::new("127.0.0.1:91").weight(2.0),
    ];
    let maglev = Maglev::new(nodes, 17).expect("valid");
    let ids: Vec<NodeId> = (0..17).map(|h| maglev.owner(h).expect("a node")).collect();
    assert_eq!(ids, [1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0, 1]);
    let counts = counts(&maglev);
    assert_eq!((counts["127.0.0.1:90"], counts["127.0.0.1:91"]), (6, 11));
}

// Same file, `BasicWithRetryHostPredicate`: key hash 10 picks `:91` (slot 3);
// attempt 1 (`10 XOR (2^64 − 1)`) `:90`; attempt 2 `:95`. Our replicas
// follow Envoy's retry attempts.
#[test]
fn envoy_retry_order_is_the_replica_order() {
    let maglev = Maglev::new(addresses(90..=95), 7).expect("valid");
    let mut out = Vec::new();
    maglev.replicas_into(10, 3, &mut out);
    let names: Vec<&str> = out.iter().map(|&id| name(&maglev, id)).collect();
    assert_eq!(names, ["127.0.0.1:91", "127.0.0.1:90", "127.0.0.1:95"]);
}

#[test]
fn default_table_is_narrow_and_full() {
    let maglev = Maglev::new(addresses(1..=100), Maglev::DEFAULT_TABLE_SIZE).expect("valid");
    assert_eq!(maglev.heap_bytes(), 2 * 65_537);
    let counts = counts(&maglev);
    assert_eq!(counts.len(), 100);
    assert!(counts.values().all(|&c| c == 655 || c == 656), "{counts:?}");
}

fn bad_table_size(nodes: Vec<Node>, size: u64) {
    match Maglev::new(nodes, size) {
        Err(Error::InvalidParameter {
            algorithm: "maglev",
            parameter: "table_size",
            value,
            ..
        }) => assert_eq!(value, size.to_string()),
        other => panic!("table size {size}: expected InvalidParameter, got {other:?}"),
    }
}

#[test]
fn bad_table_sizes_are_refused() {
    for size in [0, 1, 4, 8, 9, 65_535, 65_536, 1 << 24, u64::MAX] {
        bad_table_size(addresses(90..=91), size);
    }
    // 16777259 is prime but above 2^24.
    bad_table_size(addresses(90..=91), 16_777_259);
    // Fewer slots than nodes: 3 nodes cannot share 2 slots.
    bad_table_size(addresses(90..=92), 2);
    let full = Maglev::new(addresses(90..=96), 7).expect("7 nodes fit 7 slots");
    assert!(matches!(
        full.with_node(Node::new("127.0.0.1:97")),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        full.without_node("nope"),
        Err(Error::UnknownNode { .. })
    ));
}

#[test]
fn bad_nodes_are_refused() {
    let twice = vec![Node::new("a"), Node::new("a")];
    assert!(matches!(
        Maglev::new(twice, 7),
        Err(Error::DuplicateNode { .. })
    ));
    assert!(matches!(
        Maglev::new(vec![Node::new("a").weight(0.0)], 7),
        Err(Error::InvalidWeight { .. })
    ));
}

#[test]
fn only_primes_are_table_sizes() {
    let is_prime = |m: u64| m >= 2 && (2..m).take_while(|d| d * d <= m).all(|d| m % d != 0);
    for m in 0..3000 {
        let built = Maglev::new(addresses(1..=2), m);
        assert_eq!(built.is_ok(), is_prime(m), "table size {m}");
    }
}

#[test]
fn totality_on_zero_one_and_two_nodes() {
    let empty = Maglev::new(Vec::new(), 7).expect("no nodes is a valid cluster");
    let one = empty.with_node(Node::new("solo")).expect("one node");
    let two = one.with_node(Node::new("duo")).expect("two nodes");
    let ends = [0, 1, 6, u64::MAX - 1, u64::MAX];
    let hashes: Vec<u64> = (0..1000).chain(ends).collect();
    support::assert_total(&empty, &one, &two, &hashes);
    assert_eq!(counts(&two).len(), 2, "both nodes own slots");
}

/// Nodes with distinct names and weights from `weight`.
fn cluster(
    sizes: std::ops::RangeInclusive<usize>,
    weight: impl Strategy<Value = f64>,
) -> impl Strategy<Value = Vec<Node>> {
    let named = support::distinct(vec((support::name(), weight), sizes), |(name, _)| name);
    named.prop_map(|nodes| {
        nodes
            .into_iter()
            .map(|(name, weight)| Node::new(name).weight(weight))
            .collect()
    })
}

fn weight() -> impl Strategy<Value = f64> {
    prop_oneof![(1u32..6).prop_map(f64::from), 0.05f64..4.0]
}

/// A prime table size from small to Envoy's default.
fn table_size() -> impl Strategy<Value = u64> {
    prop::sample::select(vec![67u64, 251, 1009, 4099, 65_537])
}

/// Slots that changed hands between `a` and `b`, apart from those of `node`
/// (the one added or removed), and the slots `node` had or has.
fn moved(a: &Maglev, b: &Maglev, node: &str) -> (u64, u64) {
    let (mut own, mut others) = (0, 0);
    for (x, y) in table(a).into_iter().zip(table(b)) {
        if x == node || y == node {
            own += 1;
        } else if x != y {
            others += 1;
        }
    }
    (own, others)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn order_of_nodes_does_not_matter(nodes in cluster(0..=60, weight()), m in table_size()) {
        prop_assume!(nodes.len() as u64 <= m);
        let forward = Maglev::new(nodes.clone(), m).expect("valid");
        let backward = Maglev::new(nodes.into_iter().rev().collect(), m).expect("valid");
        prop_assert_eq!(table(&forward), table(&backward));
    }

    #[test]
    fn equal_weights_differ_by_at_most_one_slot(
        nodes in cluster(1..=60, Just(1.0)), m in table_size(), scale in 0.5f64..100.0
    ) {
        prop_assume!(nodes.len() as u64 <= m);
        // Any common weight is the same as weight 1.
        let nodes: Vec<Node> = nodes.into_iter().map(|n| n.weight(scale)).collect();
        let maglev = Maglev::new(nodes, m).expect("valid");
        let n = maglev.len() as u64;
        let counts = counts(&maglev);
        // Every node claims once a round; the last round reaches the first
        // `m mod n` nodes in name order.
        for id in 0..n as NodeId {
            let extra = u64::from(u64::from(id) < m % n);
            prop_assert_eq!(counts[name(&maglev, id)], m / n + extra, "node {}", id);
        }
    }

    #[test]
    fn slots_follow_the_weights(nodes in cluster(1..=40, weight()), m in table_size()) {
        prop_assume!(nodes.len() as u64 <= m);
        let maglev = Maglev::new(nodes, m).expect("valid");
        let total = maglev.nodes().total_weight();
        let n = maglev.len() as f64;
        let counts = counts(&maglev);
        for node in maglev.nodes().iter() {
            // Between M·w − N·w − 1 and M·w + 2 (module docs), plus one of
            // slack for floating point.
            let share = node.weight / total;
            let excess = counts[node.name.as_str()] as f64 - m as f64 * share;
            prop_assert!(
                (-(n * share + 2.0)..=3.0).contains(&excess),
                "{}: {} slots, {:.2} expected", node.name, counts[node.name.as_str()], m as f64 * share
            );
        }
    }

    #[test]
    fn replicas_are_distinct_in_envoys_retry_order(
        nodes in cluster(0..=60, weight()),
        m in table_size(),
        hash in any::<u64>(),
        extra in 0usize..3,
        fraction in 0.0f64..=1.0,
    ) {
        prop_assume!(nodes.len() as u64 <= m);
        let maglev = Maglev::new(nodes, m).expect("valid");
        let n = (maglev.len() as f64 * fraction) as usize + extra;
        let mut out = Vec::new();
        maglev.replicas_into(hash, n, &mut out);
        prop_assert_eq!(out.len(), n.min(maglev.len()));
        prop_assert_eq!(out.iter().collect::<HashSet<_>>().len(), out.len());
        prop_assert!(out.iter().all(|&id| (id as usize) < maglev.len()));
        // The documented order: distinct owners of Envoy's first 8·len
        // retry hashes (len, not n, so that replicas(r) is a prefix of
        // replicas(r + 1)), then the missing ids after the owner's.
        let mut expected: Vec<NodeId> = Vec::new();
        for attempt in 0..8 * maglev.len() as u64 {
            let Some(id) = maglev.owner(hash ^ attempt.wrapping_neg()) else { break };
            if expected.len() < n && !expected.contains(&id) {
                expected.push(id);
            }
        }
        let len = maglev.len() as NodeId;
        let first = expected.first().copied().unwrap_or(0);
        for step in 1..len {
            let id = (first + step) % len;
            if expected.len() < n && !expected.contains(&id) {
                expected.push(id);
            }
        }
        prop_assert_eq!(out, expected);
    }

    #[test]
    fn one_node_more_or_less_moves_at_most_three_times_the_optimum(
        nodes in cluster(5..=40, Just(1.0)),
        m in prop::sample::select(vec![4099u64, 8191]),
        pick in any::<prop::sample::Index>(),
    ) {
        // N² ≤ 0.4·M: 40 nodes at 4099 slots.
        prop_assume!(nodes.len() >= 5);
        let before = Maglev::new(nodes.clone(), m).expect("valid");
        let gone = nodes[pick.index(nodes.len())].name.clone();
        let after = before.without_node(&gone).expect("a member");
        let (own, others) = moved(&before, &after, &gone);
        prop_assert!(own + others <= 3 * own, "removing: {} own slots, {} others moved", own, others);
        let (own, others) = moved(&after, &before, &gone);
        prop_assert!(own + others <= 3 * own, "adding: {} own slots, {} others moved", own, others);
        // A rebuild is a pure function of the node set.
        let back = after.with_node(Node::new(gone.clone())).expect("new name");
        prop_assert_eq!(table(&back), table(&before));
    }
}
