//! ringwise-import: an operator's own cluster configuration, read as the
//! program that uses it reads it, and turned into a ringwise cluster.
//!
//! Each [`Kind`] is one peer's file (a `nutcracker.yml` pool, an nginx
//! `upstream` block, a libmemcached configuration string, ...), read by one
//! file of this crate into [`Settings`] and [`Member`]s, the values
//! [`ClusterSpec::from_parts`] checks, never into TOML text to be parsed
//! again. `ringwise import KIND FILE` prints the result as a cluster file
//! ([`Imported::to_toml`]); `--cluster FILE --cluster-format KIND` reads
//! the peer's file directly.
//!
//! The rule every reader follows: a setting that changes placement and
//! that ringwise reproduces is translated; one it does not reproduce
//! (libmemcached's `--DISTRIBUTION=modula`, nginx's `hash` without
//! `consistent`) is refused with the reason, naming the line and what
//! ringwise supports; one that does not change placement (timeouts, pool
//! sizes) is kept as a note ([`Imported::notes`]), printed with the
//! result, so nothing in the file is silently dropped. Nothing is guessed.
//!
//! ```
//! use ringwise_import::{Kind, import};
//!
//! let text = "--DISTRIBUTION=consistent --SERVER=10.0.0.1:11211/?2 --SERVER=10.0.0.2 --HASH=MD5";
//! let imported = import(Kind::Libmemcached, text, None).unwrap();
//! let spec = imported.spec().unwrap();
//! assert_eq!(spec.algorithm.name(), "ketama");
//! assert_eq!(spec.nodes.len(), 2);
//! ```
//!
//! Cost: one pass over the text, O(file), then the checks of
//! [`ClusterSpec::from_parts`] (O(N + given points)); nothing is built.
//! The text is the caller's: this crate does no I/O.

mod address;
mod envoy;
mod error;
mod grpc;
mod haproxy;
mod libmemcached;
mod nginx;
mod nginx_conf;
mod nodetool_ring;
mod redis_cluster;
mod redis_nodes;
mod twemproxy;
mod varnish;
mod vcl;
mod yaml;

use std::fmt;
use std::str::FromStr;

pub use error::ImportError;
pub use redis_nodes::{RedisNode, redis_nodes};
use ringwise::{ClusterSpec, Member, Part, Settings};

/// What a reader made of a peer's file.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Imported {
    /// The cluster's settings (algorithm, hash, parameters).
    pub settings: Settings,
    /// The members, in the peer's order.
    pub members: Vec<Member>,
    /// The line each member came from (1-based), for errors.
    pub member_lines: Vec<usize>,
    /// Where each member is reached (`host:port`) when the file says so
    /// apart from its name: a named twemproxy server. `None`: the name is
    /// the address. What a proxy routing the pool connects to.
    pub addresses: Vec<Option<String>>,
    /// The peer's other settings as written, `(name, value, line)`: what
    /// does not place keys but a program standing in for the peer reads
    /// (twemproxy's `listen`, `timeout`, `auto_eject_hosts`...).
    pub directives: Vec<(String, String, usize)>,
    /// What was read but does not change placement, or was decided (one
    /// line each, e.g. "line 3: --CONNECT-TIMEOUT=200 does not change
    /// placement"), printed with the result.
    pub notes: Vec<String>,
    /// Which pool, upstream or cluster of the file this is, when the kind
    /// has several.
    pub selected: Option<String>,
}

impl Imported {
    /// An empty import with the given settings.
    fn new(settings: Settings) -> Self {
        Imported {
            settings,
            members: Vec::new(),
            member_lines: Vec::new(),
            addresses: Vec::new(),
            directives: Vec::new(),
            notes: Vec::new(),
            selected: None,
        }
    }

    /// Adds a member read at `line`.
    fn push(&mut self, member: Member, line: usize) {
        self.push_at(member, line, None);
    }

    /// Adds a member read at `line`, reached at `address`.
    fn push_at(&mut self, member: Member, line: usize, address: Option<String>) {
        self.members.push(member);
        self.member_lines.push(line);
        self.addresses.push(address);
    }

    /// The validated cluster: [`ClusterSpec::from_parts`] of the settings
    /// and members, its error turned into the line of the member it
    /// blames. Not built: a build may still refuse what only a build
    /// checks (the point budget). O(N + given points).
    pub fn spec(&self) -> Result<ClusterSpec, ImportError> {
        ClusterSpec::from_parts(&self.settings, &self.members).map_err(|rejected| {
            let line = match rejected.part {
                Part::Member { index, .. } => self.member_lines.get(index).copied(),
                _ => None,
            };
            ImportError::Rejected {
                line,
                error: rejected.error,
            }
        })
    }

    /// The cluster file of this import: a comment naming its source and
    /// each note, then [`ClusterSpec::to_toml`]. O(N + given points).
    pub fn to_toml(&self, kind: Kind, source: &str) -> Result<String, ImportError> {
        let spec = self.spec()?;
        let mut out = format!("# Imported by `ringwise import {kind}` from {source}");
        if let Some(name) = &self.selected {
            out.push_str(&format!(" ({} {name})", kind.selects().unwrap_or("part")));
        }
        out.push('\n');
        for note in &self.notes {
            out.push_str(&format!("# note: {note}\n"));
        }
        out.push_str(&spec.to_toml());
        Ok(out)
    }
}

/// The registry of kinds: one line each, generating [`Kind`], its names,
/// its descriptions and the dispatch to its reader. A reader is
/// `fn read(text: &str, select: Option<&str>) -> Result<Imported, ImportError>`
/// in its own file; `selects` names what `--pool NAME` chooses when a file
/// holds several (`None`: the kind holds one cluster).
macro_rules! kinds {
    ($($variant:ident => $module:ident, $name:literal, $selects:expr, $about:literal;)+) => {
        /// A peer's configuration format.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Kind {
            $(#[doc = $about] $variant,)+
        }

        impl Kind {
            /// Every kind, in documentation order.
            pub const ALL: &'static [Kind] = &[$(Kind::$variant,)+];

            /// The name `ringwise import` and `--cluster-format` take.
            pub fn name(self) -> &'static str {
                match self {
                    $(Kind::$variant => $name,)+
                }
            }

            /// One line on what the kind reads.
            pub fn about(self) -> &'static str {
                match self {
                    $(Kind::$variant => $about,)+
                }
            }

            /// What `--pool NAME` chooses in this kind's files ("pool",
            /// "upstream", "cluster"), or `None` when a file holds one
            /// cluster.
            pub fn selects(self) -> Option<&'static str> {
                match self {
                    $(Kind::$variant => $selects,)+
                }
            }

            fn read(self, text: &str, select: Option<&str>) -> Result<Imported, ImportError> {
                match self {
                    $(Kind::$variant => $module::read(text, select),)+
                }
            }
        }
    };
}

kinds! {
    Libmemcached => libmemcached, "libmemcached", None,
        "a libmemcached configuration string: --SERVER=host:port/?weight ... (memcached(3), pylibmc, php-memcached)";
    Envoy => envoy, "envoy", Some("cluster"),
        "an Envoy cluster (YAML or JSON; a Cluster, a list, or a bootstrap) with lb_policy RING_HASH or MAGLEV, or a load_balancing_policy ring_hash, maglev or rendezvous_hash";
    Grpc => grpc, "grpc", None,
        "a gRPC channel (JSON): an ipv4:/ipv6: target or endpoints, a serviceConfig with ring_hash_experimental, channelArgs";
    Nginx => nginx, "nginx", Some("upstream"),
        "an nginx.conf upstream block with hash KEY consistent; (http or stream)";
    Twemproxy => twemproxy, "twemproxy", Some("pool"),
        "a nutcracker.yml pool (twemproxy): distribution ketama, servers host:port:weight and an optional name";
    NodetoolRing => nodetool_ring, "nodetool-ring", None,
        "the text `nodetool ring` prints (Cassandra, Murmur3Partitioner): each node's tokens, rack and datacenter";
    RedisCluster => redis_cluster, "redis-cluster", None,
        "a Redis Cluster's CLUSTER NODES (or CLUSTER SHARDS) output: its masters and their slots";
    Varnish => varnish, "varnish", Some("director"),
        "a VCL file's directors.shard() director as vcl_init sets it up (add_backend, reconfigure)";
    Haproxy => haproxy, "haproxy", Some("backend"),
        "an haproxy.cfg backend (or listen) with balance by a hash and hash-type consistent";
}

/// Reads `text` as a `kind` file; `select` chooses a pool, upstream or
/// cluster when the file holds several (required then), and is refused by
/// kinds that hold one. The result is checked ([`Imported::spec`]) before
/// it is returned. O(file + N).
pub fn import(kind: Kind, text: &str, select: Option<&str>) -> Result<Imported, ImportError> {
    if let (Some(name), None) = (select, kind.selects()) {
        return Err(ImportError::NothingToSelect {
            kind: kind.name(),
            name: name.to_owned(),
        });
    }
    let imported = kind.read(text, select)?;
    imported.spec()?;
    Ok(imported)
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Kind {
    type Err = ImportError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Kind::ALL
            .iter()
            .copied()
            .find(|kind| kind.name() == name)
            .ok_or_else(|| ImportError::UnknownKind {
                name: name.to_owned(),
                known: kind_names(),
            })
    }
}

/// The names of every kind, comma separated, for messages.
pub fn kind_names() -> String {
    let names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
    names.join(", ")
}

/// The 1-based line of byte `offset` in `text`. O(offset).
pub(crate) fn line_at(text: &str, offset: usize) -> usize {
    1 + text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}
