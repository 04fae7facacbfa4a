//! One-shot operations: read the cluster, read the settings, change them.
//!
//! Each joins as an observer, waits for a view ([`crate::view::settle`]:
//! a peer heard and 5 quiet rounds, at most the ttl; no seed answering is
//! [`Error::NoPeer`]), does its work and leaves. With no store, what a read
//! returns is this participant's view: complete once gossip has spread
//! (rounds, not a revision); its version is the count of views seen
//! while waiting, local and only a hint.
//!
//! Changing the settings: the new settings are checked against the
//! members of the view (the checks of a cluster file, as on etcd), then
//! announced as `config` with version max(highest seen + 1, now in ms)
//! and the writer's id; the highest (version, writer) wins everywhere.
//! Only the members keep them after the writer leaves (each re-announces
//! the highest it sees), so `configure` waits until a live member echoes
//! them (at most the ttl) and fails with [`Error::NotSpread`] when no
//! member is there to keep them, or when a concurrent writer's settings
//! (a higher version) won.
//!
//! Cost: a node's start and its rounds: about 6 gossip intervals (ttl /
//! 40 each) for a read, plus the echo for a change.

use ringwise_membership::{Cluster, change_settings, read_settings};
use serde_json::{Map, Value};

use crate::Error;
use crate::gossip::Gossip;
use crate::node::{Node, Role, now_ms};
use crate::view::{self, CONFIG, Config};

/// An observer with a settled view; `NoPeer` if seeds never answered.
async fn observe(
    gossip: &Gossip,
) -> Result<(Node, tokio::sync::watch::Receiver<view::Live>, u64), Error> {
    let started = std::time::Instant::now();
    let (node, live, heard, views) = view::join(gossip, Role::Observer).await?;
    if !heard {
        node.shutdown().await;
        return Err(Error::NoPeer {
            seeds: gossip.seeds.clone(),
            waited: started.elapsed(),
        });
    }
    Ok((node, live, views + 1))
}

/// The cluster as this participant's view holds it, and the count of
/// views seen (local).
pub async fn read(gossip: &Gossip) -> Result<(Cluster, u64), Error> {
    let (node, live, views) = observe(gossip).await?;
    let mut contents = view::contents(&gossip.prefix(), &live.borrow());
    node.shutdown().await;
    Ok((Cluster::from_contents(&mut contents)?, views))
}

/// The settings the view holds (empty when none are).
pub async fn settings(gossip: &Gossip) -> Result<Map<String, Value>, Error> {
    let (node, live, _) = observe(gossip).await?;
    let config = view::settings(&live.borrow());
    node.shutdown().await;
    let key = ringwise_membership::member::config_key(&gossip.prefix());
    Ok(read_settings(
        &key,
        config.as_ref().map(|c| c.settings.as_bytes()),
    )?)
}

/// Changes the settings (`None` removes one), checked against the
/// members of the view; returns them once a live member echoes them.
pub async fn configure(
    gossip: &Gossip,
    changes: &[(String, Option<Value>)],
) -> Result<Map<String, Value>, Error> {
    let (node, mut live, _) = observe(gossip).await?;
    let view = live.borrow_and_update().clone();
    let written = write(gossip, &node, &view, changes).await;
    let (map, config) = match written {
        Ok(written) => written,
        Err(e) => {
            node.shutdown().await;
            return Err(e);
        }
    };
    // A member echoing ours: kept. A higher version anywhere: a
    // concurrent writer's settings won (highest wins), ours are gone.
    let echoed = tokio::time::timeout(gossip.ttl, async {
        loop {
            {
                let view = live.borrow_and_update();
                let mut echo = false;
                for (id, state) in view.iter() {
                    let held = Config::of(id, state);
                    match held {
                        Some(held) if held > config => return Some(held),
                        Some(held) => {
                            echo |= id != node.id() && view::is_member(state) && held == config
                        }
                        None => {}
                    }
                }
                if echo {
                    return None;
                }
            }
            if live.changed().await.is_err() {
                return None;
            }
        }
    })
    .await;
    node.shutdown().await;
    match echoed {
        Ok(None) => Ok(map),
        Ok(Some(won)) => Err(Error::NotSpread {
            message: format!(
                "settings written at the same time by {} (version {}) won, as the highest \
                 version does; read them with `config` and change them again",
                won.writer, won.version
            ),
        }),
        Err(_) => Err(Error::NotSpread {
            message: format!(
                "no member echoed them within {} s (the ttl); they may still spread, check \
                 with `config` or `watch`",
                gossip.ttl.as_secs()
            ),
        }),
    }
}

/// Checks the changed settings against the view and announces them.
async fn write(
    gossip: &Gossip,
    node: &Node,
    live: &view::Live,
    changes: &[(String, Option<Value>)],
) -> Result<(Map<String, Value>, Config), Error> {
    let mut contents = view::contents(&gossip.prefix(), live);
    if contents.members().is_empty() {
        return Err(Error::NotSpread {
            message: "no member in the view: with gossip only the members keep the settings; \
                      start a member (ringwise join) first"
                .into(),
        });
    }
    let highest = view::settings(live);
    let held = highest.as_ref().map(|c| c.settings.as_bytes());
    let (map, text) = change_settings(&mut contents, held, changes)?;
    let config = Config {
        // Saturating: a peer may announce any version, u64::MAX too.
        version: highest
            .map_or(0, |c| c.version.saturating_add(1))
            .max(now_ms()),
        writer: format!("{:?}", node.id()),
        settings: text,
    };
    node.set(CONFIG, &config.to_text()).await;
    Ok((map, config))
}
