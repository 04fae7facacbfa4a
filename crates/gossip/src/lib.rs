//! Live ringwise membership without a configuration store: gossip.
//!
//! The seed article: "the ring does not solve cluster membership
//! agreement; use gossip or a configuration store such as etcd and
//! ZooKeeper". This crate is the gossip one, for clusters that run no
//! store: every participant (member or client) is a node of a gossip
//! cluster on UDP, and every client builds the ring from what it has
//! heard.
//!
//! - a [`Registrar`] ([`Gossip::join`], or `Source::register`) announces a
//!   member: its chitchat node id is the name, its state holds the
//!   [`Member`] JSON (the same bytes etcd stores), alive while it gossips;
//!   `shutdown` announces `left` and stops, SIGKILL leaves when the
//!   failure detector says so (within the ttl, [`Timing`]);
//! - a [`Watcher`] ([`watch`]) is an observer node: each change of its
//!   view (the live nodes and their states, the module `view` of this crate) is read
//!   into the shared `Contents`, built into the [`Cluster`] (the one
//!   constructor) and published through the shared `Feed`;
//! - [`read`], [`settings`] and [`configure`] join as observers, wait for
//!   a settled view, and leave.
//!
//! **What gossip guarantees**: eventual agreement, not a revision. There
//! is no shared version: a watcher's version is its own count of views.
//! Two clients hold the same ring (the same fingerprint) once their views
//! agree, which happens a few gossip rounds after the last join or leave
//! (epidemic spread: each round every node exchanges digests with 3
//! random live peers, so news reaches N nodes in about log3(N) rounds);
//! until then they may differ. A partition gives each side its own ring
//! (each declares the other dead) and they merge when it heals. A name is
//! held best effort (see [`Registrar`]); settings are kept by the members
//! (highest version wins), not by a store.
//!
//! **How fast** (`benches/convergence.rs`, ttl 10 s: gossip every 250 ms,
//! loopback, 5 watchers, median / worst of 20 runs, at 10 and at 50
//! members alike): a join is in every ring 0.5 / 0.75 s after the member
//! announced itself (which it does after a 2 s settle wait, to see a
//! holder of its name); a clean leave 0.5 / 0.75 s after `shutdown`; a
//! SIGKILLed member is dropped by the first watcher after 2.2-2.5 / 2.5-3.2 s
//! and by all of them after 3.0-3.2 / 3.5-3.8 s: about 0.3 ttl. Every figure is
//! a few gossip rounds, so it scales with the ttl ([`Timing::for_ttl`]).
//!
//! | `--ttl` | gossip interval | a kill leaves every ring |
//! |---|---|---|
//! | 2 s (the least) | 50 ms | 0.55 s median, 0.6 s worst (5 runs) |
//! | 10 s (the default) | 250 ms | 3.0 s median, 3.8 s worst (20 runs) |
//! | 40 s | 1 s (the most) | 12 s (3 runs); the same above 40 s |
//!
//! **Why chitchat** (0.13): Quickwit's implementation of scuttlebutt
//! (van Renesse et al., "Efficient reconciliation and flow control for
//! anti-entropy protocols"), run in Quickwit's production clusters and
//! kept up by them; it gossips versioned key-value state per node (which
//! is what a member's entry, its `left` mark and the settings are) and
//! has a phi-accrual failure detector (Hayashibara et al.), on tokio and
//! UDP, several nodes per process (each its own socket), so tests run 50
//! members in one process. `foca` (SWIM) gossips membership only, with
//! no state per node; serf is a Go agent to run beside every process.
//!
//! ```no_run
//! # async fn demo() -> Result<(), ringwise_gossip::Error> {
//! use std::time::Duration;
//! use ringwise_gossip::{Gossip, Member, Options};
//!
//! let ttl = Duration::from_secs(10);
//! let seed = Gossip::new("127.0.0.1:7946", vec![], "caches", ttl);
//! let me = Member { address: Some("10.0.0.7:11211".into()), ..Member::default() };
//! let registrar = seed.join("cache-a", me).await?;
//!
//! let client = Gossip::new("127.0.0.1:0", vec!["127.0.0.1:7946".into()], "caches", ttl);
//! let watcher = ringwise_gossip::watch(&client, Options::default()).await?;
//! let ring = watcher.load(); // lock-free
//! println!("fingerprint {:x}", ring.placement.fingerprint);
//! registrar.shutdown().await; // announces `left`: the member leaves at once
//! # Ok(()) }
//! ```

mod error;
mod gossip;
mod node;
mod registrar;
mod source;
mod store;
mod view;
mod watcher;

pub use error::Error;
pub use gossip::Gossip;
pub use node::Timing;
pub use registrar::Registrar;
pub use ringwise_membership::{Cluster, Listed, Member, Options, Status, Watcher};
pub use store::{configure, read, settings};
pub use watcher::watch;
