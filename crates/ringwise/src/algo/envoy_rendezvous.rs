//! `EnvoyRendezvous`: Envoy's `rendezvous_hash` load-balancing policy.
//!
//! Source: Envoy `source/extensions/load_balancing_policies/rendezvous_hash/
//! rendezvous_hash_lb.cc` (`RendezvousHashTable`), its weights from
//! `load_balancing_policies/common/thread_aware_lb_impl.cc`
//! (`normalizeHostWeights`, `LoadBalancerImpl::chooseHost`), read at
//! envoyproxy/envoy commit 5732d3995a5b011aed157d63f43e05c052c804b6; its
//! tests are `tests/envoy_rendezvous_vectors.rs`. The method is highest
//! random weight (Thaler & Ravishankar 1996) weighted by the logarithmic
//! method (Schindelhauer & Schomaker 2005), as ringwise's own
//! [`crate::Rendezvous`], but with Envoy's hashes and arithmetic.
//!
//! How it works: host `i` (name = Envoy's hash key, the address `ip:port`,
//! or the hostname with `use_hostname_for_hashing`, or the `envoy.lb`
//! `hash_key` metadata) has `s_i = xxh64(name, seed 0)` and the weight
//! `w_i = weight_i / Σ weight` (a double, as Envoy normalizes). For a key
//! hash `h` (Envoy's request hash, xxh64 of the header value, hence the
//! default key hash `xxh64`):
//!
//! ```text
//! x = xorshift*(h XOR s_i)            // x ^= x>>12; x ^= x<<25; x ^= x>>27;
//!                                     // x · 2685821657736338717 (mod 2^64)
//! u = (x & (2^53 − 1)) · 2^-53        // in [0, 1): 0 is possible
//! score_i = −w_i / (fastLog2(u) · 0.6931471805599453)
//! ```
//!
//! `fastLog2` is the eBay approximation Envoy uses, not `log2`: the
//! significand is moved to `[0.75, 1.5)` by giving it the biased exponent
//! `1023 XOR (top significand bit)`, `e` is the original biased exponent
//! minus that, `t` the moved value minus 1, and `fastLog2 = e +
//! t·(0.338953·t + 2.198599) / (t + 1.523692)`. It is part of the
//! placement: its error (within 1.3·10⁻⁴ of `log2`, 0.04 % relative, on
//! `[0.5, 1)`) shifts scores slightly, and a near tie it flips sends the
//! key to the other host, so it is reproduced operation for operation. Example: `u = 0.75` keeps
//! exponent 1022 (top bit set), `t = −0.25`, `fastLog2 = −0.25·2.1138... /
//! 1.273692 = −0.41490...` (`log2 0.75 = −0.41504`). `u = 0` has the
//! exponent field 0 and gives `−1023`, a finite score: no division by 0.
//!
//! The key goes to the highest score, ties to the host listed first (Envoy
//! keeps the first with a strict `>`); nodes are kept in listed order.
//! Retries: attempt `a > 0` of a request scores `h XOR (2^64 − a)` instead
//! (Envoy's `hash ^= ~0ULL - attempt + 1`), [`EnvoyRendezvous::attempt`];
//! [`Placement::replicas_into`] lists the distinct hosts of attempts 0, 1,
//! 2, ...: the hosts a request retried with the `previous_hosts` predicate
//! tries, in order. After `8·N` attempts (rare: only when asking for most
//! hosts) the missing ones follow in name order after the owner.
//!
//! Movement: a host's score depends on its own name and normalized weight.
//! A join or leave rescales every `w_i` by the same factor, which keeps
//! the order of the scores except where rounding makes two scores equal
//! (or no longer equal): a key moves between two old hosts only then, a
//! chance near 2^-52 per key. Placement is independent of the listed order
//! except for such ties, which go to the first listed.
//!
//! Cost: 24 bytes per host. A lookup is O(N): per host one xorshift*, two
//! divisions and a few multiplications, scored 8 hosts at a time with one
//! branch per chunk (the leader changes about ln N times a lookup, at
//! random, and a branch per host was mispredicted each time). Measured
//! (`benches/balancers.rs`, a loaded 2-core Zen 3), pre-hashed: 83 ns at
//! 10 hosts and 553 ns at 100 (99 and 570 with a branch per host; 50 and
//! 492 with `hint::select_unpredictable`, which needs Rust 1.88, above
//! the MSRV). Building is O(N log N).
//!
//! Quirks: the arithmetic is that of an x86-64 build, which has no fused
//! multiply-add unless asked for; a build that contracts `0.338953·t +
//! 2.198599` into one FMA (clang's default on arm64) may differ in the last
//! bit of a score and so, very rarely, in a near tie. Envoy's weights are
//! integers (1 to 128 in its API), summed exactly; ringwise accepts any
//! weight and sums in listed order. Not reproduced: `hash_balance_factor`
//! (Envoy's bounded load, which needs live request counts), locality
//! weighting (give each host `locality_weight / Σ · weight / Σ in its
//! locality` as its weight instead) and priorities.

use xxhash_rust::xxh64::xxh64;

use crate::Error;
use crate::algo::params::{Params, Pinned, Registered};
use crate::hash::StableHash;
use crate::node::{Node, NodeId, NodeTable};
use crate::placement::{Distinct, Placement};

/// The multiplier of xorshift* (Vigna's `xorshift64*`).
const XORSHIFT_MULT: u64 = 2_685_821_657_736_338_717;
/// The low 53 bits, which an `f64` holds exactly.
const MASK_53: u64 = (1 << 53) - 1;
/// `2^-53`.
const SCALE_53: f64 = 1.0 / (1u64 << 53) as f64;
/// `ln 2`: Envoy writes `0.6931471805599453`, the same `f64` (checked in
/// the tests).
const LN_2: f64 = std::f64::consts::LN_2;
/// Hosts scored per chunk of a lookup.
const CHUNK: usize = 8;
/// Attempts per host before the name-order fallback of `replicas_into`.
const RETRIES_PER_NODE: u64 = 8;

/// One host in listed order: its hash, normalized weight and id.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Host {
    hash: u64,
    weight: f64,
    id: NodeId,
}

/// An immutable snapshot of Envoy's rendezvous table.
#[derive(Debug, Clone)]
pub struct EnvoyRendezvous {
    nodes: NodeTable,
    /// In listed order, which decides exact ties.
    hosts: Vec<Host>,
}

impl EnvoyRendezvous {
    /// Validates `nodes` (in listed order) and builds the table.
    pub fn new(nodes: Vec<Node>) -> Result<Self, Error> {
        let table = NodeTable::new(nodes.iter().cloned())?;
        Ok(Self::listed(table, nodes.iter().map(|n| n.name.as_str())))
    }

    /// The table over `nodes` with the hosts in the order of `listed`
    /// (every name one of `nodes`).
    fn listed<'a>(nodes: NodeTable, listed: impl Iterator<Item = &'a str> + Clone) -> Self {
        let weight = |name| {
            nodes
                .id(name)
                .and_then(|id| nodes.get(id))
                .map(|n| n.weight)
        };
        // Envoy sums integer weights exactly; a sum in listed order is the
        // same for them.
        let sum: f64 = listed.clone().filter_map(weight).sum();
        let mut hosts = Vec::with_capacity(listed.clone().count());
        hosts.extend(listed.filter_map(|name| {
            Some(Host {
                hash: xxh64(name.as_bytes(), 0),
                weight: weight(name)? / sum,
                id: nodes.id(name)?,
            })
        }));
        EnvoyRendezvous { nodes, hosts }
    }

    /// The names in listed order.
    fn names(&self) -> impl Iterator<Item = &str> + Clone {
        self.hosts.iter().filter_map(|h| self.nodes.name(h.id))
    }

    /// The host Envoy picks on attempt `attempt` of a request with `hash`
    /// (attempt 0 is [`Placement::owner`]); `None` without hosts. O(N).
    #[inline]
    pub fn attempt(&self, hash: u64, attempt: u32) -> Option<NodeId> {
        let key = hash ^ u64::from(attempt).wrapping_neg();
        let mut id = self.hosts.first()?.id;
        let mut best = f64::NEG_INFINITY;
        // Scores are found a chunk at a time, its top by `max` (no
        // branch), and only a chunk whose top beats the leader is searched
        // for the first host with it: Envoy's "first highest score", with
        // a branch per chunk instead of one per host, where the leader
        // changes about ln N times a lookup, at random.
        for chunk in self.hosts.chunks(CHUNK) {
            let mut scores = [f64::NEG_INFINITY; CHUNK];
            for (score, host) in scores.iter_mut().zip(chunk) {
                *score = Self::score(key, host.hash, host.weight);
            }
            let top = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if top > best {
                best = top;
                if let Some(i) = scores.iter().position(|&s| s == top) {
                    id = chunk[i].id;
                }
            }
        }
        Some(id)
    }

    /// Node `id`'s normalized weight `weight / Σ weight` (0 for an id this
    /// snapshot does not have).
    pub fn normalized_weight(&self, id: NodeId) -> f64 {
        self.hosts
            .iter()
            .find(|h| h.id == id)
            .map_or(0.0, |h| h.weight)
    }

    /// Envoy's `computeScore`: `−weight / fastLog(normalize(xorshift*(key
    /// XOR host_hash)))`, finite and positive for a positive weight.
    #[inline]
    pub fn score(key: u64, host_hash: u64, weight: f64) -> f64 {
        -weight / Self::fast_log(Self::normalize(Self::xorshift_star(key ^ host_hash)))
    }

    /// xorshift*: three shifts, then the multiplier, wrapping.
    #[inline]
    pub fn xorshift_star(mut x: u64) -> u64 {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(XORSHIFT_MULT)
    }

    /// The low 53 bits over `2^53`: exact, in `[0, 1)`.
    #[inline]
    pub fn normalize(hash: u64) -> f64 {
        (hash & MASK_53) as f64 * SCALE_53
    }

    /// Envoy's `fastLog`: `fastLog2(x) · ln 2`.
    #[inline]
    pub fn fast_log(x: f64) -> f64 {
        Self::fast_log2(x) * LN_2
    }

    /// Envoy's `fastLog2` (module docs), for `x >= 0`; the sign bit is
    /// ignored, as Envoy ignores it.
    #[inline]
    pub fn fast_log2(x: f64) -> f64 {
        let bits = x.to_bits();
        let exponent = (bits >> 52) & 0x7ff;
        let mantissa = bits & ((1 << 52) - 1);
        let new_exponent = 1023 ^ (mantissa >> 51);
        let moved = f64::from_bits((new_exponent << 52) | mantissa);
        let base = exponent as f64 - new_exponent as f64;
        let t = moved - 1.0;
        base + t * (0.338_953 * t + 2.198_599) / (t + 1.523_692)
    }
}

impl Placement for EnvoyRendezvous {
    /// The highest score, ties to the first listed. O(N).
    #[inline]
    fn owner(&self, hash: u64) -> Option<NodeId> {
        self.attempt(hash, 0)
    }

    /// The distinct hosts of attempts 0, 1, 2, ... (module docs); then,
    /// after `8·N` attempts, the rest in name order after the owner. O(n·N)
    /// expected while `n <= N/2`; `replicas(r)` is a prefix of
    /// `replicas(r + 1)`.
    fn replicas_into(&self, hash: u64, n: usize, out: &mut Vec<NodeId>) {
        out.clear();
        let len = self.hosts.len() as u32;
        let mut picks = Distinct::new(out, n.min(self.hosts.len()));
        for attempt in 0..u64::from(len).saturating_mul(RETRIES_PER_NODE) {
            if picks.is_full() {
                return;
            }
            // `len ≤ MAX_NODES`, so the attempt fits a u32.
            if let Some(id) = self.attempt(hash, attempt as u32) {
                picks.push(id);
            }
        }
        picks.fill_after_first(len);
    }

    fn nodes(&self) -> &NodeTable {
        &self.nodes
    }

    /// A hash, a weight and an id per host.
    fn heap_bytes(&self) -> usize {
        self.hosts.capacity() * std::mem::size_of::<Host>()
    }

    /// Appends `node` (listed last) and renormalizes the weights.
    fn with_node(&self, node: Node) -> Result<Self, Error> {
        let name = node.name.clone();
        let (table, _) = self.nodes.with(node)?;
        let listed = self.names().chain([name.as_str()]);
        Ok(Self::listed(table, listed))
    }

    /// Removes `name` and renormalizes the weights.
    fn without_node(&self, name: &str) -> Result<Self, Error> {
        let (table, _) = self.nodes.without(name)?;
        let listed = self.names().filter(|&n| n != name);
        Ok(Self::listed(table, listed))
    }
}

impl Registered for EnvoyRendezvous {
    /// Scores follow from the names, weights and listed order.
    fn pin(&self) -> Result<Pinned, Error> {
        Ok(Pinned::default())
    }

    fn build(nodes: Vec<Node>, _: &Params) -> Result<Self, Error> {
        Self::new(nodes)
    }

    fn default_hash() -> StableHash {
        StableHash::Xxh64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_log2_of_the_worked_example() {
        let t: f64 = -0.25;
        let by_hand = t * (0.338_953 * t + 2.198_599) / (t + 1.523_692);
        assert_eq!(EnvoyRendezvous::fast_log2(0.75), by_hand);
        assert!((by_hand - 0.75f64.log2()).abs() < 1e-3);
        // 0.5: exponent 1022, no top bit, moved to 1.0: exactly -1.
        assert_eq!(EnvoyRendezvous::fast_log2(0.5), -1.0);
        assert_eq!(EnvoyRendezvous::fast_log2(0.0), -1023.0);
        assert_eq!(EnvoyRendezvous::fast_log2(1.0), 0.0);
        assert_eq!("0.6931471805599453".parse::<f64>(), Ok(LN_2));
    }

    #[test]
    fn ties_go_to_the_first_listed_and_replicas_are_distinct() {
        let mut a = EnvoyRendezvous::new(vec![Node::new("b"), Node::new("a")]).expect("builds");
        // Equal hashes and weights tie on every key: the first listed wins.
        a.hosts[1].hash = a.hosts[0].hash;
        assert!((0..100).all(|h| a.owner(h) == Some(1)));
        a.hosts.swap(0, 1);
        assert!((0..100).all(|h| a.owner(h) == Some(0)));
        let mut out = Vec::new();
        a.replicas_into(7, 5, &mut out);
        out.sort_unstable();
        assert_eq!(out, [0, 1]);
        assert_eq!(a.normalized_weight(0), 0.5);
        let empty = EnvoyRendezvous::new(Vec::new()).expect("empty");
        assert_eq!(empty.owner(1), None);
        assert_eq!(empty.attempt(1, 2), None);
    }
}
