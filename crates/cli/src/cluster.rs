//! The cluster options of `lookup` and `inspect`: `--cluster FILE` or
//! `--nodes NAME[=WEIGHT][@ZONE],...`, with `--algo`, `--hash`, `--secret`,
//! one option per parameter of the core's list (`params.rs`: `--vnodes`,
//! `--table-size`, ..., `--capacity`) and `--hash-tag` overriding what the
//! file says.
//!
//! The key hash: `--hash` if given; else the file's `hash` if it names one
//! (and `--algo` keeps its algorithm); else the algorithm's own for the
//! final parameters ([`Algorithm::default_hash_with`]), so `--algo ketama
//! --flavor twemproxy` hashes keys with twemproxy's `fnv1a64-twemproxy`.
//!
//! Exit codes follow the one rule of `failure.rs`: a rejected option is a usage
//! error (2), a rejected node list or cluster file is bad data (65). Options
//! and file keys the chosen algorithm does not read are accepted with a
//! warning on stderr, and a ring big enough to take more than about a second
//! to build gets a note.

use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use clap::Args;
use ringwise::{
    Algorithm, AnyPlacement, ClusterSpec, Error, HashTag, Keyed, Param, StableHash, point_count,
};

use crate::Failure;
use crate::algo::AlgoArgs;
use crate::import::FormatArgs;
use crate::input::{read_bytes, read_text, text};
use crate::params::ParamArgs;

#[derive(Debug, Args)]
#[group(skip)]
#[command(group(clap::ArgGroup::new("source").args(["cluster", "nodes", "endpoints", "membership", "redis"]).required(true)))]
pub struct ClusterArgs {
    /// Cluster file (TOML): algorithm, hash, vnodes, [[nodes]].
    #[arg(long, value_name = "FILE")]
    cluster: Option<PathBuf>,
    /// --cluster-format KIND and --pool NAME: --cluster is a program's own
    /// configuration (`import.rs`).
    #[command(flatten)]
    peer: FormatArgs,
    /// Nodes on the command line: NAME[=WEIGHT][@ZONE],... (weights from
    /// 1e-6 to 1e6; whole numbers for ketama and nginx). Kept in the order
    /// given, which ketama (ties), envoy-ring (point counts),
    /// envoy-rendezvous (ties), jump and memento, anchor, dx (buckets)
    /// read: list them as the peer does.
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    nodes: Option<String>,
    /// Or the cluster a membership source holds now (`--membership URL`,
    /// or etcd with --prefix: one linearizable read; `ringwise watch`
    /// follows it).
    #[command(flatten)]
    etcd: crate::live::EtcdArgs,
    /// Or a live Redis Cluster (`redis.rs`).
    #[command(flatten)]
    redis: crate::redis::RedisArgs,
    #[command(flatten)]
    algo: AlgoArgs,
    /// The algorithms' parameters, one option each (`params.rs`).
    #[command(flatten)]
    params: ParamArgs,
    /// Hash only the part of a key between these two characters, e.g. `{}`
    /// puts user:{42}:a and user:{42}:b together (any algorithm;
    /// twemproxy's hash_tag).
    #[arg(long, value_name = "XY", value_parser = hash_tag)]
    hash_tag: Option<HashTag>,
}

/// `--hash-tag`: two ASCII characters.
fn hash_tag(text: &str) -> Result<HashTag, String> {
    HashTag::new(text).map_err(|e| e.to_string())
}

/// Rings of more points than this take more than about a second to build.
const SLOW_BUILD_POINTS: u64 = 5_000_000;

impl ClusterArgs {
    /// The spec these options describe and its placement, built: warnings
    /// for settings the algorithm ignores and a note before a slow build
    /// go to stderr.
    ///
    /// Parsed once and built once (a big maglev table was once built
    /// twice): a cluster file is parsed without building, the
    /// options change the spec, then it is built, so `--max-points`,
    /// `--vnodes` or `--algo` can rescue a file too big as written. When
    /// no option changed it, a failed build is the file's fault: the file
    /// is read again only then, for the error's line. O(file + build).
    pub fn build(&self) -> Result<(ClusterSpec, Keyed<AnyPlacement>), Failure> {
        let (spec, file) = self.spec()?;
        self.warn_ignored(&spec);
        note_slow_build(&spec);
        let keyed = match (spec.build(), file) {
            (Ok(keyed), _) => keyed,
            (Err(_), Some((path, text, as_read))) if as_read == spec => built(&path, &text)?.1,
            (Err(e), _) => return Err(self.classify(e)),
        };
        Ok((spec, keyed))
    }

    /// The validated spec these options describe, and for a cluster file
    /// its path, text and spec as read (not built).
    fn spec(&self) -> Result<(ClusterSpec, Option<FileAsRead>), Failure> {
        let mut file = None;
        let mut spec = match (&self.cluster, &self.nodes) {
            (None, _) if self.peer.cluster_format.is_some() || self.peer.pool.is_some() => {
                return Err(Failure::usage(anyhow!(
                    "--cluster-format and --pool say how to read --cluster FILE: give it"
                )));
            }
            (Some(path), _) if self.peer.cluster_format.is_some() || self.peer.pool.is_some() => {
                crate::import::spec_of(path, &self.peer)?
                    .ok_or_else(|| Failure::usage(anyhow!("--cluster-format without a kind")))?
            }
            (Some(path), _) => {
                let text = read_text(path)?;
                let spec = ClusterSpec::from_toml_unbuilt(&text)
                    .with_context(|| format!("in {}", path.display()))
                    .map_err(Failure::data)?;
                file = Some((path.clone(), text, spec.clone()));
                spec
            }
            (None, Some(list)) => ClusterSpec::new(
                Algorithm::default(),
                crate::nodes::parse(list).map_err(Failure::data)?,
            )
            .context("--nodes")
            .map_err(Failure::data)?,
            (None, None) if self.redis.redis.is_some() => {
                crate::redis::read(self.redis.redis.as_deref().unwrap_or_default())?.spec
            }
            (None, None) => match self.etcd.source()? {
                Some(source) => read_live(source.as_ref())?,
                None => {
                    return Err(Failure::usage(anyhow!(
                        "give --cluster FILE, --nodes LIST, --membership URL or --etcd URLS"
                    )));
                }
            },
        };
        // A hash the file names stands, also when --algo changes the
        // algorithm: a `siphash` with its secret must never fall back to an
        // unkeyed default without a word. If the new algorithm cannot use
        // it, the build refuses the pair (exit 2, naming --algo/--hash).
        let keep_hash = spec.hash_named;
        if let Some(algorithm) = self.algo.algo {
            // A tag that was only the old algorithm's default becomes the
            // new one's (go-redis's `{}`, redis-rb's `^{}`).
            if spec.hash_tag == spec.algorithm.default_hash_tag() {
                spec.hash_tag = algorithm.default_hash_tag();
            }
            spec.algorithm = algorithm;
        }
        let algorithm = spec.algorithm;
        let params = &mut spec.params;
        self.params.apply(params);
        if !keep_hash {
            params.hash = algorithm.default_hash_with(params);
        }
        if self.algo.hash.is_some() || self.algo.secret.is_some() {
            let name = self.algo.hash.unwrap_or(params.hash.name());
            params.hash = StableHash::from_name(name, self.algo.secret.as_deref())
                .context("--hash/--secret")
                .map_err(Failure::usage)?;
        }
        if let Some(tag) = self.hash_tag {
            spec.hash_tag = Some(tag);
        }
        Ok((spec, file))
    }

    /// A build error: a usage error when an option caused it (a table
    /// size that is not prime, a hash the algorithm cannot use...), bad
    /// data when the nodes or the file did.
    fn classify(&self, error: Error) -> Failure {
        let option = match &error {
            Error::InvalidParameter { parameter, .. } if *parameter == "hash" => {
                (self.algo.algo.is_some() || self.algo.hash.is_some()).then_some("--algo/--hash")
            }
            // Envoy's two sizes are checked together (min <= max): either
            // option can be the one at fault.
            Error::InvalidParameter { parameter, .. }
                if matches!(*parameter, "min_ring_size" | "max_ring_size") =>
            {
                self.params
                    .ring_size_given()
                    .then_some("--min-ring-size/--max-ring-size")
            }
            // A file's `removed` buckets under an --algo that keeps none.
            Error::InvalidLayout { node: None, .. } if self.algo.algo.is_some() => Some("--algo"),
            Error::InvalidParameter { parameter, .. } => self
                .params
                .given()
                .iter()
                .any(|&(param, _)| param == *parameter)
                .then_some(*parameter),
            _ => None,
        };
        match option {
            Some(option) => Failure::usage(anyhow::Error::new(error).context(option.to_owned())),
            None => Failure::data(error),
        }
    }

    /// Warns about parameters the algorithm does not read: options given
    /// on the command line, and cluster-file keys set to something else
    /// than their default.
    fn warn_ignored(&self, spec: &ClusterSpec) {
        let algorithm = spec.algorithm;
        let reads = algorithm.reads();
        let given = self.params.given();
        for &(param, _) in given.iter().filter(|(p, _)| !reads.contains(p)) {
            say!(
                "ringwise: warning: --{} is ignored: {algorithm} does not read it ({})",
                param.flag(),
                read_by(param)
            );
        }
        for param in spec.ignored_params() {
            if !self.params.has(param) {
                say!(
                    "ringwise: warning: `{param}` in the cluster file is ignored: \
                     {algorithm} does not read it ({})",
                    read_by(param)
                );
            }
        }
    }
}

/// "only ring reads it", "only ring, ketama and nginx read it", from the
/// registry.
fn read_by(param: Param) -> String {
    let readers: Vec<&str> = Algorithm::ALL
        .iter()
        .filter(|a| a.reads().contains(&param))
        .map(|a| a.name())
        .collect();
    match readers.split_last() {
        Some((last, [])) => format!("only {last} reads it"),
        Some((last, rest)) => format!("only {} and {last} read it", rest.join(", ")),
        None => "no algorithm reads it".into(),
    }
}

/// A note on stderr before building a ring of more than
/// [`SLOW_BUILD_POINTS`] points: measured about 6 million points a second
/// and at most [`ringwise::PEAK_BYTES_PER_POINT`] bytes a point at the
/// build's peak, the figure the point budget's error states too.
fn note_slow_build(spec: &ClusterSpec) {
    if spec.algorithm != Algorithm::Ring {
        return;
    }
    let points: u64 = spec
        .nodes
        .iter()
        .map(|n| point_count(spec.params.vnodes, n.weight))
        .fold(0, u64::saturating_add);
    if points > SLOW_BUILD_POINTS && points <= spec.params.max_points {
        say!(
            "ringwise: note: building a ring of {points} points: about {:.0} s and {} MB",
            (points as f64 / 6e6).ceil(),
            points.saturating_mul(ringwise::PEAK_BYTES_PER_POINT) / 1_000_000
        );
    }
}

/// The cluster a membership source holds now.
fn read_live(source: &dyn ringwise_membership::Source) -> Result<ClusterSpec, Failure> {
    let read = crate::live::block_on(source.read())?;
    let (cluster, revision) = read.map_err(crate::live::failure)?;
    cluster.spec.clone().ok_or_else(|| {
        Failure::data(anyhow!(
            "{} holds no member (version {revision}): start `ringwise join` on each node",
            source.describe()
        ))
    })
}

/// A cluster file's path, text and spec as read (not built).
type FileAsRead = (PathBuf, String, ClusterSpec);

/// A cluster file's spec as read, and the placement built to validate it.
pub type Read = (ClusterSpec, Keyed<AnyPlacement>);

/// The spec in the file at `path`, and its placement.
pub fn read_file(path: &Path) -> Result<Read, Failure> {
    parse_file(path, read_bytes(path)?)
}

/// The spec in `bytes`, read from `path`, and its placement.
pub fn parse_file(path: &Path, bytes: Vec<u8>) -> Result<Read, Failure> {
    built(path, &text(path, bytes)?)
}

/// [`parse_file`] for a cluster about to start (`plan --from`): a file
/// of settings alone, without `[[nodes]]`, is that cluster with no node.
pub fn parse_new_file(path: &Path, bytes: Vec<u8>) -> Result<Read, Failure> {
    ClusterSpec::from_toml_new(&text(path, bytes)?)
        .with_context(|| format!("in {}", path.display()))
        .map_err(Failure::data)
}

/// [`read_file`], or with `--cluster-format` the program's configuration
/// at `path`, built.
pub fn read_as(path: &Path, format: &FormatArgs) -> Result<Read, Failure> {
    match crate::import::spec_of(path, format)? {
        None => read_file(path),
        Some(spec) => {
            let keyed = spec
                .build()
                .with_context(|| format!("in {}", path.display()))
                .map_err(Failure::data)?;
            Ok((spec, keyed))
        }
    }
}

/// The spec in `text` (read from `path`), built.
fn built(path: &Path, text: &str) -> Result<Read, Failure> {
    ClusterSpec::from_toml_built(text)
        .with_context(|| format!("in {}", path.display()))
        .map_err(Failure::data)
}

/// The algorithms whose placement is a ring of points (`as_ring`), from
/// the registry. For error messages.
pub fn ring_shaped() -> Vec<&'static str> {
    Algorithm::ALL
        .iter()
        .filter(|a| a.ring_shaped())
        .map(|a| a.name())
        .collect()
}
