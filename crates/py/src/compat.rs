//! What `ringwise.compat.HashRing` (uhashring's `HashRing(hash_fn="ketama")`)
//! asks of the library beyond a `Placement`: uhashring's key hash
//! (`hashi`) and its continuum (`_keys`, `_ring`, `_distribution`), both
//! from the library's `ketama` algorithm in its `uhashring` flavour, so
//! the Python layer no longer computes ketama points itself.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyInt, PyList, PySlice, PyString};
use ringwise::wire::{cell_value, md5_le32x4};
use ringwise::{Flavor, Ketama, Members, Node, NodeTable, PointScheme};

use crate::errors::to_py;
use crate::inputs::refuse_lone_text;

/// The MD5 digest of `str(key)` (UTF-8), as uhashring hashes a key.
fn key_digest(key: &Bound<'_, PyAny>) -> PyResult<[u32; 4]> {
    let text = key.str()?;
    Ok(md5_le32x4(text.to_cow()?.as_bytes()))
}

/// A `replica` argument: one of the digest's four words, or anything else
/// (left to Python's slicing, as the pure-Python version did).
pub enum Replica<'py> {
    /// An `int` from 0 to 3.
    Word(usize),
    /// Any other value.
    Other(Bound<'py, PyAny>),
}

impl<'a, 'py> FromPyObject<'a, 'py> for Replica<'py> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if obj.is_exact_instance_of::<PyInt>() {
            if let Ok(r @ 0..=3) = obj.extract::<usize>() {
                return Ok(Replica::Word(r));
            }
        }
        Ok(Replica::Other(obj.to_owned()))
    }
}

/// uhashring's ketama `hashi(key, replica=0)`: bytes `4*replica` to
/// `4*replica + 4` of `md5(str(key))` (UTF-8) as a little-endian integer.
///
/// Replicas 0 to 3 read one word of the digest; any other `replica` goes
/// through Python's own `digest[replica * 4 : replica * 4 + 4]` and
/// `int.from_bytes(..., "little")`, so odd values (4 and up give 0, -2
/// reads bytes 8..12, a float raises `TypeError`) answer as the Python
/// version always did.
#[pyfunction]
#[pyo3(signature = (key, replica=Replica::Word(0)), text_signature = "(key, replica=0)")]
pub fn uhashring_hashi<'py>(
    key: &Bound<'py, PyAny>,
    replica: Replica<'py>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = key.py();
    let words = key_digest(key)?;
    let replica = match replica {
        Replica::Word(r) => return Ok(words[r].into_pyobject(py)?.into_any()),
        Replica::Other(replica) => replica,
    };
    let digest: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let start = replica.mul(4)?;
    let stop = replica.mul(4)?.add(4)?;
    let slice = py.get_type::<PySlice>().call1((start, stop))?;
    let part = PyBytes::new(py, &digest).get_item(slice)?;
    py.get_type::<PyInt>()
        .call_method1("from_bytes", (part, "little"))
}

/// uhashring's ketama continuum of `nodes`, `(name, weight)` pairs in the
/// order added: `(keys, ring, distribution)`, where `keys` is every point
/// ascending (a point two digests share is listed twice), `ring` maps each
/// point to its node (the later added of two that share it, in the order
/// the points were made) and `distribution` counts each node's points (in
/// the order added, nodes without points left out).
#[pyfunction]
pub fn uhashring_continuum<'py>(
    py: Python<'py>,
    nodes: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    refuse_lone_text(nodes, "uhashring_continuum", "(name, weight) pairs", "pair")?;
    let nodes: Vec<(Bound<'py, PyString>, u64)> = nodes.extract()?;
    let mut listed_nodes = Vec::with_capacity(nodes.len());
    for (name, weight) in &nodes {
        listed_nodes.push(Node::new(name.to_cow()?).weight(*weight as f64));
    }
    let table = NodeTable::new(listed_nodes.iter().cloned()).map_err(to_py)?;
    // `listed[id]`: the position of node `id` in the order added.
    let mut listed = vec![0u32; table.len()];
    let mut ids = Vec::with_capacity(listed_nodes.len());
    for (position, node) in listed_nodes.iter().enumerate() {
        let id = table.id(&node.name).unwrap_or_default();
        listed[id as usize] = position as u32;
        ids.push(id);
    }
    let scheme = Ketama::new(Flavor::Uhashring);
    let counts = scheme
        .counts(&Members {
            nodes: &table,
            listed: &listed,
        })
        .map_err(to_py)?;

    // Every point in the order made, with the position of its node.
    let mut made: Vec<(u32, usize)> = Vec::with_capacity(counts.iter().sum::<u64>() as usize);
    let distribution = PyDict::new(py);
    let mut points = Vec::new();
    for (position, (node, &id)) in listed_nodes.iter().zip(&ids).enumerate() {
        let count = counts[id as usize];
        if count == 0 {
            continue;
        }
        points.clear();
        scheme.points(node, count, &mut points).map_err(to_py)?;
        made.extend(points.iter().map(|&p| (cell_value(p), position)));
        distribution.set_item(&nodes[position].0, points.len())?;
    }
    // One int object per point, made in the order the points are and
    // shared by `ring` and `keys`, as the pure-Python continuum had them:
    // `ring[k]` for `k` in `keys` matches by identity, and copying `ring`
    // reads memory in order.
    let ints = made
        .iter()
        .map(|&(point, _)| point.into_pyobject(py))
        .collect::<Result<Vec<_>, _>>()?;
    let ring = PyDict::new(py);
    for (int, &(_, position)) in ints.iter().zip(&made) {
        ring.set_item(int, &nodes[position].0)?;
    }
    let mut ascending: Vec<(u32, u32)> = (0..made.len() as u32)
        .map(|i| (made[i as usize].0, i))
        .collect();
    ascending.sort_unstable();
    let keys = PyList::new(py, ascending.iter().map(|&(_, i)| &ints[i as usize]))?;
    Ok((keys, ring, distribution))
}
