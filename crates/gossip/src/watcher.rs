//! A client following the ring through its own gossip view.
//!
//! How it works. The watcher is an observer node (it announces no member
//! entry). It waits for a first view ([`crate::view::settle`]), builds
//! the [`Cluster`] and publishes it at version 1; then every change of
//! chitchat's live nodes (a node live or dead, a state announcing
//! something new: a member, a `left`, settings) is one view: the contents
//! are read again from it and the ring rebuilt and published at the next
//! version. The version is a local count of the views applied: gossip has
//! no shared revision, so two watchers compare their rings by
//! fingerprint, never by version; when no member joins or leaves for a
//! few rounds their views agree and so do the fingerprints (eventual
//! agreement, measured by the bench).
//!
//! Publishing, the held ring on a bad config and the counters are the
//! shared [`Feed`]'s. A view without any live peer (every one of them
//! silent) is not confirmed: staleness then grows from the last change or
//! the last round a peer was live. Nothing to relist: the view is whole
//! at every change (`relists` stays 0).
//!
//! Cost: per view one read of the live states (O(N)) and one build of
//! the ring; the node's gossip.

use std::sync::Arc;

use ringwise_membership::{Cluster, Feed, Options, Watcher};
use tokio::sync::watch;

use crate::Error;
use crate::gossip::Gossip;
use crate::node::{Node, Role};
use crate::view;

/// Joins as an observer, publishes the first ring and follows the view
/// in the background. Fails when the node cannot start, or the first view
/// holds a bad config; seeds that do not answer are not an error (the
/// ring starts empty and fills when they come).
pub async fn watch(gossip: &Gossip, options: Options) -> Result<Watcher, Error> {
    options.check()?;
    let (node, mut live, heard, _) = view::join(gossip, Role::Observer).await?;
    if !heard {
        tracing::warn!(
            "gossip: no seed of {} answered yet; the ring starts empty",
            gossip.seeds.join(",")
        );
    }
    let prefix = gossip.prefix();
    let mut contents = view::contents(&prefix, &live.borrow_and_update());
    let cluster = Cluster::from_contents(&mut contents)?;
    let name = format!(
        "gossip {} (cluster {})",
        node.id().gossip_advertise_addr,
        gossip.cluster
    );
    let feed = Feed::new(name, options, cluster, 1);
    Ok(Watcher::spawn(feed, move |feed, stop| {
        follow(node, live, prefix, feed, stop)
    }))
}

/// The follow loop: one rebuild per view, a confirmation per
/// `progress_every` while a peer is live.
async fn follow(
    node: Node,
    mut live: watch::Receiver<view::Live>,
    prefix: String,
    feed: Arc<Feed>,
    mut stop: watch::Receiver<bool>,
) {
    let mut views = 1u64;
    let every = feed.options().progress_every;
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    loop {
        tokio::select! {
            changed = live.changed() => {
                if changed.is_err() {
                    feed.note_error(Some("the gossip node stopped".into()));
                    break;
                }
                views += 1;
                let mut contents = view::contents(&prefix, &live.borrow_and_update());
                feed.rebuild(&mut contents, views);
                feed.confirm();
            }
            _ = tick.tick() => {
                if live.borrow().len() > 1 || node.seeds.is_empty() {
                    feed.confirm();
                }
            }
            _ = stop.changed() => break,
        }
    }
    node.shutdown().await;
}
