//! `ringwise inspect`: points and ownership per node.
//!
//! For a ring the shares are exact (summed arcs of the hash space). Other
//! algorithms have no arcs to sum, so their shares are measured on
//! 1,000,000 sample keys `inspect:0..` through the cluster's key hash, a
//! block of keys per batch call ([`Keyed::owners_into`]).

use std::fmt::Write as _;
use std::io::Write;

use ringwise::{AnyPlacement, Keyed, Placement, RingStats};

use crate::Failure;
use crate::cluster::ClusterArgs;
use crate::format::{Format, Json, write_json};

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
    let spec = args.cluster.spec()?;
    let keyed = spec.build().map_err(Failure::data)?;
    // The ring's exact view, asked for once.
    let ring = keyed.placement().as_ring();
    let (stats, points) = match ring {
        Some(ring) => (ring.stats(), ring.point_count()),
        None => (sampled(&keyed), 0),
    };
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
            "algorithm": spec.algorithm.to_string(), "hash": spec.params.hash.name(),
            "vnodes": spec.params.vnodes, "points": points, "nodes": nodes,
            "exact": ring.is_some(),
            "max": stats.max, "min": stats.min, "spread": stats.spread,
        });
        return write_json(&mut out, &doc, Json::Line).map_err(Failure::io);
    }
    out.write_all(table(&spec, points, &stats).as_bytes())
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

fn table(spec: &ringwise::ClusterSpec, points: usize, stats: &RingStats) -> String {
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
        if points == 0 {
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
            "{:<width$}  {:>8}  {:>8}  {:>7.3}%  {:>7.3}%  {:>6.3}  {}\n",
            n.name,
            n.weight,
            n.points,
            n.share * 100.0,
            n.expected * 100.0,
            n.ratio(),
            n.zone.as_deref().unwrap_or("-"),
        );
    }
    out += &format!(
        "max {:.3}  min {:.3}  spread {:.1}% (stddev/mean of share/expected)\n",
        stats.max,
        stats.min,
        stats.spread * 100.0
    );
    out
}
