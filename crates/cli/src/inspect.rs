//! `ringwise inspect`: points and ownership per node.
//!
//! For a ring the shares are exact (summed arcs of the hash space). Other
//! algorithms have no arcs to sum, so their shares are measured on
//! 1,000,000 sample keys `inspect:0..` through the cluster's key hash, a
//! block of keys per batch call ([`Keyed::owners_into`]).
//!
//! Both agree with real lookups for every algorithm and hash the core
//! accepts (a ring with `fnv1a64` gets a warning: its keys' shares depend
//! on the key set), where the one hash whose values do not spread over a ring,
//! `redis-crc16`, is refused for every algorithm but `slots`. Text output
//! rounds, and switches to scientific notation for numbers too small or
//! too large to read (a node of weight 1e-6 next to one of 1e6).

use std::fmt::Write as _;
use std::io::Write;

use ringwise::{AnyPlacement, Keyed, Placement, RingStats, StableHash};

use crate::Failure;
use crate::cluster::ClusterArgs;
use crate::format::{Format, JSON_VERSION, Json, readable, write_json};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    cluster: ClusterArgs,
    /// Output format.
    #[arg(long, default_value_t = Format::Text,
          value_parser = Format::parser(&[Format::Text, Format::Json]))]
    format: Format,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let (spec, keyed) = args.cluster.build()?;
    // The ring's exact view, asked for once.
    let ring = keyed.placement().as_ring();
    let fnv = [StableHash::Fnv1a64, StableHash::Fnv1a64Twemproxy];
    if ring.is_some() && fnv.contains(&spec.params.hash) {
        // FNV-1a does not spread keys that differ in their last bytes
        // (`key-1`, `key-2`...) evenly over the 64-bit space, and how
        // unevenly depends on the key set (4 nodes: a node with 8.9 % of
        // the arcs got 11 % of `key-0..20000`), so no share printed here
        // can hold for every key set.
        // twemproxy's 32-bit `fnv1a_64` (its default) is worse still.
        eprintln!(
            "ringwise: warning: {} does not spread similar keys evenly over a ring: \
             real keys may get shares several points away from these arcs; prefer xxh3 \
             (or, for twemproxy, hash: md5)",
            spec.params.hash
        );
    }
    let stats = match ring {
        Some(ring) => ring.stats(),
        None => sampled(&keyed),
    };
    let points = ring.map_or(0, |r| r.point_count());
    let mut out = std::io::stdout().lock();
    if args.format == Format::Json {
        let nodes: Vec<_> = stats
            .nodes
            .iter()
            .map(|n| {
                serde_json::json!({
                    "name": n.name, "weight": n.weight, "zone": n.zone,
                    "points": n.points, "share": n.share,
                    "expected": n.expected, "ratio": n.ratio(),
                })
            })
            .collect();
        let doc = serde_json::json!({
            "version": JSON_VERSION,
            "algorithm": spec.algorithm.to_string(), "hash": spec.params.hash.name(),
            "vnodes": spec.params.vnodes, "points": points, "nodes": nodes,
            "exact": ring.is_some(),
            "max": stats.max, "min": stats.min, "spread": stats.spread,
        });
        return write_json(&mut out, &doc, Json::Line).map_err(Failure::io);
    }
    out.write_all(table(&spec, points, ring.is_some(), &stats).as_bytes())
        .map_err(Failure::io)
}

const SAMPLE: u64 = 1_000_000;

/// Sample keys resolved per batch call.
const BLOCK: u64 = 1024;

/// Shares measured on `SAMPLE` keys, for placements without arcs.
fn sampled(keyed: &Keyed<AnyPlacement>) -> RingStats {
    let nodes = keyed.placement().nodes();
    let mut counts = vec![0u64; nodes.len()];
    let mut keys = vec![String::new(); BLOCK as usize];
    let mut owners = Vec::with_capacity(BLOCK as usize);
    for start in (0..SAMPLE).step_by(BLOCK as usize) {
        let block = &mut keys[..(SAMPLE - start).min(BLOCK) as usize];
        for (i, key) in (start..).zip(block.iter_mut()) {
            key.clear();
            let _ = write!(key, "inspect:{i}");
        }
        keyed.owners_into(block, &mut owners);
        for &id in &owners {
            counts[id as usize] += 1;
        }
    }
    let shares: Vec<f64> = counts.iter().map(|&c| c as f64 / SAMPLE as f64).collect();
    RingStats::from_shares(nodes, &[], &shares)
}

fn table(spec: &ringwise::ClusterSpec, points: usize, exact: bool, stats: &RingStats) -> String {
    let width = stats
        .nodes
        .iter()
        .map(|n| n.name.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let mut out = format!(
        "algorithm {}, hash {}, vnodes {}: {} nodes, {} points{}\n",
        spec.algorithm,
        spec.params.hash,
        spec.params.vnodes,
        stats.nodes.len(),
        points,
        if !exact {
            " (shares sampled on 1,000,000 keys)"
        } else {
            ""
        }
    );
    out += &format!(
        "{:<width$}  {:>8}  {:>8}  {:>8}  {:>8}  {:>6}  zone\n",
        "node", "weight", "points", "share", "expected", "ratio"
    );
    for n in &stats.nodes {
        out += &format!(
            "{:<width$}  {:>8}  {:>8}  {:>8}  {:>8}  {:>6}  {}\n",
            n.name,
            weight(n.weight),
            n.points,
            percent(n.share, 3),
            percent(n.expected, 3),
            readable(n.ratio(), 3),
            n.zone.as_deref().unwrap_or("-"),
        );
    }
    out += &format!(
        "max {}  min {}  spread {} (stddev/mean of share/expected)\n",
        readable(stats.max, 3),
        readable(stats.min, 3),
        percent(stats.spread, 1)
    );
    out
}

/// A weight as written when short (`2`, `0.5`), else in scientific
/// notation (`1.000e-6` rather than `0.000001000000000000001`).
fn weight(weight: f64) -> String {
    let plain = weight.to_string();
    if plain.len() <= 8 && (1e-3..1e7).contains(&weight) {
        return plain;
    }
    format!("{weight:.3e}")
}

/// A fraction as a percentage, rounded ([`readable`]).
fn percent(fraction: f64, decimals: usize) -> String {
    format!("{}%", readable(fraction * 100.0, decimals))
}
