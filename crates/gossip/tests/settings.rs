//! The settings end to end: `configure` checks them against the members
//! of its view, announces them and returns once a member echoes them;
//! every watcher's ring then uses them, and they stay after the writer
//! left (the members re-announce them), for watchers and members that
//! come later too.

use std::time::Duration;

use ringwise_gossip::{Error, Gossip, Member, Options};
use serde_json::{Value, json};

use crate::members::join_all;
use crate::support::{cluster, gossip, until, watchers};

fn algorithm(watcher: &ringwise_gossip::Watcher) -> String {
    let ring = watcher.load();
    let spec = ring.placement.spec.as_ref();
    spec.map(|s| format!("{:?}", s.algorithm).to_lowercase())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_spread_and_outlive_their_writer() {
    let ttl = Duration::from_secs(4);
    let deadline = Duration::from_secs(30);
    let cluster = cluster("settings");
    let first = gossip(&cluster, &[], ttl)
        .join("s0", Member::default())
        .await;
    let first = first.expect("s0 registers");
    let seeds = [first.address()];
    let mut members = join_all(&cluster, &seeds, ttl, vec!["s1".into(), "s2".into()]).await;
    members.push(first);
    let watchers = watchers(&cluster, &seeds, ttl, 2).await;
    for watcher in &watchers {
        until("3 members", deadline, || {
            watcher.load().placement.members.len() == 3
        })
        .await;
    }
    let before = watchers[0].load().placement.fingerprint;

    let changes = [("algorithm".to_owned(), Some(Value::from("jump")))];
    let written = ringwise_gossip::configure(&gossip(&cluster, &seeds, ttl), &changes).await;
    let written = written.expect("configure");
    assert_eq!(written.get("algorithm"), Some(&json!("jump")));
    for watcher in &watchers {
        until("the ring uses jump", deadline, || {
            algorithm(watcher).contains("jump")
        })
        .await;
    }
    let after = watchers[0].load().placement.fingerprint;
    assert_ne!(after, before);
    until("one fingerprint", deadline, || {
        watchers
            .iter()
            .all(|w| w.load().placement.fingerprint == watchers[0].load().placement.fingerprint)
    })
    .await;

    // The writer has left: a later reader, a later watcher and a later
    // member all see the settings.
    let read = ringwise_gossip::settings(&gossip(&cluster, &seeds, ttl)).await;
    assert_eq!(
        read.expect("settings").get("algorithm"),
        Some(&json!("jump"))
    );
    let late = crate::support::watchers(&cluster, &seeds, ttl, 1).await;
    until("a late watcher uses jump", deadline, || {
        algorithm(&late[0]).contains("jump")
    })
    .await;

    // A removal is a change like any other; a bad value is refused
    // before anything is written.
    let bad = [(
        "algorithm".to_owned(),
        Some(Value::from("no-such-algorithm")),
    )];
    let refused = ringwise_gossip::configure(&gossip(&cluster, &seeds, ttl), &bad).await;
    assert!(matches!(refused, Err(Error::Membership(_))), "{refused:?}");
    let removal = [("algorithm".to_owned(), None)];
    let removed = ringwise_gossip::configure(&gossip(&cluster, &seeds, ttl), &removal).await;
    assert!(removed.expect("removal").get("algorithm").is_none());
    for watcher in watchers.iter().chain(&late) {
        until("back to the default", deadline, || {
            !algorithm(watcher).contains("jump")
        })
        .await;
    }
    until("fingerprint back", deadline, || {
        watchers[0].load().placement.fingerprint == before
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_need_a_member_to_keep_them() {
    let ttl = Duration::from_secs(2);
    let cluster = cluster("no-member");
    // A watcher on a known port: a peer that announces no member.
    let free = std::net::UdpSocket::bind("127.0.0.1:0").expect("a free port");
    let address = free.local_addr().expect("its address");
    drop(free);
    let observer = Gossip::new(&address.to_string(), vec![], &cluster, ttl);
    let watcher = ringwise_gossip::watch(&observer, Options::default()).await;
    let watcher = watcher.expect("a watcher on its own");
    let changes = [("vnodes".to_owned(), Some(Value::from(40)))];
    let refused = ringwise_gossip::configure(&gossip(&cluster, &[address], ttl), &changes).await;
    match refused {
        Err(Error::NotSpread { message }) => assert!(message.contains("no member"), "{message}"),
        other => panic!("expected NotSpread, got {other:?}"),
    }
    watcher.shutdown().await;
}
