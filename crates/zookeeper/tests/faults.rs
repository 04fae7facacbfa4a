//! ZooKeeper away: a server stopped for 10 s and started again on the same
//! port and data (watchers answer lookups throughout, reconnect and
//! converge; members are registered again), and a 3-server ensemble whose
//! leader is SIGKILLed (lookups keep answering, every watcher converges
//! within the session timeout).

use std::time::Duration;

use ringwise_membership::Source;
use ringwise_zookeeper::Member;

use crate::common::{all_hold, names, options, source, until};
use crate::support::zookeeper::Zk;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_away_for_10_s_comes_back_to_the_same_ring() {
    let mut server = Zk::single();
    let zk = source(server.hosts(), "/away");
    let a = zk
        .register("a", Member::default(), Duration::from_secs(3))
        .await
        .expect("a");
    let b = zk
        .register("b", Member::default(), Duration::from_secs(3))
        .await
        .expect("b");
    let mut watchers = Vec::new();
    for _ in 0..3 {
        watchers.push(zk.watch(options()).await.expect("watch"));
    }
    until(Duration::from_secs(10), "both joined", || {
        all_hold(&watchers, &["a", "b"])
    })
    .await;
    let before = watchers[0].load().placement.fingerprint;
    // Stopped cleanly (SIGTERM): it writes nothing more, like a server
    // taken down for maintenance.
    server.terminate(0);
    // Ten seconds away: lookups answer from the ring held, all along.
    for _ in 0..20 {
        for watcher in &watchers {
            let ring = watcher.load();
            assert!(
                ring.placement.owner("user:42").is_some(),
                "a lookup with ZooKeeper away"
            );
            assert_eq!(ring.placement.fingerprint, before);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(watchers[0].status().staleness > Duration::from_secs(5));
    server.restart(0);
    // The members' sessions were away longer than their 3 s: either the
    // server kept them (it restores sessions from its log and gives them a
    // fresh timeout) or they expired and the registrars joined again.
    until(Duration::from_secs(30), "registrars registered", || {
        a.is_registered() && b.is_registered()
    })
    .await;
    until(Duration::from_secs(30), "watchers converged", || {
        all_hold(&watchers, &["a", "b"])
    })
    .await;
    let (cluster, zxid) = Source::read(&zk).await.expect("read");
    until(
        Duration::from_secs(20),
        "one zxid, one fingerprint, fresh",
        || {
            watchers.iter().all(|w| {
                let ring = w.load();
                ring.revision == zxid
                    && ring.placement.fingerprint == cluster.fingerprint
                    && w.status().staleness < Duration::from_secs(2)
            })
        },
    )
    .await;
    for watcher in &watchers {
        let status = watcher.status();
        assert!(
            status.relists >= 1,
            "listed again after the outage: {status:?}"
        );
        assert_eq!(status.last_error, None, "{status:?}");
    }
    // Still followed after the outage: a join shows up.
    let c = zk
        .register("c", Member::default(), Duration::from_secs(3))
        .await
        .expect("c");
    until(Duration::from_secs(10), "c joins after the outage", || {
        all_hold(&watchers, &["a", "b", "c"])
    })
    .await;
    for registrar in [a, b, c] {
        registrar.shutdown().await.expect("leave");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ensemble_that_loses_its_leader_keeps_answering_and_converges() {
    let mut ensemble = Zk::ensemble();
    let hosts = ensemble.hosts();
    let session = Duration::from_secs(4);
    let zk = source(hosts.clone(), "/ensemble").with_session_timeout(session);
    let mut registrars = Vec::new();
    for name in ["a", "b", "c"] {
        registrars.push(
            zk.register(name, Member::default(), session)
                .await
                .expect(name),
        );
    }
    // Watchers each on its own server first (a connect string rotated),
    // so some are connected to the leader.
    let mut watchers = Vec::new();
    for i in 0..3 {
        let mut rotated = hosts.clone();
        rotated.rotate_left(i);
        let one = source(rotated, "/ensemble").with_session_timeout(session);
        watchers.push(one.watch(options()).await.expect("watch"));
    }
    until(Duration::from_secs(10), "all joined", || {
        all_hold(&watchers, &["a", "b", "c"])
    })
    .await;
    let leader = ensemble.leader().expect("a leader");
    ensemble.kill(leader);
    for watcher in &watchers {
        assert!(
            watcher.load().placement.owner("user:42").is_some(),
            "lookups answer"
        );
    }
    // A change after the election: every watcher follows it within the
    // session timeout (plus the election, on a busy machine).
    let d = zk
        .register("d", Member::default(), session)
        .await
        .expect("d after the election");
    let took = until(Duration::from_secs(30), "every watcher holds d", || {
        all_hold(&watchers, &["a", "b", "c", "d"])
    })
    .await;
    let (cluster, zxid) = Source::read(&zk).await.expect("read");
    until(Duration::from_secs(20), "one zxid, one fingerprint", || {
        watchers.iter().all(|w| {
            w.load().revision == zxid && w.load().placement.fingerprint == cluster.fingerprint
        })
    })
    .await;
    assert!(
        took <= session + Duration::from_secs(2),
        "watchers converged {took:?} after the change; {:?}",
        watchers.iter().map(names).collect::<Vec<_>>()
    );
    d.shutdown().await.expect("leave");
    for registrar in registrars {
        registrar.shutdown().await.expect("leave");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_server_listening_is_a_clear_error_naming_the_hosts() {
    let port = crate::support::zookeeper::free_port();
    let host = format!("127.0.0.1:{port}");
    let zk = source(vec![host.clone()], "/none").with_session_timeout(Duration::from_secs(1));
    for e in [
        zk.read().await.map(drop).expect_err("read"),
        zk.watch(options()).await.map(drop).expect_err("watch"),
        zk.register("a", Member::default(), Duration::from_secs(1))
            .await
            .map(drop)
            .expect_err("join"),
    ] {
        let text = e.to_string();
        assert!(
            text.contains("cannot open a session")
                && text.contains(&host)
                && text.contains("is ZooKeeper running"),
            "{text}"
        );
        let general = ringwise_membership::Error::from(e);
        assert!(
            matches!(
                general,
                ringwise_membership::Error::Unavailable {
                    source: "zookeeper",
                    ..
                }
            ),
            "{general:?}"
        );
    }
}
