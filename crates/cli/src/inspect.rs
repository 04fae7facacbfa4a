//! `ringwise inspect`: points and ownership per node.
//!
//! For a ring the shares are exact (summed arcs of the hash space), and for
//! a `slots` cluster hashed by Redis's own `redis-crc16` too (each
//! master's slots / 16384, counted in its table, shown in the `slots`
//! column). Other
//! algorithms have no arcs to sum, so their shares are measured on
//! 1,000,000 sample keys `inspect:0..` through the cluster's key hash, a
//! block of keys per batch call ([`Keyed::owners_into`]).
//!
//! The header names the algorithm's settings (ketama's flavour, Envoy's
//! ring sizes, Cassandra's `num_tokens`) and how the peer writes a point:
//! 32-bit for ketama and nginx, signed 64-bit tokens for cassandra, 64-bit
//! otherwise. `--points` lists every point of a ring-shaped placement in
//! that form, in ring order (`nodetool ring`, a ketama continuum dump).
//!
//! Both agree with real lookups for every algorithm and hash the core
//! accepts (a ring-shaped placement or an HAProxy tree with `fnv1a64`,
//! `fnv1a64-twemproxy`, `sdbm`, `djb2` or `wt6` gets a warning: its keys' shares depend on the key set), where the one hash whose values do not spread over a ring,
//! `redis-crc16`, is refused for every algorithm but `slots`. Text output
//! rounds, and switches to scientific notation for numbers too small or
//! too large to read (a node of weight 1e-6 next to one of 1e6).

use std::io::Write;

use anyhow::anyhow;
use ringwise::{
    Algorithm, AnyPlacement, ClusterSpec, Keyed, Param, ParamValue, Placement, PlacementStats,
    RingView, StableHash, Width,
};

use crate::Failure;
use crate::cluster::{ClusterArgs, ring_shaped};
use crate::format::{Format, JSON_VERSION, Json, readable, write_json};
use ringwise_sim::files::Mode;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    cluster: ClusterArgs,
    /// Output format.
    #[arg(long, default_value_t = Format::Text,
          value_parser = Format::parser(&[Format::Text, Format::Json]))]
    format: Format,
    /// List the ring's points in ring order as `POINT<TAB>NODE` lines (JSON:
    /// a `"ring"` array of [point, node]), each point as the peer writes
    /// it (32-bit for ketama and nginx, a signed token for cassandra); for
    /// ring-shaped algorithms only.
    #[arg(long)]
    points: bool,
    /// Draw the ring (nodes as coloured arcs, points, zones; a slot strip
    /// for slots and maglev) and ownership bars with the expected share
    /// marked into an SVG file.
    #[arg(long, value_name = "FILE")]
    svg: Option<std::path::PathBuf>,
    /// Shares of R replicas per key (each node's part of the keys it holds
    /// a copy of, divided by R), exact over the ring's ranges, as
    /// `lookup --replicas R` places them; ring-shaped algorithms only.
    #[arg(long, value_name = "R", value_parser = clap::value_parser!(u32).range(1..=32))]
    replicas: Option<u32>,
    /// With --replicas: zone-aware replicas (`lookup --zones`).
    #[arg(long, requires = "replicas")]
    zones: bool,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let (spec, keyed) = args.cluster.build()?;
    // The ring's exact view, asked for once.
    let ring = keyed.placement().as_ring();
    if args.points && ring.is_none() {
        return Err(Failure::usage(anyhow!(
            "--points: {} has no ring of points; the ring-shaped algorithms are {}",
            spec.algorithm,
            ring_shaped().join(", ")
        )));
    }
    // FNV-1a and HAProxy's sdbm, djb2 and wt6 (a few operations a byte)
    // change little when only the last bytes do; HAProxy's avalanche
    // (`full_hash` of the value) scatters what they leave close.
    let mixed = spec.algorithm == Algorithm::Haproxy && spec.params.avalanche;
    let weak = !mixed
        && matches!(
            spec.params.hash,
            StableHash::Fnv1a64
                | StableHash::Fnv1a64Twemproxy
                | StableHash::Fnv1a32Php
                | StableHash::Sdbm
                | StableHash::Djb2
                | StableHash::Wt6
        );
    // Exact shares (a ring's arcs, a table's entries) are of the hash
    // space, which FNV's keys do not fill evenly.
    let exact = ring.is_some()
        || matches!(
            keyed.placement(),
            AnyPlacement::Haproxy(_) | AnyPlacement::PhpMemcache(_)
        )
        || keyed
            .placement()
            .table_size()
            .is_some_and(|_| keyed.hasher().is_full_width());
    if exact && weak {
        // FNV-1a (and sdbm, djb2, wt6) does not spread keys that differ in their last bytes
        // (`key-1`, `key-2`...) evenly over the 64-bit space, and how
        // unevenly depends on the key set (4 nodes: a node with 8.9 % of
        // the arcs got 11 % of `key-0..20000`), so no share printed here
        // can hold for every key set.
        let remedy = match spec.algorithm {
            Algorithm::Haproxy => "; HAProxy mixes it with `hash-type consistent <fn> avalanche`",
            _ => "",
        };
        say!(
            "ringwise: warning: {} does not spread similar keys evenly over a ring or a table: \
             real keys may get shares several points away from these exact ones; prefer xxh3 \
             unless a peer's placement must be matched{remedy}",
            spec.params.hash
        );
    }
    let (stats, samples) = shares(&keyed);
    let stats = match (args.replicas, ring) {
        (None, _) => stats,
        (Some(r), Some(ring)) => replicated(ring, r, args.zones, &stats)?,
        (Some(_), None) => {
            return Err(Failure::usage(anyhow!(
                "--replicas: {} has no ring to sum replicated ranges over; the ring-shaped \
                 algorithms are {}",
                spec.algorithm,
                ring_shaped().join(", ")
            )));
        }
    };
    // A ring's points, or those of the tree or ring behind a placement
    // with exact shares (haproxy, php-memcache's buckets).
    let points = ring.map_or_else(
        || stats.nodes.iter().map(|n| n.points as usize).sum(),
        |r| r.point_count(),
    );
    if let Some(path) = &args.svg {
        // What the placement is made of: points, table slots, or nodes only.
        let parts = match (ring, keyed.placement().table_size()) {
            (Some(_), _) => format!(", {points} points"),
            (None, Some(slots)) => format!(", {slots} slots"),
            (None, None) => String::new(),
        };
        let title = format!(
            "{}, hash {}: {} nodes{parts}",
            spec.algorithm,
            spec.params.hash,
            stats.nodes.len(),
        );
        let picture = crate::svg::inspect(&title, keyed.placement(), &stats);
        crate::output::file(path, Mode::Plain, picture.as_bytes())?;
    }
    let mut out = std::io::stdout().lock();
    // A slots cluster's shares are its slot counts (exact).
    let slots = slot_counts(&keyed);
    if args.format == Format::Json {
        let nodes: Vec<_> = stats
            .nodes
            .iter()
            .map(|n| {
                let mut node = serde_json::json!({
                    "name": n.name, "weight": n.weight, "zone": n.zone,
                    "points": n.points, "share": n.share,
                    "expected": n.expected, "ratio": n.ratio(),
                });
                if let Some(counts) = &slots {
                    node["slots"] = counts[n.id as usize].into();
                }
                node
            })
            .collect();
        let mut doc = serde_json::json!({
            "version": JSON_VERSION,
            "algorithm": spec.algorithm.to_string(), "hash": spec.params.hash.name(),
            "vnodes": spec.params.vnodes, "points": points, "nodes": nodes,
            "exact": samples == 0,
            "replicas": args.replicas.unwrap_or(1), "zones": args.zones,
            "max": stats.max, "min": stats.min, "spread": stats.spread,
            "width": ring.map(|r| width_name(r.width())),
        });
        for (name, value) in settings(&spec) {
            doc[name] = value;
        }
        if let Some(ring) = ring.filter(|_| args.points) {
            // Streamed point by point: 16M points built as one document
            // peaked at 2.7 GB; this holds one at a time.
            let listed = Listed {
                doc: &doc,
                ring: Points {
                    ring,
                    names: keyed.placement().nodes(),
                },
            };
            let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
            return write_json(&mut out, &listed, Json::Line)
                .and_then(|()| out.flush())
                .map_err(Failure::io);
        }
        return write_json(&mut out, &doc, Json::Line).map_err(Failure::io);
    }
    if let Some(ring) = ring.filter(|_| args.points) {
        return write_points(&keyed, ring).map_err(Failure::io);
    }
    let mut text = table(&spec, ring, points, &stats, samples, slots.as_deref());
    if let Some(r) = args.replicas {
        let zoned = if args.zones { ", zone-aware" } else { "" };
        text += &format!(
            "(shares of {r} replicas per key{zoned}: the keys a node holds a copy of, / {r})\n"
        );
    }
    out.write_all(text.as_bytes()).map_err(Failure::io)
}

/// Shares of `replicas` copies per key (exact, through
/// [`ringwise::Allocator::balance`]: the ring's own replica walk over
/// every range). O(P · R).
fn replicated(
    ring: &dyn RingView,
    replicas: u32,
    zones: bool,
    primary: &PlacementStats,
) -> Result<PlacementStats, Failure> {
    let allocator = ringwise::Allocator::new(1)
        .and_then(|a| a.replicas(replicas))
        .map_err(Failure::usage)?
        .zones(zones);
    let balance = allocator.balance(ring);
    let points: Vec<u64> = primary.nodes.iter().map(|n| n.points).collect();
    Ok(PlacementStats::from_shares(
        ring.nodes(),
        &points,
        &balance.share,
    ))
}

/// The JSON document with the ring's points after its fields.
#[derive(serde::Serialize)]
struct Listed<'a> {
    #[serde(flatten)]
    doc: &'a serde_json::Value,
    ring: Points<'a>,
}

/// `"ring": [[POINT, NODE], ...]` in ring order, serialized as it is read
/// from the ring: O(1) memory whatever the number of points.
struct Points<'a> {
    ring: &'a dyn RingView,
    names: &'a ringwise::NodeTable,
}

impl serde::Serialize for Points<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let names = self.names;
        serializer.collect_seq(
            self.ring
                .points()
                .map(|(p, id)| (native(self.ring, p), names.name(id).unwrap_or_default())),
        )
    }
}

/// A point as the peer writes it (a signed token for cassandra, 32 bits
/// for ketama and nginx), as a decimal string ([`crate::format::exact`]).
fn native(ring: &dyn RingView, point: u64) -> serde_json::Value {
    crate::format::exact(ring.width().native(point))
}

/// `--points` as text: `POINT<TAB>NODE` in ring order.
fn write_points(keyed: &Keyed<AnyPlacement>, ring: &dyn RingView) -> std::io::Result<()> {
    let names = keyed.placement().nodes();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (point, id) in ring.points() {
        let name = names.name(id).unwrap_or_default();
        writeln!(out, "{}\t{name}", ring.width().native(point))?;
    }
    out.flush()
}

/// How a width is named in JSON.
fn width_name(width: Width) -> &'static str {
    match width {
        Width::U32 => "u32",
        Width::I64 => "i64",
        _ => "u64",
    }
}

/// How a width is named in the text header.
fn width_words(width: Width) -> &'static str {
    match width {
        Width::U32 => "32-bit points",
        Width::I64 => "signed 64-bit tokens",
        _ => "64-bit points",
    }
}

/// The settings the algorithm reads besides the hash and the point budget,
/// by their cluster-file names, from the registry (`vnodes` for ring,
/// `table_size` for maglev, ...): `num_tokens` unless every node lists its
/// tokens, `capacity` as built, also when the default chose it.
fn settings(spec: &ClusterSpec) -> Vec<(&'static str, serde_json::Value)> {
    let p = &spec.params;
    let all_listed = spec.nodes.iter().all(|n| spec.layout.contains_key(&n.name));
    spec.algorithm
        .reads()
        .iter()
        .filter_map(|&param| {
            let value: serde_json::Value = match (param, p.get(param)) {
                // Shown with the points, not among the settings.
                (Param::MaxPoints, _) => return None,
                // Listed tokens leave the count unread.
                (Param::NumTokens, _) if all_listed => return None,
                // The one built, also when the default chose it.
                (Param::Capacity, _) => p
                    .capacity_for(spec.algorithm.name(), spec.nodes.len())
                    .unwrap_or(p.capacity)
                    .into(),
                (_, ParamValue::Flavor(flavor)) => flavor.name().into(),
                // Read only for nodes that list no slots.
                (Param::SlotLayout, _) if all_listed => return None,
                (_, ParamValue::SlotLayout(layout)) => layout.name().into(),
                (_, ParamValue::Count(n)) => n.into(),
                (_, ParamValue::Bool(on)) => on.into(),
                _ => return None,
            };
            Some((param.name(), value))
        })
        .collect()
}

/// Sample keys of the shares of placements without arcs.
const SAMPLE: u64 = 1_000_000;

/// Node reads the sample of an algorithm that reads every node per key
/// (rendezvous, envoy-rendezvous) may cost in all: 3·10^8, about 2 s of a release build.
const SAMPLE_WORK: u64 = 300_000_000;

/// The fewest keys sampled: a fair share's relative standard error is
/// about `sqrt(N / keys)`, so 10,000 keys give ±10% at 100 nodes.
const MIN_SAMPLE: u64 = 10_000;

/// Each node's share of the key space and the samples behind it (0:
/// exact): a ring's summed arcs (HAProxy's tree's in successor form), otherwise [`sample_size`] keys looked up.
/// `inspect` and `plan`'s rehash pricing both read shares here, so the two
/// always agree on a cluster.
pub(crate) fn shares(keyed: &Keyed<AnyPlacement>) -> (PlacementStats, u64) {
    let placement = keyed.placement();
    if let Some(counts) = slot_counts(keyed) {
        let shares: Vec<f64> = counts
            .iter()
            .map(|&c| c as f64 / ringwise::SLOT_COUNT as f64)
            .collect();
        return (
            PlacementStats::from_shares(placement.nodes(), &[], &shares),
            0,
        );
    }
    if let Some(stats) = placement.exact_stats() {
        return (stats, 0);
    }
    match placement.table_size() {
        // A table's entries are shares of the keys only when the hashes
        // fill the space they are reduced from (all of u64); else
        // (md5-le32 on maglev) sample.
        Some(size) if keyed.hasher().is_full_width() => (table_stats(placement, size), 0),
        _ => {
            let samples = sample_size(placement.algorithm(), placement.len());
            (keyed.sampled_stats(samples), samples)
        }
    }
}

/// Exact shares of a table (maglev; slots under a full-width hash): both look a hash up as
/// `table[h % M]`, so entry `s` owns the `floor(2^64 / M)` hashes with
/// `h % M == s`, plus one when `s < 2^64 mod M` (`movement/table.rs`
/// counts moves the same way). Redis's 16384 slots are each exactly
/// 2^-14 of the space. O(M) owner reads.
fn table_stats(placement: &AnyPlacement, size: u64) -> PlacementStats {
    let nodes = placement.nodes();
    let space = 1u128 << 64;
    let mut owned = vec![0u128; nodes.len()];
    for slot in 0..size {
        if let Some(owner) = placement.owner(slot) {
            let hashes =
                space / u128::from(size) + u128::from(u128::from(slot) < space % u128::from(size));
            owned[owner as usize] += hashes;
        }
    }
    let shares: Vec<f64> = owned.iter().map(|&n| n as f64 / 2f64.powi(64)).collect();
    PlacementStats::from_shares(nodes, &vec![0; nodes.len()], &shares)
}

/// Each node's slot count (in id order) on a `slots` cluster hashed by
/// `redis-crc16` (the default and Redis's own), read from
/// its table slot by slot: a key's owner is its slot's, so slots / 16384 is
/// its exact share of uniformly spread keys (Redis's own balance measure,
/// what `redis-cli --cluster check` prints); `None` for other algorithms.
/// O(16384).
pub(crate) fn slot_counts(keyed: &Keyed<AnyPlacement>) -> Option<Vec<u64>> {
    let placement = keyed.placement();
    // Only Redis's own hash makes a key's slot its CRC16: another hash
    // reaches the table as `hash % 16384`, whose spread depends on the
    // hash's low bits (md5-le32's 32-bit values are placed high on the
    // 64-bit circle, so all of them land on slot 0), so it is sampled.
    if placement.algorithm() != Algorithm::Slots || *keyed.hasher() != StableHash::RedisCrc16 {
        return None;
    }
    let mut counts = vec![0u64; placement.len()];
    for slot in 0..ringwise::SLOT_COUNT as u64 {
        if let Some(id) = placement.owner(slot) {
            counts[id as usize] += 1;
        }
    }
    Some(counts)
}

/// Keys sampled for `algorithm` over `nodes` nodes: [`SAMPLE`], except
/// for rendezvous and envoy-rendezvous, whose lookups cost O(N): then `SAMPLE_WORK / N` keys,
/// within `MIN_SAMPLE..=SAMPLE` (1,000,000 keys over 10,000 nodes took
/// 58 s; now 30,000 keys), with a note of the
/// standard error on stderr. O(keys · lookup).
fn sample_size(algorithm: Algorithm, nodes: usize) -> u64 {
    if !matches!(
        algorithm,
        Algorithm::Rendezvous | Algorithm::EnvoyRendezvous
    ) {
        return SAMPLE;
    }
    let keys = (SAMPLE_WORK / nodes.max(1) as u64).clamp(MIN_SAMPLE, SAMPLE);
    if keys < SAMPLE {
        say!(
            "ringwise: note: {algorithm} reads every node per key, so its shares are \
             sampled on {keys} keys, not {SAMPLE}: a fair share's standard error is \
             about {:.0}%",
            100.0 * (nodes as f64 / keys as f64).sqrt()
        );
    }
    keys
}

fn table(
    spec: &ClusterSpec,
    ring: Option<&dyn RingView>,
    points: usize,
    stats: &PlacementStats,
    samples: u64,
    slots: Option<&[u64]>,
) -> String {
    let width = stats
        .nodes
        .iter()
        .map(|n| n.name.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    // `ketama (twemproxy)`, then the other settings, then the point width.
    let mut about = spec.algorithm.to_string();
    let mut details = String::new();
    for (name, value) in settings(spec) {
        match (spec.algorithm, name) {
            (Algorithm::Ketama, "flavor") => about += &format!(" ({})", spec.params.flavor),
            _ => match value.as_str() {
                Some(text) => details += &format!(", {name} {text}"),
                None => details += &format!(", {name} {value}"),
            },
        }
    }
    if let Some(ring) = ring {
        details += &format!(", {}", width_words(ring.width()));
    }
    let (parts, column, how) = match (slots, ring, samples) {
        (Some(_), _, _) => (
            format!("{} slots", ringwise::SLOT_COUNT),
            "slots",
            " (exact: slots / 16384)".to_owned(),
        ),
        (None, Some(_), _) => (format!("{points} points"), "points", String::new()),
        (None, None, 0) => (
            format!("{points} points"),
            "points",
            " (exact: the table's entries)".to_owned(),
        ),
        (None, None, n) => (
            format!("{points} points"),
            "points",
            format!(
                " (shares sampled on {} keys)",
                ringwise_sim::table::thousands(n)
            ),
        ),
    };
    let mut out = format!(
        "algorithm {about}, hash {}{details}: {} nodes, {parts}{how}\n",
        spec.params.hash,
        stats.nodes.len(),
    );
    out += &format!(
        "{:<width$}  {:>8}  {:>8}  {:>8}  {:>8}  {:>6}  zone\n",
        "node", "weight", column, "share", "expected", "ratio"
    );
    for n in &stats.nodes {
        out += &format!(
            "{:<width$}  {:>8}  {:>8}  {:>8}  {:>8}  {:>6}  {}\n",
            n.name,
            weight(n.weight),
            slots.map_or(n.points, |s| s[n.id as usize]),
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
