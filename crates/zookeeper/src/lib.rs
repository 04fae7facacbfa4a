//! Live ringwise membership on ZooKeeper: every client holds the same ring
//! at the same zxid.
//!
//! The seed article: "the ring does not solve cluster membership
//! agreement; use gossip or a configuration store such as etcd and
//! ZooKeeper". This crate is the ZooKeeper one (3.6 or later: it needs
//! `multiRead` and persistent recursive watches; tested on Debian's 3.8):
//!
//! - a [`Registrar`] announces a member: `PREFIX/nodes/NAME` is an
//!   EPHEMERAL znode holding its [`Member`] JSON (the same bytes as on
//!   etcd), alive as long as the registrar's session; a process that dies
//!   leaves when the session expires (the ttl), one that shuts down leaves
//!   at once; an expired session registers again under a new one;
//! - a [`Watcher`] ([`ZooKeeper::watch`]) reads the prefix as one
//!   snapshot, builds the ring ([`Cluster`]) from `PREFIX/config` (a
//!   PERSISTENT znode of cluster-file settings) and the members, and
//!   publishes it at the highest zxid the snapshot reflects; a persistent
//!   recursive watch on the prefix says when to read again. Two watchers
//!   at the same zxid hold the same ring ([`Cluster::fingerprint`]).
//!
//! [`ZooKeeper`] is the `ringwise_membership::Source` the commands take as
//! `--membership zk://HOST:PORT[,...]/PREFIX`; the layout, the ring and its
//! publishing are that crate's, shared with etcd and gossip.
//!
//! Client: `zookeeper-client` (kezhuw), chosen because it is a pure-Rust
//! async client on tokio that is kept up with the server: it speaks
//! `addWatch` (persistent recursive watches, 3.6+) and `multiRead` (the
//! consistent snapshot), reports session states (disconnected, expired)
//! as a stream this crate acts on, resends digest credentials on every
//! reconnection, and fails over between the servers of a connect string.
//! The older `zookeeper` crate is synchronous with a thread per session
//! and has neither persistent watches nor multiRead.
//!
//! ```no_run
//! # async fn demo() -> Result<(), ringwise_zookeeper::Error> {
//! use std::time::Duration;
//! use ringwise_zookeeper::{Member, Options, ZooKeeper};
//!
//! let zk = ZooKeeper::new(vec!["127.0.0.1:2181".into()], "/caches");
//! let me = Member { address: Some("10.0.0.7:11211".into()), ..Member::default() };
//! let registrar = zk.register("cache-a", me, Duration::from_secs(10)).await?;
//! let watcher = zk.watch(Options::default()).await?;
//! let ring = watcher.load(); // lock-free
//! let owner = ring.placement.owner("user:42").unwrap_or("no member yet");
//! println!("zxid {:#x}: user:42 -> {owner}", ring.revision);
//! registrar.shutdown().await?; // deletes the znode: the member leaves at once
//! # Ok(()) }
//! ```

mod error;
mod registrar;
mod session;
mod snapshot;
mod source;
mod store;
mod watcher;

pub use error::Error;
pub use registrar::Registrar;
pub use ringwise_membership::{Cluster, Listed, Member, Options, Status, Watcher, member};
pub use source::{DEFAULT_SESSION_TIMEOUT, ZooKeeper};

// docs/membership.md's Rust example uses this crate through the shared
// `Source`, so that page is compiled here rather than in the core's.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/membership.md")]
struct GuideDoctests;
