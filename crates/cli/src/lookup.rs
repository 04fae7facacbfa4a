//! `ringwise lookup`: the owner (or replica list) of each key.
//!
//! Keys come from the arguments or, with none, from stdin one per line. Keys
//! are bytes: a trailing `\n` or `\r\n` is not part of the key, anything else
//! is. Keys are read in blocks of [`BLOCK`]; with one replica per key (the
//! common case) a block is resolved by one batch call,
//! [`Keyed::owners_into`], which overlaps the placement's memory reads.
//! Output is buffered and written as it goes: every lookup succeeds once the
//! cluster is valid, so an error can only come before the first line or
//! from I/O.

use std::io::{self, BufRead, BufWriter, Write};

use anyhow::anyhow;
use ringwise::{AnyPlacement, Bounded, Keyed, NodeId, NodeTable, Placement, Ring};
use serde::Serialize;

use crate::Failure;
use crate::cluster::ClusterArgs;
use crate::format::{Format, Json, write_json};

/// Keys read and resolved together.
const BLOCK: usize = 1024;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    cluster: ClusterArgs,
    /// Number of distinct nodes to list per key, in preference order.
    #[arg(long, value_name = "R", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..))]
    replicas: u32,
    /// Prefer replicas in zones not used yet (nodes need `zone`s).
    #[arg(long)]
    zones: bool,
    /// Bounded loads: place the given keys (all of them are read first) so
    /// that no node holds more than (1 + EPSILON) x its fair share.
    #[arg(long, value_name = "EPSILON", conflicts_with_all = ["zones", "replicas"])]
    epsilon: Option<f64>,
    /// Output: `KEY<TAB>NODE[,NODE...]` lines, or one JSON object per line.
    #[arg(long, default_value_t = Format::Text,
          value_parser = Format::parser(&[Format::Text, Format::Json]))]
    format: Format,
    /// Keys to look up; with none, read keys from stdin, one per line.
    keys: Vec<String>,
}

pub fn run(args: Args) -> Result<(), Failure> {
    // One read of the cluster file: the placement and its epsilon.
    let spec = args.cluster.spec()?;
    let keyed = spec.build().map_err(Failure::data)?;
    if keyed.placement().is_empty() {
        return Err(Failure::data(anyhow!("the cluster has no nodes")));
    }
    // Zone-aware replicas are a view of the ring only: ask for it once.
    let zoned = match args.zones {
        true => Some(keyed.placement().as_ring().ok_or_else(|| {
            let algorithm = keyed.placement().algorithm();
            Failure::usage(anyhow!(
                "--zones: zone-aware replicas exist for the ring only, not for {algorithm}"
            ))
        })?),
        false => None,
    };
    let stdout = io::stdout();
    let mut out = Printer {
        nodes: keyed.placement().nodes(),
        format: args.format,
        list_replicas: args.replicas > 1,
        out: BufWriter::with_capacity(1 << 16, stdout.lock()),
    };
    if let Some(epsilon) = args.epsilon.or(spec.epsilon) {
        if args.replicas > 1 || args.zones {
            return Err(Failure::usage(anyhow!(
                "bounded loads (epsilon) place one node per key: drop --replicas and --zones"
            )));
        }
        bounded(&keyed, &args, epsilon, &mut out)?;
    } else if zoned.is_none() && args.replicas == 1 {
        owners(&keyed, &args, &mut out)?;
    } else {
        replicas(&keyed, zoned, &args, &mut out)?;
    }
    out.out.flush().map_err(Failure::io)
}

/// One owner per key, a block of keys per batch call.
fn owners(keyed: &Keyed<AnyPlacement>, args: &Args, out: &mut Printer<'_>) -> Result<(), Failure> {
    let mut owners = Vec::with_capacity(BLOCK);
    for_each_block(args, |block| {
        keyed.owners_into(block, &mut owners);
        for (key, &owner) in block.iter().zip(&owners) {
            out.print(key, &[owner])?;
        }
        Ok(())
    })
}

/// `--replicas R` nodes per key, zone-aware on a ring with `--zones`.
fn replicas(
    keyed: &Keyed<AnyPlacement>,
    zoned: Option<&Ring>,
    args: &Args,
    out: &mut Printer<'_>,
) -> Result<(), Failure> {
    let r = args.replicas as usize;
    let mut ids = Vec::with_capacity(r);
    for_each_block(args, |block| {
        for key in block {
            match zoned {
                Some(ring) => ring.zoned_replicas_into(keyed.hash(key), r, &mut ids),
                None => keyed.replicas_into(key, r, &mut ids),
            }
            out.print(key, &ids)?;
        }
        Ok(())
    })
}

/// `--epsilon`: reads every key, assigns them with bounded loads, prints
/// them in input order.
fn bounded(
    keyed: &Keyed<AnyPlacement>,
    args: &Args,
    epsilon: f64,
    out: &mut Printer<'_>,
) -> Result<(), Failure> {
    let bounded = Bounded::new(keyed.placement().clone(), epsilon).map_err(Failure::usage)?;
    let mut keys: Vec<Vec<u8>> = Vec::new();
    for_each_block(args, |block| {
        keys.extend_from_slice(block);
        Ok(())
    })?;
    let hashes: Vec<u64> = keys.iter().map(|k| keyed.hash(k)).collect();
    let owners = bounded.assign(&hashes);
    for (key, owner) in keys.iter().zip(owners) {
        out.print(key, &[owner]).map_err(Failure::io)?;
    }
    Ok(())
}

/// Calls `visit` with the keys in blocks of at most [`BLOCK`]: the
/// arguments, or stdin's lines without their line ends.
fn for_each_block(
    args: &Args,
    mut visit: impl FnMut(&[Vec<u8>]) -> io::Result<()>,
) -> Result<(), Failure> {
    if !args.keys.is_empty() {
        let keys: Vec<Vec<u8>> = args.keys.iter().map(|k| k.as_bytes().to_vec()).collect();
        return keys
            .chunks(BLOCK)
            .try_for_each(&mut visit)
            .map_err(Failure::io);
    }
    let stdin = io::stdin();
    let mut input = io::BufReader::with_capacity(1 << 16, stdin.lock());
    // The line buffers are reused from block to block.
    let mut block: Vec<Vec<u8>> = Vec::with_capacity(BLOCK);
    let mut len = 0;
    loop {
        if len == block.len() {
            block.push(Vec::with_capacity(64));
        }
        let line = &mut block[len];
        line.clear();
        match input.read_until(b'\n', line) {
            Ok(0) => break,
            Ok(_) => strip_newline(line),
            Err(e) => {
                // The keys before the failure are still answered.
                visit(&block[..len]).map_err(Failure::io)?;
                return Err(Failure::io(e));
            }
        }
        len += 1;
        if len == BLOCK {
            visit(&block).map_err(Failure::io)?;
            len = 0;
        }
    }
    visit(&block[..len]).map_err(Failure::io)
}

/// Drops a trailing `\n`, then a trailing `\r`.
fn strip_newline(line: &mut Vec<u8>) {
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
}

/// Writes one key with its nodes in the chosen format.
struct Printer<'a> {
    nodes: &'a NodeTable,
    format: Format,
    /// JSON lines carry `"replicas"` when more than one was asked for.
    list_replicas: bool,
    out: BufWriter<io::StdoutLock<'static>>,
}

/// A JSON line: `{"key": ..., "node": ...}`, plus `"replicas"` when more
/// than one was asked for. A key that is not UTF-8 is given as `"key_hex"`.
/// Fields in name order, as the lines have always been written.
#[derive(Serialize)]
struct JsonLine<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    key_hex: Option<String>,
    node: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    replicas: Option<Vec<&'a str>>,
}

impl Printer<'_> {
    /// Prints `key` with the nodes `ids`.
    fn print(&mut self, key: &[u8], ids: &[NodeId]) -> io::Result<()> {
        if self.format == Format::Json {
            return self.json(key, ids);
        }
        self.out.write_all(key)?;
        let mut separator = b"\t";
        for &id in ids {
            self.out.write_all(separator)?;
            let name = self.nodes.name(id).unwrap_or_default();
            self.out.write_all(name.as_bytes())?;
            separator = b",";
        }
        self.out.write_all(b"\n")
    }

    fn json(&mut self, key: &[u8], ids: &[NodeId]) -> io::Result<()> {
        let names = ids.iter().filter_map(|&id| self.nodes.name(id));
        let text = std::str::from_utf8(key).ok();
        let line = JsonLine {
            key: text,
            key_hex: text.is_none().then(|| hex(key)),
            node: names.clone().next(),
            replicas: self.list_replicas.then(|| names.collect()),
        };
        write_json(&mut self.out, &line, Json::Line)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
