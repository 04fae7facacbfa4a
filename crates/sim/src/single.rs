//! Experiment 2: one ring, node `N` joins (the article's `measure`).
//!
//! For each vnodes value: build the ring of `node-0 .. node-{N-1}`, add
//! `node-N`, and compare every key's owner. The columns are the article's:
//! `moved` (share of keys whose owner changed), `to_new` (share of the moved
//! keys that went to the new node: exactly 1 for a ring), `donors` (old
//! owners that lost keys), and the load before the change relative to the
//! average: `max`, `min` and `spread` (population stddev / average).

use rayon::prelude::*;
use ringwise::{Error, Node, Placement};
use serde::Serialize;

use crate::config::{Config, nodes_named};
use crate::error::SimError;
use crate::keys::Keys;
use crate::progress::Progress;
use crate::tally::{Join, JoinTally, Numbering, pstdev};

/// One vnodes value of the single-ring experiment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SingleRow {
    pub vnodes: u32,
    pub moved: f64,
    pub to_new: f64,
    pub donors: u64,
    pub max: f64,
    pub min: f64,
    pub spread: f64,
}

impl SingleRow {
    /// The article's figures from a tally over `keys` keys and `nodes` nodes.
    pub(crate) fn from_tally(vnodes: u32, t: &JoinTally, keys: u64, nodes: usize) -> Self {
        let average = keys as f64 / nodes as f64;
        let load = &t.load[..nodes];
        SingleRow {
            vnodes,
            moved: t.moved as f64 / keys as f64,
            to_new: t.to_new as f64 / t.moved.max(1) as f64,
            donors: t.donors.iter().filter(|&&d| d).count() as u64,
            max: load.iter().copied().max().unwrap_or(0) as f64 / average,
            min: load.iter().copied().min().unwrap_or(0) as f64 / average,
            spread: pstdev(load) / average,
        }
    }
}

/// A placement of `names`, the same after `joining` joins, and numberings
/// for both (the joining node is number `names.len()`).
pub(crate) fn join_pair<P: Placement>(
    build: &(impl Fn(Vec<Node>, u32) -> Result<P, Error> + Sync),
    names: &[String],
    joining: &str,
    vnodes: u32,
) -> Result<(P, P, Numbering, Numbering), Error> {
    let before = build(nodes_named(names), vnodes)?;
    let after = before.with_node(Node::new(joining))?;
    let all: Vec<String> = names.iter().cloned().chain([joining.to_owned()]).collect();
    let (b, a) = (Numbering::new(&before, &all), Numbering::new(&after, &all));
    Ok((before, after, b, a))
}

/// Runs the experiment for every `config.vnodes`.
pub fn run<P: Placement>(
    config: &Config,
    keys: &Keys,
    build: &(impl Fn(Vec<Node>, u32) -> Result<P, Error> + Sync),
    progress: &dyn Progress,
) -> Result<Vec<SingleRow>, SimError> {
    let (names, joining) = config.names("node");
    let n = names.len();
    let joins = config
        .vnodes
        .iter()
        .map(|&vnodes| join_pair(build, &names, &joining, vnodes))
        .collect::<Result<Vec<_>, Error>>()?;
    let mut totals = vec![JoinTally::new(n); joins.len()];
    keys.for_each_chunk(|_, hashes| {
        // The tally ignores key order: sort once, then every ring sweeps.
        let mut sorted = hashes.to_vec();
        sorted.par_sort_unstable();
        for ((before, after, b, a), total) in joins.iter().zip(totals.iter_mut()) {
            let join = Join {
                before,
                after,
                before_ids: b,
                after_ids: a,
                nodes: n,
            };
            let t = sorted
                .par_chunks(1 << 16)
                .map(|chunk| join.tally(chunk))
                .reduce(|| JoinTally::new(n), JoinTally::merge);
            *total = std::mem::replace(total, JoinTally::new(n)).merge(t);
        }
        progress.advance(hashes.len() as u64);
    });
    let rows = config.vnodes.iter().zip(&totals);
    Ok(rows
        .map(|(&v, t)| SingleRow::from_tally(v, t, keys.len(), n))
        .collect())
}
