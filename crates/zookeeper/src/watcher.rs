//! A client following the ring: list, publish, watch, list again.
//!
//! How it works:
//!
//! 1. **List.** A consistent snapshot of the prefix ([`crate::store`]) at
//!    version Z, the highest zxid it reflects; the ring is built and
//!    published at Z.
//! 2. **Watch.** One persistent recursive watch on the prefix (`addWatch
//!    PERSISTENT_RECURSIVE`, ZooKeeper 3.6+) reports every znode created,
//!    deleted or changed below it, without being set again. Watch events
//!    carry no zxid in ZooKeeper 3.8, so an event is only a cue: the
//!    watcher takes every event already queued (a burst is one batch),
//!    lists again and publishes the snapshot at its own zxid. Every
//!    publication is a snapshot, so two watchers at one zxid hold one ring.
//! 3. **Confirm.** Every `progress_every`: `sync` and one small read of the
//!    prefix's stats. ZooKeeper delivers a watch event before the answer
//!    of any read issued after the change, so an answer with nothing
//!    queued says the ring is current: staleness restarts. A version
//!    above the one held (an event lost) lists again.
//! 4. **Start over.** After a disconnection the client reconnects by
//!    itself and the watch is set again, but events in between can be lost
//!    (ZOOKEEPER-4698): the watcher lists again once reconnected. An
//!    expired or closed session, or no confirmation for `3 ×
//!    progress_every + session timeout`, opens a new session after a
//!    jittered back-off and starts at 1.
//!
//! Lookups read the last published ring (lock-free) and keep working
//! while ZooKeeper is away; [`Watcher::status`] says how stale it is.
//!
//! Cost: one list per batch of events (O(N) members in multiReads of at
//! most 512 KiB of requests: a full re-read, simple and consistent, see
//! src/snapshot.rs), then the rebuild every source pays. At 10,000 members the re-read is the small part (about
//! 20 ms of a 370 ms change on a loaded 2-core machine; the rest is the
//! ring's build: benches/scale.rs). One small read per `progress_every`.

use ringwise_membership::backoff::backoff;
use ringwise_membership::{Cluster, Contents, Feed, Options, Watcher};
use std::sync::Arc;
use tokio::sync::watch;
use zookeeper_client as zk;

use crate::error::Error;
use crate::session::{Session, Settings};
use crate::snapshot::{list, stamp};

/// Lists `prefix`, publishes the first ring and follows changes in the
/// background. Fails if the first list does not succeed.
pub(crate) async fn watch(
    settings: &Settings,
    prefix: &str,
    options: Options,
) -> Result<Watcher, Error> {
    options.check()?;
    let session = Session::start(settings, prefix).await?;
    let (mut contents, version) = list(&session.client, settings, prefix, Vec::new()).await?;
    let cluster = Cluster::from_contents(&mut contents)?;
    let feed = Feed::new(
        format!("zookeeper {}{prefix}", settings.hosts),
        options,
        cluster,
        version.max(0) as u64,
    );
    let follow = Follow {
        settings: settings.clone(),
        prefix: prefix.to_owned(),
        feed: Arc::clone(&feed),
    };
    Ok(Watcher::spawn(feed, |_, stop| {
        follow.run(session, contents, version, stop)
    }))
}

/// Why following one session ended.
enum Ended {
    Expired(zk::SessionState),
    Silent,
    Failed(Error),
}

/// The follow loop of one watcher.
struct Follow {
    settings: Settings,
    prefix: String,
    feed: Arc<Feed>,
}

impl Follow {
    async fn run(
        self,
        session: Session,
        mut contents: Contents,
        mut applied: i64,
        mut stop: watch::Receiver<bool>,
    ) {
        let mut session = Some(session);
        let mut failures = 0u32;
        loop {
            if let Some(mut held) = session.take() {
                let ended = tokio::select! {
                    ended = self.follow(&mut held, &mut contents, &mut applied) => ended,
                    _ = stop.changed() => return,
                };
                let reason = match ended {
                    Ended::Expired(state) => format!("the session ended ({state})"),
                    Ended::Silent => "no confirmation from ZooKeeper".into(),
                    Ended::Failed(e) => e.to_string(),
                };
                tracing::warn!("watch of {} ended: {reason}; new session", self.feed.name());
                self.feed.note_error(Some(reason));
            }
            failures += 1;
            tokio::select! {
                _ = tokio::time::sleep(backoff(failures, self.feed.options().max_backoff)) => {}
                _ = stop.changed() => return,
            }
            let started = tokio::select! {
                started = self.restart(&contents) => started,
                _ = stop.changed() => return,
            };
            match started {
                Ok((fresh, listed, version)) => {
                    contents = listed;
                    applied = version;
                    self.feed.relisted(&mut contents, version.max(0) as u64);
                    session = Some(fresh);
                    failures = 0;
                }
                Err(e) => {
                    tracing::warn!("cannot watch {} again: {e}", self.feed.name());
                    self.feed.note_error(Some(e.to_string()));
                }
            }
        }
    }

    /// A new session, watched and listed.
    async fn restart(&self, contents: &Contents) -> Result<(Session, Contents, i64), Error> {
        let session = Session::start(&self.settings, &self.prefix).await?;
        let (listed, version) = self.list(&session.client, contents, Vec::new()).await?;
        Ok((session, listed, version))
    }

    /// A snapshot, guessing the members from those held and `joined`.
    async fn list(
        &self,
        client: &zk::Client,
        held: &Contents,
        joined: Vec<String>,
    ) -> Result<(Contents, i64), Error> {
        let dir = held.nodes_prefix();
        let names = held
            .members()
            .iter()
            .map(|m| m.name.clone())
            .chain(
                held.skipped
                    .keys()
                    .filter_map(|k| k.strip_prefix(&dir).map(str::to_owned)),
            )
            .chain(joined)
            .collect();
        list(client, &self.settings, &self.prefix, names).await
    }

    /// Lists again and publishes at the snapshot's zxid; a `recovery`
    /// (after a reconnection) counts as a relist in [`Watcher::status`].
    /// `joined`: members the events say were created (read at once, not
    /// after a first round trip finds them).
    async fn relist(
        &self,
        client: &zk::Client,
        contents: &mut Contents,
        applied: &mut i64,
        recovery: bool,
        joined: Vec<String>,
    ) -> Result<(), Error> {
        let (mut listed, version) = self.list(client, contents, joined).await?;
        if recovery {
            // Clears the last error, rebuilds and confirms.
            *applied = (*applied).max(version);
            self.feed.relisted(&mut listed, version.max(0) as u64);
            *contents = listed;
            return Ok(());
        }
        // Before the rebuild, which records a refused config.
        self.feed.note_error(None);
        if version > *applied {
            *applied = version;
            self.feed.rebuild(&mut listed, version as u64);
            *contents = listed;
        }
        self.feed.confirm();
        Ok(())
    }

    /// Follows one session until it ends.
    async fn follow(
        &self,
        session: &mut Session,
        contents: &mut Contents,
        applied: &mut i64,
    ) -> Ended {
        self.feed.gate().await;
        let every = self.feed.options().progress_every;
        let silent_after = every * 3 + session.client.session_timeout();
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        let mut disconnected = false;
        loop {
            let event = tokio::select! {
                event = session.events.recv() => event,
                _ = tick.tick() => {
                    if self.feed.staleness() > silent_after {
                        return Ended::Silent;
                    }
                    if disconnected {
                        continue;
                    }
                    let stamp = stamp(&session.client, &self.settings, &self.prefix).await;
                    match stamp.map(|seen| seen <= *applied) {
                        Ok(true) => self.feed.confirm(),
                        Ok(false) => {
                            let relisted = self.relist(&session.client, contents, applied, false, Vec::new());
                            if let Err(e) = relisted.await {
                                self.feed.note_error(Some(e.to_string()));
                            }
                        }
                        Err(e) => self.feed.note_error(Some(e.to_string())),
                    }
                    continue;
                }
            };
            // One batch: this event and every one queued behind it.
            let mut batch = vec![event];
            while let Ok(more) = session.events.try_recv() {
                batch.push(Some(more));
            }
            let (mut changed, mut recovered, mut joined) = (false, false, Vec::new());
            for event in batch {
                let Some(event) = event else {
                    return Ended::Expired(zk::SessionState::Closed);
                };
                if event.event_type != zk::EventType::Session {
                    changed = true;
                    if event.event_type == zk::EventType::NodeCreated {
                        let name = event.path.strip_prefix(&contents.nodes_prefix());
                        joined.extend(name.map(str::to_owned));
                    }
                    continue;
                }
                match event.session_state {
                    state if state.is_terminated() => return Ended::Expired(state),
                    zk::SessionState::Disconnected => {
                        disconnected = true;
                        self.feed
                            .note_error(Some("disconnected from ZooKeeper".into()));
                    }
                    _ => {
                        // Reconnected: events of the gap may be lost.
                        recovered |= disconnected;
                        disconnected = false;
                    }
                }
            }
            if (changed || recovered) && !disconnected {
                let relisted = self.relist(&session.client, contents, applied, recovered, joined);
                if let Err(e) = relisted.await {
                    if !e.is_transient() {
                        return Ended::Failed(e);
                    }
                    // Lost the connection meanwhile: the reconnection's
                    // event lists again.
                    self.feed.note_error(Some(e.to_string()));
                }
            }
        }
    }
}
