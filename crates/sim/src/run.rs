//! The orchestration of a run: which experiments run, in which order, and
//! what runs in parallel.
//!
//! `rayon::join(rendezvous, key experiments)`: rendezvous hashes its own
//! strings, so it fills the gaps the key experiments' serial steps leave
//! (placement builds, victim choice). The key experiments hash the keys once,
//! then run modulo → single → seeds → failure → weights → compare; cost is
//! computed from modulo and single, and bounded runs last on its own
//! Zipf-drawn requests.

use std::time::Instant;

use ringwise::{Error, Node, Placement};

use crate::config::{Config, Experiment};
use crate::error::SimError;
use crate::keys::Keys;
use crate::progress::Progress;
use crate::report::Report;
use crate::skipped::Skipped;
use crate::{bounded, compare, cost, failure, modulo, rendezvous, seeds, single, weights};

/// Runs the selected experiments with the configured algorithm, every
/// placement built by [`Config::placement`].
pub fn run(config: &Config, progress: &dyn Progress) -> Result<Report, SimError> {
    run_with(config, progress, |nodes: Vec<Node>, vnodes| {
        config.placement(nodes, vnodes)
    })
}

/// Runs the experiments with placements made by `build(nodes, vnodes)`
/// (the comparison, which runs every built-in algorithm, builds its own
/// with [`Config::placement_of`]).
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
    // What runs, and what the report's params say ran.
    let config = &config.as_run();
    let started = Instant::now();
    progress.start(total_units(config));
    let (rendezvous, keyed) = rayon::join(
        || {
            let result = match config.wants(Experiment::Rendezvous) {
                true => Some(rendezvous::run(config, &build)).transpose(),
                false => Ok(None),
            };
            progress.advance(config.rendezvous_keys.min(config.keys));
            result
        },
        || KeyResults::run(config, progress, &build),
    );
    let keyed = keyed?;
    let cost = config
        .wants(Experiment::Cost)
        .then(|| cost::Cost::new(config, keyed.modulo.as_deref(), keyed.single.as_deref()));
    let bounded = config
        .wants(Experiment::Bounded)
        .then(|| bounded::run(config, &build))
        .transpose()?;
    Ok(Report {
        params: config.clone(),
        modulo: keyed.modulo.filter(|_| config.wants(Experiment::Modulo)),
        single: keyed.single.filter(|_| config.wants(Experiment::Single)),
        seeds: keyed.seeds,
        failure: keyed.failure,
        weights: keyed.weights,
        rendezvous: rendezvous?,
        cost,
        compare: keyed.compare,
        bounded,
        skipped: keyed.skipped,
        elapsed_s: started.elapsed().as_secs_f64(),
    })
}

/// The results of the experiments on the keys `user:0..`.
struct KeyResults {
    modulo: Option<Vec<modulo::ModuloRow>>,
    single: Option<Vec<single::SingleRow>>,
    seeds: Option<Vec<seeds::SeedsRow>>,
    failure: Option<Vec<failure::FailureRow>>,
    weights: Option<Vec<weights::WeightsRow>>,
    compare: Option<Vec<compare::CompareRow>>,
    skipped: Vec<Skipped>,
}

impl KeyResults {
    /// Runs the experiments on the keys `user:0..`, which share one hashing
    /// pass. Modulo and single also run when only the cost model needs them.
    fn run<P, B>(config: &Config, progress: &dyn Progress, build: &B) -> Result<Self, SimError>
    where
        P: Placement,
        B: Fn(Vec<Node>, u32) -> Result<P, Error> + Sync,
    {
        let keys = Keys::new(config.hash, config.keys);
        progress.advance(keys.len());
        let cost_needs = config.wants(Experiment::Cost);
        let modulo = (config.wants(Experiment::Modulo) || cost_needs)
            .then(|| modulo::run(config.nodes, &keys));
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
            .then(|| compare::run(config, &keys, &mut skipped))
            .transpose()?;
        Ok(KeyResults {
            modulo,
            single,
            seeds,
            failure,
            weights,
            compare,
            skipped,
        })
    }
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

/// The units [`Progress`] will count: every pass over the keys that
/// reports progress ([`Config::progress_passes`]). A validated config is
/// within `MAX_WORK`, far below `u64::MAX`; saturating is only a guard.
fn total_units(config: &Config) -> u64 {
    u64::try_from(config.progress_passes()).unwrap_or(u64::MAX)
}
