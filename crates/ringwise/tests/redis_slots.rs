//! `key_slot` against a real Redis: `CLUSTER KEYSLOT` for 12,000+ keys.
//!
//! Starts `redis-server` in cluster mode on a free loopback port, with its
//! config, data and log in a fresh temporary directory and persistence off,
//! as a child process. A guard kills that child by its pid (`Child::kill`,
//! then `wait`) and removes the directory when dropped, so the server stops
//! even when an assertion fails. The test speaks RESP over a plain
//! `TcpStream`, pipelining 1,000 commands per round trip.
//!
//! Keys come from a seeded generator: random binary bytes, strings of
//! braces and a few letters (braces in every position, empty tags `{}`,
//! nested `{{x}}`, unclosed `{`), Unicode text, `prefix{tag}suffix` shapes,
//! the empty key and every vector of the compatibility notes §3.
//!
//! A missing `redis-server` fails the test: it is never skipped.

use std::io::Write;
use std::net::Shutdown;
use std::time::Duration;

use ringwise::key_slot;

use crate::support::redis::{Server, encode};
use crate::support::rng::Rng;

const SEED: u64 = 0x5107_5EED;
const RANDOM_KEYS: usize = 12_000;
const BATCH: usize = 1_000;
const READY_WITHIN: Duration = Duration::from_secs(10);

fn random_key(rng: &mut Rng) -> Vec<u8> {
    const BRACEY: &[u8] = b"{{{}}}ab1:\x00\xff";
    const TEXT: &[&str] = &["é", "日", "本", "🦀", "ё", "{", "}", "x", "\u{0}", "{}"];
    const PARTS: &[&str] = &["", "user", "{", "}", "{}", "{{", "}}", "é", ":", "🦀"];
    match rng.below(4) {
        0 => (0..rng.below(33)).map(|_| rng.next() as u8).collect(),
        1 => (0..rng.below(13)).map(|_| *rng.pick(BRACEY)).collect(),
        2 => (0..rng.below(9))
            .map(|_| *rng.pick(TEXT))
            .collect::<String>()
            .into_bytes(),
        _ => {
            let mut key = Vec::new();
            for _ in 0..rng.below(6) {
                key.extend_from_slice(rng.pick(PARTS).as_bytes());
                key.extend((0..rng.below(4)).map(|_| b'a' + rng.below(26) as u8));
            }
            key
        }
    }
}

fn keys() -> Vec<Vec<u8>> {
    let fixed: &[&[u8]] = &[
        b"",
        b"somekey",
        b"foo{hash_tag}",
        b"{user1000}.following",
        b"{123}1{abc}",
        b"{123",
        b"{}123",
        b"\x00\x01",
        b"foo{}{bar}",
        b"foo{{bar}}zap",
        b"foo{bar}{zap}",
        b"{}",
        b"{",
        b"}",
        b"}{",
        b"{{}}",
        b"{user:1000}:{x}",
    ];
    let mut rng = Rng(SEED);
    let mut keys: Vec<Vec<u8>> = fixed.iter().map(|k| k.to_vec()).collect();
    keys.extend((0..RANDOM_KEYS).map(|_| random_key(&mut rng)));
    keys
}

#[test]
fn cluster_keyslot_agrees_with_key_slot() {
    let (_server, mut conn) = Server::start("ringwise-redis", READY_WITHIN);
    let keys = keys();
    let mut mismatches = Vec::new();
    let mut buf = Vec::new();
    for batch in keys.chunks(BATCH) {
        buf.clear();
        for key in batch {
            buf.extend(encode(&[b"CLUSTER", b"KEYSLOT", key]));
        }
        conn.stream.write_all(&buf).expect("send a batch");
        for key in batch {
            let reply = conn.reply().expect("read a reply");
            let theirs: u16 = reply
                .strip_prefix(':')
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("unexpected reply {reply:?} for key {key:?}"));
            if theirs != key_slot(key) {
                mismatches.push((
                    String::from_utf8_lossy(key).into_owned(),
                    theirs,
                    key_slot(key),
                ));
            }
        }
    }
    let _ = conn.stream.shutdown(Shutdown::Both);
    assert!(
        mismatches.is_empty(),
        "{} of {} keys differ (key, redis, ours), first ones: {:?}",
        mismatches.len(),
        keys.len(),
        &mismatches[..mismatches.len().min(20)]
    );
}
