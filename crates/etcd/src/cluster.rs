//! `Cluster`: the ring every watcher publishes, with the members it was
//! built from.

use std::collections::BTreeMap;

use ringwise::{AnyPlacement, ClusterSpec, Keyed, Placement};

use crate::member::{Contents, Listed};

/// The cluster as of one etcd revision: the description, the placement
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
    pub(crate) fn from_contents(contents: &mut Contents) -> Result<Self, crate::Error> {
        let (spec, members) = contents.spec()?;
        let placement = spec.as_ref().map(ClusterSpec::build).transpose()?;
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

    /// The fraction of the hash space whose owner differs between `self`
    /// and `before`, by node name, estimated on 65,536 evenly spread
    /// hashes (± 0.4 % at 95 % confidence). O(65,536) lookups.
    pub fn moved_since(&self, before: &Cluster) -> f64 {
        const SAMPLES: u64 = 1 << 16;
        fn name(cluster: &Cluster, hash: u64) -> Option<&str> {
            let placement = cluster.placement.as_ref()?.placement();
            placement
                .owner(hash)
                .and_then(|id| placement.nodes().name(id))
        }
        // Evenly spread hashes: i · (2^64 / 2^16) plus a fixed odd offset, so none
        // sits exactly on a point generated from a small number.
        let step = u64::MAX / SAMPLES;
        let moved = (0..SAMPLES)
            .map(|i| i * step + 0x9e37_79b9)
            .filter(|&hash| name(self, hash) != name(before, hash))
            .count();
        moved as f64 / SAMPLES as f64
    }
}
