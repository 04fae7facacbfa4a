//! `Keyed`: key bytes to node names, for any placement.
//!
//! Algorithms answer for `u64` hashes in dense ids; applications hold keys
//! and want names. `Keyed` pairs one placement with one [`KeyHasher`] and
//! does the two steps (hash, then look up) in one generic place, so no
//! algorithm repeats them: this is the one key → node path of the crate.
//!
//! Cost: one hash of the key plus the placement's `owner` (stated on each
//! algorithm). Lookups allocate nothing except the `Vec` that `replicas`
//! returns (and one block of scratch in a batch of more than 256 keys). For
//! many keys at once, [`Keyed::owners_into`] hashes a block of keys first
//! and then resolves the block, so the placement's memory reads for
//! different keys overlap instead of waiting on each other.

use std::fmt::Write as _;

use crate::hash::{HashTag, KeyHasher, StableHash};
use crate::node::NodeId;
use crate::placement::Placement;
use crate::stats::PlacementStats;

/// Keys hashed per block by the batch calls: enough independent lookups
/// to keep the memory system busy (the ring resolves them 128 at a time),
/// few enough that the block's hashes stay in L1.
const BLOCK: usize = 256;

/// A placement with the hash its keys go through.
#[derive(Debug, Clone)]
pub struct Keyed<P, H = StableHash> {
    placement: P,
    hasher: H,
    tag: Option<HashTag>,
}

impl<P: Placement, H: KeyHasher> Keyed<P, H> {
    /// Looks keys up in `placement` after hashing them with `hasher`.
    pub fn new(placement: P, hasher: H) -> Self {
        Keyed {
            placement,
            hasher,
            tag: None,
        }
    }

    /// The same, hashing only the tagged part of keys that have a tag.
    pub fn with_hash_tag(mut self, tag: Option<HashTag>) -> Self {
        self.tag = tag;
        self
    }

    /// The hash tag, if keys have one.
    pub fn hash_tag(&self) -> Option<HashTag> {
        self.tag
    }

    /// The placement.
    pub fn placement(&self) -> &P {
        &self.placement
    }

    /// The key hasher.
    pub fn hasher(&self) -> &H {
        &self.hasher
    }

    /// Both parts back.
    pub fn into_parts(self) -> (P, H) {
        (self.placement, self.hasher)
    }

    /// The hash of `key`.
    #[inline]
    #[must_use]
    pub fn hash(&self, key: &[u8]) -> u64 {
        match &self.tag {
            None => self.hasher.hash(key),
            Some(tag) => self.hasher.hash(tag.hashed(key)),
        }
    }

    /// The id of the node that owns `key`; `None` only without nodes.
    #[inline]
    #[must_use]
    pub fn owner(&self, key: impl AsRef<[u8]>) -> Option<NodeId> {
        self.placement.owner(self.hash(key.as_ref()))
    }

    /// The name of the node that owns `key`; `None` only without nodes.
    #[must_use]
    pub fn locate(&self, key: impl AsRef<[u8]>) -> Option<&str> {
        let id = self.owner(key)?;
        self.placement.nodes().name(id)
    }

    /// Up to `n` distinct nodes for `key`, in the algorithm's preference
    /// order, into `out` (cleared first).
    pub fn replicas_into(&self, key: impl AsRef<[u8]>, n: usize, out: &mut Vec<NodeId>) {
        self.placement
            .replicas_into(self.hash(key.as_ref()), n, out);
    }

    /// The names of up to `n` distinct nodes for `key`.
    #[must_use]
    pub fn replicas(&self, key: impl AsRef<[u8]>, n: usize) -> Vec<&str> {
        let mut ids = Vec::with_capacity(n.min(self.placement.len()));
        self.replicas_into(key, n, &mut ids);
        let nodes = self.placement.nodes();
        ids.into_iter().filter_map(|id| nodes.name(id)).collect()
    }

    /// The owner of every key, in the order given, into `out` (cleared
    /// first; left empty without nodes). Faster per key than a loop of
    /// [`Keyed::owner`] for any order of keys: keys are hashed a block at a
    /// time and each block is resolved with [`Placement::owners_into`],
    /// which for the ring overlaps the memory reads of the whole block.
    /// O(keys); allocates only if `out` must grow, plus one block of
    /// scratch for more than 256 keys.
    pub fn owners_into<K: AsRef<[u8]>>(&self, keys: &[K], out: &mut Vec<NodeId>) {
        out.clear();
        if self.placement.is_empty() {
            return;
        }
        let mut hashes = [0u64; BLOCK];
        let mut blocks = keys.chunks(BLOCK);
        // The first block is resolved straight into `out`.
        let Some(first) = blocks.next() else {
            return;
        };
        self.placement
            .owners_into(self.hash_block(first, &mut hashes), out);
        if blocks.len() == 0 {
            return;
        }
        out.reserve(keys.len() - out.len());
        let mut owners = Vec::with_capacity(BLOCK);
        for block in blocks {
            self.placement
                .owners_into(self.hash_block(block, &mut hashes), &mut owners);
            out.extend_from_slice(&owners);
        }
    }

    /// Hashes `keys` (at most [`BLOCK`]) into `hashes`; returns the part used.
    fn hash_block<'a, K: AsRef<[u8]>>(
        &self,
        keys: &[K],
        hashes: &'a mut [u64; BLOCK],
    ) -> &'a [u64] {
        let hashes = &mut hashes[..keys.len()];
        match &self.tag {
            None => self.hasher.hash_each(keys, hashes),
            Some(_) => {
                for (h, key) in hashes.iter_mut().zip(keys) {
                    *h = self.hash(key.as_ref());
                }
            }
        }
        hashes
    }
}

impl<P: Placement, H: KeyHasher> Keyed<P, H> {
    /// Each node's share of the `samples` keys `inspect:0`, `inspect:1`,
    /// ..., resolved through the batch path: the shares of a placement
    /// without exact arcs, as `ringwise inspect` and Python's `stats()` show
    /// them. O(samples) lookups, 1,024 keys at a time in reused buffers.
    pub fn sampled_stats(&self, samples: u64) -> PlacementStats {
        const BLOCK: u64 = 1024;
        let nodes = self.placement.nodes();
        let mut counts = vec![0u64; nodes.len()];
        let mut keys = vec![String::new(); BLOCK.min(samples) as usize];
        let mut owners = Vec::with_capacity(keys.len());
        for start in (0..samples).step_by(BLOCK as usize) {
            let block = &mut keys[..(samples - start).min(BLOCK) as usize];
            for (i, key) in (start..).zip(block.iter_mut()) {
                key.clear();
                let _ = write!(key, "inspect:{i}");
            }
            self.owners_into(block, &mut owners);
            for &id in &owners {
                counts[id as usize] += 1;
            }
        }
        let total = samples.max(1) as f64;
        let shares: Vec<f64> = counts.iter().map(|&c| c as f64 / total).collect();
        PlacementStats::from_shares(nodes, &[], &shares)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Node, Ring};

    #[test]
    fn batch_answers_like_one_at_a_time() {
        let ring = Ring::builder()
            .hasher(StableHash::Md5)
            .vnodes(100)
            .nodes(["cache-a", "cache-b", "cache-c"].map(Node::new))
            .build()
            .expect("valid");
        let keyed = Keyed::new(ring, StableHash::Md5);
        let keys: Vec<String> = (0..1000)
            .map(|i| format!("user:{}", i * 7919 % 1000))
            .collect();
        let mut owners = Vec::new();
        keyed.owners_into(&keys, &mut owners);
        let one: Vec<NodeId> = keys.iter().filter_map(|k| keyed.owner(k)).collect();
        assert_eq!(owners, one);
        // Every block boundary, and a stale `out`.
        for len in [0, 1, BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK + 5] {
            let keys = &keys[..len];
            owners.push(7);
            keyed.owners_into(keys, &mut owners);
            let one: Vec<NodeId> = keys.iter().filter_map(|k| keyed.owner(k)).collect();
            assert_eq!(owners, one, "{len} keys");
        }
    }
}
