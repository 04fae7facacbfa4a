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
//! A change ([`Pool::change`]: the file again, on SIGHUP or when it
//! changes) builds a new [`Routing`] and swaps it in whole; requests
//! already routed finish on the old one. Servers are kept by address
//! across changes, with their connections, health and counters.
//!
//! Cost: a build or change is the placement's build plus one task pair
//! per new connection; routing a key is in [`crate::routing`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use arc_swap::ArcSwap;
use ringwise::{AnyPlacement, ClusterSpec, Keyed, Placement};
use ringwise_import::Kind;

use crate::hot::{Hot, HotKeys};
use crate::routing::{Routing, Table};
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
    /// How long after a change a moved key's previous owner is read on a
    /// miss (zero: no warm-up).
    pub warm_up: Duration,
    /// Hot keys' reads spread over their replicas (`None`: off).
    pub hot_keys: Option<HotKeys>,
}

/// A membership to route by: the placement, each node's address (by node
/// id) and the placement's [`ClusterSpec::fingerprint`] (equal for equal
/// rings, so a change that places nothing differently is told apart
/// without rebuilding anything).
#[derive(Debug)]
pub struct Membership {
    /// Keys to node ids.
    pub keyed: Keyed<AnyPlacement>,
    /// `addresses[id]` reaches node `id`.
    pub addresses: Vec<String>,
    /// The description's fingerprint.
    pub fingerprint: u64,
}

/// The routing in force and every server's connections.
#[derive(Debug)]
pub struct Pool {
    routing: ArcSwap<Routing>,
    /// Servers by address, kept across changes (their connections and
    /// counters with them).
    servers: Mutex<HashMap<String, Arc<Server>>>,
    options: Options,
    hot: Option<Hot>,
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
        let table = table(&servers, &options, members);
        Pool {
            routing: ArcSwap::from_pointee(Routing::new(table, None, 0)),
            servers,
            options,
            hot: options.hot_keys.map(Hot::new),
            next_client: AtomicUsize::new(0),
        }
    }

    /// Routes by `source` from now on, if it changes the placement or an
    /// address; the routing before it is read on misses for the warm-up
    /// window. Nothing changes when `source` is refused. Returns whether
    /// the routing changed. O(the placement's build).
    pub fn change(&self, source: &Source) -> anyhow::Result<bool> {
        Ok(self.change_to(read(source)?))
    }

    /// [`Pool::change`] to a membership already read (a live source's
    /// cluster).
    pub fn change_to(&self, members: Membership) -> bool {
        let old = self.routing.load_full();
        let same_addresses = old.current.servers.len() == members.addresses.len()
            && (old.current.servers.iter())
                .zip(&members.addresses)
                .all(|(s, a)| s.address() == a);
        if same_addresses && old.current.fingerprint == members.fingerprint {
            return false;
        }
        let table = table(&self.servers, &self.options, members);
        let previous = (!self.options.warm_up.is_zero())
            .then(|| (old.current.clone(), Instant::now() + self.options.warm_up));
        self.routing
            .store(Arc::new(Routing::new(table, previous, old.epoch + 1)));
        true
    }

    /// The routing in force.
    pub fn routing(&self) -> Arc<Routing> {
        self.routing.load_full()
    }

    /// The hot-key state, when enabled.
    pub fn hot(&self) -> Option<&Hot> {
        self.hot.as_ref()
    }

    /// A new client's number (which connection of each server it uses).
    pub fn client(&self) -> usize {
        self.next_client.fetch_add(1, Ordering::Relaxed)
    }
}

/// The table of `members`, its servers reused from `known` when running.
fn table(
    known: &Mutex<HashMap<String, Arc<Server>>>,
    options: &Options,
    members: Membership,
) -> Arc<Table> {
    let mut known = known.lock().unwrap_or_else(PoisonError::into_inner);
    let servers = (members.addresses.iter())
        .map(|address| {
            let start = || {
                let (n, timeout) = (options.connections, options.connect_timeout);
                Arc::new(Server::start(address.clone(), n, timeout, options.ejection))
            };
            known.entry(address.clone()).or_insert_with(start).clone()
        })
        .collect();
    Arc::new(Table {
        keyed: members.keyed,
        servers,
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
