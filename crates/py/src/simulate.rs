//! `ringwise.simulate(**options)`: the seed article's experiments, as
//! `ringwise simulate --format json` runs them, returned as dicts.

use std::str::FromStr;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use ringwise::{Algorithm, InSimulate, Param, ParamValue, Params, StableHash};
use ringwise_sim::{Config, Experiment, Quiet};

use crate::errors::{config_to_py, raise, sim_to_py, to_py};
use crate::inputs::refuse_lone_text;

/// The version of the simulate report (`"version"`), as `ringwise
/// simulate --format json` writes it (the CLI's `REPORT_JSON_VERSION`).
const JSON_VERSION: u32 = 1;

/// Options that name the run's algorithm and hash; read first. The
/// parameters of the core's list that `simulate` takes follow them
/// ([`simulate_params`]), then [`RUN_OPTIONS`].
const ALGO_OPTIONS: &[&str] = &["algo", "hash", "secret"];

/// The parameters of the list that `simulate` takes.
fn simulate_params() -> impl Iterator<Item = Param> {
    Param::ALL
        .iter()
        .copied()
        .filter(|p| p.in_simulate() != InSimulate::No)
}

/// Every option, in the order an error lists them.
fn known_options() -> Vec<&'static str> {
    let params = simulate_params().map(Param::name);
    ALGO_OPTIONS
        .iter()
        .copied()
        .chain(params)
        .chain(RUN_OPTIONS.iter().copied())
        .collect()
}

/// The options of the run itself.
const RUN_OPTIONS: &[&str] = &[
    "keys",
    "nodes",
    "vnodes",
    "seeds",
    "seed_keys",
    "failure_vnodes",
    "weight_vnodes",
    "rendezvous_keys",
    "experiments",
    "rps",
    "hit_rate",
    "data",
    "compare",
    "epsilon",
];

fn bad(option: &str, message: impl Into<String>) -> PyErr {
    raise(
        "InvalidParameterError",
        format!("{option}: {}", message.into()),
    )
}

/// A list option: a list of ints, one int, or `"1,10,100"` as on the
/// command line.
fn int_list(option: &str, value: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
    if let Ok(text) = value.cast::<PyString>() {
        return text
            .to_cow()?
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| {
                s.parse()
                    .map_err(|_| bad(option, format!("{s:?} is not a whole number")))
            })
            .collect();
    }
    if let Ok(one) = value.extract::<u32>() {
        return Ok(vec![one]);
    }
    // bytes would extract as a list of its byte values.
    refuse_lone_text(
        value,
        &format!("simulate({option}=...)"),
        "ints (or a \"1,10\" str)",
        "int",
    )?;
    value.extract::<Vec<u32>>()
}

/// `ringwise.simulate(**options) -> dict`: the run's JSON figures.
#[pyfunction]
#[pyo3(signature = (**options))]
pub fn simulate(py: Python<'_>, options: Option<&Bound<'_, PyDict>>) -> PyResult<Py<PyAny>> {
    let get = |name: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
        match options {
            Some(o) => Ok(o.get_item(name)?.filter(|v| !v.is_none())),
            None => Ok(None),
        }
    };
    if let Some(options) = options {
        for key in options.keys() {
            let key: String = key.extract()?;
            if !known_options().contains(&key.as_str()) {
                return Err(PyTypeError::new_err(format!(
                    "simulate() got an unexpected option {key:?}: expected one of {}",
                    known_options().join(", ")
                )));
            }
        }
    }
    let defaults = Config::default();
    let algo = match get("algo")? {
        Some(a) => Algorithm::from_str(&a.extract::<String>()?).map_err(to_py)?,
        None => defaults.algo,
    };
    let mut params = Params::DEFAULT;
    for param in simulate_params() {
        if let Some(v) = get(param.name())? {
            let value = match v.cast::<PyString>() {
                Ok(text) => param.parse(&text.to_cow()?).map_err(to_py)?,
                Err(_) => ParamValue::Count(v.extract::<u64>()?),
            };
            params.set(param, value).map_err(to_py)?;
        }
    }
    let ring_size_given = get("min_ring_size")?.is_some() || get("max_ring_size")?.is_some();
    if ring_size_given {
        ringwise::EnvoyRing::new(params.min_ring_size, params.max_ring_size).map_err(to_py)?;
    }
    let secret: Option<String> = get("secret")?.map(|s| s.extract()).transpose()?;
    let hash = match get("hash")? {
        Some(h) => {
            StableHash::from_name(&h.extract::<String>()?, secret.as_deref()).map_err(to_py)?
        }
        None => Config::default_hash_for(algo, &params),
    };
    algo.check_hash(hash).map_err(to_py)?;
    let mut experiments = match get("experiments")? {
        None => defaults.experiments.clone(),
        Some(list) => {
            let names: Vec<String> = match list.cast::<PyString>() {
                Ok(text) => text
                    .to_cow()?
                    .split(',')
                    .map(|s| s.trim().to_owned())
                    .filter(|s| !s.is_empty())
                    .collect(),
                Err(_) => {
                    refuse_lone_text(
                        &list,
                        "simulate(experiments=...)",
                        "experiment names (or a \"a,b\" str)",
                        "name",
                    )?;
                    list.extract()?
                }
            };
            let mut experiments = Vec::new();
            for name in names {
                let e = Experiment::from_str(&name).map_err(config_to_py)?;
                if !experiments.contains(&e) {
                    experiments.push(e);
                }
            }
            experiments
        }
    };
    if get("compare")?.map(|c| c.is_truthy()).transpose()? == Some(true) {
        for e in [Experiment::Compare, Experiment::Bounded] {
            if !experiments.contains(&e) {
                experiments.push(e);
            }
        }
    }
    experiments.sort();
    let data_bytes = match get("data")? {
        None => defaults.data_bytes,
        Some(d) => match d.cast::<PyString>() {
            Ok(text) => {
                ringwise_sim::cost::parse_size(&text.to_cow()?).map_err(|m| bad("data", m))?
            }
            Err(_) => d.extract()?,
        },
    };
    let list = |name: &str, default: &Vec<u32>| -> PyResult<Vec<u32>> {
        get(name)?.map_or(Ok(default.clone()), |v| int_list(name, &v))
    };
    let config = Config {
        algo,
        hash,
        params,
        keys: get("keys")?.map_or(Ok(defaults.keys), |v| v.extract())?,
        nodes: get("nodes")?.map_or(Ok(defaults.nodes), |v| v.extract())?,
        vnodes: list("vnodes", &defaults.vnodes)?,
        seeds: get("seeds")?.map_or(Ok(defaults.seeds), |v| v.extract())?,
        seed_keys: get("seed_keys")?.map_or(Ok(defaults.seed_keys), |v| v.extract())?,
        failure_vnodes: list("failure_vnodes", &defaults.failure_vnodes)?,
        weight_vnodes: list("weight_vnodes", &defaults.weight_vnodes)?,
        rendezvous_keys: get("rendezvous_keys")?
            .map_or(Ok(defaults.rendezvous_keys), |v| v.extract())?,
        experiments,
        rps: get("rps")?.map_or(Ok(defaults.rps), |v| v.extract())?,
        hit_rate: get("hit_rate")?.map_or(Ok(defaults.hit_rate), |v| v.extract())?,
        data_bytes,
        epsilon: get("epsilon")?.map_or(Ok(defaults.epsilon), |v| v.extract())?,
    };
    config.validate().map_err(config_to_py)?;
    let report = py
        .detach(|| ringwise_sim::run(&config, &Quiet))
        .map_err(sim_to_py)?;
    let mut document = serde_json::to_value(&report)
        .map_err(|e| raise("Error", format!("cannot write the report as JSON: {e}")))?;
    if let Some(map) = document.as_object_mut() {
        map.insert("version".into(), JSON_VERSION.into());
    }
    let text = ringwise_sim::render::rounded(document).to_string();
    Ok(py.import("json")?.call_method1("loads", (text,))?.unbind())
}
