//! The constant-time bucket algorithms side by side, in one run.
//! Keys `user:0..user:199999`, each hashed with xxh3 and then looked up;
//! time per iteration / 200,000 = ns per key.
//!
//! - `constant_lookup_1000`: `owner` of ringwise's `jump`, `jumpback`,
//!   `binomial` and `fliphash` snapshots of 1,000 nodes; `flip_hash` alone
//!   (`ringwise_flip_hash_fn`: a bucket number like the crate's, without
//!   the snapshot's bucket → node read); the `jumphash` crate (its
//!   `CustomJumpHasher` fed the same xxh3 hash through a pass-through
//!   `Hasher`, so both jumps start from one hash); and the `fliphash`
//!   crate's `fliphash_64(hash, ..=999)`. The crates get the bucket count
//!   through `black_box`, a run-time value like a snapshot's length;
//!   `fliphash-crate_literal_range` shows the crate with `..=999` written
//!   in, which the compiler folds into its masks.
//! - `constant_buckets/<algorithm>/<n>`: the bucket functions alone
//!   (`jump_consistent_hash`, `jump_back_hash`, `binomial_hash`,
//!   `flip_hash`) at 10, 16, 17, 1,000 and 1,000,000 buckets: the constant
//!   ones do not grow with n, jump's grows with ln n. Their cost depends on
//!   where n lies between two powers of two: at 16 no key needs a second
//!   draw, at 17 about half of them do (and the branch is unpredictable),
//!   at 1,000 (near 1,024) few. Functions rather than snapshots, so that
//!   the 4 MB bucket table of a million nodes does not add its cache misses
//!   to what is measured.
//!
//! Run: `cargo bench -p ringwise --bench constant`.

use std::hash::Hasher;
use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ringwise::{
    Binomial, FlipHash, Jump, JumpBack, KeyHasher, Node, Placement, StableHash, binomial_hash,
    flip_hash, jump_back_hash, jump_consistent_hash,
};

#[path = "support/keys.rs"]
mod keys;
use keys::{KEYS, Keys};

fn nodes(n: usize) -> Vec<Node> {
    (0..n).map(|i| Node::new(format!("node-{i}"))).collect()
}

/// A `Hasher` that hands on the one `u64` it is given: lets the `jumphash`
/// crate jump from the xxh3 hash ringwise uses, instead of its SipHash.
#[derive(Clone, Default)]
struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// ns per key of `lookup(xxh3(key))` over every key.
fn per_key(keys: &Keys, lookup: impl Fn(u64) -> u64) -> impl FnMut(&mut criterion::Bencher) {
    move |b| {
        b.iter(|| {
            for key in keys.iter() {
                black_box(lookup(StableHash::Xxh3.hash(key)));
            }
        })
    }
}

fn owner<P: Placement>(p: &P) -> impl Fn(u64) -> u64 + '_ {
    |hash| p.owner(hash).map_or(u64::MAX, u64::from)
}

fn lookup_1000(c: &mut Criterion) {
    let keys = Keys::new();
    let jump = Jump::new(nodes(1000)).expect("valid");
    let jumpback = JumpBack::new(nodes(1000)).expect("valid");
    let binomial = Binomial::new(nodes(1000)).expect("valid");
    let fliphash = FlipHash::new(nodes(1000)).expect("valid");
    let jumphash = jumphash::CustomJumpHasher::new(PassThrough::default());
    // The crates get the bucket count at run time, as the snapshots do: a
    // literal would let the compiler fold its masks and logarithms.
    let (slots, last) = (black_box(1000u32), black_box(999u64));
    let mut g = c.benchmark_group("constant_lookup_1000");
    g.throughput(Throughput::Elements(KEYS as u64));
    g.bench_function("ringwise_jump", per_key(&keys, owner(&jump)));
    g.bench_function("ringwise_jumpback", per_key(&keys, owner(&jumpback)));
    g.bench_function("ringwise_binomial", per_key(&keys, owner(&binomial)));
    g.bench_function("ringwise_fliphash", per_key(&keys, owner(&fliphash)));
    // Like for like with the crate: the bucket number alone, no node read.
    g.bench_function(
        "ringwise_flip_hash_fn",
        per_key(&keys, |h| u64::from(flip_hash(h, slots))),
    );
    g.bench_function(
        "jumphash-crate",
        per_key(&keys, |h| u64::from(jumphash.slot(&h, slots))),
    );
    g.bench_function(
        "fliphash-crate",
        per_key(&keys, |h| fliphash::fliphash_64(h, ..=last)),
    );
    // For comparison only: the crate with the range a compile-time constant.
    g.bench_function(
        "fliphash-crate_literal_range",
        per_key(&keys, |h| fliphash::fliphash_64(h, ..=999)),
    );
    g.finish();
}

/// One bucket function at every size; a generic, not a `fn` pointer, so
/// that each is inlined into its loop as in real use.
fn scaling(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    keys: &Keys,
    name: &str,
    function: impl Fn(u64, u32) -> u32 + Copy,
) {
    for n in [10u32, 16, 17, 1000, 1_000_000] {
        let n = black_box(n);
        let lookup = move |h| u64::from(function(h, n));
        g.bench_function(BenchmarkId::new(name, n), per_key(keys, lookup));
    }
}

fn bucket_scaling(c: &mut Criterion) {
    let keys = Keys::new();
    let mut g = c.benchmark_group("constant_buckets");
    g.throughput(Throughput::Elements(KEYS as u64));
    scaling(&mut g, &keys, "jump", jump_consistent_hash);
    scaling(&mut g, &keys, "jumpback", jump_back_hash);
    scaling(&mut g, &keys, "binomial", binomial_hash);
    scaling(&mut g, &keys, "fliphash", flip_hash);
    g.finish();
}

criterion_group!(benches, lookup_1000, bucket_scaling);
criterion_main!(benches);
