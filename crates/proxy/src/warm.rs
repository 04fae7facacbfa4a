//! Warm-up: a moved key's value read from its previous owner and copied
//! to its new one, during the window after a membership change.
//!
//! The rule (after mcrouter's WarmUpRoute), for a key whose owner changed
//! from O to N less than the window ago:
//!
//! - a retrieval asks N; on a miss it reads the key from O (`mg <key> b v
//!   f t`: value, client flags, remaining TTL), answers with it and copies
//!   it to N with `add` (never `set`: a value written to N meanwhile wins),
//!   with the same flags and TTL; `gets`, `gat` and `gats` then ask N again,
//!   so the CAS value and the new TTL are N's;
//! - `set` goes to N, then the key is deleted from O;
//! - `add`, `replace`, `append`, `prepend`, `cas`, `incr`, `decr` and
//!   `touch` first copy the key from O to N as above (so they find it as
//!   they would have before the change), then go to N, then delete O's;
//! - `delete` deletes from N and O (the answer is `DELETED` when either
//!   held it), and once more from N after the request timeout.
//!
//! What a concurrent writer can observe: every write of a moved key bumps
//! its generation ([`crate::generations`]), and a copy read
//! from O is only added to N if no write was routed since it was read; a
//! write routed in the instant between that check and the copy landing
//! either wins (`set`: `add` does not overwrite) or, for a `delete`, is
//! repeated after the timeout, so a deleted value can be read back for at
//! most the request timeout and never after the window. Keys that did not
//! move are never read from O. Once the window ends, O is not asked, and
//! its copies of moved keys are left to expire or be evicted.
//!
//! Cost: a hit on N costs nothing more; a miss one round trip to O, and
//! the copy one request to N (no answer awaited).

use std::time::Duration;

use crate::exchange::{ask, line, tell};
use crate::generations::Generations;
use crate::response::{Expect, meta_value_len};
use crate::server::Server;

/// memcached reads an expiry up to 30 days as relative, above as a Unix
/// time.
const RELATIVE_LIMIT: i64 = 60 * 60 * 24 * 30;

/// A value read from the previous owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copy {
    /// Client flags, as memcached printed them.
    pub flags: Vec<u8>,
    /// The expiry to store it with (0: never).
    pub exptime: i64,
    /// The value.
    pub data: Vec<u8>,
}

/// Reads `key` from its previous owner `old` and, unless the key was
/// written since, adds it to `new`. `None` when `old` does not hold it.
pub async fn warm(
    generations: &Generations,
    new: &Server,
    old: &Server,
    client: usize,
    key: &[u8],
    timeout: Duration,
) -> Option<Copy> {
    let generation = generations.get(key);
    let request = line(b"mg", &base64(key), b" b v f t\r\n");
    let answer = ask(old, client, &request, Expect::Meta, timeout).await?;
    let copy = parse_copy(&answer, now_unix())?;
    old.counters
        .fallback_hits
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    if generations.get(key) == generation {
        let header = format!(
            " {} {} {} noreply\r\n",
            String::from_utf8_lossy(&copy.flags),
            copy.exptime,
            copy.data.len()
        );
        let mut add = line(b"add", key, header.as_bytes());
        add.extend_from_slice(&copy.data);
        add.extend_from_slice(b"\r\n");
        tell(new, client, &add);
    }
    Some(copy)
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
