//! Membership at scale: 10,000 members held by one session, one watcher
//! following them: the watcher's memory, the time to its first
//! ring, and the time from one write to the ring that holds it.
//!
//! What stands for "one registrar process holding 10,000 members": one
//! ZooKeeper session that creates every member as an EPHEMERAL znode of
//! its own (ZooKeeper ties any number of ephemerals to one session, and
//! its pings keep them all), in multi transactions of 500 creates. A
//! `Registrar` per member would hold 10,000 sessions, which is what the
//! shared session avoids. The method is etcd's scale bench's, with a
//! session in place of a lease.
//!
//! Measured: resident memory of this process before and after the watcher
//! started (the ring of 10,000 members, 160 points each by default, and
//! the listed contents), the time of `watch` (one snapshot: multiReads of
//! at most 512 KiB of requests, one for 10,000 members, then one build),
//! and for each of `-- N` single writes
//! (default 20; a member joins or leaves) the time until the watcher
//! publishes a zxid at or past the write's: one event, one snapshot of
//! every member (the watcher re-reads all of them: see src/watcher.rs),
//! one rebuild of the placement.
//!
//! `cargo bench -p ringwise-zookeeper --bench scale` (release build;
//! starts its own ZooKeeper from Debian's zookeeper package on free
//! loopback ports and kills it at the end). `-- N MEMBERS` sets the
//! writes and the members.

use std::time::{Duration, Instant};

use ringwise_membership::Contents;
use ringwise_zookeeper::member::node_key;
use ringwise_zookeeper::{Cluster, Options, ZooKeeper};
use zookeeper_client as zk;

#[path = "../tests/support/zookeeper.rs"]
#[allow(dead_code, reason = "the tests' helper; one server is enough here")]
mod server;

#[path = "../../membership/benches/support/measure.rs"]
#[allow(dead_code, reason = "shared by the benches; each uses a part")]
mod measure;

const PREFIX: &str = "/scale";

fn main() {
    let numbers = measure::numbers();
    let writes = numbers.first().copied().unwrap_or(20);
    let members = numbers.get(1).copied().unwrap_or(10_000);
    let zk = server::Zk::single();
    measure::runtime().block_on(run(zk.hosts(), writes, members));
}

async fn run(hosts: Vec<String>, writes: usize, members: usize) {
    let client = zk::Client::connector()
        .with_session_timeout(Duration::from_secs(30))
        .connect(&hosts.join(","))
        .await
        .expect("connect");
    let persistent = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
    let ephemeral = zk::CreateMode::Ephemeral.with_acls(zk::Acls::anyone_all());
    client
        .mkdir(&format!("{PREFIX}/nodes"), &persistent)
        .await
        .expect("prefix");
    let started = Instant::now();
    let names: Vec<String> = (0..members).map(|i| format!("cache-{i:05}")).collect();
    for batch in names.chunks(500) {
        let mut multi = client.new_multi_writer();
        for (i, name) in batch.iter().enumerate() {
            let value = format!(
                "{{\"weight\": {}, \"address\": \"10.0.{}.{}:11211\"}}",
                1 + i % 4,
                i / 250,
                i % 250
            );
            multi
                .add_create(&node_key(PREFIX, name), value.as_bytes(), &ephemeral)
                .expect("create op");
        }
        multi.commit().await.expect("register a batch");
    }
    println!(
        "registered {members} members as ephemerals of one session (0x{:x}) in {:.2} s",
        client.session_id().0,
        started.elapsed().as_secs_f64()
    );
    let source = ZooKeeper::new(hosts, PREFIX);
    let before = measure::rss_kib();
    let started = Instant::now();
    let watcher = source.watch(Options::default()).await.expect("watcher");
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
        let start = Instant::now();
        let expected = if i % 2 == 0 {
            let key = node_key(PREFIX, &format!("joiner-{i}"));
            client.create(&key, b"{}", &ephemeral).await.expect("join");
            members + 1
        } else {
            let key = node_key(PREFIX, &format!("joiner-{}", i - 1));
            client.delete(&key, None).await.expect("leave");
            members
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while watcher.load().placement.members.len() != expected {
            assert!(Instant::now() < deadline, "change {i} not applied in 30 s");
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        times.push(start.elapsed());
    }
    // The part of a change that is not ZooKeeper's: one build of the ring
    // from the same members (what every change costs on any source).
    let mut contents = Contents::new(PREFIX);
    for (i, name) in names.iter().enumerate() {
        let value = format!("{{\"weight\": {}}}", 1 + i % 4);
        contents.put(
            &node_key(PREFIX, name),
            value.as_bytes(),
            i as i64 + 1,
            i as i64 + 1,
        );
    }
    let mut builds: Vec<Duration> = (0..5)
        .map(|_| {
            let built = Instant::now();
            Cluster::from_contents(&mut contents).expect("build");
            built.elapsed()
        })
        .collect();
    builds.sort();
    let build = builds[2];
    println!(
        "one change applied ({} writes, each a join or a leave among {members}): \
         {} (one build of the ring alone, median of 5: {:.1} ms)",
        times.len(),
        measure::median_max(&mut times),
        measure::ms(build)
    );
    watcher.shutdown().await;
}
