//! The cluster options shared by every command: `--cluster FILE` or
//! `--nodes NAME[=WEIGHT][@ZONE],...`, with `--hash`, `--secret`, `--vnodes`
//! overriding what the file says.

use std::path::PathBuf;

use anyhow::{Context, anyhow};
use clap::Args;
use ringwise::{Algorithm, ClusterSpec, Node, NodeTable, Params, StableHash};

use crate::Failure;

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
    /// Placement algorithm: ring (default), rendezvous, jump, memento, maglev, multiprobe, slots.
    #[arg(long, value_name = "ALGO")]
    algo: Option<String>,
    /// Hash of keys and points: md5, xxh3 (default), xxh64, murmur3, fnv1a64, siphash, redis-crc16.
    #[arg(long, value_name = "HASH")]
    hash: Option<String>,
    /// 128-bit secret as 32 hex digits, for --hash siphash.
    #[arg(long, value_name = "HEX")]
    secret: Option<String>,
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
            (None, Some(list)) => {
                let nodes = parse_nodes(list)?;
                ClusterSpec {
                    algorithm: Default::default(),
                    hash: Algorithm::default().default_hash(),
                    vnodes: ringwise::DEFAULT_VNODES,
                    table_size: Params::DEFAULT.table_size,
                    probes: Params::DEFAULT.probes,
                    epsilon: None,
                    listed: nodes.iter().map(|n| n.name.clone()).collect(),
                    nodes: NodeTable::new(nodes)
                        .context("--nodes")
                        .map_err(Failure::data)?,
                }
            }
            (None, None) => {
                return Err(Failure::data(anyhow!(
                    "give --cluster FILE or --nodes LIST"
                )));
            }
        };
        if let Some(name) = &self.algo {
            let algorithm: Algorithm = name.parse().context("--algo").map_err(Failure::data)?;
            if self.cluster.is_none() || algorithm != spec.algorithm {
                spec.hash = algorithm.default_hash();
            }
            spec.algorithm = algorithm;
        }
        if self.hash.is_some() || self.secret.is_some() {
            let name = self.hash.as_deref().unwrap_or(spec.hash.name());
            spec.hash = StableHash::from_name(name, self.secret.as_deref())
                .context("--hash/--secret")
                .map_err(Failure::data)?;
        }
        if let Some(vnodes) = self.vnodes {
            spec.vnodes = vnodes;
        }
        if let Some(size) = self.table_size {
            spec.table_size = size;
        }
        if let Some(probes) = self.probes {
            spec.probes = probes;
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
