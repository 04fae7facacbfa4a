//! `ringwise.Placement`: an immutable snapshot of any algorithm with its
//! key hash (a [`Keyed<AnyPlacement>`]), and the conversions to and from
//! Python values.

use std::borrow::Cow;
use std::fmt::Write as _;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use ringwise::{
    AnyPlacement, ClusterSpec, Keyed, Member, Node, NodeId, Param, ParamValue, Placement as _,
    Settings,
};

use crate::errors::{empty, raise, to_py};
use crate::inputs::{check_cluster_text, read_cluster_file, refuse_lone_text};

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
    fn new(py: Python<'_>, keyed: Keyed<AnyPlacement>, listed: Vec<String>) -> Self {
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

    /// The same key hash and hash tag over a changed placement.
    fn rekeyed(&self, py: Python<'_>, placement: AnyPlacement, listed: Vec<String>) -> Self {
        let keyed =
            Keyed::new(placement, *self.keyed.hasher()).with_hash_tag(self.keyed.hash_tag());
        Placement::new(py, keyed, listed)
    }

    fn name(&self, py: Python<'_>, id: NodeId) -> Py<PyString> {
        self.names[id as usize].clone_ref(py)
    }
}

/// The bytes of a `str` (UTF-8) or `bytes` key.
fn key_bytes<'a>(key: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(s) = key.cast::<PyString>() {
        return Ok(match s.to_cow()? {
            Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
            Cow::Owned(s) => Cow::Owned(s.into_bytes()),
        });
    }
    if let Ok(b) = key.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(b.as_bytes()));
    }
    Err(PyTypeError::new_err(format!(
        "a key must be str or bytes, not {}",
        key.get_type().name()?
    )))
}

/// The keys of a list or tuple of ASCII `str` as one encoded `bytes`, with
/// each key's end in `ends`; `None` (and `ends` unspecified) for anything
/// else, which the caller then takes key by key.
fn ascii_joined<'py>(
    keys: &Bound<'py, PyAny>,
    ends: &mut Vec<usize>,
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let py = keys.py();
    if !(keys.is_instance_of::<PyList>() || keys.is_instance_of::<PyTuple>()) {
        return Ok(None);
    }
    // `"".join` refuses anything but str.
    let Ok(joined) = PyString::new(py, "").call_method1("join", (keys,)) else {
        return Ok(None);
    };
    let encoded = joined.call_method0("encode")?.cast_into::<PyBytes>()?;
    // Bytes == code points only when every key is ASCII.
    if encoded.as_bytes().len() != joined.len()? {
        return Ok(None);
    }
    let mut end = 0;
    ends.reserve(keys.len()?);
    for key in keys.try_iter()? {
        end += key?.len()?;
        ends.push(end);
    }
    Ok(Some(encoded))
}

/// One node from a name, a `(name, weight)` or a `(name, weight, zone)`.
fn node_from(item: &Bound<'_, PyAny>) -> PyResult<Node> {
    if let Ok(name) = item.cast::<PyString>() {
        return Ok(Node::new(name.to_cow()?));
    }
    let parts: Vec<Bound<'_, PyAny>> = match item.extract() {
        Ok(parts) => parts,
        Err(_) => {
            return Err(PyTypeError::new_err(format!(
                "a node must be a name (str) or a (name, weight) or (name, weight, zone) tuple, \
                 not {}",
                item.get_type().name()?
            )));
        }
    };
    let (name, weight, zone) = match parts.as_slice() {
        [name, weight] => (name, weight, None),
        [name, weight, zone] => (name, weight, Some(zone)),
        _ => {
            return Err(PyTypeError::new_err(format!(
                "a node tuple must be (name, weight) or (name, weight, zone), not {} items",
                parts.len()
            )));
        }
    };
    let mut node = Node::new(name.extract::<String>()?).weight(weight.extract::<f64>()?);
    if let Some(zone) = zone.filter(|z| !z.is_none()) {
        node = node.zone(zone.extract::<String>()?);
    }
    Ok(node)
}

/// The nodes of an iterable of names or tuples, or of a `{name: weight}`
/// mapping, in the order given.
fn nodes_from(nodes: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<Node>> {
    let Some(nodes) = nodes.filter(|n| !n.is_none()) else {
        return Ok(Vec::new());
    };
    refuse_lone_text(
        nodes,
        "Placement",
        "nodes (names or (name, weight) tuples) or a {name: weight} mapping",
        "name",
    )?;
    let items = match nodes.cast::<PyDict>() {
        Ok(dict) => dict.items().into_any(),
        Err(_) if nodes.hasattr("items")? && nodes.hasattr("keys")? => {
            nodes.call_method0("items")?
        }
        Err(_) => nodes.clone(),
    };
    // At most the core's node cap is taken from the iterable: an endless
    // generator is refused after MAX_NODES + 1 items, not after memory.
    let mut listed = Vec::new();
    for item in items.try_iter()? {
        if listed.len() == ringwise::MAX_NODES {
            return Err(raise(
                "Error",
                format!(
                    "more than {} nodes given, the most one cluster may have: split the \
                     cluster, or check the input for a runaway iterable",
                    ringwise::MAX_NODES
                ),
            ));
        }
        listed.push(node_from(&item?)?);
    }
    Ok(listed)
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

    /// The node that owns `key` (a str is UTF-8 encoded).
    fn locate(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyString>> {
        let key = key_bytes(key)?;
        match self.keyed.owner(&key) {
            Some(id) => Ok(self.name(py, id)),
            None => Err(empty()),
        }
    }

    /// Up to `n` distinct nodes for `key`, in preference order.
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
    /// are characters or byte values: `TypeError`). Cost: every key is
    /// held at once (the sum of their lengths plus about 24 bytes a key,
    /// and the result, one entry a key), so an iterator that never ends
    /// never returns; give a stream in batches (`itertools.islice`). A
    /// pending signal (Ctrl-C) is checked every 65,536 keys.
    #[pyo3(signature = (keys, *, indices=false))]
    fn locate_many<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        indices: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        // Every key's bytes, end to end, under the GIL: one encoding of the
        // joined keys when they are a list or tuple of ASCII str (no
        // per-key bytes object), else each key's bytes copied in turn.
        refuse_lone_text(keys, "locate_many", "keys", "key")?;
        let mut ends: Vec<usize> = Vec::new();
        let encoded = ascii_joined(keys, &mut ends)?;
        let joined = match &encoded {
            Some(encoded) => Cow::Borrowed(encoded.as_bytes()),
            None => {
                let mut bytes: Vec<u8> = Vec::new();
                ends.clear();
                ends.reserve(keys.len().unwrap_or(0));
                for key in keys.try_iter()? {
                    let key = key?;
                    bytes.extend_from_slice(&key_bytes(&key)?);
                    ends.push(bytes.len());
                    // A C iterator (itertools.repeat) runs no bytecode, so
                    // Python would never see a Ctrl-C on its own.
                    if ends.len() % (1 << 16) == 0 {
                        py.check_signals()?;
                    }
                }
                Cow::Owned(bytes)
            }
        };
        let bytes: &[u8] = &joined;
        if !ends.is_empty() && self.keyed.placement().is_empty() {
            return Err(empty());
        }
        let mut ids: Vec<NodeId> = Vec::new();
        py.detach(|| {
            let mut start = 0;
            let slices: Vec<&[u8]> = ends
                .iter()
                .map(|&end| {
                    let key = &bytes[start..end];
                    start = end;
                    key
                })
                .collect();
            self.keyed.owners_into(&slices, &mut ids);
        });
        if indices {
            let raw: Vec<u8> = ids.iter().flat_map(|id| id.to_ne_bytes()).collect();
            let array = py.import("array")?.getattr("array")?.call1(("I",))?;
            array.call_method1("frombytes", (PyBytes::new(py, &raw),))?;
            return match py.import("numpy") {
                Ok(numpy) => numpy.getattr("asarray")?.call1((array, "uint32")),
                Err(_) => Ok(array),
            };
        }
        let names: Vec<&Py<PyString>> = ids.iter().map(|&id| &self.names[id as usize]).collect();
        Ok(PyList::new(py, names)?.into_any())
    }

    /// The 64-bit hash the placement looks `key` up by.
    fn hash_key(&self, key: &Bound<'_, PyAny>) -> PyResult<u64> {
        Ok(self.keyed.hash(&key_bytes(key)?))
    }

    /// A new snapshot with one more node; this one is unchanged.
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

/// How a keyword argument of `Placement(...)` becomes a parameter's value:
/// `None` for "not given" (the default then).
trait Keyword {
    fn value(self, param: Param) -> PyResult<Option<ParamValue>>;
}

impl Keyword for u64 {
    fn value(self, _: Param) -> PyResult<Option<ParamValue>> {
        Ok(Some(ParamValue::Count(self)))
    }
}

impl Keyword for u32 {
    fn value(self, _: Param) -> PyResult<Option<ParamValue>> {
        Ok(Some(ParamValue::Count(self.into())))
    }
}

impl Keyword for Option<u64> {
    fn value(self, _: Param) -> PyResult<Option<ParamValue>> {
        Ok(self.map(ParamValue::Count))
    }
}

impl Keyword for Option<bool> {
    fn value(self, _: Param) -> PyResult<Option<ParamValue>> {
        Ok(self.map(ParamValue::Bool))
    }
}

impl Keyword for Option<&str> {
    fn value(self, param: Param) -> PyResult<Option<ParamValue>> {
        self.map(|text| param.parse(text))
            .transpose()
            .map_err(to_py)
    }
}

impl Placement {
    /// The placement of `algorithm` over `nodes` with the parameters
    /// `given`, through the one entrance of every description
    /// ([`ClusterSpec::from_parts`]).
    fn create(
        py: Python<'_>,
        nodes: Option<&Bound<'_, PyAny>>,
        settings: Settings,
    ) -> PyResult<Self> {
        let members: Vec<Member> = nodes_from(nodes)?.iter().map(Member::of).collect();
        let spec = ClusterSpec::from_parts(&settings, &members).map_err(|r| to_py(r.error))?;
        let keyed = spec.build().map_err(to_py)?;
        Ok(Placement::new(py, keyed, spec.listed))
    }
}

/// `Placement(...)`: one keyword argument per parameter of the core's list,
/// with the list's Python type and default.
macro_rules! placement_new {
    ([] $($(#[doc = $doc:literal])* $variant:ident($field:ident: $ty:ty) {
        default: $default:expr,
        range: $range:expr,
        flag: $flag:literal, $value_name:literal, $help:literal,
        simulate: $simulate:ident,
        python: $pyty:ty = $pydefault:tt,
    })+) => {
        #[pymethods]
        impl Placement {
            /// Placement(nodes=(), *, algorithm="ring", hash=None, vnodes=160, ...)
            ///
            /// `nodes`: names, `(name, weight)` or `(name, weight, zone)` tuples,
            /// or a `{name: weight}` mapping, in listed order. `hash=None` is the
            /// algorithm's default key hash given the parameters.
            #[new]
            #[pyo3(signature = (nodes=None, *, algorithm="ring", hash=None,
                $($field=$pydefault,)+ secret=None, hash_tag=None))]
            #[allow(clippy::too_many_arguments)]
            fn py_new(
                py: Python<'_>,
                nodes: Option<&Bound<'_, PyAny>>,
                algorithm: &str,
                hash: Option<&str>,
                $($field: $pyty,)+
                secret: Option<&str>,
                hash_tag: Option<&str>,
            ) -> PyResult<Self> {
                let mut settings = Settings::default();
                settings.algorithm = Some(algorithm.to_owned());
                settings.hash = hash.map(str::to_owned);
                settings.secret = secret.map(str::to_owned);
                settings.hash_tag = hash_tag.map(str::to_owned);
                $(if let Some(value) = Keyword::value($field, Param::$variant)? {
                    settings.params.push((Param::$variant, value));
                })+
                Placement::create(py, nodes, settings)
            }
        }
    };
}

ringwise::for_each_param!(placement_new);
