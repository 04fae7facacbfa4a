//! The uhashring 2.5 rings that the library's `ketama` algorithm does not
//! make, for `ringwise.compat.HashRing`:
//!
//! - its **default** ring (`HashRing(nodes)`, uhashring's `MetaRing`): node
//!   `N` with `vnodes·weight` points `int(md5(f"{N}-{i}").hexdigest(), 16)`,
//!   128-bit integers; a key goes to the first point strictly above
//!   `int(md5(str(key)).hexdigest(), 16)`, wrapping;
//! - its **ketama** ring with other `vnodes` or `replicas` than 40 and 4
//!   (`40·n·w // W` digests of 4 points is the library's `uhashring`
//!   flavour; here `vnodes·n·w // W` digests of `replicas` points).
//!
//! Why not a library ring: the library's rings are one 64-bit circle, and
//! the default ring compares whole 128-bit values (the top 64 bits of a key
//! and a point can be equal while the low ones decide). Equal points follow
//! uhashring's Python dict, which no library tie rule is: the point written
//! last owns it, and removing that node drops the point (the earlier writer
//! does not get it back). Written from the behaviour of uhashring's
//! `ring_meta.py` / `ring_ketama.py`, checked against the real package by
//! `crates/py/tests/test_compat_uhashring.py`.
//!
//! Cost: 20 bytes per point (`u128` + `u32` label) plus, for ketama, 4 for
//! how many digests made the point. A lookup is one MD5 and a binary search
//! (O(log P)). A snapshot is immutable; [`UhashringRing::with_node`] makes a
//! new one with one node's points replaced: O(k log k) for its `k` points
//! (their MD5s and sort) plus O(P) to merge them into a copy of the sorted
//! points (a copy of 20-byte entries, no hashing of anyone else), which is
//! what uhashring's own add does in O(k) MD5s plus a sort of all P keys.

use std::collections::HashMap;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use ringwise::MAX_POINTS;
use ringwise::wire::md5_le32x4;

use crate::errors::raise;

/// How a ring hashes keys and points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `int(md5(text).hexdigest(), 16)`: the whole digest, big-endian.
    Meta,
    /// One little-endian word of the digest (word 0 for keys).
    Ketama,
}

/// The 16 MD5 bytes of `text` as uhashring's `int(hexdigest, 16)`.
fn md5_int(text: &[u8]) -> u128 {
    let words = md5_le32x4(text);
    let mut digest = [0u8; 16];
    for (chunk, word) in digest.chunks_exact_mut(4).zip(words) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    u128::from_be_bytes(digest)
}

/// `f"{name}-{i}"`, the text of a node's `i`-th point (or digest).
fn point_text<'a>(buf: &'a mut String, name: &str, i: u64) -> &'a [u8] {
    use std::fmt::Write as _;
    buf.clear();
    // Writing to a String cannot fail.
    let _ = write!(buf, "{name}-{i}");
    buf.as_bytes()
}

/// The items of `all` whose `keep` is true.
fn kept<T: Copy>(all: &[T], keep: &[bool]) -> Vec<T> {
    all.iter()
        .zip(keep)
        .filter(|(_, k)| **k)
        .map(|(x, _)| *x)
        .collect()
}

fn too_many(points: u128) -> PyErr {
    raise(
        "TooManyPointsError",
        format!(
            "the ring would hold {points} points, more than ringwise's budget of {MAX_POINTS}: \
             lower vnodes or the weights"
        ),
    )
}

/// One immutable state of a uhashring ring: its points, ascending, each
/// once, with the node that wrote it last.
#[derive(Debug)]
#[pyclass(frozen, module = "ringwise._ringwise", name = "UhashringRing")]
pub struct UhashringRing {
    kind: Kind,
    points: Vec<u128>,
    /// `owners[i]`: the label of the node owning `points[i]`.
    owners: Vec<u32>,
    /// Ketama only: how many digests made `points[i]` (uhashring's `_keys`
    /// lists a point once per digest); empty for the default ring, whose
    /// `_keys` is `sorted(_ring)`.
    times: Vec<u32>,
    /// Names by label. Labels are never reused for another name, so a
    /// snapshot's owners stay valid in the next; a removed node keeps its
    /// label (and gets it back if added again).
    names: Vec<Py<PyString>>,
    labels: HashMap<String, u32>,
    /// Points made per node, in uhashring's `_distribution` order (a node
    /// made again moves to the end).
    made: Vec<(u32, u64)>,
}

impl UhashringRing {
    fn empty(kind: Kind) -> Self {
        UhashringRing {
            kind,
            points: Vec::new(),
            owners: Vec::new(),
            times: Vec::new(),
            names: Vec::new(),
            labels: HashMap::new(),
            made: Vec::new(),
        }
    }

    /// The label of `name`, made if new.
    fn label(&mut self, py: Python<'_>, name: &str) -> u32 {
        if let Some(&label) = self.labels.get(name) {
            return label;
        }
        let label = self.names.len() as u32;
        self.names.push(PyString::new(py, name).unbind());
        self.labels.insert(name.to_owned(), label);
        label
    }

    fn copy(&self, py: Python<'_>) -> Self {
        UhashringRing {
            kind: self.kind,
            points: self.points.clone(),
            owners: self.owners.clone(),
            times: self.times.clone(),
            names: self.names.iter().map(|n| n.clone_ref(py)).collect(),
            labels: self.labels.clone(),
            made: self.made.clone(),
        }
    }

    /// Points and owners from `writes` (point, label) in the order
    /// uhashring writes them: sorted, the last write of a point winning.
    /// O(P log P).
    fn assemble(&mut self, writes: Vec<(u128, u32)>) {
        let mut order: Vec<(u128, u32, u32)> = writes
            .into_iter()
            .enumerate()
            .map(|(seq, (point, label))| (point, seq as u32, label))
            .collect();
        order.sort_unstable();
        self.points.clear();
        self.owners.clear();
        self.times.clear();
        let counted = self.kind == Kind::Ketama;
        for (point, _, label) in order {
            if self.points.last() == Some(&point) {
                // Sorted by write order within a point: the later write
                // replaces the owner, as `_ring[point] = name` does.
                if let Some(owner) = self.owners.last_mut() {
                    *owner = label;
                }
                if let Some(times) = self.times.last_mut() {
                    *times += 1;
                }
                continue;
            }
            self.points.push(point);
            self.owners.push(label);
            if counted {
                self.times.push(1);
            }
        }
    }

    fn key_hash(&self, key: &Bound<'_, PyAny>) -> PyResult<u128> {
        // uhashring hashes `str(key)`, UTF-8 (a lone surrogate raises
        // UnicodeEncodeError there and here).
        let text = key.str()?;
        let text = text.to_cow()?;
        Ok(match self.kind {
            Kind::Meta => md5_int(text.as_bytes()),
            Kind::Ketama => md5_le32x4(text.as_bytes())[0].into(),
        })
    }

    /// The index of the first point strictly above `hash`, wrapping (`bisect`
    /// then 0 at the end); `None` on an empty ring.
    fn index(&self, hash: u128) -> Option<usize> {
        if self.points.is_empty() {
            return None;
        }
        let i = self.points.partition_point(|&p| p <= hash);
        Some(if i == self.points.len() { 0 } else { i })
    }
}

#[pymethods]
impl UhashringRing {
    /// An empty default (`"meta"`) ring.
    #[new]
    fn new() -> Self {
        UhashringRing::empty(Kind::Meta)
    }

    /// The default ring of `nodes`, `(name, points)` in the order added:
    /// `points` MD5s of `f"{name}-{i}"` each.
    #[staticmethod]
    fn meta(py: Python<'_>, nodes: Vec<(String, u64)>) -> PyResult<Self> {
        let total: u128 = nodes.iter().map(|&(_, n)| u128::from(n)).sum();
        if total > u128::from(MAX_POINTS) {
            return Err(too_many(total));
        }
        let mut ring = UhashringRing::empty(Kind::Meta);
        let mut writes = Vec::with_capacity(total as usize);
        let mut buf = String::new();
        for (name, count) in &nodes {
            let label = ring.label(py, name);
            for i in 0..*count {
                writes.push((md5_int(point_text(&mut buf, name, i)), label));
            }
            ring.made.retain(|&(l, _)| l != label);
            if *count > 0 {
                ring.made.push((label, *count));
            }
        }
        ring.assemble(writes);
        Ok(ring)
    }

    /// uhashring's ketama ring of `nodes`, `(name, vnodes, weight)` in the
    /// order added, `replicas` points per digest (1 to 4): a node gets
    /// `vnodes·n·weight // W` digests of `f"{name}-{i}"` (`n` nodes of total
    /// weight `W`) and their first `replicas` little-endian words.
    #[staticmethod]
    fn ketama(py: Python<'_>, nodes: Vec<(String, u64, u64)>, replicas: usize) -> PyResult<Self> {
        if !(1..=4).contains(&replicas) {
            return Err(raise(
                "Error",
                format!(
                    "replicas must be from 1 to 4 (the words of one MD5 digest), got {replicas}"
                ),
            ));
        }
        let total_weight: u128 = nodes.iter().map(|&(_, _, w)| u128::from(w)).sum();
        let servers = nodes.len() as u128;
        let digests = |vnodes: u64, weight: u64| -> u128 {
            if total_weight == 0 {
                return 0;
            }
            u128::from(vnodes) * servers * u128::from(weight) / total_weight
        };
        let total: u128 = nodes
            .iter()
            .map(|&(_, v, w)| digests(v, w) * replicas as u128)
            .sum();
        if total > u128::from(MAX_POINTS) {
            return Err(too_many(total));
        }
        let mut ring = UhashringRing::empty(Kind::Ketama);
        let mut writes = Vec::with_capacity(total as usize);
        let mut buf = String::new();
        for (name, vnodes, weight) in &nodes {
            let label = ring.label(py, name);
            let count = digests(*vnodes, *weight) as u64;
            for i in 0..count {
                let words = md5_le32x4(point_text(&mut buf, name, i));
                writes.extend(words[..replicas].iter().map(|&w| (u128::from(w), label)));
            }
            if count > 0 {
                ring.made.push((label, count * replicas as u64));
            }
        }
        ring.assemble(writes);
        Ok(ring)
    }

    /// A new default ring with `name`'s points replaced by `count` fresh
    /// ones (uhashring's `_create_ring([(name, conf)])`): the points it owns
    /// now are dropped, then its new points are written over any equal
    /// point. This snapshot is unchanged. O(k log k + P).
    fn with_node(&self, py: Python<'_>, name: &str, count: u64) -> PyResult<Self> {
        if self.kind != Kind::Meta {
            return Err(raise(
                "Error",
                "with_node changes a default (meta) ring only; a ketama ring is rebuilt".into(),
            ));
        }
        let old = self.labels.get(name).copied();
        let kept = self.owners.iter().filter(|&&o| Some(o) != old).count() as u128;
        if kept + u128::from(count) > u128::from(MAX_POINTS) {
            return Err(too_many(kept + u128::from(count)));
        }
        let mut next = self.copy(py);
        let label = next.label(py, name);
        let mut buf = String::new();
        let mut fresh: Vec<u128> = (0..count)
            .map(|i| md5_int(point_text(&mut buf, name, i)))
            .collect();
        fresh.sort_unstable();
        fresh.dedup();
        let mut points = Vec::with_capacity(kept as usize + fresh.len());
        let mut owners = Vec::with_capacity(points.capacity());
        let mut new = fresh.iter().peekable();
        for (&point, &owner) in self.points.iter().zip(&self.owners) {
            if owner == label {
                continue;
            }
            while let Some(&&p) = new.peek() {
                if p > point {
                    break;
                }
                points.push(p);
                owners.push(label);
                new.next();
            }
            if points.last() == Some(&point) {
                continue; // written over by the new node
            }
            points.push(point);
            owners.push(owner);
        }
        for &p in new {
            points.push(p);
            owners.push(label);
        }
        next.points = points;
        next.owners = owners;
        next.made.retain(|&(l, _)| l != label);
        if count > 0 {
            next.made.push((label, count));
        }
        Ok(next)
    }

    /// A new ring without the points `name` owns (uhashring's
    /// `_remove_node`); this snapshot is unchanged. O(P).
    fn without_node(&self, py: Python<'_>, name: &str) -> Self {
        let mut next = self.copy(py);
        let Some(&label) = self.labels.get(name) else {
            return next;
        };
        let keep: Vec<bool> = self.owners.iter().map(|&o| o != label).collect();
        next.points = kept(&self.points, &keep);
        next.owners = kept(&self.owners, &keep);
        if !self.times.is_empty() {
            next.times = kept(&self.times, &keep);
        }
        next.made.retain(|&(l, _)| l != label);
        next
    }

    /// The name of the node owning `key`; `None` on an empty ring.
    fn locate(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Option<Py<PyString>>> {
        let hash = self.key_hash(key)?;
        Ok(self
            .index(hash)
            .map(|i| self.names[self.owners[i] as usize].clone_ref(py)))
    }

    /// The key hash uhashring's `hashi(key)` returns (a 128-bit integer on
    /// the default ring, 32-bit on ketama).
    fn hash_key(&self, key: &Bound<'_, PyAny>) -> PyResult<u128> {
        self.key_hash(key)
    }

    /// `(position, point, name)` of the point owning `key`: `position` is
    /// its index in uhashring's `_keys` (which repeats a ketama point once
    /// per digest that made it); `None` on an empty ring.
    fn server(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
    ) -> PyResult<Option<(usize, u128, Py<PyString>)>> {
        let hash = self.key_hash(key)?;
        Ok(self.index(hash).map(|i| {
            let position = if self.times.is_empty() {
                i
            } else {
                self.times[..i].iter().map(|&t| t as usize).sum()
            };
            let name = self.names[self.owners[i] as usize].clone_ref(py);
            (position, self.points[i], name)
        }))
    }

    /// uhashring's `(_keys, _ring)`: every point ascending (a ketama point
    /// once per digest that made it) and point → owner.
    fn continuum<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyDict>)> {
        let ring = PyDict::new(py);
        let mut keys = Vec::with_capacity(self.points.len());
        for (i, (&point, &owner)) in self.points.iter().zip(&self.owners).enumerate() {
            let int = point.into_pyobject(py)?;
            ring.set_item(&int, self.names[owner as usize].bind(py))?;
            let times = self.times.get(i).copied().unwrap_or(1);
            for _ in 1..times {
                keys.push(int.clone());
            }
            keys.push(int);
        }
        Ok((PyList::new(py, keys)?, ring))
    }

    /// uhashring's `_distribution`: points made per node (in its order).
    fn distribution<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for &(label, count) in &self.made {
            out.set_item(self.names[label as usize].bind(py), count)?;
        }
        Ok(out)
    }

    /// Distinct points (uhashring's `size`).
    fn __len__(&self) -> usize {
        self.points.len()
    }
}
