//! The side-by-side measurement the compatibility benches share: rows of
//! one pass over a fixed key set each, alternated round by round so every
//! row sees the same machine load, then a short criterion run per row.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use ringwise::{AnyPlacement, Keyed, NodeId};

/// Keys per iteration; the set is cycled whole by every row.
pub const KEYS: usize = 4096;

pub type Lookup = Keyed<AnyPlacement>;

/// One row of a group: its name and one pass over all the keys.
pub type Row<'a> = (&'static str, Box<dyn FnMut() + 'a>);

/// Rounds of the side-by-side pass.
const ROUNDS: usize = 101;

/// Measures `rows` twice. First side by side: every round runs each row
/// twice over all the keys, rows alternated; the first pass ("cold") finds
/// the caches as the other rows left them, the second ("warm") as its own
/// first pass left them, which is the state criterion measures. The minimum
/// and median over the rounds are printed (on a shared, loaded host the
/// minimum is the round nothing preempted). Then with criterion, one row
/// after another, in a short run, so that the whole bench takes a few
/// minutes.
pub fn measure(c: &mut Criterion, name: &str, mut rows: Vec<Row<'_>>) {
    let per_key = |start: Instant| start.elapsed().as_secs_f64() * 1e9 / KEYS as f64;
    let mut cold = vec![Vec::with_capacity(ROUNDS); rows.len()];
    let mut warm = vec![Vec::with_capacity(ROUNDS); rows.len()];
    for _ in 0..ROUNDS {
        for (((_, pass), cold), warm) in rows.iter_mut().zip(&mut cold).zip(&mut warm) {
            let start = Instant::now();
            pass();
            cold.push(per_key(start));
            let start = Instant::now();
            pass();
            warm.push(per_key(start));
        }
    }
    for (((row, _), cold), warm) in rows.iter().zip(&mut cold).zip(&mut warm) {
        cold.sort_by(f64::total_cmp);
        warm.sort_by(f64::total_cmp);
        let median = ROUNDS / 2;
        println!(
            "side by side {name}/{row}: warm min {:.1} ns/key, median {:.1}; cold min {:.1}, median {:.1}",
            warm[0], warm[median], cold[0], cold[median]
        );
    }
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements(KEYS as u64))
        .sample_size(20)
        .warm_up_time(Duration::from_millis(700))
        .measurement_time(Duration::from_millis(2500));
    for (row, pass) in &mut rows {
        g.bench_function(*row, |b| b.iter(&mut *pass));
    }
    g.finish();
}

/// A row hashing every key with `hash` alone (a function item, not a
/// pointer, so that it is inlined as in the lookup).
pub fn hash_row<'a, T>(
    name: &'static str,
    hash: impl Fn(&[u8]) -> T + 'a,
    keys: &'a [String],
) -> Row<'a> {
    let pass = move || {
        for key in keys {
            black_box(hash(black_box(key.as_bytes())));
        }
    };
    (name, Box::new(pass))
}

/// The ringwise rows: `owner` one key at a time, and `owners_into` on the
/// whole set.
pub fn ringwise_rows<'a>(keyed: &'a Lookup, keys: &'a [String]) -> [Row<'a>; 2] {
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
    [
        ("ringwise_owner", Box::new(one)),
        ("ringwise_owners_into", Box::new(batch)),
    ]
}

/// One placement's group, as the balancer and client benches measure it:
/// its key hash alone, `owner` and `owners_into` through `keyed`, and the
/// lookup of pre-computed hashes (where the time above the hash goes).
#[allow(dead_code)] // the compat bench measures its own rows
pub fn placement_group(c: &mut Criterion, name: &str, keyed: &Lookup, keys: &[String]) {
    use ringwise::{KeyHasher, Placement};
    let hash = *keyed.hasher();
    let hashes: Vec<u64> = keys.iter().map(|key| keyed.hash(key.as_bytes())).collect();
    let mut rows = vec![hash_row("key_hash_alone", move |k| hash.hash(k), keys)];
    rows.extend(ringwise_rows(keyed, keys));
    let prehashed = || {
        for &h in &hashes {
            black_box(keyed.placement().owner(black_box(h)));
        }
    };
    rows.push(("ringwise_owner_prehashed", Box::new(prehashed)));
    measure(c, name, rows);
}
