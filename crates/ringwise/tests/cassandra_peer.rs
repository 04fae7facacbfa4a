//! `cassandra_token` against cassandra-driver: 10,000 random byte strings.
//!
//! The peer is `crates/cli/tests/peers/cassandra_murmur3.py`, run by the
//! python of the venv `scripts/install-test-deps` makes
//! (`target/peers-venv`): `cassandra.metadata.Murmur3Token.hash_fn`, the
//! token the driver routes by, of each string given in hex (the script
//! also checks the driver's C murmur3 against its Python one).
//!
//! Strings are 1 to 40 bytes of every value, so every tail length of the
//! 16-byte blocks comes with bytes >= 0x80, which Cassandra's hash
//! sign-extends in the tail. The empty key is left out: the driver hashes
//! it to 0, while Cassandra's partitioner gives an empty key the minimum
//! token without hashing it; the driver cannot judge that case.
//!
//! A missing venv fails the test with the way to install it: it is never
//! skipped.

use std::fmt::Write as _;
use std::fs::{self, File};
use std::path::Path;
use std::process::Command;

use ringwise::cassandra_token;

use crate::support::process::{output, scratch_dir};
use crate::support::rng::Rng;

const SEED: u64 = 0xCA55_A4D2;
const KEYS: usize = 10_000;
const INSTALL_HINT: &str = "run scripts/install-test-deps (it makes the venv target/peers-venv \
                            with cassandra-driver); this test is never skipped";

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Strings of 1 to 40 bytes: a third of them only bytes >= 0x80, the rest
/// any bytes.
fn keys() -> Vec<Vec<u8>> {
    let mut rng = Rng(SEED);
    (0..KEYS)
        .map(|i| {
            let high = if i % 3 == 0 { 0x80 } else { 0 };
            let len = 1 + (rng.next() % 40) as usize;
            (0..len).map(|_| rng.next() as u8 | high).collect()
        })
        .collect()
}

#[test]
fn driver_tokens_agree_with_cassandra_token() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = root.join("target/peers-venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: {INSTALL_HINT}",
        python.display()
    );
    let keys = keys();
    let dir = scratch_dir("ringwise-cassandra");
    let input = dir.join("keys.hex");
    fs::write(
        &input,
        keys.iter().map(|k| hex(k) + "\n").collect::<String>(),
    )
    .expect("write the keys");
    let stdout = output(
        Command::new(&python)
            .arg(root.join("crates/cli/tests/peers/cassandra_murmur3.py"))
            .arg("hex")
            .stdin(File::open(&input).expect("open the keys")),
        INSTALL_HINT,
    );
    let _ = fs::remove_dir_all(&dir);
    let theirs: Vec<i64> = String::from_utf8(stdout)
        .expect("utf-8")
        .lines()
        .map(|t| t.parse().expect("a token"))
        .collect();
    assert_eq!(theirs.len(), keys.len(), "the driver answers every key");
    let differ: Vec<_> = keys
        .iter()
        .zip(&theirs)
        .filter(|&(k, &t)| cassandra_token(k) != t)
        .map(|(k, &t)| (hex(k), t, cassandra_token(k)))
        .collect();
    assert!(
        differ.is_empty(),
        "{} of {} keys differ (hex key, driver, ours), first ones: {:?}",
        differ.len(),
        keys.len(),
        &differ[..differ.len().min(10)]
    );
}
