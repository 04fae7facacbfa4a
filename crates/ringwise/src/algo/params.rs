//! What the registry needs from each algorithm ([`Registered`]), and what an
//! operator can fix by hand for a node ([`Given`], [`Layout`]). Kept apart
//! from the registry (`algo.rs`) so that the algorithms depend on this
//! small module and the registry on them, never the other way round. The
//! parameters themselves are declared once in `param.rs`.

use std::collections::BTreeMap;
use std::ops::RangeInclusive;

use crate::Error;
use crate::algo::ring::view::RingView;
use crate::hash::{HashTag, StableHash};
use crate::node::{Node, NodeId};
use crate::placement::Placement;

pub use crate::param::{DEFAULT_MAX_RING_SIZE, DEFAULT_PROBES, DEFAULT_TABLE_SIZE, Param, Params};

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

/// What a cluster file must hold, besides the nodes and the parameters,
/// for a snapshot to be rebuilt exactly ([`Registered::pin`]): the state a
/// history of membership changes leaves that the nodes alone do not give.
#[derive(Debug, Default)]
pub(crate) struct Pinned {
    /// The bucket (join) order, by node id, where buckets follow it.
    pub order: Option<Vec<NodeId>>,
    /// Every node's given points, tokens or slots, replacing those of
    /// the description, where the snapshot keeps them.
    pub layout: Option<Layout>,
    /// The fixed bucket count, where there is one.
    pub capacity: Option<u32>,
    /// The buckets removed and not taken back, in removal order.
    pub removed: Vec<u32>,
}

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

    /// The [`Params`] it reads besides the hash.
    const READS: &'static [Param] = &[];

    /// The hash tag its peer always applies, used when a cluster sets
    /// none (redis-rb's, go-redis's).
    const HASH_TAG: Option<HashTag> = None;

    /// What a cluster file must keep to rebuild this snapshot exactly.
    /// No default: an algorithm whose snapshot follows from its nodes
    /// and parameters says so with `Ok(Pinned::default())`, so that a new
    /// algorithm cannot lose its state in `plan --write` unnoticed. O(P)
    /// at most (a ring hashes its points once).
    fn pin(&self) -> Result<Pinned, Error>;

    /// Whether it is a ring of points ([`RingView`]).
    const RING_SHAPED: bool = false;

    /// The ring, for the ring-shaped ones.
    fn as_ring(&self) -> Option<&dyn RingView> {
        None
    }

    /// The slots of its lookup table (maglev, slots), for an exact
    /// slot-by-slot diff and drawing; `None` for the others.
    fn table_size(&self) -> Option<u64> {
        None
    }

    /// Whether keys hashed by `hash` spread over it. Redis's CRC16 yields
    /// 14-bit slot numbers (0..16384): on a 64-bit ring they all fall
    /// before the first point above 16383, one node owns every key; only
    /// `slots` is indexed by them.
    fn accepts_hash(hash: StableHash) -> bool {
        hash != StableHash::RedisCrc16
    }
}
