//! Ring storage: packed `(point, owner)` entries and the bucket index that
//! makes lookups O(1) expected.
//!
//! Points are uniform 64-bit hashes, so their top `b` bits spread them evenly
//! over `2^b` buckets. `start[k]` is the position of the first entry whose
//! top bits are `>= k`, which narrows the search for the first point `>= h`
//! to the bucket of `h`:
//!
//! - every entry before `start[k]` lies in a lower bucket, so it is `< h`;
//! - every entry from `start[k+1]` on lies in a higher bucket, so it is `> h`;
//! - hence the answer is in `start[k] ..= start[k+1]`.
//!
//! Example: 5 points and 4 buckets (top 2 bits). Points with top bits
//! `00, 01, 01, 10, 11` give `start = [0, 1, 3, 4, 5]`. A hash with top bits
//! `01` searches positions 1..3 only, and if it is above both points there
//! the answer is position 3, the first point of bucket `10`.
//!
//! Sizes: `2^b` is the power of two in `(P/2, P]`, so a bucket holds one or
//! two entries and the index costs at most 4 bytes per point (2.6 for the
//! benchmark's 100,000 points). Entries are 12 bytes, the owner next to its point, so a
//! lookup touches the index and one run of entries: two dependent memory
//! reads instead of three. A skewed custom hasher only makes buckets uneven
//! (still correct: the in-bucket step is a binary search).

use crate::node::NodeId;

/// One point and the node that owns it, 12 bytes (no padding).
///
/// Ordered by `(point, owner)`; since ids are name ranks this orders equal
/// points by node name. Fields are read by value only (it is packed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(C, packed(4))]
pub(super) struct Entry {
    pub(super) point: u64,
    pub(super) owner: NodeId,
}

impl Entry {
    /// The same point with another owner.
    #[inline]
    pub(super) fn with_owner(self, owner: NodeId) -> Entry {
        Entry {
            point: self.point,
            owner,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub(super) struct BucketIndex {
    start: Vec<u32>,
    /// `bucket(h) = (h >> 1) >> shift` with `shift = 63 - b`. Shifting in two
    /// steps keeps `b = 0` (one bucket) legal: `h >> 64` would overflow.
    shift: u32,
}

impl BucketIndex {
    /// Builds the index of `entries` (sorted by point) by counting entries
    /// per bucket.
    pub(super) fn new(entries: &[Entry]) -> Self {
        let shift = 63 - bucket_bits(entries.len());
        let mut start = vec![0u32; (1 << (63 - shift)) + 1];
        for e in entries {
            start[(((e.point >> 1) >> shift) as usize) + 1] += 1;
        }
        for k in 1..start.len() {
            start[k] += start[k - 1];
        }
        BucketIndex { start, shift }
    }

    /// The index after inserting (`grow`) or deleting `changed` points
    /// (sorted) from a ring that now holds `len` entries, in O(buckets)
    /// without reading the entries: `start[k]` moves by the number of changed
    /// points in buckets below `k`. Falls back to a full build when `len`
    /// calls for another bucket count.
    pub(super) fn adjusted(&self, entries: &[Entry], changed: &[u64], grow: bool) -> Self {
        if 63 - bucket_bits(entries.len()) != self.shift {
            return BucketIndex::new(entries);
        }
        let mut start = self.start.clone();
        let mut below = 0u32;
        let mut changed = changed.iter().peekable();
        for (k, slot) in start.iter_mut().enumerate() {
            while changed
                .next_if(|&&p| ((p >> 1) >> self.shift) < k as u64)
                .is_some()
            {
                below += 1;
            }
            *slot = if grow { *slot + below } else { *slot - below };
        }
        let last = start.len() - 1;
        start[last] = entries.len() as u32;
        BucketIndex {
            start,
            shift: self.shift,
        }
    }

    /// Position of the first entry with point `>= hash` (`entries.len()`
    /// when there is none).
    #[inline]
    pub(super) fn lower_bound(&self, entries: &[Entry], hash: u64) -> usize {
        let k = ((hash >> 1) >> self.shift) as usize;
        let lo = self.start[k] as usize;
        let hi = self.start[k + 1] as usize;
        lo + entries[lo..hi].partition_point(|e| e.point < hash)
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.start.capacity() * 4
    }
}

/// `b` with `2^b` in `(len/2, len]` (0 for an empty ring), capped so that
/// the index of a huge ring stays small.
fn bucket_bits(len: usize) -> u32 {
    len.max(1).ilog2().min(28)
}

/// Sorts entries by `(point, owner)` in O(P) expected and returns them with
/// their index.
///
/// A counting sort on the index's own bucket bits puts each entry into its
/// bucket (the running counts are exactly `start`); the buckets, a few
/// entries each, are then sorted on their own.
pub(super) fn sort_entries(entries: Vec<Entry>) -> (Vec<Entry>, BucketIndex) {
    let shift = 63 - bucket_bits(entries.len());
    let bucket = |e: &Entry| ((e.point >> 1) >> shift) as usize;
    let mut start = vec![0u32; (1 << (63 - shift)) + 1];
    for e in &entries {
        start[bucket(e) + 1] += 1;
    }
    for k in 1..start.len() {
        start[k] += start[k - 1];
    }
    let mut next = start.clone();
    let mut sorted = vec![Entry { point: 0, owner: 0 }; entries.len()];
    for e in entries {
        let slot = &mut next[bucket(&e)];
        sorted[*slot as usize] = e;
        *slot += 1;
    }
    for k in 0..start.len() - 1 {
        sort_small(&mut sorted[start[k] as usize..start[k + 1] as usize]);
    }
    (sorted, BucketIndex { start, shift })
}

/// Insertion sort for the usual bucket of a few entries; the standard sort
/// for the big buckets a skewed hasher can make.
fn sort_small(bucket: &mut [Entry]) {
    if bucket.len() > 16 {
        bucket.sort_unstable();
        return;
    }
    for i in 1..bucket.len() {
        let mut j = i;
        while j > 0 && bucket[j] < bucket[j - 1] {
            bucket.swap(j, j - 1);
            j -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(points: impl IntoIterator<Item = u64>) -> Vec<Entry> {
        points
            .into_iter()
            .map(|point| Entry { point, owner: 0 })
            .collect()
    }

    #[test]
    fn matches_binary_search() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for len in [0usize, 1, 2, 3, 5, 17, 1000] {
            let mut points: Vec<u64> = (0..len)
                .map(|_| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    x
                })
                .collect();
            points.sort_unstable();
            let ring = entries(points.iter().copied());
            let index = BucketIndex::new(&ring);
            let probes = points
                .iter()
                .flat_map(|&p| [p, p.wrapping_add(1), p.wrapping_sub(1)]);
            for hash in probes.chain([0, 1, u64::MAX, u64::MAX / 2]) {
                let expected = points.partition_point(|&p| p < hash);
                assert_eq!(index.lower_bound(&ring, hash), expected);
            }
        }
    }

    #[test]
    fn sorts_like_std() {
        let unsorted: Vec<Entry> = (0..5000u64)
            .map(|i| Entry {
                point: (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % 3000) << 50,
                owner: (i % 7) as NodeId,
            })
            .collect();
        let mut expected = unsorted.clone();
        expected.sort_unstable();
        let (sorted, index) = sort_entries(unsorted);
        assert_eq!(sorted, expected);
        assert_eq!(index.start, BucketIndex::new(&sorted).start);
    }

    #[test]
    fn adjusted_equals_a_fresh_index() {
        let all: Vec<Entry> = entries((0..4000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
        let (all, _) = sort_entries(all);
        let (kept, removed): (Vec<Entry>, Vec<Entry>) = all.iter().partition(|e| e.point % 97 != 0);
        let removed: Vec<u64> = removed.iter().map(|e| e.point).collect();
        let full = BucketIndex::new(&all);
        let small = BucketIndex::new(&kept);
        assert_eq!(full.adjusted(&kept, &removed, false).start, small.start);
        assert_eq!(small.adjusted(&all, &removed, true).start, full.start);
    }

    #[test]
    fn entries_are_12_bytes() {
        assert_eq!(std::mem::size_of::<Entry>(), 12);
    }
}
