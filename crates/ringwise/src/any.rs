//! `AnyPlacement`: one of the built-in algorithms, chosen at run time.
//!
//! A cluster file or `--algo` names the algorithm only when the program
//! runs, so the CLI, the simulator and `Live` holders need one type for all
//! of them. An enum (rather than `Box<dyn Placement>`) keeps lookups free of
//! vtable calls and keeps membership changes, which return `Self`, available.

use crate::Error;
use crate::cluster::Algorithm;
use crate::hash::StableHash;
use crate::jump::Jump;
use crate::maglev::Maglev;
use crate::memento::Memento;
use crate::multiprobe::MultiProbe;
use crate::node::{Node, NodeId, NodeTable};
use crate::placement::Placement;
use crate::rendezvous::Rendezvous;
use crate::ring::Ring;
use crate::slots::Slots;

/// A placement snapshot of any built-in algorithm.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum AnyPlacement {
    /// The Karger ring with virtual nodes.
    Ring(Ring),
    /// Weighted highest random weight.
    Rendezvous(Rendezvous),
    /// Jump consistent hash (buckets in join order).
    Jump(Jump),
    /// MementoHash: jump with arbitrary removals.
    Memento(Memento),
    /// Google's Maglev table with Envoy's weighted fill.
    Maglev(Maglev),
    /// Multi-probe consistent hashing.
    MultiProbe(MultiProbe),
    /// Redis Cluster's hash slots.
    Slots(Slots),
}

/// Calls `$body` with `$p` bound to the inner placement of any variant.
macro_rules! each {
    ($self:expr, $p:ident => $body:expr) => {
        match $self {
            AnyPlacement::Ring($p) => $body,
            AnyPlacement::Rendezvous($p) => $body,
            AnyPlacement::Jump($p) => $body,
            AnyPlacement::Memento($p) => $body,
            AnyPlacement::Maglev($p) => $body,
            AnyPlacement::MultiProbe($p) => $body,
            AnyPlacement::Slots($p) => $body,
        }
    };
}

/// Wraps a new snapshot of the same variant.
macro_rules! rewrap {
    ($self:expr, $p:ident => $body:expr) => {
        match $self {
            AnyPlacement::Ring($p) => $body.map(AnyPlacement::Ring),
            AnyPlacement::Rendezvous($p) => $body.map(AnyPlacement::Rendezvous),
            AnyPlacement::Jump($p) => $body.map(AnyPlacement::Jump),
            AnyPlacement::Memento($p) => $body.map(AnyPlacement::Memento),
            AnyPlacement::Maglev($p) => $body.map(AnyPlacement::Maglev),
            AnyPlacement::MultiProbe($p) => $body.map(AnyPlacement::MultiProbe),
            AnyPlacement::Slots($p) => $body.map(AnyPlacement::Slots),
        }
    };
}

/// The parameters that only some algorithms read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// Ring: virtual nodes per unit of weight.
    pub vnodes: u32,
    /// Ring: the hash of points.
    pub hash: StableHash,
    /// Maglev: the lookup table size (a prime).
    pub table_size: u64,
    /// Multi-probe: probes per key.
    pub probes: u32,
}

impl Params {
    /// Every algorithm's default.
    pub const DEFAULT: Params = Params {
        vnodes: crate::ring::DEFAULT_VNODES,
        hash: StableHash::Xxh3,
        table_size: Maglev::DEFAULT_TABLE_SIZE,
        probes: MultiProbe::DEFAULT_PROBES,
    };
}

impl AnyPlacement {
    /// Builds `algorithm` over `nodes`. Their order matters only to jump
    /// and memento, whose buckets follow it (join order); every other
    /// algorithm is independent of it.
    pub fn build(algorithm: Algorithm, nodes: Vec<Node>, params: Params) -> Result<Self, Error> {
        let table = NodeTable::new;
        Ok(match algorithm {
            Algorithm::Ring => {
                Self::Ring(Ring::from_table(table(nodes)?, params.vnodes, params.hash)?)
            }
            Algorithm::Rendezvous => Self::Rendezvous(Rendezvous::from_table(table(nodes)?)),
            Algorithm::Jump => Self::Jump(Jump::new(nodes)?),
            Algorithm::Memento => Self::Memento(Memento::new(nodes)?),
            Algorithm::Maglev => {
                Self::Maglev(Maglev::from_table(table(nodes)?, params.table_size)?)
            }
            Algorithm::MultiProbe => {
                Self::MultiProbe(MultiProbe::from_table(table(nodes)?, params.probes)?)
            }
            Algorithm::Slots => Self::Slots(Slots::from_table(table(nodes)?)?),
        })
    }

    /// The algorithm of this snapshot.
    pub fn algorithm(&self) -> Algorithm {
        match self {
            AnyPlacement::Ring(_) => Algorithm::Ring,
            AnyPlacement::Rendezvous(_) => Algorithm::Rendezvous,
            AnyPlacement::Jump(_) => Algorithm::Jump,
            AnyPlacement::Memento(_) => Algorithm::Memento,
            AnyPlacement::Maglev(_) => Algorithm::Maglev,
            AnyPlacement::MultiProbe(_) => Algorithm::MultiProbe,
            AnyPlacement::Slots(_) => Algorithm::Slots,
        }
    }

    /// Heap bytes held by the snapshot's lookup structures (node table
    /// aside): measured for ring and maglev, computed from the layout for
    /// the others.
    pub fn heap_bytes(&self) -> usize {
        match self {
            AnyPlacement::Ring(ring) => ring.heap_bytes(),
            // One seed per node.
            AnyPlacement::Rendezvous(r) => r.len() * 8,
            // One id per bucket (memento: plus its removed buckets, none
            // in a fresh build).
            AnyPlacement::Jump(j) => j.len() * 4,
            AnyPlacement::Memento(m) => m.len() * 4,
            AnyPlacement::Maglev(m) => m.heap_bytes(),
            // One point and one id per node.
            AnyPlacement::MultiProbe(m) => m.len() * 12,
            // The slot table: one u16 per slot.
            AnyPlacement::Slots(_) => crate::SLOT_COUNT * 2,
        }
    }

    /// The ring, when this is one (for ring-only views such as exact arcs).
    pub fn as_ring(&self) -> Option<&Ring> {
        match self {
            AnyPlacement::Ring(ring) => Some(ring),
            _ => None,
        }
    }
}

impl Placement for AnyPlacement {
    #[inline]
    fn owner(&self, hash: u64) -> Option<NodeId> {
        each!(self, p => Placement::owner(p, hash))
    }

    fn replicas_into(&self, hash: u64, n: usize, out: &mut Vec<NodeId>) {
        each!(self, p => Placement::replicas_into(p, hash, n, out))
    }

    fn nodes(&self) -> &NodeTable {
        each!(self, p => Placement::nodes(p))
    }

    fn owners_into(&self, hashes: &[u64], out: &mut Vec<NodeId>) {
        each!(self, p => Placement::owners_into(p, hashes, out))
    }

    fn with_node(&self, node: Node) -> Result<Self, Error> {
        rewrap!(self, p => Placement::with_node(p, node))
    }

    fn without_node(&self, name: &str) -> Result<Self, Error> {
        rewrap!(self, p => Placement::without_node(p, name))
    }
}
