//! Consistent hashing: which node owns a key, so that adding or losing a
//! node moves only about `1/N` of the keys instead of almost all of them
//! (`hash(key) % N`).
//!
//! # Concepts, in the order you meet them
//!
//! 1. **Nodes.** A [`Node`] is a stable name, a weight and an optional zone.
//!    A [`NodeTable`] validates them and sorts them by name, so a node's
//!    dense [`NodeId`] (its rank) never depends on the order you gave them in.
//! 2. **Placements.** Every algorithm is an immutable snapshot implementing
//!    [`Placement`]: `owner(u64 hash) -> Option<NodeId>`, replicas into a
//!    caller's buffer, the node table, and membership changes that return a
//!    new snapshot and leave the old one untouched. Lookups take `&self`,
//!    never allocate and never fail; `None` means "no nodes".
//! 3. **Keys.** [`Keyed`] pairs a placement with a [`StableHash`] (or any
//!    [`KeyHasher`]) and turns key bytes into node names. It is the one
//!    key → node path for every algorithm, with a batch call
//!    ([`Keyed::owners_into`]) for many keys at once.
//! 4. **Choosing at run time.** [`Algorithm`] names every algorithm (one
//!    registry); [`AnyPlacement`] holds any of them; [`ClusterSpec`] (a TOML
//!    cluster file with the default `cluster-file` feature) builds one.
//! 5. **Layers.** [`Bounded`] caps every node's load at `(1+ε)` times its
//!    share over any placement; [`Live`] publishes the current snapshot to
//!    many readers without locks.
//!
//! # Algorithms
//!
//! | type | `owner` cost | moves on join / leave | notes |
//! |---|---|---|---|
//! | [`Ring`] | O(1) expected | only to / from the changed node | points from a [`PointScheme`]; weights; zones |
//! | [`Rendezvous`] | O(N) | only to / from the changed node | weights by the log method |
//! | [`Jump`] | O(ln N) | optimal; only the last node can leave | no memory, no weights |
//! | [`Memento`] | O(ln N) + a walk over removed buckets: about 2 ln(n/w) after removals from the front, Θ(n/w) in other orders ([`Memento::expected_steps`]) | optimal; any node can leave | no weights |
//! | [`JumpBack`] | O(1) expected | as jump | Hash4j's JumpBackHash; no weights |
//! | [`Binomial`] | O(1) | as jump | the authors' BinomialHash; no weights |
//! | [`FlipHash`] | O(1) expected | as jump | DataDog's FlipHash; no weights |
//! | [`Anchor`] | O(1 + ln(capacity/N)) expected ([`Anchor::expected_steps`]) | optimal; any node can leave | fixed capacity; no weights |
//! | [`Dx`] | capacity / N draws ([`Dx::expected_steps`]) | optimal; any node can leave | fixed capacity; no weights |
//! | [`Maglev`] | O(1), one read | near optimal for N ≪ M | Envoy's weighted fill |
//! | [`MultiProbe`] | O(k log N) | only to / from the changed node | one point per node |
//! | [`Slots`] | O(1), one read | exactly the new node's slots | Redis Cluster; explicit tables |
//!
//! The compatibility flavours put keys exactly where deployed clients do.
//! Each is a [`PointScheme`] of the same [`Ring`] (one lookup code for all),
//! except Envoy's rendezvous, which scores every host:
//!
//! | algorithm | type | peer |
//! |---|---|---|
//! | `ketama` | `Ring<`[`Ketama`]`>` | libmemcached, spymemcached, libketama, twemproxy, uhashring ([`Flavor`]) |
//! | `nginx` | `Ring<`[`Nginx`]`>` | nginx `hash $key consistent` |
//! | `envoy-ring` | `Ring<`[`EnvoyRing`]`>` | Envoy `RING_HASH` (Envoy's `MAGLEV` is [`Maglev`]) |
//! | `grpc-ring` | `Ring<`[`GrpcRing`]`>` | gRPC `ring_hash` (Envoy's ring, sizes capped at 4096) |
//! | `cassandra` | `Ring<`[`Tokens`]`>` | Cassandra's Murmur3Partitioner and SimpleStrategy |
//! | `envoy-rendezvous` | [`EnvoyRendezvous`] (not a ring: O(N) scores) | Envoy `rendezvous_hash` |
//!
//! They follow their peer even where the peer depends on the order servers
//! are listed in (ketama's ties, Envoy's point counts); ringwise's own
//! algorithms never do.
//!
//! ## A ring (the seed recipe)
//!
//! ```
//! use ringwise::{Keyed, Node, Placement, Ring, StableHash};
//!
//! let ring = Ring::builder()
//!     .hasher(StableHash::Md5)
//!     .vnodes(100)
//!     .nodes(["cache-a", "cache-b", "cache-c"].map(Node::new))
//!     .build()?;
//! let keys = Keyed::new(ring, StableHash::Md5);
//! assert_eq!(keys.locate("user:42"), Some("cache-a"));
//! assert_eq!(keys.replicas("user:42", 2), ["cache-a", "cache-b"]);
//!
//! // A new snapshot; the old one is unchanged and still answers.
//! let smaller = keys.placement().without_node("cache-a")?;
//! let smaller = Keyed::new(smaller, StableHash::Md5);
//! assert_eq!(smaller.locate("user:42"), Some("cache-b"));
//! # Ok::<(), ringwise::Error>(())
//! ```
//!
//! A ring can also be built from explicit points with a tie rule, which is
//! how deployed rings (ketama, Cassandra tokens) are expressed:
//!
//! ```
//! use ringwise::{Explicit, Node, Placement, Ring, Tie};
//!
//! let ring = Ring::builder()
//!     .scheme(Explicit)
//!     .tie(Tie::FirstListed)
//!     .node_points(Node::new("b"), [100, 300])
//!     .node_points(Node::new("a"), [100, 200])
//!     .build()?;
//! let b = ring.nodes().id("b");
//! assert_eq!(ring.owner(50), b); // point 100 is shared: "b" was listed first
//! assert_eq!(ring.owner(250), b);
//! assert_eq!(ring.owner(301), b); // wraps to the first point
//! # Ok::<(), ringwise::Error>(())
//! ```
//!
//! ## Rendezvous, jump, memento, anchor, dx, maglev, multi-probe, slots
//!
//! All are [`Placement`]s over the same node table, so the same code runs
//! any of them; [`AnyPlacement`] picks one by name:
//!
//! ```
//! use ringwise::{Algorithm, AnyPlacement, Keyed, Node, Params, Placement};
//!
//! let nodes: Vec<Node> = ["a", "b", "c"].map(Node::new).into();
//! for &algorithm in Algorithm::ALL {
//!     let placement = AnyPlacement::build(algorithm, nodes.clone(), &Params::DEFAULT)?;
//!     let keys = Keyed::new(placement, algorithm.default_hash());
//!     let owner = keys.locate("user:42").expect("three nodes");
//!     assert!(["a", "b", "c"].contains(&owner), "{algorithm}");
//! }
//! # Ok::<(), ringwise::Error>(())
//! ```
//!
//! ## Many keys at once
//!
//! ```
//! use ringwise::{Keyed, Node, Ring, StableHash};
//!
//! let ring = Ring::builder().nodes(["a", "b"].map(Node::new)).build()?;
//! let keys = Keyed::new(ring, StableHash::Xxh3);
//! let batch = ["user:1", "user:2", "user:3"];
//! let mut owners = Vec::new();
//! keys.owners_into(&batch, &mut owners); // hashes a block, then resolves it
//! assert_eq!(owners.len(), 3);
//! assert_eq!(owners[1], keys.owner("user:2").expect("two nodes"));
//! # Ok::<(), ringwise::Error>(())
//! ```
//!
//! # Determinism
//!
//! Placement depends only on the algorithm, the hash, the parameters and the
//! node set: never on insertion order (except jump, memento, anchor and dx,
//! whose bucket order is the join order, and the list-order [`Tie`] rules), platform,
//! process or Rust version. Nothing here uses `std::hash::Hash`,
//! `DefaultHasher` or `RandomState`.
//!
//! # Errors
//!
//! Every constructor validates and returns one [`Error`] that names the
//! value and says how to fix it; nothing panics on any input.

mod algo;
mod allocate;
mod budget;
mod cluster;
mod error;
mod hash;
mod layers;
mod movement;
mod node;
mod param;
mod placement;
mod stats;

pub use algo::anchor::Anchor;
pub use algo::binomial::{Binomial, binomial_hash};
pub use algo::buckets::replica_key;
pub use algo::cassandra::Tokens;
pub use algo::cassandra::cql::{
    CqlError, CqlType, MAX_NUMBER_DIGITS, decode_hex_into, partition_key_into,
};
pub use algo::cassandra::nts::{NetworkTopology, Walk};
pub use algo::dalli::Dalli;
pub use algo::dx::Dx;
pub use algo::envoy_rendezvous::EnvoyRendezvous;
pub use algo::envoy_ring::EnvoyRing;
pub use algo::fliphash::{FlipHash, flip_hash};
pub use algo::go_redis::GoRedis;
pub use algo::groupcache::Groupcache;
pub use algo::grpc_ring::GrpcRing;
pub use algo::haproxy::Haproxy;
pub use algo::haproxy::balance::Balanced;
pub use algo::jump::{Jump, jump_consistent_hash};
pub use algo::jumpback::{JumpBack, jump_back_hash};
pub use algo::ketama::Ketama;
pub use algo::maglev::Maglev;
pub use algo::memento::Memento;
pub use algo::multiprobe::MultiProbe;
pub use algo::nginx::Nginx;
pub use algo::php_memcache::PhpMemcache;
pub use algo::redis_rb::RedisRb;
pub use algo::rendezvous::Rendezvous;
pub use algo::ring::{
    DEFAULT_VNODES, Explicit, Members, PointScheme, Ring, RingBuilder, RingView, Tie, Vnodes,
    Width, point_count,
};
pub use algo::slots::Slots;
pub use algo::varnish_shard::VarnishShard;
pub use algo::{Algorithm, AnyPlacement, Given, Layout};
pub use allocate::{Allocator, Balance, MAX_ALLOCATED, MAX_ALLOCATION_REPLICAS, Relocation};
pub use budget::{MAX_POINTS, MAX_POINTS_CEILING, MAX_VNODES, PEAK_BYTES_PER_POINT};
pub use cluster::ClusterSpec;
pub use cluster::parts::{Member, MemberField, Part, Rejected, Settings, SlotRange};
pub use error::Error;
pub use hash::{
    KeyHasher, RedisSlot, SLOT_COUNT, StableHash, cassandra_token, composite_partition_key, djb2,
    full_hash, key_slot, point_token, sdbm, token_point, wt6,
};
pub use hash::{MD5_LANES, md5_blocks, md5_prefix_batch, md5_prefix_x8, md5_x8};
pub use layers::{Bounded, HashTag, Keyed, Lease, Live, Snapshot};
pub use movement::{DEFAULT_SAMPLES, Flow, Method, MovedRange, Movement, diff, diff_sampled};
pub use node::{
    MAX_NAME_LEN, MAX_NODE_ID, MAX_NODES, MAX_WEIGHT, MIN_WEIGHT, Node, NodeId, NodeTable,
};
pub use param::{
    DEFAULT_RING_SIZE_CAP, Flavor, InSimulate, MAX_CAPACITY, MIN_DEFAULT_CAPACITY, Param,
    ParamType, ParamValue, Params, SlotLayout,
};
pub use placement::Placement;
#[doc(hidden)]
pub use stats::RingStats;
pub use stats::{NodeStats, PlacementStats};

/// The deployed key hashes and their places on the circle: 32-bit cells
/// (ketama, nginx) and signed tokens (Cassandra). See [`StableHash`].
pub mod wire {
    pub use crate::hash::{
        cassandra_token, cell_key, cell_point, cell_value, composite_partition_key, crc32,
        fnv1a64_twemproxy, md5_le32, md5_le32x4, point_token, token_point, varnish_key,
        varnish_req_hash,
    };
}

// The README's and the guides' examples are compiled and run as doc tests
// too (`docs/*.md`; a new guide gets a line here, and the docs test in
// crates/cli/tests/docs.rs fails until it has). docs/etcd.md uses
// ringwise-etcd, so it is that crate's doctest instead.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(doctest)]
#[doc = include_str!("../../../docs/python.md")]
#[doc = include_str!("../../../docs/algorithms.md")]
#[doc = include_str!("../../../docs/cluster-file.md")]
#[doc = include_str!("../../../docs/cli.md")]
#[doc = include_str!("../../../docs/memcached.md")]
#[doc = include_str!("../../../docs/nginx.md")]
#[doc = include_str!("../../../docs/haproxy.md")]
#[doc = include_str!("../../../docs/envoy.md")]
#[doc = include_str!("../../../docs/grpc.md")]
#[doc = include_str!("../../../docs/varnish.md")]
#[doc = include_str!("../../../docs/clients.md")]
#[doc = include_str!("../../../docs/cassandra.md")]
#[doc = include_str!("../../../docs/redis-cluster.md")]
#[doc = include_str!("../../../docs/exit-codes.md")]
#[doc = include_str!("../../../docs/planning.md")]
#[doc = include_str!("../../../docs/experiments.md")]
#[doc = include_str!("../../../docs/cachebench.md")]
#[doc = include_str!("../../../docs/proxy.md")]
#[doc = include_str!("../../../docs/README.md")]
struct GuideDoctests;
