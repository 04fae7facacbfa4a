//! `PhpMemcache`: pecl memcache's `memcache.hash_strategy = consistent`,
//! PHP's `Memcache` / `MemcachePool` client.
//!
//! Source: `websupport-sk/pecl-memcache` at 36d7181 (4.0.5.2, the "8.0"
//! tree of Debian's `php-memcache`, whose hashing files are unchanged
//! since PHP 7): `src/memcache_consistent_hash.c`
//! (`mmc_consistent_add_server`, `mmc_consistent_populate_buckets`,
//! `mmc_consistent_find`, `mmc_consistent_find_server`) and
//! `src/memcache_pool.c` (`mmc_hash_crc32`, `mmc_hash_fnv1a`).
//!
//! How it works: a server added as `addServer(host, port, ..., weight)`
//! is named `host:port`, the host exactly as written (`tcp://` kept, no
//! resolving). It gets `160·weight` points, the `i`-th at
//! `H("host:port-i")`, where `H` is `memcache.hash_function`: `crc32` (the
//! default, `hash = "crc32"`) or `fnv` (`hash = "fnv1a32-php"`), the same
//! function for points and keys. Points are sorted, and the lookup is the
//! first point `>=` a value, wrapping. But a key is **not** looked up at
//! its hash: php-memcache first fills 1024 buckets, bucket `b` holding the
//! owner of `4194303·b` (`0xffffffff / 1024`, rounded down), and a key
//! goes to bucket `H(key) % 1024`. So only the low 10 bits of a key's hash
//! matter, and the placement is a table of 1024 entries in front of a
//! ring: exact shares and movement count buckets (each exactly 1/1024 of
//! the keys), and a migration to or from another client is sampled.
//!
//! Worked example: `crc32("foo")` = 2356372769, `% 1024` = 289: the key
//! goes to the owner of ring position `289·4194303` = 1212153567. Server
//! `127.0.0.1:11211`'s first point is `crc32("127.0.0.1:11211-0")` =
//! 2206506960.
//!
//! Cost: `160·W` points and 1024 bucket ids (4 KiB); a lookup is one array
//! read. A build sorts the points and makes 1024 ring lookups; a server's
//! points depend only on itself, so a join merges them in O(P).
//!
//! Quirks: of two servers on one point, the one added first owns it
//! (glibc's `qsort` is a stable merge sort and the search finds the lowest
//! index: [`Tie::FirstListed`]). A single server takes every key without
//! hashing. php-memcache hashes the key it sends: the prefix
//! (`memcache.prefix_static_key`, `prefix_host_key`) and the key, cut to
//! 250 bytes, every byte `<= 0x20` replaced by `_`; give ringwise that
//! key. Failover (`memcache.allow_failover`) moves only keys of a server
//! that is down.

use crate::Error;
use crate::algo::ketama::whole_weight;
use crate::algo::params::{Param, Params, Pinned, Registered};
use crate::algo::ring::{Members, PointScheme, Ring, Tie, Width, numbered_texts};
use crate::hash::{KeyHasher, StableHash, cell_key, cell_point, cell_value};
use crate::node::{Node, NodeId, NodeTable};
use crate::placement::Placement;
use crate::stats::PlacementStats;

/// Points per unit of weight (`MMC_CONSISTENT_POINTS`).
const POINTS_PER_WEIGHT: u64 = 160;
/// Buckets (`MMC_CONSISTENT_BUCKETS`).
pub const BUCKETS: u32 = 1024;
/// The ring position of bucket 1: `0xffffffff / 1024` in C's unsigned
/// arithmetic, 4194303, not 2^22.
const STEP: u32 = u32::MAX / BUCKETS;

/// php-memcache's points: `H("host:port-i")`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhpPoints {
    hash: StableHash,
}

impl PointScheme for PhpPoints {
    fn counts(&self, members: &Members<'_>) -> Result<Vec<u64>, Error> {
        let count =
            |n: &Node| Ok(whole_weight("php-memcache", n)?.saturating_mul(POINTS_PER_WEIGHT));
        members.nodes.iter().map(count).collect()
    }

    fn points(&self, node: &Node, count: u64, out: &mut Vec<u64>) -> Result<(), Error> {
        let point = |text: &[u8]| out.push(cell_point(cell_value(self.hash.hash(text)), true));
        numbered_texts(node.name.as_bytes(), b"-", count, point);
        Ok(())
    }

    fn width(&self) -> Width {
        Width::U32
    }
}

/// An immutable snapshot: the ring and its 1024 buckets.
#[derive(Debug, Clone)]
pub struct PhpMemcache {
    ring: Ring<PhpPoints>,
    /// `buckets[b]`: the owner of ring position `STEP·b`; empty without
    /// servers.
    buckets: Vec<NodeId>,
}

impl PhpMemcache {
    /// Validates `nodes` (listed in `addServer` order) and builds for keys
    /// hashed with `hash`: the points are hashed with `fnv1a32-php` when
    /// that is the key hash (`memcache.hash_function = fnv`), with `crc32`
    /// otherwise (php-memcache's default; any other key hash is ringwise's
    /// choice, not php-memcache's, and picks its bucket from bits 32 to 41).
    pub fn new(nodes: Vec<Node>, hash: StableHash, max_points: u64) -> Result<Self, Error> {
        let hash = match hash {
            StableHash::Fnv1a32Php => hash,
            _ => StableHash::Crc32,
        };
        let ring = Ring::builder()
            .scheme(PhpPoints { hash })
            .tie(Tie::FirstListed)
            .max_points(max_points)
            .nodes(nodes)
            .build()?;
        Ok(Self::filled(ring))
    }

    fn filled(ring: Ring<PhpPoints>) -> Self {
        let buckets = match ring.nodes().is_empty() {
            true => Vec::new(),
            false => (0..BUCKETS)
                .filter_map(|b| ring.owner(cell_key(STEP * b)))
                .collect(),
        };
        PhpMemcache { ring, buckets }
    }

    /// The owner of bucket `bucket` (of `BUCKETS`); `None` without
    /// servers or past the last bucket.
    pub fn bucket(&self, bucket: u64) -> Option<NodeId> {
        self.buckets.get(usize::try_from(bucket).ok()?).copied()
    }

    /// The ring behind the buckets.
    pub fn ring(&self) -> &Ring<PhpPoints> {
        &self.ring
    }

    /// Exact shares: each bucket is 1/1024 of the keys. O(1024 + N).
    pub fn stats(&self) -> PlacementStats {
        let nodes = self.ring.nodes();
        let mut shares = vec![0.0; nodes.len()];
        for &id in &self.buckets {
            shares[id as usize] += 1.0 / f64::from(BUCKETS);
        }
        let mut points = vec![0u64; nodes.len()];
        for (_, id) in self.ring.iter() {
            points[id as usize] += 1;
        }
        PlacementStats::from_shares(nodes, &points, &shares)
    }
}

impl Placement for PhpMemcache {
    /// `buckets[H(key) % 1024]`: one array read.
    #[inline]
    fn owner(&self, hash: u64) -> Option<NodeId> {
        let bucket = cell_value(hash) % BUCKETS;
        self.buckets.get(bucket as usize).copied()
    }

    /// The bucket's owner, then the ring's next distinct servers from the
    /// bucket's position (php-memcache keeps one copy; this is ringwise's
    /// extension). O(points visited).
    fn replicas_into(&self, hash: u64, n: usize, out: &mut Vec<NodeId>) {
        let bucket = cell_value(hash) % BUCKETS;
        self.ring.replicas_into(cell_key(STEP * bucket), n, out);
    }

    fn nodes(&self) -> &NodeTable {
        self.ring.nodes()
    }

    fn heap_bytes(&self) -> usize {
        self.ring.heap_bytes() + self.buckets.capacity() * std::mem::size_of::<NodeId>()
    }

    /// The ring merges the server's points; the buckets are filled again.
    fn with_node(&self, node: Node) -> Result<Self, Error> {
        Ok(Self::filled(self.ring.with_node(node)?))
    }

    fn without_node(&self, name: &str) -> Result<Self, Error> {
        Ok(Self::filled(self.ring.without_node(name)?))
    }
}

impl Registered for PhpMemcache {
    /// Points follow from the names, weights and the hash.
    fn pin(&self) -> Result<Pinned, Error> {
        Ok(Pinned::default())
    }

    fn build(nodes: Vec<Node>, params: &Params) -> Result<Self, Error> {
        PhpMemcache::new(nodes, params.hash, params.max_points)
    }

    fn default_hash() -> StableHash {
        StableHash::Crc32
    }

    const READS: &'static [Param] = &[Param::MaxPoints];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::crc32;

    #[test]
    fn the_worked_example() {
        let servers = vec![Node::new("127.0.0.1:11211"), Node::new("127.0.0.1:11212")];
        let php = PhpMemcache::new(servers, StableHash::Crc32, 1 << 20).expect("builds");
        let mut first = Vec::new();
        (php.ring.scheme())
            .points(&Node::new("127.0.0.1:11211"), 1, &mut first)
            .expect("points");
        assert_eq!(cell_value(first[0]), 2_206_506_960);
        assert_eq!(crc32(b"foo") % BUCKETS, 289);
        assert_eq!(STEP * 289, 1_212_153_567);
        let foo = StableHash::Crc32.hash(b"foo");
        assert_eq!(php.owner(foo), php.ring.owner(cell_key(1_212_153_567)));
        let empty = PhpMemcache::new(Vec::new(), StableHash::Crc32, 1 << 20).expect("empty");
        assert_eq!(empty.owner(foo), None);
    }
}
