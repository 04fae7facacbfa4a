//! Who the members are, and how the change happens.
//!
//! - [`Fixed`]: this program is the membership. `--add K` routes to the
//!   first `N + K` servers at the change (the added ones are empty);
//!   `--remove K` routes to the first `N − K` (the removed ones keep
//!   running, unused); `--kill K` SIGKILLs the last `K` servers' processes
//!   and keeps routing to them (each request there fails fast and is
//!   counted as an error and a miss) until `--detect` seconds later, when
//!   the route drops them, as a health check would.
//! - [`Etcd`]: `--membership etcd://...`. Each server registers itself
//!   with a `ringwise join` process (name, address, lease); a
//!   `ringwise_etcd::Watcher` on its own thread follows the prefix and the
//!   route is rebuilt from the members it publishes, in join order. `--add`
//!   starts the new servers' `ringwise join`; `--remove` stops the last
//!   registrars with SIGTERM (they revoke their lease: a graceful leave);
//!   `--kill` SIGKILLs the last servers and their registrars, so the ring
//!   drops them only when their leases expire (`--ttl`).

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use ringwise_etcd::{Connection, Options};

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
fn kill(processes: &mut Processes, range: std::ops::Range<usize>) -> Result<()> {
    for i in range {
        let process = processes[i]
            .take()
            .ok_or_else(|| anyhow!("--kill needs servers this program started"))?;
        process.stop("KILL");
    }
    Ok(())
}

/// Where the cluster lives in etcd and how to join it.
#[derive(Debug, Clone)]
pub struct EtcdTarget {
    /// `http://host:port,...` for `ringwise join --etcd` and the watcher.
    pub endpoints: String,
    pub prefix: String,
    pub ringwise: PathBuf,
    pub ttl: u64,
}

impl EtcdTarget {
    /// Reads `etcd://HOST:PORT[,HOST:PORT...][/PREFIX]` (default prefix
    /// `/ringwise-cachebench`).
    pub fn parse(url: &str, ringwise: PathBuf, ttl: u64) -> Result<Self> {
        let rest = url
            .strip_prefix("etcd://")
            .ok_or_else(|| anyhow!("--membership `{url}`: write etcd://HOST:PORT[/PREFIX]"))?;
        let (hosts, prefix) = match rest.find('/') {
            Some(at) => (&rest[..at], rest[at..].trim_end_matches('/').to_owned()),
            None => (rest, "/ringwise-cachebench".to_owned()),
        };
        if hosts.is_empty() || prefix.is_empty() {
            bail!("--membership `{url}`: write etcd://HOST:PORT[/PREFIX]");
        }
        let endpoints: Vec<String> = hosts.split(',').map(|h| format!("http://{h}")).collect();
        let endpoints = endpoints.join(",");
        Connection::parse(&endpoints).map_err(|e| anyhow!("--membership `{url}`: {e}"))?;
        Ok(EtcdTarget {
            endpoints,
            prefix,
            ringwise,
            ttl,
        })
    }
}

/// Members as the watcher last published them: (name, address), join order.
type Published = Arc<Mutex<(u64, Vec<(String, String)>)>>;

/// Membership followed through etcd.
#[derive(Debug)]
pub struct Etcd {
    algo: Algo,
    n: usize,
    change: Change,
    target: EtcdTarget,
    /// This run's prefix (the target's plus the placement and pid).
    prefix: String,
    processes: Processes,
    registrars: Vec<Option<Child>>,
    addresses: Vec<String>,
    published: Published,
    seen: u64,
    stop: Arc<AtomicBool>,
    follower: Option<JoinHandle<Result<()>>>,
}

impl Etcd {
    /// Registers the first `n` servers and starts following the prefix.
    pub fn start(
        algo: Algo,
        n: usize,
        change: Change,
        target: &EtcdTarget,
        processes: Processes,
        addresses: Vec<String>,
    ) -> Result<Etcd> {
        let prefix = format!("{}/{algo}-{}", target.prefix, std::process::id());
        let published: Published = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let follower = {
            let (endpoints, prefix, published, stop) = (
                target.endpoints.clone(),
                prefix.clone(),
                Arc::clone(&published),
                Arc::clone(&stop),
            );
            std::thread::spawn(move || follow(&endpoints, &prefix, &published, &stop))
        };
        let mut etcd = Etcd {
            algo,
            n,
            change,
            target: target.clone(),
            prefix,
            registrars: (0..addresses.len()).map(|_| None).collect(),
            processes,
            addresses,
            published,
            seen: 0,
            stop,
            follower: Some(follower),
        };
        for i in 0..n {
            etcd.join(i)?;
        }
        Ok(etcd)
    }

    /// Starts `ringwise join` for server `i`.
    fn join(&mut self, i: usize) -> Result<()> {
        let mut command = Command::new(&self.target.ringwise);
        command.args([
            "join",
            "--etcd",
            &self.target.endpoints,
            "--prefix",
            &self.prefix,
        ]);
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
                    "etcd did not list the {} servers within {} s (prefix {})",
                    self.n,
                    limit.as_secs(),
                    self.prefix
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Membership for Etcd {
    fn change(&mut self, _shared: &Shared) -> Result<String> {
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
                kill(&mut self.processes, self.n - k..self.n)?;
                for i in self.n - k..self.n {
                    if let Some(registrar) = self.registrars[i].take() {
                        registrar.stop("KILL");
                    }
                }
            }
        }
        Ok(format!("{} (through etcd)", self.change.describe(self.n)))
    }

    fn tick(&mut self, shared: &Shared, _since_change: Option<Duration>) -> Result<()> {
        if let Some(follower) = &self.follower
            && follower.is_finished()
        {
            let result = self.follower.take().map(JoinHandle::join);
            return match result {
                Some(Ok(Err(e))) => Err(e.context("--membership")),
                _ => Err(anyhow!("the etcd watcher stopped")),
            };
        }
        let (version, members) = match self.published.lock() {
            Ok(guard) => guard.clone(),
            Err(_) => bail!("the etcd watcher panicked"),
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
        shared
            .route
            .store(Arc::new(Route::build(self.algo, &members)?));
        Ok(())
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        // Registrars first (SIGTERM: they revoke their leases), then the
        // watcher thread.
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
fn follow(endpoints: &str, prefix: &str, published: &Published, stop: &AtomicBool) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("start the etcd watcher's runtime")?;
    runtime.block_on(async {
        let connection = Connection::parse(endpoints)?;
        // The etcd crate's error names the endpoint and what to try.
        let watcher = ringwise_etcd::watch(&connection, prefix, Options::default()).await?;
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
