//! From a membership write to every watcher holding the new ring: the
//! latency distribution on loopback with 5 watchers (target: p99 ≤
//! 50 ms).
//!
//! A plain harness (not criterion): each sample is one ZooKeeper write (a
//! member created, its weight changed, or deleted, by a raw client: the
//! write itself, not a registrar's session set-up) followed by waiting
//! until five watchers, each with its own session, hold the members that
//! write leaves (names and weights); a sample's latency is from before the
//! write to the moment the last of the five holds it (polled every
//! 200 µs). Every watcher's path: the watch event, one multiRead snapshot,
//! one rebuild, one publish.
//!
//! `cargo bench -p ringwise-zookeeper --bench propagation` (release build;
//! starts its own ZooKeeper from Debian's zookeeper package on free
//! loopback ports and kills it at the end). `-- N` sets the number of
//! writes (default 200).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use ringwise_zookeeper::member::node_key;
use ringwise_zookeeper::{Options, Watcher, ZooKeeper};
use zookeeper_client as zk;

#[path = "../tests/support/zookeeper.rs"]
#[allow(dead_code, reason = "the tests' helper; one server is enough here")]
mod server;

#[path = "../../membership/benches/support/measure.rs"]
#[allow(dead_code, reason = "shared by the benches; each uses a part")]
mod measure;

const PREFIX: &str = "/bench";
const WATCHERS: usize = 5;

fn main() {
    let writes = measure::numbers().first().copied().unwrap_or(200);
    let zk = server::Zk::single();
    let mut latencies = measure::runtime().block_on(run(zk.hosts(), writes));
    println!(
        "propagation to {WATCHERS} watchers over {} writes: {}",
        latencies.len(),
        measure::percentiles(&mut latencies)
    );
}

/// What a watcher holds: name -> weight.
fn held(watcher: &Watcher) -> BTreeMap<String, Option<f64>> {
    let ring = watcher.load();
    ring.placement
        .members
        .iter()
        .map(|m| (m.name.clone(), m.member.weight))
        .collect()
}

async fn run(hosts: Vec<String>, writes: usize) -> Vec<Duration> {
    let source = ZooKeeper::new(hosts.clone(), PREFIX);
    let mut watchers = Vec::new();
    for _ in 0..WATCHERS {
        watchers.push(source.watch(Options::default()).await.expect("watcher"));
    }
    let client = zk::Client::connect(&hosts.join(","))
        .await
        .expect("connect");
    let create = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
    let mut expected: BTreeMap<String, Option<f64>> = BTreeMap::new();
    let mut latencies = Vec::with_capacity(writes);
    for i in 0..writes {
        // Members come and go: a present member leaves every third step or
        // changes its weight, an absent one joins; every write changes the
        // ring.
        let name = format!("node-{}", i % 50);
        let key = node_key(PREFIX, &name);
        let weight = (1 + i % 4) as f64;
        let value = format!("{{\"weight\": {weight}}}");
        let start = Instant::now();
        match expected.get(&name) {
            Some(_) if i % 3 == 2 => {
                client.delete(&key, None).await.expect("delete");
                expected.remove(&name);
            }
            Some(_) => {
                client
                    .set_data(&key, value.as_bytes(), None)
                    .await
                    .expect("set");
                expected.insert(name, Some(weight));
            }
            None => {
                client
                    .create(&key, value.as_bytes(), &create)
                    .await
                    .expect("create");
                expected.insert(name, Some(weight));
            }
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while !watchers.iter().all(|w| held(w) == expected) {
            assert!(Instant::now() < deadline, "write {i} not everywhere in 5 s");
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        latencies.push(start.elapsed());
    }
    latencies
}
