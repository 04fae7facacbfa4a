//! What the test modules share: a source on a test server, polling until a
//! condition or a deadline, and the raw client for writes that must not
//! go through ringwise.

use std::time::{Duration, Instant};

use ringwise_zookeeper::{Watcher, ZooKeeper};
use zookeeper_client as zk;

/// A source on `hosts` under `prefix`, with short sessions for watchers.
pub fn source(hosts: Vec<String>, prefix: &str) -> ZooKeeper {
    ZooKeeper::new(hosts, prefix).with_session_timeout(Duration::from_secs(2))
}

/// Watch options for the tests: confirmations every 200 ms.
pub fn options() -> ringwise_zookeeper::Options {
    let mut options = ringwise_zookeeper::Options::default();
    options.progress_every = Duration::from_millis(200);
    options.max_backoff = Duration::from_millis(500);
    options
}

/// Polls `done` every 20 ms until it holds; panics with `what` after
/// `within`. Returns the time it took.
pub async fn until(within: Duration, what: &str, mut done: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    loop {
        if done() {
            return start.elapsed();
        }
        assert!(start.elapsed() < within, "{what}: not within {within:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The names a watcher holds, in join order.
pub fn names(watcher: &Watcher) -> Vec<String> {
    watcher
        .load()
        .placement
        .members
        .iter()
        .map(|m| m.name.clone())
        .collect()
}

/// Whether every watcher holds exactly `expected` (any order).
pub fn all_hold(watchers: &[Watcher], expected: &[&str]) -> bool {
    let mut expected: Vec<String> = expected.iter().map(|s| (*s).to_owned()).collect();
    expected.sort();
    watchers.iter().all(|w| {
        let mut held = names(w);
        held.sort();
        held == expected
    })
}

/// A raw client on `hosts` (no ringwise in between).
pub async fn raw(hosts: &[String]) -> zk::Client {
    zk::Client::connect(&hosts.join(","))
        .await
        .expect("raw client")
}
