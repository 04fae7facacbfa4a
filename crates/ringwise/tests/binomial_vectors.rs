//! BinomialHash against the authors' Java engine
//! (`fixtures/binomial_vectors.csv`, whose provenance
//! `fixtures/constant_vectors.md` states), and the worked example of the
//! module docs.

use ringwise::{Binomial, Node, Placement, binomial_hash};

use crate::support::vectors::vectors;

const VECTORS: &str = include_str!("fixtures/binomial_vectors.csv");

#[test]
fn every_reference_vector() {
    let rows = vectors(VECTORS);
    assert_eq!(rows.len(), 4015);
    for (hash, buckets, bucket) in rows {
        assert_eq!(
            binomial_hash(hash, buckets),
            bucket,
            "hash {hash}, {buckets} buckets"
        );
    }
}

/// The docs' rehash, written out again to check their numbers.
fn rehash(value: u64, seed: u64) -> u64 {
    let h = 2_862_933_555_777_941_757u64
        .wrapping_mul(value)
        .wrapping_add(1);
    h.wrapping_mul(h).wrapping_mul(seed) >> 32
}

/// Hashes 7 and 6 at 5 buckets, step by step as the module docs tell it.
#[test]
fn worked_example_of_the_docs() {
    assert_eq!(rehash(7, 3), 0xa22e_1883);
    assert_eq!(4 + (rehash(7, 3) & 3), 7);
    let h1 = rehash(7, 7);
    assert_eq!((h1, h1 & 7), (0xcfc0_e3dc, 4));
    assert_eq!(rehash(h1, 3), 0x417f_ab9f);
    let h2 = rehash(h1, 7);
    assert_eq!((h2, h2 & 7), (0x437f_3b1f, 7));
    assert_eq!(rehash(h2, 3), 0xe210_96f4);
    assert_eq!(binomial_hash(7, 5), 4);
    let h2 = rehash(rehash(6, 7), 7);
    assert_eq!(h2 & 7, 1);
    assert_eq!(rehash(6, 1), 0xf3aa_370e);
    assert_eq!(binomial_hash(6, 5), 2);
}

/// Sizes beyond Java's int answer without panicking, and a snapshot's owner
/// is its bucket's node.
#[test]
fn edge_sizes_and_the_snapshot() {
    for hash in [0, 1, u64::MAX, 1 << 63] {
        assert_eq!(binomial_hash(hash, 0), 0);
        assert_eq!(binomial_hash(hash, 1), 0);
        assert!(binomial_hash(hash, u32::MAX) < u32::MAX);
        assert!(binomial_hash(hash, (1 << 31) + 1) < (1 << 31) + 1);
    }
    let nodes: Vec<Node> = (0..10).map(|i| Node::new(format!("n{i}"))).collect();
    let p = Binomial::new(nodes).expect("valid");
    for hash in [0, 1, 42, u64::MAX] {
        let b = binomial_hash(hash, 10) as usize;
        assert_eq!(p.owner(hash), Some(p.buckets()[b]));
    }
}
