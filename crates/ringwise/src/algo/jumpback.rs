//! `JumpBack`: JumpBackHash over buckets in join order.
//!
//! Paper: Otmar Ertl, "JumpBackHash: Say Goodbye to the Modulo Operation to
//! Distribute Keys Uniformly to Buckets", arXiv:2403.18682 (2024; Software:
//! Practice and Experience 55.3, 2025). Bit for bit Hash4j's
//! `ConsistentHashing.jumpBackHash(PseudoRandomGeneratorProvider.splitMix64_V1())`
//! (and its equal `jumpBackHashSplitMix64()`): the key hash seeds Hash4j's
//! SplitMix64 generator, and the answer for `n` buckets is the same `int`.
//!
//! How it works: think of jump hash's jumps, the bucket counts at which a
//! key moves to the newest bucket. Jump hash walks them forwards from
//! bucket 0, O(ln n) steps; JumpBackHash walks them *backwards* from `n`.
//! Split the buckets into levels `[2^k, 2^(k+1))`. A level holds at least
//! one of a key's jumps with probability exactly 1/2, and its last one is
//! uniform within the level (for jump at `b`, probability `1/(b+1)`, times
//! `(b+1)/2^(k+1)` for no later one in the level, is `1/2^(k+1)` for every
//! `b`). So one random 64-bit value decides every level at once: bit `k`
//! of its two halves xored says whether level `k` holds a jump, and the
//! low bits of one half place the last one. The answer is the largest jump below `n`: take the highest level
//! with a jump that is not above `n - 1`'s; if its last jump is below `n`,
//! that is the bucket. Otherwise (it lies in `n..`, only
//! possible in `n - 1`'s own level) the earlier jumps of that level are
//! drawn, going back, from further random words until one falls below `n`
//! or below the level (then the next lower level with a jump decides). No
//! division, no float: masks, bit counts and shifts.
//!
//! Worked example, hash 0 and 10 buckets: the generator's first output is
//! `r0 = 0xe220a8397b1dcdaf`; its halves folded, `0xe220a839 ^ 0x7b1dcdaf =
//! 0x993d6596`, masked to the 4 bits of `n - 1 = 9` give `x = 0b0110`: the
//! levels `[4, 8)` and `[2, 4)` hold jumps. The highest is `[4, 8)`; `x` has
//! two bits set, an even count, so its jump is `4 + (low half of r0 & 3) =
//! 4 + (0x7b1dcdaf & 3) = 7`. `7 < 10`: bucket 7. (An odd count takes the
//! high half: Hash4j shifts `r0` by `bitCount(x) << 5`, and Java reduces a
//! long's shift modulo 64, so 32 for odd counts and 0 for even ones.)
//!
//! Cost: O(1) expected per lookup (the paper proves the expected number of
//! generator outputs bounded independently of `n`), integer arithmetic
//! only; 4 bytes per node.
//!
//! Quirks: as [`crate::Jump`]: placement follows join order, only the last
//! node can leave ([`crate::Memento`] removes any), no weights. Replicas are
//! jump's draw order (see [`crate::Jump`]'s module docs) with this bucket
//! function: draw `a >= 1` asks for the bucket of [`crate::replica_key`]`(hash,
//! a)`, repeats are skipped, then the buckets after the owner's in order.
//! Hash4j answers `numBuckets` up to `2^31 - 1`; [`jump_back_hash`] takes
//! any `u32` and agrees wherever both are defined.

use crate::algo::bucket_fn::{BucketFn, Buckets};

/// SplitMix64's increment (the golden gamma).
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output function of a state (Steele, Lea & Flood 2014).
#[inline]
fn splitmix_output(state: u64) -> u64 {
    let z = (state ^ (state >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The bucket in `0..buckets` of `hash`, bit for bit as Hash4j's
/// `jumpBackHash` with SplitMix64 (module docs; the long's bits are the
/// hash). `buckets <= 1` answers 0 and never panics.
#[inline]
pub fn jump_back_hash(hash: u64, buckets: u32) -> u32 {
    if buckets <= 1 {
        return 0;
    }
    let mut state = hash.wrapping_add(GAMMA);
    let r0 = splitmix_output(state);
    // One bit per level [2^k, 2^(k+1)) up to n - 1's: does it hold a jump?
    let mut levels = ((r0 ^ (r0 >> 32)) as u32) & (u32::MAX >> (buckets - 1).leading_zeros());
    while levels != 0 {
        let low = 1u32 << (31 - levels.leading_zeros());
        // The level's last jump, from the half of r0 the parity names.
        let half = if levels.count_ones() % 2 == 1 {
            (r0 >> 32) as u32
        } else {
            r0 as u32
        };
        let jump = low + (half & (low - 1));
        if jump < buckets {
            return jump;
        }
        // Past n: draw the level's earlier jumps, two 32-bit words per
        // output, until one is below n (the answer) or below the level.
        let mask = (low << 1).wrapping_sub(1);
        'back: loop {
            state = state.wrapping_add(GAMMA);
            let r = splitmix_output(state);
            for word in [r as u32, (r >> 32) as u32] {
                let earlier = word & mask;
                if earlier < low {
                    break 'back;
                }
                if earlier < buckets {
                    return earlier;
                }
            }
        }
        levels ^= low;
    }
    0
}

/// JumpBackHash over nodes in join order. Immutable; membership changes
/// return new snapshots.
///
/// `new`, `bucket`, `buckets` and the [`Placement`](crate::Placement)
/// methods are those of one generic snapshot (`algo/bucket_fn.rs`) shared
/// with [`crate::Binomial`] and [`crate::FlipHash`], answering with [`jump_back_hash`].
pub type JumpBack = Buckets<JumpBackFn>;

/// [`jump_back_hash`] as the bucket function of [`JumpBack`], named `"jumpback"` in the
/// registry.
#[derive(Debug)]
pub enum JumpBackFn {}

impl BucketFn for JumpBackFn {
    const NAME: &'static str = "jumpback";
    const TYPE_NAME: &'static str = "JumpBack";

    #[inline]
    fn bucket(hash: u64, buckets: u32) -> u32 {
        jump_back_hash(hash, buckets)
    }
}
