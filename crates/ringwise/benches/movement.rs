//! `ringwise::diff`: what a membership change moves, per algorithm family.
//!
//! - arcs: rings of 100 and 1,000 nodes × 160 vnodes (16,000 and 160,000
//!   points), a join (N → N+1) and a leave (N → N−1);
//! - table: slots (16,384) and maglev (65,537) of 100 nodes, a join;
//! - sampled: jump of 100 nodes, a join, 2^20 hashes looked up in both;
//! - haproxy: 100 servers of weights 1 to 5 (4,800 points), a reweight of
//!   one (3 → 10), exact in successor form with and without avalanche,
//!   beside the sampled diff `plan` used before (2^20 hashes).
//!
//! Each iteration is one whole `diff` (ranges, flows, names). Run:
//! `cargo bench -p ringwise --bench movement -- --measurement-time 3 --warm-up-time 1`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ringwise::{
    Algorithm, AnyPlacement, DEFAULT_SAMPLES, Node, Params, Placement, diff, diff_sampled,
};

fn nodes(n: usize) -> Vec<Node> {
    (0..n).map(|i| Node::new(format!("node-{i}"))).collect()
}

fn build(algorithm: Algorithm, n: usize) -> AnyPlacement {
    let params = Params {
        hash: algorithm.default_hash(),
        vnodes: 160,
        ..Params::DEFAULT
    };
    AnyPlacement::build(algorithm, nodes(n), &params).expect("valid")
}

/// Benches `diff(old, old ± one node)` as `group/name`.
fn bench_change(c: &mut Criterion, group: &str, algorithm: Algorithm, n: usize, join: bool) {
    let old = build(algorithm, n);
    let new = if join {
        old.with_node(Node::new(format!("node-{n}")))
    } else {
        old.without_node(&format!("node-{}", n / 2))
    };
    let new = new.expect("changed");
    let mut g = c.benchmark_group(group);
    if n >= 1000 || matches!(algorithm, Algorithm::Jump) {
        g.sample_size(10);
    }
    let name = format!("{algorithm}_{n}_{}", if join { "join" } else { "leave" });
    g.bench_function(name, |b| b.iter(|| black_box(diff(&old, &new))));
    g.finish();
}

fn arcs(c: &mut Criterion) {
    for n in [100, 1000] {
        for join in [true, false] {
            bench_change(c, "diff_arcs_x160", Algorithm::Ring, n, join);
        }
    }
}

fn tables(c: &mut Criterion) {
    bench_change(c, "diff_table", Algorithm::Slots, 100, true);
    bench_change(c, "diff_table", Algorithm::Maglev, 100, true);
}

fn sampled(c: &mut Criterion) {
    bench_change(c, "diff_sampled", Algorithm::Jump, 100, true);
}

fn haproxy(c: &mut Criterion) {
    let mut g = c.benchmark_group("diff_haproxy_100");
    g.sample_size(10);
    for avalanche in [false, true] {
        let params = Params {
            hash: Algorithm::Haproxy.default_hash(),
            avalanche,
            ..Params::DEFAULT
        };
        let servers = |heavy: f64| -> Vec<Node> {
            (0..100)
                .map(|i| match i {
                    7 => Node::new("srv7").weight(heavy),
                    _ => Node::new(format!("srv{i}")).weight(f64::from(1 + i % 5)),
                })
                .collect()
        };
        let build = |nodes| AnyPlacement::build(Algorithm::Haproxy, nodes, &params).expect("valid");
        let (old, new) = (build(servers(3.0)), build(servers(10.0)));
        let tag = if avalanche { "avalanche" } else { "plain" };
        g.bench_function(format!("exact_{tag}"), |b| {
            b.iter(|| black_box(diff(&old, &new)))
        });
        g.bench_function(format!("sampled_{tag}"), |b| {
            b.iter(|| black_box(diff_sampled(&old, &new, DEFAULT_SAMPLES)))
        });
    }
    g.finish();
}

criterion_group!(benches, arcs, tables, sampled, haproxy);
criterion_main!(benches);
