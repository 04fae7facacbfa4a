//! The exception classes and the ONE mapping from library errors to them.
//!
//! `ringwise.Error` is the base; each [`ringwise::Error`] variant has its
//! own subclass, which also derives from the built-in exception a Python
//! caller would catch for it (`ValueError` for bad input, `KeyError` for an
//! unknown node, `LookupError` for a lookup without nodes). The classes are
//! made at import time with `type(name, bases, ns)`, because a class with
//! two bases cannot be declared with `create_exception!`.

use pyo3::exceptions::{PyException, PyKeyError, PyLookupError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

/// Every class: name, built-in base (besides `Error`), docstring.
const CLASSES: &[(&str, Base, &str)] = &[
    (
        "InvalidNameError",
        Base::Value,
        "A node name was empty, too long or held a control character.",
    ),
    ("DuplicateNodeError", Base::Value, "Two nodes share a name."),
    (
        "InvalidWeightError",
        Base::Value,
        "A weight was not finite, or out of range.",
    ),
    (
        "InvalidZoneError",
        Base::Value,
        "A zone name was empty or held a control character.",
    ),
    (
        "InvalidVnodesError",
        Base::Value,
        "vnodes was 0 or above the maximum.",
    ),
    (
        "TooManyPointsError",
        Base::Value,
        "The ring would hold more points than its budget (max_points).",
    ),
    (
        "UnknownNodeError",
        Base::Key,
        "A membership change named a node that is not there.",
    ),
    (
        "UnknownHashError",
        Base::Value,
        "A hash name that ringwise does not know.",
    ),
    (
        "UnknownAlgorithmError",
        Base::Value,
        "An algorithm name that ringwise does not know.",
    ),
    (
        "InvalidSecretError",
        Base::Value,
        "siphash was chosen without a secret, or a secret was malformed.",
    ),
    (
        "InvalidParameterError",
        Base::Value,
        "An algorithm or simulation parameter is out of range.",
    ),
    (
        "UnsupportedError",
        Base::None,
        "The algorithm cannot do this by construction (jump cannot remove a middle node).",
    ),
    (
        "InvalidLayoutError",
        Base::Value,
        "Points, tokens or slots given by hand do not fit.",
    ),
    (
        "ClusterFileError",
        Base::Value,
        "A cluster file could not be parsed or failed validation; the message names the line.",
    ),
    (
        "EmptyError",
        Base::Lookup,
        "A lookup on a placement without nodes (a LookupError, as the article raises).",
    ),
];

#[derive(Clone, Copy)]
enum Base {
    None,
    Value,
    Key,
    Lookup,
}

/// The classes, made once per process: `Error` first, then [`CLASSES`].
static TYPES: PyOnceLock<Vec<(&'static str, Py<PyType>)>> = PyOnceLock::new();

fn types(py: Python<'_>) -> PyResult<&Vec<(&'static str, Py<PyType>)>> {
    TYPES.get_or_try_init(py, || {
        let make = |name: &str, bases: Bound<'_, PyTuple>, doc: &str| -> PyResult<Py<PyType>> {
            let ns = PyDict::new(py);
            ns.set_item("__module__", "ringwise")?;
            ns.set_item("__doc__", doc)?;
            let class = py
                .get_type::<PyType>()
                .call1((name, bases, ns))?
                .cast_into::<PyType>()?;
            Ok(class.unbind())
        };
        let base = make(
            "Error",
            PyTuple::new(py, [py.get_type::<PyException>()])?,
            "The base of every ringwise exception.",
        )?;
        let mut all = vec![("Error", base.clone_ref(py))];
        for &(name, builtin, doc) in CLASSES {
            let mut bases = vec![base.bind(py).clone()];
            match builtin {
                Base::None => {}
                Base::Value => bases.push(py.get_type::<PyValueError>()),
                Base::Key => bases.push(py.get_type::<PyKeyError>()),
                Base::Lookup => bases.push(py.get_type::<PyLookupError>()),
            }
            all.push((name, make(name, PyTuple::new(py, bases)?, doc)?));
        }
        Ok(all)
    })
}

/// Adds the classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    for (name, class) in types(m.py())? {
        m.add(*name, class.bind(m.py()))?;
    }
    Ok(())
}

/// An exception of the class called `name` carrying `message`.
pub fn raise(name: &str, message: String) -> PyErr {
    Python::attach(|py| match types(py) {
        Ok(all) => match all.iter().find(|(n, _)| *n == name) {
            Some((_, class)) => PyErr::from_type(class.bind(py).clone(), message),
            None => PyException::new_err(message),
        },
        Err(e) => e,
    })
}

/// A lookup on a placement without nodes.
pub fn empty() -> PyErr {
    raise(
        "EmptyError",
        "the placement has no nodes: add one before looking keys up".into(),
    )
}

/// Every library error to its class: the one place they are mapped.
pub fn to_py(e: ringwise::Error) -> PyErr {
    use ringwise::Error as E;
    let class = match &e {
        E::InvalidName { .. } => "InvalidNameError",
        E::DuplicateNode { .. } => "DuplicateNodeError",
        E::InvalidWeight { .. } => "InvalidWeightError",
        E::InvalidZone { .. } => "InvalidZoneError",
        // A datacenter is a failure domain above the rack (zone).
        E::InvalidDatacenter { .. } => "InvalidZoneError",
        // A node's id is part of its description, like its name.
        E::InvalidNodeId { .. } => "InvalidNameError",
        E::InvalidVnodes { .. } => "InvalidVnodesError",
        E::TooManyPoints { .. } => "TooManyPointsError",
        E::UnknownNode { .. } => "UnknownNodeError",
        E::UnknownHash { .. } => "UnknownHashError",
        E::UnknownAlgorithm { .. } => "UnknownAlgorithmError",
        E::InvalidSecret { .. } => "InvalidSecretError",
        E::InvalidParameter { .. } => "InvalidParameterError",
        E::Unsupported { .. } => "UnsupportedError",
        E::InvalidLayout { .. } => "InvalidLayoutError",
        E::ClusterFile { .. } => "ClusterFileError",
        // A variant added to the library later: the base class until it
        // gets its own.
        _ => "Error",
    };
    raise(class, e.to_string())
}

/// The simulator's errors: a bad option is an `InvalidParameterError`,
/// a placement error maps as above.
pub fn sim_to_py(e: ringwise_sim::SimError) -> PyErr {
    match e {
        ringwise_sim::SimError::Placement(e) => to_py(e),
        ringwise_sim::SimError::Config(e) => config_to_py(e),
        other => raise("Error", other.to_string()),
    }
}

/// A simulation option out of range.
pub fn config_to_py(e: ringwise_sim::ConfigError) -> PyErr {
    raise("InvalidParameterError", e.to_string())
}
