//! `Binomial`: BinomialHash over buckets in join order.
//!
//! Paper: Massimo Coluzzi, Amos Brocco, Alessandro Antonucci, "BinomialHash:
//! A Constant Time, Minimal Memory Consistent Hash Algorithm",
//! arXiv:2406.19836 (2024). Bit for bit the authors' `BinomialEngine`
//! (`SUPSI-DTI-ISIN/java-consistent-hashing-algorithms`) given the key's
//! 64-bit hash: the engine hashes the key string itself, and its
//! `getBucket` reads only that `long` and the cluster size.
//!
//! How it works: buckets are the nodes of a binary tree read level by
//! level, level `k` holding buckets `[2^k, 2^(k+1))` (level 0 holds buckets
//! 0 and 1). The *enclosing tree* is the smallest full tree with room for
//! `n` buckets (`E + 1` of them, `E = 2^⌈log2 n⌉ - 1`), the *minor tree* the
//! one a level smaller (`m = E >> 1`), always full. A key takes `hash & E`,
//! then is moved to a pseudo-random place of the same level (`relocate`:
//! levels fill in a scattered order, so growing one level spreads keys over
//! it evenly). Below `n`, that is the answer. Otherwise up to four rehashes
//! of the hash try again in the enclosing tree; the first that lands in the
//! minor tree, or after four misses, sends the key to its place in the
//! minor tree, `relocate(hash & m)`, which always exists. A bucket that
//! joins takes keys only from the last level's retries and fallbacks, so
//! keys move only to it (and back on leave).
//!
//! The rehash is an LCG step squared and scaled: `h = a·v + 1` (wrapping,
//! `a = 2862933555777941757`, jump hash's multiplier), then
//! `(h·h·seed) >> 32`, the seed being the filter (`2^k - 1`) of the level
//! it serves; it returns 32 bits. Worked example, 5 buckets (`E = 7`,
//! `m = 3`), hash 7: `7 & 7 = 7` lies in level `[4, 8)`; relocating it,
//! `rehash(7, 3) = 0xa22e1883` gives `4 + (0x...83 & 3) = 7`, not below 5.
//! Retry 1: `h = rehash(7, 7) = 0xcfc0e3dc`, `h & 7 = 4`, relocated by
//! `rehash(h, 3) = 0x417fab9f` to `4 + 3 = 7`: above the minor tree but not
//! below 5, so retry. Retry 2: `h = rehash(0xcfc0e3dc, 7) = 0x437f3b1f`,
//! `h & 7 = 7`, relocated by `rehash(h, 3) = 0xe21096f4` to `4 + 0 = 4`:
//! bucket 4. Hash 6 instead: its retry 2 gives `h & 7 = 1`, in the minor
//! tree, so the fallback answers `relocate(6 & 3 = 2) = 2 + (rehash(6, 1) &
//! 1) = 2 + (0xf3aa370e & 1) = 2`.
//! (`binomial_vectors::worked_example_of_the_docs` checks these numbers.)
//!
//! Cost: O(1) worst case: at most six candidates (the first, four retries,
//! the fallback) and ten rehashes per lookup, integer arithmetic only; 4
//! bytes per node.
//!
//! Quirks: as [`crate::Jump`]: placement follows join order, only the last
//! node can leave, no weights. Balance is not exact: a key whose tries all
//! miss falls back to the minor tree, so the buckets of a partly filled top
//! level get a little less than their share. At 17 buckets (one in the top
//! level) bucket 16 gets 0.975 of the mean and the others about 1.0015
//! (1,000,000 random hashes; `ringwise simulate` on 10,000,000 keys:
//! peak/mean 1.008, least/mean 0.977, README table). The authors' engine keeps a tree one level larger after growing
//! to a power of two by `addBucket` than a fresh engine of that size, but
//! both answer alike (that tree's top level is empty, so every key falls
//! back to the same minor tree); ringwise computes the trees from `n`, as
//! a fresh engine does. Replicas are jump's draw order with this bucket
//! function ([`crate::Jump`]'s module docs).

use crate::algo::bucket_fn::{BucketFn, Buckets};

/// The LCG multiplier of the rehash (jump hash's).
const LCG_MULTIPLIER: u64 = 2_862_933_555_777_941_757;

/// Rehashes before falling back to the minor tree (the reference's 4).
const RETRIES: usize = 4;

/// `value` rehashed for a level of filter `seed` (module docs).
#[inline]
fn rehash(value: u64, seed: u32) -> u64 {
    let h = LCG_MULTIPLIER.wrapping_mul(value).wrapping_add(1);
    h.wrapping_mul(h).wrapping_mul(u64::from(seed)) >> 32
}

/// `bucket` moved to a pseudo-random place of its own level.
#[inline]
fn relocate(bucket: u32, hash: u64) -> u32 {
    if bucket < 2 {
        return bucket;
    }
    let base = 1u32 << (31 - bucket.leading_zeros());
    let filter = base - 1;
    base + (rehash(hash, filter) as u32 & filter)
}

/// The bucket in `0..buckets` of `hash`, bit for bit as the authors'
/// `BinomialEngine.getBucket` on a key whose hash is `hash`. `buckets <= 1`
/// answers 0 and never panics.
#[inline]
pub fn binomial_hash(hash: u64, buckets: u32) -> u32 {
    if buckets < 2 {
        return 0;
    }
    let enclosing = u32::MAX >> (buckets - 1).leading_zeros();
    let minor = enclosing >> 1;
    let first = relocate(hash as u32 & enclosing, hash);
    if first < buckets {
        return first;
    }
    let mut h = hash;
    for _ in 0..RETRIES {
        h = rehash(h, enclosing);
        let b = relocate(h as u32 & enclosing, h);
        if b <= minor {
            break;
        }
        if b < buckets {
            return b;
        }
    }
    relocate(hash as u32 & minor, hash)
}

/// BinomialHash over nodes in join order. Immutable; membership changes
/// return new snapshots.
///
/// `new`, `bucket`, `buckets` and the [`Placement`](crate::Placement)
/// methods are those of one generic snapshot (`algo/bucket_fn.rs`) shared
/// with [`crate::JumpBack`] and [`crate::FlipHash`], answering with [`binomial_hash`].
pub type Binomial = Buckets<BinomialFn>;

/// [`binomial_hash`] as the bucket function of [`Binomial`], named `"binomial"` in the
/// registry.
#[derive(Debug)]
pub enum BinomialFn {}

impl BucketFn for BinomialFn {
    const NAME: &'static str = "binomial";
    const TYPE_NAME: &'static str = "Binomial";

    #[inline]
    fn bucket(hash: u64, buckets: u32) -> u32 {
        binomial_hash(hash, buckets)
    }
}
