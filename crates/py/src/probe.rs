//! Private timing probes for `crates/py/bench/bench.py`: the Rust key path
//! timed inside the native module, over the very keys and the very
//! placement a Python call is timed with, so the bench can state the
//! Python call's overhead above Rust in the same run.
//!
//! `Placement._probe_echo` is the other floor: a PyO3 method that does
//! nothing (one `str` in, a cached `str` out), so the bench can state what
//! a Python call of any PyO3 method costs, beside `locate`.
//!
//! Not public API: the names start with `_probe_`, the stubs
//! (`_ringwise.pyi`) list them under a "bench only" comment (stubtest needs
//! every name the module exports), and they may change with the bench.
//! Nothing else calls them.
//!
//! How: every key's bytes are copied into a Rust vector first (not timed),
//! then `rounds` passes are timed with `Instant` and the best pass is
//! returned, in nanoseconds per key. The single-key probe calls
//! `Keyed::locate` (hash, search, the name's `&str`: what `Placement.locate`
//! does minus Python) through `black_box`, so the lookups are neither
//! hoisted nor dropped. Cost: O(rounds × keys) lookups plus one copy of
//! the keys; the GIL is held (nothing else should run while timing).
//!
//! Quirk: the keys are read from a fresh Rust copy (allocated one after
//! another), at least as cache-friendly as the Python objects the real call
//! reads; the overhead the bench derives from it is therefore an upper
//! bound on what the binding adds, never an underestimate of Rust's share.

use std::hint::black_box;
use std::time::Instant;

use pyo3::prelude::*;
use pyo3::types::PyString;
use ringwise::Placement as _;

use crate::errors::empty;
use crate::inputs::refuse_lone_text;
use crate::keys::key_bytes;
use crate::placement::Placement;

/// Every key of `keys` copied, plus the placement's emptiness check.
fn copied(placement: &Placement, keys: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<u8>>> {
    refuse_lone_text(keys, "_probe", "keys", "key")?;
    let mut out = Vec::new();
    for key in keys.try_iter()? {
        out.push(key_bytes(&key?)?.into_owned());
    }
    if !out.is_empty() && placement.keyed().placement().is_empty() {
        return Err(empty());
    }
    Ok(out)
}

/// Best of `rounds` passes of `f` over `n` keys, in ns per key (0 for no
/// key or no round).
fn best_ns(rounds: u32, n: usize, mut f: impl FnMut()) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..rounds {
        let start = Instant::now();
        f();
        best = best.min(start.elapsed().as_nanos() as f64);
    }
    if n == 0 || !best.is_finite() {
        return 0.0;
    }
    best / n as f64
}

/// `_probe_locate_ns(placement, keys, rounds)`: the best of `rounds`
/// passes of Rust's `Keyed::locate` over `keys` (str or bytes), in ns per
/// key. Bench only. Cost: O(rounds × keys).
#[pyfunction]
pub fn _probe_locate_ns(
    placement: PyRef<'_, Placement>,
    keys: &Bound<'_, PyAny>,
    rounds: u32,
) -> PyResult<f64> {
    let keys = copied(&placement, keys)?;
    let keyed = placement.keyed();
    Ok(best_ns(rounds, keys.len(), || {
        for key in &keys {
            black_box(keyed.locate(black_box(key.as_slice())));
        }
    }))
}

/// `_probe_owners_ns(placement, keys, rounds)`: the best of `rounds`
/// passes of Rust's batch `Keyed::owners_into` over `keys`, in ns per key:
/// the floor under `locate_many`. Bench only. Cost: O(rounds × keys).
#[pyfunction]
pub fn _probe_owners_ns(
    placement: PyRef<'_, Placement>,
    keys: &Bound<'_, PyAny>,
    rounds: u32,
) -> PyResult<f64> {
    let keys = copied(&placement, keys)?;
    let keyed = placement.keyed();
    let mut ids = Vec::with_capacity(keys.len());
    Ok(best_ns(rounds, keys.len(), || {
        keyed.owners_into(black_box(&keys), &mut ids);
        black_box(&ids);
    }))
}

#[pymethods]
impl Placement {
    /// `placement._probe_echo(key)`: nothing, as a PyO3 method: takes one
    /// `str` and returns a cached one (the first node's name, or `key`
    /// itself without nodes). Bench only: the cost of a Python call of a
    /// PyO3 method, the floor under `locate`. Cost: O(1).
    fn _probe_echo(&self, py: Python<'_>, key: &Bound<'_, PyString>) -> Py<PyString> {
        match self.first_name() {
            Some(name) => name.clone_ref(py),
            None => key.clone().unbind(),
        }
    }
}
