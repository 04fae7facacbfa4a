//! A routing snapshot: the table in force and the changes still being
//! settled, with the lookups every request makes.
//!
//! Owner of a key: the table's placement's owner, unless that server is
//! out of the table (ejected); then the first of the key's replicas
//! ([`Keyed::replicas_into`], the placement's own preference order) that
//! is not. On a ring that is the next server clockwise, where the key
//! goes when the server is removed, as twemproxy sends it. Which servers
//! are out is part of the table, so an ejection or a re-admission is a
//! change like any other ([`crate::pool`]).
//!
//! A change is settled once no server other than a key's owner can hold
//! a copy of it that a read could see: after its warm-up window, once
//! every server that may have lost keys in it has been swept of the keys
//! it does not own ([`crate::sweep`]) or flushed. Until then the change
//! is kept here, most recent first, with the table before it, and:
//!
//! - a key is *unsettled* when its owner under any kept table differs
//!   from its owner now; its requests take the key's lock
//!   ([`crate::locks`]);
//! - its *fallbacks* (read on a miss, [`crate::warm`]) are its owners
//!   under the kept tables whose window is open, most recent first: a
//!   write deletes the key on every earlier owner, so the most recent
//!   previous owner that holds it holds its latest value;
//! - its *losers* (where a write deletes it) are its owners under every
//!   kept table that are still in the pool or still a fallback. A server
//!   that leaves the pool, or is ejected, gets none: it is flushed before
//!   it is asked for anything again.
//!
//! A request that waits for a key's lock routes the key again once it
//! holds it (a snapshot taken before the wait may be older than a change
//! that a request before it already routed by): [`Routing::is_latest`].
//!
//! Cost: one hash and lookup per key, plus one lookup per kept change
//! (none once settled); with ejected servers, a replica walk of up to
//! (ejected + 1) servers.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use ringwise::{AnyPlacement, Keyed, NodeId};

use crate::locks::KeyLocks;
use crate::server::Server;

/// A placement, its servers by node id, and which are out.
#[derive(Debug)]
pub struct Table {
    /// Keys to node ids.
    pub keyed: Keyed<AnyPlacement>,
    /// `servers[id]`.
    pub servers: Vec<Arc<Server>>,
    /// `out[id]`: taken out (ejected); its keys go to their next replica.
    pub out: Vec<bool>,
    /// The placement's [`ringwise::ClusterSpec::fingerprint`].
    pub fingerprint: u64,
}

impl Table {
    /// The server of `key`, past servers that are out; `None` without
    /// servers, or when every server is out: an ejected server may hold
    /// values overwritten since, and is asked nothing until it is flushed
    /// (the client gets `SERVER_ERROR`, as from nutcracker with no live
    /// server).
    pub fn owner(&self, key: &[u8]) -> Option<&Arc<Server>> {
        let id = self.keyed.owner(key)? as usize;
        if !self.is_out(id) {
            return Some(&self.servers[id]);
        }
        // Among `out + 1` distinct replicas one is in, unless all are out.
        let out = (0..self.servers.len()).filter(|&i| self.is_out(i)).count();
        let mut replicas: Vec<NodeId> = Vec::with_capacity(out + 1);
        let wanted = (out + 1).min(self.servers.len());
        self.keyed.replicas_into(key, wanted, &mut replicas);
        replicas
            .iter()
            .find(|&&r| !self.is_out(r as usize))
            .map(|&r| &self.servers[r as usize])
    }

    /// Out in this table, or ejected since it was published: an
    /// ejection takes effect at once (nothing moves away from a server
    /// that still serves), a re-admission only with the table that
    /// publishes it ([`crate::pool`]).
    fn is_out(&self, id: usize) -> bool {
        self.out[id] || self.servers[id].is_ejected()
    }

    /// Whether `server` is in this table and not out.
    pub fn serves(&self, server: &Arc<Server>) -> bool {
        (self.servers.iter().enumerate()).any(|(i, s)| !self.is_out(i) && Arc::ptr_eq(s, server))
    }

    /// The same placement with `out` instead.
    pub fn with_out(&self, out: Vec<bool>) -> Table {
        Table {
            keyed: self.keyed.clone(),
            servers: self.servers.clone(),
            out,
            fingerprint: self.fingerprint,
        }
    }
}

/// A change not yet settled: the table before it.
#[derive(Debug)]
pub struct Change {
    /// The table in force before the change.
    pub before: Arc<Table>,
    /// The end of its warm-up window.
    pub until: Instant,
}

/// What the proxy routes by now.
#[derive(Debug)]
pub struct Routing {
    /// The table in force.
    pub current: Arc<Table>,
    /// The changes not yet settled, most recent first.
    pub changes: Vec<Arc<Change>>,
    /// 0 for the first table, +1 per change.
    pub epoch: u64,
    /// The key locks every snapshot shares.
    pub locks: Arc<KeyLocks>,
    /// The epoch of the routing in force, which every snapshot shares.
    pub published: Arc<AtomicU64>,
}

impl Routing {
    /// The owner of `key` now, and whether the key is unsettled (module
    /// doc).
    pub fn route(&self, key: &[u8]) -> Option<(&Arc<Server>, bool)> {
        let owner = self.current.owner(key)?;
        let unsettled = self.changes.iter().any(|change| {
            change
                .before
                .owner(key)
                .is_some_and(|before| !Arc::ptr_eq(before, owner))
        });
        Some((owner, unsettled))
    }

    /// Where a miss of `key` on `owner` is read, most recent first
    /// (module doc); empty for a settled key.
    pub fn fallbacks(&self, key: &[u8], owner: &Arc<Server>) -> Vec<Arc<Server>> {
        let now = Instant::now();
        let mut out: Vec<Arc<Server>> = Vec::new();
        for change in self.changes.iter().filter(|c| now < c.until) {
            if let Some(before) = change.before.owner(key) {
                if !before.is_ejected()
                    && !Arc::ptr_eq(before, owner)
                    && !out.iter().any(|s| Arc::ptr_eq(s, before))
                {
                    out.push(before.clone());
                }
            }
        }
        out
    }

    /// Where a write of `key` (owned by `owner`) deletes it (module doc).
    pub fn losers(&self, key: &[u8], owner: &Arc<Server>) -> Vec<Arc<Server>> {
        let now = Instant::now();
        let mut out: Vec<Arc<Server>> = Vec::new();
        for change in &self.changes {
            let Some(before) = change.before.owner(key) else {
                continue;
            };
            // An ejected server is flushed before it is asked for
            // anything again.
            let reachable = !before.is_ejected();
            let kept = self.current.serves(before) || now < change.until;
            if kept
                && reachable
                && !Arc::ptr_eq(before, owner)
                && !out.iter().any(|s| Arc::ptr_eq(s, before))
            {
                out.push(before.clone());
            }
        }
        out
    }

    /// Whether no change was published since this snapshot.
    pub fn is_latest(&self) -> bool {
        self.published.load(Ordering::Acquire) == self.epoch
    }

    /// Whether any change is being settled (hot keys are not spread
    /// meanwhile: a replica's copy could outlive the change unseen).
    pub fn settling(&self) -> bool {
        !self.changes.is_empty()
    }

    /// The servers, current first, then the kept tables' others.
    pub fn servers(&self) -> Vec<&Arc<Server>> {
        let mut all: Vec<&Arc<Server>> = self.current.servers.iter().collect();
        for change in &self.changes {
            for s in &change.before.servers {
                if !all.iter().any(|a| Arc::ptr_eq(a, s)) {
                    all.push(s);
                }
            }
        }
        all
    }
}
