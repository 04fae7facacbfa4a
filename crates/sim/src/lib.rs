//! `ringwise-sim`: the seed article's measurement program, exact and fast.
//!
//! The article measures, on the keys `user:0..` and nodes `node-0..`:
//! how many keys `hash % N` moves ([`modulo`]), what one ring does when a node
//! joins ([`single`]), the same over 30 node-name sets ([`seeds`]), what a
//! failure redistributes ([`failure`]), how weights split the keys
//! ([`weights`]), the rendezvous one-liner ([`rendezvous`]) and what moved
//! keys cost a cache and a store ([`cost`]). [`run`] performs the selected
//! experiments with any placement algorithm and returns one [`Report`].
//!
//! Every figure equals what the article's Python program prints for the same
//! parameters; `crates/cli/tests/simulate_peer.rs` checks that against an
//! independent Python re-implementation.
//!
//! Speed: each key is hashed once and its hash reused by every experiment;
//! rings are built once per (name set, vnodes) and the joined ring is derived
//! by merging one node's points; the key loops run in parallel with rayon.

pub mod bounded;
pub mod compare;
pub mod cost;
pub mod failure;
mod keys;
pub mod modulo;
pub mod plot;
pub mod rendezvous;
pub mod report;
pub mod seeds;
pub mod single;
mod tally;
pub mod weights;

use std::fmt;
use std::str::FromStr;
use std::time::Instant;

use ringwise::{Algorithm, AnyPlacement, Error, Node, Params, Placement, Ring, StableHash};
use serde::Serialize;

pub use keys::{KeyText, Keys};

/// One experiment of the article.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Experiment {
    /// `hash % N` baseline.
    Modulo,
    /// One ring, one node joins.
    Single,
    /// The same over many node-name sets.
    Seeds,
    /// The most loaded node fails.
    Failure,
    /// Weighted nodes.
    Weights,
    /// The rendezvous one-liner.
    Rendezvous,
    /// The cost model of moved keys.
    Cost,
    /// Every algorithm side by side (not part of the article's run).
    Compare,
    /// Zipf-skewed requests with and without bounded loads.
    Bounded,
}

impl Experiment {
    /// The article's experiments, in report order: the default run.
    pub const ARTICLE: [Experiment; 7] = [
        Experiment::Modulo,
        Experiment::Single,
        Experiment::Seeds,
        Experiment::Failure,
        Experiment::Weights,
        Experiment::Rendezvous,
        Experiment::Cost,
    ];

    /// Every experiment, in report order.
    pub const ALL: [Experiment; 9] = [
        Experiment::Modulo,
        Experiment::Single,
        Experiment::Seeds,
        Experiment::Failure,
        Experiment::Weights,
        Experiment::Rendezvous,
        Experiment::Cost,
        Experiment::Compare,
        Experiment::Bounded,
    ];

    /// The name used by `--experiments`.
    pub fn name(self) -> &'static str {
        match self {
            Experiment::Modulo => "modulo",
            Experiment::Single => "single",
            Experiment::Seeds => "seeds",
            Experiment::Failure => "failure",
            Experiment::Weights => "weights",
            Experiment::Rendezvous => "rendezvous",
            Experiment::Cost => "cost",
            Experiment::Compare => "compare",
            Experiment::Bounded => "bounded",
        }
    }
}

impl FromStr for Experiment {
    type Err = ConfigError;

    fn from_str(name: &str) -> Result<Self, ConfigError> {
        Experiment::ALL
            .into_iter()
            .find(|e| e.name() == name)
            .ok_or_else(|| ConfigError::new("experiments", format!("unknown experiment {name:?}")))
    }
}

impl fmt::Display for Experiment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A bad simulation parameter: which option, and what is wrong with it.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    /// The option, as on the command line without dashes (`vnodes`).
    pub option: &'static str,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl ConfigError {
    fn new(option: &'static str, message: impl Into<String>) -> Self {
        ConfigError {
            option,
            message: message.into(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "--{}: {}", self.option, self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Everything that can stop a simulation.
#[derive(Debug)]
#[non_exhaustive]
pub enum SimError {
    /// A parameter is out of range.
    Config(ConfigError),
    /// The placement library refused a cluster (for example too many points).
    Placement(Error),
    /// A chart or other output file could not be written.
    Output {
        path: std::path::PathBuf,
        message: String,
    },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Config(e) => e.fmt(f),
            SimError::Placement(e) => e.fmt(f),
            SimError::Output { path, message } => {
                write!(f, "cannot write {}: {message}", path.display())
            }
        }
    }
}

impl std::error::Error for SimError {}

impl From<ConfigError> for SimError {
    fn from(e: ConfigError) -> Self {
        SimError::Config(e)
    }
}

impl From<Error> for SimError {
    fn from(e: Error) -> Self {
        SimError::Placement(e)
    }
}

/// The parameters of a run; [`Config::default`] is the article's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Config {
    /// Placement algorithm of the ring experiments.
    #[serde(serialize_with = "display")]
    pub algo: Algorithm,
    /// Hash of keys, points and rendezvous scores (the article: md5).
    #[serde(serialize_with = "display")]
    pub hash: StableHash,
    /// Keys `user:0 .. user:{keys-1}`.
    pub keys: u64,
    /// Nodes before the change (the article: 10).
    pub nodes: u32,
    /// Virtual nodes of the single and seeds experiments.
    pub vnodes: Vec<u32>,
    /// Node-name sets of the seeds experiment.
    pub seeds: u32,
    /// Keys per seed (the first ones).
    pub seed_keys: u64,
    /// Virtual nodes of the failure experiment.
    pub failure_vnodes: Vec<u32>,
    /// Virtual nodes of the weights experiment.
    pub weight_vnodes: Vec<u32>,
    /// Keys of the rendezvous experiment (the first ones).
    pub rendezvous_keys: u64,
    /// Experiments to run, in report order.
    pub experiments: Vec<Experiment>,
    /// Requests per second of the cost model's cache.
    pub rps: f64,
    /// Hit rate of the cost model's cache.
    pub hit_rate: f64,
    /// Bytes stored by the cost model's store.
    pub data_bytes: f64,
    /// Load bound of the bounded experiment: `(1 + epsilon)` × the mean.
    pub epsilon: f64,
}

fn display<T: fmt::Display, S: serde::Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(value)
}

impl Default for Config {
    fn default() -> Self {
        Config {
            algo: Algorithm::Ring,
            hash: StableHash::Md5,
            keys: 1_000_000,
            nodes: 10,
            vnodes: vec![1, 10, 100, 1000],
            seeds: 30,
            seed_keys: 100_000,
            failure_vnodes: vec![1, 100],
            weight_vnodes: vec![1000, 100],
            rendezvous_keys: 200_000,
            experiments: Experiment::ARTICLE.to_vec(),
            rps: 100_000.0,
            hit_rate: 0.95,
            data_bytes: 3e12,
            epsilon: 0.25,
        }
    }
}

impl Config {
    /// Checks every parameter; the first bad one is the error.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.keys == 0 {
            return Err(ConfigError::new("keys", "must be at least 1"));
        }
        if self.nodes < 2 {
            return Err(ConfigError::new(
                "nodes",
                format!("{} nodes: the experiments need at least 2", self.nodes),
            ));
        }
        for (option, list) in [
            ("vnodes", &self.vnodes),
            ("failure-vnodes", &self.failure_vnodes),
            ("weight-vnodes", &self.weight_vnodes),
        ] {
            if list.is_empty() {
                return Err(ConfigError::new(
                    option,
                    "give at least one value, e.g. 1,10,100",
                ));
            }
            if let Some(bad) = list.iter().find(|&&v| v == 0 || v > ringwise::MAX_VNODES) {
                return Err(ConfigError::new(
                    option,
                    format!("{bad} virtual nodes: use 1 to {}", ringwise::MAX_VNODES),
                ));
            }
        }
        if self.seeds == 0 && self.experiments.contains(&Experiment::Seeds) {
            return Err(ConfigError::new(
                "seeds",
                "must be at least 1 for the seeds experiment",
            ));
        }
        if self.seed_keys == 0 {
            return Err(ConfigError::new("seed-keys", "must be at least 1"));
        }
        if self.rendezvous_keys == 0 {
            return Err(ConfigError::new("rendezvous-keys", "must be at least 1"));
        }
        if self.experiments.is_empty() {
            return Err(ConfigError::new(
                "experiments",
                "name at least one experiment",
            ));
        }
        if !(self.rps.is_finite() && self.rps >= 0.0) {
            return Err(ConfigError::new(
                "rps",
                format!("{} is not a request rate >= 0", self.rps),
            ));
        }
        if !(0.0..=1.0).contains(&self.hit_rate) {
            return Err(ConfigError::new(
                "hit-rate",
                format!(
                    "{} is not a fraction between 0 and 1 (0.95 = 95 %)",
                    self.hit_rate
                ),
            ));
        }
        if !(self.epsilon.is_finite() && self.epsilon > 0.0) {
            return Err(ConfigError::new(
                "epsilon",
                format!(
                    "{} is not a number above 0 (0.25 = at most 1.25x the mean)",
                    self.epsilon
                ),
            ));
        }
        if !(self.data_bytes.is_finite() && self.data_bytes >= 0.0) {
            return Err(ConfigError::new("data", "must be a size >= 0, e.g. 3TB"));
        }
        Ok(())
    }

    fn wants(&self, experiment: Experiment) -> bool {
        self.experiments.contains(&experiment)
    }

    /// The names `{prefix}-0 .. {prefix}-{nodes-1}` and the joining node.
    fn names(&self, prefix: &str) -> (Vec<String>, String) {
        let base = (0..self.nodes).map(|i| format!("{prefix}-{i}")).collect();
        (base, format!("{prefix}-{}", self.nodes))
    }
}

/// Reports how far a run has come, for a progress bar. Units are keys
/// processed (a key counts once per pass that reads it).
pub trait Progress: Sync {
    /// The run will process `total` units.
    fn start(&self, total: u64);
    /// `units` more are done.
    fn advance(&self, units: u64);
}

/// No progress reporting.
#[derive(Debug, Clone, Copy)]
pub struct Quiet;

impl Progress for Quiet {
    fn start(&self, _: u64) {}
    fn advance(&self, _: u64) {}
}

/// Everything a run measured. Experiments that were not selected are absent.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The parameters of the run.
    pub params: Config,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modulo: Option<Vec<modulo::ModuloRow>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub single: Option<Vec<single::SingleRow>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seeds: Option<Vec<seeds::SeedsRow>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<Vec<failure::FailureRow>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weights: Option<Vec<weights::WeightsRow>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rendezvous: Option<rendezvous::RendezvousRow>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<cost::Cost>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compare: Option<Vec<compare::CompareRow>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounded: Option<bounded::BoundedRow>,
    /// Experiments the algorithm cannot perform (jump cannot remove the
    /// most loaded node, slots have no weights...), with the reason.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<Skipped>,
    /// Wall time of the run, seconds.
    pub elapsed_s: f64,
}

/// An experiment left out because the algorithm cannot do what it needs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skipped {
    pub experiment: Experiment,
    pub reason: String,
}

/// `Ok(None)` plus a note for what the algorithm refuses by construction;
/// every other error stays an error.
fn unless_unsupported<T>(
    experiment: Experiment,
    result: Result<T, SimError>,
    skipped: &mut Vec<Skipped>,
) -> Result<Option<T>, SimError> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(SimError::Placement(e @ Error::Unsupported { .. })) => {
            skipped.push(Skipped {
                experiment,
                reason: e.to_string(),
            });
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Runs the selected experiments.
pub fn run(config: &Config, progress: &dyn Progress) -> Result<Report, SimError> {
    config.validate()?;
    match config.algo {
        // The ring gets its own monomorphic loops; the rest share the enum.
        Algorithm::Ring => run_with(config, progress, |nodes: Vec<Node>, vnodes| {
            Ring::builder()
                .hasher(config.hash)
                .vnodes(vnodes)
                .nodes(nodes)
                .build()
        }),
        algorithm => run_with(config, progress, |nodes: Vec<Node>, vnodes| {
            let params = Params {
                vnodes,
                hash: config.hash,
                ..Params::DEFAULT
            };
            AnyPlacement::build(algorithm, nodes, params)
        }),
    }
}

/// Runs the experiments with placements made by `build(nodes, vnodes)`.
pub fn run_with<P, B>(
    config: &Config,
    progress: &dyn Progress,
    build: B,
) -> Result<Report, SimError>
where
    P: Placement,
    B: Fn(Vec<Node>, u32) -> Result<P, Error> + Sync,
{
    config.validate()?;
    let started = Instant::now();
    progress.start(total_units(config));
    // Rendezvous hashes its own strings, so it runs beside the others and
    // fills the gaps their serial steps leave (ring builds, victim choice).
    let (rendezvous, rest) = rayon::join(
        || {
            let result = match config.wants(Experiment::Rendezvous) {
                true => Some(rendezvous::run(config, &build)).transpose(),
                false => Ok(None),
            };
            progress.advance(config.rendezvous_keys.min(config.keys));
            result
        },
        || key_experiments(config, progress, &build),
    );
    let (modulo, single, seeds, failure, weights, compare, skipped) = rest?;
    let cost_needs = config.wants(Experiment::Cost);
    let cost = cost_needs.then(|| cost::Cost::new(config, modulo.as_deref(), single.as_deref()));
    let bounded = config
        .wants(Experiment::Bounded)
        .then(|| bounded::run(config, config.epsilon))
        .transpose()?;
    Ok(Report {
        bounded,
        modulo: modulo.filter(|_| config.wants(Experiment::Modulo)),
        single: single.filter(|_| config.wants(Experiment::Single)),
        seeds,
        failure,
        weights,
        rendezvous: rendezvous?,
        cost,
        compare,
        skipped,
        params: config.clone(),
        elapsed_s: started.elapsed().as_secs_f64(),
    })
}

type KeyResults = (
    Option<Vec<modulo::ModuloRow>>,
    Option<Vec<single::SingleRow>>,
    Option<Vec<seeds::SeedsRow>>,
    Option<Vec<failure::FailureRow>>,
    Option<Vec<weights::WeightsRow>>,
    Option<Vec<compare::CompareRow>>,
    Vec<Skipped>,
);

/// The experiments on the keys `user:0..`, which share one hashing pass.
/// Modulo and single also run when only the cost model needs them.
fn key_experiments<P, B>(
    config: &Config,
    progress: &dyn Progress,
    build: &B,
) -> Result<KeyResults, SimError>
where
    P: Placement,
    B: Fn(Vec<Node>, u32) -> Result<P, Error> + Sync,
{
    let keys = Keys::new(config.hash, config.keys);
    progress.advance(keys.len());
    let cost_needs = config.wants(Experiment::Cost);
    let modulo =
        (config.wants(Experiment::Modulo) || cost_needs).then(|| modulo::run(config.nodes, &keys));
    let single = (config.wants(Experiment::Single) || cost_needs)
        .then(|| single::run(config, &keys, build, progress))
        .transpose()?;
    let seeds = config
        .wants(Experiment::Seeds)
        .then(|| seeds::run(config, &keys, build, progress))
        .transpose()?;
    let mut skipped = Vec::new();
    let failure = match config.wants(Experiment::Failure) {
        true => unless_unsupported(
            Experiment::Failure,
            failure::run(config, &keys, build, progress),
            &mut skipped,
        )?,
        false => None,
    };
    let weights = match config.wants(Experiment::Weights) {
        true => unless_unsupported(
            Experiment::Weights,
            weights::run(config, &keys, build),
            &mut skipped,
        )?,
        false => None,
    };
    let compare = config
        .wants(Experiment::Compare)
        .then(|| compare::run(config, &keys))
        .transpose()?;
    Ok((modulo, single, seeds, failure, weights, compare, skipped))
}

fn total_units(config: &Config) -> u64 {
    let mut total = config.keys * 2;
    if config.wants(Experiment::Seeds) {
        total += u64::from(config.seeds)
            * config.vnodes.len() as u64
            * config.seed_keys.min(config.keys);
    }
    if config.wants(Experiment::Failure) {
        total += config.keys * 2 * config.failure_vnodes.len() as u64;
    }
    total + config.rendezvous_keys.min(config.keys)
}

/// Nodes of weight 1 with these names.
fn nodes_named(names: &[String]) -> Vec<Node> {
    names.iter().map(Node::new).collect()
}
