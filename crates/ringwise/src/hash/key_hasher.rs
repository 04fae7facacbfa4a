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
}

impl<H: KeyHasher + ?Sized> KeyHasher for &H {
    #[inline]
    fn hash(&self, bytes: &[u8]) -> u64 {
        (**self).hash(bytes)
    }
}
