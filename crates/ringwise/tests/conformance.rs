//! Conformance: every property every algorithm promises, checked over
//! [`Algorithm::ALL`] on random node sets and random hashes.
//!
//! Each algorithm is built as a cluster file builds it,
//! `AnyPlacement::build(algorithm, nodes, &Params::DEFAULT)`, with
//! [`Algorithm::default_hash`] where keys are involved. What every placement
//! promises (determinism, totality, replicas, batch lookups) is checked for
//! all of them; what differs is stated once, in [`promises`], and each
//! property reads its column. A new algorithm in the registry fails
//! `every_algorithm_states_its_promises` until it has a row.
//!
//! Nodes have weight 1 (jump, memento, anchor, dx, multi-probe and slots have no
//! weights); `weights_are_followed_or_refused` covers the weights column.
//! The per-algorithm modules test the rest (published vectors, documented
//! orders, weighted clusters, models).

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;
use ringwise::{
    Algorithm, AnyPlacement, Error, Keyed, Node, NodeId, Params, Placement, SLOT_COUNT,
};

use crate::support::{self, owner_name};

/// What an algorithm promises beyond what every placement must do.
#[derive(Debug, Clone, Copy)]
struct Promises {
    /// A join moves keys only to the new node, a leave only the leaving
    /// node's keys. Maglev's, ketama's, envoy-ring's and grpc-ring's moves are near
    /// minimal only: at most [`NEAR_MINIMAL`] times the optimum.
    minimal_moves: bool,
    /// The same nodes in any order place every key alike. The bucket
    /// algorithms (jump, jumpback, binomial, fliphash, memento, anchor, dx)
    /// read the order: it is their bucket (join) order.
    order_independent: bool,
    /// Any node can leave. Jump, jumpback, binomial and fliphash can remove
    /// only the last joined node and answer [`Error::Unsupported`] for the others.
    any_removal: bool,
    /// Nodes may weigh differently, and heavier ones own more keys. The
    /// others refuse unequal weights with [`Error::Unsupported`].
    weights: bool,
    /// A node that joins and leaves again, or leaves and joins again,
    /// restores every owner; a join equals a fresh build with the node
    /// listed last. Not slots: its table follows its history of moves, like
    /// a real Redis cluster.
    round_trip: bool,
}

/// The promises of each algorithm, from its module docs. `Algorithm` is
/// `#[non_exhaustive]`, so the match needs a wildcard arm: a new algorithm
/// gets `None` there and `every_algorithm_states_its_promises` names it.
#[rustfmt::skip]
fn promises(algorithm: Algorithm) -> Option<Promises> {
    let row = |minimal_moves, order_independent, any_removal, weights, round_trip| Promises {
        minimal_moves, order_independent, any_removal, weights, round_trip,
    };
    Some(match algorithm {
        //                          minimal  order   any     weights round
        //                          moves    indep.  leaves          trip
        Algorithm::Ring       => row(true,  true,   true,   true,   true),
        Algorithm::Rendezvous => row(true,  true,   true,   true,   true),
        Algorithm::Jump       => row(true,  false,  false,  false,  true),
        Algorithm::Memento    => row(true,  false,  true,   false,  true),
        Algorithm::JumpBack   => row(true,  false,  false,  false,  true),
        Algorithm::Binomial   => row(true,  false,  false,  false,  true),
        Algorithm::FlipHash   => row(true,  false,  false,  false,  true),
        Algorithm::Anchor     => row(true,  false,  true,   false,  true),
        Algorithm::Dx         => row(true,  false,  true,   false,  true),
        Algorithm::Maglev     => row(false, true,   true,   true,   true),
        Algorithm::MultiProbe => row(true,  true,   true,   false,  true),
        Algorithm::Slots      => row(true,  true,   true,   false,  false),
        // Ketama's point counts depend on every weight and Envoy's on the
        // ring size and list order: near minimal only, as in their peers.
        // Ketama's ties and Envoy's running sums follow the listed order.
        Algorithm::Ketama     => row(false, false,  true,   true,   true),
        Algorithm::Nginx      => row(true,  true,   true,   true,   true),
        Algorithm::EnvoyRing  => row(false, false,  true,   true,   true),
        // gRPC's ring is Envoy's with its sizes capped (4096 by default).
        Algorithm::GrpcRing   => row(false, false,  true,   true,   true),
        Algorithm::Cassandra  => row(true,  true,   true,   true,   true),
        // Envoy's rendezvous: minimal up to rounding ties (module docs);
        // exact ties go to the first listed host, as in Envoy.
        Algorithm::EnvoyRendezvous => row(true, false, true,  true,   true),
        // Points depend only on the backend's ident and weight; the top
        // point follows the largest one, which only its owner's join or
        // leave changes. Ties go by name, not by Varnish's qsort.
        Algorithm::VarnishShard => row(true, true,  true,   true,   true),
        // Points follow each server's numeric id, and automatic ids follow
        // the listed order (HAProxy numbers servers as the config lists
        // them); a leave renumbers nobody, a join takes the smallest free id.
        Algorithm::Haproxy    => row(true,  false,  true,   true,   true),
        // Dalli's counts follow every weight (as ketama's); ties by name.
        Algorithm::Dalli      => row(false, true,   true,   true,   true),
        // redis-rb's and groupcache's ties go to the node added last.
        Algorithm::RedisRb    => row(true,  false,  true,   false,  true),
        Algorithm::Groupcache => row(true,  false,  true,   false,  true),
        // php-memcache's ties go to the server added first; its buckets
        // change only where the new server's points fall.
        Algorithm::PhpMemcache => row(true, false,  true,   true,   true),
        // go-rendezvous: exact ties to the first listed shard.
        Algorithm::GoRedis    => row(true,  false,  true,   false,  true),
        _ => return None,
    })
}

/// Maglev's bound on the slots one join or leave moves, in multiples of the
/// optimum (the slots the changed node takes or gives up). Its module docs
/// measure 1.16 on average at 40 nodes with the default M = 65537, under
/// twice while N² < 0.4·M (here N ≤ 41: N² < 1,700 ≪ 26,000), and its
/// property tests allow 3 per case. Single cases vary more than averages:
/// of about 34,000 random joins and leaves here, all but three moved less
/// than 1.6 times the optimum, the worst 2.04. A maglev that stopped being near minimal (a rebuild that
/// reshuffles every slot) moves about N times the optimum.
const NEAR_MINIMAL: f64 = 3.0;

fn promised(algorithm: Algorithm) -> Promises {
    promises(algorithm).unwrap_or_else(|| {
        panic!(
            "algorithm `{algorithm}` has no row in conformance::promises: state what it \
             promises (minimal moves, order independence, any removal, weights, round trip)"
        )
    })
}

#[test]
fn every_algorithm_states_its_promises() {
    let missing: Vec<&str> = Algorithm::ALL
        .iter()
        .filter(|a| promises(**a).is_none())
        .map(|a| a.name())
        .collect();
    assert!(
        missing.is_empty(),
        "algorithms without a row in conformance::promises: {missing:?}; add one stating \
         what each promises"
    );
    assert_eq!(Algorithm::ALL.len(), Algorithm::NAMES.len());
}

fn build(algorithm: Algorithm, nodes: &[Node]) -> AnyPlacement {
    AnyPlacement::build(algorithm, nodes.to_vec(), &Params::DEFAULT)
        .unwrap_or_else(|err| panic!("{algorithm} over {} nodes: {err}", nodes.len()))
}

fn keyed(algorithm: Algorithm, nodes: &[Node]) -> Keyed<AnyPlacement> {
    Keyed::new(build(algorithm, nodes), algorithm.default_hash())
}

/// 1–41 nodes of weight 1 with distinct valid names, in a random (join)
/// order.
fn cluster() -> impl Strategy<Value = Vec<Node>> {
    support::distinct(vec(support::name(), 1..=41), String::as_str).prop_map(support::nodes)
}

/// Keys: text of any characters, and the empty key.
fn keys(count: std::ops::Range<usize>) -> impl Strategy<Value = Vec<String>> {
    vec(".{0,12}", count)
}

/// The hashes on which to compare owners. Maglev and slots look up
/// `hash mod K` in a table of K entries, so `0..K` is every key there is
/// and movement is counted exactly; the others take the random `hashes`.
fn sample(placement: &AnyPlacement, hashes: &[u64]) -> Vec<u64> {
    match placement {
        AnyPlacement::Maglev(maglev) => (0..maglev.table_size()).collect(),
        AnyPlacement::Slots(_) => (0..SLOT_COUNT as u64).collect(),
        _ => hashes.to_vec(),
    }
}

/// The owner's name of each hash.
fn owners<'a>(placement: &'a AnyPlacement, hashes: &[u64]) -> Vec<Option<&'a str>> {
    hashes.iter().map(|&h| owner_name(placement, h)).collect()
}

/// The names of `n` replicas of each hash.
fn replicas<'a>(placement: &'a AnyPlacement, hashes: &[u64], n: usize) -> Vec<Vec<&'a str>> {
    let mut out = Vec::new();
    let nodes = placement.nodes();
    hashes
        .iter()
        .map(|&h| {
            placement.replicas_into(h, n, &mut out);
            out.iter().filter_map(|&id| nodes.name(id)).collect()
        })
        .collect()
}

/// How the owners of `hashes` changed from `before` to `after`: how many
/// moved to or from `node` (the one that joined or left), and how many moved
/// between other nodes.
fn moves(
    before: &AnyPlacement,
    after: &AnyPlacement,
    hashes: &[u64],
    node: &str,
) -> (usize, usize) {
    let (mut own, mut others) = (0, 0);
    for &h in hashes {
        let (old, new) = (owner_name(before, h), owner_name(after, h));
        if old == new {
            continue;
        }
        if old == Some(node) || new == Some(node) {
            own += 1;
        } else {
            others += 1;
        }
    }
    (own, others)
}

/// Minimal moves: none between other nodes. The others: all moves at most
/// a bound times the optimum, the keys the changed node took or gave up —
/// or its fair share of the sample, `fair`, when it happened to own fewer
/// (a node that drew 1 of 300 hashes by chance says nothing about the
/// algorithm).
fn check_moves(
    algorithm: Algorithm,
    own: usize,
    others: usize,
    fair: f64,
) -> Result<(), TestCaseError> {
    // Envoy's ring gives each of N equal hosts ceil(1024/N) points, so a
    // join also takes a point or two from every old host: N = 31 → 32 moves
    // 2 of 34 points of each, about 1.9 times the new host's share on top of
    // it (2.9 times the optimum in expectation), more in a 300-hash sample.
    // A leave gives every remaining host a point or two the same way.
    let bound = match algorithm {
        Algorithm::EnvoyRing | Algorithm::GrpcRing => 2.0 * NEAR_MINIMAL,
        _ => NEAR_MINIMAL,
    };
    if promised(algorithm).minimal_moves {
        prop_assert_eq!(others, 0, "{}: keys moved between other nodes", algorithm);
    } else {
        // With a fair share of 30 or more (maglev's exact tables) owning
        // nothing is no accident; a 300-hash sample can miss a node.
        prop_assert!(
            own > 0 || fair < 30.0,
            "{}: the changed node owned nothing",
            algorithm
        );
        prop_assert!(
            (own + others) as f64 <= bound * (own as f64).max(fair),
            "{}: {} keys moved for an optimum of {} (fair share {:.1})",
            algorithm,
            own + others,
            own,
            fair
        );
    }
    Ok(())
}

#[test]
fn empty_placements_answer_none() {
    let hashes = [0, 1, 16_383, 16_384, 65_537, u64::MAX];
    for &algorithm in Algorithm::ALL {
        let empty = keyed(algorithm, &[]);
        support::assert_empty(empty.placement(), &hashes);
        assert_eq!(empty.locate("user:42"), None, "{algorithm}");
        assert!(empty.replicas("user:42", 3).is_empty(), "{algorithm}");
        let mut out = vec![7];
        empty.owners_into(&["a", "b"], &mut out);
        assert!(out.is_empty(), "{algorithm}");
    }
}

/// Weights: followed (a node of weight 3 beside one of weight 1 owns 3/4 of
/// the keys) or refused with `Unsupported`, at build and at join. The ring
/// is the loosest: 160 and 480 points give the heavy node 0.75 ± 0.034
/// (one standard deviation), so the bound is 0.1.
#[test]
fn weights_are_followed_or_refused() {
    let unequal = [Node::new("light"), Node::new("heavy").weight(3.0)];
    let spread: Vec<u64> = (0..20_000).map(|i| ringwise::replica_key(i, 1)).collect();
    for &algorithm in Algorithm::ALL {
        let built = AnyPlacement::build(algorithm, unequal.to_vec(), &Params::DEFAULT);
        let unit = build(algorithm, &support::nodes(["a", "b"]));
        let joined = unit.with_node(Node::new("c").weight(2.0));
        if !promised(algorithm).weights {
            assert!(
                matches!(built, Err(Error::Unsupported { .. })),
                "{algorithm}: {built:?}"
            );
            assert!(
                matches!(joined, Err(Error::Unsupported { .. })),
                "{algorithm}: {joined:?}"
            );
            continue;
        }
        let placement = built.unwrap_or_else(|err| panic!("{algorithm}: {err}"));
        assert!(joined.is_ok(), "{algorithm}: {joined:?}");
        let hashes = sample(&placement, &spread);
        let heavy = owners(&placement, &hashes)
            .iter()
            .filter(|o| **o == Some("heavy"))
            .count();
        let share = heavy as f64 / hashes.len() as f64;
        assert!(
            (share - 0.75).abs() < 0.1,
            "{algorithm}: heavy share {share}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn determinism_across_builds_and_clones(
        nodes in cluster(), hashes in vec(any::<u64>(), 64), keys in keys(32..33)
    ) {
        for &algorithm in Algorithm::ALL {
            let first = keyed(algorithm, &nodes);
            let second = keyed(algorithm, &nodes);
            let copy = first.clone();
            let all = nodes.len();
            for other in [&second, &copy] {
                let (a, b) = (first.placement(), other.placement());
                prop_assert_eq!(a.nodes(), b.nodes(), "{}", algorithm);
                for h in &hashes {
                    prop_assert_eq!(a.owner(*h), b.owner(*h), "{}", algorithm);
                }
                prop_assert_eq!(replicas(a, &hashes, 3), replicas(b, &hashes, 3));
                prop_assert_eq!(replicas(a, &hashes, all), replicas(b, &hashes, all));
                for key in &keys {
                    prop_assert_eq!(first.locate(key), other.locate(key), "{}", algorithm);
                }
            }
        }
    }

    #[test]
    fn every_hash_and_key_has_an_owner(
        nodes in cluster(), hashes in vec(any::<u64>(), 64), keys in keys(32..33)
    ) {
        for &algorithm in Algorithm::ALL {
            let keyed = keyed(algorithm, &nodes);
            let placement = keyed.placement();
            prop_assert_eq!(placement.len(), nodes.len());
            for h in hashes.iter().copied().chain([0, 1, u64::MAX]) {
                let id = placement.owner(h);
                prop_assert!(
                    id.is_some_and(|id| (id as usize) < nodes.len()),
                    "{}: hash {} gives {:?}", algorithm, h, id
                );
            }
            for key in &keys {
                let name = keyed.locate(key);
                prop_assert!(
                    name.is_some_and(|n| placement.nodes().contains(n)),
                    "{}: key {:?} gives {:?}", algorithm, key, name
                );
            }
        }
    }

    #[test]
    fn replicas_are_distinct_and_start_with_the_owner(
        nodes in cluster(), n in 0usize..45, hashes in vec(any::<u64>(), 32)
    ) {
        for &algorithm in Algorithm::ALL {
            let placement = build(algorithm, &nodes);
            let mut out = Vec::new();
            for &h in &hashes {
                placement.replicas_into(h, n, &mut out);
                prop_assert_eq!(out.len(), n.min(nodes.len()), "{}", algorithm);
                let mut distinct = out.clone();
                distinct.sort_unstable();
                distinct.dedup();
                prop_assert_eq!(distinct.len(), out.len(), "{}: {:?}", algorithm, out);
                prop_assert!(out.iter().all(|&id| (id as usize) < nodes.len()));
                if n > 0 {
                    prop_assert_eq!(out.first().copied(), placement.owner(h), "{}", algorithm);
                }
            }
        }
    }

    #[test]
    fn batch_lookups_equal_single_ones(
        nodes in cluster(),
        mut hashes in vec(any::<u64>(), 0..300),
        order in 0u8..3,
        keys in keys(0..300),
    ) {
        // As generated, ascending (the ring's sweep), descending.
        match order {
            1 => hashes.sort_unstable(),
            2 => hashes.sort_unstable_by(|a, b| b.cmp(a)),
            _ => {}
        }
        for &algorithm in Algorithm::ALL {
            let keyed = keyed(algorithm, &nodes);
            let placement = keyed.placement();
            let mut out = vec![7];
            placement.owners_into(&hashes, &mut out);
            let single: Vec<NodeId> = hashes.iter().filter_map(|&h| placement.owner(h)).collect();
            prop_assert_eq!(&out, &single, "{}", algorithm);
            keyed.owners_into(&keys, &mut out);
            let single: Vec<NodeId> = keys.iter().filter_map(|k| keyed.owner(k)).collect();
            prop_assert_eq!(&out, &single, "{}", algorithm);
        }
    }

    #[test]
    fn a_join_moves_keys_only_to_the_new_node(nodes in cluster(), hashes in vec(any::<u64>(), 300)) {
        prop_assume!(nodes.len() >= 2);
        let (joiner, base) = nodes.split_last().expect("two nodes");
        for &algorithm in Algorithm::ALL {
            let before = build(algorithm, base);
            let after = before.with_node(joiner.clone()).expect("a new name");
            let hashes = sample(&before, &hashes);
            let (own, others) = moves(&before, &after, &hashes, &joiner.name);
            let fair = hashes.len() as f64 / after.len() as f64;
            check_moves(algorithm, own, others, fair)?;
            if matches!(after, AnyPlacement::Slots(_)) {
                // Exactly floor(16384 / (N+1)) slots, all to the new node.
                prop_assert_eq!(own, SLOT_COUNT / after.len());
            }
            if promised(algorithm).round_trip {
                let fresh = build(algorithm, &nodes);
                prop_assert_eq!(owners(&after, &hashes), owners(&fresh, &hashes), "{}", algorithm);
            }
        }
    }

    #[test]
    fn a_leave_moves_only_the_leaving_nodes_keys(
        nodes in cluster(), pick in any::<Index>(), hashes in vec(any::<u64>(), 300)
    ) {
        prop_assume!(nodes.len() >= 2);
        let last = nodes[nodes.len() - 1].name.as_str();
        let picked = nodes[pick.index(nodes.len())].name.as_str();
        for &algorithm in Algorithm::ALL {
            let any_removal = promised(algorithm).any_removal;
            let before = build(algorithm, &nodes);
            let hashes = sample(&before, &hashes);
            for name in [picked, last] {
                match before.without_node(name) {
                    Ok(after) => {
                        prop_assert!(any_removal || name == last, "{} removed {:?}", algorithm, name);
                        prop_assert!(!after.nodes().contains(name));
                        prop_assert_eq!(after.len(), nodes.len() - 1);
                        let (own, others) = moves(&before, &after, &hashes, name);
                        let fair = hashes.len() as f64 / before.len() as f64;
                        check_moves(algorithm, own, others, fair)?;
                    }
                    Err(err) => {
                        prop_assert!(!any_removal && name != last, "{}: {}", algorithm, err);
                        prop_assert!(
                            matches!(err, Error::Unsupported { .. }),
                            "{}: removing {:?}: {:?}", algorithm, name, err
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn the_order_of_nodes_does_not_matter(
        (nodes, shuffled) in cluster().prop_flat_map(|n| (Just(n.clone()), Just(n).prop_shuffle())),
        hashes in vec(any::<u64>(), 100),
    ) {
        for &algorithm in Algorithm::ALL {
            if !promised(algorithm).order_independent {
                continue;
            }
            let (a, b) = (build(algorithm, &nodes), build(algorithm, &shuffled));
            let hashes = sample(&a, &hashes);
            prop_assert_eq!(owners(&a, &hashes), owners(&b, &hashes), "{}", algorithm);
            let few = &hashes[..hashes.len().min(100)];
            prop_assert_eq!(replicas(&a, few, 3), replicas(&b, few, 3), "{}", algorithm);
        }
    }

    #[test]
    fn a_round_trip_restores_every_owner(
        nodes in cluster(), pick in any::<Index>(), hashes in vec(any::<u64>(), 200)
    ) {
        prop_assume!(nodes.len() >= 2);
        let (joiner, base) = nodes.split_last().expect("two nodes");
        for &algorithm in Algorithm::ALL {
            let promises = promised(algorithm);
            if !promises.round_trip {
                continue;
            }
            // Join, then leave.
            let before = build(algorithm, base);
            let hashes = sample(&before, &hashes);
            let back = before
                .with_node(joiner.clone())
                .and_then(|p| p.without_node(&joiner.name))
                .expect("join and leave");
            let few = &hashes[..hashes.len().min(200)];
            prop_assert_eq!(back.nodes(), before.nodes());
            prop_assert_eq!(owners(&back, &hashes), owners(&before, &hashes), "{}", algorithm);
            prop_assert_eq!(replicas(&back, few, 3), replicas(&before, few, 3));
            // Leave, then join again: any node, or jump's last one.
            let full = build(algorithm, &nodes);
            let gone = if promises.any_removal { &nodes[pick.index(nodes.len())] } else { joiner };
            let back = full
                .without_node(&gone.name)
                .and_then(|p| p.with_node(gone.clone()))
                .expect("leave and join");
            prop_assert_eq!(owners(&back, &hashes), owners(&full, &hashes), "{}", algorithm);
            prop_assert_eq!(replicas(&back, few, 3), replicas(&full, few, 3));
        }
    }
}
