//! Membership at scale: 10,000 members under one lease, one watcher
//! following them: the watcher's memory, the time to its first
//! ring, and the time from one write to the ring that holds it.
//!
//! What stands for "one registrar process holding 10,000 members": one
//! etcd client that grants one lease and puts every member's key under it
//! (etcd lets any number of keys share a lease, and one keep-alive then
//! keeps them all), in batches of 128 puts per transaction (etcd's default
//! `--max-txn-ops`). A `Registrar` per member would hold 10,000 leases and
//! keep-alive streams, which is what the shared lease avoids.
//!
//! Measured: resident memory of this process before and after the watcher
//! started (the ring of 10,000 members, 160 points each by default, and
//! the listed contents), the time of `watch` (one list of 10,001 keys and
//! one build), and then for each of `-- N` single writes (default 20; a
//! member joins or leaves) the time until the watcher publishes the
//! revision: one event, one rebuild of the placement over 10,000 members.
//!
//! `cargo bench -p ringwise-etcd --bench scale` (release build; starts its
//! own etcd from Debian's etcd-server on free loopback ports and kills it
//! at the end). `-- N MEMBERS` sets the writes and the members.

use std::time::{Duration, Instant};

use etcd_client::{PutOptions, Txn, TxnOp};
use ringwise_etcd::member::node_key;
use ringwise_etcd::{Connection, Options};

#[path = "../tests/support/etcd.rs"]
#[allow(dead_code, reason = "the tests' helper; one member is enough here")]
mod server;

#[path = "../../membership/benches/support/measure.rs"]
#[allow(dead_code, reason = "shared by the benches; each uses a part")]
mod measure;

const PREFIX: &str = "/scale";

fn main() {
    let numbers = measure::numbers();
    let writes = numbers.first().copied().unwrap_or(20);
    let members = numbers.get(1).copied().unwrap_or(10_000);
    let etcd = server::Etcd::single();
    measure::runtime().block_on(run(&etcd.endpoints(), writes, members));
}

async fn run(endpoints: &str, writes: usize, members: usize) {
    let mut client = etcd_client::Client::connect([endpoints], None)
        .await
        .expect("connect");
    let lease = client.lease_grant(60, None).await.expect("lease").id();
    let put = PutOptions::new().with_lease(lease);
    let started = Instant::now();
    let names: Vec<String> = (0..members).map(|i| format!("cache-{i:05}")).collect();
    for batch in names.chunks(128) {
        let ops: Vec<TxnOp> = batch
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let value = format!(
                    "{{\"weight\": {}, \"address\": \"10.0.{}.{}:11211\"}}",
                    1 + i % 4,
                    i / 250,
                    i % 250
                );
                TxnOp::put(node_key(PREFIX, name), value, Some(put.clone()))
            })
            .collect();
        client
            .txn(Txn::new().and_then(ops))
            .await
            .expect("register a batch");
    }
    println!(
        "registered {members} members under one lease in {:.2} s",
        started.elapsed().as_secs_f64()
    );
    let connection = Connection::parse(endpoints).expect("endpoints");
    let before = measure::rss_kib();
    let started = Instant::now();
    let watcher = ringwise_etcd::watch(&connection, PREFIX, Options::default())
        .await
        .expect("watcher");
    let first = started.elapsed();
    let held = watcher.load();
    assert_eq!(held.placement.members.len(), members, "every member listed");
    let after = measure::rss_kib();
    println!(
        "watcher: first ring of {members} members in {:.1} ms; resident memory +{:.1} MiB",
        measure::ms(first),
        (after.saturating_sub(before)) as f64 / 1024.0
    );
    let mut times = Vec::with_capacity(writes);
    for i in 0..writes {
        let key = node_key(PREFIX, &format!("joiner-{i}"));
        let start = Instant::now();
        let answer = if i % 2 == 0 {
            client
                .put(key, "{}", Some(put.clone()))
                .await
                .map(|r| r.header().map(|h| h.revision()))
        } else {
            let joined = node_key(PREFIX, &format!("joiner-{}", i - 1));
            client
                .delete(joined, None)
                .await
                .map(|r| r.header().map(|h| h.revision()))
        };
        let revision = answer.expect("write").expect("header") as u64;
        let deadline = Instant::now() + Duration::from_secs(30);
        while watcher.load().revision < revision {
            assert!(
                Instant::now() < deadline,
                "revision {revision} not applied in 30 s"
            );
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        times.push(start.elapsed());
    }
    println!(
        "one change applied ({} writes, each a join or a leave among {members}): \
         {}",
        times.len(),
        measure::median_max(&mut times)
    );
    watcher.shutdown().await;
}
