//! `Cluster`: the ring every watcher publishes, with the members it was
//! built from.

use std::collections::BTreeMap;

use ringwise::{AnyPlacement, ClusterSpec, Keyed};

use crate::member::{Contents, Listed};

/// The cluster as of one version of its source (an etcd revision, a
/// ZooKeeper zxid, a gossip view): the description, the placement
/// built from it, and the members with their addresses and metadata.
/// Immutable; a watcher publishes a new one per change.
#[derive(Debug, Default)]
pub struct Cluster {
    /// [`ClusterSpec::fingerprint`] of the description (0 with no member):
    /// equal on every client that holds the same ring.
    pub fingerprint: u64,
    /// The description (`None` with no member).
    pub spec: Option<ClusterSpec>,
    /// The members in join order.
    pub members: Vec<Listed>,
    /// Keys left out of the ring, with why (bad JSON, a bad weight...).
    pub skipped: BTreeMap<String, String>,
    placement: Option<Keyed<AnyPlacement>>,
}

impl Cluster {
    /// Builds the cluster from what the prefix holds; `Err` when the
    /// config is bad (the caller keeps what it has). Cost: one build of
    /// the placement, O(N) for the members.
    pub fn from_contents(contents: &mut Contents) -> Result<Self, crate::Error> {
        let (described, members) = contents.spec()?;
        let (spec, placement) = described.unzip();
        Ok(Cluster {
            fingerprint: spec.as_ref().map_or(0, ClusterSpec::fingerprint),
            spec,
            members,
            skipped: contents.skipped.clone(),
            placement,
        })
    }

    /// The placement with its key hash (`None` with no member).
    pub fn placement(&self) -> Option<&Keyed<AnyPlacement>> {
        self.placement.as_ref()
    }

    /// The name of the node that owns `key`: no allocation, no I/O.
    pub fn owner(&self, key: impl AsRef<[u8]>) -> Option<&str> {
        self.placement.as_ref()?.locate(key)
    }

    /// The member called `name`.
    pub fn member(&self, name: &str) -> Option<&Listed> {
        self.members.iter().find(|m| m.name == name)
    }

    /// Whether `other` holds the same ring and the same member data
    /// (addresses, metadata): nothing a reader could tell apart.
    pub fn same_as(&self, other: &Cluster) -> bool {
        self.fingerprint == other.fingerprint
            && self.members == other.members
            && self.skipped == other.skipped
    }

    /// The fraction of keys whose owner differs between `self` and
    /// `before` (by node name), and whether it is exact: exact for two
    /// ring-shaped placements (their arcs merged, [`ringwise::diff`], O(P)),
    /// otherwise estimated on 65,536 hashes (± 0.4 % at 95 % confidence),
    /// or on 65,536 keys when the key hash itself changed.
    pub fn moved_since(&self, before: &Cluster) -> (f64, bool) {
        const SAMPLES: u64 = 1 << 16;
        let (Some(new), Some(old)) = (&self.placement, &before.placement) else {
            let both_empty = self.placement.is_none() && before.placement.is_none();
            return (if both_empty { 0.0 } else { 1.0 }, true);
        };
        let same_hash = new.hasher() == old.hasher() && new.hash_tag() == old.hash_tag();
        if !same_hash {
            let moved = (0..SAMPLES)
                .filter(|i| {
                    let key = format!("moved:{i}");
                    new.locate(&key) != old.locate(&key)
                })
                .count();
            return (moved as f64 / SAMPLES as f64, false);
        }
        let (new, old) = (new.placement(), old.placement());
        if new.as_ring().is_some() && old.as_ring().is_some() {
            return (ringwise::diff(old, new).moved(), true);
        }
        (ringwise::diff_sampled(old, new, SAMPLES).moved(), false)
    }
}
