//! `ClusterSpec::to_toml` reads back to an equal spec (proptest over every
//! algorithm, hash, parameter, layout and removed buckets), and
//! `ClusterSpec::pinned` rebuilds a changed snapshot exactly: a grown slots
//! table, Cassandra's tokens, jump's buckets, the removed buckets of
//! memento, anchor and dx.

use proptest::prelude::*;
use ringwise::{
    Algorithm, AnyPlacement, ClusterSpec, Flavor, Given, HashTag, Layout, Node, NodeTable, Params,
    Placement, StableHash,
};

use crate::support::rng::Rng;
use crate::support::{distinct, name};

/// Algorithms that take fractional weights.
const WEIGHTED: [Algorithm; 5] = [
    Algorithm::Ring,
    Algorithm::Rendezvous,
    Algorithm::Maglev,
    Algorithm::MultiProbe,
    Algorithm::Cassandra,
];

fn node() -> impl Strategy<Value = Node> {
    (
        name(),
        prop_oneof![Just(1.0), Just(2.0), Just(0.5), Just(1e-3), 0.01f64..100.0],
        proptest::option::of("[a-z]{1,3}[-0-9]{0,3}"),
    )
        .prop_map(|(name, weight, zone)| Node {
            name,
            weight,
            zone,
            datacenter: None,
            id: None,
        })
}

/// A layout the algorithm reads, for some of `nodes`.
fn layout(algorithm: Algorithm, nodes: &[Node], seed: u64) -> Layout {
    let mut rng = Rng(seed);
    let mut layout = Layout::new();
    match algorithm {
        Algorithm::Ring => {
            for n in nodes {
                if rng.below(2) == 0 {
                    let points = (0..rng.between(1, 4)).map(|_| rng.next()).collect();
                    layout.insert(n.name.clone(), Given::Points(points));
                }
            }
        }
        Algorithm::Cassandra => {
            for n in nodes {
                if rng.below(2) == 0 {
                    let tokens = (0..rng.between(1, 4)).map(|_| rng.next() as i64).collect();
                    layout.insert(n.name.clone(), Given::Tokens(tokens));
                }
            }
        }
        Algorithm::Slots if rng.below(2) == 0 => {
            // Cut 0..16384 into runs owned by random nodes.
            let mut start = 0u32;
            while start < 16384 {
                let end = (start + rng.between(1, 6000) as u32).min(16384) - 1;
                let owner = &nodes[rng.below(nodes.len())].name;
                let given = layout
                    .entry(owner.clone())
                    .or_insert_with(|| Given::Slots(Vec::new()));
                if let Given::Slots(ranges) = given {
                    ranges.push(start as u16..=end as u16);
                }
                start = end + 1;
            }
        }
        _ => {}
    }
    layout
}

/// Memento, anchor, dx: `k` removed buckets of `0..nodes + k`, in a random
/// removal order; none for the others.
fn removed(algorithm: Algorithm, nodes: usize, seed: u64) -> Vec<u32> {
    let mut rng = Rng(seed ^ 0x7E57);
    if !algorithm.reads_removed() || rng.below(3) == 0 {
        return Vec::new();
    }
    let total = nodes + rng.between(1, 4);
    let mut buckets: Vec<u32> = (0..total as u32).collect();
    for i in (1..buckets.len()).rev() {
        buckets.swap(i, rng.below(i + 1));
    }
    buckets.truncate(total - nodes);
    buckets
}

prop_compose! {
    fn spec()(
        algorithm in proptest::sample::select(Algorithm::ALL),
        nodes in distinct(proptest::collection::vec(node(), 1..6), |n| &n.name),
        named in any::<bool>(),
        hash in proptest::sample::select(&["xxh3", "md5", "murmur3", "siphash"][..]),
        key in any::<[u8; 16]>(),
        vnodes in prop_oneof![Just(160u32), 1u32..400],
        probes in prop_oneof![Just(21u32), 1u32..50],
        num_tokens in prop_oneof![Just(16u32), 1u32..64],
        flavor in proptest::sample::select(Flavor::ALL),
        epsilon in proptest::option::of(0.01f64..4.0),
        tag in proptest::option::of(Just("{}")),
        seed in any::<u64>(),
    ) -> ClusterSpec {
        let weighted = WEIGHTED.contains(&algorithm);
        let nodes: Vec<Node> = nodes
            .into_iter()
            .map(|n| Node { weight: if weighted { n.weight } else { 1.0 }, ..n })
            .collect();
        let mut params = Params { vnodes, probes, num_tokens, flavor, ..Params::DEFAULT };
        params.hash = match (named, hash) {
            (false, _) => algorithm.default_hash_with(&params),
            (true, "siphash") => StableHash::SipHash { key },
            (true, name) => name.parse().expect("a hash"),
        };
        let layout = layout(algorithm, &nodes, seed);
        let removed = removed(algorithm, nodes.len(), seed);
        ClusterSpec {
            algorithm,
            params,
            epsilon,
            listed: nodes.iter().map(|n| n.name.clone()).collect(),
            nodes: NodeTable::new(nodes).expect("valid nodes"),
            layout,
            removed,
            hash_tag: tag.map(|t| HashTag::new(t).expect("tag")),
            hash_named: named,
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn to_toml_reads_back_to_an_equal_spec(spec in spec()) {
        prop_assume!(spec.build().is_ok());
        let text = spec.to_toml();
        let back = ClusterSpec::from_toml(&text);
        prop_assert_eq!(back.as_ref().ok(), Some(&spec), "{}\n{:?}", text, back);
    }
}

/// `pinned` of `changed`, written and read back, builds the same owners.
fn rebuilds_exactly(spec: &ClusterSpec, changed: &AnyPlacement) -> ClusterSpec {
    let pinned = spec.pinned(changed).expect("pinned");
    let back = ClusterSpec::from_toml(&pinned.to_toml()).expect("reads back");
    assert_eq!(back, pinned);
    let rebuilt = back.build().expect("builds");
    let mut rng = Rng(5);
    for _ in 0..20_000 {
        let h = rng.next();
        let name = |p: &AnyPlacement| {
            p.owner(h)
                .and_then(|id| p.nodes().name(id).map(str::to_owned))
        };
        assert_eq!(
            name(rebuilt.placement()),
            name(changed),
            "{} hash {h}",
            spec.algorithm
        );
    }
    back
}

#[test]
fn pinned_specs_rebuild_changed_snapshots() {
    let nodes: Vec<Node> = ["c", "a", "b"].map(Node::new).into();
    for &algorithm in Algorithm::ALL {
        let spec = ClusterSpec::new(algorithm, nodes.clone()).expect("spec");
        let placement = spec.build().expect("builds").placement().clone();
        let grown = placement.with_node(Node::new("aa")).expect("grows");
        let back = rebuilds_exactly(&spec, &grown);
        assert_eq!(
            back.listed.last().map(String::as_str),
            Some("aa"),
            "{algorithm}"
        );
        // The join-order bucket algorithms cannot remove "a" (not last).
        let last_only = [
            Algorithm::Jump,
            Algorithm::JumpBack,
            Algorithm::Binomial,
            Algorithm::FlipHash,
        ];
        if !last_only.contains(&algorithm) {
            let shrunk = grown.without_node("a").expect("shrinks");
            let back = rebuilds_exactly(&spec, &shrunk);
            // Memento, anchor and dx write the hole "a" left (its bucket,
            // 1: "c" was listed first); the others need none.
            let hole: &[u32] = if algorithm.reads_removed() { &[1] } else { &[] };
            assert_eq!(back.removed, hole, "{algorithm}");
        }
    }
}

#[test]
fn a_grown_slots_table_is_written_slot_for_slot() {
    let spec =
        ClusterSpec::new(Algorithm::Slots, ["a", "b", "c"].map(Node::new).into()).expect("spec");
    let grown = spec
        .build()
        .expect("builds")
        .placement()
        .with_node(Node::new("d"));
    let back = rebuilds_exactly(&spec, &grown.expect("grows"));
    // Not the balanced layout of four nodes: d took the tops of a, b, c.
    let Some(Given::Slots(d)) = back.layout.get("d") else {
        panic!("d's slots are written")
    };
    assert_eq!(d.len(), 3, "{d:?}");
    let text = back.to_toml();
    assert!(text.contains("slots = [\"0-4095\"]"), "{text}");
}
