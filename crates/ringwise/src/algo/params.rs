//! The parameters of the algorithms, and what the registry needs from
//! each algorithm. Kept apart from the registry (`algo.rs`) so that the
//! algorithms depend on this small module and the registry on them, never
//! the other way round.

use crate::Error;
use crate::hash::StableHash;
use crate::node::Node;
use crate::placement::Placement;

/// Default virtual nodes per unit of weight of the ring (ketama's 160).
pub const DEFAULT_VNODES: u32 = 160;

/// Default Maglev table size: Envoy's and the paper's, a prime.
pub(crate) const DEFAULT_TABLE_SIZE: u64 = 65_537;

/// Default multi-probe probes per key: the paper's recommendation, peak
/// to mean load about 1.05.
pub(crate) const DEFAULT_PROBES: u32 = 21;

/// The parameters that only some algorithms read; each ignores the rest.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// Ring: virtual nodes per unit of weight.
    pub vnodes: u32,
    /// The hash of keys, and of the ring's points.
    pub hash: StableHash,
    /// Maglev: the lookup table size (a prime).
    pub table_size: u64,
    /// Multi-probe: probes per key.
    pub probes: u32,
}

impl Params {
    /// Every algorithm's default.
    pub const DEFAULT: Params = Params {
        vnodes: DEFAULT_VNODES,
        hash: StableHash::Xxh3,
        table_size: DEFAULT_TABLE_SIZE,
        probes: DEFAULT_PROBES,
    };
}

impl Default for Params {
    fn default() -> Self {
        Params::DEFAULT
    }
}

/// What the registry needs from an algorithm: how to build it from nodes in
/// listed order and the shared [`Params`].
pub(crate) trait Registered: Placement + Sized {
    /// Builds the snapshot. `nodes` are in listed order, which only the
    /// join-order algorithms (jump, memento) read.
    fn build(nodes: Vec<Node>, params: &Params) -> Result<Self, Error>;

    /// The key hash when a cluster names none.
    fn default_hash() -> StableHash {
        StableHash::default()
    }
}
