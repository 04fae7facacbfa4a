//! `ringwise inspect`: points and exact ownership per node.

use std::io::Write;

use clap::ValueEnum;

use crate::Failure;
use crate::cluster::ClusterArgs;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    cluster: ClusterArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let spec = args.cluster.spec()?;
    let ring = spec.ring().map_err(Failure::data)?;
    let stats = ring.stats();
    let text = match args.format {
        Format::Json => {
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
                "algorithm": spec.algorithm.to_string(), "hash": spec.hash.name(),
                "vnodes": spec.vnodes, "points": ring.point_count(), "nodes": nodes,
                "max": stats.max, "min": stats.min, "spread": stats.spread,
            });
            format!("{doc}\n")
        }
        Format::Text => table(&spec, &ring, &stats),
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(Failure::io)
}

fn table(
    spec: &ringwise::ClusterSpec,
    ring: &ringwise::Ring,
    stats: &ringwise::RingStats,
) -> String {
    let width = stats
        .nodes
        .iter()
        .map(|n| n.name.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let mut out = format!(
        "algorithm {}, hash {}, vnodes {}: {} nodes, {} points\n",
        spec.algorithm,
        spec.hash,
        spec.vnodes,
        ring.len(),
        ring.point_count()
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
