//! Published vectors of jump consistent hash (compatibility notes §4).

use ringwise::jump_consistent_hash;

/// `dgryski/go-jump jump_test.go` ("generated from the reference C++ code"):
/// the bucket for n = 1, 2, ... buckets.
const GO_JUMP: [(u64, &[u32]); 4] = [
    (0, &[0; 20]),
    (
        1,
        &[0, 0, 0, 0, 0, 0, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 17, 17],
    ),
    (
        0xdead_beef,
        &[0, 1, 2, 3, 3, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 16, 16, 16],
    ),
    (
        0x0ddc_0ffe_ebad_f00d,
        &[0, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 15, 15, 15, 15],
    ),
];

#[test]
fn go_jump_table() {
    for (key, expected) in GO_JUMP {
        for (i, &bucket) in expected.iter().enumerate() {
            let n = i as u32 + 1;
            assert_eq!(jump_consistent_hash(key, n), bucket, "key {key:#x}, n {n}");
        }
    }
}

/// The notes' computed extras [V].
#[test]
fn computed_extras() {
    assert_eq!(jump_consistent_hash(1, 1000), 549);
    assert_eq!(jump_consistent_hash(2, 1000), 338);
    assert_eq!(jump_consistent_hash(42, 1000), 571);
    assert_eq!(jump_consistent_hash(u64::MAX, 1000), 313);
    assert_eq!(jump_consistent_hash(u64::MAX, (1 << 31) - 1), 699_554_662);
}

/// `google/guava HashingTest`: `consistentHash(1..5, 100)` = 55, 62, 8, 45,
/// 59; the long's two's-complement bits are the key.
#[test]
fn guava_goldens() {
    let got: Vec<u32> = (1..=5).map(|k| jump_consistent_hash(k, 100)).collect();
    assert_eq!(got, [55, 62, 8, 45, 59]);
}

/// The worked step in the doc comment: key 1 moves to bucket 6 at n = 7.
#[test]
fn worked_example_of_the_docs() {
    let key = 1u64.wrapping_mul(2_862_933_555_777_941_757).wrapping_add(1);
    assert_eq!(key, 2_862_933_555_777_941_758);
    assert_eq!(key >> 33, 333_289_331);
    assert_eq!(jump_consistent_hash(1, 6), 0);
    assert_eq!(jump_consistent_hash(1, 7), 6);
}

/// Edge sizes never panic; 0 buckets answers 0 as documented, 1 bucket is 0.
#[test]
fn edge_sizes() {
    for key in [0, 1, u64::MAX, 0x8000_0000_0000_0000] {
        assert_eq!(jump_consistent_hash(key, 0), 0);
        assert_eq!(jump_consistent_hash(key, 1), 0);
        assert!(jump_consistent_hash(key, u32::MAX) < u32::MAX);
    }
}
