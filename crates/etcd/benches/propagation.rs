//! From a membership write to every watcher holding the new ring: the
//! latency distribution on loopback with 5 watchers (target: p99 ≤
//! 50 ms).
//!
//! A plain harness (not criterion): each sample is one etcd write followed
//! by waiting for five independent watchers, each with its own connection,
//! to publish the ring of that revision; what matters is the tail of that
//! distribution, not a mean of repeated identical calls. Each watcher's
//! task records when its `changes()` fired for a revision; a sample's
//! latency is the latest of the five minus the moment before the write.
//!
//! `cargo bench -p ringwise-etcd --bench propagation` (release build;
//! starts its own etcd from Debian's etcd-server on free loopback ports
//! and kills it at the end). `-- N` sets the number of writes (default
//! 500).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ringwise_etcd::member::node_key;
use ringwise_etcd::{Connection, Options};

#[path = "../tests/support/etcd.rs"]
#[allow(dead_code, reason = "the tests' helper; one member is enough here")]
mod server;

#[path = "../../membership/benches/support/measure.rs"]
#[allow(dead_code, reason = "shared by the benches; each uses a part")]
mod measure;

const PREFIX: &str = "/bench";
const WATCHERS: usize = 5;

type Seen = Arc<Mutex<HashMap<u64, Vec<Instant>>>>;

fn main() {
    let writes = measure::numbers().first().copied().unwrap_or(500);
    let etcd = server::Etcd::single();
    let mut latencies = measure::runtime().block_on(run(&etcd.endpoints(), writes));
    println!(
        "propagation to {WATCHERS} watchers over {} writes: {}",
        latencies.len(),
        measure::percentiles(&mut latencies)
    );
}

async fn run(endpoints: &str, writes: usize) -> Vec<Duration> {
    let connection = Connection::parse(endpoints).expect("endpoints");
    let seen: Seen = Arc::default();
    let mut watchers = Vec::new();
    for _ in 0..WATCHERS {
        let watcher = ringwise_etcd::watch(&connection, PREFIX, Options::default())
            .await
            .expect("watcher");
        let mut changes = watcher.changes();
        let seen = Arc::clone(&seen);
        let watcher = Arc::new(watcher);
        let follower = Arc::clone(&watcher);
        tokio::spawn(async move {
            while changes.changed().await.is_ok() {
                let now = Instant::now();
                let revision = follower.load().revision;
                seen.lock()
                    .expect("lock")
                    .entry(revision)
                    .or_default()
                    .push(now);
            }
        });
        watchers.push(watcher);
    }
    let mut client = etcd_client::Client::connect([endpoints], None)
        .await
        .expect("connect");
    let mut latencies = Vec::with_capacity(writes);
    let mut present = std::collections::BTreeSet::new();
    for i in 0..writes {
        // Members come and go: every third step deletes a present member,
        // the others put one (new, or with a new weight), so every write
        // changes the ring.
        let name = format!("node-{}", i % 50);
        let leave = i % 3 == 2 && present.contains(&name);
        let start = Instant::now();
        let revision = if leave {
            present.remove(&name);
            client
                .delete(node_key(PREFIX, &name), None)
                .await
                .map(|r| r.header().map(|h| h.revision()))
        } else {
            present.insert(name.clone());
            client
                .put(
                    node_key(PREFIX, &name),
                    format!("{{\"weight\": {}}}", 1 + i % 4),
                    None,
                )
                .await
                .map(|r| r.header().map(|h| h.revision()))
        }
        .expect("write")
        .expect("header") as u64;
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let done = seen
                .lock()
                .expect("lock")
                .get(&revision)
                .filter(|times| times.len() == WATCHERS)
                .and_then(|times| times.iter().max().copied());
            if let Some(last) = done {
                latencies.push(last.duration_since(start));
                break;
            }
            assert!(
                Instant::now() < deadline,
                "revision {revision} not everywhere in 5 s"
            );
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
    }
    latencies
}
