//! Allocated points (`Allocator`) against random ones, in one run:
//!
//! - lookups: 100 nodes with 16 allocated points each, next to the same
//!   nodes with 1,000 and 160 random points each; one `owner(hash)` per
//!   iteration over a stream of 2^20 distinct SplitMix64 hashes (the
//!   placement alone: key hashing costs the same for all), read in order,
//!   as a cache sees a stream of mostly distinct keys; a short stream
//!   repeated would keep the lines the big rings touch in L2 and hide
//!   their size. The heap bytes of each ring are printed before the
//!   timings.
//! - allocation: the 100th node joining 99 allocated nodes, with one and
//!   with three replicas balanced.
//!
//! Run: `cargo bench -p ringwise --bench allocate -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ringwise::{Allocator, Explicit, Node, Placement, Ring, StableHash};

fn node(i: usize) -> Node {
    Node::new(format!("node-{i}"))
}

fn allocated(allocator: &Allocator, n: usize) -> Ring<Explicit> {
    let mut ring: Ring<Explicit> = Ring::builder().scheme(Explicit).build().expect("empty");
    for i in 0..n {
        let points = allocator.allocate(&ring, &node(i)).expect("allocates");
        ring = ring.with_node_points(node(i), points).expect("joins");
    }
    ring
}

fn random(vnodes: u32, n: usize) -> Ring {
    Ring::builder()
        .hasher(StableHash::Xxh3)
        .vnodes(vnodes)
        .nodes((0..n).map(node))
        .build()
        .expect("valid")
}

fn hashes() -> Vec<u64> {
    let mut state = 42u64;
    (0..1 << 20)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        })
        .collect()
}

fn bench_lookup<P: Placement>(c: &mut Criterion, name: &str, placement: &P) {
    let hashes = hashes();
    let mut i = 0;
    c.bench_function(name, |b| {
        b.iter(|| {
            i = (i + 1) & ((1 << 20) - 1);
            black_box(placement.owner(black_box(hashes[i])))
        })
    });
}

fn lookups(c: &mut Criterion) {
    let allocator = Allocator::new(16).expect("valid");
    let chosen = allocated(&allocator, 100);
    let (thousand, default) = (random(1000, 100), random(160, 100));
    for (name, points, bytes) in [
        ("allocated 16", chosen.point_count(), chosen.heap_bytes()),
        ("random 1000", thousand.point_count(), thousand.heap_bytes()),
        ("random 160", default.point_count(), default.heap_bytes()),
    ] {
        println!("memory: 100 nodes, {name}: {points} points, {bytes} heap bytes");
    }
    bench_lookup(c, "lookup_100_nodes/allocated_16", &chosen);
    bench_lookup(c, "lookup_100_nodes/random_1000", &thousand);
    bench_lookup(c, "lookup_100_nodes/random_160", &default);
}

fn allocation(c: &mut Criterion) {
    for replicas in [1, 3] {
        let allocator = Allocator::new(16)
            .and_then(|a| a.replicas(replicas))
            .expect("valid");
        let ring = allocated(&allocator, 99);
        let newcomer = node(99);
        let mut g = c.benchmark_group("allocate_100th_node");
        g.sample_size(20);
        g.bench_function(format!("16_points_r{replicas}"), |b| {
            b.iter(|| black_box(allocator.allocate(&ring, &newcomer).expect("allocates")))
        });
        g.finish();
    }
}

criterion_group!(benches, lookups, allocation);
criterion_main!(benches);
