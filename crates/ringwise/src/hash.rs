//! Stable hash functions: key bytes in, `u64` out.
//!
//! Placement must not depend on the process, platform or Rust version, so
//! ringwise never uses `std::hash::Hash`, `DefaultHasher` or `RandomState`
//! (Rust's own `Hash` impls and SipHash keys may change between releases and
//! runs). Every function here is a published algorithm with a stable name used
//! in cluster files, on the command line and from Python:
//!
//! | name      | definition                                                    |
//! |-----------|---------------------------------------------------------------|
//! | `md5`     | first 8 bytes of the MD5 digest, big-endian (the seed recipe)  |
//! | `xxh3`    | XXH3 64-bit, seed 0 (the default: fastest and well mixed)      |
//! | `xxh64`   | XXH64, seed 0                                                 |
//! | `murmur3` | MurmurHash3 x64_128, seed 0, the first half `h1`               |
//! | `fnv1a64` | 64-bit FNV-1a                                                 |
//! | `siphash` | SipHash-2-4 keyed with the cluster's 128-bit secret           |
//! | `redis-crc16` | Redis Cluster key slot (CRC16 + hash tags), for `slots` |
//! | `md5-le32` | ketama's: first 4 MD5 bytes, little-endian (32-bit)         |
//! | `crc32`   | CRC-32 (IEEE), nginx's `hash ... consistent` (32-bit)         |
//! | `fnv1a64-twemproxy` | twemproxy's `fnv1a_64`, really 32-bit (see below) |
//! | `murmur3-cassandra` | Cassandra's Murmur3Partitioner token           |
//! | `varnish-key` | Varnish's `VRT_HashStrands32`: SHA-256, last 4 bytes LE (32-bit) |
//! | `varnish-req-hash` | Varnish's request digest, SHA-256 of `key ‖ 0x00`, first 4 bytes BE (32-bit) |
//! | `sdbm`    | HAProxy's default `hash-type` function (32-bit)              |
//! | `djb2`    | HAProxy's `djb2` (32-bit)                                     |
//! | `wt6`     | HAProxy's `wt6` (32-bit)                                      |
//! | `fnv1a32-php` | pecl memcache's `fnv`: FNV-1a 32, bytes sign-extended (32-bit) |
//!
//! The last ten are the key hashes of deployed placements, bit for bit
//! (`hash/wire.rs`). The 32-bit ones put a key at the middle of its 32-bit
//! *cell* of the 64-bit circle, `v·2^32 + 2^31`, so 32-bit rings compare in
//! their own space; `murmur3-cassandra` maps the signed token onto the
//! circle in token order ([`token_point`]). All of them spread keys over any
//! algorithm, but only the rings of their peers reproduce the peer.
//!
//! Why `siphash`: with a public hash anyone who can choose keys can find many
//! that land on one node and overload it. A keyed hash with a secret shared by
//! the cluster's clients makes that guess impossible.

use std::fmt;
use std::str::FromStr;

use md5::{Digest, Md5};

use crate::Error;

mod crc32c;
mod dispatch;
mod haproxy;
mod key_hasher;
mod md5_lanes;
mod redis_crc16;
mod tag;
mod varnish;
mod wire;

pub(crate) use crc32c::crc32c_u64;
pub use haproxy::{djb2, full_hash, sdbm, wt6};
pub use key_hasher::KeyHasher;
pub use md5_lanes::{MD5_LANES, md5_blocks, md5_prefix_batch, md5_prefix_x8, md5_x8};
pub use redis_crc16::{RedisSlot, SLOT_COUNT, key_slot};
pub use tag::HashTag;
pub use varnish::{varnish_key, varnish_req_hash};
pub use wire::{
    cassandra_token, cell_key, cell_point, cell_value, composite_partition_key, crc32, fnv1a32_php,
    fnv1a64_twemproxy, md5_le32, md5_le32x4, point_token, token_point,
};

/// Every built-in hash, in documentation order: the one list that
/// [`StableHash::NAMES`] and [`StableHash::from_name`] follow (`siphash`'s
/// key is a placeholder; the real one comes with the secret).
const ALL: [StableHash; 17] = [
    StableHash::Md5,
    StableHash::Xxh3,
    StableHash::Xxh64,
    StableHash::Murmur3,
    StableHash::Fnv1a64,
    StableHash::SipHash { key: [0; 16] },
    StableHash::RedisCrc16,
    StableHash::Md5Le32,
    StableHash::Crc32,
    StableHash::Fnv1a64Twemproxy,
    StableHash::Murmur3Cassandra,
    StableHash::VarnishKey,
    StableHash::VarnishReqHash,
    StableHash::Sdbm,
    StableHash::Djb2,
    StableHash::Wt6,
    StableHash::Fnv1a32Php,
];

const NAMES: [&str; ALL.len()] = {
    let mut names = [""; ALL.len()];
    let mut i = 0;
    while i < ALL.len() {
        names[i] = ALL[i].name();
        i += 1;
    }
    names
};

/// The built-in stable hashes, chosen by name.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum StableHash {
    /// First 8 bytes of MD5, big-endian: the seed recipe.
    Md5,
    /// XXH3-64 with seed 0. The default.
    #[default]
    Xxh3,
    /// XXH64 with seed 0.
    Xxh64,
    /// MurmurHash3 x64_128 with seed 0, `h1` (the first 8 digest bytes, little-endian).
    Murmur3,
    /// 64-bit FNV-1a.
    Fnv1a64,
    /// SipHash-2-4 keyed with a 128-bit secret (`k0` = first 8 bytes LE, `k1` = last 8).
    SipHash { key: [u8; 16] },
    /// Redis Cluster's key slot: CRC16/XMODEM of the hash tag (or the whole
    /// key), modulo 16384. The default of the `slots` algorithm; a 14-bit
    /// value, useless for the other algorithms.
    RedisCrc16,
    /// Ketama's key hash: the first 4 MD5 bytes as a little-endian `u32`,
    /// at the middle of its 32-bit cell ([`cell_key`]).
    Md5Le32,
    /// CRC-32 (IEEE), nginx's key hash, at the middle of its 32-bit cell.
    Crc32,
    /// twemproxy's default `fnv1a_64`, a 32-bit hash ([`fnv1a64_twemproxy`]),
    /// at the middle of its 32-bit cell.
    Fnv1a64Twemproxy,
    /// Cassandra's Murmur3Partitioner token ([`cassandra_token`]) at its
    /// place on the circle ([`token_point`]).
    Murmur3Cassandra,
    /// Varnish's `VRT_HashStrands32` ([`varnish_key`]): the shard
    /// director's `key()`, `by=KEY` and `by=URL`; at the middle of its
    /// 32-bit cell.
    VarnishKey,
    /// Varnish's request digest as the shard director's `by=HASH` reads it
    /// in backend context ([`varnish_req_hash`]); at the middle of its
    /// 32-bit cell.
    VarnishReqHash,
    /// HAProxy's `sdbm` ([`sdbm`]), at the middle of its 32-bit cell.
    Sdbm,
    /// HAProxy's `djb2` ([`djb2`]), at the middle of its 32-bit cell.
    Djb2,
    /// HAProxy's `wt6` (`wt6` in this module), at the middle of its 32-bit cell.
    Wt6,
    /// pecl memcache's `memcache.hash_function = fnv` (`fnv1a32_php`),
    /// at the middle of its 32-bit cell.
    Fnv1a32Php,
}

impl StableHash {
    /// Every name [`StableHash::from_name`] accepts, in documentation order.
    pub const NAMES: &'static [&'static str] = &NAMES;

    /// The stable name (`md5`, `xxh3`, ...).
    pub const fn name(&self) -> &'static str {
        match self {
            StableHash::Md5 => "md5",
            StableHash::Xxh3 => "xxh3",
            StableHash::Xxh64 => "xxh64",
            StableHash::Murmur3 => "murmur3",
            StableHash::Fnv1a64 => "fnv1a64",
            StableHash::SipHash { .. } => "siphash",
            StableHash::RedisCrc16 => "redis-crc16",
            StableHash::Md5Le32 => "md5-le32",
            StableHash::Crc32 => "crc32",
            StableHash::Fnv1a64Twemproxy => "fnv1a64-twemproxy",
            StableHash::Murmur3Cassandra => "murmur3-cassandra",
            StableHash::VarnishKey => "varnish-key",
            StableHash::VarnishReqHash => "varnish-req-hash",
            StableHash::Sdbm => "sdbm",
            StableHash::Djb2 => "djb2",
            StableHash::Wt6 => "wt6",
            StableHash::Fnv1a32Php => "fnv1a32-php",
        }
    }

    /// Whether hashes spread evenly over all of `u64`, so that a table's
    /// entry `h % M` owns exactly its count of hashes' share of the keys
    /// (`inspect`'s exact table shares): false for the 32-bit hashes set at
    /// the middle of their cell (`md5-le32`, `crc32`, `fnv1a64-twemproxy`,
    /// Varnish's two, HAProxy's `sdbm`, `djb2`, `wt6`:
    /// with `M` = 16384 every key's `h % M` is slot 0) and for
    /// `redis-crc16`, whose 14-bit value is the slot itself.
    pub const fn is_full_width(&self) -> bool {
        match self {
            StableHash::Md5
            | StableHash::Xxh3
            | StableHash::Xxh64
            | StableHash::Murmur3
            | StableHash::Fnv1a64
            | StableHash::SipHash { .. }
            | StableHash::Murmur3Cassandra => true,
            StableHash::RedisCrc16
            | StableHash::Md5Le32
            | StableHash::Crc32
            | StableHash::Fnv1a64Twemproxy
            | StableHash::VarnishKey
            | StableHash::VarnishReqHash
            | StableHash::Sdbm
            | StableHash::Djb2
            | StableHash::Wt6
            | StableHash::Fnv1a32Php => false,
        }
    }

    /// Looks a hash up by name; `secret` is required by `siphash` and rejected
    /// by the others (a secret that silently does nothing is a trap).
    pub fn from_name(name: &str, secret: Option<&str>) -> Result<Self, Error> {
        let Some(&hash) = ALL.iter().find(|h| h.name() == name) else {
            return Err(Error::UnknownHash {
                name: name.into(),
                known: &NAMES,
            });
        };
        match (hash, secret) {
            (StableHash::SipHash { .. }, Some(secret)) => Ok(StableHash::SipHash {
                key: parse_secret(secret)?,
            }),
            (StableHash::SipHash { .. }, None) => Err(Error::InvalidSecret {
                reason: "hash `siphash` needs a 128-bit secret (32 hex digits)".into(),
            }),
            (hash, None) => Ok(hash),
            (_, Some(_)) => Err(Error::InvalidSecret {
                reason: format!("hash `{name}` takes no secret; only `siphash` is keyed"),
            }),
        }
    }
}

impl FromStr for StableHash {
    type Err = Error;

    /// Parses an unkeyed hash name; use [`StableHash::from_name`] for `siphash`.
    fn from_str(name: &str) -> Result<Self, Error> {
        StableHash::from_name(name, None)
    }
}

impl fmt::Display for StableHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Debug for StableHash {
    // The secret is never printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The seed recipe's point: `int.from_bytes(md5(s).digest()[:8], "big")`.
fn md5_prefix(bytes: &[u8]) -> u64 {
    let digest = Md5::digest(bytes);
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first)
}

fn murmur3_h1(bytes: &[u8]) -> u64 {
    // The crate returns the digest as `h2 << 64 | h1`; reading from a slice
    // cannot fail.
    let mut reader = bytes;
    let full = murmur3::murmur3_x64_128(&mut reader, 0).unwrap_or(0);
    full as u64
}

fn fnv1a64(bytes: &[u8]) -> u64 {
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes
        .iter()
        .fold(OFFSET_BASIS, |h, &b| (h ^ u64::from(b)).wrapping_mul(PRIME))
}

/// Parses a 128-bit secret written as 32 hexadecimal digits.
fn parse_secret(text: &str) -> Result<[u8; 16], Error> {
    let text = text.trim();
    if text.len() != 32 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::InvalidSecret {
            reason: format!(
                "expected exactly 32 hexadecimal digits (128 bits), got {} characters; \
                 generate one with `openssl rand -hex 16`",
                text.chars().count()
            ),
        });
    }
    let mut key = [0u8; 16];
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap_or(0);
    }
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in NAMES {
            let secret = (name == "siphash").then_some("000102030405060708090a0b0c0d0e0f");
            let hash = StableHash::from_name(name, secret).expect("known name");
            assert_eq!(hash.name(), name);
        }
    }

    #[test]
    fn secret_rules() {
        assert!(matches!(
            StableHash::from_name("siphash", None),
            Err(Error::InvalidSecret { .. })
        ));
        assert!(matches!(
            StableHash::from_name("siphash", Some("abc")),
            Err(Error::InvalidSecret { .. })
        ));
        assert!(matches!(
            StableHash::from_name("xxh3", Some("000102030405060708090a0b0c0d0e0f")),
            Err(Error::InvalidSecret { .. })
        ));
        assert!(matches!(
            "sha1".parse::<StableHash>(),
            Err(Error::UnknownHash { .. })
        ));
    }

    #[test]
    fn debug_hides_the_secret() {
        let hash = StableHash::SipHash { key: [7; 16] };
        assert_eq!(format!("{hash:?}"), "siphash");
    }
}
