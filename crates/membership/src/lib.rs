//! What every ringwise membership source shares.
//!
//! The seed article: "the ring does not solve cluster membership
//! agreement; use gossip or a configuration store such as etcd and
//! ZooKeeper". If one client knows about a new node and another does not,
//! writes and reads diverge. Each source crate (`ringwise-etcd`,
//! `ringwise-zookeeper`, `ringwise-gossip`) moves members and settings in
//! and out of its store; this crate holds everything else, once:
//!
//! - [`member`]: the layout (`PREFIX/config`, `PREFIX/nodes/NAME`), a
//!   [`Member`]'s JSON value, and [`Contents`], what a prefix holds, read
//!   into the parts of `ClusterSpec::from_parts` (never TOML text);
//! - [`Cluster`]: the ring built from it, with its fingerprint;
//! - [`Feed`] and [`Watcher`]: list, publish in a [`ringwise::Live`]
//!   holder at a version, apply each batch of changes as a unit, confirm,
//!   relist; [`Status`] says how stale the ring is;
//! - [`Source`] and [`Registration`]: the one interface the commands take
//!   (`--membership URL`, [`Url`]), and [`backoff`], the jittered pause
//!   of every retry.
//!
//! No I/O of its own; async on tokio (timers, channels).

pub mod backoff;
mod cluster;
mod config;
mod error;
mod fit;
pub mod member;
mod source;
mod task;
mod watcher;

pub use cluster::Cluster;
pub use config::{change_settings, check_member, read_settings};
pub use error::Error;
pub use member::{Contents, Listed, Member, check_name};
pub use source::{
    DEFAULT_PREFIX, Pending, Registration, Scheme, Source, Url, check_host, check_ttl,
};
pub use task::Task;
pub use watcher::{Change, Feed, Options, Outcome, Status, Watcher, apply_changes};
