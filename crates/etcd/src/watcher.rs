//! A client following the ring: list, build, publish, watch, repeat.
//!
//! How it works (the pattern of Kubernetes' reflector and etcd's own
//! clients):
//!
//! 1. **List.** A linearizable range read of `PREFIX/` returns every member
//!    and the config as of revision R (the response header's). The watcher
//!    builds the [`Cluster`] and publishes it in its [`Live`] holder at R.
//! 2. **Watch from R + 1.** Each watch response is applied as one unit: its
//!    puts and deletes change the contents, the cluster is rebuilt once and
//!    published at the response's revision. An event at or below the
//!    revision already applied (a replay) is ignored and counted.
//! 3. **Confirm.** Every `progress_every` the watcher asks etcd for a
//!    progress notification: an empty response whose revision says "nothing
//!    of yours changed up to here". The same ring is republished at that
//!    revision (readers see the revision advance, nothing is rebuilt), and
//!    staleness restarts from zero. So at quiescence every watcher reports
//!    etcd's current revision and the same fingerprint.
//! 4. **Start over.** On compaction (the watch's start revision is gone),
//!    cancellation, an error, a closed stream, or no confirmation for
//!    `3 × progress_every + timeout` (a dead connection that never says
//!    so), it backs off with jitter and goes back to 1. It never resumes
//!    from the compact revision: events between were lost, only a fresh
//!    list is complete.
//!
//! Publishing, the counters and the held ring on a bad config are the
//! shared [`Feed`]'s (`ringwise-membership`): this file is only what etcd
//! says and how it is asked. Lookups read the last published snapshot
//! (lock-free): they never wait for etcd and keep working while it is
//! unreachable; [`Watcher::status`] says how stale the ring is.
//!
//! A bad member value is left out of the ring with a logged error; a bad
//! config keeps the ring already held (see [`crate::member`]).
//!
//! Cost: one list per start (O(N) members), then per change one rebuild of
//! the placement (the algorithm's build cost) and O(N) for the members;
//! one progress request per `progress_every`.

use std::sync::Arc;

use etcd_client::{EventType, WatchOptions as EtcdWatchOptions, WatchResponse};
use ringwise_membership::{Change, Cluster, Feed, Options, Watcher};
use tokio::sync::watch;

use crate::Error;
use crate::connect::{Connection, Link, bounded};
use crate::error::classify;
use crate::store::list_anywhere;
use ringwise_membership::Contents;
use ringwise_membership::backoff::backoff;

/// Lists `prefix`, publishes the first ring and follows changes in the
/// background. Fails if the first list does not succeed (etcd
/// unreachable, a bad config): a watcher never starts empty-handed.
pub async fn watch(
    connection: &Connection,
    prefix: &str,
    options: Options,
) -> Result<Watcher, Error> {
    options.check()?;
    let prefix = format!("{}/", prefix.trim_end_matches('/'));
    let mut link = None;
    let (contents, revision) = list_anywhere(connection, &prefix, &mut link).await?;
    let cluster = Cluster::from_contents(&mut contents.clone())?;
    let feed = Feed::new(format!("etcd {prefix}"), options, cluster, revision as u64);
    let follow = Arc::new(Follow {
        connection: connection.clone(),
        prefix,
        feed: Arc::clone(&feed),
    });
    Ok(Watcher::spawn(feed, |_, stop| {
        follow.run(link, contents, revision, stop)
    }))
}

/// Why a watch ended.
enum Ended {
    Compacted(i64),
    Canceled(String),
    Closed,
    Silent,
}

/// The follow loop of one watcher.
#[derive(Debug)]
struct Follow {
    connection: Connection,
    prefix: String,
    feed: Arc<Feed>,
}

impl Follow {
    async fn run(
        self: Arc<Self>,
        mut link: Option<Link>,
        mut contents: Contents,
        mut applied: i64,
        mut stop: watch::Receiver<bool>,
    ) {
        let mut failures = 0u32;
        loop {
            let followed = tokio::select! {
                followed = self.follow(&mut link, &mut contents, &mut applied) => followed,
                _ = stop.changed() => return,
            };
            let compacted = matches!(followed, Ok(Ended::Compacted(_)));
            let reason = match followed {
                Ok(Ended::Compacted(at)) => {
                    self.feed.compacted();
                    format!(
                        "revision {} was compacted (now {at}); listing again",
                        applied + 1
                    )
                }
                Ok(Ended::Canceled(why)) => {
                    format!("etcd canceled the watch ({why}); listing again")
                }
                Ok(Ended::Closed) => "the watch stream closed; listing again".into(),
                Ok(Ended::Silent) => "no progress notification; listing again".into(),
                Err(e) => format!("{e}; listing again"),
            };
            tracing::warn!("watch of {} ended: {reason}", self.prefix);
            self.feed.note_error(Some(reason));
            if !compacted {
                // The endpoint may be the cause (dead, cut off, without a
                // leader): list and watch again through the next one. A
                // retry that gave up has moved on already; this is then a
                // no-op.
                self.connection.abandon(&mut link);
            }
            // List again until it works.
            loop {
                failures += 1;
                tokio::select! {
                    _ = tokio::time::sleep(backoff(failures, self.feed.options().max_backoff)) => {}
                    _ = stop.changed() => return,
                }
                let listed = tokio::select! {
                    listed = list_anywhere(&self.connection, &self.prefix, &mut link) => listed,
                    _ = stop.changed() => return,
                };
                match listed {
                    Ok((fresh_contents, revision)) => {
                        contents = fresh_contents;
                        applied = revision;
                        self.feed.relisted(&mut contents, revision as u64);
                        failures = 0;
                        break;
                    }
                    Err(e) => {
                        tracing::warn!("cannot list {} again: {e}", self.prefix);
                        self.feed.note_error(Some(e.to_string()));
                    }
                }
            }
        }
    }

    /// Watches from `applied + 1` until the watch ends; the watch opens
    /// through any endpoint that answers.
    async fn follow(
        &self,
        link: &mut Option<Link>,
        contents: &mut Contents,
        applied: &mut i64,
    ) -> Result<Ended, Error> {
        self.feed.gate().await;
        let timeout = self.connection.timeout;
        let options = EtcdWatchOptions::new()
            .with_prefix()
            .with_start_revision(*applied + 1)
            .with_progress_notify();
        let prefix = &self.prefix;
        let options = &options;
        let mut stream = self
            .connection
            .retry("watch", link, |mut client| async move {
                let open = client.watch(prefix.clone(), Some(options.clone()));
                bounded("watch", timeout, open).await
            })
            .await?;
        // The first answer says whether the watch exists. Progress is
        // asked for only after it: a progress notification is a promise
        // about a watch that is synced, and one that arrived before the
        // watch was refused as compacted would claim a revision whose
        // events were never seen.
        let link = &*link;
        let here = |e| self.connection.locate(link, e);
        let first = bounded("create the watch", timeout, stream.message())
            .await
            .map_err(here)?;
        let Some(first) = first else {
            return Ok(Ended::Closed);
        };
        if let Some(ended) = refused(&first) {
            return Ok(ended);
        }
        self.apply(&first, contents, applied);
        let every = self.feed.options().progress_every;
        let silent_after = every * 3 + timeout;
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        loop {
            tokio::select! {
                _ = tick.tick() => {
                    if self.feed.staleness() > silent_after {
                        return Ok(Ended::Silent);
                    }
                    bounded("request progress", timeout, stream.request_progress())
                        .await
                        .map_err(here)?;
                }
                message = stream.message() => {
                    let message = message.map_err(|e| here(classify("watch", timeout, e)));
                    let Some(response) = message? else {
                        return Ok(Ended::Closed);
                    };
                    if let Some(ended) = refused(&response) {
                        return Ok(ended);
                    }
                    self.apply(&response, contents, applied);
                }
            }
        }
    }

    /// Applies one watch response as a unit (see [`ringwise_membership::apply_changes`]).
    fn apply(&self, response: &WatchResponse, contents: &mut Contents, applied: &mut i64) {
        if response.created() {
            return;
        }
        let header = response.header().map_or(0, |h| h.revision());
        let changes: Vec<Change<'_>> = response
            .events()
            .iter()
            .filter_map(|event| {
                let kv = event.kv()?;
                Some(Change {
                    key: String::from_utf8_lossy(kv.key()),
                    value: match event.event_type() {
                        EventType::Put => Some(kv.value()),
                        EventType::Delete => None,
                    },
                    created: kv.create_revision(),
                    revision: kv.mod_revision(),
                })
            })
            .collect();
        self.feed.apply(contents, &changes, header, applied);
    }
}

/// Why etcd ended a watch, if this response ends it.
fn refused(response: &WatchResponse) -> Option<Ended> {
    if response.compact_revision() > 0 {
        return Some(Ended::Compacted(response.compact_revision()));
    }
    if response.canceled() {
        return Some(Ended::Canceled(response.cancel_reason().to_owned()));
    }
    None
}
