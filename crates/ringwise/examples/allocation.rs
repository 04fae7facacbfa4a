//! The allocation experiment recorded in BENCHMARKS.md: a cluster grows
//! from 1 to `--nodes` nodes, one at a time, with allocated points
//! ([`ringwise::Allocator`]) next to rings of random (hashed) points, and
//! the peak/mean ownership of each is printed at every step.
//!
//! `cargo run --release -p ringwise --example allocation -- [--nodes 100]
//! [--points 16] [--replicas 1] [--zones 0] [--weights 1]`
//!
//! `--zones Z` puts node `i` in zone `i mod Z` and counts zone-aware
//! replicas; `--weights 1,2,4` cycles those weights over the nodes.

use std::time::Instant;

use ringwise::{Allocator, Explicit, Node, Ring, RingView, StableHash};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let option = |name: &str, default: &str| -> String {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
            .unwrap_or_else(|| default.to_owned())
    };
    let nodes: usize = option("--nodes", "100").parse()?;
    let points: u32 = option("--points", "16").parse()?;
    let replicas: u32 = option("--replicas", "1").parse()?;
    let zones: usize = option("--zones", "0").parse()?;
    let weights: Vec<f64> = option("--weights", "1")
        .split(',')
        .map(str::parse)
        .collect::<Result<_, _>>()?;
    let allocator = Allocator::new(points)?.replicas(replicas)?.zones(zones > 0);
    let node = |i: usize| {
        let node = Node::new(format!("node-{i}")).weight(weights[i % weights.len()]);
        match zones {
            0 => node,
            z => node.zone(format!("zone-{}", i % z)),
        }
    };
    let random = [16u32, 160, 1000];
    println!(
        "nodes\tallocated {points}\t{}\tallocated min\tallocation ms",
        random.map(|v| format!("random {v}")).join("\t")
    );
    let mut ring: Ring<Explicit> = Ring::builder().scheme(Explicit).build()?;
    let (mut worst, mut lowest) = (0.0f64, f64::INFINITY);
    for i in 0..nodes {
        let started = Instant::now();
        let chosen = allocator.allocate(&ring, &node(i))?;
        let took = started.elapsed().as_secs_f64() * 1e3;
        ring = ring.with_node_points(node(i), chosen)?;
        let balance = allocator.balance(&ring);
        let peak = balance.peak();
        let low = balance.low();
        let others = random.map(|v| {
            let ring = Ring::builder()
                .hasher(StableHash::Xxh3)
                .vnodes(v)
                .nodes((0..=i).map(node))
                .build()
                .expect("valid");
            format!("{:.3}", allocator.balance(&ring as &dyn RingView).peak())
        });
        if i + 1 >= 10 {
            worst = worst.max(peak);
            lowest = lowest.min(low);
        }
        println!(
            "{}\t{peak:.3}\t{}\t{low:.3}\t{took:.2}",
            i + 1,
            others.join("\t")
        );
    }
    println!("worst allocated peak/mean from 10 nodes on: {worst:.4}, lowest min/mean {lowest:.4}");
    Ok(())
}
