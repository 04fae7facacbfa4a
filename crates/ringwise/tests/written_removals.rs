//! A memento, anchor or dx cluster whose buckets were removed, written as a
//! file (`ClusterSpec::pinned` + `to_toml`, the file's `removed` list) and
//! read back, is the snapshot it was written from: the same state, the same
//! owner for every key, and the same next change (a leave moves exactly the
//! leaving node's keys, as in memory; a join takes the same bucket back).
//! Random histories of leaves and joins, each step once in memory and once
//! through a file.

use ringwise::{
    Algorithm, AnyPlacement, ClusterSpec, Error, Node, Params, Placement, diff_sampled, replica_key,
};

use crate::support::owner_name;
use crate::support::rng::Rng;

const ALGORITHMS: [Algorithm; 3] = [Algorithm::Memento, Algorithm::Anchor, Algorithm::Dx];

/// Keys compared per snapshot.
const KEYS: u64 = 10_000;

/// `placement` written by `spec.pinned`, read back and built.
fn through_file(spec: &ClusterSpec, placement: &AnyPlacement) -> (ClusterSpec, AnyPlacement) {
    let text = spec.pinned(placement).expect("pinned").to_toml();
    let back = ClusterSpec::from_toml(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let built = back.build().expect("builds").placement().clone();
    (back, built)
}

/// The whole state: b-array and removal table, or anchor's A, K, W, L and
/// stack, or dx's owners and stack.
fn same_state(a: &AnyPlacement, b: &AnyPlacement) -> bool {
    match (a, b) {
        (AnyPlacement::Memento(a), AnyPlacement::Memento(b)) => a == b,
        (AnyPlacement::Anchor(a), AnyPlacement::Anchor(b)) => a == b,
        (AnyPlacement::Dx(a), AnyPlacement::Dx(b)) => a == b,
        _ => false,
    }
}

fn assert_same_owners(a: &AnyPlacement, b: &AnyPlacement, context: &str) {
    for i in 0..KEYS {
        let h = replica_key(i, 0x5EED);
        assert_eq!(owner_name(a, h), owner_name(b, h), "{context}: hash {h}");
    }
}

/// A leave moves only the leaving node's keys, a join only keys to the
/// joining node: checked key by key on `KEYS` keys.
fn assert_only(before: &AnyPlacement, after: &AnyPlacement, node: &str, context: &str) {
    for i in 0..KEYS {
        let h = replica_key(i, 0xD1FF);
        let (old, new) = (owner_name(before, h), owner_name(after, h));
        if old != new {
            assert!(
                old == Some(node) || new == Some(node),
                "{context}: hash {h} moved {old:?} -> {new:?}, not through {node}"
            );
        }
    }
}

/// One random step: a leave of a random node (while two remain) or a join
/// of a new one (while the capacity has room).
fn step(rng: &mut Rng, placement: &AnyPlacement, joined: &mut u32) -> Change {
    let names: Vec<String> = placement.nodes().iter().map(|n| n.name.clone()).collect();
    if names.len() > 1 && rng.below(10) < 6 {
        return Change::Leave(rng.pick(&names).clone());
    }
    *joined += 1;
    Change::Join(format!("new-{joined}"))
}

#[derive(Debug, Clone)]
enum Change {
    Leave(String),
    Join(String),
}

impl Change {
    fn apply(&self, placement: &AnyPlacement) -> Result<AnyPlacement, Error> {
        match self {
            Change::Leave(name) => placement.without_node(name),
            Change::Join(name) => placement.with_node(Node::new(name)),
        }
    }

    fn node(&self) -> &str {
        match self {
            Change::Leave(name) | Change::Join(name) => name,
        }
    }
}

/// Every step applied in memory and, independently, to the snapshot read
/// back from the file written after the previous step: both stay equal.
#[test]
fn a_written_history_of_removals_rebuilds_the_same_snapshot() {
    for algorithm in ALGORITHMS {
        for seed in 0..8u64 {
            let mut rng = Rng(seed * 7919 + 1);
            let n = rng.between(3, 9);
            // A tight capacity sometimes, so joins also meet a full table.
            let capacity = if seed % 3 == 0 { (n + 3) as u32 } else { 0 };
            let names: Vec<Node> = (0..n).map(|i| Node::new(format!("node-{i}"))).collect();
            let mut spec = ClusterSpec::new(algorithm, names).expect("spec");
            spec.params = Params {
                capacity,
                ..spec.params
            };
            let mut live = spec.build().expect("builds").placement().clone();
            let mut filed = live.clone();
            let mut joined = 0;
            let mut removals_seen = false;
            for round in 0..8 {
                let change = step(&mut rng, &live, &mut joined);
                let context = format!("{algorithm} seed {seed} round {round}: {change:?}");
                let (Ok(next_live), next_filed) = (change.apply(&live), change.apply(&filed))
                else {
                    // A join into a full table: the file-built one is full too.
                    assert!(
                        matches!(change.apply(&filed), Err(Error::CapacityFull { .. })),
                        "{context}"
                    );
                    continue;
                };
                let next_filed = next_filed.expect(&context);
                assert_only(&live, &next_live, change.node(), &context);
                // The plan of the step, as `plan` samples it (fewer samples).
                let plan = |a: &AnyPlacement, b: &AnyPlacement| diff_sampled(a, b, 1 << 14);
                assert_eq!(
                    plan(&live, &next_live),
                    plan(&filed, &next_filed),
                    "{context}"
                );
                assert_same_owners(&next_live, &next_filed, &context);
                let (written, rebuilt) = through_file(&spec, &next_filed);
                removals_seen |= !written.removed.is_empty();
                assert!(same_state(&next_live, &rebuilt), "{context}");
                assert_same_owners(&next_live, &rebuilt, &context);
                // The next step starts from the file.
                (spec, live, filed) = (written, next_live, rebuilt);
            }
            assert!(
                removals_seen || seed % 3 == 0,
                "{algorithm} seed {seed}: no holes"
            );
        }
    }
}

/// The worked example of the file format: nodes a, b, c with
/// `removed = [1, 3]` are on buckets 0, 2, 4; a join takes bucket 3 back,
/// the next one bucket 1.
#[test]
fn removed_buckets_keep_their_numbers_and_come_back_last_first() {
    for algorithm in ALGORITHMS {
        let five = ClusterSpec::new(algorithm, ["a", "x", "b", "y", "c"].map(Node::new).into())
            .expect("spec");
        let live = five.build().expect("builds").placement().clone();
        let live = live.without_node("x").and_then(|p| p.without_node("y"));
        let live = live.expect("members");
        let text = format!(
            "algorithm = \"{algorithm}\"\n{}removed = [1, 3]\n\n[[nodes]]\nname = \"a\"\n\n\
             [[nodes]]\nname = \"b\"\n\n[[nodes]]\nname = \"c\"\n",
            if algorithm == Algorithm::Memento {
                ""
            } else {
                "capacity = 256\n"
            }
        );
        let spec = ClusterSpec::from_toml(&text).expect("reads");
        assert_eq!(spec.removed, [1, 3]);
        let built = spec.build().expect("builds").placement().clone();
        assert!(same_state(&live, &built), "{algorithm}");
        assert_eq!(spec.pinned(&built).expect("pinned"), spec, "{algorithm}");
        // The written file says the same.
        let written = spec.to_toml();
        assert!(written.contains("removed = [1, 3]"), "{written}");
        assert!(written.contains("name = \"b\"  # bucket 2"), "{written}");
        // Joins: y's bucket first, then x's: owners as the original five
        // with y, x renamed.
        let y = built.with_node(Node::new("y")).expect("room");
        let both = y.with_node(Node::new("x")).expect("room");
        let original = five.build().expect("builds").placement().clone();
        assert!(same_state(&both, &original), "{algorithm}");
        assert_same_owners(&both, &original, algorithm.name());
    }
}

/// Reading the same nodes without `removed` is another snapshot: the list
/// is what keeps keys in place (a test that the file's field matters).
#[test]
fn the_removed_list_is_what_keeps_keys_in_place() {
    for algorithm in ALGORITHMS {
        let spec =
            ClusterSpec::new(algorithm, ["a", "b", "c", "d"].map(Node::new).into()).expect("spec");
        let live = spec.build().expect("builds").placement().clone();
        let holed = live.without_node("b").expect("member");
        let mut pinned = spec.pinned(&holed).expect("pinned");
        assert_eq!(pinned.removed, [1], "{algorithm}");
        let fingerprint = pinned.fingerprint();
        pinned.removed.clear();
        assert_ne!(pinned.fingerprint(), fingerprint, "{algorithm}");
        let forgetful = pinned.build().expect("builds").placement().clone();
        let moved = (0..KEYS)
            .map(|i| replica_key(i, 3))
            .filter(|&h| owner_name(&holed, h) != owner_name(&forgetful, h))
            .count();
        assert!(moved > 0, "{algorithm}: dropping `removed` moves keys");
    }
}
