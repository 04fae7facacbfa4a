//! The load balancers' lookups, each including its default key
//! hash, one key at a time and in a batch, side by side in the same run
//! with that key hash alone and with the lookup of a precomputed hash, on
//! 10 and 100 servers.
//!
//! Target: a lookup within 25 ns of its key hash on 10
//! and 100 servers. The rows of a group are alternated round by round
//! (`support/side_by_side.rs`), so they see the same machine load.
//!
//! Every lookup goes the way an application's does: `AnyPlacement::build`
//! with `Params::DEFAULT` over `10.0.2.N:8080` (weight 1), then
//! `Keyed::new(placement, algorithm.default_hash())`; the keys are
//! `user:0` .. `user:4095`, all resolved per iteration, so criterion's
//! time / 4096 is ns per key. Run: `cargo bench -p ringwise --bench
//! balancers`.

use criterion::{Criterion, criterion_group, criterion_main};
use ringwise::{Algorithm, AnyPlacement, Keyed, Node, Params};

#[path = "support/side_by_side.rs"]
mod side_by_side;
use side_by_side::{KEYS, Lookup, placement_group};

/// The balancers measured, by registry name, each with its own default key
/// hash (`Algorithm::default_hash`).
const BALANCERS: &[&str] = &[
    "envoy-ring",
    "envoy-rendezvous",
    "haproxy",
    "grpc-ring",
    "varnish-shard",
];

/// Server counts of each group.
const SERVERS: [usize; 2] = [10, 100];

fn lookup(algorithm: Algorithm, servers: usize) -> Lookup {
    let nodes = (1..=servers).map(|n| Node::new(format!("10.0.2.{n}:8080")));
    let placement =
        AnyPlacement::build(algorithm, nodes.collect(), &Params::DEFAULT).expect("valid nodes");
    Keyed::new(placement, algorithm.default_hash())
}

fn balancers(c: &mut Criterion) {
    let keys: Vec<String> = (0..KEYS).map(|i| format!("user:{i}")).collect();
    for name in BALANCERS {
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

criterion_group!(benches, balancers);
criterion_main!(benches);
