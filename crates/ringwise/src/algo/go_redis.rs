//! `GoRedis`: go-redis `Ring`'s shard choice, rendezvous hashing through
//! go-rendezvous.
//!
//! Sources: `github.com/dgryski/go-rendezvous` `rdv.go` at 9f7001d (`New`,
//! `Lookup`, `xorshiftMult64`), which go-redis v8 and v9 up to 216593c
//! call from `ring.go` as `rendezvous.New(shards, xxhash.Sum64String)`
//! (newer go-redis inlines the same code as `internal/hashtag`), and
//! go-redis `internal/hashtag/hashtag.go` (`Key`). go-redis is not
//! packaged in Debian: the tests check every expectation of both
//! projects' tests (`tests/go_redis_vectors.rs`, with their commits).
//!
//! How it works: the shards are the **names** of `RingOptions.Addrs`
//! (`"shard1"`, not the address), each hashed once with XXH64 (seed 0).
//! A key is first cut to its hash tag, the text between the first `{` and
//! the next `}` when not empty (Redis Cluster's rule: the registry's
//! default hash tag `{}` for `go-redis`), then hashed with XXH64; the shard
//! with the highest `xorshiftMult64(key_hash ^ shard_hash)` wins, the
//! first in list order on a tie (`>` in `Lookup`). `xorshiftMult64(x)` is
//! `x ^= x >> 12; x ^= x << 25; x ^= x >> 27; x · 2685821657736338717`
//! (wrapping), Vigna's xorshift64*, as in Envoy's rendezvous
//! ([`crate::EnvoyRendezvous::xorshift_star`]) but without its weights.
//!
//! Worked example (go-redis `ring_test.go`): shards `ringShardOne` and
//! `ringShardTwo`, keys `key0` .. `key99`: 56 go to the first and 44 to the
//! second, and every `key<i>{tag}` (hashed as `tag`) to `ringShardTwo`.
//!
//! Cost: O(N) per lookup (one xor, shift-xors and a multiply per shard);
//! 16 bytes per shard. A join moves to the new shard exactly the keys on
//! which it scores highest (1/(N+1) of them), a leave only the leaving
//! shard's keys: rendezvous is monotone.
//!
//! Quirks: go-redis builds the list from a Go map of the shards that are
//! up, so its order (which decides only exact 64-bit ties) is random;
//! ringwise keeps the listed order. go-redis has no weights. An empty
//! ring answers `""` in go-rendezvous and an error in go-redis.

use xxhash_rust::xxh64::xxh64;

use crate::Error;
use crate::algo::envoy_rendezvous::EnvoyRendezvous;
use crate::algo::ketama::unweighted_count;
use crate::algo::params::{Params, Pinned, Registered};
use crate::hash::{HashTag, StableHash};
use crate::node::{Node, NodeId, NodeTable};
use crate::placement::{Distinct, Placement};

/// One shard in listed order: its name's hash and id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shard {
    hash: u64,
    id: NodeId,
}

/// An immutable snapshot of go-redis `Ring`'s rendezvous.
#[derive(Debug, Clone)]
pub struct GoRedis {
    nodes: NodeTable,
    /// In listed order, which decides exact ties.
    shards: Vec<Shard>,
}

impl GoRedis {
    /// Validates `nodes` (in listed order, every weight 1) and builds.
    pub fn new(nodes: Vec<Node>) -> Result<Self, Error> {
        nodes.iter().try_for_each(check_unweighted)?;
        let table = NodeTable::new(nodes.iter().cloned())?;
        Ok(Self::listed(table, nodes.iter().map(|n| n.name.as_str())))
    }

    fn listed<'a>(nodes: NodeTable, listed: impl Iterator<Item = &'a str>) -> Self {
        let shards = (listed.filter_map(|name| {
            Some(Shard {
                hash: xxh64(name.as_bytes(), 0),
                id: nodes.id(name)?,
            })
        }))
        .collect();
        GoRedis { nodes, shards }
    }

    fn names(&self) -> impl Iterator<Item = &str> {
        self.shards.iter().filter_map(|s| self.nodes.name(s.id))
    }

    /// go-rendezvous's score of a shard for a key hash.
    #[inline]
    pub fn score(key: u64, shard_hash: u64) -> u64 {
        EnvoyRendezvous::xorshift_star(key ^ shard_hash)
    }
}

impl Placement for GoRedis {
    /// The highest score, ties to the first listed. O(N).
    #[inline]
    fn owner(&self, hash: u64) -> Option<NodeId> {
        let first = self.shards.first()?;
        let mut best = (Self::score(hash, first.hash), first.id);
        for shard in &self.shards[1..] {
            let score = Self::score(hash, shard.hash);
            if score > best.0 {
                best = (score, shard.id);
            }
        }
        Some(best.1)
    }

    /// The shards by falling score (ties in listed order): the owner, then
    /// the shard that owns the key once the owner is gone, and so on.
    /// O(n·N).
    fn replicas_into(&self, hash: u64, n: usize, out: &mut Vec<NodeId>) {
        out.clear();
        let mut picks = Distinct::new(out, n.min(self.shards.len()));
        // Each pass takes the best score below the last pick's (or equal
        // to it, later in the list).
        let mut last: Option<(u64, usize)> = None;
        while !picks.is_full() {
            let below = |score: u64, at: usize| match last {
                None => true,
                Some((s, i)) => score < s || (score == s && at > i),
            };
            let mut best: Option<(u64, usize)> = None;
            for (at, shard) in self.shards.iter().enumerate() {
                let score = Self::score(hash, shard.hash);
                if below(score, at) && best.is_none_or(|(s, _)| score > s) {
                    best = Some((score, at));
                }
            }
            let Some((score, at)) = best else { return };
            picks.push(self.shards[at].id);
            last = Some((score, at));
        }
    }

    fn nodes(&self) -> &NodeTable {
        &self.nodes
    }

    /// A hash and an id per shard.
    fn heap_bytes(&self) -> usize {
        self.shards.capacity() * std::mem::size_of::<Shard>()
    }

    /// Appends `node`, listed last.
    fn with_node(&self, node: Node) -> Result<Self, Error> {
        check_unweighted(&node)?;
        let name = node.name.clone();
        let (table, _) = self.nodes.with(node)?;
        let listed = self.names().chain([name.as_str()]);
        Ok(Self::listed(table, listed))
    }

    /// Removes `name`.
    fn without_node(&self, name: &str) -> Result<Self, Error> {
        let (table, _) = self.nodes.without(name)?;
        let listed = self.names().filter(|&n| n != name);
        Ok(Self::listed(table, listed))
    }
}

/// go-redis has no weights.
fn check_unweighted(node: &Node) -> Result<(), Error> {
    let reason = "go-redis Ring has no weights: give every shard weight 1";
    unweighted_count("go-redis", node, 1, reason).map(drop)
}

impl Registered for GoRedis {
    /// Scores follow from the names and listed order.
    fn pin(&self) -> Result<Pinned, Error> {
        Ok(Pinned::default())
    }

    fn build(nodes: Vec<Node>, _: &Params) -> Result<Self, Error> {
        Self::new(nodes)
    }

    fn default_hash() -> StableHash {
        StableHash::Xxh64
    }

    const HASH_TAG: Option<HashTag> = Some(HashTag::BRACES);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_go_to_the_first_listed_and_replicas_fall_by_score() {
        let mut a = GoRedis::new(vec![Node::new("b"), Node::new("a")]).expect("builds");
        a.shards[1].hash = a.shards[0].hash;
        assert!((0..100).all(|h| a.owner(h) == Some(1)));
        let mut out = Vec::new();
        a.replicas_into(7, 5, &mut out);
        assert_eq!(out, [1, 0]);
        assert!(GoRedis::new(vec![Node::new("x").weight(2.0)]).is_err());
        let empty = GoRedis::new(Vec::new()).expect("empty");
        assert_eq!(empty.owner(1), None);
    }
}
