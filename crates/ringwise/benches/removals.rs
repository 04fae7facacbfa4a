//! The algorithms with removals side by side, in one run:
//!
//! - `anchor_vs_crate_1000`: ringwise's `anchor` against the `anchorhash`
//!   crate (0.2.2, default features), both with 1,000 buckets all working;
//!   keys `user:0..user:199999` hashed with xxh3 for both (the crate gets
//!   the 64-bit hash through an identity `Hasher`, and keeps its low 32
//!   bits).
//! - `removals_<buckets>`: `anchor`, `dx`, `memento` at 10, 1,000 and
//!   1,000,000 buckets, and at 10 and 1,000 buckets with 10 % and 50 % of
//!   them removed (random nodes, through `without_node`). At 1,000,000 only
//!   the full table: each removal is a new snapshot, O(capacity), so half a
//!   million of them is out of reach of a benchmark's setup.
//!
//! Before measuring it prints `heap_bytes` per bucket (capacity for anchor
//! and dx, the b-array for memento) for each case. Time per iteration /
//! 200,000 = ns per key, hashing included. Run:
//! `nice -n 19 cargo bench -p ringwise --bench removals -- --warm-up-time 1 --measurement-time 3`.

use std::hash::{BuildHasher, Hasher};
use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ringwise::{Algorithm, AnyPlacement, KeyHasher, Node, Params, Placement, StableHash};

#[path = "support/keys.rs"]
mod keys;
use keys::{KEYS, Keys};

fn nodes(n: usize) -> Vec<Node> {
    (0..n).map(|i| Node::new(format!("node-{i}"))).collect()
}

/// Hands the crate the 64-bit hash written into it, unchanged.
#[derive(Default, Clone, Copy)]
struct Identity(u64);

impl Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u64 keys are hashed")
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

#[derive(Default, Clone, Copy)]
struct BuildIdentity;

impl BuildHasher for BuildIdentity {
    type Hasher = Identity;
    fn build_hasher(&self) -> Identity {
        Identity(0)
    }
}

fn anchor_vs_crate(c: &mut Criterion) {
    let keys = Keys::new();
    let params = Params {
        capacity: 1000,
        ..Params::DEFAULT
    };
    let ours = AnyPlacement::build(Algorithm::Anchor, nodes(1000), &params).expect("valid");
    let theirs: anchorhash::AnchorHash<u64, u32, BuildIdentity> =
        anchorhash::Builder::with_hasher(BuildIdentity)
            .with_resources(0..1000u32)
            .build(1000);
    let mut g = c.benchmark_group("anchor_vs_crate_1000");
    g.throughput(Throughput::Elements(KEYS as u64));
    g.bench_function("ringwise_anchor", |b| {
        b.iter(|| {
            for key in keys.iter() {
                black_box(ours.owner(StableHash::Xxh3.hash(key)));
            }
        })
    });
    g.bench_function("anchorhash-crate", |b| {
        b.iter(|| {
            for key in keys.iter() {
                black_box(theirs.get_resource(StableHash::Xxh3.hash(key)));
            }
        })
    });
    g.finish();
}

/// `algorithm` over `buckets` nodes with `percent` of them removed, in a
/// scrambled order (SplitMix64 picks).
fn with_removals(algorithm: Algorithm, buckets: usize, percent: usize) -> AnyPlacement {
    let mut p = AnyPlacement::build(
        algorithm,
        nodes(buckets),
        &Params {
            capacity: buckets as u32,
            ..Params::DEFAULT
        },
    )
    .expect("valid");
    for i in 0..buckets * percent / 100 {
        let pick = (ringwise::replica_key(i as u64, 17) % p.len() as u64) as usize;
        let name = p.nodes().iter().nth(pick).expect("member").name.clone();
        p = p.without_node(&name).expect("member");
    }
    p
}

fn capacity(p: &AnyPlacement) -> usize {
    match p {
        AnyPlacement::Anchor(a) => a.capacity() as usize,
        AnyPlacement::Dx(d) => d.capacity() as usize,
        AnyPlacement::Memento(m) => m.buckets().len(),
        _ => p.len(),
    }
}

fn removals(c: &mut Criterion) {
    let keys = Keys::new();
    let cases = [
        (10, 0),
        (10, 10),
        (10, 50),
        (1000, 0),
        (1000, 10),
        (1000, 50),
        (1_000_000, 0),
    ];
    for (buckets, percent) in cases {
        let mut g = c.benchmark_group(format!("removals_{buckets}"));
        g.throughput(Throughput::Elements(KEYS as u64));
        for algorithm in [Algorithm::Anchor, Algorithm::Dx, Algorithm::Memento] {
            let p = with_removals(algorithm, buckets, percent);
            let per_bucket = p.heap_bytes() as f64 / capacity(&p) as f64;
            println!(
                "memory {algorithm} {buckets} buckets {percent}% removed: {} working, \
                 {per_bucket:.2} bytes per bucket",
                p.len()
            );
            g.bench_function(format!("{algorithm}_{percent}pct_removed"), |b| {
                b.iter(|| {
                    for key in keys.iter() {
                        black_box(p.owner(StableHash::Xxh3.hash(key)));
                    }
                })
            });
        }
        g.finish();
    }
}

criterion_group!(benches, anchor_vs_crate, removals);
criterion_main!(benches);
