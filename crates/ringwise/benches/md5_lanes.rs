//! The eight-lane MD5 against the `md-5` crate one message at a time, in
//! one run: 4,096 messages per iteration, time / 4,096 = ns per message.
//!
//! - `md5/short`: the simulator's keys `user:0..user:4095` (6–9 bytes,
//!   one block each);
//! - `md5/rendezvous`: `node-3:user:<i>` (rendezvous scores, one block);
//! - `md5/two_blocks`: 64-byte messages (two blocks each after padding).
//!
//! `crate` is `StableHash::Md5.hash` (the `md-5` crate's digest, the
//! prefix read big-endian), `lanes` is `md5_prefix_batch` over the same
//! messages, built into its buffer by the same copy.
//!
//! Run: `cargo bench -p ringwise --bench md5_lanes`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ringwise::{KeyHasher, StableHash, md5_prefix_batch};

const COUNT: usize = 4096;

fn messages(make: impl Fn(usize) -> Vec<u8>) -> Vec<Vec<u8>> {
    (0..COUNT).map(make).collect()
}

fn bench(c: &mut Criterion) {
    let sets = [
        ("short", messages(|i| format!("user:{i}").into_bytes())),
        (
            "rendezvous",
            messages(|i| format!("node-3:user:{i}").into_bytes()),
        ),
        ("two_blocks", messages(|i| format!("{i:064}").into_bytes())),
    ];
    let mut group = c.benchmark_group("md5");
    group.throughput(Throughput::Elements(COUNT as u64));
    for (name, set) in &sets {
        let mut out = vec![0u64; COUNT];
        group.bench_function(format!("{name}/crate"), |b| {
            b.iter(|| {
                for (h, m) in out.iter_mut().zip(set) {
                    *h = StableHash::Md5.hash(m);
                }
                black_box(&out);
            })
        });
        group.bench_function(format!("{name}/lanes"), |b| {
            b.iter(|| {
                md5_prefix_batch(&mut out, |i, buf| buf.extend_from_slice(&set[i]));
                black_box(&out);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
