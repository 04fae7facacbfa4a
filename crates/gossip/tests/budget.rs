//! A member announcing a legal weight whose points the ring cannot hold
//! (10^6 at 160 points per unit: 1.6 x 10^8, past the 2^24 budget) among
//! normal ones: every watcher publishes the ring of the others and names
//! it, keeps following (a member that stops gossiping still leaves), and
//! a new client starts. The registrar refuses such a member before it
//! announces anything, so the one here is a raw chitchat node.

use std::time::Duration;

use ringwise_gossip::{Error, Member};

use crate::support::{cluster, converge, gossip, raw, until, watchers};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_past_the_point_budget_is_left_out_named_and_the_ring_still_follows() {
    let ttl = Duration::from_secs(4);
    let deadline = Duration::from_secs(40);
    let cluster = cluster("budget");
    let a = gossip(&cluster, &[], ttl)
        .join("a", Member::default())
        .await;
    let a = a.expect("a registers");
    let seeds = [a.address()];
    let b = gossip(&cluster, &seeds, ttl)
        .join("b", Member::default())
        .await;
    let b = b.expect("b registers");
    let dying = gossip(&cluster, &seeds, ttl)
        .join("dying", Member::default())
        .await;
    let dying = dying.expect("dying registers");
    // The registrar refuses the weight before it announces anything.
    let huge = Member {
        weight: Some(1e6),
        ..Member::default()
    };
    match gossip(&cluster, &seeds, ttl).join("refused", huge).await {
        Err(Error::InvalidOption { option, message }) => {
            assert_eq!(option, "weight");
            assert!(
                message.contains("more than its budget of 16777216"),
                "{message}"
            );
        }
        other => panic!("expected the weight refused, got {other:?}"),
    }
    let _huge = raw(&cluster, &seeds, "huge", r#"{"weight": 1000000}"#).await;
    let watchers = watchers(&cluster, &seeds, ttl, 2).await;
    let key = format!("/{cluster}/nodes/huge");
    for watcher in &watchers {
        until("huge named as left out", deadline, || {
            watcher.load().placement.skipped.contains_key(&key)
        })
        .await;
        let ring = watcher.load();
        let why = &ring.placement.skipped[&key];
        assert!(
            why.starts_with("field `weight`: this member alone cannot be built")
                && why.contains("more than its budget of 16777216"),
            "{why}"
        );
        assert!(
            !ring
                .placement
                .skipped
                .keys()
                .any(|k| k.ends_with("/refused"))
        );
    }
    let three = ["a", "b", "dying"].map(String::from);
    converge(&watchers, &three, deadline).await;
    for watcher in &watchers {
        assert_eq!(watcher.status().held, None, "no config error held");
    }
    // The ring still follows: a member that stops gossiping leaves when
    // the failure detector says so.
    drop(dying);
    let two = ["a", "b"].map(String::from);
    converge(&watchers, &two, deadline).await;
    // A new client starts on the same ring, naming huge too.
    let fresh = crate::support::watchers(&cluster, &seeds, ttl, 1).await;
    converge(&fresh, &two, deadline).await;
    until("the new client names huge", deadline, || {
        fresh[0].load().placement.skipped.contains_key(&key)
    })
    .await;
    assert_eq!(
        fresh[0].load().placement.fingerprint,
        watchers[0].load().placement.fingerprint
    );
    b.shutdown().await;
    a.shutdown().await;
}
