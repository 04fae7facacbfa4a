//! The algorithms, and the one registry that names them.
//!
//! Each algorithm lives in its own file under `algo/` and answers
//! `u64 → NodeId` through [`Placement`]. The `registry!` invocation below
//! is the only list of them: the [`Algorithm`] enum, [`Algorithm::ALL`], the
//! names (`Display`, `FromStr`, [`Algorithm::NAMES`]), the [`AnyPlacement`]
//! enum and its dispatch all follow from it (like twemproxy's `DIST_CODEC`
//! X-macro). Adding an algorithm is: its module with `impl Placement` and
//! `impl Registered` (`algo/params.rs`: its `READS` and its `pin`), one
//! line here, its row in the conformance suite's `promises`
//! (`tests/conformance.rs` runs every property over `Algorithm::ALL` and
//! fails for an algorithm without a row), its tests.
//!
//! `AnyPlacement` is an enum rather than `Box<dyn Placement>` so lookups
//! stay free of vtable calls and membership changes, which return `Self`,
//! stay available to code that picks the algorithm at run time (a cluster
//! file, `--algo`).

use std::fmt;
use std::str::FromStr;

use crate::Error;
use crate::hash::{HashTag, StableHash};
use crate::node::{Node, NodeId, NodeTable};
use crate::placement::Placement;

pub(crate) mod anchor;
pub(crate) mod binomial;
mod bucket_fn;
pub(crate) mod buckets;
pub(crate) mod cassandra;
pub(crate) mod dalli;
pub(crate) mod dx;
pub(crate) mod envoy_rendezvous;
pub(crate) mod envoy_ring;
mod flavour;
pub(crate) mod fliphash;
pub(crate) mod go_redis;
pub(crate) mod groupcache;
pub(crate) mod grpc_ring;
pub(crate) mod haproxy;
mod join_order;
pub(crate) mod jump;
pub(crate) mod jumpback;
pub(crate) mod ketama;
pub(crate) mod maglev;
pub(crate) mod memento;
pub(crate) mod multiprobe;
pub(crate) mod nginx;
mod owners;
mod params;
pub(crate) mod php_memcache;
pub(crate) mod redis_rb;
pub(crate) mod removals;
pub(crate) mod rendezvous;
pub(crate) mod ring;
pub(crate) mod slots;
pub(crate) mod varnish_shard;

use anchor::Anchor;
use binomial::Binomial;
use cassandra::Tokens;
use dalli::Dalli;
use dx::Dx;
use envoy_rendezvous::EnvoyRendezvous;
use envoy_ring::EnvoyRing;
use fliphash::FlipHash;
use go_redis::GoRedis;
use groupcache::Groupcache;
use grpc_ring::GrpcRing;
use haproxy::Haproxy;
use jump::Jump;
use jumpback::JumpBack;
use ketama::Ketama;
use maglev::Maglev;
use memento::Memento;
use multiprobe::MultiProbe;
use nginx::Nginx;
use php_memcache::PhpMemcache;
use redis_rb::RedisRb;
use rendezvous::Rendezvous;
use ring::{Ring, RingView};
use slots::Slots;
use varnish_shard::VarnishShard;

use crate::param::{Param, Params};
pub use params::{Given, Layout};
pub(crate) use params::{Pinned, Registered};

/// Declares every algorithm once: `/// doc` then `Variant(Type) = "name";`.
macro_rules! registry {
    ($($(#[$doc:meta])* $variant:ident($ty:ty) = $name:literal;)+) => {
        /// Which placement algorithm a cluster uses.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[non_exhaustive]
        pub enum Algorithm {
            $($(#[$doc])* $variant,)+
        }

        /// A placement snapshot of any built-in algorithm.
        #[derive(Debug, Clone)]
        #[non_exhaustive]
        pub enum AnyPlacement {
            $($(#[$doc])* $variant($ty),)+
        }

        impl Algorithm {
            /// Every built-in algorithm, in documentation order.
            pub const ALL: &'static [Algorithm] = &[$(Algorithm::$variant,)+];

            /// Their names, in the same order.
            pub const NAMES: &'static [&'static str] = &[$($name,)+];

            /// The stable name (`ring`, `jump`, ...), as in cluster files.
            pub fn name(self) -> &'static str {
                match self {
                    $(Algorithm::$variant => $name,)+
                }
            }

            /// The key hash used when a cluster names none: `xxh3`, except
            /// for `slots`, whose keys go through Redis's CRC16 with tags,
            /// and the compatibility flavours, which use their peer's.
            pub fn default_hash(self) -> StableHash {
                match self {
                    $(Algorithm::$variant => <$ty as Registered>::default_hash(),)+
                }
            }

            /// [`Algorithm::default_hash`] given the parameters: a ketama
            /// flavour's client hashes keys its own way (twemproxy with
            /// `fnv1a64-twemproxy`).
            pub fn default_hash_with(self, params: &Params) -> StableHash {
                match self {
                    $(Algorithm::$variant => <$ty as Registered>::default_hash_with(params),)+
                }
            }

            /// The parameters this algorithm reads; it ignores the others.
            /// Every algorithm reads the hash.
            pub fn reads(self) -> &'static [Param] {
                match self {
                    $(Algorithm::$variant => <$ty as Registered>::READS,)+
                }
            }

            /// The hash tag its peer always applies, which a cluster that
            /// sets none gets: redis-rb's `^{}` ([`HashTag::REDIS_RB`]) and
            /// go-redis's `{}`; `None` for the others.
            pub fn default_hash_tag(self) -> Option<HashTag> {
                match self {
                    $(Algorithm::$variant => <$ty as Registered>::HASH_TAG,)+
                }
            }

            /// Whether a cluster file's `removed` list (buckets whose node
            /// left, in removal order) means something to this algorithm:
            /// memento, anchor and dx, which let any bucket leave.
            pub fn reads_removed(self) -> bool {
                match self {
                    $(Algorithm::$variant => <$ty as Registered>::REMOVES_ANY,)+
                }
            }

            /// Whether its snapshots are rings of points
            /// ([`AnyPlacement::as_ring`]): ring, ketama, nginx,
            /// envoy-ring, grpc-ring, cassandra, varnish-shard. Known without building
            /// one.
            pub fn ring_shaped(self) -> bool {
                match self {
                    $(Algorithm::$variant => <$ty as Registered>::RING_SHAPED,)+
                }
            }

            /// Refuses a key hash this algorithm cannot spread keys with:
            /// `redis-crc16`'s 14-bit slot numbers mean something only to
            /// `slots` (on a ring they all fall before one point, so one
            /// node would own every key).
            pub fn check_hash(self, hash: StableHash) -> Result<(), Error> {
                let accepted = match self {
                    $(Algorithm::$variant => <$ty as Registered>::accepts_hash(hash),)+
                };
                if accepted {
                    return Ok(());
                }
                Err(Error::InvalidParameter {
                    algorithm: self.name(),
                    parameter: "hash",
                    value: hash.name().into(),
                    expected: "a 64-bit hash such as xxh3: redis-crc16 gives 14-bit Redis \
                               slot numbers, which only algorithm slots can use",
                })
            }
        }

        impl AnyPlacement {
            /// Builds `algorithm` over `nodes`. Their order matters only to
            /// jump, jumpback, binomial, fliphash and memento, whose buckets
            /// follow it (join order).
            /// Refuses a hash the algorithm cannot use
            /// ([`Algorithm::check_hash`]).
            pub fn build(
                algorithm: Algorithm,
                nodes: Vec<Node>,
                params: &Params,
            ) -> Result<Self, Error> {
                AnyPlacement::build_with(algorithm, nodes, params, &Layout::new())
            }

            /// [`AnyPlacement::build`] with the points, tokens or slots that
            /// `layout` fixes for some nodes (`ring`, `cassandra` and
            /// `slots` read it; the others refuse a non-empty one).
            pub fn build_with(
                algorithm: Algorithm,
                nodes: Vec<Node>,
                params: &Params,
                layout: &Layout,
            ) -> Result<Self, Error> {
                AnyPlacement::build_removed(algorithm, nodes, params, layout, &[])
            }

            /// [`AnyPlacement::build_with`] of a memento, anchor or dx
            /// cluster some of whose buckets were removed: `removed` holds
            /// their numbers in the order their nodes left, and `nodes`
            /// (in bucket order) fill the other buckets of
            /// `0..nodes + removed`. The snapshot is the one a build over
            /// every bucket followed by those removals makes, so the next
            /// join takes the last of them back. Other algorithms refuse a
            /// non-empty `removed` ([`Error::InvalidLayout`]), as do
            /// entries out of range, repeated, or removing every bucket.
            /// Cost: the build's plus O(m log m + capacity) for m removals.
            pub fn build_removed(
                algorithm: Algorithm,
                nodes: Vec<Node>,
                params: &Params,
                layout: &Layout,
                removed: &[u32],
            ) -> Result<Self, Error> {
                algorithm.check_hash(params.hash)?;
                // A set of the names, not a scan of the nodes per given
                // layout (O(N²) when every node has its points).
                let names: std::collections::HashSet<&str> = match layout.is_empty() {
                    true => std::collections::HashSet::new(),
                    false => nodes.iter().map(|n| n.name.as_str()).collect(),
                };
                if let Some(name) = layout.keys().find(|&k| !names.contains(k.as_str())) {
                    return Err(Error::InvalidLayout {
                        node: Some(name.clone()),
                        message: "no such member: points, tokens or slots were given \
                                  for a node that is not in the cluster"
                            .into(),
                    });
                }
                Ok(match algorithm {
                    $(Algorithm::$variant => AnyPlacement::$variant(
                        <$ty as Registered>::build_removed(nodes, params, layout, removed)?,
                    ),)+
                })
            }

            /// The algorithm of this snapshot.
            pub fn algorithm(&self) -> Algorithm {
                match self {
                    $(AnyPlacement::$variant(_) => Algorithm::$variant,)+
                }
            }

            /// The ring, when this is one of the ring-shaped placements
            /// ([`Algorithm::ring_shaped`]), for ring-only views such as
            /// exact arcs and zone-aware replicas. Ask once, not per key.
            pub fn as_ring(&self) -> Option<&dyn RingView> {
                match self {
                    $(AnyPlacement::$variant(p) => <$ty as Registered>::as_ring(p),)+
                }
            }

            /// The slots of its lookup table: 16384 for slots, the table
            /// size for maglev; `None` for the others.
            pub fn table_size(&self) -> Option<u64> {
                match self {
                    $(AnyPlacement::$variant(p) => <$ty as Registered>::table_size(p),)+
                }
            }

            /// What a cluster file must keep to rebuild it exactly.
            pub(crate) fn pin(&self) -> Result<Pinned, Error> {
                match self {
                    $(AnyPlacement::$variant(p) => <$ty as Registered>::pin(p),)+
                }
            }
        }

        impl Placement for AnyPlacement {
            #[inline]
            fn owner(&self, hash: u64) -> Option<NodeId> {
                match self {
                    $(AnyPlacement::$variant(p) => p.owner(hash),)+
                }
            }

            fn replicas_into(&self, hash: u64, n: usize, out: &mut Vec<NodeId>) {
                match self {
                    $(AnyPlacement::$variant(p) => p.replicas_into(hash, n, out),)+
                }
            }

            fn nodes(&self) -> &NodeTable {
                match self {
                    $(AnyPlacement::$variant(p) => p.nodes(),)+
                }
            }

            fn owners_into(&self, hashes: &[u64], out: &mut Vec<NodeId>) {
                match self {
                    $(AnyPlacement::$variant(p) => p.owners_into(hashes, out),)+
                }
            }

            fn heap_bytes(&self) -> usize {
                match self {
                    $(AnyPlacement::$variant(p) => p.heap_bytes(),)+
                }
            }

            fn with_node(&self, node: Node) -> Result<Self, Error> {
                match self {
                    $(AnyPlacement::$variant(p) => p.with_node(node).map(AnyPlacement::$variant),)+
                }
            }

            fn without_node(&self, name: &str) -> Result<Self, Error> {
                match self {
                    $(AnyPlacement::$variant(p) => {
                        p.without_node(name).map(AnyPlacement::$variant)
                    })+
                }
            }
        }
    };
}

registry! {
    /// [`crate::Ring`]: the Karger ring with virtual nodes (the default).
    Ring(Ring) = "ring";
    /// [`crate::Rendezvous`]: weighted highest random weight.
    Rendezvous(Rendezvous) = "rendezvous";
    /// [`crate::Jump`]: Lamping & Veach; buckets in join order.
    Jump(Jump) = "jump";
    /// [`crate::Memento`]: jump plus a table of removed buckets.
    Memento(Memento) = "memento";
    /// [`crate::JumpBack`]: Ertl's JumpBackHash, O(1); buckets in join order.
    JumpBack(JumpBack) = "jumpback";
    /// [`crate::Binomial`]: Coluzzi et al.'s BinomialHash; join order.
    Binomial(Binomial) = "binomial";
    /// [`crate::FlipHash`]: Masson & Lee's FlipHash, O(1); join order.
    FlipHash(FlipHash) = "fliphash";
    /// [`crate::Anchor`]: AnchorHash, a fixed capacity, any node can leave.
    Anchor(Anchor) = "anchor";
    /// [`crate::Dx`]: DxHash, pseudo-random probes of a fixed capacity.
    Dx(Dx) = "dx";
    /// [`crate::Maglev`]: Google's lookup table, Envoy's weighted fill.
    Maglev(Maglev) = "maglev";
    /// [`crate::MultiProbe`]: one point per node, k probes per key.
    MultiProbe(MultiProbe) = "multiprobe";
    /// [`crate::Slots`]: Redis Cluster's 16384 hash slots.
    Slots(Slots) = "slots";
    /// [`crate::Ketama`]: the memcached clients' ring, per client flavour.
    Ketama(Ring<Ketama>) = "ketama";
    /// [`crate::Nginx`]: nginx's `hash $key consistent`.
    Nginx(Ring<Nginx>) = "nginx";
    /// [`crate::EnvoyRing`]: Envoy's `RING_HASH` balancer.
    EnvoyRing(Ring<EnvoyRing>) = "envoy-ring";
    /// [`crate::GrpcRing`]: gRPC's `ring_hash` (Envoy's ring, sizes capped).
    GrpcRing(Ring<GrpcRing>) = "grpc-ring";
    /// [`crate::Tokens`]: a Cassandra ring of Murmur3 tokens.
    Cassandra(Ring<Tokens>) = "cassandra";
    /// [`crate::EnvoyRendezvous`]: Envoy's `rendezvous_hash` balancer.
    EnvoyRendezvous(EnvoyRendezvous) = "envoy-rendezvous";
    /// [`crate::VarnishShard`]: Varnish's `directors.shard()` circle.
    VarnishShard(Ring<VarnishShard>) = "varnish-shard";
    /// [`crate::Haproxy`]: HAProxy's `hash-type consistent` (nearest point).
    Haproxy(Haproxy) = "haproxy";
    /// [`crate::Dalli`]: Dalli's continuum (Ruby; the greatest point `<=`).
    Dalli(Ring<Dalli>) = "dalli";
    /// [`crate::RedisRb`]: redis-rb's `Redis::Distributed` hash ring.
    RedisRb(Ring<RedisRb>) = "redis-rb";
    /// [`crate::Groupcache`]: groupcache's `consistenthash` (Go).
    Groupcache(Ring<Groupcache>) = "groupcache";
    /// [`crate::PhpMemcache`]: pecl memcache's consistent strategy (PHP).
    PhpMemcache(PhpMemcache) = "php-memcache";
    /// [`crate::GoRedis`]: go-redis `Ring`'s rendezvous (go-rendezvous).
    GoRedis(GoRedis) = "go-redis";
}

impl AnyPlacement {
    /// Each node's exact share of the keys where the placement has arcs to
    /// sum: a ring's, and an HAProxy tree's in successor form; `None`
    /// where shares can only be sampled. O(P + N).
    pub fn exact_stats(&self) -> Option<crate::stats::PlacementStats> {
        match self {
            AnyPlacement::Haproxy(tree) => Some(tree.stats()),
            AnyPlacement::PhpMemcache(php) => Some(php.stats()),
            _ => self.as_ring().map(|ring| ring.stats()),
        }
    }

    /// True for the placements whose nodes' points can be given (a cluster
    /// file's `points` or `tokens`): ring and cassandra. The other rings
    /// make every point from the names.
    pub fn keeps_points(&self) -> bool {
        matches!(self, AnyPlacement::Ring(_) | AnyPlacement::Cassandra(_))
    }

    /// `node` joins at the ring positions `points` (e.g. from
    /// [`crate::Allocator::allocate`]; a Cassandra token `t` is the
    /// position [`crate::token_point`]`(t)`). Only where
    /// [`AnyPlacement::keeps_points`]. O(P).
    pub fn with_node_points(&self, node: Node, points: Vec<u64>) -> Result<Self, Error> {
        match self {
            AnyPlacement::Ring(r) => r.with_node_points(node, points).map(AnyPlacement::Ring),
            AnyPlacement::Cassandra(r) => r
                .with_node_points(node, points)
                .map(AnyPlacement::Cassandra),
            other => Err(Error::Unsupported {
                algorithm: other.algorithm().name(),
                operation: format!("give node {:?} chosen points", node.name),
                reason: "only ring and cassandra keep each node's points (`points` or \
                         `tokens` in a cluster file); this one makes every point from the \
                         node names",
                node: None,
            }),
        }
    }

    /// The node `name` with its points replaced by `points` (weight and
    /// zone kept): one point moved by [`crate::Allocator::rebalance`].
    /// Only where [`AnyPlacement::keeps_points`]. O(P).
    pub fn with_points_of(&self, name: &str, points: Vec<u64>) -> Result<Self, Error> {
        let node = self
            .nodes()
            .id(name)
            .and_then(|id| self.nodes().get(id))
            .cloned()
            .ok_or_else(|| Error::UnknownNode { name: name.into() })?;
        if !self.keeps_points() {
            return self.with_node_points(node, points);
        }
        self.without_node(name)?.with_node_points(node, points)
    }
}

/// The first algorithm of the registry, the ring.
impl Default for Algorithm {
    fn default() -> Self {
        Algorithm::ALL[0]
    }
}

impl FromStr for Algorithm {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self, Error> {
        Algorithm::ALL
            .iter()
            .copied()
            .find(|a| a.name() == name)
            .ok_or_else(|| Error::UnknownAlgorithm {
                name: name.into(),
                known: Algorithm::NAMES,
            })
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_all() {
        assert_eq!(Algorithm::ALL.len(), Algorithm::NAMES.len());
        for (&a, &name) in Algorithm::ALL.iter().zip(Algorithm::NAMES) {
            assert_eq!(a.name(), name);
            assert_eq!(name.parse::<Algorithm>(), Ok(a));
            assert_eq!(a.to_string(), name);
        }
        assert!(matches!(
            "ketama?".parse::<Algorithm>(),
            Err(Error::UnknownAlgorithm { .. })
        ));
    }

    #[test]
    fn every_algorithm_builds_and_reports_itself() {
        let nodes: Vec<Node> = ["a", "b", "c"].map(Node::new).into();
        for &a in Algorithm::ALL {
            let p = AnyPlacement::build(a, nodes.clone(), &Params::DEFAULT).expect("builds");
            assert_eq!(p.algorithm(), a);
            assert_eq!(p.len(), 3);
        }
    }
}
