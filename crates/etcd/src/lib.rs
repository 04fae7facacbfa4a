//! Live ringwise membership on etcd: every client holds the same ring at
//! the same revision.
//!
//! The seed article: "the ring does not solve cluster membership agreement;
//! use gossip or a configuration store such as etcd". If one client knows
//! about a new node and another does not, writes and reads diverge. This
//! crate keeps them in agreement through etcd (v3 API, 3.4 or later):
//!
//! - a [`Registrar`] announces a node: `PREFIX/nodes/NAME` holds its
//!   [`Member`] value (weight, zone, address, metadata) under a lease that
//!   it keeps alive, and that dies with the process;
//! - a [`Watcher`] ([`watch`]) lists the prefix at a revision, builds the ring
//!   ([`Cluster`]) from `PREFIX/config` (the settings of a cluster file:
//!   algorithm, hash, vnodes, ...) and the members, publishes it in a
//!   [`ringwise::Live`] holder with that revision, then applies every
//!   change in revision order. Two watchers at the same revision hold the
//!   same ring, and say so with the same [`Cluster::fingerprint`].
//!
//! Lookups never wait for etcd: they read the last published ring, which
//! stays usable while etcd is away ([`Status::staleness`] says for how
//! long). [`Etcd`] is this crate as a `ringwise_membership::Source`, the
//! interface the commands take as `--membership etcd://...`; the layout,
//! the members' values, the ring and its publishing are that crate's,
//! shared with ZooKeeper and gossip. The core crate has no I/O.
//!
//! ```no_run
//! # async fn demo() -> Result<(), ringwise_etcd::Error> {
//! use std::time::Duration;
//! use ringwise_etcd::{Connection, Member, Options, Registrar};
//!
//! let etcd = Connection::parse("http://127.0.0.1:2379")?;
//! let me = Member { address: Some("10.0.0.7:11211".into()), ..Member::default() };
//! let registrar = Registrar::register(&etcd, "/caches", "cache-a", me, Duration::from_secs(10)).await?;
//!
//! let watcher = ringwise_etcd::watch(&etcd, "/caches", Options::default()).await?;
//! let ring = watcher.load(); // lock-free
//! let owner = ring.placement.owner("user:42").unwrap_or("no member yet");
//! println!("revision {}: user:42 -> {owner}", ring.revision);
//! registrar.shutdown().await?; // revokes the lease: the node leaves at once
//! # Ok(()) }
//! ```

mod connect;
mod error;
mod registrar;
mod source;
mod store;
mod watcher;

pub use connect::{Connection, DEFAULT_TIMEOUT, Tls};
pub use error::{AuthProblem, Error, TlsProblem, Unreached, Why};
pub use registrar::{DEFAULT_TTL, Registrar};
pub use ringwise_membership::{Cluster, Listed, Member, Options, Status, Watcher, member};
pub use source::Etcd;
pub use store::{configure, read, settings};
pub use watcher::watch;

// docs/etcd.md's Rust examples use this crate, so that page is compiled
// here rather than in the core crate's doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/etcd.md")]
struct GuideDoctests;
