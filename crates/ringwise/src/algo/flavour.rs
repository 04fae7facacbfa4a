//! The registry entry of a ring-shaped compatibility flavour, written once.
//!
//! ketama, nginx, envoy-ring, grpc-ring, varnish-shard, dalli, redis-rb
//! and groupcache are point schemes
//! of the same [`Ring`]: each differs from the others only in how its
//! scheme is made from the [`Params`], its tie rule, its peer's key hash
//! and the parameters it reads. Each scheme says those four things as a
//! [`Flavour`]; `Ring<S>` is [`Registered`] once here for every flavour,
//! ring-shaped, its points following from the names, weights and
//! parameters alone (nothing to pin). The seed recipe's ring and
//! cassandra (whose tokens may be listed by hand) keep their own entries.

use crate::Error;
use crate::algo::params::{Param, Params, Pinned, Registered};
use crate::algo::ring::{PointScheme, Ring, RingView, Tie};
use crate::hash::{HashTag, StableHash};
use crate::node::Node;

/// A point scheme deployed by a peer, as the registry builds it.
pub(crate) trait Flavour: PointScheme + Sized {
    /// The scheme the parameters describe; refuses what the peer refuses.
    fn from_params(params: &Params) -> Result<Self, Error>;

    /// How equal points rank (by name unless the peer says otherwise).
    fn tie(_: &Params) -> Tie {
        Tie::ByName
    }

    /// The peer's key hash.
    const DEFAULT_HASH: StableHash;

    /// The peer's key hash given the parameters (the ketama flavours
    /// differ).
    fn default_hash_with(_: &Params) -> StableHash {
        Self::DEFAULT_HASH
    }

    /// The [`Params`] it reads besides the hash, `max_points` included.
    const READS: &'static [Param];

    /// The hash tag the peer always applies (redis-rb's).
    const HASH_TAG: Option<HashTag> = None;
}

impl<S: Flavour> Registered for Ring<S> {
    const RING_SHAPED: bool = true;

    fn as_ring(&self) -> Option<&dyn RingView> {
        Some(self)
    }

    /// Points follow from the names, weights and parameters.
    fn pin(&self) -> Result<Pinned, Error> {
        Ok(Pinned::default())
    }

    fn build(nodes: Vec<Node>, params: &Params) -> Result<Self, Error> {
        Ring::builder()
            .scheme(S::from_params(params)?)
            .tie(S::tie(params))
            .max_points(params.max_points)
            .nodes(nodes)
            .build()
    }

    fn default_hash() -> StableHash {
        S::DEFAULT_HASH
    }

    fn default_hash_with(params: &Params) -> StableHash {
        S::default_hash_with(params)
    }

    const READS: &'static [Param] = S::READS;

    const HASH_TAG: Option<HashTag> = S::HASH_TAG;
}
