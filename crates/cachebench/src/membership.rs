//! Who the members are, and how the change happens.
//!
//! - [`Fixed`]: this program is the membership. `--add K` routes to the
//!   first `N + K` servers at the change (the added ones are empty);
//!   `--remove K` routes to the first `N − K` (the removed ones keep
//!   running, unused); `--kill K` SIGKILLs the last `K` servers' processes
//!   and keeps routing to them (each request there fails fast and is
//!   counted as an error and a miss) until `--detect` seconds later, when
//!   the route drops them, as a health check would.
//! - [`Live`]: `--membership URL`, any source (`etcd://`, `zk://`,
//!   `gossip://`). Each server registers itself with a `ringwise join`
//!   process (name, address, and its liveness: a lease, a session, a
//!   heartbeat); a watcher of the source on its own thread follows the
//!   cluster and the route is rebuilt from the members it publishes, in
//!   join order. `--add` starts the new servers' `ringwise join`;
//!   `--remove` stops the last registrars with SIGTERM (they leave at
//!   once); `--kill` SIGKILLs the last servers and their registrars, so
//!   the ring drops them only when their liveness runs out (`--ttl`).
//!
//! Each run is a cluster of its own: the prefix gets `/ALGO-PID` on etcd
//! and ZooKeeper, the gossip cluster id `ALGO-PID`; on gossip each
//! registrar listens on a free port of the URL's host, with the URL's
//! address (the watcher's) as its seed.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use ringwise_membership::{Options, Scheme, Source, Url};

use crate::route::{Algo, Member, Route};
use crate::run::{Membership, Shared};
use crate::servers::{Child, Memcached};

/// The change asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Add(usize),
    Remove(usize),
    Kill(usize),
}

impl Change {
    /// Members before the change, given how many servers exist.
    pub fn initial(self, servers: usize) -> usize {
        match self {
            Change::Add(k) => servers - k,
            Change::Remove(_) | Change::Kill(_) => servers,
        }
    }

    /// Members after the change, from `n` before.
    pub fn after(self, n: usize) -> usize {
        match self {
            Change::Add(k) => n + k,
            Change::Remove(k) | Change::Kill(k) => n - k,
        }
    }

    pub fn describe(self, n: usize) -> String {
        let (verb, k) = match self {
            Change::Add(k) => ("added", k),
            Change::Remove(k) => ("removed", k),
            Change::Kill(k) => ("killed", k),
        };
        format!("{n} → {} servers ({k} {verb})", self.after(n))
    }
}

/// Server `i`'s node name: `mc01`, `mc02`, ... (stable across runs, so
/// placements do not depend on the ports the servers got).
pub fn name(i: usize) -> String {
    format!("mc{:02}", i + 1)
}

/// The first `n` servers as members.
pub fn first(n: usize) -> Vec<Member> {
    (0..n)
        .map(|i| Member {
            name: name(i),
            server: i,
        })
        .collect()
}

/// The process of each server started here (`None` for `--servers`).
pub type Processes = Vec<Option<Memcached>>;

/// This program is the membership.
#[derive(Debug)]
pub struct Fixed {
    pub algo: Algo,
    pub n: usize,
    pub change: Change,
    pub processes: Processes,
    pub detect: Duration,
    pending: Option<Vec<Member>>,
}

impl Fixed {
    pub fn new(
        algo: Algo,
        n: usize,
        change: Change,
        processes: Processes,
        detect: Duration,
    ) -> Self {
        Fixed {
            algo,
            n,
            change,
            processes,
            detect,
            pending: None,
        }
    }
}

impl Membership for Fixed {
    fn change(&mut self, shared: &Shared) -> Result<String> {
        let after = first(self.change.after(self.n));
        if let Change::Kill(k) = self.change {
            kill(&mut self.processes, self.n - k..self.n)?;
            self.pending = Some(after);
        } else {
            shared
                .route
                .store(Arc::new(Route::build(self.algo, &after)?));
        }
        Ok(self.change.describe(self.n))
    }

    fn tick(&mut self, shared: &Shared, since_change: Option<Duration>) -> Result<()> {
        if since_change.is_some_and(|s| s >= self.detect)
            && let Some(after) = self.pending.take()
        {
            shared
                .route
                .store(Arc::new(Route::build(self.algo, &after)?));
        }
        Ok(())
    }
}

/// SIGKILLs the servers `range` (which this program must have started).
pub fn kill(processes: &mut Processes, range: std::ops::Range<usize>) -> Result<()> {
    for i in range {
        let process = processes[i]
            .take()
            .ok_or_else(|| anyhow!("--kill needs servers this program started"))?;
        process.stop("KILL");
    }
    Ok(())
}

/// Where the cluster lives and how to join it.
#[derive(Debug, Clone)]
pub struct LiveTarget {
    /// The source, as given.
    pub url: Url,
    pub ringwise: PathBuf,
    pub ttl: u64,
}

impl LiveTarget {
    /// Reads `etcd://...`, `zk://...` or `gossip://...` (default prefix
    /// `/ringwise-cachebench`).
    pub fn parse(text: &str, ringwise: PathBuf, ttl: u64) -> Result<Self> {
        let mut url: Url = text.parse().map_err(|e| anyhow!("{e}"))?;
        if !text
            .split_once("://")
            .is_some_and(|(_, rest)| rest.contains('/'))
        {
            "/ringwise-cachebench".clone_into(&mut url.prefix);
        }
        open(&url, ttl)?;
        Ok(LiveTarget { url, ringwise, ttl })
    }

    /// The URL of this run's cluster (`tag`: `ALGO-PID`). On gossip the
    /// watcher's own address is the registrars' seed, so port 0 becomes a
    /// port free now.
    fn run(&self, tag: &str) -> Result<Url> {
        let mut url = self.url.clone();
        match url.scheme {
            Scheme::Gossip => {
                url.set("cluster", tag);
                if url.hosts[0].ends_with(":0") {
                    url.hosts = vec![free_port(&url.hosts[0])?];
                }
            }
            _ => url.prefix = format!("{}/{tag}", url.prefix),
        }
        Ok(url)
    }

    /// The URL a registrar joins with: the run's; on gossip with a free
    /// port of its own and the run's address (the watcher's) as a seed.
    fn registrar(&self, run: &Url) -> Result<Url> {
        let mut url = run.clone();
        if url.scheme == Scheme::Gossip {
            let own = url.hosts[0].clone();
            url.hosts = vec![free_port(&own)?];
            let seeds = match url.get("seeds") {
                Some(seeds) if !seeds.is_empty() => format!("{own},{seeds}"),
                _ => own,
            };
            url.set("seeds", &seeds);
        }
        Ok(url)
    }
}

/// A UDP port free now on the host of `address` (`HOST:PORT`), as
/// `HOST:PORT`: bound and released, so another process could take it
/// first, which no port chosen in advance escapes.
fn free_port(address: &str) -> Result<String> {
    let host = address.rsplit_once(':').map_or("127.0.0.1", |(h, _)| h);
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let port = std::net::UdpSocket::bind((bare, 0))
        .and_then(|s| s.local_addr())
        .with_context(|| format!("pick a free gossip port on {host}"))?
        .port();
    Ok(format!("{host}:{port}"))
}

/// The source `url` names (`ttl`: the liveness bound, which gossip's
/// watcher needs too).
pub fn open(url: &Url, ttl: u64) -> Result<Box<dyn Source>> {
    let ttl = Duration::from_secs(ttl);
    match url.scheme {
        Scheme::Etcd => {
            let base = ringwise_etcd::Connection::parse("http://127.0.0.1:2379")
                .map_err(|e| anyhow!("{e}"))?;
            let etcd = ringwise_etcd::Etcd::from_url(url, base).map_err(|e| anyhow!("{e}"))?;
            Ok(Box::new(etcd))
        }
        Scheme::ZooKeeper => {
            let zk = ringwise_zookeeper::ZooKeeper::from_url(url).map_err(|e| anyhow!("{e}"))?;
            Ok(Box::new(zk.with_session_timeout(ttl)))
        }
        Scheme::Gossip => {
            let gossip = ringwise_gossip::Gossip::from_url(url, ttl).map_err(|e| anyhow!("{e}"))?;
            Ok(Box::new(gossip))
        }
        _ => bail!("{url}: give etcd://, zk:// or gossip://"),
    }
}

/// Members as the watcher last published them: (name, address), join order.
type Published = Arc<Mutex<(u64, Vec<(String, String)>)>>;

/// Membership followed through a live source.
#[derive(Debug)]
pub struct Live {
    algo: Algo,
    n: usize,
    change: Change,
    target: LiveTarget,
    /// This run's cluster (the target's, tagged with the placement and pid).
    run: Url,
    processes: Processes,
    registrars: Vec<Option<Child>>,
    addresses: Vec<String>,
    published: Published,
    seen: u64,
    /// Whether the change was made.
    changed: bool,
    stop: Arc<AtomicBool>,
    follower: Option<JoinHandle<Result<()>>>,
}

impl Live {
    /// Registers the first `n` servers and starts following the cluster.
    pub fn start(
        algo: Algo,
        n: usize,
        change: Change,
        target: &LiveTarget,
        processes: Processes,
        addresses: Vec<String>,
    ) -> Result<Live> {
        let run = target.run(&format!("{algo}-{}", std::process::id()))?;
        let source = open(&run, target.ttl)?;
        let published: Published = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let follower = {
            let (published, stop) = (Arc::clone(&published), Arc::clone(&stop));
            std::thread::spawn(move || follow(source.as_ref(), &published, &stop))
        };
        let mut live = Live {
            algo,
            n,
            change,
            target: target.clone(),
            run,
            registrars: (0..addresses.len()).map(|_| None).collect(),
            processes,
            addresses,
            published,
            seen: 0,
            changed: false,
            stop,
            follower: Some(follower),
        };
        for i in 0..n {
            live.join(i)?;
        }
        Ok(live)
    }

    /// Starts `ringwise join` for server `i`.
    fn join(&mut self, i: usize) -> Result<()> {
        let url = self.target.registrar(&self.run)?;
        let mut command = Command::new(&self.target.ringwise);
        command.args(["join", "--membership", &url.with_secrets()]);
        command.args(["--name", &name(i), "--address", &self.addresses[i]]);
        command.args(["--ttl", &self.target.ttl.to_string()]);
        let child = Child::spawn(
            &command,
            "ringwise join",
            "build the ringwise CLI (cargo build --release -p ringwise-cli) or pass --ringwise PATH",
        )?;
        self.registrars[i] = Some(child);
        Ok(())
    }

    /// Waits (at most `limit`) until the route holds the first `n` servers.
    pub fn wait_for(&mut self, shared: &Shared, limit: Duration) -> Result<()> {
        let deadline = std::time::Instant::now() + limit;
        loop {
            self.tick(shared, None)?;
            if shared.route.load().members().len() == self.n {
                return Ok(());
            }
            if std::time::Instant::now() > deadline || shared.stop.load(Ordering::Relaxed) {
                bail!(
                    "{} did not list the {} servers within {} s",
                    self.run,
                    self.n,
                    limit.as_secs(),
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Membership for Live {
    fn change(&mut self, shared: &Shared) -> Result<String> {
        self.changed = true;
        match self.change {
            Change::Add(k) => (self.n..self.n + k).try_for_each(|i| self.join(i))?,
            Change::Remove(k) => {
                for i in self.n - k..self.n {
                    if let Some(registrar) = self.registrars[i].take() {
                        registrar.stop("TERM");
                    }
                }
            }
            Change::Kill(k) => {
                // A killed server is cold at once, whatever the route says.
                shared.track();
                kill(&mut self.processes, self.n - k..self.n)?;
                for i in self.n - k..self.n {
                    if let Some(registrar) = self.registrars[i].take() {
                        registrar.stop("KILL");
                    }
                }
            }
        }
        let kind = match self.run.scheme {
            Scheme::Etcd => "etcd",
            Scheme::ZooKeeper => "ZooKeeper",
            _ => "gossip",
        };
        Ok(format!("{} (through {kind})", self.change.describe(self.n)))
    }

    fn tracks(&self) -> bool {
        true
    }

    fn tick(&mut self, shared: &Shared, _since_change: Option<Duration>) -> Result<()> {
        if let Some(follower) = &self.follower
            && follower.is_finished()
        {
            let result = self.follower.take().map(JoinHandle::join);
            return match result {
                Some(Ok(Err(e))) => Err(e.context("--membership")),
                _ => Err(anyhow!("the membership watcher stopped")),
            };
        }
        let (version, members) = match self.published.lock() {
            Ok(guard) => guard.clone(),
            Err(_) => bail!("the membership watcher panicked"),
        };
        if version == self.seen {
            return Ok(());
        }
        self.seen = version;
        let members: Vec<Member> = members
            .iter()
            .filter_map(|(name, address)| {
                let server = self.addresses.iter().position(|a| a == address)?;
                Some(Member {
                    name: name.clone(),
                    server,
                })
            })
            .collect();
        let servers = |m: &[Member]| m.iter().map(|m| m.server).collect::<Vec<_>>();
        let moved = servers(shared.route.load().members()) != servers(&members);
        shared
            .route
            .store(Arc::new(Route::build(self.algo, &members)?));
        // An added or removed server moves keys when the source says so,
        // a propagation delay after the change (milliseconds on etcd and
        // ZooKeeper, gossip rounds on gossip): the keys read before are
        // not cold yet, so counting starts with the new route.
        if self.changed && moved {
            shared.track();
        }
        Ok(())
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        // Registrars first (SIGTERM: they leave at once), then the watcher
        // thread.
        for registrar in self.registrars.iter_mut().filter_map(Option::take) {
            registrar.stop("TERM");
        }
        self.stop.store(true, Ordering::Relaxed);
        if let Some(follower) = self.follower.take() {
            let _ = follower.join();
        }
    }
}

/// The watcher's thread: a current-thread tokio runtime that publishes
/// the members of every new ring, until `stop`.
fn follow(source: &dyn Source, published: &Published, stop: &AtomicBool) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("start the membership watcher's runtime")?;
    runtime.block_on(async {
        // The source's error names where it is and what to try.
        let watcher = source
            .watch(Options::default())
            .await
            .map_err(|e| anyhow!("{e}"))?;
        let mut changes = watcher.changes();
        let (mut version, mut last) = (0, None);
        while !stop.load(Ordering::Relaxed) {
            let snapshot = watcher.load();
            let members: Vec<(String, String)> = snapshot
                .placement
                .members
                .iter()
                .filter_map(|m| Some((m.name.clone(), m.member.address.clone()?)))
                .collect();
            if last.as_ref() != Some(&members) {
                version += 1;
                last = Some(members.clone());
                if let Ok(mut guard) = published.lock() {
                    *guard = (version, members);
                }
            }
            tokio::select! {
                _ = changes.changed() => {}
                () = tokio::time::sleep(Duration::from_millis(100)) => {}
            }
        }
        watcher.shutdown().await;
        Ok(())
    })
}
