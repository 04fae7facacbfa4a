//! `FlipHash`: FlipHash over buckets in join order.
//!
//! Paper: Charles Masson, Homin K. Lee, "FlipHash: A Constant-Time
//! Consistent Range-Hashing Algorithm", arXiv:2402.17549 (2024). Bit for
//! bit the authors' Rust crate `fliphash` 0.1.0 (DataDog): bucket
//! `fliphash_64(hash, ..=n - 1)`, the key hash as its `u64` key and seed 0
//! (`tests/fliphash_vectors.rs` compares the two over random keys and
//! sizes).
//!
//! How it works: for a power of two `2^r` buckets, a key's bucket is
//! `hash & (2^r - 1)` with every bit below its top bit *flipped* by a
//! second hash that depends on the key and on that top bit only. Growing
//! from `2^k` to `2^(k+1)` buckets, a key keeps its bucket or moves to the
//! new half (one more bit of the hash), and within the new half the flips
//! scatter the keys uniformly: a consistent, regular hash for powers of
//! two. For `n` between `2^(r-1)` and `2^r`, take the answer for `2^r`; if
//! it is below `n`, done. Otherwise draw fresh hashes of the key (indexed
//! by the draw and `r`) into `[0, 2^r)`: the first that lands in the upper
//! half below `n` is the answer, one in the lower half ends the search with
//! the answer for `2^(r-1)`. Each draw succeeds or ends with probability at
//! least 1/2.
//!
//! The hash of (key, level `l`, draw `i`) is a variant of Pelle Evensen's
//! moremur mixer with two odd multipliers folded in: `k = key·(2l + 1)`,
//! `k = (k ^ k >> 27)·0x3C79AC492BA7B653`, `k = k·(2i + 1)`, `k = (k ^ k >>
//! 33)·0x1C69B3F74AC4AE35`, answer `k ^ k >> 27` (all wrapping). Worked
//! example, 10 buckets (`2^r = 16`, draws at level `ilog2(9) = 3`):
//! hash 1: `mix(1, 0, 0) = 0x3c02aa47758292bd`, `& 15 = 13 = 0b1101`, top
//! bit at level 3; the flip `mix(1, 3, 0) & 0b111 = 6` gives `13 ^ 6 =
//! 11`, the bucket for 16 buckets. `11 > 9`: draw 1, `mix(1, 3, 1) & 15 =
//! 14`, is in the upper half but not below 10; draw 2 gives 9: bucket 9.
//! Hash 4: `mix(4, 0, 0) & 15 = 11`, flipped by `1` to 10, not below 10;
//! draw 1 gives 12, draw 2 gives 3, in the lower half: the answer is the
//! one for 8 buckets, `mix(4, 0, 0) & 7 = 3` with its bit below the top
//! flipped by `mix(4, 1, 0) & 1 = 0`: bucket 3. Hash 0 mixes to 0 at every
//! step, so it is in bucket 0 for every size.
//!
//! Cost: O(1) expected per lookup (fewer than two draws on average), at
//! most 64 draws (then the `2^(r-1)` answer, as the crate); integer
//! arithmetic only; 4 bytes per node.
//!
//! Quirks: as [`crate::Jump`]: placement follows join order, only the last
//! node can leave, no weights. Replicas are jump's draw order with this
//! bucket function ([`crate::Jump`]'s module docs).

use crate::algo::bucket_fn::{BucketFn, Buckets};

/// Draws before falling back to the lower power of two (the crate's 64).
const MAX_DRAWS: u32 = 64;

/// The hash of `key` for level `level` and draw `draw` (module docs).
#[inline]
fn mix(key: u64, level: u32, draw: u32) -> u64 {
    let mut k = key.wrapping_mul(u64::from(level) * 2 + 1);
    k = (k ^ (k >> 27)).wrapping_mul(0x3C79_AC49_2BA7_B653);
    k = k.wrapping_mul(u64::from(draw) * 2 + 1);
    k = (k ^ (k >> 33)).wrapping_mul(0x1C69_B3F7_4AC4_AE35);
    k ^ (k >> 27)
}

/// The bucket of `key` among the `mask + 1` (a power of two) buckets:
/// `first & mask` with the bits below its top bit flipped.
#[inline]
fn power_of_two(key: u64, first: u64, mask: u64) -> u64 {
    let masked = first & mask;
    if masked == 0 {
        return 0;
    }
    let below_top = u64::MAX >> masked.leading_zeros() >> 1;
    masked ^ (mix(key, masked.ilog2(), 0) & below_top)
}

/// The bucket in `0..buckets` of `hash`, bit for bit as the `fliphash`
/// crate's `fliphash_64(hash, ..=buckets - 1)`. `buckets <= 1` answers 0
/// and never panics.
#[inline]
pub fn flip_hash(hash: u64, buckets: u32) -> u32 {
    if buckets <= 1 {
        return 0;
    }
    let last = u64::from(buckets - 1);
    let mask = u64::MAX >> last.leading_zeros();
    let first = mix(hash, 0, 0);
    let bucket = power_of_two(hash, first, mask);
    if bucket <= last {
        return bucket as u32;
    }
    let level = last.ilog2();
    for draw in 1..=MAX_DRAWS {
        let candidate = mix(hash, level, draw) & mask;
        if candidate <= mask >> 1 {
            break;
        }
        if candidate <= last {
            return candidate as u32;
        }
    }
    power_of_two(hash, first, mask >> 1) as u32
}

/// FlipHash over nodes in join order. Immutable; membership changes return
/// new snapshots.
///
/// `new`, `bucket`, `buckets` and the [`Placement`](crate::Placement)
/// methods are those of one generic snapshot (`algo/bucket_fn.rs`) shared
/// with [`crate::JumpBack`] and [`crate::Binomial`], answering with [`flip_hash`].
pub type FlipHash = Buckets<FlipHashFn>;

/// [`flip_hash`] as the bucket function of [`FlipHash`], named `"fliphash"` in the
/// registry.
#[derive(Debug)]
pub enum FlipHashFn {}

impl BucketFn for FlipHashFn {
    const NAME: &'static str = "fliphash";
    const TYPE_NAME: &'static str = "FlipHash";

    #[inline]
    fn bucket(hash: u64, buckets: u32) -> u32 {
        flip_hash(hash, buckets)
    }
}
