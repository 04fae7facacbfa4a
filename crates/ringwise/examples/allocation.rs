//! The allocation experiment recorded in BENCHMARKS.md: a cluster grows
//! from 1 to `--nodes` nodes, one at a time, with allocated points
//! ([`ringwise::Allocator`]) next to rings of random (hashed) points, and
//! the peak/mean ownership of each is printed at every step.
//!
//! `cargo run --release -p ringwise --example allocation -- [--nodes 100]
//! [--points 16] [--replicas 1] [--zones 0] [--weights 1] [--names node-]`
//!
//! `--zones Z` puts node `i` in zone `i mod Z` and counts zone-aware
//! replicas; `--weights 1,2,4` cycles those weights over the nodes;
//! `--names SET` picks the name set (below).
//!
//! `--table` instead grows every name set in four runs (equal nodes
//! `R = 1`, `R = 3`, weights 1, 2, 4 with `R = 1`, three zones with `R = 3`
//! zone-aware) and prints one row per set: the worst peak/mean of the
//! steps from 10 to 40 nodes and from 10 to `--nodes`, and the least
//! loaded node's min/mean over the same steps. Cost: O(N² · T · P) per run;
//! a few seconds in release for 100 nodes.
//!
//! Name sets: `node-` (`node-<i>`), `n`, `cache-`, `db`, `ip` (`10.0.0.<i>`),
//! `memcached` (`10.0.<i/256>.<i%256>:11211`), `host`
//! (`host-<i>.example.com`), `redis` (`redis-<i>:6379`), `padded`
//! (`shard-<i:04>`), `random1` to `random3` (12 random lowercase letters
//! from SplitMix64 seeded 1 to 3). The names only seed the first point and
//! the node table's order, so a balance that holds for one set and not
//! another is luck, not design: the table shows whether it does.

use std::time::Instant;

use ringwise::{Allocator, Explicit, Node, Ring, RingView, StableHash};

/// Every name set the table grows.
const SETS: [&str; 12] = [
    "node-",
    "n",
    "cache-",
    "db",
    "ip",
    "memcached",
    "host",
    "redis",
    "padded",
    "random1",
    "random2",
    "random3",
];

/// The `i`-th name of `set` (an unknown set reads as a prefix).
fn name(set: &str, i: usize) -> String {
    match set {
        "ip" => format!("10.0.0.{i}"),
        "memcached" => format!("10.0.{}.{}:11211", i / 256, i % 256),
        "host" => format!("host-{i}.example.com"),
        "redis" => format!("redis-{i}:6379"),
        "padded" => format!("shard-{i:04}"),
        s if s.starts_with("random") => {
            let seed: u64 = s["random".len()..].parse().unwrap_or(0);
            let mut state = seed.wrapping_mul(1 << 32).wrapping_add(i as u64);
            (0..12)
                .map(|_| (b'a' + (splitmix(&mut state) % 26) as u8) as char)
                .collect()
        }
        prefix => format!("{prefix}{i}"),
    }
}

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One run's settings.
#[derive(Clone)]
struct Run {
    set: String,
    replicas: u32,
    zones: usize,
    weights: Vec<f64>,
}

impl Run {
    fn node(&self, i: usize) -> Node {
        let node = Node::new(name(&self.set, i)).weight(self.weights[i % self.weights.len()]);
        match self.zones {
            0 => node,
            z => node.zone(format!("zone-{}", i % z)),
        }
    }
}

/// Worst peak over steps 10–40, over 10–N, lowest low over 10–N.
struct Summary {
    peak40: f64,
    peak: f64,
    low: f64,
}

/// Grows `run` to `nodes`; `each` sees every step's ring, peak, low and
/// the allocation's milliseconds.
fn grow(
    run: &Run,
    nodes: usize,
    points: u32,
    mut each: impl FnMut(usize, &Ring<Explicit>, f64, f64, f64),
) -> Result<Summary, Box<dyn std::error::Error>> {
    let allocator = Allocator::new(points)?
        .replicas(run.replicas)?
        .zones(run.zones > 0);
    let mut ring: Ring<Explicit> = Ring::builder().scheme(Explicit).build()?;
    let mut summary = Summary {
        peak40: 0.0,
        peak: 0.0,
        low: f64::INFINITY,
    };
    for i in 0..nodes {
        let started = Instant::now();
        let chosen = allocator.allocate(&ring, &run.node(i))?;
        let took = started.elapsed().as_secs_f64() * 1e3;
        ring = ring.with_node_points(run.node(i), chosen)?;
        let balance = allocator.balance(&ring);
        let (peak, low) = (balance.peak(), balance.low());
        if i + 1 >= 10 {
            summary.peak = summary.peak.max(peak);
            summary.low = summary.low.min(low);
            if i < 40 {
                summary.peak40 = summary.peak40.max(peak);
            }
        }
        each(i + 1, &ring, peak, low, took);
    }
    Ok(summary)
}

fn table(nodes: usize, points: u32) -> Result<(), Box<dyn std::error::Error>> {
    let runs = [
        ("R=1", 1, 0, vec![1.0]),
        ("R=3", 3, 0, vec![1.0]),
        ("w1,2,4", 1, 0, vec![1.0, 2.0, 4.0]),
        ("zones3 R=3", 3, 3, vec![1.0]),
    ];
    let head: Vec<String> = runs
        .iter()
        .map(|r| format!("{0} ≤40\t{0} ≤{nodes}\t{0} low", r.0))
        .collect();
    println!("names\t{}", head.join("\t"));
    for set in SETS {
        let mut cells = Vec::new();
        for (_, replicas, zones, weights) in &runs {
            let run = Run {
                set: set.to_owned(),
                replicas: *replicas,
                zones: *zones,
                weights: weights.clone(),
            };
            let s = grow(&run, nodes, points, |_, _, _, _, _| {})?;
            cells.push(format!("{:.4}\t{:.4}\t{:.4}", s.peak40, s.peak, s.low));
        }
        println!("{set}\t{}", cells.join("\t"));
    }
    Ok(())
}

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
    if args.iter().any(|a| a == "--table") {
        return table(nodes, points);
    }
    let run = Run {
        set: option("--names", "node-"),
        replicas: option("--replicas", "1").parse()?,
        zones: option("--zones", "0").parse()?,
        weights: option("--weights", "1")
            .split(',')
            .map(str::parse)
            .collect::<Result<_, _>>()?,
    };
    let random = [16u32, 160, 1000];
    let allocator = Allocator::new(points)?
        .replicas(run.replicas)?
        .zones(run.zones > 0);
    println!(
        "nodes\tallocated {points}\t{}\tallocated min\tallocation ms",
        random.map(|v| format!("random {v}")).join("\t")
    );
    let summary = grow(&run, nodes, points, |n, _, peak, low, took| {
        let others = random.map(|v| {
            let ring = Ring::builder()
                .hasher(StableHash::Xxh3)
                .vnodes(v)
                .nodes((0..n).map(|i| run.node(i)))
                .build()
                .expect("valid");
            format!("{:.3}", allocator.balance(&ring as &dyn RingView).peak())
        });
        println!("{n}\t{peak:.3}\t{}\t{low:.3}\t{took:.2}", others.join("\t"));
    })?;
    println!(
        "worst allocated peak/mean from 10 nodes on: {:.4} (10 to 40: {:.4}), lowest min/mean {:.4}",
        summary.peak, summary.peak40, summary.low
    );
    Ok(())
}
