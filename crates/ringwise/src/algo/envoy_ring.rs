//! `EnvoyRing`: Envoy's `RING_HASH` load balancer.
//!
//! Source: Envoy `source/extensions/load_balancing_policies/ring_hash/
//! ring_hash_lb.cc` (`RingHashLoadBalancer::Ring::Ring`) and its tests; the
//! compatibility notes §5.2. (Envoy's other hashing balancer, `MAGLEV`, is
//! ringwise's [`crate::Maglev`] already: same table, same weighted fill.)
//!
//! How it works: a ring of 64-bit points ([`crate::Ring`] with this point
//! scheme). Weights are normalized to `w_i = weight_i / Σ weight`; the ring
//! gets `scale = min(ceil(min_w · min_ring_size) / min_w, max_ring_size)`
//! points in all. Hosts are walked in listed order with two running sums
//! (doubles): `target += scale · w_i`, and while `current < target` host `i`
//! gets its next point `xxh64("<name>_<j>", seed 0)` (`j` counting from 0 for
//! each host) and `current += 1`. Fractional shares therefore carry over to
//! the next host instead of being rounded per host. A key goes to the first
//! point `>=` its hash (Envoy's request hash is xxh64 of the header value,
//! hence the default key hash `xxh64`), wrapping.
//!
//! Worked example (Envoy's own test): 6 hosts of equal weight and
//! `min_ring_size = 12`: `min_w = 1/6`, `scale = ceil(2)/(1/6) = 12`, so 2
//! points each; `127.0.0.1:94` holds 833437586790550860, the smallest point,
//! and so owns hash 0 and, wrapping, `2^64 - 1`.
//!
//! Cost: about `scale` points (1024 to 8,388,608); lookup and memory as the
//! ring's. Point counts depend on every weight and on the listed order, so
//! a membership change rebuilds the ring (O(P)), as Envoy does.
//!
//! Quirks: the node name is Envoy's hash key (the address `ip:port`, or the
//! hostname with `use_hostname_for_hashing`). Envoy sorts points with an
//! unstable sort, so which host owns a point two hosts share is
//! unspecified; ringwise gives it to the smaller name. Envoy's alternative
//! `MURMUR_HASH_2` point hash and locality weighting are not reproduced.

use crate::Error;
use crate::algo::flavour::Flavour;
use crate::algo::params::{DEFAULT_MAX_RING_SIZE, Param, Params};
use crate::algo::ring::{Members, PointScheme, numbered_texts};
use crate::hash::StableHash;
use crate::node::Node;

/// Envoy's ring-size settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvoyRing {
    min_ring_size: u64,
    max_ring_size: u64,
}

impl EnvoyRing {
    /// `min_ring_size` and `max_ring_size` as in Envoy's `RingHashLbConfig`:
    /// `1 <= min <= max <= 8388608`.
    pub fn new(min_ring_size: u64, max_ring_size: u64) -> Result<Self, Error> {
        let ring = EnvoyRing {
            min_ring_size,
            max_ring_size,
        };
        ring.check()?;
        Ok(ring)
    }

    /// The smallest ring.
    pub fn min_ring_size(&self) -> u64 {
        self.min_ring_size
    }

    /// The largest ring.
    pub fn max_ring_size(&self) -> u64 {
        self.max_ring_size
    }

    fn check(&self) -> Result<(), Error> {
        let refuse = |parameter, value: u64, expected| {
            Err(Error::InvalidParameter {
                algorithm: "envoy-ring",
                parameter,
                value: value.to_string(),
                expected,
            })
        };
        if !(1..=DEFAULT_MAX_RING_SIZE).contains(&self.max_ring_size) {
            return refuse(
                "max_ring_size",
                self.max_ring_size,
                "a ring size from 1 to 8388608 (Envoy's limit)",
            );
        }
        if !(1..=self.max_ring_size).contains(&self.min_ring_size) {
            return refuse(
                "min_ring_size",
                self.min_ring_size,
                "a ring size from 1 to max_ring_size",
            );
        }
        Ok(())
    }
}

impl PointScheme for EnvoyRing {
    fn validate(&self) -> Result<(), Error> {
        self.check()
    }

    fn counts(&self, members: &Members<'_>) -> Result<Vec<u64>, Error> {
        let nodes = members.nodes;
        let order = members.listed_ids();
        let sum: f64 = order
            .iter()
            .filter_map(|&id| nodes.get(id))
            .map(|n| n.weight)
            .sum();
        let share = |id: u32| nodes.get(id).map_or(0.0, |n| n.weight / sum);
        let Some(min_share) = order.iter().map(|&id| share(id)).reduce(f64::min) else {
            return Ok(Vec::new());
        };
        let scale = ((min_share * self.min_ring_size as f64).ceil() / min_share)
            .min(self.max_ring_size as f64);
        let (mut current, mut target) = (0.0f64, 0.0f64);
        let mut counts = vec![0; nodes.len()];
        for &id in &order {
            target += scale * share(id);
            // `current` counts whole points, so this is the number of
            // increments the while loop of the C++ makes.
            let mut count = 0;
            while current < target {
                count += 1;
                current += 1.0;
            }
            counts[id as usize] = count;
        }
        Ok(counts)
    }

    fn points(&self, node: &Node, count: u64, out: &mut Vec<u64>) -> Result<(), Error> {
        numbered_texts(node.name.as_bytes(), b"_", count, |text| {
            out.push(xxhash_rust::xxh64::xxh64(text, 0));
        });
        Ok(())
    }

    fn independent(&self) -> bool {
        false
    }
}

impl Flavour for EnvoyRing {
    fn from_params(params: &Params) -> Result<Self, Error> {
        EnvoyRing::new(params.min_ring_size, params.max_ring_size)
    }

    const DEFAULT_HASH: StableHash = StableHash::Xxh64;

    const READS: &'static [Param] = &[Param::MinRingSize, Param::MaxRingSize, Param::MaxPoints];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::params::Registered;
    use crate::algo::ring::Ring;
    use crate::placement::Placement;

    /// Envoy's `ring_hash_lb_test.cc`: 6 hosts, min ring 12, their points
    /// in ring order.
    #[test]
    fn envoys_own_ring() {
        let nodes = (90..=95).map(|p| Node::new(format!("127.0.0.1:{p}")));
        let params = Params {
            min_ring_size: 12,
            ..Params::DEFAULT
        };
        let ring = Ring::<EnvoyRing>::build(nodes.collect(), &params).expect("builds");
        let expected: [(u64, u16); 12] = [
            (833_437_586_790_550_860, 94),
            (928_266_305_478_181_108, 92),
            (1_033_482_794_131_418_490, 90),
            (3_551_244_743_356_806_947, 95),
            (3_851_675_632_748_031_481, 93),
            (5_583_722_120_771_150_861, 91),
            (6_311_230_543_546_372_928, 91),
            (7_700_377_290_971_790_572, 93),
            (13_144_177_310_400_110_813, 95),
            (13_444_792_449_719_432_967, 92),
            (15_516_499_411_664_133_160, 94),
            (16_117_243_373_044_804_889, 90),
        ];
        let name = |id| ring.nodes().name(id).unwrap_or("?").to_owned();
        let got: Vec<(u64, String)> = ring.iter().map(|(p, id)| (p, name(id))).collect();
        let want: Vec<(u64, String)> = expected
            .iter()
            .map(|&(p, port)| (p, format!("127.0.0.1:{port}")))
            .collect();
        assert_eq!(got, want);
        let owner = |h| ring.owner(h).map(name);
        assert_eq!(owner(0).as_deref(), Some("127.0.0.1:94"));
        assert_eq!(owner(u64::MAX).as_deref(), Some("127.0.0.1:94"));
        assert_eq!(
            owner(3_551_244_743_356_806_947).as_deref(),
            Some("127.0.0.1:95")
        );
        assert_eq!(
            owner(3_551_244_743_356_806_948).as_deref(),
            Some("127.0.0.1:93")
        );
        assert_eq!(
            owner(16_117_243_373_044_804_880).as_deref(),
            Some("127.0.0.1:90")
        );
    }

    #[test]
    fn sizes_are_checked() {
        assert!(EnvoyRing::new(0, 10).is_err());
        assert!(EnvoyRing::new(11, 10).is_err());
        assert!(EnvoyRing::new(1, DEFAULT_MAX_RING_SIZE + 1).is_err());
        assert!(EnvoyRing::new(1024, DEFAULT_MAX_RING_SIZE).is_ok());
    }
}
