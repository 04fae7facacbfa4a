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
//! - a [`Watcher`] lists the prefix at a revision, builds the ring
//!   ([`Cluster`]) from `PREFIX/config` (the settings of a cluster file:
//!   algorithm, hash, vnodes, ...) and the members, publishes it in a
//!   [`ringwise::Live`] holder with that revision, then applies every
//!   change in revision order. Two watchers at the same revision hold the
//!   same ring, and say so with the same [`Cluster::fingerprint`].
//!
//! Lookups never wait for etcd: they read the last published ring, which
//! stays usable while etcd is away ([`Status::staleness`] says for how
//! long). All I/O and async code of ringwise lives here, on tokio; the
//! core crate has none.
//!
//! ```no_run
//! # async fn demo() -> Result<(), ringwise_etcd::Error> {
//! use std::time::Duration;
//! use ringwise_etcd::{Connection, Member, Options, Registrar, Watcher};
//!
//! let etcd = Connection::parse("http://127.0.0.1:2379")?;
//! let me = Member { address: Some("10.0.0.7:11211".into()), ..Member::default() };
//! let registrar = Registrar::register(&etcd, "/caches", "cache-a", me, Duration::from_secs(10)).await?;
//!
//! let watcher = Watcher::start(&etcd, "/caches", Options::default()).await?;
//! let ring = watcher.load(); // lock-free
//! println!("revision {}: user:42 -> {:?}", ring.revision, ring.placement.owner("user:42"));
//! registrar.shutdown().await?; // revokes the lease: the node leaves at once
//! # Ok(()) }
//! ```

use std::time::Duration;

mod cluster;
mod connect;
mod error;
pub mod member;
mod registrar;
mod store;
mod watcher;

pub use cluster::Cluster;
pub use connect::{Connection, DEFAULT_TIMEOUT, Tls};
pub use error::Error;
pub use member::{Listed, Member};
pub use registrar::{DEFAULT_TTL, Registrar};
pub use store::{configure, read, settings};
pub use watcher::{Options, Status, Watcher};

/// A background task that stops when told (or when dropped): what a
/// registrar and a watcher run.
#[derive(Debug)]
pub(crate) struct Task {
    stop: tokio::sync::watch::Sender<bool>,
    handle: Option<tokio::task::JoinHandle<()>>,
}

impl Task {
    /// Spawns `run`, which must return soon after its receiver changes.
    pub(crate) fn spawn<F>(run: impl FnOnce(tokio::sync::watch::Receiver<bool>) -> F) -> Self
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        let (stop, stopped) = tokio::sync::watch::channel(false);
        Task {
            stop,
            handle: Some(tokio::spawn(run(stopped))),
        }
    }

    /// Tells the task to stop and waits until it has.
    pub(crate) async fn stop(&mut self) {
        let _ = self.stop.send(true);
        if let Some(handle) = self.handle.take() {
            let _ = handle.await;
        }
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        if let Some(handle) = self.handle.take() {
            handle.abort();
        }
    }
}

/// The pause before retry `attempt` (1, 2, ...): 50 ms doubling up to
/// `max`, then a random 50–100 % of it ("equal jitter"), so clients that
/// lost etcd together do not come back in step.
pub(crate) fn backoff(attempt: u32, max: Duration) -> Duration {
    let full = Duration::from_millis(50)
        .saturating_mul(1 << attempt.saturating_sub(1).min(16))
        .min(max);
    // Jitter from the clock's nanoseconds: retry timing only, never
    // placement.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mixed = u64::from(nanos).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32;
    let fraction = 0.5 + 0.5 * (mixed as f64 / u32::MAX as f64);
    full.mul_f64(fraction)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_its_cap_with_jitter() {
        let max = Duration::from_secs(1);
        for attempt in 1..40 {
            let pause = backoff(attempt, max);
            let full = Duration::from_millis(50 << (attempt - 1).min(5)).min(max);
            assert!(pause >= full / 2 && pause <= full, "{attempt}: {pause:?}");
        }
        // Jitter: draws for one attempt differ and spread over the range
        // (without it, all 200 would be the full 400 ms).
        let draws: Vec<Duration> = (0..200).map(|_| backoff(4, max)).collect();
        let distinct: std::collections::BTreeSet<Duration> = draws.iter().copied().collect();
        assert!(distinct.len() > 100, "{} distinct of 200", distinct.len());
        let (low, high) = (draws.iter().min(), draws.iter().max());
        let spread = high.zip(low).map(|(h, l)| *h - *l);
        assert!(
            spread > Some(Duration::from_millis(100)),
            "spread {spread:?} of a 200 ms range"
        );
    }
}
