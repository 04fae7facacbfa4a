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
    /// Ring: the point budget, from 1 to [`crate::MAX_POINTS_CEILING`]
    /// (default [`crate::MAX_POINTS`]).
    pub max_points: u64,
}

impl Params {
    /// Every algorithm's default.
    pub const DEFAULT: Params = Params {
        vnodes: DEFAULT_VNODES,
        hash: StableHash::Xxh3,
        table_size: DEFAULT_TABLE_SIZE,
        probes: DEFAULT_PROBES,
        max_points: crate::MAX_POINTS,
    };

    /// The names of the parameters above as a cluster file spells them,
    /// except `hash`, which every algorithm reads (it hashes the keys).
    pub const NAMES: &'static [&'static str] = &["vnodes", "table_size", "probes", "max_points"];

    /// The parameters (of [`Params::NAMES`]) whose value differs between
    /// `self` and `other`.
    pub fn differing(&self, other: &Params) -> Vec<&'static str> {
        let differs = [
            self.vnodes != other.vnodes,
            self.table_size != other.table_size,
            self.probes != other.probes,
            self.max_points != other.max_points,
        ];
        Params::NAMES
            .iter()
            .zip(differs)
            .filter_map(|(&name, differs)| differs.then_some(name))
            .collect()
    }
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

    /// The [`Params`] it reads besides the hash (names of [`Params::NAMES`]).
    const READS: &'static [&'static str] = &[];

    /// Whether keys hashed by `hash` spread over it. Redis's CRC16 yields
    /// 14-bit slot numbers (0..16384): on a 64-bit ring they all fall
    /// before the first point above 16383, one node owns every key; only
    /// `slots` is indexed by them.
    fn accepts_hash(hash: StableHash) -> bool {
        hash != StableHash::RedisCrc16
    }
}
