//! `ringwise.Placement`: an immutable snapshot of any algorithm with its
//! key hash (a [`Keyed<AnyPlacement>`]), its lookups and its changes.
//!
//! How: the snapshot holds the library's keyed placement, the names in
//! listed order and one Python `str` per node made at build time, so a
//! lookup returns a shared name (one reference count) and makes no
//! string. Keys are read by [`crate::keys`] (a `str`'s UTF-8 in place);
//! the constructor and its node arguments are in [`crate::construct`].
//! Cost: a lookup is the library's (hash, then the algorithm's search)
//! plus the Python call; each method states its own.
//!
//! Quirk: `with_node`/`without_node` return new snapshots (this one never
//! changes), which is what lets the compat classes publish a change with
//! one attribute assignment.

use std::fmt::Write as _;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use ringwise::{AnyPlacement, ClusterSpec, Keyed, Node, NodeId, Placement as _};

use crate::errors::{empty, to_py};
use crate::inputs::{check_cluster_text, read_cluster_file, refuse_lone_text};
use crate::keys::{key_bytes, owners_of};

/// An immutable placement snapshot: an algorithm over nodes, with the hash
/// its keys go through. Thread-safe to share; `with_node` and
/// `without_node` return new snapshots.
#[derive(Debug)]
#[pyclass(frozen, module = "ringwise", name = "Placement")]
pub struct Placement {
    keyed: Keyed<AnyPlacement>,
    /// Names in listed order (jump's and memento's buckets, ketama's ties).
    listed: Vec<String>,
    /// Names by dense id, made once so lookups return shared strings.
    names: Vec<Py<PyString>>,
}

impl Placement {
    pub(crate) fn new(py: Python<'_>, keyed: Keyed<AnyPlacement>, listed: Vec<String>) -> Self {
        let names = keyed
            .placement()
            .nodes()
            .iter()
            .map(|n| PyString::new(py, &n.name).unbind())
            .collect();
        Placement {
            keyed,
            listed,
            names,
        }
    }

    /// The library's keyed placement (the bench probes time it directly).
    pub(crate) fn keyed(&self) -> &Keyed<AnyPlacement> {
        &self.keyed
    }

    /// The same key hash and hash tag over a changed placement.
    fn rekeyed(&self, py: Python<'_>, placement: AnyPlacement, listed: Vec<String>) -> Self {
        let keyed =
            Keyed::new(placement, *self.keyed.hasher()).with_hash_tag(self.keyed.hash_tag());
        Placement::new(py, keyed, listed)
    }

    /// The shared name object of the node with the lowest id, if any.
    pub(crate) fn first_name(&self) -> Option<&Py<PyString>> {
        self.names.first()
    }

    fn name(&self, py: Python<'_>, id: NodeId) -> Py<PyString> {
        self.names[id as usize].clone_ref(py)
    }
}

#[pymethods]
impl Placement {
    /// A placement from a cluster file's text (TOML), as `ringwise
    /// --cluster` reads it: at most 64 MiB, as a file (`ClusterFileError`
    /// above it, before parsing). Cost: O(text) to parse, then the
    /// algorithm's build.
    #[staticmethod]
    fn from_toml(py: Python<'_>, text: &str) -> PyResult<Self> {
        check_cluster_text(text)?;
        let spec = ClusterSpec::from_toml(text).map_err(to_py)?;
        let keyed = spec.build().map_err(to_py)?;
        let listed = spec.join_order().into_iter().map(|n| n.name).collect();
        Ok(Placement::new(py, keyed, listed))
    }

    /// A placement from a cluster file, read as `ringwise --cluster` reads
    /// one: at most 64 MiB (a bigger file, `/dev/zero`, is refused after
    /// reading one byte past the cap), UTF-8, with the GIL released while
    /// reading.
    #[staticmethod]
    fn from_file(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        let text = read_cluster_file(py, &path)?;
        Placement::from_toml(py, &text)
    }

    /// The algorithm's name.
    #[getter]
    fn algorithm(&self) -> &'static str {
        self.keyed.placement().algorithm().name()
    }

    /// The key hash's name.
    #[getter]
    fn hash(&self) -> &'static str {
        self.keyed.hasher().name()
    }

    /// Node names in listed order.
    #[getter]
    fn nodes(&self) -> Vec<String> {
        self.listed.clone()
    }

    /// Node names by the library's dense ids (name order): what
    /// `locate_many(..., indices=True)` indexes.
    fn nodes_by_index(&self, py: Python<'_>) -> Vec<Py<PyString>> {
        self.names.iter().map(|n| n.clone_ref(py)).collect()
    }

    fn __len__(&self) -> usize {
        self.listed.len()
    }

    fn __contains__(&self, name: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(match name.cast::<PyString>() {
            Ok(name) => self.keyed.placement().nodes().contains(&name.to_cow()?),
            Err(_) => false,
        })
    }

    fn __repr__(&self) -> String {
        let mut names = String::new();
        for (i, name) in self.listed.iter().enumerate() {
            if i == 8 {
                let _ = write!(names, ", ... {} more", self.listed.len() - 8);
                break;
            }
            let sep = if i == 0 { "" } else { ", " };
            let _ = write!(names, "{sep}{name:?}");
        }
        format!(
            "Placement([{names}], algorithm={:?}, hash={:?})",
            self.algorithm(),
            self.hash()
        )
    }

    /// The node that owns `key` (a str is UTF-8 encoded). Cost: one key
    /// hash and the algorithm's lookup (a binary search for rings), plus
    /// the Python call; the name returned is shared, not made.
    fn locate(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyString>> {
        let key = key_bytes(key)?;
        match self.keyed.owner(&key) {
            Some(id) => Ok(self.name(py, id)),
            None => Err(empty()),
        }
    }

    /// Up to `n` distinct nodes for `key`, in preference order. Cost: the
    /// algorithm's replica walk, O(n) names returned.
    fn replicas(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        n: usize,
    ) -> PyResult<Vec<Py<PyString>>> {
        let key = key_bytes(key)?;
        if self.keyed.placement().is_empty() {
            return Err(empty());
        }
        let mut ids = Vec::with_capacity(n.min(self.names.len()));
        self.keyed.replicas_into(&key, n, &mut ids);
        Ok(ids.into_iter().map(|id| self.name(py, id)).collect())
    }

    /// The owners of many keys, in order: the library's batch path, with
    /// the GIL released while hashing and resolving. `indices=True`: node
    /// indices into `nodes_by_index()` (a numpy uint32 array when numpy is
    /// importable, else `array.array("I")`).
    ///
    /// `keys` is an iterable of keys, never one `str`/`bytes` (whose items
    /// are characters or byte values: `TypeError`). Cost: O(keys), read
    /// 4,096 at a time with each `str`'s UTF-8 read in place (no copy of
    /// the keys); memory is one chunk plus the result (4 bytes a key until
    /// the list is built), but an iterator that never ends never returns:
    /// give a stream in batches (`itertools.islice`). A pending signal
    /// (Ctrl-C) is checked every 4,096 keys.
    #[pyo3(signature = (keys, *, indices=false))]
    fn locate_many<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        indices: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        refuse_lone_text(keys, "locate_many", "keys", "key")?;
        let mut ids: Vec<NodeId> = Vec::new();
        owners_of(&self.keyed, keys, &mut ids)?;
        if indices {
            // One copy of the ids, straight into the bytes object.
            let raw = PyBytes::new_with(py, ids.len() * 4, |buf| {
                for (cell, id) in buf.chunks_exact_mut(4).zip(&ids) {
                    cell.copy_from_slice(&id.to_ne_bytes());
                }
                Ok(())
            })?;
            let array = py.import("array")?.getattr("array")?.call1(("I",))?;
            array.call_method1("frombytes", (raw,))?;
            return match py.import("numpy") {
                Ok(numpy) => numpy.getattr("asarray")?.call1((array, "uint32")),
                Err(_) => Ok(array),
            };
        }
        // The shared name objects, one reference each: no string is made.
        let names = ids.iter().map(|&id| &self.names[id as usize]);
        Ok(PyList::new(py, names)?.into_any())
    }

    /// The 64-bit hash the placement looks `key` up by. Cost: one hash.
    fn hash_key(&self, key: &Bound<'_, PyAny>) -> PyResult<u64> {
        Ok(self.keyed.hash(&key_bytes(key)?))
    }

    /// A new snapshot with one more node; this one is unchanged. Cost: the
    /// algorithm's `with_node` (a ring hashes only the new node's points
    /// and merges them into a copy: O(k log k + P)), plus O(nodes) names.
    #[pyo3(signature = (name, weight=1.0, zone=None))]
    fn with_node(
        &self,
        py: Python<'_>,
        name: String,
        weight: f64,
        zone: Option<String>,
    ) -> PyResult<Self> {
        let mut node = Node::new(name.clone()).weight(weight);
        if let Some(zone) = zone {
            node = node.zone(zone);
        }
        let placement = self.keyed.placement().with_node(node).map_err(to_py)?;
        let mut listed = self.listed.clone();
        listed.push(name);
        Ok(self.rekeyed(py, placement, listed))
    }

    /// A new snapshot without the node `name`; this one is unchanged.
    /// Cost: the algorithm's `without_node` (a ring copies the other
    /// nodes' points, O(P)), plus O(nodes) names.
    fn without_node(&self, py: Python<'_>, name: &str) -> PyResult<Self> {
        let placement = self.keyed.placement().without_node(name).map_err(to_py)?;
        let listed = self.listed.iter().filter(|n| *n != name).cloned().collect();
        Ok(self.rekeyed(py, placement, listed))
    }

    /// Each node's share of the keys, as `ringwise inspect` shows it:
    /// exact arcs for ring-shaped placements and HAProxy trees (`"exact":
    /// True`), shares of
    /// 1,000,000 sample keys otherwise.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        if self.keyed.placement().is_empty() {
            return Err(empty());
        }
        let (stats, exact) = match self.keyed.placement().exact_stats() {
            Some(stats) => (stats, true),
            None => (py.detach(|| self.keyed.sampled_stats(SAMPLE)), false),
        };
        let nodes = PyList::empty(py);
        for n in &stats.nodes {
            let node = PyDict::new(py);
            node.set_item("name", &n.name)?;
            node.set_item("weight", n.weight)?;
            node.set_item("zone", &n.zone)?;
            node.set_item("points", n.points)?;
            node.set_item("share", n.share)?;
            node.set_item("expected", n.expected)?;
            node.set_item("ratio", n.ratio())?;
            nodes.append(node)?;
        }
        let doc = PyDict::new(py);
        doc.set_item("algorithm", self.algorithm())?;
        doc.set_item("hash", self.hash())?;
        let points: u64 = stats.nodes.iter().map(|n| n.points).sum();
        doc.set_item("points", points)?;
        doc.set_item("exact", exact)?;
        doc.set_item("nodes", nodes)?;
        doc.set_item("max", stats.max)?;
        doc.set_item("min", stats.min)?;
        doc.set_item("spread", stats.spread)?;
        Ok(doc)
    }
}

/// Sample keys of `stats()` for placements without arcs, as `ringwise
/// inspect`.
const SAMPLE: u64 = 1_000_000;

/// Cassandra's Murmur3Partitioner token of `key`.
#[pyfunction]
pub fn cassandra_token(key: &Bound<'_, PyAny>) -> PyResult<i64> {
    Ok(ringwise::cassandra_token(&key_bytes(key)?))
}
