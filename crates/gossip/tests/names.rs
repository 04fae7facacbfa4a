//! A name held by a live member is refused (best effort: after a view),
//! in-process and as a process; entries that are not members are left
//! out of every ring and named, as on etcd.

use std::time::Duration;

use ringwise_gossip::{Error, Member};
use ringwise_membership::Source;

use crate::support::{Process, cluster, converge, gossip, raw, until, watchers};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_held_by_a_live_member_is_refused() {
    let ttl = Duration::from_secs(4);
    let cluster = cluster("names");
    let holder = gossip(&cluster, &[], ttl)
        .join("a", Member::default())
        .await;
    let holder = holder.expect("a registers");
    let seeds = [holder.address()];
    let again = gossip(&cluster, &seeds, ttl)
        .join("a", Member::default())
        .await;
    match again {
        Err(Error::NameTaken { name, holder: at }) => {
            assert_eq!(name, "a");
            assert_eq!(at, holder.address().to_string());
        }
        other => panic!("expected NameTaken, got {other:?}"),
    }
    // Through the Source interface, as the CLI sees it.
    let source = gossip(&cluster, &seeds, ttl);
    let refused = source.register("a", Member::default(), ttl).await;
    match refused {
        Err(ringwise_membership::Error::NameTaken { holder: at, .. }) => {
            assert_eq!(at, format!("the member at {}", holder.address()));
        }
        other => panic!("expected NameTaken, got {other:?}"),
    }
    // A process refused exits 1 and says who holds the name.
    let output = std::process::Command::new(crate::support::MEMBER)
        .arg(crate::support::url(&cluster, &seeds))
        .args(["a", "4"])
        .output()
        .expect("the member binary runs");
    assert_eq!(output.status.code(), Some(1));
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("\"a\" is taken by the member at"), "{said}");
    // Once the holder left, the name is free.
    holder.shutdown().await;
    let watchers = watchers(&cluster, &seeds, ttl, 1).await;
    converge(&watchers, &[], Duration::from_secs(30)).await;
    let seed = Process::start(&cluster, &[], "seed", ttl, "{}");
    let taken = gossip(&cluster, &[seed.address], ttl)
        .join("a", Member::default())
        .await;
    assert!(taken.is_ok(), "{taken:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_entries_are_skipped_and_named() {
    let ttl = Duration::from_secs(4);
    let cluster = cluster("malformed");
    let good = gossip(&cluster, &[], ttl)
        .join("good", Member::default())
        .await;
    let good = good.expect("good registers");
    let seeds = [good.address()];
    let _array = raw(&cluster, &seeds, "array", "[7.5, \"zone-q\"]").await;
    let _text = raw(&cluster, &seeds, "text", "not json").await;
    // Valid JSON that ringwise refuses (a negative weight): the registrar
    // refuses to announce it, so a raw node does.
    let negative = Member {
        weight: Some(-1.0),
        ..Member::default()
    };
    let refused = gossip(&cluster, &seeds, ttl)
        .join("negative", negative)
        .await;
    let refused = refused.expect_err("a negative weight is refused");
    assert!(refused.to_string().starts_with("weight: "), "{refused}");
    let _negative = raw(&cluster, &seeds, "negative", r#"{"weight": -1}"#).await;
    let watchers = watchers(&cluster, &seeds, ttl, 2).await;
    let prefix = format!("/{cluster}/nodes/");
    for watcher in &watchers {
        until("three entries skipped", Duration::from_secs(30), || {
            watcher.load().placement.skipped.len() == 3
        })
        .await;
    }
    converge(&watchers, &["good".to_owned()], Duration::from_secs(30)).await;
    let ring = watchers[0].load();
    let skipped = &ring.placement.skipped;
    let why = |name: &str| {
        skipped
            .get(&format!("{prefix}{name}"))
            .cloned()
            .unwrap_or_default()
    };
    assert!(why("array").contains("an array"), "{skipped:?}");
    assert!(why("text").contains("not JSON"), "{skipped:?}");
    assert!(why("negative").contains("weight"), "{skipped:?}");
}

/// Two claims that could not see each other (no common seed when they
/// registered): once a participant links them, every client gives the
/// name to the older, and the younger says it is not registered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_blind_claims_resolve_to_the_older() {
    let ttl = Duration::from_secs(4);
    let cluster = cluster("blind");
    let at = |address: &str| Member {
        address: Some(address.to_owned()),
        ..Member::default()
    };
    let older = gossip(&cluster, &[], ttl).join("a", at("older")).await;
    let older = older.expect("the first claim");
    // A millisecond apart at least: generations are start times in ms.
    tokio::time::sleep(Duration::from_millis(5)).await;
    let younger = gossip(&cluster, &[], ttl).join("a", at("younger")).await;
    let younger = younger.expect("the second claim, blind to the first");
    assert!(older.is_registered() && younger.is_registered());
    let seeds = [older.address(), younger.address()];
    let watchers = watchers(&cluster, &seeds, ttl, 2).await;
    for watcher in &watchers {
        until("the older holds the name", Duration::from_secs(30), || {
            let ring = watcher.load();
            let address = ring
                .placement
                .member("a")
                .and_then(|m| m.member.address.clone());
            address.as_deref() == Some("older")
        })
        .await;
    }
    until("the younger knows", Duration::from_secs(30), || {
        !younger.is_registered()
    })
    .await;
    assert!(older.is_registered());
    converge(&watchers, &["a".to_owned()], Duration::from_secs(30)).await;
}
