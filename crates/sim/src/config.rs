//! The parameters of a run ([`Config`], the article's by default), the
//! experiments it can select ([`Experiment`]) and the one builder every
//! experiment places its nodes with ([`Config::placement`]).

use std::fmt;
use std::str::FromStr;

use ringwise::{
    Algorithm, AnyPlacement, Error, InSimulate, Node, Param, ParamValue, Params, StableHash,
};
use serde::Serialize;

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

    /// The article's experiments, in report order: the default run (the
    /// first seven of [`Experiment::ALL`]).
    pub const ARTICLE: &'static [Experiment] = Experiment::ALL.split_at(7).0;

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
    pub(crate) fn new(option: &'static str, message: impl Into<String>) -> Self {
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

/// The largest `--rps`: a trillion requests per second, far beyond any
/// cache, and small enough that every derived figure stays exact to the unit.
pub const MAX_RPS: f64 = 1e12;

/// The largest `--nodes` with the comparison, which also runs 10 N nodes
/// and includes slots (at most 16,384 nodes).
pub const MAX_COMPARE_NODES: u32 = ringwise::SLOT_COUNT as u32 / 10;

/// The most keys of a run: 10^9, a thousand times the article's million
/// (hashed and tallied in chunks, so memory stays at about 64 MiB; time is
/// about a minute per 10^8 keys per pass on two cores).
pub const MAX_KEYS: u64 = 1_000_000_000;

/// The most node-name sets of the seeds experiment: 10,000. Each set builds
/// two rings per vnodes value and the report lists every set's share (the
/// plot, the JSON's `moved_runs`).
pub const MAX_SEEDS: u32 = 10_000;

/// The most values of a vnodes list: each value is one more run of its
/// experiment over the keys.
pub const MAX_LIST: usize = 64;

/// The work budget of a run: passes over keys (one key looked up in one
/// placement) plus the points of every ring the seeds experiment builds,
/// 2·10^10 in all (the default run: 2·10^7, half a second). A run above it
/// is refused before anything is allocated, with the option to lower.
pub const MAX_WORK: u64 = 20_000_000_000;

/// The parameters of a run; [`Config::default`] is the article's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Config {
    /// Placement algorithm of the ring experiments.
    #[serde(serialize_with = "display")]
    pub algo: Algorithm,
    /// Hash of keys, points and rendezvous scores (the article: md5).
    #[serde(serialize_with = "display")]
    pub hash: StableHash,
    /// The algorithms' other parameters (ketama's `flavor`, envoy-ring's
    /// ring sizes, cassandra's `num_tokens`, ...); `vnodes` and `hash` come
    /// from the fields above. JSON shows the ones the algorithm reads.
    #[serde(rename = "algorithm_params", serialize_with = "read_params")]
    pub params: Params,
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

/// The parameters `simulate` takes ([`Param::in_simulate`]) as
/// `{"flavor": "twemproxy", ...}`: every one, whichever algorithm runs (the
/// comparison runs them all), except those the list writes only when set
/// (`capacity`), so documents of runs without them stay as they were.
fn read_params<S: serde::Serializer>(params: &Params, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(None)?;
    for &param in Param::ALL {
        let value = params.get(param);
        let shown = match param.in_simulate() {
            InSimulate::Always => true,
            InSimulate::WhenSet => value != Params::DEFAULT.get(param),
            _ => false,
        };
        match value {
            _ if !shown => {}
            ParamValue::Count(n) => map.serialize_entry(param.name(), &n)?,
            ParamValue::Flavor(flavor) => map.serialize_entry(param.name(), flavor.name())?,
            ParamValue::Bool(on) => map.serialize_entry(param.name(), &on)?,
            _ => map.serialize_entry(param.name(), &value.to_string())?,
        }
    }
    map.end()
}

impl Config {
    /// The key hash when none is asked for: the article's md5, or the
    /// peer's key hash for a compatibility flavour (a ring-shaped algorithm
    /// other than the ring itself: ketama, nginx, envoy-ring, grpc-ring,
    /// cassandra, varnish-shard; and the two flavours that are no ring,
    /// haproxy, HAProxy's own tree, and envoy-rendezvous, Envoy's scores),
    /// as their clients hash keys. `ringwise simulate` without `--hash` and
    /// the Python `simulate()` without `hash=` both use it.
    pub fn default_hash_for(algo: Algorithm, params: &Params) -> StableHash {
        let probe = Params {
            hash: algo.default_hash(),
            ..Params::DEFAULT
        };
        let ring_shaped = AnyPlacement::build(algo, vec![Node::new("probe")], &probe)
            .is_ok_and(|p| p.as_ring().is_some());
        let not_a_ring_flavour = matches!(algo, Algorithm::Haproxy | Algorithm::EnvoyRendezvous);
        match (algo != Algorithm::Ring && ring_shaped) || not_a_ring_flavour {
            true => algo.default_hash_with(params),
            false => Config::default().hash,
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            algo: Algorithm::Ring,
            hash: StableHash::Md5,
            params: Params::DEFAULT,
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
        if self.keys > MAX_KEYS {
            return Err(ConfigError::new(
                "keys",
                format!(
                    "{} keys: at most {MAX_KEYS} (10^9), a thousand times the article's \
                     million; every experiment passes over them, about a minute per 10^8",
                    self.keys
                ),
            ));
        }
        if self.seeds > MAX_SEEDS {
            return Err(ConfigError::new(
                "seeds",
                format!(
                    "{} name sets: at most {MAX_SEEDS}; each set builds two rings per \
                     vnodes value and the report lists every set's share",
                    self.seeds
                ),
            ));
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
            if list.len() > MAX_LIST {
                return Err(ConfigError::new(
                    option,
                    format!(
                        "{} values: at most {MAX_LIST}; each value runs its experiment \
                         once more",
                        list.len()
                    ),
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
        if self.seed_keys > crate::keys::CACHE_KEYS {
            return Err(ConfigError::new(
                "seed-keys",
                format!(
                    "{} keys: at most {} (the seeds experiment holds its keys' hashes, \
                     sorted, 8 bytes each: 64 MB)",
                    self.seed_keys,
                    crate::keys::CACHE_KEYS
                ),
            ));
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
        if !(self.rps.is_finite() && (0.0..=MAX_RPS).contains(&self.rps)) {
            return Err(ConfigError::new(
                "rps",
                format!(
                    "{:e} is not a request rate from 0 to 1e12 per second (e.g. 100000)",
                    self.rps
                ),
            ));
        }
        if self.wants(Experiment::Compare) && self.nodes > MAX_COMPARE_NODES {
            return Err(ConfigError::new(
                "nodes",
                format!(
                    "{} nodes: compare runs N and 10 N nodes, and slots holds at most {} \
                     nodes; use at most {MAX_COMPARE_NODES} with compare",
                    self.nodes,
                    ringwise::SLOT_COUNT
                ),
            ));
        }
        // The whole run's size, before anything is built: the largest ring
        // is N + 1 nodes (weight up to 2 in the weights experiment) at the
        // largest vnodes value, or at least 160 points a node for the
        // flavours; past the point budget the run would fail (or exhaust
        // memory) after minutes of work.
        let largest_vnodes = [&self.vnodes, &self.failure_vnodes, &self.weight_vnodes]
            .iter()
            .flat_map(|list| list.iter().copied())
            .max()
            .unwrap_or(1)
            .max(160);
        let points = (u64::from(self.nodes) + 1) * 2 * u64::from(largest_vnodes);
        if points > ringwise::MAX_POINTS {
            return Err(ConfigError::new(
                "nodes",
                format!(
                    "{} nodes at up to {largest_vnodes} virtual nodes make rings of up to \
                     {points} points, over the {} point budget; lower --nodes or the \
                     vnodes lists",
                    self.nodes,
                    ringwise::MAX_POINTS
                ),
            ));
        }
        self.check_work()?;
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

    /// The whole run's work against [`MAX_WORK`], before anything is
    /// built or hashed: the passes over keys ([`Config::key_passes`]) and
    /// the points of the seeds experiment's rings (seeds × Σ vnodes ×
    /// (2N + 1): a ring before and after the join per set and value). The
    /// option named is the one that contributes most.
    fn check_work(&self) -> Result<(), ConfigError> {
        let run = self.as_run();
        let passes = run.key_passes();
        let seed_points = match run.wants(Experiment::Seeds) {
            true => run
                .vnodes
                .iter()
                .map(|&v| u128::from(v))
                .sum::<u128>()
                .saturating_mul(u128::from(run.seeds))
                .saturating_mul(2 * u128::from(run.nodes) + 1),
            false => 0,
        };
        let work = passes.saturating_add(seed_points);
        if work <= u128::from(MAX_WORK) {
            return Ok(());
        }
        let seeds = seed_points + run.seed_passes();
        let option = match seeds > work - seeds {
            true => "seeds",
            false => "keys",
        };
        Err(ConfigError::new(
            option,
            format!(
                "this run would make {passes} key lookups and build {seed_points} ring \
                 points, over the budget of {MAX_WORK} (2·10^10, about 10 minutes on two \
                 cores); lower --keys, --seed-keys, --seeds, --nodes or the vnodes lists"
            ),
        ))
    }

    /// Lookups of keys over the whole run, in u128 so no option can
    /// overflow it: the passes the progress bar counts, and the weights
    /// experiment's, which it does not.
    pub(crate) fn key_passes(&self) -> u128 {
        let weights = match self.wants(Experiment::Weights) {
            true => u128::from(self.keys) * self.weight_vnodes.len() as u128,
            false => 0,
        };
        self.progress_passes() + weights
    }

    /// The passes over the keys that report progress (the progress bar's
    /// units): both the budget ([`Config::key_passes`]) and the bar count
    /// them here, so the two cannot drift apart.
    pub(crate) fn progress_passes(&self) -> u128 {
        let keys = u128::from(self.keys);
        let mut total = keys * 2 + self.seed_passes();
        if self.wants(Experiment::Failure) {
            total += keys * 2 * self.failure_vnodes.len() as u128;
        }
        total + u128::from(self.rendezvous_keys.min(self.keys))
    }

    /// Lookups of the seeds experiment: every set and vnodes value over
    /// the first `seed_keys` keys.
    fn seed_passes(&self) -> u128 {
        match self.wants(Experiment::Seeds) {
            true => {
                u128::from(self.seeds)
                    * self.vnodes.len() as u128
                    * u128::from(self.seed_keys.min(self.keys))
            }
            false => 0,
        }
    }

    /// The algorithm as the report names it: `ketama (twemproxy)` for a
    /// ketama flavour, the name otherwise.
    pub fn algo_label(&self) -> String {
        match self.algo {
            Algorithm::Ketama => format!("{} ({})", self.algo, self.params.flavor),
            algo => algo.to_string(),
        }
    }

    /// True when the configured algorithm places virtual nodes (only the
    /// ring does; the others ignore `vnodes`).
    pub fn uses_vnodes(&self) -> bool {
        self.algo == Algorithm::Ring
    }

    /// The configuration as it runs: for an algorithm without virtual nodes
    /// every vnodes list is cut to its first value, so each experiment runs
    /// once instead of printing identical rows per vnodes value.
    pub fn as_run(&self) -> Config {
        let mut config = self.clone();
        if !self.uses_vnodes() {
            for list in [
                &mut config.vnodes,
                &mut config.failure_vnodes,
                &mut config.weight_vnodes,
            ] {
                list.truncate(1);
            }
        }
        config
    }

    /// True when `experiment` was selected.
    pub(crate) fn wants(&self, experiment: Experiment) -> bool {
        self.experiments.contains(&experiment)
    }

    /// The names `{prefix}-0 .. {prefix}-{nodes-1}` and the joining node.
    pub(crate) fn names(&self, prefix: &str) -> (Vec<String>, String) {
        let base = (0..self.nodes).map(|i| format!("{prefix}-{i}")).collect();
        (base, format!("{prefix}-{}", self.nodes))
    }

    /// The configured algorithm over `nodes` (in the order given: jump's and
    /// memento's join order), with this run's hash and, for the ring,
    /// `vnodes`. Every experiment builds its placements here (through
    /// [`crate::run`]) or with [`Config::placement_of`].
    pub fn placement(&self, nodes: Vec<Node>, vnodes: u32) -> Result<AnyPlacement, Error> {
        self.placement_of(self.algo, nodes, vnodes)
    }

    /// Like [`Config::placement`] for another algorithm (the comparison
    /// runs every one): [`AnyPlacement::build`] with this run's hash.
    pub fn placement_of(
        &self,
        algorithm: Algorithm,
        nodes: Vec<Node>,
        vnodes: u32,
    ) -> Result<AnyPlacement, Error> {
        let params = Params {
            vnodes,
            hash: self.hash,
            ..self.params
        };
        AnyPlacement::build(algorithm, nodes, &params)
    }
}

/// Nodes of weight 1 with these names, in this order.
pub(crate) fn nodes_named(names: &[String]) -> Vec<Node> {
    names.iter().map(Node::new).collect()
}
