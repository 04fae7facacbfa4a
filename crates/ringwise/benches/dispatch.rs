//! What the one key path costs over a concrete type: `Keyed<AnyPlacement>`
//! (what the CLI, Python, the cluster file and membership hand out) beside
//! `Keyed<T>` of the same snapshot, one key at a time and in a batch, with
//! the key hash alone, side by side in one run (targets: dispatch
//! ≤ +0.5 ns; `anchor` no slower than the `anchorhash` crate through the
//! public path).
//!
//! Each group: `ring` (100 nodes × 160 vnodes), `anchor` (1,000 buckets,
//! all working), `jump`, `jumpback` (1,000 nodes) and `maglev` (100 nodes),
//! all with xxh3 over the keys `user:0` .. `user:4095`. The rows alternate
//! round by round (`support/side_by_side.rs`), so they share the machine's
//! load; the warm minima are the figures to compare. The `anchor` group
//! also has the crate (0.2.2, default features) given the same xxh3 hash.
//! Run: `cargo bench -p ringwise --bench dispatch`.

use std::hash::{BuildHasher, Hasher};
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ringwise::{
    Algorithm, AnyPlacement, KeyHasher, Keyed, Node, NodeId, Params, Placement, StableHash,
};

#[path = "support/side_by_side.rs"]
mod side_by_side;
use side_by_side::{KEYS, Row, hash_row, measure};

/// `owner` one key at a time and `owners_into` on the whole set through
/// `keyed`, rows named `<label>_owner` and `<label>_owners_into`.
fn rows<'a, P: Placement>(
    label: &'static str,
    keyed: &'a Keyed<P>,
    keys: &'a [String],
) -> [Row<'a>; 2] {
    let one = move || {
        for key in keys {
            black_box(keyed.owner(black_box(key)));
        }
    };
    let mut out: Vec<NodeId> = Vec::with_capacity(keys.len());
    let batch = move || {
        keyed.owners_into(black_box(keys), &mut out);
        black_box(&out);
    };
    let names: (&'static str, &'static str) = match label {
        "concrete" => ("concrete_owner", "concrete_owners_into"),
        _ => ("any_owner", "any_owners_into"),
    };
    [(names.0, Box::new(one)), (names.1, Box::new(batch))]
}

/// Hands the crate the 64-bit hash written into it, unchanged.
#[derive(Default, Clone, Copy)]
struct Identity(u64);

impl Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u64 keys are hashed")
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

#[derive(Default, Clone, Copy)]
struct BuildIdentity;

impl BuildHasher for BuildIdentity {
    type Hasher = Identity;
    fn build_hasher(&self) -> Identity {
        Identity(0)
    }
}

fn build(algorithm: Algorithm, nodes: usize, params: &Params) -> AnyPlacement {
    let nodes = (0..nodes).map(|i| Node::new(format!("node-{i}"))).collect();
    AnyPlacement::build(algorithm, nodes, params).expect("valid nodes")
}

/// One group: the hash alone, the concrete rows, the `AnyPlacement` rows,
/// and `extra` (the crate's row for anchor).
fn group<'a, P: Placement>(
    c: &mut Criterion,
    name: &str,
    concrete: &'a Keyed<P>,
    any: &'a Keyed<AnyPlacement>,
    keys: &'a [String],
    extra: Vec<Row<'a>>,
) {
    let mut all = vec![hash_row("xxh3_alone", |k| StableHash::Xxh3.hash(k), keys)];
    all.extend(rows("concrete", concrete, keys));
    all.extend(rows("any", any, keys));
    all.extend(extra);
    measure(c, name, all);
}

fn dispatch(c: &mut Criterion) {
    let keys: Vec<String> = (0..KEYS).map(|i| format!("user:{i}")).collect();
    let keyed = |p: AnyPlacement| Keyed::new(p, StableHash::Xxh3);

    let any = keyed(build(Algorithm::Ring, 100, &Params::DEFAULT));
    let AnyPlacement::Ring(ring) = any.placement().clone() else {
        unreachable!("built as a ring")
    };
    group(
        c,
        "dispatch_ring_100",
        &Keyed::new(ring, StableHash::Xxh3),
        &any,
        &keys,
        vec![],
    );

    let params = Params {
        capacity: 1000,
        ..Params::DEFAULT
    };
    let any = keyed(build(Algorithm::Anchor, 1000, &params));
    let AnyPlacement::Anchor(anchor) = any.placement().clone() else {
        unreachable!("built as anchor")
    };
    let theirs: anchorhash::AnchorHash<u64, u32, BuildIdentity> =
        anchorhash::Builder::with_hasher(BuildIdentity)
            .with_resources(0..1000u32)
            .build(1000);
    let crate_row = {
        let keys = &keys;
        let theirs = &theirs;
        move || {
            for key in keys {
                black_box(theirs.get_resource(StableHash::Xxh3.hash(black_box(key.as_bytes()))));
            }
        }
    };
    group(
        c,
        "dispatch_anchor_1000",
        &Keyed::new(anchor, StableHash::Xxh3),
        &any,
        &keys,
        vec![("anchorhash_crate", Box::new(crate_row))],
    );

    let any = keyed(build(Algorithm::Jump, 1000, &Params::DEFAULT));
    let AnyPlacement::Jump(jump) = any.placement().clone() else {
        unreachable!("built as jump")
    };
    group(
        c,
        "dispatch_jump_1000",
        &Keyed::new(jump, StableHash::Xxh3),
        &any,
        &keys,
        vec![],
    );

    let any = keyed(build(Algorithm::JumpBack, 1000, &Params::DEFAULT));
    let AnyPlacement::JumpBack(jb) = any.placement().clone() else {
        unreachable!("built as jumpback")
    };
    group(
        c,
        "dispatch_jumpback_1000",
        &Keyed::new(jb, StableHash::Xxh3),
        &any,
        &keys,
        vec![],
    );

    let any = keyed(build(Algorithm::Maglev, 100, &Params::DEFAULT));
    let AnyPlacement::Maglev(m) = any.placement().clone() else {
        unreachable!("built as maglev")
    };
    group(
        c,
        "dispatch_maglev_100",
        &Keyed::new(m, StableHash::Xxh3),
        &any,
        &keys,
        vec![],
    );
}

criterion_group!(benches, dispatch);
criterion_main!(benches);
