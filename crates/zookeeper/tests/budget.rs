//! A member registered with a legal weight whose points the ring cannot
//! hold (10^6 at 160 points per unit: 1.6 x 10^8, past the 2^24 budget)
//! among normal ones: every watcher publishes the ring of the others and
//! names it, keeps following (a killed member still leaves), and a new
//! client starts. It used to be charged to the config: every watcher held
//! its old ring with the dead member in it, and new clients failed.

use std::time::Duration;

use ringwise_membership::Source;
use ringwise_zookeeper::Member;

use crate::common::{all_hold, names, options, source, until};
use crate::support::member::Process;
use crate::support::zookeeper::Zk;

const TTL: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_past_the_point_budget_is_left_out_named_and_the_ring_still_follows() {
    let server = Zk::single();
    let hosts = server.hosts();
    let zk = source(hosts.clone(), "/budget");
    let a = zk.register("a", Member::default(), TTL).await.expect("a");
    let b = zk.register("b", Member::default(), TTL).await.expect("b");
    let mut dying = Process::member(&hosts, "/budget", "dying", 2);
    let watchers = [
        zk.watch(options()).await.expect("watch"),
        zk.watch(options()).await.expect("watch"),
    ];
    until(Duration::from_secs(10), "three members", || {
        all_hold(&watchers, &["a", "b", "dying"])
    })
    .await;
    let huge = Member {
        weight: Some(1e6),
        ..Member::default()
    };
    let heavy = zk.register("huge", huge, TTL).await.expect("huge");
    let key = "/budget/nodes/huge";
    until(Duration::from_secs(10), "huge named as left out", || {
        watchers
            .iter()
            .all(|w| w.load().placement.skipped.contains_key(key))
    })
    .await;
    for watcher in &watchers {
        let ring = watcher.load();
        let why = &ring.placement.skipped[key];
        assert!(
            why.starts_with("field `weight`: this member alone cannot be built")
                && why.contains("more than its budget of 16777216"),
            "{why}"
        );
        assert_eq!(names(watcher), ["a", "b", "dying"]);
        assert_eq!(watcher.status().held, None, "no config error held");
    }
    // The ring still follows: a killed member leaves within its session.
    dying.kill();
    until(Duration::from_secs(30), "the killed member leaves", || {
        all_hold(&watchers, &["a", "b"])
    })
    .await;
    // A new client starts on the same ring, naming huge too.
    let (cluster, _) = Source::read(&zk).await.expect("a new read");
    let read: Vec<&str> = cluster.members.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(read, ["a", "b"]);
    assert!(cluster.skipped.contains_key(key), "{:?}", cluster.skipped);
    let fresh = zk.watch(options()).await.expect("a new watcher starts");
    assert_eq!(names(&fresh), ["a", "b"]);
    assert_eq!(fresh.load().placement.fingerprint, cluster.fingerprint);
    // Gone, it is no longer named.
    heavy.shutdown().await.expect("huge leaves");
    until(Duration::from_secs(10), "huge no longer named", || {
        fresh.load().placement.skipped.is_empty()
    })
    .await;
    a.shutdown().await.expect("a leaves");
    b.shutdown().await.expect("b leaves");
}
