//! The key hashes of deployed placements, bit for bit: ketama's MD5, nginx's
//! CRC32, twemproxy's `fnv1a_64` and Cassandra's Murmur3 token.
//!
//! Sources: libmemcached `libhashkit/{md5,fnv_64}.cc`, twemproxy
//! `src/hashkit/`, nginx `src/core/ngx_crc32.h`, Cassandra
//! `utils/MurmurHash.java` and `dht/Murmur3Partitioner.java` (the
//! compatibility notes, §1, §2, §6, give every step and the vectors).
//!
//! **32-bit cells.** Ketama and nginx compare 32-bit values. A ring has one
//! 64-bit circle, so a 32-bit value `v` owns the *cell* `v·2^32 ..
//! v·2^32 + 2^32 - 1`: a key hashes to the middle of its cell
//! ([`cell_key`]), and a point sits at the end of its cell where the peer
//! picks the first point `>=` the key, or at the start where it picks the
//! first point `>` ([`cell_point`]). Order and ties are those of the 32-bit
//! values. Worked example, key hash 7:
//!
//! | 32-bit point | `>=` point (end)  | `>` point (start) | key (middle)      |
//! |--------------|-------------------|-------------------|-------------------|
//! | 7            | `7·2^32 + 2^32-1` | `7·2^32`          | `7·2^32 + 2^31`   |
//!
//! The `>=` point is above the key (7 owns it, as libmemcached says), the
//! `>` point below it (the next point owns it, as uhashring's `bisect`
//! says), and every point of 6 or less is below both, of 8 or more above.
//!
//! **Signed tokens.** Cassandra orders `i64` tokens; flipping the sign bit
//! ([`token_point`]) maps them onto `u64` in the same order, so the ring's
//! "first point `>=`" is Cassandra's "first token `>=`".

/// The middle of the 64-bit cell of a 32-bit key hash.
#[inline]
pub const fn cell_key(hash: u32) -> u64 {
    (hash as u64) << 32 | 0x8000_0000
}

/// The 64-bit position of a 32-bit point: the end of its cell when keys go
/// to the first point `>=` their hash (`after_equal_keys`), the start when
/// they go to the first point `>`.
#[inline]
pub const fn cell_point(point: u32, after_equal_keys: bool) -> u64 {
    let base = (point as u64) << 32;
    if after_equal_keys {
        base | 0xFFFF_FFFF
    } else {
        base
    }
}

/// The 32-bit value of a cell (of a point or key hash made by [`cell_key`]
/// or [`cell_point`]).
#[inline]
pub const fn cell_value(position: u64) -> u32 {
    (position >> 32) as u32
}

/// A Cassandra token's position on the ring: the sign bit flipped, so that
/// `i64` order is `u64` order (`i64::MIN` → 0, `-1` → `2^63 - 1`, `0` →
/// `2^63`).
#[inline]
pub const fn token_point(token: i64) -> u64 {
    (token as u64) ^ (1 << 63)
}

/// The token at a ring position made by [`token_point`].
#[inline]
pub const fn point_token(point: u64) -> i64 {
    (point ^ (1 << 63)) as i64
}

/// The four ketama points of one MD5 digest: little-endian `u32`s of bytes
/// 0..4, 4..8, 8..12, 12..16 (libmemcached's `ketama_server_hash(name, 0..4)`).
#[inline]
pub fn md5_le32x4(bytes: &[u8]) -> [u32; 4] {
    use md5::{Digest, Md5};
    let digest = Md5::digest(bytes);
    std::array::from_fn(|j| {
        u32::from_le_bytes([
            digest[4 * j],
            digest[4 * j + 1],
            digest[4 * j + 2],
            digest[4 * j + 3],
        ])
    })
}

/// Ketama's key hash: the first four MD5 bytes as a little-endian `u32`.
/// `"apple"` → 3195025439 (twemproxy's `test_all.c`).
#[inline]
pub fn md5_le32(bytes: &[u8]) -> u32 {
    md5_le32x4(bytes)[0]
}

/// CRC-32 (IEEE, zlib's): nginx's `ngx_crc32_long`.
/// `"123456789"` → `0xCBF43926`.
#[inline]
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// pecl memcache's `fnv` (`mmc_hash_fnv1a` in `memcache_pool.c`): 32-bit
/// FNV-1a (offset basis `0x811c9dc5`, prime `0x01000193`, xor then
/// multiply), each byte read as a C `char` and cast to `unsigned int`. On
/// x86, where `char` is signed (Debian's amd64 package), a byte of `0x80`
/// or more is sign-extended: `0xE9` is xored in as `0xFFFFFFE9`. ASCII
/// keys hash as textbook FNV-1a; `"a"` gives `0xe40c292c`.
pub fn fnv1a32_php(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, &b| {
        (h ^ (b as i8 as i32 as u32)).wrapping_mul(0x0100_0193)
    })
}

/// twemproxy's and libmemcached's `fnv1a_64`, which is 32-bit: the state
/// starts at the low half of the 64-bit offset basis, the multiplier is
/// 64-bit FNV's `0x1b3` taken mod 2^32, and bytes are read as C's signed
/// `char`, so a byte `>= 0x80` is XORed in as `0xFFFFFFxx`.
/// `"apple"` → 1488911807.
#[inline]
pub fn fnv1a64_twemproxy(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x8422_2325u32, |h, &b| {
        (h ^ (b as i8 as i32 as u32)).wrapping_mul(0x1b3)
    })
}

/// Cassandra's `Murmur3Partitioner` token of a partition key's bytes:
/// MurmurHash3 x64_128 with seed 0, `h1` as `i64`, with Cassandra's quirk
/// that tail bytes (the last `len % 16`) are sign-extended before they are
/// shifted in, so keys whose tail holds a byte `>= 0x80` differ from the
/// reference hash. The empty key is `i64::MIN`; a key hashing to `i64::MIN`
/// becomes `i64::MAX` (Cassandra keeps `MIN` as the ring's minimum).
///
/// ```
/// assert_eq!(ringwise::cassandra_token(b"123"), -7468325962851647638);
/// assert_eq!(ringwise::cassandra_token(&[0xfe; 8]), -8927430733708461935);
/// assert_eq!(ringwise::cassandra_token(b""), i64::MIN);
/// ```
pub fn cassandra_token(key: &[u8]) -> i64 {
    if key.is_empty() {
        return i64::MIN;
    }
    match murmur3_cassandra_h1(key) as i64 {
        i64::MIN => i64::MAX,
        token => token,
    }
}

/// A composite partition key as Cassandra serializes it: for each
/// component, its length as a big-endian `u16`, its bytes, then a zero
/// byte. A single component is its bytes alone (not composite). `None` if
/// a component is longer than 65535 bytes.
pub fn composite_partition_key(components: &[&[u8]]) -> Option<Vec<u8>> {
    if let [single] = components {
        return Some(single.to_vec());
    }
    let size = components.iter().map(|c| c.len() + 3).sum();
    let mut key = Vec::with_capacity(size);
    for component in components {
        let len = u16::try_from(component.len()).ok()?;
        key.extend_from_slice(&len.to_be_bytes());
        key.extend_from_slice(component);
        key.push(0);
    }
    Some(key)
}

const C1: u64 = 0x87c3_7b91_1142_53d5;
const C2: u64 = 0x4cf5_ad43_2745_937f;

fn fmix(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

/// `h1` of MurmurHash3 x64_128 (seed 0) as Cassandra computes it.
fn murmur3_cassandra_h1(key: &[u8]) -> u64 {
    let (mut h1, mut h2) = (0u64, 0u64);
    let mut blocks = key.chunks_exact(16);
    for block in &mut blocks {
        let k1 = u64::from_le_bytes(block[..8].try_into().unwrap_or([0; 8]));
        let k2 = u64::from_le_bytes(block[8..].try_into().unwrap_or([0; 8]));
        h1 ^= k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
        h1 = h1
            .rotate_left(27)
            .wrapping_add(h2)
            .wrapping_mul(5)
            .wrapping_add(0x52dc_e729);
        h2 ^= k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
        h2 = h2
            .rotate_left(31)
            .wrapping_add(h1)
            .wrapping_mul(5)
            .wrapping_add(0x3849_5ab5);
    }
    // The tail: Java's `(long) key.get(i)` of a signed byte, so 0xfe is
    // ...fffe before the shift. XOR of shifted sign-extended bytes is the
    // quirk; with bytes below 0x80 it is the reference algorithm.
    let (mut k1, mut k2) = (0u64, 0u64);
    for (i, &b) in blocks.remainder().iter().enumerate() {
        let byte = b as i8 as i64 as u64;
        if i < 8 {
            k1 ^= byte << (8 * i);
        } else {
            k2 ^= byte << (8 * (i - 8));
        }
    }
    if blocks.remainder().len() > 8 {
        h2 ^= k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
    }
    if !blocks.remainder().is_empty() {
        h1 ^= k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
    }
    let len = key.len() as u64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix(h1);
    h2 = fmix(h2);
    h1.wrapping_add(h2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_vectors() {
        assert_eq!(md5_le32(b"apple"), 3_195_025_439);
        assert_eq!(crc32(b"apple"), 2_838_417_488);
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(fnv1a64_twemproxy(b"apple"), 1_488_911_807);
        assert_eq!(md5_le32x4(b"server1-8")[0], 3_853_726_576);
        assert_eq!(md5_le32x4(b"server1-8")[3], 2_667_054_752);
        assert_eq!(
            md5_le32x4(b"10.0.1.1-0"),
            [2_383_802_539, 488_362_977, 2_185_284_489, 383_925_769]
        );
    }

    #[test]
    fn cassandra_tokens() {
        let cases: [(Vec<u8>, i64); 7] = [
            (b"123".to_vec(), -7_468_325_962_851_647_638),
            (
                b"\x00\xff\x10\xfa\x99".repeat(10),
                5_837_342_703_291_459_765,
            ),
            (vec![0xfe; 8], -8_927_430_733_708_461_935),
            (vec![0x10; 8], 1_446_172_840_243_228_796),
            (b"9223372036854775807".to_vec(), 7_162_290_910_810_015_547),
            ((1..=16).collect(), -5_563_837_382_979_743_776),
            ((2..=17).collect(), -1_513_403_162_740_402_161),
        ];
        for (key, token) in cases {
            assert_eq!(cassandra_token(&key), token, "{key:?}");
        }
    }

    #[test]
    fn cells_order_like_32_bit_values() {
        for (p, k) in [(7u32, 7u32), (6, 7), (8, 7), (0, 0), (u32::MAX, u32::MAX)] {
            assert_eq!(cell_point(p, true) >= cell_key(k), p >= k, "{p} >= {k}");
            assert_eq!(cell_point(p, false) >= cell_key(k), p > k, "{p} > {k}");
        }
        assert_eq!(cell_value(cell_key(7)), 7);
        for t in [i64::MIN, -1, 0, 1, i64::MAX] {
            assert_eq!(point_token(token_point(t)), t);
        }
        assert!(token_point(-1) < token_point(0));
    }

    #[test]
    fn composite_keys() {
        assert_eq!(
            composite_partition_key(&[b"ab", b"c"]),
            Some(vec![0, 2, b'a', b'b', 0, 0, 1, b'c', 0])
        );
        assert_eq!(composite_partition_key(&[b"ab"]), Some(b"ab".to_vec()));
    }
}
