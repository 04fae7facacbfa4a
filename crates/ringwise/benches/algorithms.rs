//! The alternatives to the ring, next to the crates that implement the same
//! algorithms: `maglev` 0.2.1, `jumphash` 0.1.9 and `hash-rings` 1.1.0
//! (multi-probe). Keys `user:0..user:199999`, hashing included (xxh3 for
//! ringwise; the other crates hash with std's SipHash, their only option).
//! Time per iteration / 200,000 = ns per key. Run:
//! `cargo bench -p ringwise --bench algorithms`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ringwise::{
    Jump, KeyHasher, Maglev, Memento, MultiProbe, Node, Placement, RedisSlot, Rendezvous, Slots,
    StableHash,
};

#[path = "support/keys.rs"]
mod keys;
use keys::{KEYS, Keys};

fn nodes(n: usize) -> Vec<Node> {
    (0..n).map(|i| Node::new(format!("node-{i}"))).collect()
}

/// ns per key of `owner(xxh3(key))` over every key.
fn bench_owner<P: Placement>(c: &mut Criterion, group: &str, name: &str, p: &P, keys: &Keys) {
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(KEYS as u64));
    g.bench_function(name, |b| {
        b.iter(|| {
            for key in keys.iter() {
                black_box(p.owner(StableHash::Xxh3.hash(key)));
            }
        })
    });
    g.finish();
}

fn maglev(c: &mut Criterion) {
    let keys = Keys::new();
    let ours = Maglev::new(nodes(100), Maglev::DEFAULT_TABLE_SIZE).expect("valid");
    bench_owner(c, "maglev_lookup_100", "ringwise_65537", &ours, &keys);
    let names: Vec<String> = (0..100).map(|i| format!("node-{i}")).collect();
    let theirs = maglev::Maglev::with_capacity(names.clone(), 10007);
    let mut g = c.benchmark_group("maglev_lookup_100");
    g.throughput(Throughput::Elements(KEYS as u64));
    g.bench_function("maglev-crate_10007", |b| {
        b.iter(|| {
            for key in keys.iter() {
                black_box(maglev::ConsistentHasher::get(&theirs, key));
            }
        })
    });
    g.finish();
    let mut g = c.benchmark_group("maglev_build_100");
    g.sample_size(20);
    g.bench_function("ringwise_65537", |b| {
        b.iter(|| Maglev::new(nodes(100), Maglev::DEFAULT_TABLE_SIZE).expect("valid"))
    });
    g.bench_function("maglev-crate_10007", |b| {
        b.iter(|| maglev::Maglev::with_capacity(names.clone(), 10007))
    });
    g.finish();
}

fn rendezvous(c: &mut Criterion) {
    let keys = Keys::new();
    let ours = Rendezvous::new(nodes(10)).expect("valid");
    bench_owner(c, "rendezvous_lookup_10", "ringwise", &ours, &keys);
}

fn multiprobe(c: &mut Criterion) {
    let keys = Keys::new();
    let ours = MultiProbe::new(nodes(100), MultiProbe::DEFAULT_PROBES).expect("valid");
    bench_owner(
        c,
        "multiprobe_lookup_100",
        "ringwise_21_probes",
        &ours,
        &keys,
    );
    let names: Vec<String> = (0..100).map(|i| format!("node-{i}")).collect();
    let mut theirs = hash_rings::mpc::Ring::new(23);
    for name in &names {
        theirs.insert_node(name);
    }
    let mut g = c.benchmark_group("multiprobe_lookup_100");
    g.throughput(Throughput::Elements(KEYS as u64));
    g.bench_function("hash-rings_23_probes", |b| {
        b.iter(|| {
            for key in keys.iter() {
                black_box(theirs.get_node(&key));
            }
        })
    });
    g.finish();
}

fn slots(c: &mut Criterion) {
    let keys = Keys::new();
    let ours = Slots::new(nodes(100)).expect("valid");
    let mut g = c.benchmark_group("slots_lookup_100");
    g.throughput(Throughput::Elements(KEYS as u64));
    g.bench_function("ringwise_crc16", |b| {
        b.iter(|| {
            for key in keys.iter() {
                black_box(ours.owner(RedisSlot.hash(key)));
            }
        })
    });
    g.finish();
}

fn jump(c: &mut Criterion) {
    let keys = Keys::new();
    let ours = Jump::new(nodes(1000)).expect("valid");
    bench_owner(c, "jump_lookup_1000", "ringwise", &ours, &keys);
    // Memento with 10 % of the nodes removed from the middle.
    let mut memento = Memento::new(nodes(1000)).expect("valid");
    for i in (0..1000).step_by(10) {
        memento = memento.without_node(&format!("node-{i}")).expect("member");
    }
    bench_owner(
        c,
        "jump_lookup_1000",
        "ringwise_memento_10pct_removed",
        &memento,
        &keys,
    );
}

fn jumphash_crate(c: &mut Criterion) {
    let keys = Keys::new();
    let theirs = jumphash::JumpHasher::new();
    let mut g = c.benchmark_group("jump_lookup_1000");
    g.throughput(Throughput::Elements(KEYS as u64));
    g.bench_function("jumphash-crate", |b| {
        b.iter(|| {
            for key in keys.iter() {
                black_box(theirs.slot(&key, 1000));
            }
        })
    });
    g.finish();
}

criterion_group!(
    benches,
    maglev,
    rendezvous,
    multiprobe,
    slots,
    jump,
    jumphash_crate
);
criterion_main!(benches);
