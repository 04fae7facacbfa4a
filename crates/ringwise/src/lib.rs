#![doc = include_str!("../../../README.md")]

mod any;
mod bounded;
pub mod cluster;
mod error;
pub mod hash;
mod jump;
mod keyed;
mod live;
mod maglev;
mod memento;
mod multiprobe;
mod node;
mod placement;
mod rendezvous;
mod ring;
mod slots;

pub use any::{AnyPlacement, Params};
pub use bounded::{Bounded, Lease};
pub use cluster::{Algorithm, ClusterSpec};
pub use error::Error;
pub use hash::{KeyHasher, StableHash};
pub use jump::{Jump, jump_consistent_hash, replica_key};
pub use keyed::Keyed;
pub use live::{Live, Snapshot};
pub use maglev::Maglev;
pub use memento::Memento;
pub use multiprobe::MultiProbe;
pub use node::{MAX_NAME_LEN, MAX_WEIGHT, Node, NodeId, NodeTable};
pub use placement::Placement;
pub use rendezvous::Rendezvous;
pub use ring::{DEFAULT_VNODES, NodeStats, Ring, RingBuilder, RingStats, point_count};
pub use slots::{RedisSlot, SLOT_COUNT, Slots, key_slot};

/// Most virtual nodes per unit of weight.
pub const MAX_VNODES: u32 = 1_000_000;

/// Most points one ring may hold (2^28: 4 GiB of points would not fit the
/// `u32` index, and 3 GiB of RAM per snapshot is already a mistake).
pub const MAX_POINTS: u64 = 1 << 28;
