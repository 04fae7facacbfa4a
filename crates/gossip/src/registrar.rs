//! A member announcing itself: a chitchat node whose id is its name, with
//! its entry under `member`, alive while it gossips.
//!
//! How it works. `register` starts the node and, before announcing
//! anything, waits for a view ([`crate::view::settle`]: a peer heard and
//! 5 quiet rounds, at most the ttl), to see whether a live member already
//! announces the name: then it is refused with `NameTaken` naming that
//! member's address. This is best effort: gossip has no store to make a
//! claim exclusive, so two processes starting with one name within the
//! same few rounds may both announce it; every client then gives the name
//! to the older (lower generation) one, alike, and the other stays out of
//! every ring. With no seed (the first member) it announces at once.
//!
//! A member the settings in the view cannot build (a weight whose points
//! alone pass the ring's budget) is refused then too, before anything is
//! announced: every client would leave it out.
//!
//! Then a background task re-announces the highest settings any live
//! node announces (the settings live on in the members after the writer
//! left), on every change of the view.
//!
//! Leaving: `shutdown` sets `left`, gossips 3 more rounds (the entry
//! spreads epidemically: each round every node tells 3 others, and peers
//! relay it after this node has gone) and stops; clients drop it as soon
//! as `left` reaches them. Dropping the registrar, or SIGKILL, stops the
//! gossip: the failure detector declares the node dead within the ttl.
//!
//! Cost: the node's gossip (see [`crate::node`]); one settings check per
//! view change.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use ringwise_membership::{Member, Task, check_member, check_name, read_settings};

use crate::Error;
use crate::gossip::Gossip;
use crate::node::{Node, Role};
use crate::view::{self, CONFIG, LEFT, MEMBER};

/// A registered member. Dropping it stops its gossip (it leaves within
/// the ttl); [`Registrar::shutdown`] leaves at once.
#[derive(Debug)]
pub struct Registrar {
    node: Arc<Node>,
    name: String,
    registered: Arc<AtomicBool>,
    task: Task,
}

impl Registrar {
    /// Registers `name` with `member` in the cluster of `gossip`.
    pub async fn register(gossip: &Gossip, name: &str, member: Member) -> Result<Self, Error> {
        check_name(name)?;
        let (node, live, heard, _) = view::join(gossip, Role::Member(name.to_owned())).await?;
        if !heard {
            tracing::warn!(
                "gossip: no seed of {} answered; {name} announces itself alone (peers find it \
                 when they gossip with it)",
                gossip.seeds.join(",")
            );
        }
        let holder =
            view::rival(&live.borrow(), node.id()).map(|id| id.gossip_advertise_addr.to_string());
        if let Some(holder) = holder {
            node.shutdown().await;
            return Err(Error::NameTaken {
                name: name.to_owned(),
                holder,
            });
        }
        // A member the settings cannot build (a weight whose points pass
        // the budget) would only be left out by every client: refused
        // before it is announced, as `join` does on etcd and ZooKeeper.
        let checked = check_settings(gossip, &live.borrow(), name, &member);
        if let Err(e) = checked {
            node.shutdown().await;
            return Err(e);
        }
        node.set(MEMBER, &member.to_json()).await;
        tracing::info!(name, address = %node.id().gossip_advertise_addr, "gossip member announced");
        let node = Arc::new(node);
        let registered = Arc::new(AtomicBool::new(true));
        let task = {
            let node = Arc::clone(&node);
            let registered = Arc::clone(&registered);
            Task::spawn(|stop| reannounce(node, registered, live, stop))
        };
        Ok(Registrar {
            node,
            name: name.to_owned(),
            registered,
            task,
        })
    }

    /// Whether the entry is announced (until shutdown).
    pub fn is_registered(&self) -> bool {
        self.registered.load(Ordering::Acquire)
    }

    /// The address peers gossip with this member at.
    pub fn address(&self) -> std::net::SocketAddr {
        self.node.id().gossip_advertise_addr
    }

    /// The member's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `gossip node NAME at ADDR (generation G)`, for `join`'s first line.
    pub fn describe(&self) -> String {
        let id = self.node.id();
        format!(
            "gossip node {} at {} (generation {})",
            self.name, id.gossip_advertise_addr, id.generation_id
        )
    }

    /// Leaves at once: announces `left`, gossips 3 more rounds, stops.
    pub async fn shutdown(mut self) {
        self.task.stop().await;
        self.registered.store(false, Ordering::Release);
        self.node.set(LEFT, "1").await;
        self.node.rounds(3).await;
        tracing::info!(name = %self.name, "gossip member left");
        if let Ok(node) = Arc::try_unwrap(self.node) {
            node.shutdown().await;
        }
    }
}

/// Re-announces the highest settings of the view, on every change; and
/// notices an older member announcing the same name (two claims within
/// the same rounds): this one is then out of every ring, and says so
/// through `is_registered`.
async fn reannounce(
    node: Arc<Node>,
    registered: Arc<AtomicBool>,
    mut live: tokio::sync::watch::Receiver<view::Live>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    loop {
        let (highest, older) = {
            let view = live.borrow_and_update();
            let older = view::rival(&view, node.id()).map(|id| id.gossip_advertise_addr);
            (view::settings(&view), older)
        };
        let holds = older.is_none();
        if registered.swap(holds, Ordering::AcqRel) && !holds {
            tracing::error!(
                "gossip: the member at {} announced {:?} before this one: it holds the name, \
                 this member is in no ring; stop one of them",
                older.map(|a| a.to_string()).unwrap_or_default(),
                &*node.id().node_id
            );
        }
        if let Some(highest) = highest {
            let text = highest.to_text();
            let own = node.get(CONFIG).await;
            let own = own
                .as_deref()
                .and_then(|t| serde_json::from_str::<view::Config>(t).ok());
            if own.as_ref() < Some(&highest) {
                node.set(CONFIG, &text).await;
            }
        }
        tokio::select! {
            changed = live.changed() => if changed.is_err() { return },
            _ = stop.changed() => return,
        }
    }
}

/// [`check_member`] under the settings `live` holds (the defaults when it
/// holds none; no check when they cannot be read: that is the config's
/// fault, which every client reports).
fn check_settings(
    gossip: &Gossip,
    live: &view::Live,
    name: &str,
    member: &Member,
) -> Result<(), Error> {
    let config = view::settings(live);
    let key = ringwise_membership::member::config_key(&gossip.prefix());
    let Ok(settings) = read_settings(&key, config.as_ref().map(|c| c.settings.as_bytes())) else {
        return Ok(());
    };
    Ok(check_member(&settings, name, member)?)
}
