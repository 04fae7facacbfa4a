//! The cluster options of `lookup` and `inspect`: `--cluster FILE` or
//! `--nodes NAME[=WEIGHT][@ZONE],...`, with `--algo`, `--hash`, `--secret`,
//! `--vnodes`, `--table-size` and `--probes` overriding what the file says.

use std::path::PathBuf;

use anyhow::{Context, anyhow};
use clap::Args;
use ringwise::{Algorithm, ClusterSpec, Node, StableHash};

use crate::Failure;
use crate::algo::AlgoArgs;

#[derive(Debug, Args)]
#[group(skip)]
#[command(group(clap::ArgGroup::new("source").args(["cluster", "nodes"]).required(true)))]
pub struct ClusterArgs {
    /// Cluster file (TOML): algorithm, hash, vnodes, [[nodes]].
    #[arg(long, value_name = "FILE")]
    cluster: Option<PathBuf>,
    /// Nodes on the command line: NAME[=WEIGHT][@ZONE],...
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    nodes: Option<String>,
    #[command(flatten)]
    algo: AlgoArgs,
    /// Virtual nodes per unit of weight (ring; default 160).
    #[arg(long, value_name = "V")]
    vnodes: Option<u32>,
    /// Lookup table size, a prime (maglev; default 65537).
    #[arg(long, value_name = "M")]
    table_size: Option<u64>,
    /// Probes per key (multiprobe; default 21).
    #[arg(long, value_name = "K")]
    probes: Option<u32>,
}

impl ClusterArgs {
    /// The validated spec these options describe.
    pub fn spec(&self) -> Result<ClusterSpec, Failure> {
        let mut spec = match (&self.cluster, &self.nodes) {
            (Some(path), _) => read_file(path)?,
            (None, Some(list)) => ClusterSpec::new(Algorithm::default(), parse_nodes(list)?)
                .context("--nodes")
                .map_err(Failure::data)?,
            (None, None) => {
                return Err(Failure::data(anyhow!(
                    "give --cluster FILE or --nodes LIST"
                )));
            }
        };
        let params = &mut spec.params;
        if let Some(algorithm) = self.algo.algo {
            if self.cluster.is_none() || algorithm != spec.algorithm {
                params.hash = algorithm.default_hash();
            }
            spec.algorithm = algorithm;
        }
        if self.algo.hash.is_some() || self.algo.secret.is_some() {
            let name = self.algo.hash.unwrap_or(params.hash.name());
            params.hash = StableHash::from_name(name, self.algo.secret.as_deref())
                .context("--hash/--secret")
                .map_err(Failure::data)?;
        }
        if let Some(vnodes) = self.vnodes {
            params.vnodes = vnodes;
        }
        if let Some(size) = self.table_size {
            params.table_size = size;
        }
        if let Some(probes) = self.probes {
            params.probes = probes;
        }
        Ok(spec)
    }
}

fn read_file(path: &PathBuf) -> Result<ClusterSpec, Failure> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read cluster file {}", path.display()))
        .map_err(Failure::no_input)?;
    ClusterSpec::from_toml(&text)
        .with_context(|| format!("in {}", path.display()))
        .map_err(Failure::data)
}

/// Parses `a,b=2,c=0.5@zone-1`.
fn parse_nodes(list: &str) -> Result<Vec<Node>, Failure> {
    if list.trim().is_empty() {
        return Err(Failure::data(anyhow!(
            "--nodes: the node list is empty; give at least one NAME, e.g. --nodes a,b,c"
        )));
    }
    list.split(',')
        .enumerate()
        .map(|(i, item)| parse_node(i + 1, item.trim()))
        .collect()
}

fn parse_node(position: usize, item: &str) -> Result<Node, Failure> {
    let (rest, zone) = match item.rsplit_once('@') {
        Some((rest, zone)) => (rest, Some(zone)),
        None => (item, None),
    };
    let (name, weight) = match rest.rsplit_once('=') {
        Some((name, weight)) => {
            let weight = weight.trim().parse::<f64>().map_err(|_| {
                Failure::data(anyhow!(
                    "--nodes: node {position} ({name:?}) has weight {weight:?}, which is not \
                     a number; write NAME=WEIGHT, e.g. {name}=2"
                ))
            })?;
            (name, weight)
        }
        None => (rest, 1.0),
    };
    if name.is_empty() {
        return Err(Failure::data(anyhow!(
            "--nodes: node {position} has an empty name; remove the extra comma or name it"
        )));
    }
    let mut node = Node::new(name).weight(weight);
    node.zone = zone.map(str::to_owned);
    Ok(node)
}
