//! `Keyed`: key bytes to node names, for any placement.
//!
//! Algorithms answer for `u64` hashes in dense ids; applications hold keys
//! and want names. `Keyed` pairs one placement with one [`KeyHasher`] and
//! does the two steps (hash, then look up) in one generic place, so no
//! algorithm repeats them. Lookups allocate nothing except the `Vec` that
//! `replicas` returns.

use crate::hash::{KeyHasher, StableHash};
use crate::node::NodeId;
use crate::placement::Placement;

/// A placement with the hash its keys go through.
#[derive(Debug, Clone)]
pub struct Keyed<P, H = StableHash> {
    placement: P,
    hasher: H,
}

impl<P: Placement, H: KeyHasher> Keyed<P, H> {
    /// Looks keys up in `placement` after hashing them with `hasher`.
    pub fn new(placement: P, hasher: H) -> Self {
        Keyed { placement, hasher }
    }

    /// The placement.
    pub fn placement(&self) -> &P {
        &self.placement
    }

    /// The key hasher.
    pub fn hasher(&self) -> &H {
        &self.hasher
    }

    /// The hash of `key`.
    #[inline]
    pub fn hash(&self, key: &[u8]) -> u64 {
        self.hasher.hash(key)
    }

    /// The id of the node that owns `key`.
    #[inline]
    pub fn owner(&self, key: impl AsRef<[u8]>) -> Option<NodeId> {
        self.placement.owner(self.hash(key.as_ref()))
    }

    /// The name of the node that owns `key`.
    pub fn locate(&self, key: impl AsRef<[u8]>) -> Option<&str> {
        let id = self.owner(key)?;
        self.placement.nodes().name(id)
    }

    /// Up to `n` distinct nodes for `key`, in the algorithm's preference
    /// order, into `out`.
    pub fn replicas_into(&self, key: impl AsRef<[u8]>, n: usize, out: &mut Vec<NodeId>) {
        self.placement
            .replicas_into(self.hash(key.as_ref()), n, out);
    }

    /// The names of up to `n` distinct nodes for `key`.
    pub fn replicas(&self, key: impl AsRef<[u8]>, n: usize) -> Vec<&str> {
        let mut ids = Vec::with_capacity(n.min(self.placement.len()));
        self.replicas_into(key, n, &mut ids);
        let nodes = self.placement.nodes();
        ids.into_iter().filter_map(|id| nodes.name(id)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Node, Ring};

    #[test]
    fn keyed_ring_answers_like_the_ring() {
        let ring = Ring::builder()
            .hasher(StableHash::Md5)
            .vnodes(100)
            .nodes(["cache-a", "cache-b", "cache-c"].map(Node::new))
            .build()
            .expect("valid");
        let keyed = Keyed::new(ring.clone(), StableHash::Md5);
        assert_eq!(keyed.locate("user:42"), ring.locate("user:42"));
        assert_eq!(keyed.replicas("user:42", 2), ring.replicas("user:42", 2));
    }
}
