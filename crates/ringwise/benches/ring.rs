//! Ring speed: 100 nodes × 1000 vnodes (100,000 points), keys
//! `user:0..user:199999`, next to the `hashring` (0.3.6) and `hash-rings`
//! (1.1.0) crates on the same ring (vnodes as `"node-i#j"` entries).
//!
//! Lookups are timed over all 200,000 keys per iteration, so criterion's
//! time divided by 200,000 is ns per key (hashing included); the throughput
//! line gives keys per second. Run: `cargo bench -p ringwise --bench ring`.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use md5::{Digest, Md5};
use ringwise::{KeyHasher, Node, Ring, StableHash};

const NODES: usize = 100;
const VNODES: u32 = 1000;
const KEYS: usize = 200_000;

fn keys() -> Vec<String> {
    (0..KEYS).map(|i| format!("user:{i}")).collect()
}

fn ringwise_ring(hash: StableHash) -> Ring {
    Ring::builder()
        .hasher(hash)
        .vnodes(VNODES)
        .nodes((0..NODES).map(|i| Node::new(format!("node-{i}"))))
        .build()
        .expect("valid ring")
}

fn vnode_names() -> Vec<String> {
    (0..NODES)
        .flat_map(|i| (0..VNODES).map(move |j| format!("node-{i}#{j}")))
        .collect()
}

fn hashring_ring(names: &[String]) -> hashring::HashRing<&str> {
    let mut ring = hashring::HashRing::new();
    ring.batch_add(names.iter().map(String::as_str).collect());
    ring
}

fn hash_rings_ring(names: &[String]) -> hash_rings::consistent::Ring<'_, String> {
    let mut ring = hash_rings::consistent::Ring::new();
    for name in names {
        ring.insert_node(name, 1);
    }
    ring
}

fn lookup(c: &mut Criterion) {
    let keys = keys();
    let names = vnode_names();
    let mut group = c.benchmark_group("lookup_100x1000");
    group.throughput(Throughput::Elements(KEYS as u64));
    for hash in [StableHash::Xxh3, StableHash::Md5] {
        let ring = ringwise_ring(hash);
        group.bench_function(format!("ringwise_{hash}"), |b| {
            b.iter(|| {
                for key in &keys {
                    black_box(ring.owner(ring.hash(key.as_bytes())));
                }
            })
        });
    }
    group.bench_function("md5_alone", |b| {
        b.iter(|| {
            for key in &keys {
                black_box(StableHash::Md5.hash(key.as_bytes()));
            }
        })
    });
    group.bench_function("md5_digest_alone", |b| {
        b.iter(|| {
            for key in &keys {
                black_box(Md5::digest(key.as_bytes()));
            }
        })
    });
    let other = hashring_ring(&names);
    group.bench_function("hashring_0.3.6", |b| {
        b.iter(|| {
            for key in &keys {
                black_box(other.get(&key.as_str()));
            }
        })
    });
    let other = hash_rings_ring(&names);
    group.bench_function("hash-rings_1.1.0", |b| {
        b.iter(|| {
            for key in &keys {
                black_box(other.get_node(&key.as_str()));
            }
        })
    });
    group.finish();
}

fn build(c: &mut Criterion) {
    let names = vnode_names();
    let mut group = c.benchmark_group("build_100x1000");
    group.sample_size(20);
    group.bench_function("ringwise_xxh3", |b| {
        b.iter(|| ringwise_ring(StableHash::Xxh3))
    });
    group.bench_function("hashring_0.3.6", |b| b.iter(|| hashring_ring(&names)));
    group.bench_function("hash-rings_1.1.0", |b| b.iter(|| hash_rings_ring(&names)));
    group.finish();
}

fn add_node(c: &mut Criterion) {
    let ring = ringwise_ring(StableHash::Xxh3);
    c.bench_function("add_node_1000_vnodes_to_100x1000", |b| {
        b.iter_batched(
            || Node::new("node-100"),
            |node| ring.with_node(node).expect("new name"),
            BatchSize::SmallInput,
        )
    });
    c.bench_function("remove_node_from_100x1000", |b| {
        b.iter(|| ring.without_node("node-42").expect("member"))
    });
}

criterion_group!(benches, lookup, build, add_node);
criterion_main!(benches);
