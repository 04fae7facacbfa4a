//! `ringwise._ringwise`: the native half of the Python package `ringwise`.
//!
//! No library algorithm lives here: this crate converts Python values to the
//! library's types and back (`placement.rs`, `simulate.rs`, and `compat.rs`
//! for uhashring's ketama views), with one exception, `uhashring.rs`: the
//! uhashring rings the library's `ketama` does not make (its default ring of
//! 128-bit MD5 points, and ketama with other vnodes or replicas), whose
//! Python-dict tie rule and 128-bit circle are uhashring's alone. It reads
//! what they are given from outside (`inputs.rs`: capped cluster files,
//! iterables of keys or nodes) and maps the
//! library's errors to Python exceptions in one place (`errors.rs`). The
//! Python layer (`python/ringwise/__init__.py`) re-exports it and adds the
//! per-algorithm convenience classes; `python/ringwise/_ringwise.pyi` types it.

use pyo3::prelude::*;
use pyo3::types::PyTuple;

mod compat;
mod construct;
mod errors;
mod inputs;
mod keys;
mod placement;
mod probe;
mod simulate;
mod uhashring;

/// The module `ringwise._ringwise`.
#[pymodule]
fn _ringwise(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<placement::Placement>()?;
    m.add_function(wrap_pyfunction!(simulate::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(placement::cassandra_token, m)?)?;
    m.add_function(wrap_pyfunction!(probe::_probe_locate_ns, m)?)?;
    m.add_function(wrap_pyfunction!(probe::_probe_owners_ns, m)?)?;
    m.add_function(wrap_pyfunction!(compat::uhashring_hashi, m)?)?;
    m.add_function(wrap_pyfunction!(compat::uhashring_continuum, m)?)?;
    m.add_class::<uhashring::UhashringRing>()?;
    m.add(
        "ALGORITHMS",
        PyTuple::new(m.py(), ringwise::Algorithm::NAMES)?,
    )?;
    m.add("HASHES", PyTuple::new(m.py(), ringwise::StableHash::NAMES)?)?;
    m.add("FLAVORS", PyTuple::new(m.py(), ringwise::Flavor::NAMES)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
