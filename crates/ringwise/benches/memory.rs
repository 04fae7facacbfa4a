//! Memory per point: heap bytes a ring of 100 nodes × 1000 vnodes holds,
//! for ringwise, `hashring` 0.3.6 and `hash-rings` 1.1.0; then bytes per
//! node of a multi-probe placement (`MultiProbe`, 100 and 100,000 nodes
//! `node-i`): everything it keeps, node table included, and its own
//! lookup arrays (`heap_bytes`).
//!
//! Measured with a counting global allocator (`stats_alloc`): bytes
//! allocated minus bytes freed while the ring is built and kept alive,
//! minus the input the ring borrows or copies from. Run:
//! `cargo bench -p ringwise --bench memory`.

use std::alloc::System;

use ringwise::{MultiProbe, Node, Placement, Ring, StableHash};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const NODES: usize = 100;
const VNODES: usize = 1000;
const POINTS: f64 = (NODES * VNODES) as f64;

/// Live heap bytes that `build` leaves behind in what it returns.
fn retained<T>(build: impl FnOnce() -> T) -> (T, isize) {
    let region = Region::new(GLOBAL);
    let value = build();
    let stats = region.change();
    // stats_alloc already folds reallocations into these two counters.
    (
        value,
        stats.bytes_allocated as isize - stats.bytes_deallocated as isize,
    )
}

fn report(name: &str, bytes: isize) {
    println!(
        "{name:<22} {bytes:>10} bytes  {:>6.2} bytes/point",
        bytes as f64 / POINTS
    );
}

fn main() {
    let names: Vec<String> = (0..NODES)
        .flat_map(|i| (0..VNODES).map(move |j| format!("node-{i}#{j}")))
        .collect();

    let (ring, bytes) = retained(|| {
        Ring::builder()
            .hasher(StableHash::Xxh3)
            .vnodes(VNODES as u32)
            .nodes((0..NODES).map(|i| Node::new(format!("node-{i}"))))
            .build()
            .expect("valid ring")
    });
    report("ringwise (allocator)", bytes);
    report("ringwise (heap_bytes)", ring.heap_bytes() as isize);

    // Both crates keep references to the names (`&str` / `&String`), which
    // exist before the measurement, so only their own structures count.
    let (other, bytes) = retained(|| {
        let mut ring = hashring::HashRing::new();
        ring.batch_add(names.iter().map(String::as_str).collect());
        ring
    });
    report("hashring 0.3.6", bytes);
    drop(other);

    let (other, bytes) = retained(|| {
        let mut ring = hash_rings::consistent::Ring::new();
        for name in &names {
            ring.insert_node(name, 1);
        }
        ring
    });
    report("hash-rings 1.1.0", bytes);
    drop(other);

    for nodes in [100, 100_000] {
        // The input list is made inside the measurement: the placement
        // keeps its names and frees the list.
        let (placement, bytes) = retained(|| {
            let names = (0..nodes).map(|i| Node::new(format!("node-{i}")));
            MultiProbe::new(names.collect(), MultiProbe::DEFAULT_PROBES).expect("valid nodes")
        });
        let per_node = |bytes: usize| bytes as f64 / nodes as f64;
        println!(
            "multiprobe, {nodes:>6} nodes: {:>6.2} bytes/node kept (node table included), \
             {:>5.2} in its lookup arrays (heap_bytes)",
            per_node(bytes as usize),
            per_node(placement.heap_bytes()),
        );
    }
}
