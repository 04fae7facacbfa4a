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
//! Cost: building is the placement's build plus one task pair per
//! connection; [`Pool::route`] is one hash and one lookup.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::{Context, bail};
use ringwise::{AnyPlacement, ClusterSpec, Keyed, Placement};
use ringwise_import::Kind;

use crate::backend::Backend;

/// Where a pool comes from.
#[derive(Debug, Clone)]
pub enum Source {
    /// A ringwise cluster file.
    Cluster(String),
    /// A `nutcracker.yml` and the pool to take (optional with one pool).
    Nutcracker {
        /// The file's text.
        text: String,
        /// `--pool`.
        pool: Option<String>,
    },
}

/// The routing table of a pool and its connections.
#[derive(Debug)]
pub struct Pool {
    keyed: Keyed<AnyPlacement>,
    /// `backends[node][i]`: connection `i` to the node's server.
    backends: Vec<Vec<Backend>>,
    next_client: AtomicUsize,
}

impl Pool {
    /// Reads `source` and starts `connections` connections per server
    /// (each made on its first request).
    pub fn start(
        source: &Source,
        connections: usize,
        connect_timeout: Duration,
    ) -> anyhow::Result<Pool> {
        let (keyed, addresses) = read(source)?;
        let connections = connections.max(1);
        let backends = addresses
            .into_iter()
            .map(|address| {
                (0..connections)
                    .map(|_| Backend::start(address.clone(), connect_timeout))
                    .collect()
            })
            .collect();
        Ok(Pool {
            keyed,
            backends,
            next_client: AtomicUsize::new(0),
        })
    }

    /// A new client's connection number: a client keeps one connection
    /// per server, so its requests to a server stay in order.
    pub fn client(&self) -> usize {
        self.next_client.fetch_add(1, Ordering::Relaxed)
    }

    /// The connection of client `client` to the owner of `key`; `None`
    /// when the pool has no server.
    pub fn route(&self, key: &[u8], client: usize) -> Option<(usize, &Backend)> {
        let node = self.keyed.owner(key)? as usize;
        self.backend(node, client).map(|b| (node, b))
    }

    /// Client `client`'s connection to node `node`.
    pub fn backend(&self, node: usize, client: usize) -> Option<&Backend> {
        let conns = self.backends.get(node)?;
        conns.get(client % conns.len())
    }

    /// The number of servers.
    pub fn len(&self) -> usize {
        self.backends.len()
    }

    /// Whether the pool has no server.
    pub fn is_empty(&self) -> bool {
        self.backends.is_empty()
    }
}

/// The placement and each node's address, by node id.
fn read(source: &Source) -> anyhow::Result<(Keyed<AnyPlacement>, Vec<String>)> {
    match source {
        Source::Cluster(text) => {
            let (_, keyed) = ClusterSpec::from_toml_built(text)?;
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
            Ok((keyed, addresses))
        }
        Source::Nutcracker { text, pool } => {
            let imported = ringwise_import::import(Kind::Twemproxy, text, pool.as_deref())?;
            let keyed = imported.spec()?.build().context("building the pool")?;
            let nodes = keyed.placement().nodes();
            let mut addresses = vec![String::new(); nodes.len()];
            for (member, address) in imported.members.iter().zip(&imported.addresses) {
                let id = nodes
                    .id(&member.name)
                    .context("a member of the pool is missing from its placement")?;
                let address = address.clone().unwrap_or_else(|| member.name.clone());
                addresses[id as usize] = address;
            }
            Ok((keyed, addresses))
        }
    }
}

/// `host:port` with a port number (an IPv6 host in brackets or not).
fn looks_like_address(name: &str) -> bool {
    name.rsplit_once(':')
        .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0))
}
