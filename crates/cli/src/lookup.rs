//! `ringwise lookup`: the owner (or replica list) of each key.
//!
//! Keys come from the arguments or, with none, from stdin one per line. Keys
//! are bytes: a trailing `\n` or `\r\n` is not part of the key, anything else
//! is. Output is buffered and written as it goes: every lookup succeeds once
//! the cluster is valid, so an error can only come before the first line or
//! from I/O.

use std::io::{self, BufRead, BufWriter, Write};

use clap::ValueEnum;
use ringwise::{AnyPlacement, Bounded, Keyed, NodeId, Placement};

use crate::Failure;
use crate::cluster::ClusterArgs;

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
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Keys to look up; with none, read keys from stdin, one per line.
    keys: Vec<String>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
}

pub fn run(args: Args) -> Result<(), Failure> {
    // One read of the cluster file: the placement and its epsilon.
    let spec = args.cluster.spec()?;
    let ring = spec.build().map_err(Failure::data)?;
    if ring.placement().is_empty() {
        return Err(Failure::data(anyhow::anyhow!("the cluster has no nodes")));
    }
    if args.zones && ring.placement().as_ring().is_none() {
        let algorithm = ring.placement().algorithm();
        return Err(Failure::usage(anyhow::anyhow!(
            "--zones: zone-aware replicas exist for the ring only, not for {algorithm}"
        )));
    }
    if let Some(epsilon) = args.epsilon.or(spec.epsilon) {
        if args.replicas > 1 || args.zones {
            return Err(Failure::usage(anyhow::anyhow!(
                "bounded loads (epsilon) place one node per key: drop --replicas and --zones"
            )));
        }
        return bounded(&ring, &args, epsilon);
    }
    let stdout = io::stdout();
    let mut writer = Writer {
        ring: &ring,
        args: &args,
        ids: Vec::with_capacity(args.replicas as usize),
        out: BufWriter::with_capacity(1 << 16, stdout.lock()),
    };
    for_each_key(&args, |key| writer.key(key))?;
    writer.out.flush().map_err(Failure::io)
}

/// Calls `visit` with every key: the arguments, or stdin's lines.
fn for_each_key(
    args: &Args,
    mut visit: impl FnMut(&[u8]) -> io::Result<()>,
) -> Result<(), Failure> {
    if !args.keys.is_empty() {
        for key in &args.keys {
            visit(key.as_bytes()).map_err(Failure::io)?;
        }
        return Ok(());
    }
    let stdin = io::stdin();
    let mut input = io::BufReader::with_capacity(1 << 16, stdin.lock());
    let mut line = Vec::with_capacity(256);
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line).map_err(Failure::io)? == 0 {
            return Ok(());
        }
        visit(strip_newline(&line)).map_err(Failure::io)?;
    }
}

/// `--epsilon`: reads every key, assigns them with bounded loads, prints
/// them in input order.
fn bounded(ring: &Keyed<AnyPlacement>, args: &Args, epsilon: f64) -> Result<(), Failure> {
    let bounded = Bounded::new(ring.placement().clone(), epsilon).map_err(Failure::usage)?;
    let mut keys: Vec<Vec<u8>> = Vec::new();
    for_each_key(args, |key| {
        keys.push(key.to_vec());
        Ok(())
    })?;
    let hashes: Vec<u64> = keys.iter().map(|k| ring.hash(k)).collect();
    let owners = bounded.assign(&hashes);
    let stdout = io::stdout();
    let mut writer = Writer {
        ring,
        args,
        ids: Vec::with_capacity(1),
        out: BufWriter::with_capacity(1 << 16, stdout.lock()),
    };
    for (key, owner) in keys.iter().zip(owners) {
        writer.ids.clear();
        writer.ids.push(owner);
        writer.print(key).map_err(Failure::io)?;
    }
    writer.out.flush().map_err(Failure::io)
}

fn strip_newline(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

struct Writer<'a, W: Write> {
    ring: &'a Keyed<AnyPlacement>,
    args: &'a Args,
    ids: Vec<NodeId>,
    out: W,
}

impl<W: Write> Writer<'_, W> {
    fn key(&mut self, key: &[u8]) -> io::Result<()> {
        let r = self.args.replicas as usize;
        match self.ring.placement().as_ring() {
            Some(ring) if self.args.zones => {
                ring.zoned_replicas_into(self.ring.hash(key), r, &mut self.ids);
            }
            _ => self.ring.replicas_into(key, r, &mut self.ids),
        }
        self.print(key)
    }

    /// Prints `key` with the nodes in `ids`.
    fn print(&mut self, key: &[u8]) -> io::Result<()> {
        match self.args.format {
            Format::Text => self.text(key),
            Format::Json => self.json(key),
        }
    }

    fn text(&mut self, key: &[u8]) -> io::Result<()> {
        self.out.write_all(key)?;
        let mut separator = b"\t";
        for &id in &self.ids {
            self.out.write_all(separator)?;
            let name = self.ring.placement().nodes().name(id).unwrap_or_default();
            self.out.write_all(name.as_bytes())?;
            separator = b",";
        }
        self.out.write_all(b"\n")
    }

    /// `{"key": ..., "node": ...}`, plus `"replicas"` when more than one was
    /// asked for. A key that is not UTF-8 is given as `"key_hex"`.
    fn json(&mut self, key: &[u8]) -> io::Result<()> {
        let nodes = self.ring.placement().nodes();
        let names = self.ids.iter().filter_map(|&id| nodes.name(id));
        let mut doc = serde_json::Map::new();
        match std::str::from_utf8(key) {
            Ok(text) => doc.insert("key".into(), text.into()),
            Err(_) => doc.insert("key_hex".into(), hex(key).into()),
        };
        doc.insert("node".into(), names.clone().next().into());
        if self.args.replicas > 1 {
            doc.insert("replicas".into(), names.collect::<Vec<_>>().into());
        }
        serde_json::to_writer(&mut self.out, &doc)?;
        self.out.write_all(b"\n")
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
