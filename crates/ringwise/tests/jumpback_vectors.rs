//! JumpBackHash against Hash4j (`fixtures/jumpback_vectors.csv`, whose
//! provenance `fixtures/constant_vectors.md` states), and the worked example
//! of the module docs.

use ringwise::{JumpBack, Node, Placement, jump_back_hash};

use crate::support::vectors::vectors;

const VECTORS: &str = include_str!("fixtures/jumpback_vectors.csv");

#[test]
fn every_hash4j_vector() {
    let rows = vectors(VECTORS);
    assert_eq!(rows.len(), 4015);
    for (hash, buckets, bucket) in rows {
        assert_eq!(
            jump_back_hash(hash, buckets),
            bucket,
            "hash {hash}, {buckets} buckets"
        );
    }
}

/// Hash 0 at 10 buckets, step by step as the module docs tell it.
#[test]
fn worked_example_of_the_docs() {
    let r0 = 0u64.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let r0 = (r0 ^ (r0 >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let r0 = (r0 ^ (r0 >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    let r0 = r0 ^ (r0 >> 31);
    assert_eq!(r0, 0xe220_a839_7b1d_cdaf);
    let folded = (r0 ^ (r0 >> 32)) as u32;
    assert_eq!(folded, 0x993d_6596);
    assert_eq!(folded & 0b1111, 0b0110);
    assert_eq!(4 + (r0 as u32 & 3), 7);
    assert_eq!(jump_back_hash(0, 10), 7);
}

/// Sizes Hash4j refuses or cannot express answer without panicking, and a
/// snapshot's owner is its bucket's node.
#[test]
fn edge_sizes_and_the_snapshot() {
    for hash in [0, 1, u64::MAX, 1 << 63] {
        assert_eq!(jump_back_hash(hash, 0), 0);
        assert_eq!(jump_back_hash(hash, 1), 0);
        assert!(jump_back_hash(hash, u32::MAX) < u32::MAX);
    }
    let nodes: Vec<Node> = (0..10).map(|i| Node::new(format!("n{i}"))).collect();
    let p = JumpBack::new(nodes).expect("valid");
    for hash in [0, 1, 42, u64::MAX] {
        let b = jump_back_hash(hash, 10) as usize;
        assert_eq!(p.owner(hash), Some(p.buckets()[b]));
    }
}

/// The three stateless bucket snapshots share one generic type but keep
/// their own names: `Debug` and the errors say which algorithm it is.
#[test]
fn the_shared_snapshot_keeps_each_algorithms_name() {
    use ringwise::{Binomial, FlipHash};
    let nodes: Vec<Node> = ["a", "b"].map(Node::new).into();
    let debug = [
        format!("{:?}", JumpBack::new(nodes.clone()).expect("valid")),
        format!("{:?}", Binomial::new(nodes.clone()).expect("valid")),
        format!("{:?}", FlipHash::new(nodes.clone()).expect("valid")),
    ];
    for (text, name) in debug.iter().zip(["JumpBack {", "Binomial {", "FlipHash {"]) {
        assert!(text.starts_with(name), "{text}");
    }
    let weighted = vec![Node::new("a").weight(2.0)];
    let error = Binomial::new(weighted).expect_err("weights are refused");
    assert!(
        error.to_string().starts_with("binomial cannot weigh"),
        "{error}"
    );
    let p = FlipHash::new(nodes).expect("valid");
    let error = p.without_node("a").expect_err("only the last leaves");
    assert!(
        error.to_string().starts_with("fliphash cannot remove"),
        "{error}"
    );
}
