//! The pool: which server owns a key, and the connections to each server.
//!
//! A pool is any ringwise placement with an address per node: from a
//! cluster file, whose node names are the servers' `host:port`
//! (`10.0.0.1:11211`), or from a pool of a `nutcracker.yml`, read by
//! `ringwise-import` exactly as twemproxy reads it (ketama, its key hash,
//! its hash tag), a named server reached at the `host:port` before its
//! name. Keys are hashed as the placement's clients hash them
//! ([`Keyed::owner`], hash tag included).
//!
//! A change of the routing is published whole ([`Routing`], swapped
//! lock-free; requests already routed finish on the one they took), one
//! at a time, off the clients' path, for any of four reasons:
//!
//! - a membership change ([`Pool::change`], [`Pool::change_to`]): the new
//!   placement; a server that was not in the table in force is flushed
//!   (`flush_all`, on each of its connections) before it gets keys, since it may hold values from an
//!   earlier time in the pool that were overwritten since (one that does
//!   not answer the flush joins as ejected); a change that changes no
//!   server and no fingerprint is no change;
//! - an ejection ([`crate::server`]): the same placement with the server
//!   out;
//! - a re-admission: after its retry timeout an ejected server is flushed
//!   on each connection (after whatever was sent to it before it stopped),
//!   and put back once every flush is answered;
//! - settling: a change is dropped from the routing once its window has
//!   closed and every server that may have lost keys in it and is still in
//!   the pool has been swept since ([`crate::sweep`]).
//!
//! Each is logged with its epoch and reason, and so is a change once
//! settled ([`crate::log`]).
//!
//! Servers are kept by address across changes, with their connections,
//! health and counters. The proxy trusts what the servers of its first
//! table hold (docs/proxy.md says what that asks of an operator).
//!
//! Cost: a change is the placement's build (on a blocking thread for a
//! file) plus one flush per joining server; routing a key is in
//! [`crate::routing`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use arc_swap::ArcSwap;
use ringwise::{AnyPlacement, ClusterSpec, Keyed, Placement};
use ringwise_import::Kind;

use crate::exchange::{send, wait};
use crate::hot::{Hot, HotKeys};
use crate::locks::KeyLocks;
use crate::note;
use crate::response::Expect;
use crate::routing::{Change, Routing, Table};
use crate::server::{Ejection, Server};

/// Where a pool comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A ringwise cluster file's text.
    Cluster(String),
    /// A `nutcracker.yml` and the pool to take (optional with one pool).
    Nutcracker {
        /// The file's text.
        text: String,
        /// `--pool`.
        pool: Option<String>,
    },
}

/// How the pool's servers are reached and judged.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Connections per server.
    pub connections: usize,
    /// How long a connect may take.
    pub connect_timeout: Duration,
    /// When a failing server is taken out.
    pub ejection: Ejection,
    /// How long after a change a moved key's previous owners are read on
    /// a miss (zero: no warm-up).
    pub warm_up: Duration,
    /// Hot keys' reads spread over their replicas (`None`: off).
    pub hot_keys: Option<HotKeys>,
    /// How long the pool waits for a server's answer (flushes, sweeps).
    pub timeout: Duration,
}

/// A membership to route by: the placement, each node's address (by node
/// id) and the placement's [`ClusterSpec::fingerprint`].
#[derive(Debug)]
pub struct Membership {
    /// Keys to node ids.
    pub keyed: Keyed<AnyPlacement>,
    /// `addresses[id]` reaches node `id`.
    pub addresses: Vec<String>,
    /// The description's fingerprint.
    pub fingerprint: u64,
}

/// A change being settled: which servers still need a sweep.
#[derive(Debug)]
struct Kept {
    change: Arc<Change>,
    unswept: Vec<Arc<Server>>,
}

/// What only one change at a time may touch.
#[derive(Debug)]
struct Changes {
    current: Arc<Table>,
    /// Most recent first.
    kept: Vec<Kept>,
    epoch: u64,
}

/// The routing in force and every server's connections.
#[derive(Debug)]
pub struct Pool {
    routing: ArcSwap<Routing>,
    changes: tokio::sync::Mutex<Changes>,
    /// Servers by address, kept across changes (their connections and
    /// counters with them).
    servers: Mutex<HashMap<String, Arc<Server>>>,
    options: Options,
    hot: Option<Hot>,
    locks: Arc<KeyLocks>,
    published: Arc<AtomicU64>,
    next_client: AtomicUsize,
}

impl Pool {
    /// Reads `source` and starts its servers' connections (each made on
    /// its first request).
    pub fn start(source: &Source, options: Options) -> anyhow::Result<Pool> {
        Ok(Pool::start_with(read(source)?, options))
    }

    /// [`Pool::start`] on a membership already read.
    pub fn start_with(members: Membership, options: Options) -> Pool {
        let servers = Mutex::new(HashMap::new());
        let table = table(&servers, &options, members, |_| false);
        let locks = Arc::new(KeyLocks::default());
        let published = Arc::new(AtomicU64::new(0));
        let routing = Routing {
            current: table.clone(),
            changes: Vec::new(),
            epoch: 0,
            locks: locks.clone(),
            published: published.clone(),
        };
        Pool {
            routing: ArcSwap::from_pointee(routing),
            changes: tokio::sync::Mutex::new(Changes {
                current: table,
                kept: Vec::new(),
                epoch: 0,
            }),
            servers,
            options,
            hot: options.hot_keys.map(Hot::new),
            locks,
            published,
            next_client: AtomicUsize::new(0),
        }
    }

    /// Routes by `source` from now on, if it changes a server or the
    /// placement. Read and built on a blocking thread, so no client waits
    /// for it; nothing changes when `source` is refused. Returns whether
    /// the routing changed.
    pub async fn change(&self, source: Source) -> anyhow::Result<bool> {
        let members = tokio::task::spawn_blocking(move || read(&source))
            .await
            .context("the build stopped")??;
        Ok(self.change_to(members).await)
    }

    /// [`Pool::change`] to a membership already read (a live source's
    /// cluster).
    pub async fn change_to(&self, members: Membership) -> bool {
        let mut changes = self.changes.lock().await;
        let old = changes.current.clone();
        let same_addresses = old.servers.len() == members.addresses.len()
            && (old.servers.iter())
                .zip(&members.addresses)
                .all(|(s, a)| s.address() == a);
        if same_addresses && old.fingerprint == members.fingerprint {
            return false;
        }
        let new = table(&self.servers, &self.options, members, |_| false);
        // Flushed before they are given keys; one that does not answer
        // joins ejected (and is flushed before it is re-admitted).
        let mut joined: Vec<&str> = Vec::new();
        for server in new.servers.iter() {
            if !old.servers.iter().any(|s| Arc::ptr_eq(s, server)) {
                joined.push(server.address());
                if !self.flush(server).await {
                    server.eject_now();
                }
            }
        }
        let left: Vec<&str> = (old.servers.iter())
            .filter(|s| !new.servers.iter().any(|n| Arc::ptr_eq(s, n)))
            .map(|s| s.address())
            .collect();
        let why = format!(
            "a new membership of {} servers (joined: {}; left: {})",
            new.servers.len(),
            listed(&joined),
            listed(&left)
        );
        let out = new.servers.iter().map(|s| s.is_ejected()).collect();
        self.publish(&mut changes, Arc::new(new.with_out(out)), &why);
        true
    }

    /// Publishes a table whose ejected servers differ from the one in
    /// force, and re-admits those whose retry timeout passed once a
    /// flush is answered; drops the changes that are settled. Called
    /// every few milliseconds by [`health`].
    pub async fn check_health(&self) {
        let mut changes = self.changes.lock().await;
        let current = changes.current.clone();
        for server in current.servers.iter().filter(|s| s.retry_due()) {
            match self.flush(server).await {
                true => server.readmit(),
                false => server.retry_later(),
            }
        }
        let out: Vec<bool> = current.servers.iter().map(|s| s.is_ejected()).collect();
        if out != current.out {
            let named = |wanted: bool| -> Vec<&str> {
                (current.servers.iter().zip(&out).zip(&current.out))
                    .filter(|((_, is), was)| is != was && **is == wanted)
                    .map(|((s, _), _)| s.address())
                    .collect()
            };
            let why = format!(
                "servers out: {}; re-admitted after a flush: {}",
                listed(&named(true)),
                listed(&named(false))
            );
            self.publish(&mut changes, Arc::new(current.with_out(out)), &why);
        }
        let now = Instant::now();
        let before = changes.kept.len();
        let table = changes.current.clone();
        for kept in &mut changes.kept {
            if now >= kept.change.until {
                // A server out of the pool or ejected needs no sweep: it
                // is flushed before it is given keys again.
                kept.unswept.retain(|s| table.serves(s));
            }
        }
        // A fallback read begun just before a window closed holds its
        // key's lock for up to two timeouts (the read, the copy): its key
        // stays unsettled, so that the key's writes still wait for it.
        let grace = self.options.timeout * 3;
        changes
            .kept
            .retain(|k| now < k.change.until + grace || !k.unswept.is_empty());
        if changes.kept.len() != before {
            self.store(&changes);
            note!(
                "{} change(s) settled; {} still settling (epoch {})",
                before - changes.kept.len(),
                changes.kept.len(),
                changes.epoch
            );
        }
    }

    /// The servers that a sweep would settle a change with: those still
    /// unswept in a change whose window has closed.
    pub async fn to_sweep(&self) -> Vec<Arc<Server>> {
        let changes = self.changes.lock().await;
        let now = Instant::now();
        let mut out: Vec<Arc<Server>> = Vec::new();
        let unswept = (changes.kept.iter())
            .filter(|k| now >= k.change.until)
            .flat_map(|k| k.unswept.iter());
        for server in unswept {
            if !out.iter().any(|s| Arc::ptr_eq(s, server)) {
                out.push(server.clone());
            }
        }
        out
    }

    /// `server` was swept of every key it did not own, from a sweep that
    /// began at `started`: the changes whose window had closed by then no
    /// longer wait for it.
    pub async fn swept(&self, server: &Arc<Server>, started: Instant) {
        let mut changes = self.changes.lock().await;
        for kept in &mut changes.kept {
            if kept.change.until <= started {
                kept.unswept.retain(|s| !Arc::ptr_eq(s, server));
            }
        }
    }

    /// Sends `flush_all` to `server` on each of its connections, after
    /// whatever each was sent before (memcached applies a connection's
    /// requests in order, the connections in no order between them);
    /// whether each answered `OK`.
    pub async fn flush(&self, server: &Server) -> bool {
        let timeout = self.options.timeout;
        let flushes: Vec<_> = (0..server.connection_count())
            .map(|i| send(server, i, b"flush_all\r\n", Expect::Line))
            .collect();
        let mut ok = true;
        for flush in flushes {
            ok &= wait(server, flush, timeout).await.as_deref() == Ok(b"OK\r\n".as_slice());
        }
        if ok {
            server.counters.flushes.fetch_add(1, Ordering::Relaxed);
        }
        ok
    }

    /// Makes `table` the one in force, keeping the one before it until
    /// the change is settled.
    fn publish(&self, changes: &mut Changes, table: Arc<Table>, why: &str) {
        let before = std::mem::replace(&mut changes.current, table.clone());
        // Only taking servers out moves no key away from a server still
        // serving: nothing to sweep, and no window (the servers taken out
        // are not read).
        let only_out = before.fingerprint == table.fingerprint
            && before.servers.len() == table.servers.len()
            && (before.servers.iter().zip(&table.servers)).all(|(a, b)| Arc::ptr_eq(a, b))
            && (before.out.iter().zip(&table.out)).all(|(&was, &is)| !was || is);
        let unswept = match only_out {
            true => Vec::new(),
            false => (before.servers.iter())
                .filter(|s| before.serves(s) && table.serves(s))
                .cloned()
                .collect(),
        };
        let window = match only_out {
            true => Duration::ZERO,
            false => self.options.warm_up,
        };
        let change = Change {
            before,
            until: Instant::now() + window,
        };
        changes.kept.insert(
            0,
            Kept {
                change: Arc::new(change),
                unswept,
            },
        );
        changes.epoch += 1;
        self.store(changes);
        note!("routing epoch {}: {why}", changes.epoch);
    }

    fn store(&self, changes: &Changes) {
        self.routing.store(Arc::new(Routing {
            current: changes.current.clone(),
            changes: changes.kept.iter().map(|k| k.change.clone()).collect(),
            epoch: changes.epoch,
            locks: self.locks.clone(),
            published: self.published.clone(),
        }));
        self.published.store(changes.epoch, Ordering::Release);
    }

    /// The routing in force.
    pub fn routing(&self) -> Arc<Routing> {
        self.routing.load_full()
    }

    /// The key locks every routing snapshot shares.
    pub fn locks(&self) -> &KeyLocks {
        &self.locks
    }

    /// The hot-key state, when enabled.
    pub fn hot(&self) -> Option<&Hot> {
        self.hot.as_ref()
    }

    /// A new client's number (which connection of each server it uses).
    pub fn client(&self) -> usize {
        self.next_client.fetch_add(1, Ordering::Relaxed)
    }

    /// The pool's settings.
    pub fn options(&self) -> &Options {
        &self.options
    }
}

/// Publishes ejections and re-admissions and drops settled changes, every
/// 20 ms, until the process ends.
pub async fn health(pool: Arc<Pool>) {
    let mut tick = tokio::time::interval(Duration::from_millis(20));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        pool.check_health().await;
    }
}

/// `a, b` (`none` for no address), for the log.
fn listed(addresses: &[&str]) -> String {
    match addresses.is_empty() {
        true => "none".to_string(),
        false => addresses.join(", "),
    }
}

/// The table of `members`, its servers reused from `known` when running.
fn table(
    known: &Mutex<HashMap<String, Arc<Server>>>,
    options: &Options,
    members: Membership,
    out: impl Fn(&Server) -> bool,
) -> Arc<Table> {
    let mut known = known.lock().unwrap_or_else(PoisonError::into_inner);
    let servers: Vec<Arc<Server>> = (members.addresses.iter())
        .map(|address| {
            let start = || {
                let (n, timeout) = (options.connections, options.connect_timeout);
                Arc::new(Server::start(address.clone(), n, timeout, options.ejection))
            };
            known.entry(address.clone()).or_insert_with(start).clone()
        })
        .collect();
    let out = servers.iter().map(|s| out(s)).collect();
    Arc::new(Table {
        keyed: members.keyed,
        servers,
        out,
        fingerprint: members.fingerprint,
    })
}

/// The membership `source` describes.
fn read(source: &Source) -> anyhow::Result<Membership> {
    match source {
        Source::Cluster(text) => {
            let (spec, keyed) = ClusterSpec::from_toml_built(text)?;
            let nodes = keyed.placement().nodes();
            let mut addresses = Vec::with_capacity(nodes.len());
            for node in nodes.iter() {
                if !looks_like_address(&node.name) {
                    bail!(
                        "node {:?} is not a server address: the proxy connects to each node \
                         by its name, so name the nodes host:port (e.g. 10.0.0.1:11211)",
                        node.name
                    );
                }
                addresses.push(node.name.clone());
            }
            let fingerprint = spec.fingerprint();
            Ok(Membership {
                keyed,
                addresses,
                fingerprint,
            })
        }
        Source::Nutcracker { text, pool } => {
            let imported = ringwise_import::import(Kind::Twemproxy, text, pool.as_deref())?;
            let spec = imported.spec()?;
            let keyed = spec.build().context("building the pool")?;
            let nodes = keyed.placement().nodes();
            let mut addresses = vec![String::new(); nodes.len()];
            for (member, address) in imported.members.iter().zip(&imported.addresses) {
                let id = nodes
                    .id(&member.name)
                    .context("a member of the pool is missing from its placement")?;
                let address = address.clone().unwrap_or_else(|| member.name.clone());
                addresses[id as usize] = address;
            }
            let fingerprint = spec.fingerprint();
            Ok(Membership {
                keyed,
                addresses,
                fingerprint,
            })
        }
    }
}

/// `host:port` with a port number (an IPv6 host in brackets or not).
fn looks_like_address(name: &str) -> bool {
    name.rsplit_once(':')
        .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0))
}

/// A `nutcracker.yml` pool's other directives, `(name, value, line)`
/// (`listen`, `timeout`, `server_connections`, `auto_eject_hosts`, ...).
pub fn nutcracker_directives(
    text: &str,
    pool: Option<&str>,
) -> anyhow::Result<Vec<(String, String, usize)>> {
    Ok(ringwise_import::import(Kind::Twemproxy, text, pool)?.directives)
}
