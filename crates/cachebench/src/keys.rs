//! The request stream: which key each request asks for and whether it is a
//! write, drawn from a seeded SplitMix64 per worker thread, so every
//! placement under test sees the same stream (the same seed, the same
//! number of threads).
//!
//! Keys are uniform over `0..K`, or Zipf with exponent `s` (`--zipf 1.1`):
//! `P(rank r) ∝ 1 / r^s`, drawn by binary search in the cumulative
//! distribution (K `f64`s, built once; O(log K) per draw).

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, fast, seedable generator.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `stream` of `seed` (streams are independent).
    pub fn new(seed: u64, stream: u64) -> Self {
        Rng(seed ^ stream.wrapping_mul(0xD605_BBB5_8C8A_BDA7))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// A uniform float in `[0, 1)` (53 bits).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// SplitMix64's finaliser: also a stateless hash of a `u64`.
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// How keys are drawn.
#[derive(Debug, Clone)]
pub enum Distribution {
    /// Every key equally likely.
    Uniform { keys: u64 },
    /// Zipf: the cumulative probabilities of ranks `1..=K` (the last is 1).
    Zipf { cumulative: Vec<f64> },
}

impl Distribution {
    /// Uniform over `keys`, or Zipf with `exponent` when it is above 0.
    pub fn new(keys: u64, exponent: f64) -> Self {
        if exponent <= 0.0 {
            return Distribution::Uniform { keys };
        }
        let mut total = 0.0;
        let mut cumulative: Vec<f64> = (1..=keys)
            .map(|rank| {
                total += (rank as f64).powf(-exponent);
                total
            })
            .collect();
        for c in &mut cumulative {
            *c /= total;
        }
        Distribution::Zipf { cumulative }
    }

    /// The next key index.
    pub fn draw(&self, rng: &mut Rng) -> u64 {
        match self {
            Distribution::Uniform { keys } => rng.next_u64() % keys,
            Distribution::Zipf { cumulative } => {
                let u = rng.unit();
                let rank = cumulative.partition_point(|&c| c <= u);
                rank.min(cumulative.len() - 1) as u64
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_covers_the_keys_evenly() {
        let keys = Distribution::new(10, 0.0);
        let mut rng = Rng::new(1, 0);
        let mut counts = [0u32; 10];
        for _ in 0..100_000 {
            counts[keys.draw(&mut rng) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_000..11_000).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn zipf_ranks_follow_the_power_law() {
        let keys = Distribution::new(1000, 1.1);
        let mut rng = Rng::new(7, 3);
        let mut counts = vec![0u32; 1000];
        for _ in 0..200_000 {
            counts[keys.draw(&mut rng) as usize] += 1;
        }
        // P(1) / P(2) = 2^1.1 = 2.14; P(1) / P(10) = 10^1.1 = 12.6.
        let ratio2 = f64::from(counts[0]) / f64::from(counts[1]);
        let ratio10 = f64::from(counts[0]) / f64::from(counts[9]);
        assert!((1.95..2.35).contains(&ratio2), "{ratio2}");
        assert!((10.5..15.0).contains(&ratio10), "{ratio10}");
    }

    #[test]
    fn streams_of_one_seed_repeat_and_differ() {
        let a: Vec<u64> = (0..5)
            .map(|_| 0)
            .scan(Rng::new(5, 1), |r, _: u64| Some(r.next_u64()))
            .collect();
        let b: Vec<u64> = (0..5)
            .map(|_| 0)
            .scan(Rng::new(5, 1), |r, _: u64| Some(r.next_u64()))
            .collect();
        let c: Vec<u64> = (0..5)
            .map(|_| 0)
            .scan(Rng::new(5, 2), |r, _: u64| Some(r.next_u64()))
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
