//! Warm-up: a moved key's value read from its previous owners and copied
//! to its new one, during the window after a membership change.
//!
//! The rule (after mcrouter's WarmUpRoute), for an unsettled key
//! ([`crate::routing`]), whatever number of changes ago it moved:
//!
//! - a retrieval asks its owner; on a miss it reads the key from its
//!   fallbacks, the most recent previous owner first (`mg <key> v f t`:
//!   value, client flags, remaining TTL), answers with the first hit and
//!   copies it to the owner with `add` (never `set`: a value written to
//!   the owner meanwhile wins); `gets`, `gat` and `gats` then ask the
//!   owner again, so the CAS value and the new TTL are the owner's;
//! - every write (`set`, `add`, `replace`, `append`, `prepend`, `cas`,
//!   `incr`, `decr`, `touch`, `delete`) goes to the owner and then deletes
//!   the key on its losers, every previous owner that could still be
//!   read; those that modify a value first copy it as a read does, so
//!   they find it as they would have before the change.
//!
//! Why no read sees a stale value: a fallback read and its copy, and a
//! write with its deletes, each hold the key's lock ([`crate::locks`])
//! and wait for every answer, so per key they happen one after another.
//! A write deletes every older copy a read could fall back to, so the
//! most recent previous owner holding the key holds its latest value: a
//! write is acknowledged only once every such delete was answered (an
//! unanswered one leaves the write unacknowledged, and the copy it did
//! not delete is then no older than the last acknowledged write). A copy
//! whose `add` gets no answer is followed by a `delete` on the same
//! connection, so it cannot land after a later write. Keys that did not
//! move are never read elsewhere.
//!
//! Cost: a hit on the owner costs nothing more; a miss one round trip per
//! fallback asked, and the copy one round trip to the owner.

use std::sync::Arc;
use std::time::Duration;

use crate::exchange::{ask, line, tell};
use crate::response::{Expect, meta_value_len};
use crate::routing::Routing;
use crate::server::Server;

/// memcached reads an expiry up to 30 days as relative, above as a Unix
/// time.
const RELATIVE_LIMIT: i64 = 60 * 60 * 24 * 30;

/// A value read from a previous owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copy {
    /// Client flags, as memcached printed them.
    pub flags: Vec<u8>,
    /// The expiry to store it with (0: never).
    pub exptime: i64,
    /// The value.
    pub data: Vec<u8>,
}

/// Reads `key` from its fallbacks and adds the first hit to `owner`;
/// `None` when none holds it. The caller holds the key's lock.
pub async fn warm(
    routing: &Routing,
    owner: &Arc<Server>,
    client: usize,
    key: &[u8],
    timeout: Duration,
) -> Option<Copy> {
    for old in routing.fallbacks(key, owner) {
        let Some(copy) = meta_copy(&old, client, key, timeout).await else {
            continue;
        };
        old.counters
            .fallback_hits
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        copy_to(owner, client, key, &copy, timeout).await;
        return Some(copy);
    }
    None
}

/// `key`'s value, flags and expiry on `server`; `None` for a miss or
/// no answer.
pub async fn meta_copy(
    server: &Server,
    client: usize,
    key: &[u8],
    timeout: Duration,
) -> Option<Copy> {
    let request = meta_get(key)?;
    let answer = ask(server, client, &request, Expect::Meta, timeout).await?;
    parse_copy(&answer, now_unix())
}

/// Adds `copy` of `key` to `owner` and waits for the answer; without
/// one, deletes the key after it on the same connection, so that an
/// `add` still queued cannot land after a later write.
pub async fn copy_to(owner: &Server, client: usize, key: &[u8], copy: &Copy, timeout: Duration) {
    let header = format!(
        " {} {} {}\r\n",
        String::from_utf8_lossy(&copy.flags),
        copy.exptime,
        copy.data.len()
    );
    let mut add = line(b"add", key, header.as_bytes());
    add.extend_from_slice(&copy.data);
    add.extend_from_slice(b"\r\n");
    if ask(owner, client, &add, Expect::Line, timeout)
        .await
        .is_none()
    {
        tell(owner, client, &line(b"delete", key, b" noreply\r\n"));
    }
}

/// `mg <key> v f t`: the key as written when memcached's meta commands
/// read it as one token (no byte below `!`), else base64-encoded (`b`);
/// `None` when the encoded key is over memcached's 250 bytes (such a key
/// has no fallback: a miss).
fn meta_get(key: &[u8]) -> Option<Vec<u8>> {
    if key.iter().all(|&b| b > b' ' && b != 0x7f) {
        return Some(line(b"mg", key, b" v f t\r\n"));
    }
    let encoded = base64(key);
    (encoded.len() <= crate::request::KEY_MAX_LENGTH)
        .then(|| line(b"mg", &encoded, b" b v f t\r\n"))
}

/// A `VA <len> f<flags> t<ttl>` answer as a copy; `None` for a miss, an
/// error, or a value about to expire.
fn parse_copy(answer: &[u8], now: i64) -> Option<Copy> {
    let end = answer.windows(2).position(|w| w == b"\r\n")?;
    let header = &answer[..end];
    let len = meta_value_len(header)?;
    let data = answer.get(end + 2..end + 2 + len)?.to_vec();
    let (mut flags, mut ttl) = (b"0".to_vec(), -1i64);
    for token in header.split(|&b| b == b' ').skip(2) {
        match token.split_first() {
            Some((b'f', value)) => flags = value.to_vec(),
            Some((b't', value)) => ttl = std::str::from_utf8(value).ok()?.parse().ok()?,
            _ => {}
        }
    }
    let exptime = match ttl {
        -1 => 0,
        t if t <= 0 => return None,
        t if t <= RELATIVE_LIMIT => t,
        t => now + t,
    };
    Some(Copy {
        flags,
        exptime,
        data,
    })
}

fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Standard base64 with padding (the meta commands' `b` flag: any key
/// bytes, control characters included, as one token).
fn base64(bytes: &[u8]) -> Vec<u8> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]);
            } else {
                out.push(b'=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_as_rfc_4648() {
        assert_eq!(base64(b""), b"");
        assert_eq!(base64(b"f"), b"Zg==");
        assert_eq!(base64(b"fo"), b"Zm8=");
        assert_eq!(base64(b"foo"), b"Zm9v");
        assert_eq!(base64(b"foobar"), b"Zm9vYmFy");
    }

    #[test]
    fn long_keys_are_asked_as_written() {
        let key = vec![b'k'; 250];
        let request = meta_get(&key).expect("a printable key is asked as is");
        assert_eq!(request.len(), "mg ".len() + 250 + " v f t\r\n".len());
        assert!(meta_get(b"tab\there").is_some_and(|r| r.ends_with(b" b v f t\r\n")));
        assert_eq!(meta_get(&[b'\t'; 200]), None);
    }

    #[test]
    fn copies_keep_flags_and_expiry() {
        let copy = parse_copy(b"VA 2 f5 t-1\r\nhi\r\n", 1000).expect("a copy");
        assert_eq!(
            (copy.flags, copy.exptime, copy.data),
            (b"5".to_vec(), 0, b"hi".to_vec())
        );
        let copy = parse_copy(b"VA 0 f0 t60\r\n\r\n", 1000).expect("a copy");
        assert_eq!(copy.exptime, 60);
        let far = parse_copy(b"VA 1 f0 t3000000\r\nx\r\n", 1000).expect("a copy");
        assert_eq!(far.exptime, 3_001_000);
        assert_eq!(parse_copy(b"EN\r\n", 0), None);
        assert_eq!(parse_copy(b"VA 1 f0 t0\r\nx\r\n", 0), None);
    }
}
