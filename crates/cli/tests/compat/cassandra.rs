//! `ringwise token` against cassandra-driver's Murmur3Partitioner tokens.
//!
//! The peer (`peers/cassandra_murmur3.py`) prints
//! `cassandra.metadata.Murmur3Token.hash_fn` of each key's UTF-8 bytes,
//! the token the driver routes a text partition key by; it also checks the
//! driver's C murmur3 against its Python one. 10,000 random keys of 1 to 40
//! characters cover every tail length of the 16-byte blocks, and the
//! non-ASCII ones put bytes >= 0x80 in the tail, where Cassandra's hash
//! sign-extends. Raw byte strings are compared in the library's
//! `cassandra_peer` test.

use super::{Rng, assert_agree, random_keys, ringwise_token, run_python_peer};
use crate::support::TempDir;

const SEED: u64 = 0x6361_7373;
const KEYS: usize = 10_000;

#[test]
fn cassandra_driver_tokens_agree() {
    let dir = TempDir::create("compat-cassandra");
    let keys = random_keys(&mut Rng(SEED), KEYS);
    let theirs = run_python_peer(
        "cassandra_murmur3.py",
        &[std::path::Path::new("text")],
        dir.path(),
        &keys,
    );
    let ours = ringwise_token(&keys);
    assert_agree(
        "cassandra-driver Murmur3Token.hash_fn",
        &keys,
        &theirs,
        &ours,
    );
}

mod nts;
mod types;
