//! [`KeyHasher`]: the one trait every key hash implements, the built-in
//! [`crate::StableHash`] (`hash.rs`), Redis's [`crate::RedisSlot`]
//! (`hash/redis_crc16.rs`) and a caller's own. It imports nothing, so the
//! hashes that implement it and the code that dispatches to them need not
//! import each other.

/// A stable 64-bit hash of key bytes.
///
/// Implement it to bring your own function (tests use a deliberately weak
/// 8-bit one). It must be a pure function of the bytes.
pub trait KeyHasher {
    /// The hash of `bytes`.
    fn hash(&self, bytes: &[u8]) -> u64;

    /// The hash of each key into `out`, pairwise (the shorter of the two
    /// sets the count): what the batch lookups call, once per block of
    /// keys. The default is a loop of [`KeyHasher::hash`]; an enum of
    /// functions such as [`crate::StableHash`] overrides it to choose its
    /// function once per block rather than once per key. O(bytes).
    fn hash_each<K: AsRef<[u8]>>(&self, keys: &[K], out: &mut [u64])
    where
        Self: Sized,
    {
        for (h, key) in out.iter_mut().zip(keys) {
            *h = self.hash(key.as_ref());
        }
    }
}

impl<H: KeyHasher + ?Sized> KeyHasher for &H {
    #[inline]
    fn hash(&self, bytes: &[u8]) -> u64 {
        (**self).hash(bytes)
    }
}
