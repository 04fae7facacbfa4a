//! Whose bytes wait in a server connection's output buffer: each client's
//! share, so that one client pipelining large values cannot fill a
//! connection that every client shares ([`crate::backend`]).
//!
//! How: one `(client, bytes)` entry per queued request, in the buffer's
//! order, and a count per client with bytes waiting; a write of `n` bytes
//! takes them off the oldest entries. Example: requests of 5 and 3 bytes
//! from clients 1 and 2, then a write of 6 bytes: client 1 has 0 left
//! (its entry goes), client 2 has 2.
//!
//! Cost: per request one entry and one map update (client numbers hashed
//! by one multiply); per write one step per request written.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// The clients' shares of one output buffer.
#[derive(Debug, Default)]
pub struct Shares {
    /// `(client, bytes)` per request in the buffer, oldest first (the
    /// first one's bytes less what was written of it).
    owners: VecDeque<(usize, usize)>,
    /// Each client's bytes in the buffer, for those with any.
    unwritten: HashMap<usize, usize, BuildHasherDefault<ClientHasher>>,
}

impl Shares {
    /// `client`'s bytes waiting.
    pub fn of(&self, client: usize) -> usize {
        self.unwritten.get(&client).copied().unwrap_or(0)
    }

    /// `client` queued a request of `bytes`.
    pub fn queued(&mut self, client: usize, bytes: usize) {
        if bytes > 0 {
            self.owners.push_back((client, bytes));
            *self.unwritten.entry(client).or_insert(0) += bytes;
        }
    }

    /// The buffer's first `written` bytes were written.
    pub fn written(&mut self, written: usize) {
        let mut left = written;
        while left > 0 {
            let Some((client, bytes)) = self.owners.front_mut() else {
                break;
            };
            let taken = left.min(*bytes);
            (*bytes, left) = (*bytes - taken, left - taken);
            let client = *client;
            if *bytes == 0 {
                self.owners.pop_front();
            }
            if let Some(own) = self.unwritten.get_mut(&client) {
                *own -= taken.min(*own);
                if *own == 0 {
                    self.unwritten.remove(&client);
                }
            }
        }
        // A burst of many requests does not stay allocated.
        if self.owners.is_empty() && self.owners.capacity() > 4096 {
            self.owners = VecDeque::new();
        }
    }
}

/// Client numbers are small distinct integers: one multiply hashes one
/// (SipHash would cost more than the rest of queueing a request).
#[derive(Debug, Default)]
pub struct ClientHasher(u64);

impl Hasher for ClientHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = ((self.0 << 8) | u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_take_off_the_oldest_requests_first() {
        let mut shares = Shares::default();
        shares.queued(1, 5);
        shares.queued(2, 3);
        shares.queued(1, 4);
        assert_eq!((shares.of(1), shares.of(2)), (9, 3));
        shares.written(6);
        assert_eq!((shares.of(1), shares.of(2)), (4, 2));
        shares.written(6);
        assert_eq!((shares.of(1), shares.of(2), shares.of(3)), (0, 0, 0));
        assert!(shares.unwritten.is_empty() && shares.owners.is_empty());
    }
}
