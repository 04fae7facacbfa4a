//! Ring speed: 100 nodes × 1000 vnodes (100,000 points), keys
//! `user:0..user:199999`, next to the `hashring` (0.3.6) and `hash-rings`
//! (1.1.0) crates on the same ring (vnodes as `"node-i#j"` entries), and
//! next to the `md-5` crate alone for the seed recipe's MD5 path.
//!
//! Lookups are timed over all 200,000 keys per iteration, so criterion's
//! time divided by 200,000 is ns per key (hashing included unless the name
//! says `prehashed`); the throughput line gives keys per second. Run:
//! `cargo bench -p ringwise --bench ring -- --measurement-time 3 --warm-up-time 1`
//! (a group alone: add its name, e.g. `batch_xxh3`).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use md5::{Digest, Md5};
use ringwise::{KeyHasher, Keyed, Node, NodeId, Placement, Ring, StableHash};

#[path = "support/keys.rs"]
mod keys;
use keys::{KEYS, Keys};

const NODES: usize = 100;
const VNODES: u32 = 1000;

fn ring_of(nodes: usize, vnodes: u32, hash: StableHash) -> Ring {
    Ring::builder()
        .hasher(hash)
        .vnodes(vnodes)
        .nodes((0..nodes).map(|i| Node::new(format!("node-{i}"))))
        .build()
        .expect("valid ring")
}

fn ringwise_ring(hash: StableHash) -> Ring {
    ring_of(NODES, VNODES, hash)
}

fn keyed(hash: StableHash) -> Keyed<Ring> {
    Keyed::new(ringwise_ring(hash), hash)
}

/// The seed recipe's hash with the `md-5` crate directly: the first 8
/// digest bytes, big-endian.
fn md5_first8(key: &[u8]) -> u64 {
    let digest = Md5::digest(key);
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first)
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
        let keyed = keyed(hash);
        group.bench_function(format!("ringwise_{hash}"), |b| {
            b.iter(|| {
                for key in keys.iter() {
                    black_box(keyed.owner(key));
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
    group.bench_function("md-5-crate_first8_alone", |b| {
        b.iter(|| {
            for key in keys.iter() {
                black_box(md5_first8(key));
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

/// One key at a time (`Keyed::owner` per key) next to the batch call
/// (`Keyed::owners_into`) on the same unsorted keys, both writing every
/// owner into a vector; for MD5 also the `md-5` crate alone on the keys.
fn batch(c: &mut Criterion) {
    let keys = Keys::new();
    let slices = keys.slices();
    let mut out: Vec<NodeId> = Vec::with_capacity(KEYS);
    for hash in [StableHash::Xxh3, StableHash::Md5] {
        let keyed = keyed(hash);
        let mut group = c.benchmark_group(format!("batch_{hash}_100x1000"));
        group.throughput(Throughput::Elements(KEYS as u64));
        group.bench_function("owner_per_key", |b| {
            b.iter(|| {
                out.clear();
                out.extend(slices.iter().filter_map(|k| keyed.owner(k)));
                black_box(&out);
            })
        });
        group.bench_function("owners_into", |b| {
            b.iter(|| {
                keyed.owners_into(&slices, &mut out);
                black_box(&out);
            })
        });
        if hash == StableHash::Md5 {
            group.bench_function("md-5-crate_first8_alone", |b| {
                b.iter(|| {
                    out.clear();
                    out.extend(slices.iter().map(|k| md5_first8(k) as NodeId));
                    black_box(&out);
                })
            });
        }
        group.finish();
    }
    // The ring's batch call alone on pre-computed hashes: in key order
    // (unsorted hashes) and sorted.
    let ring = ringwise_ring(StableHash::Xxh3);
    let hashes: Vec<u64> = keys.iter().map(|k| StableHash::Xxh3.hash(k)).collect();
    let mut sorted = hashes.clone();
    sorted.sort_unstable();
    let mut group = c.benchmark_group("batch_prehashed_100x1000");
    group.throughput(Throughput::Elements(KEYS as u64));
    group.bench_function("owner_per_hash", |b| {
        b.iter(|| {
            out.clear();
            out.extend(hashes.iter().filter_map(|&h| ring.owner(h)));
            black_box(&out);
        })
    });
    group.bench_function("owners_into_unsorted", |b| {
        b.iter(|| {
            ring.owners_into(&hashes, &mut out);
            black_box(&out);
        })
    });
    group.bench_function("owners_into_sorted", |b| {
        b.iter(|| {
            ring.owners_into(&sorted, &mut out);
            black_box(&out);
        })
    });
    group.finish();
}

/// Lookup cost by ring size (10 nodes × 100 vnodes up to 100 × 10,000):
/// independent and dependent (latency) lookups of pre-computed hashes, and
/// the MD5 lookup, to see which part of the MD5 path is memory latency.
fn ring_size(c: &mut Criterion) {
    let keys = Keys::new();
    let hashes: Vec<u64> = keys.iter().map(|k| StableHash::Xxh3.hash(k)).collect();
    let mut group = c.benchmark_group("ring_size");
    group.throughput(Throughput::Elements(KEYS as u64));
    for (nodes, vnodes) in [(10, 100), (100, 100), (100, 1000), (100, 10_000)] {
        let points = nodes * vnodes as usize;
        let ring = ring_of(nodes, vnodes, StableHash::Xxh3);
        group.bench_function(format!("prehashed_{points}"), |b| {
            b.iter(|| {
                for &h in &hashes {
                    black_box(ring.owner(h));
                }
            })
        });
        group.bench_function(format!("latency_{points}"), |b| {
            b.iter(|| {
                let mut carry = 0u64;
                for &h in &hashes {
                    carry = u64::from(ring.owner(h ^ carry).unwrap_or(0)) & 1;
                }
                carry
            })
        });
        let md5 = Keyed::new(ring_of(nodes, vnodes, StableHash::Md5), StableHash::Md5);
        group.bench_function(format!("md5_{points}"), |b| {
            b.iter(|| {
                for key in keys.iter() {
                    black_box(md5.owner(key));
                }
            })
        });
    }
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

/// Adding a node of 1000 vnodes: ringwise makes a new snapshot (the old
/// one is untouched); `hash-rings` inserts into its `BTreeMap` in place.
fn add_node(c: &mut Criterion) {
    let ring = ringwise_ring(StableHash::Xxh3);
    let mut group = c.benchmark_group("add_node_100x1000");
    group.bench_function("ringwise_with_node", |b| {
        // The new snapshot is dropped inside the timing, as a membership
        // change followed by the old snapshot's last reader letting go.
        b.iter(|| ring.with_node(Node::new("node-100")).expect("new name"))
    });
    group.bench_function("ringwise_without_node", |b| {
        b.iter(|| ring.without_node("node-42").expect("member"))
    });
    let names = vnode_names();
    let mut theirs = hash_rings_ring(&names);
    let new_node = "node-100".to_string();
    group.bench_function("hash-rings_1.1.0_insert_node", |b| {
        // Only the insert is timed; the removal that restores the ring for
        // the next iteration is not.
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let start = Instant::now();
                theirs.insert_node(&new_node, VNODES as usize);
                total += start.elapsed();
                theirs.remove_node(&new_node);
            }
            total
        })
    });
    group.finish();
}

criterion_group!(benches, lookup, batch, ring_size, build, add_node);
criterion_main!(benches);
