//! Varnish's two 32-bit key hashes, both SHA-256 based: the shard
//! director's `key()` and the request hash `vcl_hash` builds.
//!
//! Sources (varnish-cache 7.1.1, commit 7cee1c58):
//! `bin/varnishd/cache/cache_vrt.c` (`VRT_HashStrands32`, `VRT_hashdata`),
//! `bin/varnishd/cache/cache_hash.c` (`HSH_AddString`),
//! `vmod/vmod_directors_shard.c` (`shard_get_key`).
//!
//! - [`varnish_key`]: `VRT_HashStrands32`, the SHA-256 of the bytes, its
//!   **last** four bytes read little-endian (the code's comment says the
//!   shard director "for some reason" relied on that; the vmod's docs say
//!   "the last 32 bits"). The shard director makes its circle points with
//!   it, `.key(STRING)` returns it, and `by=URL` hashes `req.url` with it, as
//!   does `by=HASH` when the director is asked in client context (in
//!   `vcl_recv`, where the digest does not exist yet).
//! - [`varnish_req_hash`]: `by=HASH` in backend context: the request's
//!   digest, whose **first** four bytes are read big-endian. The digest is
//!   the SHA-256 of every `hash_data(s)` of `vcl_hash`, each `s` followed
//!   by one zero byte (`VRT_hashdata` adds a "field-separator" through
//!   `HSH_AddString(NULL)`, which hashes one byte of a null pointer). This
//!   hash appends the last zero itself: a key `K` is a `vcl_hash` of one
//!   `hash_data(K)`; the built-in `vcl_hash` (`hash_data(req.url)` then
//!   `hash_data(req.http.host)`) is the key `URL ‖ 0x00 ‖ HOST`.
//!
//! Worked examples (SHA-256 of `""` is `e3b0c442…7852b855`):
//! `varnish_key(b"")` = `0x55b85278` (bytes `78 52 b8 55` little-endian),
//! and `varnish_req_hash` of an empty key hashes the single byte `00`.

use sha2::{Digest, Sha256};

/// `VRT_HashStrands32`: the last four SHA-256 bytes, little-endian.
#[inline]
pub fn varnish_key(bytes: &[u8]) -> u32 {
    let digest = Sha256::digest(bytes);
    u32::from_le_bytes([digest[28], digest[29], digest[30], digest[31]])
}

/// The shard director's `by=HASH` key in backend context: the first four
/// bytes, big-endian, of the SHA-256 of `bytes ‖ 0x00` (one `hash_data`).
#[inline]
pub fn varnish_req_hash(bytes: &[u8]) -> u32 {
    let mut sha = Sha256::new();
    sha.update(bytes);
    sha.update([0u8]);
    let digest = sha.finalize();
    u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bytes_varnish_reads() {
        // SHA-256("") = e3b0c442 98fc1c14 ... 7852b855.
        assert_eq!(varnish_key(b""), 0x55b8_5278);
        // SHA-256("\0") = 6e340b9c ffb37a98 ...
        assert_eq!(varnish_req_hash(b""), 0x6e34_0b9c);
        // SHA-256("abc") = ba7816bf ... f20015ad.
        assert_eq!(varnish_key(b"abc"), 0xad15_00f2);
    }
}
