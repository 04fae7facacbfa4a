//! The bucket index against a brute-force model: the first entry whose
//! point is `>= hash` in a sorted list, wrapping to the first; its owner's
//! label mapped to an id.

use super::*;

/// SplitMix64: a deterministic stream of test values.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// How test points are drawn.
#[derive(Clone, Copy, Debug)]
enum Points {
    /// Uniform 64-bit values.
    Uniform,
    /// A weak 8-bit hash: 256 distinct values, so most points collide and
    /// sit in a few huge buckets.
    Weak8,
    /// Uniform, but every point repeated (same point, other owners).
    Doubled,
}

fn draw(rng: &mut Rng, how: Points, len: usize, owners: u64) -> Vec<Entry> {
    let mut entries = Vec::with_capacity(len);
    while entries.len() < len {
        let point = match how {
            Points::Uniform | Points::Doubled => rng.next(),
            Points::Weak8 => rng.below(256) << 56 | rng.below(256),
        };
        let copies = if matches!(how, Points::Doubled) { 2 } else { 1 };
        for _ in 0..copies {
            let owner = rng.below(owners) as NodeId;
            entries.push(Entry { point, owner });
        }
    }
    entries.truncate(len);
    entries.sort_unstable();
    entries
}

/// Hashes that hit every kind of position: each point, its neighbours,
/// the ends of the hash space, bucket boundaries and random values.
fn probes(rng: &mut Rng, entries: &[Entry], index: &BucketIndex) -> Vec<u64> {
    let mut hashes = vec![0, 1, u64::MAX, u64::MAX - 1, u64::MAX / 2];
    for e in entries {
        hashes.extend([e.point, e.point.wrapping_add(1), e.point.wrapping_sub(1)]);
    }
    for k in 0..index.slots.len().min(4096) {
        let edge = (k as u64) << index.shift;
        hashes.extend([edge, edge.wrapping_sub(1)]);
    }
    hashes.extend((0..2000).map(|_| rng.next()));
    hashes
}

fn model_lower_bound(entries: &[Entry], hash: u64) -> usize {
    entries.partition_point(|e| e.point < hash)
}

/// Labels `0..n` naming ids `0..n`, as a fresh build has them.
fn identity(n: u64) -> Vec<NodeId> {
    (0..n as NodeId).collect()
}

/// The entries with their labels replaced by ids.
fn ided(entries: &[Entry], index: &BucketIndex) -> Vec<Entry> {
    entries
        .iter()
        .map(|e| e.with_owner(index.id(e.owner)))
        .collect()
}

fn model_owner(entries: &[Entry], hash: u64) -> NodeId {
    let i = model_lower_bound(entries, hash);
    entries[if i == entries.len() { 0 } else { i }].owner
}

/// Every lookup path of `index` answers like the model.
fn check(rng: &mut Rng, entries: &[Entry], index: &BucketIndex) {
    let hashes = probes(rng, entries, index);
    for &hash in &hashes {
        assert_eq!(
            index.lower_bound(entries, hash),
            model_lower_bound(entries, hash),
            "lower bound of {hash:#x}"
        );
    }
    if entries.is_empty() {
        return;
    }
    let model = ided(entries, index);
    for &hash in &hashes {
        assert_eq!(
            index.owner(entries, hash),
            model_owner(&model, hash),
            "owner of {hash:#x}"
        );
    }
    let mut out = [0; BLOCK];
    for len in [1, 7, BLOCK] {
        for block in hashes.chunks(len) {
            let out = &mut out[..block.len()];
            index.owners_block(entries, block, out);
            let expected: Vec<NodeId> = block.iter().map(|&h| model_owner(&model, h)).collect();
            assert_eq!(out, &expected[..], "block of {}", block.len());
        }
    }
}

const SIZES: [usize; 11] = [0, 1, 2, 3, 15, 16, 17, 100, 257, 1000, 5000];

#[test]
fn lookups_match_the_model() {
    let mut rng = Rng(1);
    for how in [Points::Uniform, Points::Weak8, Points::Doubled] {
        for len in SIZES {
            let entries = draw(&mut rng, how, len, 50);
            check(
                &mut rng,
                &entries,
                &BucketIndex::new(&entries, identity(50)),
            );
        }
    }
}

#[test]
fn sorts_like_std() {
    let mut rng = Rng(2);
    for how in [Points::Uniform, Points::Weak8, Points::Doubled] {
        for len in SIZES {
            let mut unsorted = draw(&mut rng, how, len, 7);
            for i in (1..unsorted.len()).rev() {
                unsorted.swap(i, rng.below(i as u64 + 1) as usize);
            }
            let mut expected = unsorted.clone();
            expected.sort_unstable();
            let (sorted, index) = sort_entries(unsorted, identity(7));
            assert_eq!(sorted, expected);
            let fresh = BucketIndex::new(&sorted, identity(7));
            assert_eq!((index.slots, index.base), (fresh.slots, fresh.base));
        }
    }
}

/// Owner ids of 32,767 and more do not fit a slot: those empty buckets
/// are answered by a search, and still right.
#[test]
fn large_owner_ids_are_searched() {
    let mut rng = Rng(3);
    let entries = draw(&mut rng, Points::Uniform, 3000, 40_000);
    let index = BucketIndex::new(&entries, identity(40_000));
    assert!(index.slots.contains(&EMPTY_FAR));
    check(&mut rng, &entries, &index);
}

/// A group holding 32,767 points or more before a bucket does not fit its
/// offset: that bucket is searched, and still right.
#[test]
fn far_offsets_are_searched() {
    let mut rng = Rng(4);
    let mut entries: Vec<Entry> = (0..40_000u64)
        .map(|i| Entry {
            point: i % 3,
            owner: (i % 5) as NodeId,
        })
        .collect();
    // A few points in every bucket of the first group after the crowd.
    let bits = bucket_bits(40_010);
    entries.extend((1..10u64).map(|k| Entry {
        point: k << (64 - bits) | 7,
        owner: 1,
    }));
    entries.sort_unstable();
    let index = BucketIndex::new(&entries, identity(5));
    assert!(index.slots.contains(&FULL_FAR));
    check(&mut rng, &entries, &index);
}

/// Renumbers `entries` as if node `at` joined (ids `>= at` up by one).
fn shifted_up(entries: &[Entry], at: NodeId) -> Vec<Entry> {
    entries
        .iter()
        .map(|e| e.with_owner(e.owner + NodeId::from(e.owner >= at)))
        .collect()
}

/// Adds `fresh` points owned by a new node `at` to `entries`.
fn joined(entries: &[Entry], fresh: &[u64], at: NodeId) -> Vec<Entry> {
    let mut all = shifted_up(entries, at);
    all.extend(fresh.iter().map(|&point| Entry { point, owner: at }));
    all.sort_unstable();
    all
}

/// `joined` and `left` give the entries of the model (labels mapped to
/// ids) and the index a fresh build gives (the same slots unless far
/// markers are involved, and always the same answers). `old` is labelled
/// by id, ids below `owners`.
fn check_join_and_leave(rng: &mut Rng, old: &[Entry], owners: u64, fresh: &[u64], at: NodeId) {
    let expected = joined(old, fresh, at);
    let (new, index) = BucketIndex::new(old, identity(owners)).joined(old, fresh, at);
    assert_eq!(ided(&new, &index), expected, "joined entries");
    check_same_index(rng, &new, &index);
    let (back, index) = index.left(&new, at);
    assert_eq!(back, old, "entries after leaving");
    assert_eq!(ided(&back, &index), old, "ids after leaving");
    check_same_index(rng, &back, &index);
}

fn check_same_index(rng: &mut Rng, entries: &[Entry], index: &BucketIndex) {
    let fresh = BucketIndex::new(entries, index.ids.clone());
    assert_eq!(index.base, fresh.base);
    assert_eq!(index.shift, fresh.shift);
    if !fresh.slots.contains(&EMPTY_FAR) && !index.slots.contains(&EMPTY_FAR) {
        assert_eq!(index.slots, fresh.slots);
    }
    check(rng, entries, index);
}

#[test]
fn joins_and_leaves_equal_fresh_builds() {
    let mut rng = Rng(5);
    for how in [Points::Uniform, Points::Weak8, Points::Doubled] {
        for len in SIZES {
            for owners in [1u64, 3, 60] {
                let old = draw(&mut rng, how, len, owners);
                let at = rng.below(owners + 1) as NodeId;
                // A node joins with a few points (sometimes on existing ones)
                // and leaves again.
                let count = 1 + rng.below(1 + len as u64 / 10) as usize;
                let mut fresh: Vec<u64> = (0..count)
                    .map(|i| match (how, i % 3) {
                        (Points::Weak8, _) => rng.below(256) << 56,
                        (_, 0) if !old.is_empty() => {
                            old[rng.below(old.len() as u64) as usize].point
                        }
                        _ => rng.next(),
                    })
                    .collect();
                fresh.sort_unstable();
                check_join_and_leave(&mut rng, &old, owners, &fresh, at);
            }
        }
    }
}

/// Node ids around the 15-bit limit: renumbering carries an owner into
/// (joining) and out of (leaving) the searched range.
#[test]
fn joins_and_leaves_across_the_owner_limit() {
    let mut rng = Rng(6);
    let limit = NodeId::from(EMPTY_FAR - EMPTY);
    let old: Vec<Entry> = {
        let mut e: Vec<Entry> = (0..4000)
            .map(|_| Entry {
                point: rng.next(),
                owner: limit - 2 + rng.below(4) as NodeId,
            })
            .collect();
        e.sort_unstable();
        e
    };
    for at in [0, limit - 2, limit - 1, limit, limit + 2] {
        let mut fresh: Vec<u64> = (0..50).map(|_| rng.next()).collect();
        fresh.sort_unstable();
        check_join_and_leave(&mut rng, &old, u64::from(limit) + 2, &fresh, at);
    }
}

#[test]
fn entries_are_12_bytes() {
    assert_eq!(std::mem::size_of::<Entry>(), 12);
}

#[test]
fn sizes_are_as_documented() {
    // 100,000 points: 2^17 buckets, 2.95 bytes per point.
    let entries = draw(&mut Rng(7), Points::Uniform, 100_000, 100);
    let index = BucketIndex::new(&entries, identity(100));
    assert_eq!(index.slots.len(), 1 << 17);
    assert_eq!(
        index.heap_bytes(),
        (1 << 17) * 2 + ((1 << 13) + 1 + 100) * 4
    );
}
