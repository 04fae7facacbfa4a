//! HAProxy's key hashes (`hash-type ... sdbm|djb2|wt6|crc32`) and Bob
//! Jenkins' 32-bit integer hash `full_hash`, which places its servers'
//! points and, with `avalanche`, mixes a key hash.
//!
//! Source: haproxy `src/hash.c` (`hash_sdbm`, `hash_djb2`, `hash_wt6`,
//! `hash_crc32`) and `include/haproxy/intops.h` (`__full_hash`), tag v2.6.0
//! (Debian 12 ships 2.6.12; these files are the same at v3.0.0). Written
//! from their definitions:
//!
//! - sdbm: `h = c + (h << 6) + (h << 16) - h` per byte, from 0;
//! - djb2: `h = h * 33 + c` per byte, from 5381;
//! - wt6: Willy Tarreau's two-lane hash with data-dependent rotations
//!   (`h0 = 0xa53c965a`, `h1 = 0x5ca6953a`, steps 6 and 18), `h0 ^ h1`;
//! - crc32 is the IEEE CRC-32, [`crate::crc32`] (the same as nginx's);
//! - `full_hash(a)`: Jenkins' six-step avalanche, then `× 3221225473`
//!   ("a large prime close to 3/4 of the tree").
//!
//! All are 32-bit; as key hashes they sit at the middle of their 32-bit
//! cell ([`super::cell_key`]). Bytes are unsigned (`const unsigned char *`).
//! Vectors: `tests/hash_vectors.rs` (computed with these C functions).

/// HAProxy's `hash_sdbm` (the default of `hash-type`).
pub fn sdbm(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0u32, |h, &c| {
        u32::from(c)
            .wrapping_add(h << 6)
            .wrapping_add(h << 16)
            .wrapping_sub(h)
    })
}

/// HAProxy's `hash_djb2`.
pub fn djb2(bytes: &[u8]) -> u32 {
    bytes.iter().fold(5381u32, |h, &c| {
        (h << 5).wrapping_add(h).wrapping_add(u32::from(c))
    })
}

/// HAProxy's `hash_wt6`.
pub fn wt6(bytes: &[u8]) -> u32 {
    let (mut h0, mut h1) = (0xa53c_965au32, 0x5ca6_953au32);
    let (mut step0, mut step1) = (6u32, 18u32);
    for &c in bytes {
        let t = u32::from(c);
        h0 = !(h0 ^ t);
        h1 = !(h1.wrapping_add(t));
        let t = h1.rotate_left(step0);
        h1 = h0.rotate_left(step1);
        h0 = t;
        let t = ((h0 >> 16) ^ h1) & 0xffff;
        step0 = t & 0x1f;
        step1 = t >> 11;
    }
    h0 ^ h1
}

/// HAProxy's `full_hash`: Jenkins' 32-bit integer avalanche, then the
/// multiplication by 3221225473.
pub const fn full_hash(a: u32) -> u32 {
    let a = a.wrapping_add(0x7ed5_5d16).wrapping_add(a << 12);
    let a = (a ^ 0xc761_c23c) ^ (a >> 19);
    let a = a.wrapping_add(0x1656_67b1).wrapping_add(a << 5);
    let a = a.wrapping_add(0xd3a2_646c) ^ (a << 9);
    let a = a.wrapping_add(0xfd70_46c5).wrapping_add(a << 3);
    let a = (a ^ 0xb55a_4f09) ^ (a >> 16);
    a.wrapping_mul(3_221_225_473)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_keys_are_the_seeds() {
        assert_eq!(sdbm(b""), 0);
        assert_eq!(djb2(b""), 5381);
        assert_eq!(wt6(b""), 0xa53c_965a ^ 0x5ca6_953a);
    }

    #[test]
    fn one_byte_by_hand() {
        // sdbm("a") = 97; djb2("a") = 5381·33 + 97.
        assert_eq!(sdbm(b"a"), 97);
        assert_eq!(djb2(b"a"), 177_670);
        // sdbm("ab") = 98 + 97·(64 + 65536 - 1).
        assert_eq!(sdbm(b"ab"), 98 + 97 * 65_599);
    }
}
