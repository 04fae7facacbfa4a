//! The client libraries' rings, each lookup including its
//! default key hash and hash tag, one key at a time and in a batch, side by
//! side in the same run with that key hash alone and with the lookup of a
//! precomputed hash, on 10 and 100 servers; then the exact cross-flavour
//! plan, `diff` of a Dalli ring and a groupcache ring of 160 points per
//! server on the same 100 servers.
//!
//! Targets: a lookup within 25 ns of its key hash; the
//! exact dalli → groupcache diff on 100 servers × 160 points under 10 ms. The rows of a group are alternated round by round
//! (`support/side_by_side.rs`), so they see the same machine load.
//!
//! Every lookup goes the way an application's does: `ClusterSpec::new`
//! over `10.0.2.N:11211` (weight 1; go-redis's shards `shardN`), built with
//! the algorithm's key hash and hash tag; the keys are
//! `user:0` .. `user:4095`, all resolved per iteration, so criterion's
//! time / 4096 is ns per key. Run: `cargo bench -p ringwise --bench
//! clients`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ringwise::{Algorithm, AnyPlacement, ClusterSpec, Node, Params, diff};

#[path = "support/side_by_side.rs"]
mod side_by_side;
use side_by_side::{KEYS, Lookup, placement_group};

/// The clients measured, by registry name.
const CLIENTS: &[&str] = &[
    "dalli",
    "redis-rb",
    "groupcache",
    "php-memcache",
    "go-redis",
];

/// Server counts of each group.
const SERVERS: [usize; 2] = [10, 100];

fn names(algorithm: Algorithm, servers: usize) -> Vec<Node> {
    let name = |n| match algorithm {
        Algorithm::GoRedis => format!("shard{n}"),
        _ => format!("10.0.2.{n}:11211"),
    };
    (1..=servers).map(|n| Node::new(name(n))).collect()
}

fn lookup(algorithm: Algorithm, servers: usize) -> Lookup {
    let spec = ClusterSpec::new(algorithm, names(algorithm, servers)).expect("valid nodes");
    spec.build().expect("builds")
}

fn clients(c: &mut Criterion) {
    let keys: Vec<String> = (0..KEYS).map(|i| format!("user:{i}")).collect();
    for name in CLIENTS {
        let algorithm: Algorithm = name
            .parse()
            .unwrap_or_else(|e| panic!("{name} is not in the registry: {e}"));
        let hash = algorithm.default_hash();
        for servers in SERVERS {
            let keyed = lookup(algorithm, servers);
            println!("{name} on {servers} servers, key hash {}", hash.name());
            placement_group(c, &format!("{name}_{servers}"), &keyed, &keys);
        }
    }
}

/// `diff` of the same 100 servers as a Dalli ring (160 points each at
/// equal weights) and a groupcache ring of 160 replicas: the two point
/// lists merged, O(P_old + P_new).
fn cross_flavour_plan(c: &mut Criterion) {
    let nodes = names(Algorithm::Dalli, 100);
    let dalli = AnyPlacement::build(Algorithm::Dalli, nodes.clone(), &Params::DEFAULT)
        .expect("valid nodes");
    let params = Params {
        groupcache_replicas: 160,
        ..Params::DEFAULT
    };
    let groupcache =
        AnyPlacement::build(Algorithm::Groupcache, nodes, &params).expect("valid nodes");
    c.bench_function("diff_dalli_to_groupcache_100x160", |b| {
        b.iter(|| black_box(diff(black_box(&dalli), black_box(&groupcache))));
    });
}

criterion_group!(benches, clients, cross_flavour_plan);
criterion_main!(benches);
