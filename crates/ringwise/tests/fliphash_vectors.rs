//! FlipHash against the authors' own crate, `fliphash` 0.1.0 (DataDog), a
//! dev-dependency: ringwise's bucket for `n` buckets is the crate's
//! `fliphash_64(hash, ..=n - 1)`, over random hashes and sizes of every
//! magnitude and over fixed cases.

use proptest::prelude::*;
use ringwise::{FlipHash, Node, Placement, flip_hash};

fn theirs(hash: u64, buckets: u32) -> u32 {
    fliphash::fliphash_64(hash, ..=u64::from(buckets) - 1) as u32
}

/// Bucket counts of every magnitude: `1 + (r >> s)` for s in 0..32.
fn buckets() -> impl Strategy<Value = u32> {
    (any::<u32>(), 0u32..32).prop_map(|(r, s)| (r >> s).max(1))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn equals_the_crate(hash in any::<u64>(), buckets in buckets()) {
        prop_assert_eq!(flip_hash(hash, buckets), theirs(hash, buckets));
    }
}

/// Every size from 1 to 300 and around each power of two, for edge hashes
/// and a spread of others: the draws past the power of two, the fallback
/// and key 0 are all reached.
#[test]
fn fixed_cases_equal_the_crate() {
    let mut hashes = vec![0, 1, 2, 42, 0xdead_beef, u64::MAX, 1 << 63, u64::MAX >> 1];
    hashes.extend((0..200u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
    let powers = (1..32).flat_map(|p| [(1u32 << p) - 1, 1 << p, (1 << p) + 1]);
    let sizes: Vec<u32> = (1..=300)
        .chain(powers)
        .chain([1000, 1_000_000, u32::MAX])
        .collect();
    for &hash in &hashes {
        for &n in &sizes {
            assert_eq!(
                flip_hash(hash, n),
                theirs(hash, n),
                "hash {hash}, {n} buckets"
            );
        }
    }
}

/// The module docs' worked example: hashes 1 and 4 at 10 buckets, by way
/// of their answers for 16 and 8 buckets.
#[test]
fn worked_example_of_the_docs() {
    assert_eq!(flip_hash(1, 16), 11);
    assert_eq!(flip_hash(1, 10), 9);
    assert_eq!(flip_hash(4, 16), 10);
    assert_eq!(flip_hash(4, 8), 3);
    assert_eq!(flip_hash(4, 10), 3);
    for n in [1, 2, 10, 1000, u32::MAX] {
        assert_eq!(flip_hash(0, n), 0);
    }
}

/// A snapshot's owner is its bucket's node; 0 buckets answers 0 (the crate
/// has no empty range), without panicking.
#[test]
fn the_snapshot_follows_the_function() {
    assert_eq!(flip_hash(7, 0), 0);
    let nodes: Vec<Node> = (0..10).map(|i| Node::new(format!("n{i}"))).collect();
    let p = FlipHash::new(nodes).expect("valid");
    for hash in [0, 1, 42, u64::MAX] {
        let b = flip_hash(hash, 10) as usize;
        assert_eq!(p.owner(hash), Some(p.buckets()[b]));
    }
}
