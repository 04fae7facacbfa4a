//! A member registered with a legal weight whose points the ring cannot
//! hold (10^6 at 160 points per unit: 1.6 x 10^8, past the 2^24 budget)
//! among normal ones, against a real etcd: every watcher publishes the
//! ring of the others and names it, keeps following (a member whose
//! lease expires still leaves), and a new client starts. It used to be
//! charged to the config: watchers held their old ring, new clients failed.

use std::time::{Duration, Instant};

use crate::live::serial;
use crate::support::etcd::Etcd;
use ringwise_etcd::member::node_key;
use ringwise_etcd::{Connection, Member, Options, Registrar, Watcher};

const PREFIX: &str = "/ringwise-budget";

fn names(watcher: &Watcher) -> Vec<String> {
    let ring = watcher.load();
    ring.placement
        .members
        .iter()
        .map(|m| m.name.clone())
        .collect()
}

async fn until(within: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < within, "{what}: not within {within:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[test]
fn a_member_past_the_point_budget_is_left_out_named_and_the_ring_still_follows() {
    let _serial = serial();
    let etcd = Etcd::single();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        let conn = Connection::parse(&etcd.endpoints()).expect("endpoints");
        let ttl = Duration::from_secs(10);
        let join = |name: &'static str, weight: Option<f64>, ttl: Duration| {
            let member = Member {
                weight,
                ..Member::default()
            };
            Registrar::register(&conn, PREFIX, name, member, ttl)
        };
        let a = join("a", None, ttl).await.expect("a");
        let b = join("b", None, ttl).await.expect("b");
        let dying = join("dying", None, Duration::from_secs(2)).await;
        let dying = dying.expect("dying");
        let mut watchers = Vec::new();
        for _ in 0..2 {
            let watcher = ringwise_etcd::watch(&conn, PREFIX, Options::default());
            watchers.push(watcher.await.expect("watcher"));
        }
        let huge = join("huge", Some(1e6), ttl).await.expect("huge registers");
        let key = node_key(PREFIX, "huge");
        until(Duration::from_secs(10), "huge named as left out", || {
            watchers
                .iter()
                .all(|w| w.load().placement.skipped.contains_key(&key))
        })
        .await;
        for watcher in &watchers {
            let ring = watcher.load();
            let why = &ring.placement.skipped[&key];
            assert!(
                why.starts_with("field `weight`: this member alone cannot be built")
                    && why.contains("more than its budget of 16777216"),
                "{why}"
            );
            assert_eq!(names(watcher), ["a", "b", "dying"]);
            assert_eq!(watcher.status().held, None, "no config error held");
        }
        // The ring still follows: a member that stops renewing leaves
        // when its lease expires.
        drop(dying);
        until(Duration::from_secs(15), "the dead member leaves", || {
            watchers.iter().all(|w| names(w) == ["a", "b"])
        })
        .await;
        // A new client starts on the same ring, naming huge too.
        let (cluster, _) = ringwise_etcd::read(&conn, PREFIX).await.expect("a read");
        let read: Vec<&str> = cluster.members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(read, ["a", "b"]);
        assert!(cluster.skipped.contains_key(&key), "{:?}", cluster.skipped);
        let fresh = ringwise_etcd::watch(&conn, PREFIX, Options::default());
        let fresh = fresh.await.expect("a new watcher starts");
        assert_eq!(names(&fresh), ["a", "b"]);
        assert_eq!(fresh.load().placement.fingerprint, cluster.fingerprint);
        // Gone, it is no longer named.
        huge.shutdown().await.expect("huge leaves");
        until(Duration::from_secs(10), "huge no longer named", || {
            fresh.load().placement.skipped.is_empty()
        })
        .await;
        a.shutdown().await.expect("a leaves");
        b.shutdown().await.expect("b leaves");
    });
}
