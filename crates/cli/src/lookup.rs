//! `ringwise lookup`: the owner (or replica list) of each key.
//!
//! Keys come from the arguments or, with none, from stdin one per line, read
//! and streamed by the [`crate::keys`] code `token` shares. Keys are read in
//! blocks of [`BLOCK`]; with one replica per key (the
//! common case) a block is resolved by one batch call,
//! [`Keyed::owners_into`], which overlaps the placement's memory reads.
//! Output is buffered and written as it goes: every lookup succeeds once the
//! cluster is valid, so an error can only come before the first line or
//! from I/O.
//!
//! Streaming (see [`crate::keys`]): answers are flushed whenever the input
//! has no more keys ready, so a program that writes a key and waits gets
//! its answer at once. `--line-buffered` flushes after every key.
//! `--epsilon` must see every key first and answers at the end.
//!
//! Text output escapes the key's `\`, tab, newline and carriage return as
//! `\\`, `\t`, `\n`, `\r`, so every line is `KEY<TAB>NODE[,NODE...]`;
//! other bytes pass through. JSON lines carry keys losslessly (`key_hex`
//! for keys that are not UTF-8).

use std::io::{self, Write};

use anyhow::anyhow;
use ringwise::{
    AnyPlacement, Bounded, Keyed, NetworkTopology, NodeId, NodeTable, Placement, RingView, Walk,
};
use serde::Serialize;

use crate::Failure;
use crate::cluster::{ClusterArgs, ring_shaped};
use crate::format::{Format, JSON_VERSION, Json, write_json};
use crate::keys::{self, BLOCK, Block, KeyFormat, Keys, hex, write_escaped};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    cluster: ClusterArgs,
    /// Number of distinct nodes to list per key, in preference order (on
    /// cassandra: SimpleStrategy's replicas, the next distinct nodes
    /// clockwise).
    #[arg(long, value_name = "R", default_value_t = 1, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u32).range(1..))]
    replicas: u32,
    /// Cassandra's NetworkTopologyStrategy: replicas per datacenter, like
    /// `dc1=3,dc2=2` (nodes need a `datacenter` and a `rack`/`zone`;
    /// cassandra only). Lists them in Cassandra's order, primary first.
    #[arg(long, value_name = "DC=RF[,DC=RF...]", value_parser = parse_replication,
          conflicts_with_all = ["replicas", "zones", "epsilon"])]
    replication: Option<Replication>,
    /// How keys are written: as they are (text), or as the hex of their
    /// bytes (hex: `0a` is the key holding one newline byte).
    #[arg(long, value_name = "FORMAT", default_value = "text")]
    key_format: KeyFormat,
    /// Prefer replicas in zones not used yet (nodes need `zone`s; ring,
    /// ketama, nginx, envoy-ring, grpc-ring, cassandra and varnish-shard).
    #[arg(long)]
    zones: bool,
    /// Bounded loads: place the given keys (all of them are read first) so
    /// that no node holds more than (1 + EPSILON) x its fair share.
    // A negative value is a value to refuse with the reason, not a flag
    // (clap's tip would make `-- -0.5` a key).
    #[arg(long, value_name = "EPSILON", conflicts_with_all = ["zones", "replicas"],
          allow_negative_numbers = true)]
    epsilon: Option<f64>,
    /// Most keys --epsilon reads (it holds them all: 20 bytes each beside
    /// the key's own bytes; default 16777216 = 2^24).
    #[arg(long, value_name = "N", default_value_t = MAX_BOUNDED_KEYS, requires = "epsilon",
          value_parser = clap::value_parser!(u64).range(1..=1 << 32))]
    max_keys: u64,
    /// Most bytes of keys --epsilon holds, summed over the keys (default
    /// 1073741824 = 1 GiB; the whole hold is this plus 20 bytes a key).
    #[arg(long, value_name = "BYTES", default_value_t = MAX_BOUNDED_KEY_BYTES,
          requires = "epsilon", value_parser = clap::value_parser!(u64).range(1..=1 << 40))]
    max_key_bytes: u64,
    /// HAProxy's `hash-balance-factor F` (haproxy only; F above 100): a
    /// server may hold at most its share of ceil((S + 1) x F / 100) requests
    /// in flight, S being all requests in flight (--in-flight); a key whose
    /// server is full goes to the next server clockwise that is not. Each
    /// key is one request placed against the same counts.
    #[arg(long, value_name = "F", value_parser = clap::value_parser!(u32).range(101..),
          conflicts_with_all = ["replicas", "zones", "epsilon", "replication"])]
    balance_factor: Option<u32>,
    /// Requests in flight per server for --balance-factor, like
    /// `s1=4,s2=0` (servers not named: 0).
    #[arg(long, value_name = "NAME=N[,NAME=N...]", requires = "balance_factor")]
    in_flight: Option<String>,
    /// Flush the output after every key (by default it is flushed whenever
    /// the input has no more keys ready).
    #[arg(long)]
    line_buffered: bool,
    /// Output: `KEY<TAB>NODE[,NODE...]` lines (tab, newline, CR and
    /// backslash in keys escaped as \t \n \r \\), or one JSON object
    /// per line.
    #[arg(long, default_value_t = Format::Text,
          value_parser = Format::parser(&[Format::Text, Format::Json]))]
    format: Format,
    /// Keys to look up; with none, read keys from stdin, one per line.
    keys: Vec<String>,
}

impl Args {
    /// Where the keys come from.
    fn keys(&self) -> Keys<'_> {
        Keys {
            args: &self.keys,
            line_buffered: self.line_buffered,
        }
    }
}

pub fn run(args: Args) -> Result<(), Failure> {
    // One read of the cluster file: the placement and its epsilon.
    let (spec, keyed) = args.cluster.build()?;
    if keyed.placement().is_empty() {
        return Err(Failure::data(anyhow!("the cluster has no nodes")));
    }
    // Zone-aware replicas are a view of the ring only: ask for it once.
    let zoned = match args.zones {
        true => Some(keyed.placement().as_ring().ok_or_else(|| {
            let algorithm = keyed.placement().algorithm();
            Failure::usage(anyhow!(
                "--zones: zone-aware replicas exist for the ring-shaped algorithms only ({}), \
                 not for {algorithm}",
                ring_shaped().join(", ")
            ))
        })?),
        false => None,
    };
    if zoned.is_some() && keyed.placement().nodes().iter().all(|n| n.zone.is_none()) {
        say!(
            "ringwise: warning: --zones: no node has a zone, so replicas follow plain ring \
             order; give zones as NAME@ZONE or `zone = \"...\"`"
        );
    }
    let topology = match &args.replication {
        None => None,
        Some(map) => Some(topology(&keyed, &map.0)?),
    };
    args.keys().prompt();
    let mut out = Printer::new(
        keyed.placement().nodes(),
        args.format,
        args.replicas > 1 || topology.is_some(),
    );
    if let Some(topology) = topology {
        let mut ids = Vec::new();
        let mut walk = Walk::default();
        args.keys()
            .for_each_decoded_block(args.key_format, |block, flush| {
                for key in block {
                    topology.replicas_into(keyed.hash(key), &mut ids, &mut walk);
                    out.print(key, &ids)?;
                }
                keys::flush_if(&mut out.out, flush)
            })
            .map_err(Failure::from)?;
        return out.out.flush().map_err(Failure::io);
    }
    if let Some(factor) = args.balance_factor {
        balanced(&keyed, &args, factor, &mut out)?;
        return out.out.flush().map_err(Failure::io);
    }
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
    args.keys()
        .for_each_decoded_block(args.key_format, |block, flush| {
            keyed.owners_into(block.keys, &mut owners);
            out.print_owners(block, &owners)?;
            keys::flush_if(&mut out.out, flush)
        })
        .map_err(Failure::from)
}

/// `--balance-factor F --in-flight ...`: HAProxy's bounded-load choice of
/// each key, against the counts given.
fn balanced(
    keyed: &Keyed<AnyPlacement>,
    args: &Args,
    factor: u32,
    out: &mut Printer<'_>,
) -> Result<(), Failure> {
    let AnyPlacement::Haproxy(tree) = keyed.placement() else {
        return Err(Failure::usage(anyhow!(
            "--balance-factor is HAProxy's hash-balance-factor: it needs algorithm = \
             \"haproxy\", not {}",
            keyed.placement().algorithm()
        )));
    };
    let nodes = tree.nodes();
    let mut served = vec![0u32; nodes.len()];
    for pair in args.in_flight.iter().flat_map(|t| t.split(',')) {
        let (name, count) = pair.split_once('=').ok_or_else(|| {
            Failure::usage(anyhow!(
                "--in-flight: {pair:?} is not NAME=N: give each server's requests in flight, \
                 like s1=4,s2=0"
            ))
        })?;
        let id = nodes.id(name.trim()).ok_or_else(|| {
            Failure::usage(anyhow!(
                "--in-flight: no server {:?} in the cluster",
                name.trim()
            ))
        })?;
        served[id as usize] = count.trim().parse().map_err(|_| {
            Failure::usage(anyhow!(
                "--in-flight: {count:?} (server {name:?}) is not a count from 0 to 4294967295"
            ))
        })?;
    }
    let view = tree.balanced(factor, &served).map_err(Failure::usage)?;
    args.keys()
        .for_each_decoded_block(args.key_format, |block, flush| {
            for key in block {
                if let Some(owner) = view.owner(keyed.hash(key)) {
                    out.print(key, &[owner])?;
                }
            }
            keys::flush_if(&mut out.out, flush)
        })
        .map_err(Failure::from)
}

/// `--replication`'s map, `(datacenter, rf)` in the order given (one
/// value for clap, which reads an `Option<Vec<_>>` as many).
#[derive(Debug, Clone)]
struct Replication(Vec<(String, u32)>);

/// `--replication`'s map: `DC=RF` pairs, comma-separated.
fn parse_replication(text: &str) -> Result<Replication, String> {
    text.split(',')
        .map(|pair| {
            let (dc, rf) = pair.split_once('=').ok_or_else(|| {
                format!("{pair:?} is not DC=RF: give each datacenter's replica count, like dc1=3,dc2=2")
            })?;
            let rf = rf.trim().parse::<u32>().map_err(|_| {
                format!("{rf:?} (datacenter {dc:?}) is not a replica count: give a number from 0, like dc1=3")
            })?;
            match dc.trim() {
                "" => Err(format!("{pair:?} names no datacenter: give DC=RF, like dc1=3")),
                dc => Ok((dc.to_owned(), rf)),
            }
        })
        .collect::<Result<_, _>>()
        .map(Replication)
}

/// NetworkTopologyStrategy on the cluster's ring (cassandra only); warns of
/// datacenters of the map that no node is in.
fn topology(
    keyed: &Keyed<AnyPlacement>,
    map: &[(String, u32)],
) -> Result<NetworkTopology, Failure> {
    let placement = keyed.placement();
    let ring = match (placement.algorithm(), placement.as_ring()) {
        (ringwise::Algorithm::Cassandra, Some(ring)) => ring,
        (algorithm, _) => {
            return Err(Failure::usage(anyhow!(
                "--replication is Cassandra's NetworkTopologyStrategy: it needs algorithm = \
                 \"cassandra\", not {algorithm}; use --replicas N elsewhere"
            )));
        }
    };
    let topology = NetworkTopology::new(ring, map).map_err(Failure::data)?;
    for dc in topology.unknown_datacenters() {
        say!(
            "ringwise: warning: --replication: no node is in datacenter {dc:?}, so it holds no \
             replica (Cassandra ignores it too); is the name misspelt?"
        );
    }
    Ok(topology)
}

/// `--replicas R` nodes per key, zone-aware on a ring with `--zones`.
fn replicas(
    keyed: &Keyed<AnyPlacement>,
    zoned: Option<&dyn RingView>,
    args: &Args,
    out: &mut Printer<'_>,
) -> Result<(), Failure> {
    let r = args.replicas as usize;
    // No key has more replicas than there are nodes: reserve for those, not
    // for whatever `--replicas` says (4294967295 would reserve 16 GiB).
    let mut ids = Vec::with_capacity(r.min(keyed.placement().len()));
    args.keys()
        .for_each_decoded_block(args.key_format, |block, flush| {
            for key in block {
                match zoned {
                    Some(ring) => ring.zoned_replicas_into(keyed.hash(key), r, &mut ids),
                    None => keyed.replicas_into(key, r, &mut ids),
                }
                out.print(key, &ids)?;
            }
            keys::flush_if(&mut out.out, flush)
        })
        .map_err(Failure::from)
}

/// The most keys `--epsilon` reads by default (`--max-keys`). Each costs
/// 20 bytes beside its own bytes (its end in the arena, its hash, its
/// owner), so 320 MiB at the cap (an endless `yes k |` aborted the process
/// under a memory limit before this cap existed).
const MAX_BOUNDED_KEYS: u64 = 1 << 24;

/// The most bytes of keys `--epsilon` holds by default (`--max-key-bytes`):
/// a count of keys alone let 3,000 keys of 1 MiB abort the process under a
/// 2 GB address-space limit.
const MAX_BOUNDED_KEY_BYTES: u64 = 1 << 30;

/// `--epsilon`: reads every key (at most `--max-keys` of them, at most
/// `--max-key-bytes` of key bytes), assigns them with bounded loads, prints
/// them in input order. O(K · (1 + spills)) lookups; memory: the key bytes
/// in one arena plus 20 bytes a key, every growth reserved with
/// `try_reserve` so that a memory limit is an error (exit 65), not an abort.
fn bounded(
    keyed: &Keyed<AnyPlacement>,
    args: &Args,
    epsilon: f64,
    out: &mut Printer<'_>,
) -> Result<(), Failure> {
    let bounded = Bounded::new(keyed.placement().clone(), epsilon).map_err(Failure::usage)?;
    // The keys back to back in `arena`, key i ending at `ends[i]`: one
    // allocation, not one (with its 24-byte header) per key.
    let mut arena: Vec<u8> = Vec::new();
    let mut ends: Vec<u64> = Vec::new();
    let mut hashes: Vec<u64> = Vec::new();
    args.keys()
        .for_each_decoded_block(args.key_format, |block, _| {
            let bytes: u64 = block.iter().map(|k| k.len() as u64).sum();
            if (ends.len() + block.len()) as u64 > args.max_keys {
                return Err(Failure::data(anyhow!(
                    "--epsilon holds every key in memory to bound the loads: at most {} keys \
                 (--max-keys); split the input into batches, raise --max-keys, or look \
                 keys up without --epsilon (streamed, no limit)",
                    args.max_keys
                )));
            }
            if arena.len() as u64 + bytes > args.max_key_bytes {
                // The first key of the block past the cap, counted from 1.
                let mut total = arena.len() as u64;
                let past = block.iter().position(|k| {
                    total += k.len() as u64;
                    total > args.max_key_bytes
                });
                return Err(Failure::data(anyhow!(
                    "--epsilon holds every key in memory to bound the loads: at most {} bytes \
                 of keys (--max-key-bytes), passed at key {}; split the input into \
                 batches, raise --max-key-bytes, or look keys up without --epsilon \
                 (streamed, no limit)",
                    args.max_key_bytes,
                    ends.len() + past.unwrap_or(0) + 1
                )));
            }
            reserve(&mut arena, bytes as usize)?;
            reserve(&mut ends, block.len())?;
            reserve(&mut hashes, block.len())?;
            for key in block {
                arena.extend_from_slice(key);
                ends.push(arena.len() as u64);
                hashes.push(keyed.hash(key));
            }
            Ok::<(), Failure>(())
        })?;
    let owners = bounded.assign(&hashes);
    drop(hashes);
    let mut start = 0;
    for (&end, owner) in ends.iter().zip(owners) {
        let key = &arena[start..end as usize];
        out.print(key, &[owner]).map_err(Failure::io)?;
        start = end as usize;
    }
    Ok(())
}

/// Grows `held` by `more` or says that memory ran out (exit 65).
fn reserve<T>(held: &mut Vec<T>, more: usize) -> Result<(), Failure> {
    held.try_reserve(more).map_err(|_| {
        Failure::data(anyhow!(
            "--epsilon: out of memory holding {} more bytes of keys; split the input into \
             batches or lower --max-key-bytes",
            (held.len() + more) * std::mem::size_of::<T>()
        ))
    })
}

/// Writes one key with its nodes in the chosen format.
struct Printer<'a> {
    nodes: &'a NodeTable,
    /// Each node's name as text output writes it (escaped, by id), built
    /// once rather than escaped again for every key.
    names: Vec<Vec<u8>>,
    /// `<TAB>NAME<NEWLINE>` of each node (by id) padded to 16 bytes, and
    /// its length, for names of at most 14 bytes: one 16-byte move per key
    /// where a copy of 1 to 3 bytes took three stores and a branch.
    line_ends: Vec<Option<([u8; 16], usize)>>,
    format: Format,
    /// JSON lines carry `"replicas"` when more than one was asked for.
    list_replicas: bool,
    out: keys::Out,
}

/// A JSON line: `{"key": ..., "node": ...}`, plus `"replicas"` when more
/// than one was asked for. A key that is not UTF-8 is given as `"key_hex"`.
/// Fields in name order, as the lines have always been written, after the
/// schema `"version"`.
#[derive(Serialize)]
struct JsonLine<'a> {
    version: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    key_hex: Option<String>,
    node: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    replicas: Option<Vec<&'a str>>,
}

/// Writes a node name in the text output: escaped like keys, and each comma as
/// `\,`, so that the commas between `--replicas` names are the only bare ones
/// (a node named `a,b` made `a,b,c` ambiguous). Names are escaped rather than
/// refused because a cluster file may name nodes freely (`--nodes` cannot give
/// such a name, it splits on commas); JSON output needs no escaping of its
/// own.
fn write_name(out: &mut impl Write, name: &str) -> io::Result<()> {
    for (i, part) in name.split(',').enumerate() {
        if i > 0 {
            out.write_all(b"\\,")?;
        }
        write_escaped(out, part.as_bytes())?;
    }
    Ok(())
}

impl<'a> Printer<'a> {
    /// A printer to stdout for the nodes of `nodes`. O(nodes' name bytes).
    fn new(nodes: &'a NodeTable, format: Format, list_replicas: bool) -> Self {
        let names: Vec<Vec<u8>> = (0..nodes.len())
            .map(|id| {
                let mut name = Vec::new();
                let text = NodeId::try_from(id).ok().and_then(|id| nodes.name(id));
                // Writing to a Vec cannot fail.
                let _ = write_name(&mut name, text.unwrap_or_default());
                name
            })
            .collect();
        let line_ends = names
            .iter()
            .map(|name: &Vec<u8>| {
                let len = name.len() + 2;
                let mut chunk = [0u8; 16];
                let end = chunk.get_mut(..len)?;
                end[0] = b'\t';
                end[1..len - 1].copy_from_slice(name);
                end[len - 1] = b'\n';
                Some((chunk, len))
            })
            .collect();
        Printer {
            nodes,
            names,
            line_ends,
            format,
            list_replicas,
            out: keys::stdout(),
        }
    }

    /// Prints each key of `keys` with its one owner in `owners` (the
    /// batch path). O(line bytes) per key.
    fn print_owners(&mut self, keys: Block<'_>, owners: &[NodeId]) -> io::Result<()> {
        if self.format == Format::Json {
            for (key, &owner) in keys.iter().zip(owners) {
                self.json(key, &[owner])?;
            }
            return Ok(());
        }
        for (key, &owner) in keys.iter().zip(owners) {
            match self.line_ends.get(owner as usize) {
                Some(Some((end, len))) => {
                    match keys.plain {
                        true => self.out.push(key),
                        false => self.out.push_escaped(key),
                    }
                    self.out.push_padded(end, *len);
                    self.out.spill_if_full()?;
                }
                _ => self.print(key, &[owner])?,
            }
        }
        Ok(())
    }

    /// Prints `key` with the nodes `ids`. O(line bytes).
    fn print(&mut self, key: &[u8], ids: &[NodeId]) -> io::Result<()> {
        if self.format == Format::Json {
            return self.json(key, ids);
        }
        self.out.push_escaped(key);
        let mut separator = b'\t';
        for &id in ids {
            self.out.push_byte(separator);
            let name = self.names.get(id as usize).map_or(&[][..], Vec::as_slice);
            self.out.push(name);
            separator = b',';
        }
        self.out.end_line()
    }

    fn json(&mut self, key: &[u8], ids: &[NodeId]) -> io::Result<()> {
        let names = ids.iter().filter_map(|&id| self.nodes.name(id));
        let text = std::str::from_utf8(key).ok();
        let line = JsonLine {
            version: JSON_VERSION,
            key: text,
            key_hex: text.is_none().then(|| hex(key)),
            node: names.clone().next(),
            replicas: self.list_replicas.then(|| names.collect()),
        };
        write_json(&mut self.out, &line, Json::Line)
    }
}
