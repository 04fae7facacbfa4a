//! Experiment 4: the most loaded node fails.
//!
//! Build the ring of `node-0 .. node-{N-1}`, remove the node holding the most
//! keys (ties: the one whose first key comes first, as Python's
//! `Counter.most_common` does), and see who receives its keys. With one
//! virtual node all of them land on one neighbour (a cascade waiting to
//! happen); with 100 they spread over every survivor. The experiment also
//! checks the ring's promise that no other key moves.

use rayon::prelude::*;
use ringwise::{Error, Node, Placement};
use serde::Serialize;

use crate::config::{Config, ConfigError, nodes_named};
use crate::error::SimError;
use crate::keys::Keys;
use crate::progress::Progress;
use crate::tally::{Load, Numbering, par_load};
use crate::weights::Shares;

/// One vnodes value of the failure experiment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailureRow {
    pub vnodes: u32,
    /// The removed node.
    pub victim: String,
    /// Its share of the keys before.
    pub victim_share: f64,
    /// Nodes that received at least one of its keys.
    pub receivers: u64,
    /// The node that received the most (`None` only if nothing moved).
    pub neighbor: Option<String>,
    pub neighbor_before: f64,
    pub neighbor_after: f64,
    /// True when every key that moved had belonged to the victim.
    pub only_victim_moved: bool,
    /// Every node's share before and after (for the plot).
    pub shares_before: Shares,
    pub shares_after: Shares,
}

/// Runs the experiment for every `config.failure_vnodes`.
pub fn run<P: Placement>(
    config: &Config,
    keys: &Keys,
    build: &(impl Fn(Vec<Node>, u32) -> Result<P, Error> + Sync),
    progress: &dyn Progress,
) -> Result<Vec<FailureRow>, SimError> {
    let (names, _) = config.names("node");
    config
        .failure_vnodes
        .iter()
        .map(|&vnodes| one(vnodes, &names, keys, build, progress))
        .collect()
}

fn one<P: Placement>(
    vnodes: u32,
    names: &[String],
    keys: &Keys,
    build: &(impl Fn(Vec<Node>, u32) -> Result<P, Error> + Sync),
    progress: &dyn Progress,
) -> Result<FailureRow, SimError> {
    let n = names.len();
    let before = build(nodes_named(names), vnodes)?;
    let before_ids = Numbering::new(&before, names);
    let mut load = Load::new(n);
    keys.for_each_chunk(|first, hashes| {
        load = std::mem::replace(&mut load, Load::new(n)).merge(par_load(
            &before,
            &before_ids,
            n,
            first,
            hashes,
        ));
        progress.advance(hashes.len() as u64);
    });
    let Some(victim) = load.most_common() else {
        return Err(no_owner());
    };
    let after = before.without_node(&names[victim])?;
    let after_ids = Numbering::new(&after, names);

    let mut received = Load::new(n);
    let mut only_victim_moved = true;
    keys.for_each_chunk(|first, hashes| {
        let (part, only) = hashes
            .par_chunks(1 << 14)
            .enumerate()
            .map(|(c, chunk)| {
                let mut got = Load::new(n);
                let mut only = true;
                let base = first + (c << 14) as u64;
                for (i, &h) in chunk.iter().enumerate() {
                    let b = before_ids.owner(&before, h);
                    let a = after_ids.owner(&after, h);
                    if a != b {
                        only &= b == victim;
                        got.add(a, base + i as u64);
                    }
                }
                (got, only)
            })
            .reduce(|| (Load::new(n), true), |x, y| (x.0.merge(y.0), x.1 && y.1));
        received = std::mem::replace(&mut received, Load::new(n)).merge(part);
        only_victim_moved &= only;
        progress.advance(hashes.len() as u64);
    });

    let total = keys.len() as f64;
    let neighbor = received.most_common();
    let share = |count: u64| count as f64 / total;
    let after_count = |i: usize| {
        if i == victim {
            0
        } else {
            load.count[i] + received.count[i]
        }
    };
    Ok(FailureRow {
        vnodes,
        victim: names[victim].clone(),
        victim_share: share(load.count[victim]),
        receivers: received.count.iter().filter(|&&c| c > 0).count() as u64,
        neighbor: neighbor.map(|i| names[i].clone()),
        neighbor_before: neighbor.map_or(0.0, |i| share(load.count[i])),
        neighbor_after: neighbor.map_or(0.0, |i| share(load.count[i] + received.count[i])),
        only_victim_moved,
        shares_before: Shares(
            names
                .iter()
                .cloned()
                .zip(load.count.iter().map(|&c| share(c)))
                .collect(),
        ),
        shares_after: Shares(
            names
                .iter()
                .cloned()
                .enumerate()
                .map(|(i, name)| (name, share(after_count(i))))
                .collect(),
        ),
    })
}

/// With at least one key and one node some node owns a key; a placement
/// that owns nothing is a bug in it, reported instead of panicking.
fn no_owner() -> SimError {
    ConfigError {
        option: "algo",
        message: "the placement assigned no key to any node".into(),
    }
    .into()
}
