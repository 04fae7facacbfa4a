//! One participant of the gossip: a chitchat node on a UDP socket bound
//! here first, with its timing derived from the ttl.
//!
//! How it works. The own address is resolved and bound before chitchat
//! starts (port 0 picks a free port), and chitchat is told the real
//! address: it advertises it in its [`ChitchatId`] (node id, generation,
//! address), so peers gossip back to where the socket listens. A member's
//! node id is its name; an observer (a watcher, a read, a configure) is
//! `~observer/ADDR`, which no member can be called (names have no `/`).
//! The generation is the start time in milliseconds since the epoch:
//! chitchat needs it to grow across restarts of one name, and every
//! client reads it from the id alike, so it orders members (join order).
//!
//! [`Timing::for_ttl`] maps the ttl onto chitchat's knobs so that a killed
//! member leaves every view within the ttl (see its doc and the bench).
//!
//! Cost: one UDP socket and one tokio task per node; every gossip interval
//! a digest (about 30 bytes per known node) to 3 random live peers, and
//! their deltas back. Dropping the node stops its gossip.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use chitchat::transport::{Socket, Transport, UdpSocket};
use chitchat::{
    ChitchatConfig, ChitchatHandle, ChitchatId, FailureDetectorConfig, NodeState, ProtocolVersion,
    spawn_chitchat,
};
use tokio::sync::watch;

use crate::Error;

/// Chitchat's timing for a ttl: how often to gossip and when a silent
/// node is dead.
///
/// Phi accrual (Hayashibara et al.) as chitchat computes it: phi = time
/// since the last heartbeat seen / mean interval between heartbeats seen;
/// a node is dead once phi exceeds the threshold. A node's heartbeat
/// grows every round, and every participant sees it at least once per
/// round (its own gossip's answers carry every node's heartbeat), so the
/// mean interval is at most the gossip interval `g`. With `g = ttl / 40`
/// and a threshold of 12, a killed node is declared dead about 12 `g` =
/// 0.3 ttl after its last heartbeat reached the observer, plus the two or
/// three rounds that heartbeat takes to spread and one round until the
/// next liveness check: about 0.4 ttl, measured by the bench. A stall of
/// the whole process for 12 mean intervals declares its peers dead until
/// their next heartbeat (they come back at once).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// How often each node gossips with 3 random live peers: ttl / 40,
    /// from 50 ms to 1 s.
    pub gossip_interval: Duration,
    /// Phi threshold above which a node is dead (12).
    pub phi_threshold: f64,
    /// How long a dead node's state is kept before it is forgotten (2 ×
    /// ttl): long enough for every peer to have seen it dead, so nobody
    /// gossips it back.
    pub dead_node_grace: Duration,
}

impl Timing {
    /// The timing that detects a kill within `ttl`.
    pub fn for_ttl(ttl: Duration) -> Self {
        let gossip_interval = (ttl / 40).clamp(Duration::from_millis(50), Duration::from_secs(1));
        Timing {
            gossip_interval,
            phi_threshold: 12.0,
            dead_node_grace: ttl * 2,
        }
    }
}

/// Who a node is.
#[derive(Debug, Clone)]
pub(crate) enum Role {
    /// A member, its node id the name.
    Member(String),
    /// A participant announcing no member entry.
    Observer,
}

/// A running chitchat node.
pub(crate) struct Node {
    handle: ChitchatHandle,
    pub(crate) timing: Timing,
    pub(crate) seeds: Vec<String>,
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("id", self.handle.chitchat_id())
            .field("timing", &self.timing)
            .finish()
    }
}

/// A transport whose socket was bound before chitchat started, so that
/// chitchat advertises the port the kernel picked.
struct Bound(Mutex<Option<Box<dyn Socket>>>);

#[async_trait::async_trait]
impl Transport for Bound {
    async fn open(&self, _listen: SocketAddr) -> anyhow::Result<Box<dyn Socket>> {
        let socket = self.0.lock().map(|mut s| s.take()).ok().flatten();
        socket.ok_or_else(|| anyhow::anyhow!("the gossip socket was opened already"))
    }
}

/// Milliseconds since the epoch: a node's generation, a config's least
/// version.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Node {
    /// Binds `listen`, starts chitchat in `cluster` with `seeds`, timed
    /// for `ttl`.
    pub(crate) async fn start(
        listen: &str,
        seeds: &[String],
        cluster: &str,
        role: Role,
        ttl: Duration,
    ) -> Result<Node, Error> {
        let bind_error = |error| Error::Bind {
            address: listen.to_owned(),
            error,
        };
        let address = tokio::net::lookup_host(listen)
            .await
            .map_err(bind_error)?
            .next()
            .ok_or_else(|| bind_error(std::io::Error::other("the name resolves to no address")))?;
        if address.ip().is_unspecified() {
            return Err(Error::InvalidOption {
                option: "membership",
                message: format!(
                    "{listen}: peers cannot gossip back to an unspecified address; give this \
                     host's address (127.0.0.1:0 on one machine)"
                ),
            });
        }
        let socket = UdpSocket::open(address).await.map_err(|e| {
            let error = e
                .downcast::<std::io::Error>()
                .unwrap_or_else(|e| std::io::Error::other(e.to_string()));
            bind_error(error)
        })?;
        let advertised = socket.local_addr().map_err(|e| Error::Engine {
            what: "read the gossip socket's address",
            message: e.to_string(),
        })?;
        let node_id = match role {
            Role::Member(name) => name,
            Role::Observer => format!("~observer/{advertised}"),
        };
        let timing = Timing::for_ttl(ttl);
        let seeds: Vec<String> = seeds
            .iter()
            .filter(|s| s.parse::<SocketAddr>().ok() != Some(advertised))
            .cloned()
            .collect();
        let config = ChitchatConfig {
            chitchat_id: ChitchatId::new(node_id, now_ms(), advertised),
            cluster_id: cluster.to_owned(),
            gossip_interval: timing.gossip_interval,
            listen_addr: advertised,
            seed_nodes: seeds.clone(),
            failure_detector_config: FailureDetectorConfig {
                phi_threshold: timing.phi_threshold,
                sampling_window_size: 1_000,
                max_interval: ttl,
                initial_interval: timing.gossip_interval,
                dead_node_grace_period: timing.dead_node_grace,
            },
            marked_for_deletion_grace_period: timing.dead_node_grace,
            catchup_callback: None,
            extra_liveness_predicate: None,
            protocol_version: ProtocolVersion::V0,
        };
        let transport = Bound(Mutex::new(Some(Box::new(socket))));
        let handle = spawn_chitchat(config, Vec::new(), &transport)
            .await
            .map_err(|e| Error::Engine {
                what: "start the gossip node",
                message: e.to_string(),
            })?;
        Ok(Node {
            handle,
            timing,
            seeds,
        })
    }

    /// This node's id (name or observer id, generation, address).
    pub(crate) fn id(&self) -> &ChitchatId {
        self.handle.chitchat_id()
    }

    /// The live nodes (this one included) with their states: changes when
    /// a node becomes live or dead, or announces something new.
    pub(crate) async fn live(&self) -> watch::Receiver<BTreeMap<ChitchatId, NodeState>> {
        self.handle.with_chitchat(|c| c.live_nodes_watcher()).await
    }

    /// Announces `key` = `value` (a no-op when it holds that already).
    pub(crate) async fn set(&self, key: &str, value: &str) {
        self.handle
            .with_chitchat(|c| c.self_node_state().set(key, value))
            .await;
    }

    /// The value this node announces under `key`.
    pub(crate) async fn get(&self, key: &str) -> Option<String> {
        self.handle
            .with_chitchat(|c| c.self_node_state().get(key).map(str::to_owned))
            .await
    }

    /// Sleeps `rounds` gossip intervals.
    pub(crate) async fn rounds(&self, rounds: u32) {
        tokio::time::sleep(self.timing.gossip_interval * rounds).await;
    }

    /// Stops gossiping and waits until the server has.
    pub(crate) async fn shutdown(self) {
        if let Err(e) = self.handle.shutdown().await {
            tracing::warn!("gossip node stopped with an error: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timing_scales_with_the_ttl_within_bounds() {
        let ten = Timing::for_ttl(Duration::from_secs(10));
        assert_eq!(ten.gossip_interval, Duration::from_millis(250));
        assert_eq!(ten.dead_node_grace, Duration::from_secs(20));
        // Short ttls gossip at most every 50 ms, long ones at least every second.
        assert_eq!(
            Timing::for_ttl(Duration::from_secs(2)).gossip_interval,
            Duration::from_millis(50)
        );
        assert_eq!(
            Timing::for_ttl(Duration::from_secs(600)).gossip_interval,
            Duration::from_secs(1)
        );
        // The detection bound, 12 rounds after the last heartbeat, stays
        // well inside the ttl at every ttl the sources accept.
        for ttl in [2, 4, 10, 40, 86_400] {
            let ttl = Duration::from_secs(ttl);
            let timing = Timing::for_ttl(ttl);
            assert!(
                timing.gossip_interval.mul_f64(timing.phi_threshold + 4.0) < ttl,
                "{ttl:?}"
            );
        }
    }
}
