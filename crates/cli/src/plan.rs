//! `ringwise plan`: what a membership change moves, from whom to whom, how
//! many bytes, and what it costs.
//!
//! The two clusters: `--from FILE` and either `--to FILE` or the shorthands
//! `--add NAME[=W]`, `--remove NAME`, `--reweight NAME=W` applied to
//! `--from` through the placement's own membership changes (a slots table
//! gives the new node floor(16384/(N+1)) slots from the fullest, nothing
//! is re-laid). The movement is [`ringwise::diff`]: exact for rings (merged
//! points), HAProxy trees (merged in successor form) and slot tables, sampled with a 95 % interval otherwise; the
//! header says which. A `--to` with another key hash or a new `secret`
//! rehashes every key: its movement is the expectation of `plan/rehash.rs`
//! (1 − Σ p_old·p_new, flows p_old(a)·p_new(b)), labelled so; a new hash
//! tag is refused. `--data SIZE` spreads a total like the hashes;
//! `--keys FILE` looks real keys up in both (`plan/keys.rs`); `--rps`,
//! `--hit-rate` and `--bandwidth` price the change with the article's two
//! costs (`ringwise_sim::cost`, shared with `simulate`). `--write FILE`
//! writes the target cluster with the state it needs (`ClusterSpec::pinned`).
//!
//! Cost: building both snapshots, then O(P_old + P_new) for rings and
//! HAProxy trees, O(16384)
//! or O(table size) for tables, O(2^20 lookups) sampled; O(K) lookups for
//! `--keys`; a rehash O(P) or O(samples) for the shares and O(N_old · N_new)
//! flows (at most 10^6); O(T · P · R) per allocated node (milliseconds at 100 nodes of
//! 16 points), O(K · N · P · R) for `--rebalance K`. Lookups of memento,
//! anchor and dx cost more with removed buckets (memento's by how many and
//! in which order they left): a plan whose sampled lookups would take more
//! than [`MAX_PLAN_STEPS`] is refused before it starts, with the estimate.

mod keys;
mod ranges;
mod redis;
mod rehash;
mod render;
mod text;

use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use ringwise::{
    Algorithm, Allocator, AnyPlacement, ClusterSpec, Keyed, Movement, Node, Placement, diff,
};
use ringwise_sim::cost::parse_size;
use ringwise_sim::files::Mode;

use crate::Failure;
use crate::cluster::{Read, parse_new_file, read_as};
use crate::format::Format;
use crate::input::read_bytes;
use crate::svg::PlanPicture;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The cluster before the change (TOML cluster file). With --allocate
    /// it may not exist yet, or be empty: a new ring cluster.
    #[arg(long, value_name = "FILE", required_unless_present = "redis")]
    from: Option<PathBuf>,
    /// Or the cluster before the change is a live Redis Cluster: the text
    /// plan then ends with its moves as a redis-cli script with the real
    /// node ids (`plan/redis.rs`).
    #[command(flatten)]
    redis: crate::redis::RedisArgs,
    /// The cluster after the change; or give --add, --remove, --reweight.
    /// Another key hash or secret here is priced as a rehash of every key
    /// (1 - sum of p_old * p_new; exact with --keys).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["add", "remove", "reweight"])]
    to: Option<PathBuf>,
    /// --cluster-format KIND and --pool NAME: --from is a program's own
    /// configuration (`ringwise import --help` lists the kinds).
    #[command(flatten)]
    peer: crate::import::FormatArgs,
    /// --to is a program's own configuration of this kind (--pool chooses
    /// in it too).
    #[arg(long, value_name = "KIND", requires = "to", value_parser = crate::import::kind)]
    to_format: Option<ringwise_import::Kind>,
    /// Add a node to --from (weight W, default 1; zone Z); repeatable.
    #[arg(long, value_name = "NAME[=W][@Z]")]
    add: Vec<String>,
    /// Choose the points of each --add'ed node instead of hashing them: T
    /// points per unit of weight (16 balance like 1,000 random ones), for
    /// ring and cassandra; --write keeps them.
    #[arg(long, value_name = "T", value_parser = clap::value_parser!(u32).range(1..=4096))]
    allocate: Option<u32>,
    /// After --remove, move at most K points of the remaining nodes to
    /// even out what the leave handed to its neighbours (ring, cassandra).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    rebalance: Option<u32>,
    /// Replicas per key that --allocate and --rebalance balance (as
    /// `lookup --replicas` places them).
    #[arg(long, value_name = "R", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=32))]
    replicas: u32,
    /// Balance zone-aware replicas (`lookup --zones`) with --replicas.
    #[arg(long)]
    zones: bool,
    /// Remove a node from --from; repeatable.
    #[arg(long, value_name = "NAME")]
    remove: Vec<String>,
    /// Give a node of --from the weight W; repeatable.
    #[arg(long, value_name = "NAME=W")]
    reweight: Vec<String>,
    /// Data stored, spread like the keys (e.g. 3TB, 500GB, 2TiB).
    #[arg(long, value_name = "SIZE", value_parser = size)]
    data: Option<f64>,
    /// Keys to look up in both clusters, one a line, optionally
    /// KEY<TAB>BYTES: lists the keys that move as KEY<TAB>OLD<TAB>NEW and
    /// sums their bytes.
    #[arg(long, value_name = "FILE")]
    keys: Option<PathBuf>,
    /// Output format.
    #[arg(long, default_value_t = Format::Text, value_parser = Format::parser(&Format::ALL))]
    format: Format,
    /// List every moved range: (start, end] hash ranges (tokens for
    /// cassandra, 32-bit for ketama and nginx) or slot ranges.
    #[arg(long)]
    ranges: bool,
    /// Draw the moved arcs (or slots), coloured by receiver, into an SVG file.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Write the target cluster file, with the state it needs to stay put
    /// (slot table for slots, tokens for cassandra, bucket order for jump).
    #[arg(long, value_name = "FILE")]
    write: Option<PathBuf>,
    /// Requests per second of a cache in front of a database: prices the
    /// change as the database load right after it.
    #[arg(long, value_name = "RPS", value_parser = rps)]
    rps: Option<f64>,
    /// Hit rate of that cache (0..1, default 0.95).
    #[arg(long, value_name = "H", value_parser = hit_rate)]
    hit_rate: Option<f64>,
    /// Streaming bandwidth per node (e.g. 100MB = 100 MB/s; "/s" optional):
    /// prices the change as the time to stream the bytes.
    #[arg(long, value_name = "SIZE", value_parser = bandwidth)]
    bandwidth: Option<f64>,
}

fn size(text: &str) -> Result<f64, String> {
    parse_size(text)
}

fn bandwidth(text: &str) -> Result<f64, String> {
    let bytes = parse_size(text.trim().trim_end_matches("/s"))?;
    if bytes > 0.0 {
        Ok(bytes)
    } else {
        Err("a bandwidth above 0, e.g. 100MB (per second)".into())
    }
}

fn rps(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=1e12).contains(&v) => Ok(v),
        _ => Err(format!("{text:?}: requests per second from 0 to 1e12")),
    }
}

fn hit_rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(format!("{text:?}: a hit rate from 0 to 1, e.g. 0.95")),
    }
}

/// The two clusters, as built.
pub struct Plan {
    pub from: ClusterSpec,
    pub old: Keyed<AnyPlacement>,
    pub new: Keyed<AnyPlacement>,
    /// The target spec, when it can be written.
    pub to: Result<ClusterSpec, ringwise::Error>,
    pub movement: Movement,
    /// Whether `--to` changes the algorithm or its parameters (key hash
    /// included): then the movement is a migration, and the optimum and
    /// `% N` comparisons, which assume one algorithm, do not apply.
    pub setup_changes: bool,
    /// The node ids of a cluster read from Redis (`--redis`, or a saved
    /// `CLUSTER NODES`), for the redis-cli steps.
    pub redis: Option<redis::RedisIds>,
}

/// What `new` says about the target, read from it rather than kept beside
/// it, so it cannot disagree with the placement and hash the plan used.
impl Plan {
    /// The target's algorithm (differs from `from`'s only with `--to`).
    pub fn to_algorithm(&self) -> Algorithm {
        self.new.placement().algorithm()
    }

    /// The key hash after the change (`from`'s unless `--to` changes it).
    pub fn hash_after(&self) -> ringwise::StableHash {
        *self.new.hasher()
    }

    /// Whether `--to` changes the key hash (or its secret): every key is
    /// rehashed, and the movement is the expectation of `plan/rehash.rs`.
    pub fn rehash(&self) -> bool {
        self.hash_after() != self.from.params.hash
    }

    /// `from -> to`: the algorithms of a migration, as the text and the
    /// picture name them (each caller decides when it applies).
    pub fn algorithm_change(&self) -> String {
        format!("{} -> {}", self.from.algorithm, self.to_algorithm())
    }

    /// What `--svg` draws of the plan, as the picture's plain data: a
    /// migration names both algorithms in the title and has no optimum.
    fn picture(&self) -> PlanPicture<'_> {
        PlanPicture {
            movement: &self.movement,
            old: self.old.placement(),
            algorithm: match self.setup_changes {
                true => self.algorithm_change(),
                false => self.from.algorithm.to_string(),
            },
            migration: self.setup_changes,
        }
    }
}

pub fn run(args: Args) -> Result<(), Failure> {
    let plan = plan(&args)?;
    let keys = match &args.keys {
        Some(path) => Some(keys::tally(path, &plan)?),
        None => None,
    };
    if let Some(path) = &args.write {
        write_target(path, &args, &plan)?;
    }
    if let Some(path) = &args.svg {
        let picture = crate::svg::plan(&plan.picture());
        crate::output::file(path, Mode::Plain, picture.as_bytes())?;
    }
    let costs = render::Costs {
        data: args.data,
        rps: args.rps,
        hit_rate: args.hit_rate,
        bandwidth: args.bandwidth,
    };
    render::write(&plan, keys.as_ref(), &costs, args.format, args.ranges)
}

/// Builds both clusters and their movement.
fn plan(args: &Args) -> Result<Plan, Failure> {
    if args.to.is_none()
        && args.add.is_empty()
        && args.remove.is_empty()
        && args.reweight.is_empty()
        && args.rebalance.is_none()
    {
        return Err(Failure::usage(anyhow!(
            "say what changes: --to FILE, or --add NAME[=W], --remove NAME, --reweight NAME=W"
        )));
    }
    if (args.allocate.is_some() || args.rebalance.is_some()) && args.to.is_some() {
        return Err(Failure::usage(anyhow!(
            "--allocate and --rebalance change --from themselves: drop --to"
        )));
    }
    if args.allocate.is_some() && args.add.is_empty() {
        return Err(Failure::usage(anyhow!(
            "--allocate chooses the points of the nodes you --add: give --add NAME[=W]"
        )));
    }
    if (args.replicas != 1 || args.zones) && args.allocate.is_none() && args.rebalance.is_none() {
        return Err(Failure::usage(anyhow!(
            "--replicas and --zones say what --allocate and --rebalance balance: give one of them"
        )));
    }
    if args.hit_rate.is_some() && args.rps.is_none() {
        return Err(Failure::usage(anyhow!(
            "--hit-rate prices a cache: give its load with --rps too"
        )));
    }
    let ((from, old), redis) = read_from(args)?;
    let (new, to) = match &args.to {
        Some(path) => {
            let format = crate::import::FormatArgs {
                cluster_format: args.to_format,
                pool: args.pool_for_to(),
            };
            let (spec, new) = read_as(path, &format)?;
            check_same_tag(&from, &spec)?;
            (new.placement().clone(), Ok(spec))
        }
        None => {
            let new = apply(args, old.placement())?;
            let to = from.pinned(&new);
            (new, to)
        }
    };
    if new.is_empty() && !old.placement().is_empty() {
        return Err(Failure::usage(anyhow!(
            "the change leaves no node: every key would lose its owner and none could move \
             anywhere; keep at least one node (a plan moves keys between nodes)"
        )));
    }
    check_lookup_cost(old.placement(), "--from")?;
    check_lookup_cost(&new, "the changed cluster")?;
    let movement = diff(old.placement(), &new);
    let setup_changes = args.to.is_some() && matches!(&to, Ok(spec) if !same_setup(&from, spec));
    // Keys hash as each side says: as --from does unless --to changes the
    // key hash (a new secret, another hash), which rehashes every key.
    let hash = match &to {
        Ok(spec) if args.to.is_some() => spec.params.hash,
        _ => from.params.hash,
    };
    let rehash = hash != from.params.hash;
    let new = Keyed::new(new, hash).with_hash_tag(from.hash_tag);
    let movement = match rehash {
        true => rehash::movement(&old, &new, movement)?,
        false => movement,
    };
    Ok(Plan {
        from,
        old,
        new,
        to,
        movement,
        setup_changes,
        redis,
    })
}

/// The most work a plan's sampled lookups may cost, in steps (a removed
/// bucket visited, a rehash, a draw): 2^32, about a minute of a release
/// build's time.
const MAX_PLAN_STEPS: f64 = 4_294_967_296.0;

/// The expected steps of one lookup in `placement`: 1 for every algorithm
/// whose lookups do not depend on removed buckets; memento, anchor and dx
/// measure or compute theirs (memento's walk depends on the order of its
/// removals, each step a binary search over them).
fn steps_per_lookup(placement: &AnyPlacement) -> (f64, Option<usize>) {
    match placement {
        AnyPlacement::Memento(m) => {
            let search = (m.removed_count() as f64 + 2.0).log2();
            (1.0 + m.expected_steps() * search, Some(m.removed_count()))
        }
        AnyPlacement::Anchor(a) => (a.expected_steps(), Some(a.removed_count())),
        AnyPlacement::Dx(d) => (d.expected_steps(), Some(d.removed_count())),
        _ => (1.0, None),
    }
}

/// Refuses up front, with its estimate, a plan whose sampled lookups would
/// take more than [`MAX_PLAN_STEPS`] (a memento file of 2^20 removals ran for
/// over 10 minutes and was killed). Sampled diffs make 2 × 2^20 lookups;
/// `--keys` two more per key.
fn check_lookup_cost(placement: &AnyPlacement, side: &str) -> Result<(), Failure> {
    let (steps, removed) = steps_per_lookup(placement);
    let Some(removed) = removed else {
        return Ok(());
    };
    let lookups = 2.0 * ringwise::DEFAULT_SAMPLES as f64;
    let total = steps * lookups;
    if total <= MAX_PLAN_STEPS {
        return Ok(());
    }
    Err(Failure::data(anyhow!(
        "{side}: {} with {removed} removed buckets costs about {steps:.0} steps per lookup \
         (measured on fixed keys; it depends on the order of the removals), so this plan's \
         {lookups:.0} sampled lookups would take about {total:.1e} steps, over the limit of \
         {MAX_PLAN_STEPS:.1e} (about a minute); `lookup` still answers single keys at that \
         cost each. A cluster rebuilt over its working nodes without removals plans \
         quickly (every key's owner may change once)",
        placement.algorithm()
    )))
}

/// One algorithm with the same parameters on both sides (a default
/// anchor/dx capacity, 0, matches the capacity a written file records).
fn same_setup(from: &ClusterSpec, to: &ClusterSpec) -> bool {
    let mut params = to.params;
    if from.params.capacity == 0 || params.capacity == 0 {
        params.capacity = from.params.capacity;
    }
    from.algorithm == to.algorithm && from.params == params
}

/// A change of hash tag rehashes only the keys that carry one: no
/// expectation without knowing which, so it is refused (a change of the
/// key hash itself, or of its secret, is priced: `plan/rehash.rs`).
fn check_same_tag(from: &ClusterSpec, to: &ClusterSpec) -> Result<(), Failure> {
    if from.hash_tag != to.hash_tag {
        let tag = |t: Option<ringwise::HashTag>| {
            t.map_or_else(|| "none".to_owned(), |t| format!("\"{}\"", t.delimiters()))
        };
        return Err(Failure::data(anyhow!(
            "the two clusters hash keys differently (hash tag from: {}, to: {}): a plan \
             compares where hashes land, and a new hash tag rehashes only the keys that \
             carry one, which no expectation can know; change the tag as a migration \
             of its own",
            tag(from.hash_tag),
            tag(to.hash_tag)
        )));
    }
    Ok(())
}

/// How the key hash changes, in words that never show a secret: "secret
/// changed" or "md5 -> xxh3".
pub fn hash_change(from: ringwise::StableHash, to: ringwise::StableHash) -> String {
    match from.name() == to.name() {
        true => format!("{from}, secret changed"),
        false => format!("{from} -> {to}"),
    }
}

/// `--remove`, `--reweight`, then `--add`, through the placement's own
/// membership changes.
fn apply(args: &Args, old: &AnyPlacement) -> Result<AnyPlacement, Failure> {
    let mut placement = old.clone();
    for name in &args.remove {
        placement = placement
            .without_node(name)
            .with_context(|| format!("--remove {name}"))
            .map_err(Failure::usage)?;
    }
    for item in &args.reweight {
        let option = format!("--reweight {item}");
        let Some((name, _)) = item.split_once('=') else {
            return Err(Failure::usage(anyhow!(
                "{option}: write NAME=WEIGHT, e.g. --reweight {item}=2"
            )));
        };
        let mut node = node(item, &option)?;
        let current = placement
            .nodes()
            .id(name)
            .and_then(|id| placement.nodes().get(id));
        let current = current
            .ok_or_else(|| Failure::usage(anyhow!("{option}: no node {name:?} in --from")))?;
        // A new weight keeps the node's zone, datacenter and id (HAProxy's
        // points follow the id: `set server ... weight` keeps it).
        node.zone = current.zone.clone();
        node.datacenter = current.datacenter.clone();
        node.id = current.id;
        if node.weight == current.weight {
            continue;
        }
        refuse_weights(placement.algorithm(), &node, &option)?;
        let without = placement.without_node(name);
        placement = without
            .and_then(|p| p.with_node(node))
            .with_context(|| option.clone())
            .map_err(Failure::usage)?;
    }
    if let Some(moves) = args.rebalance {
        placement = rebalance(args, placement, moves as usize)?;
    }
    for item in &args.add {
        let option = format!("--add {item}");
        let node = node(item, &option)?;
        placement = match args.allocate {
            Some(points) => allocated(args, &placement, node, points, &option)?,
            None => placement.with_node(node),
        }
        .with_context(|| option.clone())
        .map_err(Failure::usage)?;
    }
    Ok(placement)
}

/// `--reweight` on an algorithm that gives every node the same share (jump
/// and its kin, memento, anchor, dx): say so, rather than the error of the
/// leave it would be done with ("cannot remove"). Asked of a one-node
/// cluster of the algorithm, so the reason is the algorithm's own.
fn refuse_weights(algorithm: Algorithm, node: &Node, option: &str) -> Result<(), Failure> {
    let params = ringwise::Params {
        hash: algorithm.default_hash(),
        ..ringwise::Params::DEFAULT
    };
    match AnyPlacement::build(algorithm, vec![node.clone()], &params) {
        Err(ringwise::Error::Unsupported { reason, .. }) => Err(Failure::usage(anyhow!(
            "{option}: {algorithm} does not support reweighting: {reason}"
        ))),
        _ => Ok(()),
    }
}

/// The allocator of --allocate / --rebalance (`points` per unit weight).
fn allocator(args: &Args, points: u32) -> Result<Allocator, Failure> {
    let allocator = Allocator::new(points).and_then(|a| a.replicas(args.replicas));
    Ok(allocator.map_err(Failure::usage)?.zones(args.zones))
}

/// A ring that keeps its points, or a usage error naming `option`.
fn ring_of<'a>(
    placement: &'a AnyPlacement,
    option: &str,
) -> Result<&'a dyn ringwise::RingView, Failure> {
    match placement.as_ring() {
        Some(ring) if placement.keeps_points() => Ok(ring),
        _ => Err(Failure::usage(anyhow!(
            "{option}: {} makes every point from the node names; allocated points need a \
             ring that keeps them: algorithm = \"ring\" or \"cassandra\"",
            placement.algorithm()
        ))),
    }
}

/// `node` joins at points chosen against the ring as it stands.
fn allocated(
    args: &Args,
    placement: &AnyPlacement,
    node: Node,
    points: u32,
    option: &str,
) -> Result<Result<AnyPlacement, ringwise::Error>, Failure> {
    let ring = ring_of(placement, option)?;
    let chosen = match allocator(args, points)?.allocate(ring, &node) {
        Ok(chosen) => chosen,
        Err(e) => return Ok(Err(e)),
    };
    Ok(placement.with_node_points(node, chosen))
}

/// --rebalance K: the moves of [`Allocator::rebalance`], applied; each is
/// said on stderr.
fn rebalance(args: &Args, placement: AnyPlacement, moves: usize) -> Result<AnyPlacement, Failure> {
    let option = format!("--rebalance {moves}");
    let ring = ring_of(&placement, &option)?;
    let planned = allocator(args, 1)?
        .rebalance(ring, moves)
        .with_context(|| option.clone())
        .map_err(Failure::usage)?;
    let width = ring.width();
    let mut points: Vec<(String, Vec<u64>)> = Vec::new();
    for m in &planned {
        let name = placement
            .nodes()
            .name(m.node)
            .unwrap_or_default()
            .to_owned();
        say!(
            "rebalance: {name} moves its point {} to {}",
            width.native(m.from),
            width.native(m.to)
        );
        let held = match points.iter_mut().find(|(n, _)| *n == name) {
            Some((_, held)) => held,
            None => {
                let id = m.node;
                let mine = ring
                    .points()
                    .filter(|&(_, o)| o == id)
                    .map(|(p, _)| p)
                    .collect();
                points.push((name.clone(), mine));
                &mut points.last_mut().expect("just pushed").1
            }
        };
        if let Some(at) = held.iter().position(|&p| p == m.from) {
            held[at] = m.to;
        }
    }
    if planned.len() < moves {
        say!(
            "rebalance: {} of {moves} moves lower the imbalance; stopped there",
            planned.len()
        );
    }
    let mut placement = placement.clone();
    for (name, held) in points {
        placement = placement
            .with_points_of(&name, held)
            .with_context(|| option.clone())
            .map_err(Failure::usage)?;
    }
    Ok(placement)
}

/// `--from` as read; with --allocate, a --from that does not exist or
/// holds only blanks starts an empty ring cluster. Read through the cluster
/// file's 64 MiB cap either way (`--from /dev/urandom --allocate 16` read
/// 2.1 GB before the cap was checked).
fn read_from(args: &Args) -> Result<(Read, Option<redis::RedisIds>), Failure> {
    if let Some(seed) = &args.redis.redis {
        let live = crate::redis::read(seed)?;
        let keyed = live.spec.build().map_err(Failure::data)?;
        let ids = redis::RedisIds::new(Some(seed), &live.nodes);
        return Ok(((live.spec, keyed), Some(ids)));
    }
    let Some(from) = args.from.as_deref() else {
        return Err(Failure::usage(anyhow!(
            "give --from FILE or --redis HOST:PORT"
        )));
    };
    if args.peer.cluster_format == Some(ringwise_import::Kind::RedisCluster) {
        let read = read_as(from, &args.peer)?;
        let text = crate::input::read_text(from)?;
        let ids = ringwise_import::redis_nodes(&text)
            .map(|(nodes, _)| redis::RedisIds::new(None, &nodes))
            .ok();
        return Ok((read, ids));
    }
    if args.peer.cluster_format.is_some() {
        return read_as(from, &args.peer).map(|read| (read, None));
    }
    // A cluster file of settings alone is a cluster about to start: its
    // nodes come from --add. With --allocate, so is a missing file (an
    // empty one: the default algorithm, no node).
    let bytes = match std::fs::metadata(from) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && args.allocate.is_some() => Vec::new(),
        _ => read_bytes(from)?,
    };
    parse_new_file(from, bytes).map(|read| (read, None))
}

impl Args {
    /// `--pool` for --to: it chooses in whichever of the two files is a
    /// program's configuration.
    fn pool_for_to(&self) -> Option<String> {
        self.to_format.and(self.peer.pool.clone())
    }
}

/// `NAME[=W][@ZONE]`, validated.
fn node(item: &str, option: &str) -> Result<Node, Failure> {
    let (item, zone) = match item.rsplit_once('@') {
        Some((item, zone)) => (item, Some(zone.trim())),
        None => (item, None),
    };
    let (name, weight) = match item.rsplit_once('=') {
        Some((name, w)) => {
            let weight = w.trim().parse::<f64>().map_err(|_| {
                Failure::usage(anyhow!(
                    "{option}: weight {w:?} is not a number, e.g. {name}=2"
                ))
            })?;
            (name, weight)
        }
        None => (item, 1.0),
    };
    let mut node = Node::new(name.trim()).weight(weight);
    if let Some(zone) = zone {
        node = node.zone(zone);
    }
    node.validate()
        .with_context(|| option.to_owned())
        .map_err(Failure::usage)?;
    Ok(node)
}

/// `--write`: the target cluster file, replaced atomically (the old file
/// stays whole on a full disk, even when it is `--from` itself). A file
/// with a `siphash` secret is created 0600, or stricter when a file the
/// secret was read from is (`--from`, `--to`).
fn write_target(path: &Path, args: &Args, plan: &Plan) -> Result<(), Failure> {
    let spec = plan
        .to
        .as_ref()
        .map_err(|e| Failure::usage(anyhow::Error::new(e.clone()).context("--write")))?;
    let mode = match spec.params.hash {
        ringwise::StableHash::SipHash { .. } => {
            Mode::secret_from(args.from.as_deref().into_iter().chain(args.to.as_deref()))
        }
        _ => Mode::Plain,
    };
    crate::output::file(path, mode, spec.to_toml().as_bytes())
}
