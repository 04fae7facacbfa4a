//! Helpers of the gossip tests and the convergence bench: member
//! processes (`ringwise-gossip-member`, a real process so a SIGKILL is
//! real), in-process participants on loopback ports picked by the
//! kernel, and the convergence check: every watcher holds exactly the
//! expected members and the same fingerprint.
//!
//! Every process is started through `setpriv --pdeathsig KILL` (it dies
//! with the thread that started it even when the test process is killed)
//! and killed by its pid on drop, however the test ends.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use chitchat::transport::UdpTransport;
use chitchat::{
    ChitchatConfig, ChitchatId, FailureDetectorConfig, ProtocolVersion, spawn_chitchat,
};
use ringwise_gossip::{Gossip, Options, Timing, Watcher};

/// The member binary, built by cargo for the tests and benches.
pub const MEMBER: &str = env!("CARGO_BIN_EXE_ringwise-gossip-member");

/// A cluster id of its own per call (tests run in parallel on one host).
pub fn cluster(tag: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{tag}-{}-{n}", std::process::id())
}

/// A participant on a free loopback port, joining through `seeds`.
pub fn gossip(cluster: &str, seeds: &[SocketAddr], ttl: Duration) -> Gossip {
    let seeds = seeds.iter().map(ToString::to_string).collect();
    Gossip::new("127.0.0.1:0", seeds, cluster, ttl)
}

/// The `gossip://` URL of a participant of `cluster` on a free port.
pub fn url(cluster: &str, seeds: &[SocketAddr]) -> String {
    let seeds: Vec<String> = seeds.iter().map(ToString::to_string).collect();
    format!(
        "gossip://127.0.0.1:0?seeds={}&cluster={cluster}",
        seeds.join(",")
    )
}

/// A member in a process of its own. Dropping it kills it by pid.
#[derive(Debug)]
pub struct Process {
    child: Option<Child>,
    /// Its name.
    pub name: String,
    /// Its gossip address.
    pub address: SocketAddr,
}

impl Process {
    /// Starts member `name` of `cluster` (value `json`) and waits for its
    /// `ready ADDR` line.
    pub fn start(
        cluster: &str,
        seeds: &[SocketAddr],
        name: &str,
        ttl: Duration,
        json: &str,
    ) -> Self {
        let mut child = Command::new("setpriv")
            .args(["--pdeathsig", "KILL", "--", MEMBER])
            .arg(url(cluster, seeds))
            .arg(name)
            .arg(ttl.as_secs().to_string())
            .arg(json)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("setpriv runs ringwise-gossip-member");
        let stdout = child.stdout.take().expect("piped stdout");
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = send.send(line);
        });
        let line = receive.recv_timeout(Duration::from_secs(60));
        let mut process = Process {
            child: Some(child),
            name: name.to_owned(),
            address: "127.0.0.1:9".parse().expect("an address"),
        };
        let line = line.unwrap_or_else(|_| panic!("{name}: no ready line in 60 s"));
        let address = line.trim().strip_prefix("ready ");
        process.address = address
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("{name}: expected `ready ADDR`, read {line:?}"));
        process
    }

    /// Sends `signal` (`TERM`, `KILL`) and waits for the exit.
    pub fn signal(&mut self, signal: &str) -> Option<std::process::ExitStatus> {
        let mut child = self.child.take()?;
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .expect("kill(1) runs");
        assert!(status.success(), "kill -{signal} {}", child.id());
        child.wait().ok()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The names in a watcher's ring, in join order.
pub fn names(watcher: &Watcher) -> Vec<String> {
    let ring = watcher.load();
    ring.placement
        .members
        .iter()
        .map(|m| m.name.clone())
        .collect()
}

/// Watchers of `cluster` through `seeds`, started together.
pub async fn watchers(
    cluster: &str,
    seeds: &[SocketAddr],
    ttl: Duration,
    n: usize,
) -> Vec<Watcher> {
    let mut options = Options::default();
    options.progress_every = Duration::from_millis(200);
    let starts = (0..n).map(|_| {
        let gossip = gossip(cluster, seeds, ttl);
        let options = options.clone();
        async move { ringwise_gossip::watch(&gossip, options).await }
    });
    let mut watchers = Vec::new();
    for started in futures_join(starts).await {
        watchers.push(started.expect("a watcher starts"));
    }
    watchers
}

/// Runs futures concurrently (tokio tasks), results in order.
async fn futures_join<F, T>(futures: impl Iterator<Item = F>) -> Vec<T>
where
    F: std::future::Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let handles: Vec<_> = futures.map(tokio::spawn).collect();
    let mut out = Vec::new();
    for handle in handles {
        out.push(handle.await.expect("the task ends"));
    }
    out
}

/// Whether every watcher holds exactly `expected` (as a set) and they
/// all hold the same fingerprint.
pub fn agree(watchers: &[Watcher], expected: &[String]) -> bool {
    let mut want: Vec<&String> = expected.iter().collect();
    want.sort();
    let first = watchers[0].load().placement.fingerprint;
    watchers.iter().all(|w| {
        let mut held = names(w);
        held.sort();
        let held: Vec<&String> = held.iter().collect::<Vec<_>>();
        held.len() == want.len()
            && held.iter().zip(&want).all(|(a, b)| *a == *b)
            && w.load().placement.fingerprint == first
    })
}

/// Waits until [`agree`] holds, polling every 10 ms; the time it took, or
/// a panic naming what each watcher holds at `deadline`.
pub async fn converge(watchers: &[Watcher], expected: &[String], deadline: Duration) -> Duration {
    let started = Instant::now();
    loop {
        if agree(watchers, expected) {
            return started.elapsed();
        }
        if started.elapsed() > deadline {
            let held: Vec<String> = watchers
                .iter()
                .map(|w| format!("{:x} {:?}", w.load().placement.fingerprint, names(w)))
                .collect();
            panic!("no agreement on {expected:?} in {deadline:?}: {held:#?}");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Polls `condition` every 10 ms until it holds or `deadline` passes.
pub async fn until(what: &str, deadline: Duration, mut condition: impl FnMut() -> bool) {
    let started = Instant::now();
    while !condition() {
        assert!(
            started.elapsed() < deadline,
            "{what}: not within {deadline:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A raw chitchat node announcing `member` = `value` as `name`: a real
/// gossip participant that did not go through the registrar's checks.
pub async fn raw(
    cluster: &str,
    seeds: &[SocketAddr],
    name: &str,
    value: &str,
) -> chitchat::ChitchatHandle {
    let ttl = Duration::from_secs(4);
    let timing = Timing::for_ttl(ttl);
    let free = std::net::UdpSocket::bind("127.0.0.1:0").expect("a free port");
    let address = free.local_addr().expect("its address");
    drop(free);
    let config = ChitchatConfig {
        chitchat_id: ChitchatId::new(name, 1, address),
        cluster_id: cluster.to_owned(),
        gossip_interval: timing.gossip_interval,
        listen_addr: address,
        seed_nodes: seeds.iter().map(ToString::to_string).collect(),
        failure_detector_config: FailureDetectorConfig {
            phi_threshold: timing.phi_threshold,
            initial_interval: timing.gossip_interval,
            dead_node_grace_period: timing.dead_node_grace,
            ..FailureDetectorConfig::default()
        },
        marked_for_deletion_grace_period: timing.dead_node_grace,
        catchup_callback: None,
        extra_liveness_predicate: None,
        protocol_version: ProtocolVersion::V0,
    };
    let keys = vec![("member".to_owned(), value.to_owned())];
    spawn_chitchat(config, keys, &UdpTransport)
        .await
        .expect("a raw chitchat node starts")
}
