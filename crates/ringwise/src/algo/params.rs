//! The parameters of the algorithms, and what the registry needs from
//! each algorithm. Kept apart from the registry (`algo.rs`) so that the
//! algorithms depend on this small module and the registry on them, never
//! the other way round.

use std::collections::BTreeMap;
use std::ops::RangeInclusive;

use crate::Error;
use crate::hash::StableHash;
use crate::node::Node;
use crate::placement::Placement;

pub use crate::algo::ketama::Flavor;

/// Default virtual nodes per unit of weight of the ring (ketama's 160).
pub const DEFAULT_VNODES: u32 = 160;

/// Default Maglev table size: Envoy's and the paper's, a prime.
pub(crate) const DEFAULT_TABLE_SIZE: u64 = 65_537;

/// Envoy ring_hash's default smallest ring.
pub(crate) const DEFAULT_MIN_RING_SIZE: u64 = 1024;

/// Envoy ring_hash's default (and largest allowed) ring.
pub(crate) const DEFAULT_MAX_RING_SIZE: u64 = 8_388_608;

/// Cassandra's default `num_tokens` since 4.0.
pub(crate) const DEFAULT_NUM_TOKENS: u32 = 16;

/// Default multi-probe probes per key: the paper's recommendation, peak
/// to mean load about 1.05.
pub(crate) const DEFAULT_PROBES: u32 = 21;

/// Anchor and Dx: the capacity when none is set (`capacity = 0`): twice the
/// nodes built with, and at least this many buckets.
pub const MIN_DEFAULT_CAPACITY: u32 = 256;

/// Anchor and Dx: the largest capacity. AnchorHash keeps 20 bytes per
/// bucket (its four arrays of the paper, the last three of them touched only by
/// membership changes, plus the bucket → node map), so 2^22 buckets are 80
/// MiB: about the 64 MiB line at which the other builds reserve their peak
/// first, and 4 × [`crate::MAX_NODES`], room for any cluster ringwise
/// accepts to grow fourfold.
pub const MAX_CAPACITY: u32 = 1 << 22;

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
    /// Ring-shaped placements: the point budget, from 1 to
    /// [`crate::MAX_POINTS_CEILING`] (default [`crate::MAX_POINTS`]).
    pub max_points: u64,
    /// Ketama: which client's ketama (default libmemcached's).
    pub flavor: Flavor,
    /// Envoy ring_hash: the smallest ring (default 1024).
    pub min_ring_size: u64,
    /// Envoy ring_hash: the largest ring (default and at most 8388608).
    pub max_ring_size: u64,
    /// Cassandra: tokens per node (per unit of weight) when a node's
    /// tokens are not given (default 16).
    pub num_tokens: u32,
    /// Anchor and Dx: the fixed number of buckets, working or not; at least
    /// the node count and at most [`MAX_CAPACITY`]. 0 (the default) means
    /// twice the nodes built with, at least [`MIN_DEFAULT_CAPACITY`].
    pub capacity: u32,
}

impl Params {
    /// Every algorithm's default.
    pub const DEFAULT: Params = Params {
        vnodes: DEFAULT_VNODES,
        hash: StableHash::Xxh3,
        table_size: DEFAULT_TABLE_SIZE,
        probes: DEFAULT_PROBES,
        max_points: crate::MAX_POINTS,
        flavor: Flavor::Libmemcached,
        min_ring_size: DEFAULT_MIN_RING_SIZE,
        max_ring_size: DEFAULT_MAX_RING_SIZE,
        num_tokens: DEFAULT_NUM_TOKENS,
        capacity: 0,
    };

    /// The names of the parameters above as a cluster file spells them,
    /// except `hash`, which every algorithm reads (it hashes the keys).
    pub const NAMES: &'static [&'static str] = &[
        "vnodes",
        "table_size",
        "probes",
        "max_points",
        "flavor",
        "min_ring_size",
        "max_ring_size",
        "num_tokens",
        "capacity",
    ];

    /// The parameters (of [`Params::NAMES`]) whose value differs between
    /// `self` and `other`.
    pub fn differing(&self, other: &Params) -> Vec<&'static str> {
        let differs = [
            self.vnodes != other.vnodes,
            self.table_size != other.table_size,
            self.probes != other.probes,
            self.max_points != other.max_points,
            self.flavor != other.flavor,
            self.min_ring_size != other.min_ring_size,
            self.max_ring_size != other.max_ring_size,
            self.num_tokens != other.num_tokens,
            self.capacity != other.capacity,
        ];
        Params::NAMES
            .iter()
            .zip(differs)
            .filter_map(|(&name, differs)| differs.then_some(name))
            .collect()
    }

    /// The value of the parameter `name` (one of [`Params::NAMES`]) as
    /// text, as a cluster file writes it; empty for an unknown name.
    pub fn value(&self, name: &str) -> String {
        match name {
            "vnodes" => self.vnodes.to_string(),
            "table_size" => self.table_size.to_string(),
            "probes" => self.probes.to_string(),
            "max_points" => self.max_points.to_string(),
            "flavor" => self.flavor.to_string(),
            "min_ring_size" => self.min_ring_size.to_string(),
            "max_ring_size" => self.max_ring_size.to_string(),
            "num_tokens" => self.num_tokens.to_string(),
            "capacity" => self.capacity.to_string(),
            _ => String::new(),
        }
    }
}

impl Params {
    /// The capacity `algorithm` (anchor, dx) builds `nodes` nodes with: `capacity`, or
    /// when 0 twice the nodes (at least [`MIN_DEFAULT_CAPACITY`]). Refuses
    /// one below the node count or above [`MAX_CAPACITY`].
    pub fn capacity_for(&self, algorithm: &'static str, nodes: usize) -> Result<u32, Error> {
        let nodes = u32::try_from(nodes).unwrap_or(u32::MAX);
        if self.capacity == 0 {
            return Ok(nodes
                .saturating_mul(2)
                .clamp(MIN_DEFAULT_CAPACITY, MAX_CAPACITY));
        }
        if self.capacity < nodes || self.capacity > MAX_CAPACITY {
            return Err(Error::InvalidParameter {
                algorithm,
                parameter: "capacity",
                value: format!("{} (for {nodes} nodes)", self.capacity),
                expected: "a bucket count from the number of nodes up to 4194304 (2^22): \
                           every node needs a bucket, and each bucket costs up to 20 bytes; \
                           leave it out for twice the nodes (at least 256)",
            });
        }
        Ok(self.capacity)
    }
}

impl Default for Params {
    fn default() -> Self {
        Params::DEFAULT
    }
}

/// What an operator fixed by hand for one node instead of letting the
/// algorithm compute it: a ring's points, Cassandra's tokens (as `nodetool
/// ring` shows them), Redis Cluster's slots (as `CLUSTER SLOTS` shows them).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Given {
    /// Ring points (`ring`).
    Points(Vec<u64>),
    /// Signed Murmur3 tokens (`cassandra`).
    Tokens(Vec<i64>),
    /// Inclusive slot ranges (`slots`).
    Slots(Vec<RangeInclusive<u16>>),
}

impl Given {
    /// The cluster-file field that gives it.
    pub fn field(&self) -> &'static str {
        match self {
            Given::Points(_) => "points",
            Given::Tokens(_) => "tokens",
            Given::Slots(_) => "slots",
        }
    }

    /// The values as one comma-separated line (slot ranges `a-b`), in the
    /// order given.
    pub fn canonical(&self) -> String {
        let items: Vec<String> = match self {
            Given::Points(points) => points.iter().map(u64::to_string).collect(),
            Given::Tokens(tokens) => tokens.iter().map(i64::to_string).collect(),
            Given::Slots(ranges) => ranges
                .iter()
                .map(|r| format!("{}-{}", r.start(), r.end()))
                .collect(),
        };
        items.join(",")
    }
}

/// What was given, by node name.
pub type Layout = BTreeMap<String, Given>;

/// What the registry needs from an algorithm: how to build it from nodes in
/// listed order and the shared [`Params`].
pub(crate) trait Registered: Placement + Sized {
    /// Builds the snapshot. `nodes` are in listed order, which the
    /// join-order algorithms (jump, memento) and the list-order flavours
    /// (ketama, envoy-ring) read.
    fn build(nodes: Vec<Node>, params: &Params) -> Result<Self, Error>;

    /// Builds the snapshot with what `layout` fixes for some nodes. Only
    /// the algorithms that take a layout override this; the others refuse
    /// a non-empty one.
    fn build_with(nodes: Vec<Node>, params: &Params, layout: &Layout) -> Result<Self, Error> {
        match layout.iter().next() {
            None => Self::build(nodes, params),
            Some((node, given)) => Err(Error::InvalidLayout {
                node: Some(node.clone()),
                message: format!(
                    "`{}` is not read by this algorithm: only ring takes `points`, \
                     cassandra `tokens` and slots `slots`",
                    given.field()
                ),
            }),
        }
    }

    /// Builds the snapshot whose buckets `removed` (bucket numbers, in
    /// the order their nodes left) were removed after a build over every
    /// bucket; `nodes` fill the other buckets in order
    /// (`algo/removals.rs`): an empty list, or a layout given to an
    /// algorithm that removes buckets (which refuses it), is
    /// [`Registered::build_with`]; a list is [`Registered::replay`]'s.
    fn build_removed(
        nodes: Vec<Node>,
        params: &Params,
        layout: &Layout,
        removed: &[u32],
    ) -> Result<Self, Error> {
        if removed.is_empty() || (Self::REMOVES_ANY && !layout.is_empty()) {
            return Self::build_with(nodes, params, layout);
        }
        Self::replay(nodes, params, removed)
    }

    /// The snapshot after the non-empty `removed` list is replayed over
    /// every bucket. Only the algorithms that let any bucket leave
    /// (memento, anchor, dx) override this; the others refuse the list.
    fn replay(_: Vec<Node>, _: &Params, _: &[u32]) -> Result<Self, Error> {
        Err(Error::InvalidLayout {
            node: None,
            message: crate::algo::removals::READ_BY.into(),
        })
    }

    /// Whether [`Registered::build_removed`] reads a `removed` list.
    const REMOVES_ANY: bool = false;

    /// The key hash when a cluster names none.
    fn default_hash() -> StableHash {
        StableHash::default()
    }

    /// The key hash when a cluster names none, given its parameters (the
    /// ketama flavours differ).
    fn default_hash_with(_: &Params) -> StableHash {
        Self::default_hash()
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
