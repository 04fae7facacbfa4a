//! `Memento`: jump hash that any node can leave (MementoHash).
//!
//! Paper: Coluzzi, Brocco, Antonucci, Leidi, "MementoHash: A Stateful,
//! Minimal Memory, Best Performing Consistent Hash Algorithm",
//! arXiv:2306.09783 (IEEE/ACM ToN 2024). Reference: the authors' C++
//! `MementoEngine::getBucketCRC32c(key, 0)`
//! (`slashdotted/cpp-consistent-hashing-algorithms`, Brocco, the C++
//! sibling of SUPSI's Java repository), bit for bit, removals and LIFO
//! restores included. Why that one: it is the authors' only lookup that
//! takes a 64-bit key, which is what a [`Placement`] receives; their
//! string-key lookups (Java's `getBucket(String)`, C++'s
//! `getBucket(string_view)`) rehash the key's *bytes* on every removed
//! bucket, which no placement sees. Vectors:
//! `tests/fixtures/memento_vectors.txt`.
//!
//! Changed (the repository keeps no CHANGELOG, so it is noted here): until now `memento` jumped with the
//! key hash itself and rehashed with XXH3 (`xxh3_64_with_seed(h, b)`), a
//! reading of the paper's prose that matched no implementation. Now the
//! first bucket is `jump(crc32c(h, 0), n)` and the rehash `crc32c(h, b)`,
//! the reference's. No reason stood to keep the old one: nothing else
//! computed it, and the new one agrees with the authors' code on every
//! vector. Every key of an existing memento cluster may move once.
//!
//! How it works: [`jump_consistent_hash`] over the *b-array*, every bucket
//! ever in use (`n` of them), plus a table of the removed buckets only. When
//! bucket `b` leaves and `w` buckets remain, it records its *replacer*
//! `r = w` and the bucket removed before it. Think of the working buckets as
//! a compact array of positions `0..w+1`: removing `b` moves the occupant of
//! the last position `w` into `b`'s place and drops position `w`. The
//! replacer is thus both a bucket id (the position whose occupant took `b`'s
//! place) and the working size at that moment. Lookup:
//!
//! 1. `b = jump(crc32c(hash, 0), n)`;
//! 2. while `b` was removed with replacer `r`: the keys of `b` spread evenly
//!    over the positions of that moment, `b = crc32c(hash, b) mod r`;
//!    position `b` may since have changed hands, so while `b` was removed
//!    with a replacer `r' >= r` (removed before, or while holding the
//!    position, but not after the moment `r`), `b = r'`. The bucket reached
//!    either works now (done) or was removed later, with a smaller replacer:
//!    repeat 2.
//!
//! Worked example, n = 4: remove 1 (replacer 3: bucket 3 takes position 1),
//! then 3 (replacer 2: bucket 2 takes position 1). A key with jump bucket 3
//! rehashes into `0..2`; landing on 1, it follows 1 → 3 (3 >= 2) → 2
//! (2 >= 2); bucket 2 works: the answer is 2.
//!
//! `crc32c(h, s)` is the x86 `crc32q` instruction (CRC-32C of the hash's 8
//! little-endian bytes with the seed as the running CRC), in software.
//! Removing the last bucket while nothing else is removed just shrinks `n`
//! (plain jump). [`Memento::with_node`] restores the last removed bucket
//! first (LIFO) and gives it to the new node; with none removed it appends
//! bucket `n`. So a removal then an addition restores the exact previous
//! mapping, and each change moves only the keys of the node that leaves or
//! joins.
//!
//! Placement depends on join order and on the removal history, by
//! construction. Only the removals no join has undone matter (a join undoes
//! the last exactly), so a cluster file records the history as the working
//! nodes in bucket order plus `removed`, those buckets in removal order;
//! [`Memento::with_removed`] replays them on the full b-array
//! (`algo/removals.rs`). Without removals it is [`crate::Jump`] of the
//! 32-bit `crc32c(hash, 0)`, not of `hash`. No weights; zones are ignored.
//!
//! Cost: lookup equals jump's O(ln n) without removals. With `m` removals,
//! `w` working buckets and `n = w + m`, a key lands on a removed bucket with
//! probability `m / n` and then visits removed buckets (rehashes and walk
//! steps), each a binary search, O(log m), in a sorted array (the paper
//! uses a hash table; a sorted array needs no hasher and is deterministic).
//! How many it visits depends on the order of the removals, not only on
//! `n / w`; measured over 20,000 keys (`Memento::bucket_counted`), steps
//! per lookup:
//!
//! | working, removed | from the front (0, 1, 2, ...) | random order | descending |
//! |---|---|---|---|
//! | 1, 1,000 | 12.6 | 827 | |
//! | 1, 4,000 | 15.4 | 1,403 | 4,000 |
//! | 1, 16,000 | 18.1 | 8,212 | |
//! | 10, 4,000 | 11.5 | | |
//! | 100, 10,000 | 8.8 | 99.5 | |
//! | 1,000, 1,000 | 1.0 | 1.0 | |
//!
//! Removals from the front stay near `2 ln(n / w)`, the paper's regime;
//! other orders reach `Θ(n / w)`: up to `m` steps per lookup (removals in
//! descending bucket order visit about every removed bucket once; one
//! lookup may visit a bucket more than once: the most seen for one key was
//! 6,066 steps at m = 3,000 in random order, so no bound below the order of
//! m² per lookup is claimed). The
//! mapping is the authors' reference bit for bit (the vectors), so the
//! order-dependent walk cannot be shortened without changing placements;
//! [`Memento::expected_steps`] measures it for a given snapshot instead,
//! so a caller can refuse up front what it cannot do quickly. Memory: 8
//! bytes per bucket of the b-array
//! plus 16 bytes per removed bucket.

use crate::Error;
use crate::algo::buckets::{check_unweighted, check_weight, replica_draws};
use crate::algo::jump::jump_consistent_hash;
use crate::algo::params::{Params, Pinned, Registered};
use crate::hash::crc32c_u64;
use crate::node::{Node, NodeId, NodeTable};
use crate::placement::Placement;

/// Hashes [`Memento::expected_steps`] samples.
const ESTIMATE_SAMPLES: u64 = 64;

/// Steps after which [`Memento::expected_steps`] stops sampling.
const ESTIMATE_BUDGET: u64 = 1 << 16;

/// A removed bucket: who replaced it and which bucket was removed before.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Removal {
    bucket: u32,
    /// Working size right after the removal.
    replacer: u32,
    /// The previously removed bucket, restored after this one.
    previous: Option<u32>,
}

/// MementoHash over nodes in join order. Immutable; membership changes return
/// new snapshots.
#[derive(Debug, Clone, PartialEq)]
pub struct Memento {
    nodes: NodeTable,
    /// The b-array: bucket → node, `None` for removed buckets.
    buckets: Vec<Option<NodeId>>,
    /// Removed buckets, sorted by bucket.
    removed: Vec<Removal>,
    /// The last removed bucket: the next one [`Memento::with_node`] restores.
    last_removed: Option<u32>,
}

impl Memento {
    /// Nodes in bucket order, nothing removed. Every node must have weight 1
    /// ([`Error::Unsupported`] otherwise).
    pub fn new(nodes: Vec<Node>) -> Result<Self, Error> {
        let table = NodeTable::new(nodes.iter().cloned())?;
        check_unweighted("memento", &table)?;
        let buckets = nodes.iter().map(|n| table.id(&n.name)).collect();
        Ok(Memento {
            nodes: table,
            buckets,
            removed: Vec::new(),
            last_removed: None,
        })
    }

    /// `nodes` in bucket order on the buckets of `0..nodes + removed` that
    /// `removed` leaves out, after removing those buckets in the order
    /// given: the snapshot any history of joins and leaves with these
    /// pending removals produces (`algo/removals.rs`). Refuses entries out
    /// of range or repeated, and a list that removes every bucket
    /// ([`Error::InvalidLayout`]). O(N + m log m) for m removals.
    ///
    /// Worked example: a, b, c with `removed = [1, 3]` is the b-array
    /// `[a, -, b, -, c]`; bucket 1 leaves with 4 buckets working (replacer
    /// 4), bucket 3 with 3 (replacer 3), as if a, x, b, y, c had lost x,
    /// then y.
    pub fn with_removed(nodes: Vec<Node>, removed: &[u32]) -> Result<Self, Error> {
        crate::algo::removals::validate(removed, nodes.len())?;
        let mut memento = Self::new(nodes)?;
        let total = memento.buckets.len() + removed.len();
        let mut working = memento.buckets.drain(..);
        let buckets: Vec<Option<NodeId>> = crate::algo::removals::working_mask(removed, total)
            .into_iter()
            .map(|works| {
                if works {
                    working.next().flatten()
                } else {
                    None
                }
            })
            .collect();
        drop(working);
        memento.buckets = buckets;
        for (i, &b) in removed.iter().enumerate() {
            // The working size right after this removal, as `without_node`
            // records it.
            if let Some(removal) = memento.take_bucket(b as usize, (total - i - 1) as u32) {
                memento.removed.push(removal);
            }
        }
        // Filed in removal order, kept sorted by bucket: one sort rather
        // than a sorted insertion each, which is O(m) apiece (a list in
        // descending order would cost O(m²)).
        memento.removed.sort_unstable_by_key(|r| r.bucket);
        Ok(memento)
    }

    /// The removed buckets a join has not taken back, in the order they
    /// were removed (the last is the next one [`Memento::with_node`]
    /// restores). O(m log m) for m removals (a search per step).
    pub fn removal_order(&self) -> Vec<u32> {
        let mut order = Vec::with_capacity(self.removed.len());
        let mut next = self.last_removed;
        while let Some(b) = next {
            order.push(b);
            next = self.position(b).ok().and_then(|i| self.removed[i].previous);
        }
        order.reverse();
        order
    }

    /// The working bucket of `hash`; `None` without nodes.
    pub fn bucket(&self, hash: u64) -> Option<u32> {
        self.bucket_counted(hash, &mut 0)
    }

    /// [`Memento::bucket`], adding to `steps` the removed buckets it
    /// visited (each a rehash or a walk step, each a binary search): the
    /// work [`Memento::expected_steps`] estimates, for tests that count it.
    #[doc(hidden)]
    #[inline]
    pub fn bucket_counted(&self, hash: u64, steps: &mut u64) -> Option<u32> {
        self.walk(hash, steps, u64::MAX)
    }

    /// The lookup, counting its steps into `steps`; gives up (`None`) once
    /// `steps` reaches `limit`.
    #[inline]
    fn walk(&self, hash: u64, steps: &mut u64, limit: u64) -> Option<u32> {
        if self.nodes.is_empty() {
            return None;
        }
        let mut b = jump_consistent_hash(u64::from(crc32c_u64(hash, 0)), self.buckets.len() as u32);
        let mut replacer = self.replacer(b);
        while let Some(size) = replacer {
            *steps += 1;
            if *steps >= limit {
                return None;
            }
            // `size >= 1` while a node works: replacers only shrink to the
            // current working size. `checked_rem` keeps this panic-free anyway.
            b = crc32c_u64(hash, u64::from(b)).checked_rem(size)?;
            let mut next = self.replacer(b);
            while let Some(r) = next.filter(|&r| r >= size) {
                *steps += 1;
                if *steps >= limit {
                    return None;
                }
                b = r;
                next = self.replacer(b);
            }
            replacer = next;
        }
        Some(b)
    }

    /// The b-array: bucket → node, `None` for a removed bucket.
    pub fn buckets(&self) -> &[Option<NodeId>] {
        &self.buckets
    }

    /// Number of removed buckets held in memory.
    pub fn removed_count(&self) -> usize {
        self.removed.len()
    }

    /// The expected work of one `owner` call, in removed buckets visited
    /// (each a rehash or a walk step, each a binary search over the m
    /// removals): 0 without removals. Measured, not derived, because the
    /// cost depends on the order of the removals (module docs): the mean
    /// over 64 fixed hashes, each lookup's walk followed to its end. To
    /// stay cheap, sampling stops once 65,536 steps are spent and the mean
    /// of the lookups begun so far is returned: when it stops early, the
    /// estimate is at least 1,024 steps, enough to refuse. Deterministic.
    /// Cost: at most 65,536 steps (binary searches), whatever the removals:
    /// the lookup that reaches the budget stops there.
    pub fn expected_steps(&self) -> f64 {
        if self.removed.is_empty() {
            return 0.0;
        }
        if self.nodes.is_empty() {
            return f64::INFINITY;
        }
        let mut steps = 0u64;
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut sampled = 0u64;
        while sampled < ESTIMATE_SAMPLES && steps < ESTIMATE_BUDGET {
            // SplitMix64: fixed, well-spread sample hashes.
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            self.walk(z ^ (z >> 31), &mut steps, ESTIMATE_BUDGET);
            sampled += 1;
        }
        steps as f64 / sampled as f64
    }

    /// The replacer of `bucket` if it was removed.
    #[inline]
    fn replacer(&self, bucket: u32) -> Option<u32> {
        if self.removed.is_empty() {
            return None;
        }
        self.position(bucket).ok().map(|i| self.removed[i].replacer)
    }

    fn position(&self, bucket: u32) -> Result<usize, usize> {
        self.removed.binary_search_by_key(&bucket, |r| r.bucket)
    }

    /// Removes bucket `b`, leaving `working` buckets: the last bucket
    /// while nothing else is removed just shrinks the b-array (plain
    /// jump); any other is recorded with `working` as its replacer.
    fn drop_bucket(&mut self, b: usize, working: u32) {
        if let Some(removal) = self.take_bucket(b, working) {
            let i = self.position(removal.bucket).unwrap_or_else(|i| i);
            self.removed.insert(i, removal);
        }
    }

    /// Takes bucket `b` out of the b-array, `working` buckets left after,
    /// and returns the record to file; the last bucket, with nothing
    /// removed before it, is simply popped (nothing to record).
    fn take_bucket(&mut self, b: usize, working: u32) -> Option<Removal> {
        if self.removed.is_empty() && b + 1 == self.buckets.len() {
            self.buckets.pop();
            return None;
        }
        let removal = Removal {
            bucket: b as u32,
            replacer: working,
            previous: self.last_removed,
        };
        self.last_removed = Some(removal.bucket);
        self.buckets[b] = None;
        Some(removal)
    }

    fn node_of(&self, bucket: u32) -> Option<NodeId> {
        self.buckets.get(bucket as usize).copied().flatten()
    }
}

impl Placement for Memento {
    /// The node that owns `hash`. O(ln N) without removals; each removed
    /// bucket hit adds a rehash and a short walk (module docs).
    #[inline]
    fn owner(&self, hash: u64) -> Option<NodeId> {
        self.bucket(hash).and_then(|b| self.node_of(b))
    }

    /// Up to `n` distinct nodes for `hash`, the owner first; the order is
    /// [`crate::Jump`]'s, with Memento lookups and the fallback skipping
    /// removed buckets. O(n) lookups expected while `n <= len/2`; the draw
    /// limit depends on the bucket count only, so `replicas(r)` is a prefix
    /// of `replicas(r + 1)`.
    fn replicas_into(&self, hash: u64, n: usize, out: &mut Vec<NodeId>) {
        let want = n.min(self.nodes.len());
        let size = self.buckets.len() as u32;
        replica_draws(
            hash,
            want,
            size,
            out,
            |h| self.bucket(h),
            |b| self.node_of(b),
        );
    }

    /// The node table (name order) behind the ids.
    fn nodes(&self) -> &NodeTable {
        &self.nodes
    }

    /// The b-array and the removed buckets.
    fn heap_bytes(&self) -> usize {
        self.buckets.capacity() * std::mem::size_of::<Option<NodeId>>()
            + self.removed.capacity() * std::mem::size_of::<Removal>()
    }

    /// Adds `node` on the last removed bucket (or a new last bucket): only
    /// keys it takes move.
    fn with_node(&self, node: Node) -> Result<Self, Error> {
        check_weight("memento", &node)?;
        let (nodes, at) = self.nodes.with(node)?;
        let mut next = self.clone();
        next.nodes = nodes;
        for id in next.buckets.iter_mut().flatten() {
            *id += u32::from(*id >= at);
        }
        match self.last_removed.and_then(|b| self.position(b).ok()) {
            Some(i) => {
                let restored = next.removed.remove(i);
                next.last_removed = restored.previous;
                next.buckets[restored.bucket as usize] = Some(at);
            }
            None => next.buckets.push(Some(at)),
        }
        Ok(next)
    }

    /// Removes the node called `name`, wherever it is: only its keys move.
    fn without_node(&self, name: &str) -> Result<Self, Error> {
        let (nodes, at) = self.nodes.without(name)?;
        let Some(b) = self.buckets.iter().position(|&id| id == Some(at)) else {
            return Err(Error::UnknownNode { name: name.into() });
        };
        let mut next = self.clone();
        next.nodes = nodes;
        next.drop_bucket(b, next.nodes.len() as u32);
        for id in next.buckets.iter_mut().flatten() {
            *id -= u32::from(*id > at);
        }
        Ok(next)
    }
}

impl Registered for Memento {
    /// Its bucket order, and the buckets removed and not taken back.
    fn pin(&self) -> Result<Pinned, Error> {
        Ok(Pinned {
            order: Some(self.buckets().iter().copied().flatten().collect()),
            removed: self.removal_order(),
            ..Pinned::default()
        })
    }

    fn build(nodes: Vec<Node>, _: &Params) -> Result<Self, Error> {
        Self::new(nodes)
    }

    fn replay(nodes: Vec<Node>, _: &Params, removed: &[u32]) -> Result<Self, Error> {
        Self::with_removed(nodes, removed)
    }

    const REMOVES_ANY: bool = true;
}
