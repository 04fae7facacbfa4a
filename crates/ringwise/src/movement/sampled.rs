//! Sampled movement: any two placements, by looking the same hashes up in
//! both.
//!
//! The hashes are SplitMix64's outputs from a fixed seed, so a run is
//! repeatable, resolved a block at a time through the batch path
//! ([`Placement::owners_into`]). The moved fraction `p̂ = moved / n` comes
//! with the 95 % Wilson score interval
//! `(p̂ + z²/2n ± z·sqrt(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n)`, `z = 1.96`,
//! which stays inside `[0, 1]` and is honest near 0 (a join of 1 node to
//! 100 moves about 1 %). With the default 1,048,576 samples and `p̂ = 1/11`
//! the interval is about ±0.055 percentage points.
//!
//! Cost: O(samples × lookup): rendezvous over N nodes O(samples · N),
//! multiprobe O(samples · k log N), jump O(samples · ln N).

use std::collections::BTreeMap;

use super::report::{Method, Movement, Names};
use crate::placement::Placement;

/// Hashes [`crate::diff`] samples when it cannot be exact: 2^20.
pub const DEFAULT_SAMPLES: u64 = 1 << 20;

/// Hashes resolved per batch call.
const BLOCK: usize = 4096;

pub(super) fn diff<P: Placement + ?Sized, Q: Placement + ?Sized>(
    old: &P,
    new: &Q,
    samples: u64,
    names: Names,
) -> Movement {
    let mut flows: BTreeMap<(u32, u32), u128> = BTreeMap::new();
    let (mut hashes, mut a, mut b) = (Vec::with_capacity(BLOCK), Vec::new(), Vec::new());
    let mut state = 0x005E_ED0F_D1FF_u64;
    let mut left = samples;
    while left > 0 {
        let block = left.min(BLOCK as u64);
        left -= block;
        hashes.clear();
        hashes.extend((0..block).map(|_| splitmix64(&mut state)));
        old.owners_into(&hashes, &mut a);
        new.owners_into(&hashes, &mut b);
        // An empty snapshot answers nothing: nothing moves.
        for (&x, &y) in a.iter().zip(&b) {
            let (from, to) = (names.old(x), names.new_index(y));
            if from != to {
                *flows.entry((from, to)).or_default() += 1;
            }
        }
    }
    let moved: u128 = flows.values().sum();
    let (low, high) = wilson(moved as f64, samples as f64);
    let method = Method::Sampled { samples, low, high };
    names.finish(method, Vec::new(), flows, samples.max(1) as f64)
}

/// The 95 % Wilson score interval of `hits` out of `n`.
fn wilson(hits: f64, n: f64) -> (f64, f64) {
    if n == 0.0 {
        return (0.0, 1.0);
    }
    const Z: f64 = 1.959_963_984_540_054;
    let p = hits / n;
    let z2 = Z * Z;
    let centre = p + z2 / (2.0 * n);
    let spread = Z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    let scale = 1.0 + z2 / n;
    // At 0 or n hits the bound is 0 or 1 exactly (rounding would leave
    // 1e-19 and exclude the estimate itself).
    let low = if hits == 0.0 {
        0.0
    } else {
        ((centre - spread) / scale).max(0.0)
    };
    let high = if hits == n {
        1.0
    } else {
        ((centre + spread) / scale).min(1.0)
    };
    (low, high)
}

/// SplitMix64 (Steele, Lea, Flood 2014): the sample hashes.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::wilson;

    #[test]
    fn wilson_interval_contains_the_estimate_and_narrows() {
        let (low, high) = wilson(95_325.0, 1_048_576.0);
        let p = 95_325.0 / 1_048_576.0;
        assert!(low < p && p < high);
        assert!(high - low < 0.0012, "{low}..{high}");
        let (low, high) = wilson(0.0, 1000.0);
        assert_eq!(low, 0.0);
        assert!(high > 0.0 && high < 0.004);
    }
}
