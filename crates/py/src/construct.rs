//! `Placement(...)`: the constructor, one keyword argument per entry of the
//! core's parameter list (expanded from `ringwise::for_each_param!`), and
//! the conversion of the `nodes` argument (names, `(name, weight[, zone])`
//! tuples or a `{name: weight}` mapping) into [`Node`]s.
//!
//! How: the keywords become a [`Settings`], the nodes [`Member`]s, and both
//! go through the one entrance every description takes,
//! [`ClusterSpec::from_parts`], so Python refuses and defaults exactly as a
//! cluster file does. Cost: O(nodes) to read the arguments, then the
//! algorithm's build. Quirk: at most `MAX_NODES` items are taken from the
//! `nodes` iterable, so an endless generator is refused, not followed.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use ringwise::{ClusterSpec, Member, Node, Param, ParamValue, Settings};

use crate::errors::{raise, to_py};
use crate::inputs::refuse_lone_text;
use crate::placement::Placement;

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
