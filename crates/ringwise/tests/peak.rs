//! The build peaks the caps are derived from, measured by
//! a peak-tracking global allocator, at the caps themselves.
//!
//! - A ring of [`MAX_POINTS`] points (the default budget, 2^24) peaks
//!   within [`PEAK_BYTES_PER_POINT`] per point plus the node table.
//! - A ring of 10^6 points over 10,000 nodes, the same bound.
//! - A maglev table of [`Maglev::MAX_TABLE_SIZE`] slots peaks within
//!   [`Maglev::PEAK_BYTES_PER_SLOT`] per slot plus the node table.
//! - The per-node algorithms at 100,000 nodes peak within
//!   [`PEAK_PER_NODE`] bytes per node (names of at most 11 bytes).
//!
//! Builds whose documented peak reaches 64 MiB first reserve that peak
//! (untouched) and release it; the allocator counts the reservation, so at
//! the caps the printed peak is the larger of the reservation and the
//! build's own peak. The bound still fails a build whose own peak grows
//! past it. The builds' own peaks at the caps, measured before the
//! reservation existed, are in RELIABILITY.md (ring 40.0 B/point, maglev
//! 6.0 B/slot).
//!
//! Its own binary without the libtest harness: the allocator counts every
//! thread, so nothing else may allocate while a build is measured. Prints
//! one line per build (the figures RELIABILITY.md records).

use peak_alloc::PeakAlloc;
use ringwise::{
    Algorithm, AnyPlacement, MAX_POINTS, Maglev, Node, NodeTable, PEAK_BYTES_PER_POINT, Params,
};

#[global_allocator]
static PEAK: PeakAlloc = PeakAlloc;

/// Bytes per node the per-node algorithms' builds may peak at (jump and
/// memento measure 170 with 10-byte names: the caller's list, the sorted
/// table and the bucket order side by side, each `Node` 80 bytes since it
/// carries a datacenter (122 before, with 56-byte nodes).
const PEAK_PER_NODE: u64 = 200;

/// What `make` returns, the most bytes it held at once and what it keeps.
fn measured<T>(make: impl FnOnce() -> T) -> (T, u64) {
    let base = PEAK.current_usage();
    PEAK.reset_peak_usage();
    let value = make();
    (value, (PEAK.peak_usage() - base) as u64)
}

fn named(count: usize) -> Vec<Node> {
    (0..count).map(|i| Node::new(format!("node-{i}"))).collect()
}

/// The bytes of the node table alone, measured the same way (the input
/// list and the table side by side, as a build has them).
fn table_peak(count: usize) -> u64 {
    let nodes = named(count);
    measured(|| NodeTable::new(nodes.clone()).expect("valid")).1
}

fn check(failures: &mut Vec<String>, what: &str, peak: u64, units: u64, per_unit: u64, table: u64) {
    let bound = units * per_unit + table;
    println!(
        "{what:<48} peak {peak:>11} B = {:>6.2} B per unit of {units} (bound {per_unit} + table {table} B)",
        peak.saturating_sub(table) as f64 / units as f64
    );
    if peak > bound {
        failures.push(format!(
            "{what}: peak {peak} B above the documented {bound} B"
        ));
    }
}

fn main() {
    let mut failures = Vec::new();
    // 32 nodes of 2^19 points each: exactly the default budget.
    let nodes = named(32);
    let params = Params {
        vnodes: 1 << 19,
        ..Params::DEFAULT
    };
    let table = table_peak(32);
    let (ring, peak) =
        measured(|| AnyPlacement::build(Algorithm::Ring, nodes, &params).expect("at the cap"));
    let points = ring.as_ring().expect("a ring").point_count() as u64;
    assert_eq!(points, MAX_POINTS, "the build is at the cap");
    check(
        &mut failures,
        "ring, 2^24 points (the default cap)",
        peak,
        points,
        PEAK_BYTES_PER_POINT,
        table,
    );
    drop(ring);

    let params = Params {
        vnodes: 100,
        ..Params::DEFAULT
    };
    let table = table_peak(10_000);
    let (ring, peak) =
        measured(|| AnyPlacement::build(Algorithm::Ring, named(10_000), &params).expect("valid"));
    let points = ring.as_ring().expect("a ring").point_count() as u64;
    check(
        &mut failures,
        "ring, 10,000 nodes x 100 vnodes",
        peak,
        points,
        PEAK_BYTES_PER_POINT,
        table,
    );
    drop(ring);

    let params = Params {
        table_size: 16_777_213, // the largest prime below 2^24
        ..Params::DEFAULT
    };
    for count in [2, 10_000] {
        let table = table_peak(count);
        let (maglev, peak) = measured(|| {
            AnyPlacement::build(Algorithm::Maglev, named(count), &params).expect("valid")
        });
        drop(maglev);
        let what = format!("maglev, {} slots, {count} nodes", params.table_size);
        check(
            &mut failures,
            &what,
            peak,
            params.table_size,
            Maglev::PEAK_BYTES_PER_SLOT,
            table,
        );
    }

    for algorithm in [
        Algorithm::Rendezvous,
        Algorithm::Jump,
        Algorithm::Memento,
        Algorithm::JumpBack,
        Algorithm::Binomial,
        Algorithm::FlipHash,
        Algorithm::MultiProbe,
        Algorithm::EnvoyRendezvous,
    ] {
        let count = 100_000;
        let nodes = named(count);
        let (placement, peak) =
            measured(|| AnyPlacement::build(algorithm, nodes, &Params::DEFAULT).expect("valid"));
        drop(placement);
        check(
            &mut failures,
            &format!("{algorithm}, {count} nodes"),
            peak,
            count as u64,
            PEAK_PER_NODE,
            0,
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
