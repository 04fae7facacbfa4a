//! Experiment 3: the single-ring experiment over many node-name sets.
//!
//! One ring shows one random outcome; the article repeats the join on 30
//! name sets (`s0-0 .. s0-9` + `s0-10`, ..., `s29-...`) over the first
//! 100,000 keys and reports, per vnodes value, the min / mean / max share of
//! keys moved and the mean `max` load and `spread`. Its point: the mean stays
//! near `1/(N+1)` for every V; more virtual nodes make the outcome
//! predictable, not smaller.

use rayon::prelude::*;
use ringwise::{Error, Node, Placement};
use serde::Serialize;

use crate::config::Config;
use crate::error::SimError;
use crate::keys::Keys;
use crate::progress::Progress;
use crate::single::{SingleRow, join_pair};
use crate::tally::Join;

/// One vnodes value over every name set.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeedsRow {
    pub vnodes: u32,
    pub moved_min: f64,
    pub moved_avg: f64,
    pub moved_max: f64,
    /// Mean over the sets of the largest load / average.
    pub max_avg: f64,
    /// Mean over the sets of the spread.
    pub spread_avg: f64,
    /// The share moved in each set, in seed order (for the plot).
    pub moved_runs: Vec<f64>,
}

/// Runs every (seed, vnodes) pair in parallel.
pub fn run<P: Placement>(
    config: &Config,
    keys: &Keys,
    build: &(impl Fn(Vec<Node>, u32) -> Result<P, Error> + Sync),
    progress: &dyn Progress,
) -> Result<Vec<SeedsRow>, SimError> {
    // The tally ignores key order, so sort once and let every ring sweep.
    let mut sample = keys.prefix(config.seed_keys);
    sample.sort_unstable();
    let tasks: Vec<(u32, u32)> = config
        .vnodes
        .iter()
        .flat_map(|&v| (0..config.seeds).map(move |s| (v, s)))
        .collect();
    let rows: Vec<SingleRow> = tasks
        .par_iter()
        .map(|&(vnodes, seed)| {
            let (names, joining) = config.names(&format!("s{seed}"));
            let (before, after, b, a) = join_pair(build, &names, &joining, vnodes)?;
            let join = Join {
                before: &before,
                after: &after,
                before_ids: &b,
                after_ids: &a,
                nodes: names.len(),
            };
            let tally = join.tally(&sample);
            progress.advance(sample.len() as u64);
            Ok(SingleRow::from_tally(
                vnodes,
                &tally,
                sample.len() as u64,
                names.len(),
            ))
        })
        .collect::<Result<_, Error>>()?;
    Ok(config
        .vnodes
        .iter()
        .zip(rows.chunks(config.seeds as usize))
        .map(|(&vnodes, runs)| summarize(vnodes, runs))
        .collect())
}

fn summarize(vnodes: u32, runs: &[SingleRow]) -> SeedsRow {
    let moved: Vec<f64> = runs.iter().map(|r| r.moved).collect();
    let mean = |values: &mut dyn Iterator<Item = f64>| values.sum::<f64>() / runs.len() as f64;
    SeedsRow {
        vnodes,
        moved_min: moved.iter().copied().fold(f64::INFINITY, f64::min),
        moved_avg: mean(&mut moved.iter().copied()),
        moved_max: moved.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        max_avg: mean(&mut runs.iter().map(|r| r.max)),
        spread_avg: mean(&mut runs.iter().map(|r| r.spread)),
        moved_runs: moved,
    }
}
