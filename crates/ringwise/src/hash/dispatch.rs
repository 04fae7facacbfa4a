//! `impl KeyHasher for StableHash`: the one match from a hash's name to
//! its function.
//!
//! [`StableHash`] is an enum, so hashing one key is a match and then the
//! function. A batch (`Keyed::owners_into`, the CLI's and Python's many-key
//! calls) hashes blocks of 256 keys: `hash_each` runs the match once per
//! block, and each arm's loop inlines its function, instead of calling the
//! whole match once per key (measured on xxh3, where the call and the match
//! cost about as much as the 2 ns hash: BENCHMARKS.md, "Core lookups").
//! Both calls expand the one list in `with_function!`, so they cannot
//! disagree. A block of `md5` keys goes through the eight-lane MD5
//! (`md5_lanes.rs`), bit for bit the same points, and so does a block of
//! ketama's `md5-le32` keys (the first state word of the same lanes).
//!
//! Cost: O(bytes) per key, no allocation.

use siphasher::sip::SipHasher24;

use super::{
    KeyHasher, MD5_LANES, StableHash, cassandra_token, cell_key, crc32, djb2, fnv1a32_php, fnv1a64,
    fnv1a64_twemproxy, key_slot, md5_le32, md5_prefix, md5_x8, murmur3_h1, sdbm, token_point,
    varnish_key, varnish_req_hash, wt6,
};

/// Runs `$body` with `$f` bound to the function `$hash` names: the one
/// match over the hashes, shared by `hash` (one key) and `hash_each` (a
/// block of keys: the match runs once and each arm's loop inlines its
/// function).
macro_rules! with_function {
    ($hash:expr, |$f:ident| $body:expr) => {
        match $hash {
            StableHash::Md5 => {
                let $f = md5_prefix;
                $body
            }
            StableHash::Xxh3 => {
                let $f = xxhash_rust::xxh3::xxh3_64;
                $body
            }
            StableHash::Xxh64 => {
                let $f = |b: &[u8]| xxhash_rust::xxh64::xxh64(b, 0);
                $body
            }
            StableHash::Murmur3 => {
                let $f = murmur3_h1;
                $body
            }
            StableHash::Fnv1a64 => {
                let $f = fnv1a64;
                $body
            }
            StableHash::SipHash { key } => {
                let $f = |b: &[u8]| SipHasher24::new_with_key(key).hash(b);
                $body
            }
            StableHash::RedisCrc16 => {
                let $f = |b: &[u8]| u64::from(key_slot(b));
                $body
            }
            StableHash::Md5Le32 => {
                let $f = |b: &[u8]| cell_key(md5_le32(b));
                $body
            }
            StableHash::Crc32 => {
                let $f = |b: &[u8]| cell_key(crc32(b));
                $body
            }
            StableHash::Fnv1a64Twemproxy => {
                let $f = |b: &[u8]| cell_key(fnv1a64_twemproxy(b));
                $body
            }
            StableHash::Murmur3Cassandra => {
                let $f = |b: &[u8]| token_point(cassandra_token(b));
                $body
            }
            StableHash::VarnishKey => {
                let $f = |b: &[u8]| cell_key(varnish_key(b));
                $body
            }
            StableHash::VarnishReqHash => {
                let $f = |b: &[u8]| cell_key(varnish_req_hash(b));
                $body
            }
            StableHash::Sdbm => {
                let $f = |b: &[u8]| cell_key(sdbm(b));
                $body
            }
            StableHash::Djb2 => {
                let $f = |b: &[u8]| cell_key(djb2(b));
                $body
            }
            StableHash::Wt6 => {
                let $f = |b: &[u8]| cell_key(wt6(b));
                $body
            }
            StableHash::Fnv1a32Php => {
                let $f = |b: &[u8]| cell_key(fnv1a32_php(b));
                $body
            }
        }
    };
}

impl KeyHasher for StableHash {
    #[inline]
    fn hash(&self, bytes: &[u8]) -> u64 {
        with_function!(self, |f| f(bytes))
    }

    fn hash_each<K: AsRef<[u8]>>(&self, keys: &[K], out: &mut [u64]) {
        match self {
            // The seed recipe's point: digest bytes 0..8 big-endian, that is
            // `swap(a) << 32 | swap(b)` of the state words `a`, `b`.
            StableHash::Md5 => {
                return md5_each(keys, out, |[a, b, _, _]| {
                    (u64::from(a.swap_bytes()) << 32) | u64::from(b.swap_bytes())
                });
            }
            // Ketama's: digest bytes 0..4 little-endian, the word `a`.
            StableHash::Md5Le32 => return md5_each(keys, out, |[a, _, _, _]| cell_key(a)),
            _ => {}
        }
        with_function!(self, |f| {
            for (h, key) in out.iter_mut().zip(keys) {
                *h = f(key.as_ref());
            }
        })
    }
}

/// The MD5 hashes (`md5`, ketama's `md5-le32`) eight keys at a time
/// through the lanes of `hash/md5_lanes.rs` (2.5–3.4× the one-at-a-time
/// MD5 on short keys); `value` makes each key's hash from its four state
/// words. A batch of eight costs as much as its longest key, so a block
/// mixing one long key with short ones hashes up to eight times its bytes;
/// still O(bytes) per block, and no allocation.
#[inline]
fn md5_each<K: AsRef<[u8]>>(keys: &[K], out: &mut [u64], value: impl Fn([u32; 4]) -> u64) {
    let n = keys.len().min(out.len());
    for (keys, out) in keys[..n]
        .chunks(MD5_LANES)
        .zip(out[..n].chunks_mut(MD5_LANES))
    {
        let lanes = std::array::from_fn(|l| keys.get(l).map_or(&[][..], AsRef::as_ref));
        let words = md5_x8(lanes);
        for (h, &w) in out.iter_mut().zip(&words) {
            *h = value(w);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_hashes_as_one_key_at_a_time() {
        let keys: Vec<Vec<u8>> = (0..300u32)
            .map(|i| (0..i % 70).map(|j| (i * 31 + j * 7) as u8).collect())
            .collect();
        for name in StableHash::NAMES {
            let secret = (*name == "siphash").then_some("000102030405060708090a0b0c0d0e0f");
            let hash = StableHash::from_name(name, secret).expect("known name");
            let mut out = vec![0u64; keys.len() + 1];
            hash.hash_each(&keys, &mut out);
            let one: Vec<u64> = keys.iter().map(|k| hash.hash(k)).collect();
            assert_eq!(&out[..keys.len()], &one[..], "{name}");
            assert_eq!(out[keys.len()], 0, "{name}: only as many as the keys");
        }
    }
}
