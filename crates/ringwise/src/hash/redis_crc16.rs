//! Redis Cluster's key → slot function: CRC16/XMODEM of the hash tag.
//!
//! Reference: the Redis Cluster specification ("Keys distribution model",
//! "Hash tags") and `keyHashSlot` in `redis/redis src/cluster.c`; vectors
//! from the compatibility notes §3.
//!
//! CRC16/XMODEM: polynomial `0x1021`, initial value 0, no reflection, no
//! final xor; check value `CRC16("123456789") = 0x31C3`. The slot is the
//! CRC's low 14 bits (`& 0x3FFF`).
//!
//! Hash tag, byte by byte: find the first `{`; find the first `}` after it;
//! when both exist and the bytes between are not empty, only those bytes are
//! hashed, otherwise the whole key. So `{user1000}.following` hashes
//! `user1000`, `foo{}{bar}` hashes everything (the first tag is empty and
//! Redis does not look for a second), and `foo{{bar}}zap` hashes `{bar`.

use super::key_hasher::KeyHasher;

/// Number of Redis Cluster hash slots.
pub const SLOT_COUNT: usize = 16384;

/// CRC16/XMODEM, one entry per value of the top byte, built at compile time.
const TABLE: [u16; 256] = {
    let mut table = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

/// `SLICES[k][a]`: the CRC of byte `a` followed by `k` zero bytes, i.e.
/// `TABLE[a]` pushed through `k` more steps. With them four bytes cost four
/// independent lookups (slicing-by-4).
const SLICES: [[u16; 256]; 4] = {
    let mut slices = [TABLE; 4];
    let mut k = 1;
    while k < 4 {
        let mut i = 0;
        while i < 256 {
            let t = slices[k - 1][i];
            slices[k][i] = (t << 8) ^ TABLE[(t >> 8) as usize];
            i += 1;
        }
        k += 1;
    }
    slices
};

/// CRC16/XMODEM of `bytes` (most significant bit first).
///
/// One byte a step is `crc = (crc << 8) ^ TABLE[(crc >> 8) ^ b]`. The CRC is
/// linear, so four steps split into what each of the four bytes contributes
/// after the steps still to come (the 16-bit state folds into the first
/// two): `crc = S3[(crc >> 8) ^ b0] ^ S2[(crc & 0xff) ^ b1] ^ S1[b2] ^ S0[b3]`,
/// four lookups that do not wait for each other.
fn crc16(bytes: &[u8]) -> u16 {
    let mut quads = bytes.chunks_exact(4);
    let mut crc = 0u16;
    for q in &mut quads {
        crc = SLICES[3][usize::from((crc >> 8) as u8 ^ q[0])]
            ^ SLICES[2][usize::from(crc as u8 ^ q[1])]
            ^ SLICES[1][usize::from(q[2])]
            ^ SLICES[0][usize::from(q[3])];
    }
    quads.remainder().iter().fold(crc, |crc, &b| {
        (crc << 8) ^ TABLE[usize::from((crc >> 8) as u8 ^ b)]
    })
}

/// The bytes Redis hashes for `key`: a non-empty `{tag}`, else the key.
fn hash_tag(key: &[u8]) -> &[u8] {
    let Some(open) = key.iter().position(|&b| b == b'{') else {
        return key;
    };
    let rest = &key[open + 1..];
    match rest.iter().position(|&b| b == b'}') {
        Some(len) if len > 0 => &rest[..len],
        _ => key,
    }
}

/// The Redis Cluster slot of `key`, in `0..16384` (`CLUSTER KEYSLOT`).
pub fn key_slot(key: &[u8]) -> u16 {
    crc16(hash_tag(key)) & 0x3FFF
}

/// [`KeyHasher`] that answers the Redis slot of a key, so generic keyed
/// lookups over [`crate::Slots`] (`owner(hasher.hash(key))`) find the node
/// Redis would.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RedisSlot;

impl KeyHasher for RedisSlot {
    #[inline]
    fn hash(&self, bytes: &[u8]) -> u64 {
        u64::from(key_slot(bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc16_check_value() {
        // The catalogue check value of CRC-16/XMODEM (§9 of the notes).
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(crc16(b""), 0);
    }

    /// Every vector of compatibility notes §3, with its source there.
    #[test]
    fn published_slots() {
        let vectors: &[(&[u8], u16)] = &[
            // redis.io CLUSTER KEYSLOT
            (b"somekey", 11058),
            (b"foo{hash_tag}", 2515),
            (b"bar{hash_tag}", 2515),
            // the spec requires equality; dragonflydb.io docs
            (b"{user1000}.following", 3443),
            (b"{user1000}.followers", 3443),
            (b"user1000", 3443),
            (b"{user1}.following", 8106),
            // hackage hedis HashSlot docs
            (b"123", 5970),
            (b"{123}", 5970),
            (b"{123}1{abc}", 5970),
            (b"{123", 2872),
            (b"{}123", 7640),
            (b"\x00\x01", 4129),
            // docs.rs redis-protocol (redis-cli output)
            (b"8xjx7vWrfPq54mKfFD3Y1CcjjofpnAcQ", 5458),
            // redis-cli transcripts
            (b"user:case", 9491),
            (b"user:case{1}", 9842),
            (b"user:info", 15429),
            (b"user:info{1}", 9842),
            (b"abc:1", 2336),
            (b"key:1", 6657),
            (b"{xyz:}1", 12708),
            // third-party test "verified against redis-cli"
            (b"foo", 12182),
            (b"bar", 5061),
            // computed: the spec fixes which substring is hashed
            (b"foo{}{bar}", 8363),
            (b"foo{{bar}}zap", 4015),
            (b"{bar", 4015),
            (b"foo{bar}{zap}", 5061),
            (b"", 0),
        ];
        for &(key, slot) in vectors {
            assert_eq!(key_slot(key), slot, "{:?}", String::from_utf8_lossy(key));
            assert_eq!(RedisSlot.hash(key), u64::from(slot));
        }
        // The notes call a French blog's `user:1000` → 5798 wrong.
        assert_eq!(key_slot(b"user:1000"), 1649);
    }

    #[test]
    fn tags_pick_the_first_pair() {
        assert_eq!(hash_tag(b"a{b}c{d}"), b"b");
        assert_eq!(hash_tag(b"}{x"), b"}{x");
        assert_eq!(hash_tag(b"{}"), b"{}");
        assert_eq!(hash_tag(b"x{y"), b"x{y");
        assert_eq!(hash_tag(b"{{}}"), b"{");
    }
}
