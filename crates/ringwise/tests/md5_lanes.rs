//! The eight-lane MD5 (`md5_x8`, `md5_prefix_x8`, `md5_prefix_batch`)
//! against the `md-5` crate, one message at a time.
//!
//! Lengths 0..=300 (four 64-byte blocks and more, every padding boundary:
//! 55/56 bytes change the block count, 63/64 put the 0x80 byte in the next
//! block), each in every lane, and batches that mix lengths (the finished
//! lanes' masking) with random bytes from a fixed-seed generator.

use md5::{Digest, Md5};
use proptest::prelude::*;
use ringwise::{
    KeyHasher, MD5_LANES, StableHash, md5_blocks, md5_prefix_batch, md5_prefix_x8, md5_x8,
};

/// The crate's digest as the four little-endian state words.
fn words(message: &[u8]) -> [u32; 4] {
    let d = Md5::digest(message);
    [0, 1, 2, 3].map(|w| u32::from_le_bytes([d[4 * w], d[4 * w + 1], d[4 * w + 2], d[4 * w + 3]]))
}

/// SplitMix64: reproducible bytes without a dependency.
fn random_bytes(seed: &mut u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|_| {
            *seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = *seed;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) as u8
        })
        .collect()
}

fn check(messages: &[Vec<u8>; MD5_LANES]) {
    let refs: [&[u8]; MD5_LANES] = [0, 1, 2, 3, 4, 5, 6, 7].map(|l| messages[l].as_slice());
    let got = md5_x8(refs);
    let points = md5_prefix_x8(refs);
    for lane in 0..MD5_LANES {
        let len = messages[lane].len();
        assert_eq!(
            got[lane],
            words(&messages[lane]),
            "lane {lane}, {len} bytes"
        );
        assert_eq!(
            points[lane],
            StableHash::Md5.hash(&messages[lane]),
            "lane {lane}, {len} bytes"
        );
    }
}

#[test]
fn every_length_in_every_lane_equals_md5() {
    let mut seed = 1;
    for len in 0..=300 {
        for lane in 0..MD5_LANES {
            // The other lanes are empty: the longest lane decides the blocks.
            let mut messages: [Vec<u8>; MD5_LANES] = Default::default();
            messages[lane] = random_bytes(&mut seed, len);
            check(&messages);
        }
        // All eight of the same length, different bytes.
        check(&[0; MD5_LANES].map(|_| random_bytes(&mut seed, len)));
    }
}

#[test]
fn mixed_lengths_in_one_batch_equal_md5() {
    let mut seed = 7;
    for round in 0..2000 {
        let lengths: [usize; MD5_LANES] = [0; MD5_LANES].map(|_| {
            let r = random_bytes(&mut seed, 2);
            // Mostly short keys, sometimes several blocks.
            match round % 3 {
                0 => usize::from(r[0]) % 70,
                1 => usize::from(u16::from_le_bytes([r[0], r[1]])) % 400,
                _ => 50 + usize::from(r[0]) % 20,
            }
        });
        check(&lengths.map(|len| random_bytes(&mut seed, len)));
    }
}

#[test]
fn known_digests() {
    let [a, b, c, ..] = md5_prefix_x8([b"", b"abc", b"user:42", b"", b"", b"", b"", b""]);
    assert_eq!(a, 0xd41d_8cd9_8f00_b204);
    assert_eq!(b, 0x9001_5098_3cd2_4fb0);
    assert_eq!(c, 6_258_559_928_114_592_308);
}

#[test]
fn blocks_follow_the_padding_rule() {
    assert_eq!(md5_blocks(0), 1);
    assert_eq!(md5_blocks(55), 1);
    assert_eq!(md5_blocks(56), 2);
    assert_eq!(md5_blocks(119), 2);
    assert_eq!(md5_blocks(120), 3);
}

#[test]
fn batch_of_any_count_equals_one_by_one() {
    for count in [0usize, 1, 7, 8, 9, 17, 100] {
        let mut out = vec![0u64; count];
        md5_prefix_batch(&mut out, |i, buf| {
            buf.extend_from_slice(format!("user:{i}").as_bytes());
        });
        for (i, &h) in out.iter().enumerate() {
            assert_eq!(
                h,
                StableHash::Md5.hash(format!("user:{i}").as_bytes()),
                "{count}: {i}"
            );
        }
    }
}

proptest! {
    #[test]
    fn random_batches_equal_md5(messages in proptest::array::uniform8(proptest::collection::vec(any::<u8>(), 0..260))) {
        check(&messages);
    }
}
