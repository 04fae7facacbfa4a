//! `RedisRb`: the ring of redis-rb's `Redis::Distributed`.
//!
//! Source: redis-rb 4.8.0 as Debian ships it (`ruby-redis`),
//! `lib/redis/hash_ring.rb` (`add_node`, `get_node_pos`, `binary_search`),
//! `lib/redis/distributed.rb` (`node_for`, `key_tag`) and
//! `lib/redis/client.rb` (`id`).
//!
//! How it works: each node is named by its client's `id`, by default
//! `redis://host:port/db` (`rediss://` with TLS, the socket path for a unix
//! socket; an `id:` option replaces it), exactly as redis-rb writes it:
//! `Redis::Distributed.new(["redis://10.0.0.1:6379"])` names the node
//! `redis://10.0.0.1:6379/0`. A node has 160 points, the `i`-th at
//! `Zlib.crc32("<id>:<i>")`. A key goes to the **greatest point `<=` its
//! CRC-32**, wrapping to the last point (a predecessor ring, stored in
//! successor form: [`PointScheme::predecessor`]). Before hashing,
//! `Redis::Distributed` cuts a key to its tag, the text between a `{` that
//! starts a line and the first `}` after at least one character
//! ([`crate::HashTag::REDIS_RB`], the regexp `/^\{(.+?)\}/`): the
//! registry's default hash tag for `redis-rb`.
//!
//! Worked example: `crc32("redis://127.0.0.1:6379/0:0")` = 1505461511 is the
//! first point of `redis://127.0.0.1:6379/0`; key `foo` (crc32 2356372769)
//! goes to the node of the greatest point at or below 2356372769.
//!
//! Cost: 160 points per node; lookup and memory as the ring's. A node's
//! points depend only on its id, but the successor form makes every
//! membership change a rebuild, O(P log P).
//!
//! Quirks: the ring is a Ruby `Hash` from point to node, so of two nodes
//! on one point the one added later owns it ([`crate::Tie::LastListed`]);
//! the binary search may stop on any of the equal points, which all map
//! to that node. redis-rb has no weights: every node takes 160 points.
//! `HashRing#remove_node` also deletes a point another node shares, which
//! then answers `nil` in redis-rb; ringwise keeps the other node there.

use crate::Error;
use crate::algo::flavour::Flavour;
use crate::algo::ketama::unweighted_count;
use crate::algo::params::{Param, Params};
use crate::algo::ring::{Members, PointScheme, Tie, Width, numbered_texts};
use crate::hash::{HashTag, StableHash, cell_point, crc32};
use crate::node::Node;

/// Points per node (`Redis::HashRing::POINTS_PER_SERVER`).
const POINTS_PER_NODE: u64 = 160;

/// redis-rb's point scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RedisRb;

impl PointScheme for RedisRb {
    fn counts(&self, members: &Members<'_>) -> Result<Vec<u64>, Error> {
        let reason = "Redis::Distributed has no weights: every node takes 160 points";
        let count = |n: &Node| unweighted_count("redis-rb", n, POINTS_PER_NODE, reason);
        members.nodes.iter().map(count).collect()
    }

    fn points(&self, node: &Node, count: u64, out: &mut Vec<u64>) -> Result<(), Error> {
        let point = |text: &[u8]| out.push(cell_point(crc32(text), true));
        numbered_texts(node.name.as_bytes(), b":", count, point);
        Ok(())
    }

    fn width(&self) -> Width {
        Width::U32
    }

    fn predecessor(&self) -> bool {
        true
    }
}

impl Flavour for RedisRb {
    fn from_params(_: &Params) -> Result<Self, Error> {
        Ok(RedisRb)
    }

    fn tie(_: &Params) -> Tie {
        Tie::LastListed
    }

    const DEFAULT_HASH: StableHash = StableHash::Crc32;

    const READS: &'static [Param] = &[Param::MaxPoints];

    const HASH_TAG: Option<HashTag> = Some(HashTag::REDIS_RB);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::cell_value;

    #[test]
    fn first_point_of_the_worked_example() {
        let mut out = Vec::new();
        RedisRb
            .points(&Node::new("redis://127.0.0.1:6379/0"), 1, &mut out)
            .expect("points");
        assert_eq!(cell_value(out[0]), 1_505_461_511);
    }
}
