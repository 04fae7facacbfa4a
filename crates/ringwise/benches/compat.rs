//! The compatibility flavours' lookups, each next to its key hash
//! alone and, for nginx, next to the `pingora-ketama` crate (0.9.1, a Rust
//! port of nginx's `hash $key consistent`) on the same servers and keys.
//!
//! Targets: ketama's lookup at most 25 ns above MD5 of the same key; nginx's
//! lookup at most 25 ns per key including CRC32, next to pingora-ketama;
//! grpc-ring's within 25 ns of xxh64 alone.
//!
//! Every lookup goes the way an application's does: `AnyPlacement::build`
//! with `Params::DEFAULT` (libmemcached's ketama), then
//! `Keyed::new(placement, algorithm.default_hash())`; the nginx groups also
//! time the same ring as its concrete type (`Keyed<Ring<Nginx>>`, the row
//! `ringwise_concrete_owner`: what the enum's dispatch costs). Each iteration
//! resolves all 4096 keys of a pre-built set, so criterion's time / 4096 is
//! ns per key, and every row of a group sees the same keys. Before
//! measuring, ringwise and pingora-ketama must pick the same server for
//! every key. Run: `cargo bench -p ringwise --bench compat`.

use std::hint::black_box;
use std::net::SocketAddr;

use criterion::{Criterion, criterion_group, criterion_main};
use pingora_ketama::{Bucket, Continuum};
use ringwise::{Algorithm, AnyPlacement, Keyed, Node, Params, Placement, wire};

#[path = "support/side_by_side.rs"]
mod side_by_side;
use side_by_side::{KEYS, Lookup, hash_row, measure, ringwise_rows};

fn lookup(algorithm: Algorithm, nodes: Vec<Node>) -> Lookup {
    let placement = AnyPlacement::build(algorithm, nodes, &Params::DEFAULT).expect("valid nodes");
    Keyed::new(placement, algorithm.default_hash())
}

/// `10.0.1.N:11211`, weights 1, 2, 3, 5 in turn.
fn ketama_nodes(servers: usize) -> Vec<Node> {
    const WEIGHTS: [f64; 4] = [1.0, 2.0, 3.0, 5.0];
    (1..=servers)
        .map(|n| Node::new(format!("10.0.1.{n}:11211")).weight(WEIGHTS[n % WEIGHTS.len()]))
        .collect()
}

fn ketama(c: &mut Criterion) {
    let keys: Vec<String> = (0..KEYS).map(|i| format!("user:{i}")).collect();
    for servers in [10, 100] {
        let keyed = lookup(Algorithm::Ketama, ketama_nodes(servers));
        let mut rows = vec![hash_row("md5_le32_alone", wire::md5_le32, &keys)];
        rows.extend(ringwise_rows(&keyed, &keys));
        measure(c, &format!("ketama_{servers}"), rows);
    }
}

/// nginx-style request keys: `/` and 40 hex digits (a SplitMix64 stream,
/// so the set is the same on every run).
fn nginx_keys() -> Vec<String> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    (0..KEYS)
        .map(|_| {
            let hex = format!("{:016x}{:016x}{:016x}", next(), next(), next());
            format!("/{}", &hex[..40])
        })
        .collect()
}

/// `10.0.0.N:443`, all of `weight`: the servers both sides are built from.
fn nginx_servers(servers: usize, weight: u32) -> Vec<(String, u32)> {
    (1..=servers)
        .map(|n| (format!("10.0.0.{n}:443"), weight))
        .collect()
}

/// How many keys the two sides send to different servers, with the first
/// few for the message.
fn disagreements(ours: &Lookup, theirs: &Continuum, keys: &[String]) -> (usize, Vec<String>) {
    let mut count = 0;
    let mut first = Vec::new();
    for key in keys {
        let a = ours.locate(key).map(str::to_owned);
        let b = theirs.node(key.as_bytes()).map(|addr| addr.to_string());
        if a != b {
            count += 1;
            if first.len() < 5 {
                first.push(format!("{key}: ringwise {a:?}, pingora-ketama {b:?}"));
            }
        }
    }
    (count, first)
}

fn nginx(c: &mut Criterion) {
    let keys = nginx_keys();
    // pingora-ketama's own test upstream (its nginx sample data), then ten
    // servers of weight one.
    let configs = [
        ("nginx_9x100", nginx_servers(9, 100)),
        ("nginx_10x1", nginx_servers(10, 1)),
    ];
    for (name, servers) in configs {
        let nodes = servers
            .iter()
            .map(|(s, w)| Node::new(s.as_str()).weight(f64::from(*w)));
        let keyed = lookup(Algorithm::Nginx, nodes.collect());
        let buckets: Vec<Bucket> = servers
            .iter()
            .map(|(s, w)| Bucket::new(s.parse::<SocketAddr>().expect("an address"), *w))
            .collect();
        let theirs = Continuum::new(&buckets);
        let (count, first) = disagreements(&keyed, &theirs, &keys);
        assert_eq!(
            count, 0,
            "{name}: ringwise and pingora-ketama disagree: {first:#?}"
        );
        // The lookup without the hash: where the time above CRC32 goes.
        let hashes: Vec<u64> = keys.iter().map(|key| keyed.hash(key.as_bytes())).collect();
        let mut rows = vec![hash_row("crc32_alone", wire::crc32, &keys)];
        rows.extend(ringwise_rows(&keyed, &keys));
        let prehashed = || {
            for &hash in &hashes {
                black_box(keyed.placement().owner(black_box(hash)));
            }
        };
        rows.push(("ringwise_owner_prehashed", Box::new(prehashed)));
        // The same ring as its concrete type, `Keyed<Ring<Nginx>>`: what
        // the enum's dispatch costs on the one key path.
        let AnyPlacement::Nginx(ring) = keyed.placement().clone() else {
            unreachable!("built as nginx")
        };
        let concrete = Keyed::new(ring, Algorithm::Nginx.default_hash());
        let concrete = {
            let keys = &keys;
            move || {
                for key in keys {
                    black_box(concrete.owner(black_box(key)));
                }
            }
        };
        rows.push(("ringwise_concrete_owner", Box::new(concrete)));
        let node = || {
            for key in &keys {
                black_box(theirs.node(black_box(key.as_bytes())));
            }
        };
        let node_idx = || {
            for key in &keys {
                black_box(theirs.node_idx(black_box(key.as_bytes())));
            }
        };
        rows.push(("pingora_node", Box::new(node)));
        rows.push(("pingora_node_idx", Box::new(node_idx)));
        measure(c, name, rows);
    }
}

/// gRPC's `ring_hash`: `10.0.5.N:50051` of weights 1, 2, 3, 5
/// in turn under gRPC's defaults (a ring of 1024 to 4096 points), each
/// request keyed by a header value hashed with xxh64.
fn grpc(c: &mut Criterion) {
    let keys: Vec<String> = (0..KEYS).map(|i| format!("user:{i}")).collect();
    for servers in [10, 100] {
        const WEIGHTS: [f64; 4] = [1.0, 2.0, 3.0, 5.0];
        let nodes = (1..=servers)
            .map(|n| Node::new(format!("10.0.5.{n}:50051")).weight(WEIGHTS[n % WEIGHTS.len()]));
        let params = Params {
            max_ring_size: 4096,
            ..Params::DEFAULT
        };
        let placement =
            AnyPlacement::build(Algorithm::GrpcRing, nodes.collect(), &params).expect("valid");
        let keyed = Keyed::new(placement, Algorithm::GrpcRing.default_hash());
        let mut rows = vec![hash_row("xxh64_alone", |key| keyed.hash(key), &keys)];
        rows.extend(ringwise_rows(&keyed, &keys));
        measure(c, &format!("grpc_ring_{servers}"), rows);
    }
}

criterion_group!(benches, ketama, nginx, grpc);
criterion_main!(benches);
