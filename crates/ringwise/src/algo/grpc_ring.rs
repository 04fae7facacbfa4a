//! `GrpcRing`: gRPC's `ring_hash` load-balancing policy.
//!
//! Source: gRFC A42 (the policy, `ring_hash_experimental`), gRFC A76
//! (`requestHashHeader`, endpoint hash keys), and grpc/grpc
//! `src/core/load_balancing/ring_hash/ring_hash.cc` (`RingHash::Ring::Ring`,
//! `RingHash::Picker::Pick`, `RingHashLbConfig`; read at commit
//! 07235094e4d84111241053925c5f19bd2616a274), checked against grpcio 1.85.1
//! by `crates/cli/tests/compat/grpc.rs`.
//!
//! How it works: gRPC's ring is Envoy's `RING_HASH` ring, so this scheme
//! SHARES [`EnvoyRing`]'s code (point counts from normalised weights with
//! two running sums, points `xxh64("<key>_<j>", seed 0)`, first point `>=`
//! the request hash): it only changes the sizes handed to it. gRPC caps
//! both sizes by the channel argument `grpc.lb.ring_hash.ring_size_cap`
//! (default 4096): the ring is built with `min(minRingSize, cap)` and
//! `min(maxRingSize, cap)`, so a `minRingSize` of 8192 still gives about
//! 4096 points. The config is checked before the cap, as gRPC does: both
//! sizes from 1 to 8388608, `minRingSize <= maxRingSize`.
//!
//! The request hash (A76): with `requestHashHeader` set (and
//! `GRPC_EXPERIMENTAL_RING_HASH_SET_REQUEST_HASH_KEY=true` in grpc-core
//! 1.85), it is `XXH64(header value, seed 0)`, ringwise's `xxh64` of the
//! key: hence the default key hash. An endpoint's hash key is its EDS
//! `hash_key` metadata when given (A76) and otherwise its first address as
//! gRPC prints it (`10.0.0.1:50051`, `[::1]:50051`): that string is the
//! ringwise node name. Weights are whole numbers (gRPC's are `uint32`); an
//! address listed twice is one endpoint whose weight is the sum (each
//! occurrence counting 1 when it has no weight), at its first position.
//!
//! Worked example: three endpoints of weight 1 and the default config
//! (min 1024, max 4096, cap 4096): `min_w = 1/3`, `scale = ceil(1024/3) ·
//! 3 = 1026`, so 342 points each, 1026 in all. With `minRingSize = 8192`
//! the capped minimum is 4096: `scale = min(1366 · 3, 4096) = 4096`.
//!
//! Cost: as [`EnvoyRing`] (at most `min(maxRingSize, cap)` points, about
//! 4096 by default), lookups as the ring's. Every membership change
//! rebuilds the ring (point counts depend on all weights and on the
//! listed order).
//!
//! Quirks: gRPC's picker walks the ring from the key's point past
//! endpoints that are in TRANSIENT_FAILURE to the first READY one (an IDLE
//! one is connected first and the call waits); for one stopped endpoint
//! that is the key's next distinct node, ringwise's second replica. gRPC's
//! lookup is ketama's binary search, equal to the ring's first point `>=`
//! the hash. It sorts points with `std::sort`, so the owner of a point two
//! endpoints share is unspecified (ringwise: the smaller name). A cap of
//! 0 would give gRPC an empty ring whose picker reads past its end: 1 is
//! the smallest cap accepted here. The cap bounds the whole ring: with more
//! endpoints than `min(maxRingSize, cap)` some endpoints get no point and
//! no request (4097 endpoints under the default cap), and the running sums
//! can end a hair above the cap, one point more (20 endpoints under a cap
//! of 8 make 9 points in grpcio too). ringwise's shared `max_ring_size`
//! defaults to Envoy's 8388608, gRPC's config to 4096: the same ring under
//! the default cap; with a larger cap, give `max_ring_size` as the service
//! config does (the importer always sets it).

use crate::Error;
use crate::algo::envoy_ring::EnvoyRing;
use crate::algo::flavour::Flavour;
use crate::algo::ketama::whole_weight;
use crate::algo::params::{DEFAULT_MAX_RING_SIZE, Param, Params};
use crate::algo::ring::{Members, PointScheme};
use crate::hash::StableHash;
use crate::node::Node;

/// gRPC's `ring_hash_experimental` sizes and its ring-size cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GrpcRing {
    min_ring_size: u64,
    max_ring_size: u64,
    ring_size_cap: u64,
}

impl GrpcRing {
    /// `minRingSize` and `maxRingSize` of the service config (each 1 to
    /// 8388608, min <= max) and the channel's `ring_size_cap` (at least 1).
    pub fn new(min_ring_size: u64, max_ring_size: u64, ring_size_cap: u64) -> Result<Self, Error> {
        let ring = GrpcRing {
            min_ring_size,
            max_ring_size,
            ring_size_cap,
        };
        ring.check()?;
        Ok(ring)
    }

    /// The configured smallest ring, before the cap.
    pub fn min_ring_size(&self) -> u64 {
        self.min_ring_size
    }

    /// The configured largest ring, before the cap.
    pub fn max_ring_size(&self) -> u64 {
        self.max_ring_size
    }

    /// The channel's ring-size cap.
    pub fn ring_size_cap(&self) -> u64 {
        self.ring_size_cap
    }

    /// The Envoy ring gRPC builds: both sizes capped.
    pub fn capped(&self) -> EnvoyRing {
        let cap = self.ring_size_cap;
        EnvoyRing::new(self.min_ring_size.min(cap), self.max_ring_size.min(cap))
            .expect("checked sizes stay valid once capped")
    }

    fn check(&self) -> Result<(), Error> {
        let refuse = |parameter, value: u64, expected| {
            Err(Error::InvalidParameter {
                algorithm: "grpc-ring",
                parameter,
                value: value.to_string(),
                expected,
            })
        };
        let sizes = 1..=DEFAULT_MAX_RING_SIZE;
        if !sizes.contains(&self.min_ring_size) {
            return refuse(
                "min_ring_size",
                self.min_ring_size,
                "minRingSize from 1 to 8388608 (gRPC's range)",
            );
        }
        if !sizes.contains(&self.max_ring_size) {
            return refuse(
                "max_ring_size",
                self.max_ring_size,
                "maxRingSize from 1 to 8388608 (gRPC's range)",
            );
        }
        if self.min_ring_size > self.max_ring_size {
            return refuse(
                "min_ring_size",
                self.min_ring_size,
                "at most max_ring_size (gRPC: \"maxRingSize cannot be smaller than minRingSize\")",
            );
        }
        if self.ring_size_cap == 0 {
            return refuse(
                "ring_size_cap",
                0,
                "a cap of at least 1 (gRPC's default is 4096)",
            );
        }
        Ok(())
    }
}

impl PointScheme for GrpcRing {
    fn validate(&self) -> Result<(), Error> {
        self.check()
    }

    fn counts(&self, members: &Members<'_>) -> Result<Vec<u64>, Error> {
        for node in members.nodes.iter() {
            whole_weight("grpc-ring", node)?;
        }
        self.capped().counts(members)
    }

    fn points(&self, node: &Node, count: u64, out: &mut Vec<u64>) -> Result<(), Error> {
        self.capped().points(node, count, out)
    }

    fn independent(&self) -> bool {
        false
    }
}

impl Flavour for GrpcRing {
    fn from_params(params: &Params) -> Result<Self, Error> {
        GrpcRing::new(
            params.min_ring_size,
            params.max_ring_size,
            params.ring_size_cap,
        )
    }

    const DEFAULT_HASH: StableHash = StableHash::Xxh64;

    const READS: &'static [Param] = &[
        Param::MinRingSize,
        Param::MaxRingSize,
        Param::RingSizeCap,
        Param::MaxPoints,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::params::Registered;
    use crate::algo::ring::Ring;
    use crate::placement::Placement;

    fn build(min: u64, max: u64, cap: u64, nodes: &[(&str, f64)]) -> Result<Ring<GrpcRing>, Error> {
        let params = Params {
            min_ring_size: min,
            max_ring_size: max,
            ring_size_cap: cap,
            ..Params::DEFAULT
        };
        let nodes = nodes.iter().map(|&(n, w)| Node::new(n).weight(w));
        Ring::<GrpcRing>::build(nodes.collect(), &params)
    }

    const THREE: [(&str, f64); 3] = [
        ("10.0.0.1:50051", 1.0),
        ("10.0.0.2:50051", 1.0),
        ("10.0.0.3:50051", 1.0),
    ];

    #[test]
    fn the_cap_bounds_both_sizes() {
        // The worked example of the module docs.
        let len = |min, max, cap| build(min, max, cap, &THREE).expect("builds").iter().count();
        assert_eq!(len(1024, 4096, 4096), 1026);
        assert_eq!(len(8192, 8192, 4096), 4096);
        assert_eq!(len(8192, 16384, 10_000), 8193);
        assert_eq!(len(1024, 4096, 100), 100);
    }

    #[test]
    fn below_the_cap_it_is_envoys_ring() {
        let nodes: Vec<Node> = THREE
            .iter()
            .map(|&(n, _)| Node::new(n).weight(2.0))
            .collect();
        let params = Params {
            max_ring_size: 4096,
            ..Params::DEFAULT
        };
        let grpc = Ring::<GrpcRing>::build(nodes.clone(), &params).expect("builds");
        let envoy = Ring::<EnvoyRing>::build(nodes, &params).expect("builds");
        assert_eq!(
            grpc.iter().collect::<Vec<_>>(),
            envoy.iter().collect::<Vec<_>>()
        );
    }

    #[test]
    fn weights_are_whole_and_listed_order_counts() {
        assert!(build(1024, 4096, 4096, &[("a:1", 1.5), ("b:1", 1.0)]).is_err());
        let counts = |cap| {
            let ring = build(16, 4096, cap, &[("a:1", 2.0), ("b:1", 1.0)]).expect("builds");
            let of = |node| ring.iter().filter(|&(_, id)| id == node).count();
            (of(0), of(1))
        };
        // scale = ceil(16/3)·3 = 18 points: 12 and 6. Capped to 16, the
        // running sums give 10.67 -> 11 points, then 16 -> 5.
        assert_eq!(counts(4096), (12, 6));
        assert_eq!(counts(16), (11, 5));
        let ring = build(16, 4096, 4096, &[("a:1", 2.0), ("b:1", 1.0)]).expect("builds");
        assert_eq!(ring.owner(0), ring.iter().next().map(|(_, id)| id));
    }

    /// gRPC's quirk: the cap bounds the whole ring, so with more endpoints
    /// than points some endpoints get none and no request.
    #[test]
    fn more_endpoints_than_the_cap_leave_some_without_points() {
        let names: Vec<String> = (0..100).map(|i| format!("10.0.0.{i}:80")).collect();
        let nodes: Vec<(&str, f64)> = names.iter().map(|n| (n.as_str(), 1.0)).collect();
        let ring = build(1024, 4096, 64, &nodes).expect("builds");
        let mut owners: Vec<u32> = ring.iter().map(|(_, id)| id).collect();
        let points = owners.len();
        owners.sort_unstable();
        owners.dedup();
        // 100 running sums of 0.64 end at 64.00000000000001, one point
        // past the cap, as gRPC's doubles do; at most one point each.
        assert_eq!(points, 65);
        assert_eq!(owners.len(), points, "35 endpoints without a point");
    }

    #[test]
    fn sizes_are_checked_before_the_cap() {
        assert!(GrpcRing::new(0, 10, 4096).is_err());
        assert!(GrpcRing::new(11, 10, 4096).is_err());
        assert!(GrpcRing::new(1, DEFAULT_MAX_RING_SIZE + 1, 4096).is_err());
        assert!(GrpcRing::new(8192, 4096, 1).is_err());
        assert!(GrpcRing::new(1024, 4096, 0).is_err());
        let ring = GrpcRing::new(8192, 16384, 4096).expect("valid");
        assert_eq!(ring.capped(), EnvoyRing::new(4096, 4096).expect("valid"));
    }
}
