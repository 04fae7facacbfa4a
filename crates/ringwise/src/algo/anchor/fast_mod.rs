//! Exact remainders by multiplication, for AnchorHash's first
//! `mod capacity` (a division costs more than the rest of a lookup step).

/// `a mod d` for any 32-bit `a` and `d >= 1`, exactly, given
/// `magic = ⌈2^64 / d⌉` (Lemire, Kaser, Kurz, "Faster remainder by direct
/// computation", 2019): the low 64 bits of `magic · a` are the fraction
/// `a / d` in 64-bit fixed point, and times `d` its integer part is the
/// remainder. Example, d = 3, a = 7: magic = 6148914691236517206, the
/// fraction is 0.333... · 2^64 (7/3 = 2 + 1/3), times 3 → 1.
#[inline]
pub(super) fn fast_mod(a: u32, d: u32, magic: u64) -> u32 {
    let fraction = magic.wrapping_mul(u64::from(a));
    ((u128::from(fraction) * u128::from(d)) >> 64) as u32
}

/// `⌈2^64 / d⌉` (`u64::MAX / d + 1`), for [`fast_mod`]; d = 1 wraps to 0,
/// which still gives remainder 0.
pub(super) fn magic(d: u32) -> u64 {
    (u64::MAX / u64::from(d.max(1))).wrapping_add(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_mod_is_exact() {
        let mut x = 0x9E37_79B9u32;
        for d in [1u32, 2, 3, 7, 13, 1000, 65_537, 4_194_304, u32::MAX] {
            let m = magic(d);
            for a in [0, 1, d - 1, d, u32::MAX, u32::MAX - 1] {
                assert_eq!(fast_mod(a, d, m), a % d, "{a} mod {d}");
            }
            for _ in 0..10_000 {
                x = x.wrapping_mul(0x0019_660D).wrapping_add(0x3C6E_F35F);
                assert_eq!(fast_mod(x, d, m), x % d, "{x} mod {d}");
            }
        }
    }
}
