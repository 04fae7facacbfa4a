//! The proxy placements, `proxy` and `proxy-cold`: the same servers and
//! key stream, but the client sends every request to one `ringwise-proxy`
//! started here, which places the keys by a ring over the servers
//! ([`PROXY_ALGORITHM`], node names the servers' `host:port`) read from a
//! cluster file in the run's scratch directory. `proxy` runs it with its
//! default warm-up window (60 s: a moved key that misses on its new server
//! is read from its previous one and copied), `proxy-cold` with
//! `--warm-up 0`.
//!
//! The change rewrites the file with the new membership (atomically:
//! `ringwise_sim::files::write_atomically`), sends the proxy SIGHUP by
//! pid, and returns once the proxy's stats port shows a new epoch, so the
//! moment of the change is when the proxy routes by the new membership.
//! `--kill K` SIGKILLs the servers at once and rewrites the file
//! `--detect` seconds later, as a health check would. `--membership` is
//! refused with a proxy placement (the file is the membership here).
//!
//! The proxy is found as `--proxy PATH`, else beside this program (a
//! `cargo build` or `cargo install` puts both in one directory), else on
//! PATH; it is started like the servers, by pid through `setpriv
//! --pdeathsig KILL`, its stderr in a log in the scratch directory, and
//! killed when the run ends however it ends.
//!
//! Cost: one stats document (O(servers)) per poll while waiting for an
//! epoch; the moved fraction is O(K) lookups in each cluster file's ring.

use std::io::Read as _;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use ringwise::ClusterSpec;
use serde_json::Value;

use crate::membership::{Change, Processes, kill};
use crate::route::PROXY_ALGORITHM;
use crate::run::{Membership, Shared};
use crate::servers::{Child, free_port};

/// How long the proxy gets to answer on its ports, and to take a change.
const READY_WITHIN: Duration = Duration::from_secs(20);

/// What to do when the proxy cannot start.
const HINT: &str = "install it beside ringwise-cachebench (cargo install --locked --path \
                    crates/proxy) or pass --proxy PATH";

/// The proxy program: `given`, else `ringwise-proxy` beside this program,
/// else `ringwise-proxy` on PATH.
pub fn program(given: Option<&Path>) -> PathBuf {
    if let Some(path) = given {
        return path.to_owned();
    }
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.join("ringwise-proxy")))
        .filter(|p| p.is_file());
    beside.unwrap_or_else(|| PathBuf::from("ringwise-proxy"))
}

/// The cluster file of `members` (`host:port`, in this order).
pub fn cluster_file(members: &[String]) -> String {
    let mut text = format!("algorithm = \"{}\"\n", PROXY_ALGORITHM.name());
    for address in members {
        text.push_str(&format!("\n[[nodes]]\nname = \"{address}\"\n"));
    }
    text
}

/// The fraction of the K keys whose server differs between the cluster
/// files of `before` and `after`, each read as the proxy reads it.
pub fn moved(before: &[String], after: &[String], keys: u64) -> Result<f64> {
    let read = |members: &[String]| {
        ClusterSpec::from_toml_built(&cluster_file(members))
            .map(|(_, keyed)| keyed)
            .map_err(|e| anyhow!("the proxy's cluster file: {e}"))
    };
    let (old, new) = (read(before)?, read(after)?);
    let moved = (0..keys)
        .filter(|&i| {
            let key = crate::db::key(i);
            old.locate(&key) != new.locate(&key)
        })
        .count();
    Ok(moved as f64 / keys.max(1) as f64)
}

/// A `ringwise-proxy` started here.
#[derive(Debug)]
pub struct Proxy {
    /// `127.0.0.1:PORT`, where the client connects.
    pub address: String,
    /// Its stats port.
    stats: String,
    file: PathBuf,
    log: PathBuf,
    process: Child,
    epoch: u64,
}

impl Proxy {
    /// Starts `program` on free loopback ports over `members`, its files
    /// `dir/TAG.toml` and `dir/TAG.log`, with its warm-up window or
    /// `--warm-up 0`; returns when both its ports answer.
    pub fn start(
        program: &Path,
        dir: &Path,
        tag: &str,
        warm: bool,
        members: &[String],
    ) -> Result<Proxy> {
        let file = dir.join(format!("{tag}.toml"));
        let log = dir.join(format!("{tag}.log"));
        write_file(&file, members)?;
        let address = format!("127.0.0.1:{}", free_port()?);
        let stats = format!("127.0.0.1:{}", free_port()?);
        let mut command = Command::new(program);
        command.args(["--listen", &address, "--stats", &stats]);
        command.arg("--cluster").arg(&file);
        if !warm {
            command.args(["--warm-up", "0"]);
        }
        let process = Child::spawn_logged(&command, "ringwise-proxy", HINT, Some(&log))?;
        let mut proxy = Proxy {
            address,
            stats,
            file,
            log,
            process,
            epoch: 0,
        };
        let deadline = Instant::now() + READY_WITHIN;
        loop {
            if let Ok(document) = proxy.stats() {
                proxy.epoch = epoch(&document)?;
                if TcpStream::connect(&proxy.address).is_ok() {
                    return Ok(proxy);
                }
            }
            proxy.check_running(deadline, "accept connections")?;
            sleep(Duration::from_millis(10));
        }
    }

    /// Its pid.
    pub fn pid(&self) -> u32 {
        self.process.id()
    }

    /// The stats port's document.
    pub fn stats(&self) -> Result<Value> {
        let mut stream = TcpStream::connect(&self.stats)
            .with_context(|| format!("connect to the proxy's stats port {}", self.stats))?;
        stream.set_read_timeout(Some(Duration::from_secs(2)))?;
        let mut text = String::new();
        stream
            .read_to_string(&mut text)
            .context("read the proxy's stats")?;
        serde_json::from_str(&text).with_context(|| format!("the proxy's stats `{text}`"))
    }

    /// The servers' `fallback_hits`, summed: the reads of moved keys that
    /// the warm-up window answered from their previous server.
    pub fn fallback_hits(&self) -> Result<u64> {
        let document = self.stats()?;
        let servers = document["servers"]
            .as_array()
            .ok_or_else(|| anyhow!("no servers in the proxy's stats {document}"))?;
        Ok(servers
            .iter()
            .filter_map(|s| s["fallback_hits"].as_u64())
            .sum())
    }

    /// Routes by `members`: the file rewritten, SIGHUP, and back once the
    /// stats show the next epoch.
    pub fn route(&mut self, members: &[String]) -> Result<()> {
        write_file(&self.file, members)?;
        self.process.signal("HUP")?;
        let deadline = Instant::now() + READY_WITHIN;
        loop {
            if let Ok(document) = self.stats() {
                let now = epoch(&document)?;
                if now > self.epoch {
                    self.epoch = now;
                    return Ok(());
                }
            }
            self.check_running(deadline, "take the new cluster file")?;
            sleep(Duration::from_millis(2));
        }
    }

    /// An error with the proxy's log when it exited or the time is up.
    fn check_running(&mut self, deadline: Instant, what: &str) -> Result<()> {
        let log = || {
            let text = std::fs::read_to_string(&self.log).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(5).collect();
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        };
        if self.process.exited() {
            bail!("ringwise-proxy on {} exited: {}", self.address, log());
        }
        if Instant::now() > deadline {
            bail!(
                "ringwise-proxy on {} did not {what} within {} s: {}",
                self.address,
                READY_WITHIN.as_secs(),
                log()
            );
        }
        Ok(())
    }
}

fn write_file(path: &Path, members: &[String]) -> Result<()> {
    let text = cluster_file(members);
    ringwise_sim::files::write_atomically(path, ringwise_sim::files::Mode::Plain, |out| {
        out.write_all(text.as_bytes())
    })?;
    Ok(())
}

fn epoch(document: &Value) -> Result<u64> {
    document["epoch"]
        .as_u64()
        .ok_or_else(|| anyhow!("no epoch in the proxy's stats {document}"))
}

/// The membership of a proxy placement: the first `n` servers in the
/// proxy's file, and the change made there.
#[derive(Debug)]
pub struct ProxyMembership {
    proxy: Proxy,
    n: usize,
    change: Change,
    addresses: Vec<String>,
    processes: Processes,
    detect: Duration,
    /// A kill's members, routed `detect` after it.
    pending: Option<usize>,
}

impl ProxyMembership {
    pub fn new(
        proxy: Proxy,
        n: usize,
        change: Change,
        addresses: Vec<String>,
        processes: Processes,
        detect: Duration,
    ) -> Self {
        ProxyMembership {
            proxy,
            n,
            change,
            addresses,
            processes,
            detect,
            pending: None,
        }
    }
}

impl Membership for ProxyMembership {
    fn change(&mut self, _shared: &Shared) -> Result<String> {
        let after = self.change.after(self.n);
        if let Change::Kill(k) = self.change {
            kill(&mut self.processes, self.n - k..self.n)?;
            self.pending = Some(after);
        } else {
            self.proxy.route(&self.addresses[..after])?;
        }
        Ok(format!(
            "{} (through ringwise-proxy)",
            self.change.describe(self.n)
        ))
    }

    fn fallback_hits(&self) -> Result<Option<u64>> {
        self.proxy.fallback_hits().map(Some)
    }

    fn tick(&mut self, _shared: &Shared, since_change: Option<Duration>) -> Result<()> {
        if since_change.is_some_and(|s| s >= self.detect)
            && let Some(after) = self.pending.take()
        {
            self.proxy.route(&self.addresses[..after])?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_lists_the_members_in_order() {
        let members = vec!["127.0.0.1:1".to_owned(), "127.0.0.1:2".to_owned()];
        let (spec, _) = ClusterSpec::from_toml_built(&cluster_file(&members)).expect("valid");
        assert_eq!(spec.algorithm, PROXY_ALGORITHM);
        assert_eq!(spec.listed, members);
    }

    #[test]
    fn a_fourth_server_moves_about_a_quarter() {
        let members: Vec<String> = (1..=4).map(|p| format!("127.0.0.1:{p}")).collect();
        let m = moved(&members[..3], &members, 20_000).expect("files");
        assert!((m - 0.25).abs() < 0.08, "{m}");
    }
}
