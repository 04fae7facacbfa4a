//! A routing snapshot: the placement, its servers, and during a warm-up
//! window the placement before the last change.
//!
//! Owner of a key: the placement's owner, unless that server is ejected;
//! then the first of the key's replicas ([`Keyed::replicas_into`], the
//! placement's own preference order) that is not. On a ring that is the
//! next server clockwise, where the key goes when the server is removed,
//! as twemproxy sends it (its ring rebuilt without the server).
//!
//! Warm-up (mcrouter's WarmUpRoute idea): for `window` after a membership
//! change, a key whose owner changed has a previous owner, which the
//! client path reads on a miss ([`crate::warm`]). Writes to such keys
//! bump the key's generation here, so that a warm-up copy read before a
//! write is not written after it.
//!
//! Cost: one hash and lookup per key; with ejected servers, a replica walk
//! of up to (ejected + 1) servers; during a window, a second lookup.

use std::sync::Arc;
use std::time::Instant;

use ringwise::{AnyPlacement, Keyed, NodeId};

use crate::generations::Generations;
use crate::server::Server;

/// The placement before a change and until when it is asked.
#[derive(Debug)]
pub struct Previous {
    /// The placement and its servers, by node id.
    pub placement: Arc<Table>,
    /// The end of the window.
    pub until: Instant,
    /// Writes of moved keys during the window.
    pub generations: Arc<Generations>,
}

/// A placement and its servers by node id.
#[derive(Debug)]
pub struct Table {
    /// Keys to node ids.
    pub keyed: Keyed<AnyPlacement>,
    /// `servers[id]`.
    pub servers: Vec<Arc<Server>>,
    /// The placement's [`ringwise::ClusterSpec::fingerprint`].
    pub fingerprint: u64,
}

impl Table {
    /// The server of `key`, past ejected ones; `None` without servers.
    pub fn owner(&self, key: &[u8]) -> Option<&Arc<Server>> {
        let id = self.keyed.owner(key)?;
        let first = &self.servers[id as usize];
        if !first.is_ejected() {
            return Some(first);
        }
        let ejected = self.servers.iter().filter(|s| s.is_ejected()).count();
        let mut replicas: Vec<NodeId> = Vec::with_capacity(ejected + 1);
        let wanted = (ejected + 1).min(self.servers.len());
        self.keyed.replicas_into(key, wanted, &mut replicas);
        replicas
            .iter()
            .map(|&id| &self.servers[id as usize])
            .find(|s| !s.is_ejected())
            .or(Some(first))
    }
}

/// What the proxy routes by now.
#[derive(Debug)]
pub struct Routing {
    /// The placement in force.
    pub current: Arc<Table>,
    /// The one before, during its warm-up window.
    pub previous: Option<Previous>,
    /// 0 for the first, +1 per change.
    pub epoch: u64,
}

impl Routing {
    /// A first routing, or one after a change (`previous` for `window`).
    pub fn new(current: Arc<Table>, previous: Option<(Arc<Table>, Instant)>, epoch: u64) -> Self {
        let previous = previous.map(|(placement, until)| Previous {
            placement,
            until,
            generations: Arc::default(),
        });
        Routing {
            current,
            previous,
            epoch,
        }
    }

    /// The owner of `key` now, and its previous owner when the key moved
    /// and the window is open.
    pub fn route(&self, key: &[u8]) -> Option<(&Arc<Server>, Option<&Arc<Server>>)> {
        let owner = self.current.owner(key)?;
        let before = self.previous.as_ref().and_then(|p| {
            if Instant::now() >= p.until {
                return None;
            }
            let old = p.placement.owner(key)?;
            // Servers are shared by address across tables: the same one is
            // the same Arc.
            (!Arc::ptr_eq(old, owner) && !old.is_ejected()).then_some(old)
        });
        Some((owner, before))
    }

    /// A moved key was written (or deleted): a warm-up copy read before
    /// now must not be written.
    pub fn written(&self, key: &[u8]) {
        if let Some(p) = &self.previous {
            p.generations.bump(key);
        }
    }

    /// The window's write counts (an empty set outside a window).
    pub fn generations(&self) -> Arc<Generations> {
        self.previous
            .as_ref()
            .map_or_else(Arc::default, |p| p.generations.clone())
    }

    /// The servers, current first, then the previous ones not current.
    pub fn servers(&self) -> Vec<&Arc<Server>> {
        let mut all: Vec<&Arc<Server>> = self.current.servers.iter().collect();
        if let Some(p) = &self.previous {
            for s in &p.placement.servers {
                if !all.iter().any(|a| a.address() == s.address()) {
                    all.push(s);
                }
            }
        }
        all
    }
}
