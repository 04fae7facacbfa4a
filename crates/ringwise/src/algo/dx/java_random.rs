//! `java.util.Random`'s generator, bit for bit: the 48-bit LCG of Knuth
//! (TAOCP 3.2.1) behind `new Random(seed)` and `nextInt(bound)`, as the
//! SUPSI reference of DxHash draws its buckets with it.

/// The LCG's multiplier and increment, and its 48-bit state mask.
const MULTIPLIER: u64 = 0x5_DEEC_E66D;
const ADDEND: u64 = 0xB;
const MASK: u64 = (1 << 48) - 1;

/// `new Random(seed)`, then `nextInt(bound)` draws.
#[derive(Debug, Clone, Copy)]
pub(crate) struct JavaRandom {
    state: u64,
}

impl JavaRandom {
    /// `new Random(seed)`: the seed's low 48 bits, scrambled.
    #[inline]
    pub(crate) fn new(seed: u64) -> Self {
        JavaRandom {
            state: (seed ^ MULTIPLIER) & MASK,
        }
    }

    /// `next(31)`: the top 31 of the 48 state bits after one step.
    #[inline]
    fn next31(&mut self) -> i32 {
        self.state = self.state.wrapping_mul(MULTIPLIER).wrapping_add(ADDEND) & MASK;
        (self.state >> 17) as i32
    }

    /// `nextInt(bound)` for `bound >= 1`: a power of two takes the top bits
    /// (`bound · r >> 31`); any other bound rejects the draws of the last,
    /// incomplete multiple of `bound` below 2^31 — Java finds them by an
    /// `int` overflow, `u - u % bound + (bound - 1) < 0`, kept here. Example,
    /// bound 3: `u = 2^31 - 1` gives `u - 1 + 2 = 2^31`, which wraps below 0:
    /// rejected.
    #[inline]
    pub(crate) fn next_int(&mut self, bound: u32) -> u32 {
        let bound = bound as i32;
        let r = self.next31();
        let m = bound.wrapping_sub(1);
        if bound & m == 0 {
            return ((i64::from(bound) * i64::from(r)) >> 31) as u32;
        }
        let mut u = r;
        loop {
            let r = u % bound;
            if u.wrapping_sub(r).wrapping_add(m) >= 0 {
                return r as u32;
            }
            u = self.next31();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// OpenJDK 17's answers: `new Random(42)` draws `nextInt(10)` = 0, 3,
    /// 8; a fresh `new Random(42).nextInt(16)` = 11, `new
    /// Random(-1).nextInt(1000)` = 913, `new Random(Long.MIN_VALUE).nextInt(7)` = 5.
    #[test]
    fn matches_the_jdk() {
        let mut r = JavaRandom::new(42);
        assert_eq!([r.next_int(10), r.next_int(10), r.next_int(10)], [0, 3, 8]);
        assert_eq!(JavaRandom::new(42).next_int(16), 11);
        assert_eq!(JavaRandom::new(u64::MAX).next_int(1000), 913);
        assert_eq!(JavaRandom::new(1 << 63).next_int(7), 5);
    }
}
