//! What bad input says: URLs, seeds, ttl, addresses, and a cluster
//! nobody answers for; each error maps onto the shared error as every
//! source's does.

use std::time::Duration;

use ringwise_gossip::{Error, Gossip, Member};
use ringwise_membership::{Source, Url};

use crate::support::{cluster, gossip};

fn from(url: &str, ttl: u64) -> Result<Gossip, ringwise_membership::Error> {
    let url: Url = url.parse().expect("a URL");
    Gossip::from_url(&url, Duration::from_secs(ttl))
}

#[test]
fn urls_name_own_address_seeds_and_cluster() {
    let g = from(
        "gossip://127.0.0.1:0?seeds=127.0.0.1:7001,127.0.0.1:7002",
        10,
    )
    .expect("url");
    assert_eq!(g.listen, "127.0.0.1:0");
    assert_eq!(g.seeds, ["127.0.0.1:7001", "127.0.0.1:7002"]);
    assert_eq!(g.cluster, "ringwise");
    assert_eq!(g.describe(), "gossip 127.0.0.1:0 (cluster ringwise)");
    assert_eq!(g.kind(), "gossip");
    let g = from("gossip://127.0.0.1:7946/caches", 10).expect("url");
    assert_eq!((g.cluster.as_str(), g.seeds.len()), ("caches", 0));
    let g = from("gossip://127.0.0.1:7946/caches?cluster=c1&seeds=", 10).expect("url");
    assert_eq!(g.cluster, "c1");
    for (url, ttl, words) in [
        (
            "gossip://127.0.0.1:0?peers=a:1",
            10,
            "unknown query key `peers`",
        ),
        ("gossip://127.0.0.1:0?seeds=nowhere", 10, "seed `nowhere`"),
        ("gossip://127.0.0.1:0?cluster=", 10, "cluster id is empty"),
        ("gossip://127.0.0.1:0", 1, "whole seconds from 2"),
        ("etcd://127.0.0.1:2379", 10, "not a gossip"),
    ] {
        let e = from(url, ttl).expect_err(url);
        assert!(
            matches!(e, ringwise_membership::Error::InvalidOption { .. }),
            "{url}: {e:?}"
        );
        assert!(e.to_string().contains(words), "{url}: {e}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn addresses_that_cannot_be_used_are_refused() {
    let ttl = Duration::from_secs(2);
    let any = Gossip::new("0.0.0.0:0", vec![], "c", ttl);
    let e = any
        .join("a", Member::default())
        .await
        .expect_err("unspecified");
    assert!(e.to_string().contains("unspecified address"), "{e}");
    let held = std::net::UdpSocket::bind("127.0.0.1:0").expect("a port");
    let taken = held.local_addr().expect("address").to_string();
    let busy = Gossip::new(&taken, vec![], "c", ttl);
    let e = busy.join("a", Member::default()).await.expect_err("in use");
    assert!(matches!(e, Error::Bind { .. }), "{e:?}");
    assert!(e.to_string().contains(&taken), "{e}");
    let bad = Gossip::new("127.0.0.1:0", vec![], "c", ttl);
    let e = bad
        .join("a/b", Member::default())
        .await
        .expect_err("a bad name");
    assert!(e.to_string().contains("must not contain '/'"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_nobody_answers_for_is_unavailable() {
    let ttl = Duration::from_secs(2);
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").expect("a port");
    let nobody = silent.local_addr().expect("address");
    let source = gossip(&cluster("silent"), &[nobody], ttl);
    let e = source.read().await.expect_err("nobody answers");
    match &e {
        ringwise_membership::Error::Unavailable { source, error } => {
            assert_eq!(*source, "gossip");
            assert!(error.to_string().contains("no seed answered"), "{error}");
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
    // A watcher starts all the same (empty), and a member announces
    // itself alone: they find each other when the seed comes.
    let watcher = source
        .watch(ringwise_gossip::Options::default())
        .await
        .expect("a watcher");
    assert!(watcher.load().placement.members.is_empty());
}
