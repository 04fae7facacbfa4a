//! The bucket index that makes ring lookups O(1) expected.
//!
//! Points are uniform 64-bit hashes, so their top `b` bits spread them evenly
//! over `2^b` buckets. With `2^b <= P < 2^(b+1)` a bucket holds one or two
//! points on average, and `start[k]` (the position of the first point whose
//! top bits are `>= k`) narrows the search for the first point `>= h` to the
//! bucket of `h`:
//!
//! - every point before `start[k]` lies in a lower bucket, so it is `< h`;
//! - every point from `start[k+1]` on lies in a higher bucket, so it is `> h`;
//! - hence the answer is in `start[k] ..= start[k+1]`.
//!
//! Example: 5 points, so `b = 2` (4 buckets, top 2 bits). Points with top
//! bits `00, 01, 01, 10, 11` give `start = [0, 1, 3, 4, 5]`. A hash with top
//! bits `01` searches positions 1..3 only, and if it is above both points
//! there the answer is position 3, the first point of bucket `10`.
//!
//! Memory: `2^b + 1 <= P + 1` entries of 4 bytes, at most 4 bytes per point.
//! A skewed custom hasher only makes buckets uneven (still correct, since the
//! in-bucket step is a binary search).

use crate::node::NodeId;

#[derive(Debug, Clone, Default)]
pub(super) struct BucketIndex {
    start: Vec<u32>,
    /// `bucket(h) = (h >> 1) >> shift` with `shift = 63 - b`. Shifting in two
    /// steps keeps `b = 0` (one bucket) legal: `h >> 64` would overflow.
    shift: u32,
}

impl BucketIndex {
    /// Builds the index of `points` (sorted ascending).
    pub(super) fn new(points: &[u64]) -> Self {
        let bits = bucket_bits(points.len());
        let shift = 63 - bits;
        let buckets = 1usize << bits;
        let mut start = Vec::with_capacity(buckets + 1);
        let mut i = 0;
        for k in 0..buckets as u64 {
            while i < points.len() && (points[i] >> 1) >> shift < k {
                i += 1;
            }
            start.push(i as u32);
        }
        start.push(points.len() as u32);
        BucketIndex { start, shift }
    }

    /// Position of the first point `>= hash` (`points.len()` when none is).
    #[inline]
    pub(super) fn lower_bound(&self, points: &[u64], hash: u64) -> usize {
        let k = ((hash >> 1) >> self.shift) as usize;
        let lo = self.start[k] as usize;
        let hi = self.start[k + 1] as usize;
        lo + points[lo..hi].partition_point(|&p| p < hash)
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.start.capacity() * 4
    }
}

/// `b` with `2^b <= len` (at least 0), capped so the index stays small.
fn bucket_bits(len: usize) -> u32 {
    len.max(1).ilog2().min(30)
}

/// Sorts `(point, owner)` pairs and splits them into two arrays.
///
/// A counting sort on the top bits puts each pair into its bucket in O(P);
/// the buckets, about one pair each, are then sorted on their own.
pub(super) fn sort_pairs(pairs: Vec<(u64, NodeId)>) -> (Vec<u64>, Vec<NodeId>) {
    let shift = 63 - bucket_bits(pairs.len());
    let bucket = |point: u64| ((point >> 1) >> shift) as usize;
    let mut start = vec![0usize; (1 << (63 - shift)) + 1];
    for &(point, _) in &pairs {
        start[bucket(point) + 1] += 1;
    }
    for k in 1..start.len() {
        start[k] += start[k - 1];
    }
    let mut next = start.clone();
    let mut sorted = vec![(0u64, 0 as NodeId); pairs.len()];
    for pair in pairs {
        let slot = &mut next[bucket(pair.0)];
        sorted[*slot] = pair;
        *slot += 1;
    }
    for k in 0..start.len() - 1 {
        sorted[start[k]..start[k + 1]].sort_unstable();
    }
    sorted.into_iter().unzip()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(points: &[u64], hash: u64) -> usize {
        points.partition_point(|&p| p < hash)
    }

    #[test]
    fn matches_binary_search() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for len in [0usize, 1, 2, 3, 5, 17, 1000] {
            let mut points: Vec<u64> = (0..len)
                .map(|_| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    x
                })
                .collect();
            points.sort_unstable();
            let index = BucketIndex::new(&points);
            let probes = points.iter().flat_map(|&p| [p, p.wrapping_add(1), p.wrapping_sub(1)]);
            for hash in probes.chain([0, 1, u64::MAX, u64::MAX / 2]) {
                assert_eq!(index.lower_bound(&points, hash), reference(&points, hash));
            }
        }
    }

    #[test]
    fn sorts_like_std() {
        let pairs: Vec<(u64, NodeId)> = (0..5000u64)
            .map(|i| ((i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % 3000) << 50, (i % 7) as NodeId))
            .collect();
        let mut expected = pairs.clone();
        expected.sort_unstable();
        let (points, owners) = sort_pairs(pairs);
        let got: Vec<_> = points.into_iter().zip(owners).collect();
        assert_eq!(got, expected);
    }
}
