//! The soak: watchers and registrars under random churn and etcd restarts.
//!
//! Runs `RINGWISE_SOAK_SECS` seconds (default 30, the test command's run;
//! `RINGWISE_SOAK_SECS=600 cargo test --release -p ringwise-etcd --test
//! tests soak -- --nocapture` is the long one, recorded in RELIABILITY.md).
//! Four watchers, three registrars that stay, and a writer that adds and
//! removes members at random; every 10 s etcd is killed (SIGKILL) and
//! started again on its data. Checked all along and at the end:
//!
//! - a watcher's revision never decreases;
//! - two watchers at one revision hold one ring (same fingerprint);
//! - at the end every watcher holds the ring a fresh linearizable read
//!   builds (no lost transition), and every registrar is registered;
//! - the process's resident memory after the run is within 32 MiB of what
//!   it was after the first tenth of it (no leak that grows with churn).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ringwise_etcd::member::node_key;
use ringwise_etcd::{Connection, Member, Options, Registrar};

use crate::support::etcd::Etcd;
use crate::support::rng::Rng;

const PREFIX: &str = "/soak";

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn soak_churn_and_etcd_restarts() {
    let _serial = crate::live::serial();
    let seconds: u64 = std::env::var("RINGWISE_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    let mut etcd = Etcd::single();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let connection = Connection::parse(&etcd.endpoints()).expect("endpoints");
    let (watchers, registrars) = runtime.block_on(async {
        let mut watchers = Vec::new();
        for _ in 0..4 {
            let watcher = ringwise_etcd::watch(&connection, PREFIX, Options::default());
            watchers.push(watcher.await.expect("watcher"));
        }
        let mut registrars = Vec::new();
        for name in ["stay-a", "stay-b", "stay-c"] {
            let ttl = Duration::from_secs(10);
            let registrar = Registrar::register(&connection, PREFIX, name, Member::default(), ttl);
            registrars.push(registrar.await.expect("registrar"));
        }
        (Arc::new(watchers), registrars)
    });

    // The checker: samples every watcher every few milliseconds.
    let seen: Arc<Mutex<BTreeMap<u64, u64>>> = Arc::default();
    let violations: Arc<Mutex<Vec<String>>> = Arc::default();
    let checker = {
        let (watchers, seen, violations) = (
            Arc::clone(&watchers),
            Arc::clone(&seen),
            Arc::clone(&violations),
        );
        runtime.spawn(async move {
            let mut last = vec![0u64; watchers.len()];
            loop {
                for (i, w) in watchers.iter().enumerate() {
                    let ring = w.load();
                    if ring.revision < last[i] {
                        let v =
                            format!("watcher {i}: revision {} after {}", ring.revision, last[i]);
                        violations.lock().expect("lock").push(v);
                    }
                    last[i] = ring.revision;
                    let mut seen = seen.lock().expect("lock");
                    let first = *seen
                        .entry(ring.revision)
                        .or_insert(ring.placement.fingerprint);
                    if first != ring.placement.fingerprint {
                        let v = format!("revision {}: two rings", ring.revision);
                        violations.lock().expect("lock").push(v);
                    }
                }
                tokio::time::sleep(Duration::from_millis(3)).await;
            }
        })
    };

    let start = Instant::now();
    let mut rng = Rng(7);
    let mut baseline = None;
    let mut next_restart = Duration::from_secs(10);
    let (mut writes, mut restarts) = (0u64, 0u64);
    let mut raw = None;
    while start.elapsed() < Duration::from_secs(seconds) {
        if baseline.is_none() && start.elapsed() >= Duration::from_secs(seconds / 10) {
            baseline = Some(rss_kib());
        }
        if start.elapsed() >= next_restart {
            etcd.kill(0);
            std::thread::sleep(Duration::from_millis(500 + rng.next() % 1500));
            etcd.restart(0);
            raw = None;
            restarts += 1;
            next_restart += Duration::from_secs(10);
        }
        let name = format!("churn-{}", rng.next() % 40);
        let wrote = runtime.block_on(async {
            if raw.is_none() {
                raw = etcd_client::Client::connect([etcd.endpoint(0)], None)
                    .await
                    .ok();
            }
            let client = raw.as_mut()?;
            let key = node_key(PREFIX, &name);
            let done = if rng.next() % 2 == 0 {
                client.delete(key, None).await.is_ok()
            } else {
                let value = format!("{{\"weight\": {}}}", 1 + rng.next() % 3);
                client.put(key, value, None).await.is_ok()
            };
            Some(done)
        });
        if wrote == Some(true) {
            writes += 1;
        } else {
            raw = None;
        }
        std::thread::sleep(Duration::from_millis(rng.next() % 20));
    }

    // Quiescence: every watcher ends on the ring a fresh read builds.
    runtime.block_on(async {
        let (fresh, revision) = ringwise_etcd::read(&connection, PREFIX)
            .await
            .expect("read");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let done = watchers.iter().all(|w| {
                let ring = w.load();
                ring.placement.fingerprint == fresh.fingerprint && ring.revision >= revision as u64
            });
            if done {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "watchers did not reach revision {revision}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        for r in &registrars {
            assert!(r.is_registered(), "{} lost its registration", r.key());
            assert!(
                fresh
                    .member(r.key().rsplit('/').next().unwrap_or(""))
                    .is_some()
            );
        }
    });
    checker.abort();
    let violations = violations.lock().expect("lock").clone();
    assert!(violations.is_empty(), "{violations:?}");
    let end = rss_kib();
    let baseline = baseline.unwrap_or(end);
    let revisions = seen.lock().expect("lock").len();
    println!(
        "soak {seconds} s: {writes} writes, {restarts} etcd restarts, {revisions} revisions seen by 4 \
         watchers, RSS {baseline} KiB after the first tenth, {end} KiB at the end"
    );
    assert!(writes > seconds, "the writer stalled: {writes} writes");
    assert!(
        end <= baseline + 32 * 1024,
        "RSS grew from {baseline} to {end} KiB"
    );
}
