//! Ring speed: 100 nodes × 1000 vnodes (100,000 points), keys
//! `user:0..user:199999`, next to the `hashring` (0.3.6) and `hash-rings`
//! (1.1.0) crates on the same ring (vnodes as `"node-i#j"` entries).
//!
//! Lookups are timed over all 200,000 keys per iteration, so criterion's
//! time divided by 200,000 is ns per key (hashing included); the throughput
//! line gives keys per second. Run: `cargo bench -p ringwise --bench ring`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use md5::{Digest, Md5};
use ringwise::{KeyHasher, Node, Placement, Ring, StableHash};

#[path = "support/keys.rs"]
mod keys;
use keys::{KEYS, Keys};

const NODES: usize = 100;
const VNODES: u32 = 1000;

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
    let keys = Keys::new();
    let names = vnode_names();
    let mut group = c.benchmark_group("lookup_100x1000");
    group.throughput(Throughput::Elements(KEYS as u64));
    for hash in [StableHash::Xxh3, StableHash::Md5] {
        let ring = ringwise_ring(hash);
        group.bench_function(format!("ringwise_{hash}"), |b| {
            b.iter(|| {
                for key in keys.iter() {
                    black_box(ring.owner(hash.hash(key)));
                }
            })
        });
    }
    {
        let ring = ringwise_ring(StableHash::Xxh3);
        let hashes: Vec<u64> = keys.iter().map(|k| StableHash::Xxh3.hash(k)).collect();
        // The lookup alone, without hashing: independent lookups (the CPU
        // overlaps their memory reads), then a dependent chain (each lookup
        // waits for the previous one: the latency a slow hash like MD5 exposes).
        group.bench_function("ringwise_owner_prehashed", |b| {
            b.iter(|| {
                for &h in &hashes {
                    black_box(ring.owner(h));
                }
            })
        });
        group.bench_function("ringwise_owner_latency", |b| {
            b.iter(|| {
                let mut carry = 0u64;
                for &h in &hashes {
                    carry = u64::from(ring.owner(h ^ carry).unwrap_or(0)) & 1;
                }
                carry
            })
        });
    }
    group.bench_function("xxh3_alone", |b| {
        b.iter(|| {
            for key in keys.iter() {
                black_box(StableHash::Xxh3.hash(key));
            }
        })
    });
    group.bench_function("md5_alone", |b| {
        b.iter(|| {
            for key in keys.iter() {
                black_box(StableHash::Md5.hash(key));
            }
        })
    });
    group.bench_function("md5_digest_alone", |b| {
        b.iter(|| {
            for key in keys.iter() {
                black_box(Md5::digest(key));
            }
        })
    });
    let other = hashring_ring(&names);
    group.bench_function("hashring_0.3.6", |b| {
        b.iter(|| {
            for key in keys.iter() {
                black_box(other.get(&key));
            }
        })
    });
    let other = hash_rings_ring(&names);
    group.bench_function("hash-rings_1.1.0", |b| {
        b.iter(|| {
            for key in keys.iter() {
                black_box(other.get_node(&key));
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
    // Each iteration builds a new snapshot and drops it, as a membership
    // change followed by the old snapshot's last reader letting go does.
    c.bench_function("add_node_1000_vnodes_to_100x1000", |b| {
        b.iter(|| ring.with_node(Node::new("node-100")).expect("new name"))
    });
    c.bench_function("remove_node_from_100x1000", |b| {
        b.iter(|| ring.without_node("node-42").expect("member"))
    });
}

criterion_group!(benches, lookup, build, add_node);
criterion_main!(benches);
