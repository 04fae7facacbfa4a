//! A client's view: the live nodes chitchat knows, read into the
//! [`Contents`] every source builds its ring from.
//!
//! What a node announces (chitchat keys of its own state):
//!
//! | key | value | who |
//! |---|---|---|
//! | `member` | the [`ringwise_membership::Member`] JSON (etcd's value, byte for byte) | a member |
//! | `left` | `1` once it leaves (shutdown, SIGTERM) | a member |
//! | `config` | `{"version": V, "writer": ID, "settings": TEXT}` | the writer, then every member |
//!
//! The ring of a view: the live nodes that announce `member` and not
//! `left`, keyed `PREFIX/nodes/NAME` (so a malformed entry is skipped and
//! named as on etcd), in join order = the generation (the member's start
//! time, carried in its chitchat id: the same on every client). Two live
//! nodes announcing one name: the older (lowest generation, then address)
//! holds it, on every client alike. The settings: the highest (version,
//! writer) any live node announces. A view is a function of the live
//! nodes' states only, so two clients whose views agree hold the same
//! ring: that is what converges, the fingerprint says when.
//!
//! Cost: O(N) per view plus the ring's build (the caller's).

use std::collections::BTreeMap;

use chitchat::{ChitchatId, NodeState};
use ringwise_membership::Contents;
use ringwise_membership::member::{config_key, node_key};
use serde::{Deserialize, Serialize};

/// The key of a member's entry.
pub(crate) const MEMBER: &str = "member";
/// The key a member sets when it leaves.
pub(crate) const LEFT: &str = "left";
/// The key of the settings.
pub(crate) const CONFIG: &str = "config";

/// Live nodes by id, with their states (chitchat's live-nodes watch).
pub(crate) type Live = BTreeMap<ChitchatId, NodeState>;

/// The settings as gossiped: the highest (version, writer) wins.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct Config {
    /// A hybrid logical clock: above every version the writer had seen,
    /// and at least the writer's time in milliseconds (so it compares with
    /// the members' generations, see `Contents::spec`).
    pub version: u64,
    /// The writer's node id (breaks ties between concurrent writers).
    pub writer: String,
    /// The settings' JSON text, as etcd stores `PREFIX/config`.
    pub settings: String,
}

impl Config {
    /// The config a node announces, if any and readable (an unreadable
    /// one is ignored with a warning: it cannot be ordered).
    pub(crate) fn of(id: &ChitchatId, state: &NodeState) -> Option<Config> {
        let text = state.get(CONFIG)?;
        match serde_json::from_str(text) {
            Ok(config) => Some(config),
            Err(e) => {
                tracing::warn!("gossip node {:?}: config entry ignored: {e}", id);
                None
            }
        }
    }

    /// The text to announce.
    pub(crate) fn to_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The highest settings any live node announces.
pub(crate) fn settings(live: &Live) -> Option<Config> {
    live.iter().filter_map(|(id, s)| Config::of(id, s)).max()
}

/// Whether `state` is a member entry in the ring (announced, not left).
pub(crate) fn is_member(state: &NodeState) -> bool {
    state.get(MEMBER).is_some() && state.get(LEFT).is_none()
}

/// The member holding each name: the oldest live node announcing it.
pub(crate) fn holders(live: &Live) -> BTreeMap<&str, &ChitchatId> {
    let mut holders: BTreeMap<&str, &ChitchatId> = BTreeMap::new();
    for (id, state) in live {
        if !is_member(state) {
            continue;
        }
        let older = |held: &&ChitchatId| {
            (held.generation_id, held.gossip_advertise_addr)
                <= (id.generation_id, id.gossip_advertise_addr)
        };
        match holders.get(&*id.node_id) {
            Some(held) if older(held) => {}
            _ => {
                holders.insert(&id.node_id, id);
            }
        }
    }
    holders
}

/// What the view holds, as the contents of `prefix`.
pub(crate) fn contents(prefix: &str, live: &Live) -> Contents {
    let mut contents = Contents::new(prefix);
    for (name, id) in holders(live) {
        let Some(value) = live.get(id).and_then(|s| s.get(MEMBER)) else {
            continue;
        };
        let joined = i64::try_from(id.generation_id).unwrap_or(i64::MAX);
        contents.put(&node_key(prefix, name), value.as_bytes(), joined, joined);
    }
    if let Some(config) = settings(live) {
        let version = i64::try_from(config.version).unwrap_or(i64::MAX);
        contents.put(
            &config_key(prefix),
            config.settings.as_bytes(),
            version,
            version,
        );
    }
    contents
}

/// Waits for a view worth reading: with no seed, none to wait for; with
/// seeds, until a peer is live and the view has not changed for 5 rounds
/// (a joining node learns every state in its first exchanges; a new node
/// is live after its second heartbeat), or until `deadline`. Returns
/// whether a peer was heard and the count of views seen.
pub(crate) async fn settle(
    node: &crate::node::Node,
    live: &mut tokio::sync::watch::Receiver<Live>,
    deadline: std::time::Duration,
) -> (bool, u64) {
    if node.seeds.is_empty() {
        return (true, 0);
    }
    let started = tokio::time::Instant::now();
    let (mut quiet, mut views) = (0u32, 0u64);
    loop {
        node.rounds(1).await;
        if live.has_changed().unwrap_or(false) {
            live.borrow_and_update();
            views += 1;
            quiet = 0;
        } else {
            quiet += 1;
        }
        let heard = live.borrow().len() > 1;
        if (heard && quiet >= 5) || started.elapsed() >= deadline {
            return (heard, views);
        }
    }
}

/// A participant of `gossip` in `role` (its settings checked), with a
/// settled view ([`settle`] within the ttl): the node, its view, whether a
/// peer was heard and the count of views seen while waiting. The one way
/// in of a registrar, a watcher and a one-shot operation.
pub(crate) async fn join(
    gossip: &crate::gossip::Gossip,
    role: crate::node::Role,
) -> Result<
    (
        crate::node::Node,
        tokio::sync::watch::Receiver<Live>,
        bool,
        u64,
    ),
    crate::Error,
> {
    gossip.check()?;
    let node = crate::node::Node::start(
        &gossip.listen,
        &gossip.seeds,
        &gossip.cluster,
        role,
        gossip.ttl,
    )
    .await?;
    let mut live = node.live().await;
    let (heard, views) = settle(&node, &mut live, gossip.ttl).await;
    Ok((node, live, heard, views))
}

/// The other live node that announces `id`'s name, if one does: the
/// holder of the name (the oldest claim, see [`holders`]).
pub(crate) fn rival<'a>(live: &'a Live, id: &ChitchatId) -> Option<&'a ChitchatId> {
    let name: &str = &id.node_id;
    holders(live)
        .get(name)
        .copied()
        .filter(|holder| *holder != id)
}
