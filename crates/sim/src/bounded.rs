//! Bounded loads under skew: Zipf(1.1) key popularity on the configured
//! algorithm (a ring of `VNODES` vnodes by default), with and without the
//! `(1+ε)` bound (Mirrokni, Thorup, Zadimoghaddam).
//!
//! `REQUESTS` requests draw keys `user:0 .. user:{DISTINCT-1}` with
//! probability ∝ 1/rank^1.1 (a seeded SplitMix64 and the inverse CDF, so the
//! stream is the same in every run). The plain placement sends every request
//! for a key to its owner, so the node owning the hottest keys takes far
//! more than its share; with bounded loads no node exceeds ⌈(1+ε)·m·share⌉.

use ringwise::{Bounded, Error, KeyHasher, Node, Placement};
use serde::Serialize;

use crate::config::{Config, nodes_named};
use crate::error::SimError;

/// Distinct keys and requests of the experiment.
pub const DISTINCT: u64 = 100_000;
pub const REQUESTS: usize = 1_000_000;
/// Zipf exponent.
pub const EXPONENT: f64 = 1.1;
/// Ring vnodes (other algorithms ignore them).
pub const VNODES: u32 = 160;

/// The experiment's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BoundedRow {
    pub nodes: u32,
    pub requests: usize,
    pub epsilon: f64,
    /// Largest node load over the mean, plain placement.
    pub plain_max: f64,
    /// The same with bounded loads.
    pub bounded_max: f64,
    /// Share of requests not served by their key's owner.
    pub diverted: f64,
}

/// SplitMix64: a tiny, well-known generator; seeded, so runs repeat.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Key ranks drawn from Zipf(`EXPONENT`) over `DISTINCT` keys.
fn zipf_ranks() -> Vec<usize> {
    let mut cdf = Vec::with_capacity(DISTINCT as usize);
    let mut total = 0.0;
    for rank in 1..=DISTINCT {
        total += (rank as f64).powf(-EXPONENT);
        cdf.push(total);
    }
    let mut state = 0x5eed;
    (0..REQUESTS)
        .map(|_| {
            let u = (splitmix(&mut state) >> 11) as f64 / (1u64 << 53) as f64 * total;
            cdf.partition_point(|&c| c < u).min(cdf.len() - 1)
        })
        .collect()
}

/// Runs the experiment with `config.epsilon` on `config.nodes` nodes placed
/// by `build`.
pub fn run<P: Placement>(
    config: &Config,
    build: &(impl Fn(Vec<Node>, u32) -> Result<P, Error> + Sync),
) -> Result<BoundedRow, SimError> {
    let epsilon = config.epsilon;
    let (names, _) = config.names("node");
    let placement = build(nodes_named(&names), VNODES)?;
    let key_hashes: Vec<u64> = (0..DISTINCT)
        .map(|i| config.hash.hash(format!("user:{i}").as_bytes()))
        .collect();
    let requests: Vec<u64> = zipf_ranks().into_iter().map(|r| key_hashes[r]).collect();
    let n = placement.len();
    let mean = REQUESTS as f64 / n as f64;
    let mut plain = vec![0u64; n];
    for &h in &requests {
        plain[placement.owner(h).unwrap_or(0) as usize] += 1;
    }
    let bounded = Bounded::new(placement, epsilon)?;
    let owners = bounded.assign(&requests);
    let mut load = vec![0u64; n];
    let mut diverted = 0usize;
    for (&h, &o) in requests.iter().zip(&owners) {
        load[o as usize] += 1;
        diverted += usize::from(bounded.placement().owner(h) != Some(o));
    }
    let max = |l: &[u64]| l.iter().copied().max().unwrap_or(0) as f64 / mean;
    Ok(BoundedRow {
        nodes: config.nodes,
        requests: REQUESTS,
        epsilon,
        plain_max: max(&plain),
        bounded_max: max(&load),
        diverted: diverted as f64 / REQUESTS as f64,
    })
}
