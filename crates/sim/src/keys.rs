//! The keys `user:0 .. user:{K-1}`, hashed once and reused by every
//! experiment.
//!
//! Up to [`CACHE_KEYS`] hashes are kept (8 bytes each: 8 MB for the default
//! million); larger runs stream fixed-size chunks and hash each chunk again
//! in every pass, so memory stays bounded whatever `--keys` is. MD5 keys
//! are hashed eight at a time ([`hash_each`]), in tasks of 65,536 keys.

use rayon::prelude::*;
use ringwise::{KeyHasher, StableHash, md5_prefix_batch};

/// Most hashes kept in memory (256 MB would be 32M keys; 64 MB is plenty).
pub const CACHE_KEYS: u64 = 8_000_000;

/// Keys per streamed chunk.
const CHUNK: u64 = 1 << 20;

/// The run's keys.
#[derive(Debug)]
pub struct Keys {
    hash: StableHash,
    count: u64,
    cached: Option<Vec<u64>>,
}

impl Keys {
    /// `count` keys hashed with `hash` (cached when small enough).
    pub fn new(hash: StableHash, count: u64) -> Self {
        let cached = (count <= CACHE_KEYS).then(|| hash_range(hash, 0, count));
        Keys {
            hash,
            count,
            cached,
        }
    }

    /// Number of keys.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// True when there are no keys.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The hashes of the first `n` keys.
    pub fn prefix(&self, n: u64) -> Vec<u64> {
        let n = n.min(self.count);
        match &self.cached {
            Some(all) => all[..n as usize].to_vec(),
            None => hash_range(self.hash, 0, n),
        }
    }

    /// Calls `visit(first_index, hashes)` for consecutive chunks covering
    /// every key, in order.
    pub fn for_each_chunk(&self, mut visit: impl FnMut(u64, &[u64])) {
        if let Some(all) = &self.cached {
            visit(0, all);
            return;
        }
        let mut start = 0;
        while start < self.count {
            let end = (start + CHUNK).min(self.count);
            visit(start, &hash_range(self.hash, start, end));
            start = end;
        }
    }
}

/// Hashes of `user:{start} .. user:{end-1}`, in parallel.
pub fn hash_range(hash: StableHash, start: u64, end: u64) -> Vec<u64> {
    let mut out = vec![0u64; (end - start) as usize];
    out.par_chunks_mut(TASK_KEYS)
        .enumerate()
        .for_each(|(c, slot)| {
            let mut key = KeyText::new("user:", start + (c * TASK_KEYS) as u64);
            hash_each(hash, slot, |_, buf| {
                buf.extend_from_slice(key.as_bytes());
                key.increment();
            });
        });
    out
}

/// Keys per parallel task: big enough that a task is ~10 ms of MD5, so
/// rayon's workers find work at once and spin little between tasks, small
/// enough that a million keys still split into 15 tasks for two cores.
const TASK_KEYS: usize = 1 << 16;

/// `out[i] = hash(message(i))` for every `i` in order; `message` appends
/// message `i` to the (cleared) buffer it is given. MD5 goes eight lanes at
/// a time ([`md5_prefix_batch`]), every other hash one by one. Cost: one
/// hash per output, no allocation after the first messages.
pub fn hash_each<F>(hash: StableHash, out: &mut [u64], mut message: F)
where
    F: FnMut(usize, &mut Vec<u8>),
{
    if hash == StableHash::Md5 {
        md5_prefix_batch(out, message);
        return;
    }
    let mut buf = Vec::with_capacity(64);
    for (i, h) in out.iter_mut().enumerate() {
        buf.clear();
        message(i, &mut buf);
        *h = hash.hash(&buf);
    }
}

/// `prefix` followed by a decimal counter that counts up in place, so no
/// key is formatted from scratch (`user:99` → `user:100`).
#[derive(Debug, Clone)]
pub struct KeyText {
    buf: Vec<u8>,
    digits_from: usize,
}

impl KeyText {
    /// The text `{prefix}{n}`.
    pub fn new(prefix: &str, n: u64) -> Self {
        let mut buf = prefix.as_bytes().to_vec();
        buf.extend_from_slice(n.to_string().as_bytes());
        KeyText {
            buf,
            digits_from: prefix.len(),
        }
    }

    /// The current text.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Adds one to the number.
    pub fn increment(&mut self) {
        for i in (self.digits_from..self.buf.len()).rev() {
            if self.buf[i] == b'9' {
                self.buf[i] = b'0';
            } else {
                self.buf[i] += 1;
                return;
            }
        }
        self.buf.insert(self.digits_from, b'1');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_text_counts_like_format() {
        let mut key = KeyText::new("user:", 95);
        for n in 95..1205u64 {
            assert_eq!(key.as_bytes(), format!("user:{n}").as_bytes());
            key.increment();
        }
    }

    #[test]
    fn chunks_and_prefix_agree_with_direct_hashing() {
        let keys = Keys::new(StableHash::Md5, 5000);
        assert_eq!(keys.prefix(3)[2], StableHash::Md5.hash(b"user:2"));
        let mut seen = 0;
        keys.for_each_chunk(|first, hashes| {
            assert_eq!(first, seen);
            assert_eq!(
                hashes[0],
                StableHash::Md5.hash(format!("user:{first}").as_bytes())
            );
            seen += hashes.len() as u64;
        });
        assert_eq!(seen, 5000);
    }

    #[test]
    fn hash_range_equals_one_by_one_for_every_hash_path() {
        // MD5 goes through the lanes, xxh3 one by one; both across tasks.
        for hash in [StableHash::Md5, StableHash::Xxh3] {
            let start = 99_995;
            let got = hash_range(hash, start, start + TASK_KEYS as u64 + 13);
            for (i, &h) in got.iter().enumerate() {
                let key = format!("user:{}", start + i as u64);
                assert_eq!(h, hash.hash(key.as_bytes()), "{hash} {key}");
            }
        }
    }
}
