//! The x86 `crc32q` instruction in software: CRC-32C (Castagnoli) of a
//! 64-bit word's 8 little-endian bytes, with the 32-bit seed as the running
//! CRC and neither the usual initial nor the final inversion.
//!
//! Why: the AnchorHash authors' reference (`crc32c_sse42_u64(key, seed)`)
//! and MementoHash's C++ sibling (`getBucketCRC32c`) hash with this one
//! instruction, so `anchor` and `memento` need it bit for bit. Intrinsics
//! need `unsafe` (forbidden here) and a CPU check; eight table lookups
//! (slicing-by-8, 8 KiB of tables built at compile time) cost a few
//! nanoseconds.
//!
//! Worked check: `crc32c_u64(0, 0) = 0` (no inversion: zeros stay zero),
//! and the reference vectors (`tests/fixtures/*_vectors.txt`, produced by
//! the hardware instruction) agree on every key.

/// The reflected Castagnoli polynomial.
const POLY: u32 = 0x82F6_3B78;

/// `TABLES[k][i]`: the CRC of byte `i` followed by `k` zero bytes.
static TABLES: [[u32; 256]; 8] = tables();

const fn tables() -> [[u32; 256]; 8] {
    let mut t = [[0u32; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u32;
        let mut bit = 0;
        while bit < 8 {
            crc = (crc >> 1) ^ (POLY & (crc & 1).wrapping_neg());
            bit += 1;
        }
        t[0][i] = crc;
        i += 1;
    }
    let mut k = 1;
    while k < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = t[k - 1][i];
            t[k][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            i += 1;
        }
        k += 1;
    }
    t
}

/// `crc32q key, seed`: the seed's low 32 bits start the CRC (the
/// instruction ignores the high ones), the key's bytes follow, low first.
#[inline]
pub(crate) fn crc32c_u64(key: u64, seed: u64) -> u32 {
    let v = key ^ (seed & 0xFFFF_FFFF);
    let byte = |i: u32| ((v >> (8 * i)) & 0xff) as usize;
    TABLES[7][byte(0)]
        ^ TABLES[6][byte(1)]
        ^ TABLES[5][byte(2)]
        ^ TABLES[4][byte(3)]
        ^ TABLES[3][byte(4)]
        ^ TABLES[2][byte(5)]
        ^ TABLES[1][byte(6)]
        ^ TABLES[0][byte(7)]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit-at-a-time CRC over the 8 bytes: the definition.
    fn slow(key: u64, seed: u64) -> u32 {
        let mut crc = seed as u32;
        for byte in key.to_le_bytes() {
            crc ^= u32::from(byte);
            for _ in 0..8 {
                crc = (crc >> 1) ^ (POLY & (crc & 1).wrapping_neg());
            }
        }
        crc
    }

    #[test]
    fn tables_agree_with_the_definition() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for i in 0..2000u64 {
            x = x.rotate_left(17).wrapping_mul(0xBF58_476D_1CE4_E5B9) ^ i;
            assert_eq!(crc32c_u64(x, i.wrapping_mul(x)), slow(x, i.wrapping_mul(x)));
        }
        assert_eq!(crc32c_u64(0, 0), 0);
    }

    /// With the usual inversions around it, the raw update is standard
    /// CRC-32C: of eight zero bytes 0x8C28B28A, and of "12345678" then "9"
    /// (the catalogue's check input) the check value 0xE3069283.
    #[test]
    fn with_inversions_it_is_standard_crc32c() {
        assert_eq!(!crc32c_u64(0, 0xFFFF_FFFF), 0x8C28_B28A);
        let eight = u64::from_le_bytes(*b"12345678");
        let mut crc = crc32c_u64(eight, 0xFFFF_FFFF);
        crc ^= u32::from(b'9');
        for _ in 0..8 {
            crc = (crc >> 1) ^ (POLY & (crc & 1).wrapping_neg());
        }
        assert_eq!(!crc, 0xE306_9283);
    }
}
