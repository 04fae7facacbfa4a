//! `ringwise simulate`: the seed article's experiments (see `ringwise-sim`).
//!
//! Every algorithm runs them, the compatibility flavours (ketama, nginx,
//! envoy-ring, grpc-ring, cassandra, varnish-shard, haproxy, envoy-rendezvous) included, with `--flavor`,
//! `--min-ring-size`, `--max-ring-size`, `--num-tokens` and
//! `--shard-replicas` as in `lookup`. Without `--hash` keys go through the
//! article's md5, except on the compatibility flavours, whose keys go
//! through their peer's own key hash (md5-le32, crc32, xxh64,
//! murmur3-cassandra, varnish-key; twemproxy's fnv1a64-twemproxy), as their
//! clients hash them.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::anyhow;
use indicatif::{ProgressBar, ProgressStyle};
use ringwise::{Params, StableHash};
use ringwise_sim::{Config, Experiment, Progress, Quiet};

use crate::Failure;
use crate::algo::AlgoArgs;
use crate::format::{Format, Json, Versioned, write_json};
use crate::params::ParamArgs;

#[derive(Debug, clap::Args)]
#[command(
    mut_arg("algo", |a| a
        .default_value(Config::default().algo.name())
        .help("Placement algorithm of the ring experiments")),
    mut_arg("hash", |a| a
        .help("Hash of keys, points and rendezvous scores [default: md5, the article's; \
               ketama, nginx, envoy-ring, grpc-ring, cassandra, varnish-shard, haproxy, \
               envoy-rendezvous: their peer's key hash]")),
)]
pub struct Args {
    #[command(flatten)]
    algo: AlgoArgs,
    #[command(flatten)]
    flavors: ParamArgs<true>,
    /// Keys user:0 .. user:{KEYS-1}; at most 10^9 (about a minute per 10^8
    /// keys per experiment pass on two cores; memory stays near 64 MB). A
    /// run is refused up front (exit 2) past 2·10^10 key lookups plus seeds
    /// ring points (about 10 minutes).
    #[arg(long, default_value_t = 1_000_000)]
    keys: u64,
    /// Nodes before the change: node-0 .. node-{NODES-1} (compare: NODES
    /// and 10 x NODES).
    #[arg(long, default_value_t = 10)]
    nodes: u32,
    /// Virtual nodes of the single and seeds experiments (ring only: other
    /// algorithms run once, with the first value).
    #[arg(long, default_value = "1,10,100,1000", value_name = "LIST")]
    vnodes: String,
    /// Node-name sets of the seeds experiment (at most 10,000; each costs
    /// SEED_KEYS lookups and two ring builds per vnodes value).
    #[arg(long, default_value_t = 30)]
    seeds: u32,
    /// Keys per name set in the seeds experiment (the first ones; at most
    /// 8,000,000, held sorted in memory).
    #[arg(long, default_value_t = 100_000)]
    seed_keys: u64,
    /// Virtual nodes of the failure experiment.
    #[arg(long, default_value = "1,100", value_name = "LIST")]
    failure_vnodes: String,
    /// Virtual nodes of the weights experiment.
    #[arg(long, default_value = "1000,100", value_name = "LIST")]
    weight_vnodes: String,
    /// Keys of the rendezvous experiment (the first ones).
    #[arg(long, default_value_t = 200_000)]
    rendezvous_keys: u64,
    /// Experiments to run: modulo,single,seeds,failure,weights,rendezvous,cost.
    #[arg(
        long,
        value_name = "LIST",
        default_value = "modulo,single,seeds,failure,weights,rendezvous,cost"
    )]
    experiments: String,
    /// Requests per second of the cost model's cache.
    #[arg(long, default_value_t = 100_000.0)]
    rps: f64,
    /// Hit rate of the cost model's cache (0..1).
    #[arg(long, default_value_t = 0.95)]
    hit_rate: f64,
    /// Data held by the cost model's store (e.g. 3TB, 500GB, 2TiB).
    #[arg(long, default_value = "3TB")]
    data: String,
    /// Also compare every algorithm (moves on join and leave, balance,
    /// lookup time, memory, build time) at NODES and 10 x NODES nodes on the
    /// first min(KEYS, 200000) keys, and run the bounded-loads experiment.
    /// Cost: O(min(KEYS, 200000)) lookups per algorithm and size, except
    /// the "ring, allocated 16" row, O(N^2) (1.6 s at 300 nodes, 18.5 s
    /// at 1,000): computed up to 300 nodes, reported as skipped above.
    #[arg(long)]
    compare: bool,
    /// Load bound of the bounded experiment: (1 + EPSILON) x the mean.
    #[arg(long, default_value_t = 0.25, allow_negative_numbers = true)]
    epsilon: f64,
    /// Output: terminal tables, one JSON document, or CSV sections.
    #[arg(long, default_value_t = Format::Text, value_parser = Format::parser(&Format::ALL))]
    format: Format,
    /// Also write SVG charts into DIR (spread.svg, moved.svg, failure.svg,
    /// compare.svg: those whose experiment ran).
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let config = args.config()?;
    config.validate().map_err(Failure::usage)?;
    let report = if std::io::stderr().is_terminal() && long_run(&config) {
        let bar = Bar::new();
        let report = ringwise_sim::run(&config, &bar);
        bar.0.finish_and_clear();
        report
    } else {
        ringwise_sim::run(&config, &Quiet)
    }
    .map_err(Failure::data)?;
    let mut plots = Vec::new();
    if let Some(dir) = &args.plot {
        if !ringwise_sim::plot::has_charts(&report) {
            say!(
                "ringwise: warning: --plot {}: nothing to chart; charts come from the single, seeds, \
                 failure and compare experiments, and none of them ran",
                dir.display()
            );
        }
        plots = ringwise_sim::plot::write(&report, dir).map_err(Failure::io_other)?;
    }
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Json => {
            let document =
                serde_json::to_value(Versioned::new(&report)).map_err(|e| Failure::io(e.into()))?;
            write_json(
                &mut out,
                &ringwise_sim::render::rounded(document),
                Json::Pretty,
            )
        }
        Format::Csv => out.write_all(ringwise_sim::render::csv(&report).as_bytes()),
        Format::Text => out.write_all(ringwise_sim::render::text(&report).as_bytes()),
    }
    .map_err(Failure::io)?;
    if args.format == Format::Text {
        for path in plots {
            writeln!(out, "wrote {}", path.display()).map_err(Failure::io)?;
        }
    }
    Ok(())
}

/// Runs whose progress is worth showing (the default run takes half a
/// second; ten million keys take several).
fn long_run(config: &Config) -> bool {
    config.keys >= 5_000_000
}

impl Args {
    fn config(&self) -> Result<Config, Failure> {
        let usage =
            |option: &str, message: String| Failure::usage(anyhow!("--{option}: {message}"));
        // Clap fills in the article's algorithm when none is given.
        let defaults = Config::default();
        let algo = self.algo.algo.unwrap_or(defaults.algo);
        let mut params = Params::DEFAULT;
        self.flavors.apply(&mut params);
        if self.flavors.ring_size_given() {
            // Checked together (min <= max), before any experiment runs.
            ringwise::EnvoyRing::new(params.min_ring_size, params.max_ring_size)
                .map_err(|e| usage("min-ring-size/--max-ring-size", e.to_string()))?;
        }
        let hash_name = self
            .algo
            .hash
            .unwrap_or_else(|| Config::default_hash_for(algo, &params).name());
        let hash = StableHash::from_name(hash_name, self.algo.secret.as_deref())
            .map_err(|e| usage("hash", e.to_string()))?;
        algo.check_hash(hash)
            .map_err(|e| usage("hash", e.to_string()))?;
        let mut experiments = Vec::new();
        for name in self
            .experiments
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            let e: Experiment = name.parse().map_err(|_| {
                let names: Vec<&str> = Experiment::ALL.iter().map(|e| e.name()).collect();
                usage(
                    "experiments",
                    format!("unknown experiment {name:?}: expected {}", names.join(", ")),
                )
            })?;
            if !experiments.contains(&e) {
                experiments.push(e);
            }
        }
        if self.compare {
            for e in [Experiment::Compare, Experiment::Bounded] {
                if !experiments.contains(&e) {
                    experiments.push(e);
                }
            }
        }
        experiments.sort();
        Ok(Config {
            algo,
            hash,
            params,
            keys: self.keys,
            nodes: self.nodes,
            vnodes: list("vnodes", &self.vnodes)?,
            seeds: self.seeds,
            seed_keys: self.seed_keys,
            failure_vnodes: list("failure-vnodes", &self.failure_vnodes)?,
            weight_vnodes: list("weight-vnodes", &self.weight_vnodes)?,
            rendezvous_keys: self.rendezvous_keys,
            experiments,
            rps: self.rps,
            hit_rate: self.hit_rate,
            epsilon: self.epsilon,
            data_bytes: ringwise_sim::cost::parse_size(&self.data).map_err(|m| usage("data", m))?,
        })
    }
}

/// `1,10,100` → `[1, 10, 100]`.
fn list(option: &str, text: &str) -> Result<Vec<u32>, Failure> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|item| {
            item.parse::<u32>().map_err(|_| {
                Failure::usage(anyhow!(
                    "--{option}: {item:?} is not a whole number; write a list such as 1,10,100"
                ))
            })
        })
        .collect()
}

/// An indicatif bar on stderr.
struct Bar(ProgressBar);

impl Bar {
    fn new() -> Self {
        let bar = ProgressBar::new(0);
        let style = ProgressStyle::with_template(
            "{spinner} simulate [{elapsed_precise}] {wide_bar} {percent}% eta {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        Bar(bar)
    }
}

impl Progress for Bar {
    fn start(&self, total: u64) {
        self.0.set_length(total);
    }

    fn advance(&self, units: u64) {
        self.0.inc(units);
    }
}
