//! Membership on a healthy ZooKeeper: watchers agree under churn (equal
//! zxid, equal fingerprint), a name is held by one session, bad data is
//! left out and named, digest auth passes through and its absence is a
//! clear refusal, member processes leave on SIGKILL within the session
//! timeout and on SIGTERM at once, and a SIGSTOPped watch relists.

use std::collections::BTreeMap;
use std::time::Duration;

use ringwise_membership::{Error as MembershipError, Source};
use ringwise_zookeeper::{Error, Member, Registrar};
use zookeeper_client as zk;

use crate::common::{all_hold, names, options, raw, source, until};
use crate::support::member::Process;
use crate::support::rng::Rng;
use crate::support::zookeeper::Zk;

const TTL: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_watchers_agree_at_every_zxid_under_200_joins_and_leaves() {
    let server = Zk::single();
    let zk = source(server.hosts(), "/churn");
    let mut watchers = Vec::new();
    for _ in 0..5 {
        watchers.push(zk.watch(options()).await.expect("watch"));
    }
    let mut rng = Rng(28);
    let mut held: BTreeMap<String, Registrar> = BTreeMap::new();
    // zxid -> fingerprint, for every sample of every watcher.
    let mut seen: BTreeMap<u64, u64> = BTreeMap::new();
    let mut samples = 0;
    for step in 0..200 {
        let name = format!("m{}", rng.below(24));
        match held.remove(&name) {
            Some(registrar) => registrar.shutdown().await.expect("leave"),
            None => {
                let member = Member {
                    weight: Some(1.0 + rng.below(3) as f64),
                    ..Member::default()
                };
                let registrar = zk.register(&name, member, TTL).await.expect("join");
                held.insert(name, registrar);
            }
        }
        if step % 3 == 0 {
            tokio::time::sleep(Duration::from_millis(rng.below(5) as u64)).await;
        }
        for watcher in &watchers {
            let ring = watcher.load();
            samples += 1;
            let fingerprint = *seen
                .entry(ring.revision)
                .or_insert(ring.placement.fingerprint);
            assert_eq!(
                fingerprint, ring.placement.fingerprint,
                "two watchers at zxid {:#x} hold different rings",
                ring.revision
            );
        }
    }
    let expected: Vec<&str> = held.keys().map(String::as_str).collect();
    until(
        Duration::from_secs(20),
        "every watcher holds the survivors",
        || all_hold(&watchers, &expected),
    )
    .await;
    let (cluster, zxid) = Source::read(&zk).await.expect("read");
    until(Duration::from_secs(10), "one zxid and fingerprint", || {
        watchers.iter().all(|w| {
            let ring = w.load();
            ring.revision == zxid && ring.placement.fingerprint == cluster.fingerprint
        })
    })
    .await;
    assert!(
        seen.len() > 10,
        "{} distinct zxids sampled of {samples}",
        seen.len()
    );
    for registrar in held.into_values() {
        registrar.shutdown().await.expect("leave");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_is_held_by_one_session_and_bad_data_is_left_out_and_named() {
    let server = Zk::single();
    let zk = source(server.hosts(), "/names");
    let first = zk.register("a", Member::default(), TTL).await.expect("a");
    match zk.register("a", Member::default(), TTL).await {
        Err(Error::NameTaken { name, key, holder }) => {
            assert_eq!((name.as_str(), key.as_str()), ("a", "/names/nodes/a"));
            assert_eq!(holder, format!("session {:#x}", first.session()));
        }
        other => panic!("a second \"a\": {other:?}"),
    }
    // Through the Source trait: NameTaken stays NameTaken.
    let again = Source::register(&zk, "a", Member::default(), TTL).await;
    assert!(
        matches!(again, Err(MembershipError::NameTaken { .. })),
        "{again:?}"
    );
    assert_eq!(
        Registration::describe(&first),
        format!(
            "/names/nodes/a (session {:#x}, timeout 10 s)",
            first.session()
        )
    );

    // ZooKeeper grants a timeout within its bounds (the test servers' max
    // is 60 s), and the registration says which.
    let long = zk
        .register("long", Member::default(), Duration::from_secs(120))
        .await
        .expect("long");
    assert_eq!(long.session_timeout(), Duration::from_secs(60));
    assert!(
        Registration::describe(&long).ends_with(", timeout 60 s)"),
        "{}",
        Registration::describe(&long)
    );
    long.shutdown().await.expect("long leaves");

    // Bad member data, written by hand: left out, named in the ring.
    let client = raw(&server.hosts()).await;
    let open = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
    client
        .create("/names/nodes/bad", b"{not json", &open)
        .await
        .expect("bad");
    client
        .create("/names/nodes/neg", br#"{"weight": -1}"#, &open)
        .await
        .expect("neg");
    let watcher = zk.watch(options()).await.expect("watch");
    let ring = watcher.load();
    assert_eq!(names(&watcher), ["a"]);
    let skipped: Vec<&str> = ring.placement.skipped.keys().map(String::as_str).collect();
    assert_eq!(skipped, ["/names/nodes/bad", "/names/nodes/neg"]);
    assert!(
        ring.placement.skipped["/names/nodes/bad"].contains("not JSON"),
        "{:?}",
        ring.placement.skipped
    );
    // Mended: it joins.
    client
        .set_data("/names/nodes/bad", b"{}", None)
        .await
        .expect("mend");
    until(Duration::from_secs(10), "the mended member joins", || {
        names(&watcher) == ["a", "bad"]
    })
    .await;
    // A bad config keeps the ring held and says why.
    client
        .create("/names/config", br#"{"algorithm": "nope"}"#, &open)
        .await
        .expect("config");
    until(Duration::from_secs(10), "the bad config is named", || {
        watcher.status().held.is_some()
    })
    .await;
    assert_eq!(names(&watcher), ["a", "bad"], "the ring held");
    first.shutdown().await.expect("leave");
}

use ringwise_membership::Registration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn digest_auth_passes_through_and_others_are_refused_clearly() {
    let server = Zk::single();
    let zk = source(server.hosts(), "/secret").with_digest("app", "s3cret");
    let registrar = zk
        .register("a", Member::default(), TTL)
        .await
        .expect("register");
    let watcher = zk.watch(options()).await.expect("watch");
    assert_eq!(names(&watcher), ["a"]);
    zk.configure(&[("vnodes".into(), Some(serde_json::json!(40)))])
        .await
        .expect("configure");
    assert_eq!(zk.settings().await.expect("settings")["vnodes"], 40);
    // The znodes carry the digest identity's ACL (reading an ACL takes
    // READ or ADMIN: the raw client authenticates too).
    let client = raw(&server.hosts()).await;
    client.auth("digest", b"app:s3cret").await.expect("addauth");
    let (acls, _) = client.get_acl("/secret/nodes/a").await.expect("acl");
    assert_eq!(acls.len(), 1);
    assert_eq!(acls[0].scheme(), "digest");
    assert!(acls[0].id().starts_with("app:"), "{acls:?}");
    for stranger in [
        source(server.hosts(), "/secret"),
        source(server.hosts(), "/secret").with_digest("app", "wrong"),
    ] {
        let e = stranger.read().await.expect_err("refused").to_string();
        assert!(
            e.contains("refused access to /secret") && e.contains("NoAuth"),
            "{e}"
        );
        let e = stranger
            .watch(options())
            .await
            .expect_err("refused")
            .to_string();
        assert!(e.contains("NoAuth"), "{e}");
        let e = stranger
            .register("b", Member::default(), TTL)
            .await
            .expect_err("refused")
            .to_string();
        assert!(e.contains("NoAuth"), "{e}");
    }
    registrar.shutdown().await.expect("leave");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn member_processes_leave_on_sigkill_within_the_timeout_and_on_sigterm_at_once() {
    let server = Zk::single();
    let hosts = server.hosts();
    let zk = source(hosts.clone(), "/procs");
    let mut killed = Process::member(&hosts, "/procs", "killed", 2);
    let mut stopped = Process::member(&hosts, "/procs", "stopped", 10);
    let line = killed.last().expect("registered");
    assert!(line.contains("/procs/nodes/killed (session 0x"), "{line}");
    let watchers = [zk.watch(options()).await.expect("watch")];
    until(Duration::from_secs(10), "both joined", || {
        all_hold(&watchers, &["killed", "stopped"])
    })
    .await;
    // SIGKILL: gone when the 2 s session expires, within 2 s more.
    killed.kill();
    let took = until(Duration::from_secs(30), "the killed member leaves", || {
        all_hold(&watchers, &["stopped"])
    })
    .await;
    assert!(
        took <= Duration::from_secs(4),
        "SIGKILLed member left after {took:?} (session 2 s)"
    );
    // SIGTERM: the process deletes its znode; with a 10 s session, leaving
    // within 3 s is the delete, not an expiry.
    assert!(stopped.terminate(), "exit 0 after SIGTERM");
    let took = until(Duration::from_secs(30), "the stopped member leaves", || {
        all_hold(&watchers, &[])
    })
    .await;
    assert!(
        took <= Duration::from_secs(3),
        "SIGTERMed member left after {took:?} (session 10 s)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigstopped_watch_resumed_after_churn_relists_and_drops_who_left() {
    let server = Zk::single();
    let hosts = server.hosts();
    let zk = source(hosts.clone(), "/paused");
    let a = zk.register("a", Member::default(), TTL).await.expect("a");
    let b = zk.register("b", Member::default(), TTL).await.expect("b");
    let watch = Process::watcher(&hosts, "/paused");
    watch.wait_line(Duration::from_secs(10), |l| l.ends_with(" a,b relists=0"));
    watch.signal("STOP");
    // Churn while it sleeps, and long enough for its 2 s session to expire.
    b.shutdown().await.expect("b leaves");
    a.shutdown().await.expect("a leaves");
    let c = zk.register("c", Member::default(), TTL).await.expect("c");
    tokio::time::sleep(Duration::from_secs(4)).await;
    watch.signal("CONT");
    let (cluster, zxid) = Source::read(&zk).await.expect("read");
    let expected = format!("ring {zxid} {:016x} c relists=", cluster.fingerprint);
    let shown = watch.wait_line(Duration::from_secs(20), |l| l.starts_with(&expected));
    // Its session expired while it slept: what it holds is a new list.
    let relists: u64 = shown[expected.len()..].parse().expect("relists");
    assert!(relists >= 1, "{shown}");
    c.shutdown().await.expect("c leaves");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_whose_session_expired_registers_again() {
    let server = Zk::single();
    let hosts = server.hosts();
    let zk = source(hosts.clone(), "/expired");
    let member = Process::member(&hosts, "/expired", "sleeper", 2);
    let watchers = [zk.watch(options()).await.expect("watch")];
    until(Duration::from_secs(10), "it joined", || {
        all_hold(&watchers, &["sleeper"])
    })
    .await;
    let first = watchers[0].load().placement.members[0].created;
    // Paused past its 2 s session: ZooKeeper expires it and deletes the
    // znode; resumed, it learns of the expiry and joins under a new one.
    member.signal("STOP");
    until(Duration::from_secs(20), "the paused member left", || {
        all_hold(&watchers, &[])
    })
    .await;
    member.signal("CONT");
    until(Duration::from_secs(20), "it joined again", || {
        all_hold(&watchers, &["sleeper"])
    })
    .await;
    let again = watchers[0].load().placement.members[0].created;
    assert!(
        again > first,
        "a new znode (czxid {again:#x} after {first:#x})"
    );
}
