//! Live membership against a real etcd on loopback: registration, the
//! watchers' agreement, and the faults a watcher must survive (etcd down,
//! compaction under a paused watcher, a killed leader, bad values).
//!
//! The timing-sensitive tests take a lock so that one runs at a time: two
//! clusters electing leaders on two cores would measure each other.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::support::etcd::{Etcd, Pki, free_port};
use crate::support::rng::Rng;
use etcd_client::{Client, GetOptions};
use ringwise::{Algorithm, ClusterSpec, Node};
use ringwise_etcd::member::{config_key, node_key};
use ringwise_etcd::{AuthProblem, Connection, Error, Member, Options, Registrar, Watcher};
use tokio::sync::Semaphore;

const PREFIX: &str = "/ringwise-test";
const TTL: Duration = Duration::from_secs(3);

pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

fn connection(endpoints: &str) -> Connection {
    Connection::parse(endpoints).expect("endpoints")
}

async fn client(etcd: &Etcd) -> Client {
    Client::connect(etcd.endpoints().split(',').collect::<Vec<_>>(), None)
        .await
        .expect("connect")
}

/// `n` watchers of `PREFIX`, each with its own client.
async fn watchers(conn: &Connection, n: usize) -> Vec<Watcher> {
    let mut watchers = Vec::with_capacity(n);
    for _ in 0..n {
        let watcher = ringwise_etcd::watch(conn, PREFIX, Options::default());
        watchers.push(watcher.await.expect("watcher"));
    }
    watchers
}

/// The (revision, fingerprint) of every watcher.
fn states(watchers: &[Watcher]) -> Vec<(u64, u64)> {
    watchers
        .iter()
        .map(|w| {
            let s = w.load();
            (s.revision, s.placement.fingerprint)
        })
        .collect()
}

/// Waits until every watcher holds `fingerprint` at one revision; returns
/// how long it took, or panics after `limit`.
async fn converge(watchers: &[Watcher], fingerprint: u64, limit: Duration) -> Duration {
    let start = Instant::now();
    loop {
        let now = states(watchers);
        if now.iter().all(|&s| s == now[0]) && now[0].1 == fingerprint {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < limit,
            "not converged within {limit:?}: {now:x?}, want fingerprint {fingerprint:x}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The fingerprint of a ring cluster of `names` (join order), as a
/// watcher must compute it: the model the tests compare against.
fn fingerprint_of(names: &[String]) -> u64 {
    fingerprint_of_nodes(names.iter().map(Node::new).collect())
}

/// The same for nodes with weights or zones.
fn fingerprint_of_nodes(nodes: Vec<Node>) -> u64 {
    if nodes.is_empty() {
        return 0;
    }
    ClusterSpec::new(Algorithm::Ring, nodes)
        .expect("valid")
        .fingerprint()
}

#[test]
fn a_registered_node_is_in_every_ring_and_a_duplicate_is_refused() {
    let _serial = serial();
    let etcd = Etcd::single();
    runtime().block_on(async {
        let etcd_conn = connection(&etcd.endpoints());
        let watcher = ringwise_etcd::watch(&etcd_conn, PREFIX, Options::default())
            .await
            .expect("watcher");
        assert_eq!(watcher.load().placement.owner("k"), None, "no member yet");
        let member = Member {
            address: Some("127.0.0.1:11211".into()),
            zone: Some("z1".into()),
            ..Member::default()
        };
        let a = Registrar::register(&etcd_conn, PREFIX, "cache-a", member.clone(), TTL)
            .await
            .expect("register");
        assert!(a.is_registered());
        converge(
            &[watcher],
            fingerprint_of_nodes(vec![Node::new("cache-a").zone("z1")]),
            Duration::from_secs(2),
        )
        .await;

        let again = Registrar::register(&etcd_conn, PREFIX, "cache-a", member, TTL).await;
        match again {
            Err(Error::NameTaken { name, lease, .. }) => {
                assert_eq!((name.as_str(), lease), ("cache-a", a.lease()));
            }
            other => panic!("a second cache-a must be refused, got {other:?}"),
        }
        let bad_name = Registrar::register(&etcd_conn, PREFIX, "a/b", Member::default(), TTL).await;
        assert!(matches!(
            bad_name,
            Err(Error::InvalidOption { option: "name", .. })
        ));
        let short = Registrar::register(
            &etcd_conn,
            PREFIX,
            "b",
            Member::default(),
            Duration::from_millis(1500),
        )
        .await;
        assert!(matches!(
            short,
            Err(Error::InvalidOption { option: "ttl", .. })
        ));
        a.shutdown().await.expect("revoke");
    });
}

#[test]
fn bad_values_are_skipped_and_a_bad_config_keeps_the_ring() {
    let _serial = serial();
    let etcd = Etcd::single();
    runtime().block_on(async {
        let mut raw = client(&etcd).await;
        let put = |key: String, value: &str| (key, value.to_owned());
        for (key, value) in [
            put(node_key(PREFIX, "good"), r#"{"weight": 2}"#),
            put(node_key(PREFIX, "not-json"), "{weight"),
            put(node_key(PREFIX, "negative"), r#"{"weight": -1}"#),
            put(node_key(PREFIX, "typo"), r#"{"wieght": 1}"#),
            put(format!("{PREFIX}/elsewhere"), "ignored"),
        ] {
            raw.put(key, value, None).await.expect("put");
        }
        let conn = connection(&etcd.endpoints());
        let watcher = ringwise_etcd::watch(&conn, PREFIX, Options::default())
            .await
            .expect("watcher");
        let ring = watcher.load();
        let names: Vec<&str> = ring
            .placement
            .members
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        assert_eq!(names, ["good"], "only the valid member joins");
        assert_eq!(ring.placement.owner("any key"), Some("good"));
        let skipped: Vec<&String> = ring.placement.skipped.keys().collect();
        assert_eq!(skipped.len(), 3, "{:?}", ring.placement.skipped);
        assert!(
            ring.placement
                .skipped
                .values()
                .any(|why| why.contains("weight"))
        );

        // A bad config: the watcher keeps the ring it has.
        let before = ring.placement.fingerprint;
        let mut changes = watcher.changes();
        raw.put(config_key(PREFIX), r#"{"algorithm": "no-such"}"#, None)
            .await
            .expect("put");
        raw.put(node_key(PREFIX, "second"), "{}", None)
            .await
            .expect("put");
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(watcher.load().placement.fingerprint, before);
        assert!(
            watcher
                .status()
                .last_error
                .is_some_and(|e| e.contains("algorithm"))
        );
        // A good config applies with every member.
        raw.put(
            config_key(PREFIX),
            r#"{"algorithm": "maglev", "table_size": 251}"#,
            None,
        )
        .await
        .expect("put");
        changes.changed().await.expect("a new ring");
        let ring = watcher.load();
        let spec = ring.placement.spec.as_ref().expect("members");
        assert_eq!(
            (spec.algorithm, spec.params.table_size),
            (Algorithm::Maglev, 251)
        );
        assert_eq!(spec.nodes.len(), 2);
    });
}

/// Five watchers, 200 random joins and leaves: equal revisions always show
/// equal fingerprints, and at quiescence all agree with the model.
#[test]
fn five_watchers_converge_under_churn() {
    let _serial = serial();
    let etcd = Etcd::single();
    runtime().block_on(async {
        let conn = connection(&etcd.endpoints());
        let watchers = Arc::new(watchers(&conn, 5).await);
        let seen: Arc<Mutex<BTreeMap<u64, u64>>> = Arc::default();
        let sampling = {
            let (watchers, seen) = (Arc::clone(&watchers), Arc::clone(&seen));
            tokio::spawn(async move {
                loop {
                    for (revision, fingerprint) in states(&watchers) {
                        let mut seen = seen.lock().expect("lock");
                        let first = *seen.entry(revision).or_insert(fingerprint);
                        assert_eq!(first, fingerprint, "revision {revision}: two rings");
                    }
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            })
        };
        let mut raw = client(&etcd).await;
        let mut rng = Rng(11);
        let mut members: Vec<String> = Vec::new();
        for step in 0..200 {
            let leave = !members.is_empty() && rng.next() % 3 == 0;
            if leave {
                let name = members.remove((rng.next() % members.len() as u64) as usize);
                raw.delete(node_key(PREFIX, &name), None)
                    .await
                    .expect("delete");
            } else {
                let name = format!("node-{step}");
                raw.put(node_key(PREFIX, &name), "{}", None)
                    .await
                    .expect("put");
                members.push(name);
            }
            if rng.next() % 4 == 0 {
                tokio::time::sleep(Duration::from_millis(rng.next() % 5)).await;
            }
        }
        let took = converge(&watchers, fingerprint_of(&members), Duration::from_secs(1)).await;
        println!("converged {took:?} after the last of 200 changes");
        assert!(
            !sampling.is_finished(),
            "the sampler found two rings at one revision"
        );
        sampling.abort();
        let samples = seen.lock().expect("lock").len();
        assert!(samples > 20, "sampled {samples} revisions");
        let revision = raw
            .get("x", None)
            .await
            .expect("get")
            .header()
            .map(|h| h.revision());
        assert_eq!(states(&watchers)[0].0 as i64, revision.expect("header"));
    });
}

/// etcd stopped for 10 s: lookups keep their answers from the last ring,
/// staleness grows past 10 s; when etcd returns every watcher follows it
/// again within 3 s.
#[test]
fn lookups_survive_etcd_down_and_watchers_reconverge() {
    let _serial = serial();
    let mut etcd = Etcd::single();
    let rt = runtime();
    rt.block_on(async {
        let conn = connection(&etcd.endpoints());
        let mut raw = client(&etcd).await;
        let names: Vec<String> = (0..4).map(|i| format!("n{i}")).collect();
        for name in &names {
            raw.put(node_key(PREFIX, name), "{}", None)
                .await
                .expect("put");
        }
        let watchers = watchers(&conn, 3).await;
        converge(&watchers, fingerprint_of(&names), Duration::from_secs(2)).await;
        let keys: Vec<String> = (0..1000).map(|i| format!("key:{i}")).collect();
        let owners = |w: &Watcher| {
            let ring = w.load();
            keys.iter()
                .map(|k| ring.placement.owner(k).map(str::to_owned))
                .collect::<Vec<_>>()
        };
        let before = owners(&watchers[0]);
        assert!(before.iter().all(Option::is_some));

        etcd.kill(0);
        let down = Instant::now();
        while down.elapsed() < Duration::from_secs(10) {
            for w in &watchers {
                assert_eq!(owners(w), before, "lookups answer from the last ring");
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        for w in &watchers {
            let status = w.status();
            assert!(status.staleness >= Duration::from_secs(10), "{status:?}");
            assert!(status.last_error.is_some(), "{status:?}");
        }
        etcd.restart(0);
        let back = Instant::now();
        let mut raw = client(&etcd).await;
        raw.put(node_key(PREFIX, "n4"), "{}", None)
            .await
            .expect("put");
        let mut after = names.clone();
        after.push("n4".into());
        converge(&watchers, fingerprint_of(&after), Duration::from_secs(3)).await;
        println!("reconverged {:?} after etcd returned", back.elapsed());
        for w in &watchers {
            assert!(w.status().staleness < Duration::from_secs(2));
        }
    });
}

/// A watcher held between its list and its watch while a member leaves and
/// etcd compacts: its watch from the old revision is refused as compacted,
/// and it lists again instead of skipping ahead; the member is gone.
#[test]
fn compaction_while_paused_relists_and_misses_nothing() {
    let _serial = serial();
    let etcd = Etcd::single();
    runtime().block_on(async {
        let mut raw = client(&etcd).await;
        for name in ["a", "b", "c"] {
            raw.put(node_key(PREFIX, name), "{}", None)
                .await
                .expect("put");
        }
        let gate = Arc::new(Semaphore::new(0));
        let mut options = Options::default();
        options.before_watch = Some(Arc::clone(&gate));
        let conn = connection(&etcd.endpoints());
        let watcher = ringwise_etcd::watch(&conn, PREFIX, options)
            .await
            .expect("watcher");
        let names = |w: &Watcher| -> Vec<String> {
            w.load()
                .placement
                .members
                .iter()
                .map(|m| m.name.clone())
                .collect()
        };
        assert_eq!(names(&watcher), ["a", "b", "c"]);

        raw.delete(node_key(PREFIX, "b"), None)
            .await
            .expect("delete");
        raw.put("/unrelated", "x", None).await.expect("put");
        let now = raw.get("/unrelated", None).await.expect("get");
        let revision = now.header().expect("header").revision();
        raw.compact(revision, None).await.expect("compact");
        gate.add_permits(2);
        let deadline = Instant::now() + Duration::from_secs(5);
        while names(&watcher) != ["a", "c"] {
            assert!(
                Instant::now() < deadline,
                "still {:?}, {:?}",
                names(&watcher),
                watcher.status()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let status = watcher.status();
        assert_eq!((status.compactions, status.relists), (1, 1), "{status:?}");
        assert!(status.revision >= revision as u64);
        let spec_names = watcher
            .load()
            .placement
            .spec
            .as_ref()
            .map(|s| s.nodes.len());
        assert_eq!(spec_names, Some(2));
        let all = raw
            .get(PREFIX, Some(GetOptions::new().with_prefix()))
            .await
            .expect("get");
        assert_eq!(all.kvs().len(), 2);
    });
}

/// A three-member etcd: killing the leader stops neither registrations nor
/// lookups nor watches for longer than the election, and every watcher
/// ends on the same ring. One `register` call, made right after the kill,
/// succeeds (it fails over by itself, within its deadline), and lookups
/// sampled every 5 ms throughout all answer.
#[test]
fn killing_the_leader_of_three_members() {
    let _serial = serial();
    let mut etcd = Etcd::cluster(3);
    runtime().block_on(async {
        let conn = connection(&etcd.endpoints());
        let watchers = Arc::new(watchers(&conn, 3).await);
        let a = Registrar::register(&conn, PREFIX, "a", Member::default(), TTL)
            .await
            .expect("a");
        converge(
            &watchers,
            fingerprint_of(&["a".into()]),
            Duration::from_secs(3),
        )
        .await;
        let answered = Arc::new(AtomicU64::new(0));
        let sampling = {
            let (watchers, answered) = (Arc::clone(&watchers), Arc::clone(&answered));
            tokio::spawn(async move {
                loop {
                    for w in watchers.iter() {
                        assert!(w.load().placement.owner("k").is_some(), "a lookup failed");
                        answered.fetch_add(1, Ordering::Relaxed);
                    }
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            })
        };

        let leader = leader_of(&etcd).await;
        etcd.kill(leader);
        let killed = Instant::now();
        // Registrations go on (through the other endpoints) ...
        let b = Registrar::register(&conn, PREFIX, "b", Member::default(), TTL)
            .await
            .unwrap_or_else(|e| {
                panic!("no registration {:?} after the kill: {e}", killed.elapsed())
            });
        let registered = killed.elapsed();
        println!("registered {registered:?} after the leader was killed");
        assert!(registered < conn.deadline(), "{registered:?}");
        // ... watches deliver it, lookups answer throughout.
        let want = fingerprint_of(&["a".into(), "b".into()]);
        let took = converge(&watchers, want, Duration::from_secs(3)).await;
        println!(
            "all watchers on the new ring {took:?} after the registration, {:?} after the kill",
            killed.elapsed()
        );
        assert!(!sampling.is_finished(), "a lookup failed during the outage");
        sampling.abort();
        let answered = answered.load(Ordering::Relaxed);
        println!("{answered} lookups sampled since the kill, all answered");
        assert!(answered > 100, "{answered} lookups sampled");
        assert!(a.is_registered() && b.is_registered());
        b.shutdown().await.expect("revoke");
        converge(
            &watchers,
            fingerprint_of(&["a".into()]),
            Duration::from_secs(5),
        )
        .await;
    });
}

/// The index of the current leader.
async fn leader_of(etcd: &Etcd) -> usize {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        for i in 0..3 {
            if etcd.pid(i).is_none() {
                continue;
            }
            let Ok(mut one) = Client::connect([etcd.endpoint(i)], None).await else {
                continue;
            };
            if let Ok(status) = one.status().await
                && status.leader() == status.header().map_or(0, |h| h.member_id())
            {
                return i;
            }
        }
        assert!(Instant::now() < deadline, "no leader");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// With etcd's authentication on, the user and password given reach etcd:
/// with them a node registers and a watcher follows; without them etcd
/// refuses, and the error says so.
#[test]
fn user_and_password_are_passed_through() {
    let _serial = serial();
    let etcd = Etcd::single();
    runtime().block_on(async {
        let mut raw = client(&etcd).await;
        raw.user_add("root", "rootpw", None).await.expect("user");
        raw.user_grant_role("root", "root").await.expect("role");
        raw.auth_enable().await.expect("auth on");

        let anonymous = connection(&etcd.endpoints());
        let refused = ringwise_etcd::watch(&anonymous, PREFIX, Options::default()).await;
        match refused {
            Err(Error::Auth {
                problem: AuthProblem::UserRequired,
                ..
            }) => {}
            other => panic!("etcd must refuse an anonymous client, got {other:?}"),
        }
        let mut root = connection(&etcd.endpoints());
        root.user = Some(("root".into(), "rootpw".into()));
        let watcher = ringwise_etcd::watch(&root, PREFIX, Options::default())
            .await
            .expect("watcher");
        joins_and_leaves(&root, watcher).await;
    });
}

/// Over `connection`, a node registers, `watcher` sees it, and it leaves.
async fn joins_and_leaves(connection: &Connection, watcher: Watcher) {
    let node = Registrar::register(connection, PREFIX, "a", Member::default(), TTL)
        .await
        .expect("register");
    let one = fingerprint_of(&["a".into()]);
    converge(std::slice::from_ref(&watcher), one, Duration::from_secs(3)).await;
    node.shutdown().await.expect("revoke");
    converge(&[watcher], 0, Duration::from_secs(3)).await;
}

/// TLS on loopback: a CA and a server certificate for 127.0.0.1 made with
/// `openssl` (installed by scripts/install-test-deps); the client trusts
/// the CA given in `Tls::ca`, and refuses the server without it.
#[test]
fn tls_with_the_ca_given() {
    let _serial = serial();
    let pki = Pki::new();
    let etcd = pki.etcd();
    runtime().block_on(async {
        let mut secure = connection(&etcd.endpoints());
        let mut tls = ringwise_etcd::Tls::default();
        tls.ca = Some(pki.path("ca.pem"));
        secure.tls = Some(tls);
        let deadline = Instant::now() + Duration::from_secs(10);
        let watcher = loop {
            match ringwise_etcd::watch(&secure, PREFIX, Options::default()).await {
                Ok(w) => break w,
                Err(e) => {
                    assert!(Instant::now() < deadline, "no TLS watcher: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        };
        joins_and_leaves(&secure, watcher).await;
        // Without the CA the server's certificate is not trusted.
        let mut untrusting = connection(&etcd.endpoints());
        untrusting.tls = Some(ringwise_etcd::Tls::default());
        assert!(
            ringwise_etcd::watch(&untrusting, PREFIX, Options::default())
                .await
                .is_err()
        );
    });
}

/// A dead endpoint (a closed loopback port) listed first, then a live one:
/// every call fails over to the live one, every time, with a connection
/// made afresh for each call (so each starts at the dead endpoint).
#[test]
fn a_dead_endpoint_listed_first_is_passed_over() {
    let _serial = serial();
    let etcd = Etcd::single();
    let endpoints = format!("http://127.0.0.1:{},{}", free_port(), etcd.endpoints());
    let fresh = || connection(&endpoints);
    runtime().block_on(async {
        let started = Instant::now();
        for round in 0..10u64 {
            let watcher = ringwise_etcd::watch(&fresh(), PREFIX, Options::default())
                .await
                .unwrap_or_else(|e| panic!("round {round}: watcher: {e}"));
            let name = format!("n{round}");
            let node = Registrar::register(&fresh(), PREFIX, &name, Member::default(), TTL)
                .await
                .unwrap_or_else(|e| panic!("round {round}: register: {e}"));
            let (cluster, _) = ringwise_etcd::read(&fresh(), PREFIX)
                .await
                .unwrap_or_else(|e| panic!("round {round}: read: {e}"));
            assert!(cluster.members.iter().any(|m| m.name == name));
            let vnodes = serde_json::json!(100 + round);
            ringwise_etcd::configure(&fresh(), PREFIX, &[("vnodes".into(), Some(vnodes.clone()))])
                .await
                .unwrap_or_else(|e| panic!("round {round}: configure: {e}"));
            let settings = ringwise_etcd::settings(&fresh(), PREFIX)
                .await
                .unwrap_or_else(|e| panic!("round {round}: settings: {e}"));
            assert_eq!(settings.get("vnodes"), Some(&vnodes));
            let mut changes = watcher.changes();
            let deadline = Instant::now() + Duration::from_secs(3);
            while watcher
                .load()
                .placement
                .spec
                .as_ref()
                .map(|s| s.params.vnodes)
                != Some(100 + round as u32)
            {
                assert!(
                    Instant::now() < deadline,
                    "round {round}: {:?}",
                    watcher.status()
                );
                let _ = tokio::time::timeout(Duration::from_millis(100), changes.changed()).await;
            }
            node.shutdown()
                .await
                .unwrap_or_else(|e| panic!("round {round}: revoke: {e}"));
            watcher.shutdown().await;
        }
        println!(
            "10 rounds of 6 calls over a dead endpoint first: {:?}",
            started.elapsed()
        );
    });
}

/// The registrar's lease revoked behind its back (as an operator or a
/// lease-expiring etcd would): its next renewal hears TTL 0, it grants a
/// new lease and writes its key again, a new join, within 2 s at TTL 2 s.
#[test]
fn a_revoked_lease_is_granted_again_and_the_node_registers_again() {
    let _serial = serial();
    let etcd = Etcd::single();
    runtime().block_on(async {
        let conn = connection(&etcd.endpoints());
        let watcher = ringwise_etcd::watch(&conn, PREFIX, Options::default())
            .await
            .expect("watcher");
        let node = Registrar::register(
            &conn,
            PREFIX,
            "a",
            Member::default(),
            Duration::from_secs(2),
        )
        .await
        .expect("register");
        let one = fingerprint_of(&["a".into()]);
        converge(std::slice::from_ref(&watcher), one, Duration::from_secs(3)).await;
        let mut raw = client(&etcd).await;
        let key = node_key(PREFIX, "a");
        let before = raw.get(key.as_str(), None).await.expect("get");
        let created = before.kvs().first().expect("the key").create_revision();
        let old = node.lease();

        raw.lease_revoke(old).await.expect("revoke");
        let revoked = Instant::now();
        let gone = raw.get(key.as_str(), None).await.expect("get");
        assert!(gone.kvs().is_empty(), "revoking the lease deleted the key");
        while !(node.is_registered() && node.lease() != old) {
            assert!(
                revoked.elapsed() < Duration::from_secs(2),
                "not registered again: lease {:x}, registered {}",
                node.lease(),
                node.is_registered()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        println!("registered again {:?} after the revoke", revoked.elapsed());
        let back = raw.get(key.as_str(), None).await.expect("get");
        let kv = back.kvs().first().expect("the key is back");
        assert_eq!(kv.lease(), node.lease(), "under the new lease");
        assert!(kv.create_revision() > created, "a new join");
        converge(&[watcher], one, Duration::from_secs(3)).await;
        node.shutdown().await.expect("revoke");
    });
}
