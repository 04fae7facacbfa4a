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
//! Lookups read the last published snapshot (lock-free, [`Live::load`]):
//! they never wait for etcd and keep working while it is unreachable;
//! [`Watcher::status`] says how stale the ring is.
//!
//! A bad member value is left out of the ring with a logged error; a bad
//! config keeps the ring already held (see [`crate::member`]).
//!
//! Cost: one list per start (O(N) members), then per change one rebuild of
//! the placement (the algorithm's build cost) and O(N) for the members;
//! one progress request per `progress_every`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use etcd_client::{EventType, WatchOptions as EtcdWatchOptions, WatchResponse};
use ringwise::{Live, Snapshot};
use tokio::sync::{Semaphore, watch};

use crate::Error;
use crate::backoff::backoff;
use crate::cluster::Cluster;
use crate::connect::{Connection, Link, bounded};
use crate::error::classify;
use crate::member::Contents;
use crate::store::list_anywhere;
use crate::task::Task;

/// How a [`Watcher`] follows etcd.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Options {
    /// How often to ask for a progress notification (default 1 s): the
    /// resolution of staleness, and how soon a silent dead connection is
    /// noticed (after three unanswered requests).
    pub progress_every: Duration,
    /// The longest pause between two attempts to list again (default 1 s;
    /// the first retries are 50 ms, 100 ms, ... with jitter).
    pub max_backoff: Duration,
    /// Test hook: when set, the watcher takes a permit from it after each
    /// list and before it starts watching, so a test can hold it there
    /// (while it compacts etcd, say).
    #[doc(hidden)]
    pub before_watch: Option<Arc<Semaphore>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            progress_every: Duration::from_secs(1),
            max_backoff: Duration::from_secs(1),
            before_watch: None,
        }
    }
}

/// Where a watcher is.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Status {
    /// The etcd revision of the published ring (confirmed current then).
    pub revision: u64,
    /// Time since etcd last confirmed that revision (an event or a
    /// progress notification).
    pub staleness: Duration,
    /// Events ignored because their revision was already applied.
    pub ignored: u64,
    /// Lists after the first one (each recovery starts with one).
    pub relists: u64,
    /// Watches that ended because their start revision was compacted.
    pub compactions: u64,
    /// The last error met, if the last attempt failed.
    pub last_error: Option<String>,
    /// Why the ring held is not the one etcd's contents describe now: the
    /// config refused (see [`crate::member`]); `None` once a ring is built
    /// from them again.
    pub held: Option<String>,
}

/// A running watcher. Dropping it stops the background task.
#[derive(Debug)]
pub struct Watcher {
    shared: Arc<Shared>,
    task: Task,
}

#[derive(Debug)]
struct Shared {
    connection: Connection,
    prefix: String,
    options: Options,
    live: Live<Arc<Cluster>>,
    started: Instant,
    /// Milliseconds since `started` of the last confirmation.
    confirmed_ms: AtomicU64,
    ignored: AtomicU64,
    relists: AtomicU64,
    compactions: AtomicU64,
    last_error: Mutex<Option<String>>,
    /// Why the ring held is not built from etcd's contents (a bad config).
    held: Mutex<Option<String>>,
    /// Bumped on every publish of a different ring (not on confirmations).
    changed: watch::Sender<u64>,
}

impl Watcher {
    /// Lists `prefix`, publishes the first ring and follows changes in the
    /// background. Fails if the first list does not succeed (etcd
    /// unreachable, a bad config): a watcher never starts empty-handed.
    pub async fn start(
        connection: &Connection,
        prefix: &str,
        options: Options,
    ) -> Result<Self, Error> {
        if options.progress_every.is_zero() || options.max_backoff.is_zero() {
            return Err(Error::InvalidOption {
                option: "watch options",
                message: "progress_every and max_backoff must be above zero".into(),
            });
        }
        let prefix = format!("{}/", prefix.trim_end_matches('/'));
        let mut link = None;
        let (contents, revision) = list_anywhere(connection, &prefix, &mut link).await?;
        let cluster = Cluster::from_contents(&mut contents.clone())?;
        let (changed, _) = watch::channel(0);
        let shared = Arc::new(Shared {
            connection: connection.clone(),
            prefix,
            options,
            live: Live::at_revision(Arc::new(cluster), revision as u64),
            started: Instant::now(),
            confirmed_ms: AtomicU64::new(0),
            ignored: AtomicU64::new(0),
            relists: AtomicU64::new(0),
            compactions: AtomicU64::new(0),
            last_error: Mutex::new(None),
            held: Mutex::new(None),
            changed,
        });
        let task = Task::spawn(|stop| Arc::clone(&shared).run(link, contents, revision, stop));
        Ok(Watcher { shared, task })
    }

    /// The current ring and its revision: lock-free, never waits for etcd.
    pub fn load(&self) -> Arc<Snapshot<Arc<Cluster>>> {
        self.shared.live.load()
    }

    /// A receiver that wakes on every new ring (not on confirmations of
    /// the same ring); its value is the count of rings published.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.shared.changed.subscribe()
    }

    /// Revision, staleness and counters.
    pub fn status(&self) -> Status {
        let shared = &self.shared;
        let confirmed = Duration::from_millis(shared.confirmed_ms.load(Ordering::Acquire));
        Status {
            revision: shared.live.load().revision,
            staleness: shared.started.elapsed().saturating_sub(confirmed),
            ignored: shared.ignored.load(Ordering::Relaxed),
            relists: shared.relists.load(Ordering::Relaxed),
            compactions: shared.compactions.load(Ordering::Relaxed),
            last_error: shared.last_error.lock().map(|e| e.clone()).unwrap_or(None),
            held: shared.held.lock().map(|e| e.clone()).unwrap_or(None),
        }
    }

    /// Stops following etcd; the last ring stays readable through any
    /// snapshot already loaded.
    pub async fn shutdown(mut self) {
        self.task.stop().await;
    }
}

/// Why a watch ended.
enum Ended {
    Compacted(i64),
    Canceled(String),
    Closed,
    Silent,
}

impl Shared {
    async fn run(
        self: Arc<Self>,
        mut link: Option<Link>,
        mut contents: Contents,
        mut applied: i64,
        mut stop: watch::Receiver<bool>,
    ) {
        self.confirm();
        let mut failures = 0u32;
        loop {
            let followed = tokio::select! {
                followed = self.follow(&mut link, &mut contents, &mut applied) => followed,
                _ = stop.changed() => return,
            };
            let compacted = matches!(followed, Ok(Ended::Compacted(_)));
            let reason = match followed {
                Ok(Ended::Compacted(at)) => {
                    self.compactions.fetch_add(1, Ordering::Relaxed);
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
            self.note_error(Some(reason));
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
                    _ = tokio::time::sleep(backoff(failures, self.options.max_backoff)) => {}
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
                        let relists = self.relists.fetch_add(1, Ordering::Relaxed) + 1;
                        tracing::info!(prefix = %self.prefix, revision, relists, "listed again");
                        // Before the rebuild, which records a bad config.
                        self.note_error(None);
                        self.rebuild(&mut contents, revision);
                        self.confirm();
                        failures = 0;
                        break;
                    }
                    Err(e) => {
                        tracing::warn!("cannot list {} again: {e}", self.prefix);
                        self.note_error(Some(e.to_string()));
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
        if let Some(gate) = &self.options.before_watch {
            let permit = gate.acquire().await;
            permit.map(|p| p.forget()).ok();
        }
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
        let every = self.options.progress_every;
        let silent_after = every * 3 + timeout;
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        loop {
            tokio::select! {
                _ = tick.tick() => {
                    if self.staleness() > silent_after {
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

    /// Applies one watch response as a unit (see [`apply_changes`]).
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
        let outcome = apply_changes(contents, &changes, header, applied);
        self.ignored.fetch_add(outcome.ignored, Ordering::Relaxed);
        match outcome.publish {
            Some(revision) if outcome.changed => self.rebuild(contents, revision),
            Some(revision) => {
                let current = self.live.load();
                self.live
                    .publish(revision as u64, Arc::clone(&current.placement));
            }
            None => {}
        }
        self.confirm();
    }

    /// Rebuilds the cluster and publishes it at `revision`; a bad config
    /// keeps the ring held (republished at the new revision).
    fn rebuild(&self, contents: &mut Contents, revision: i64) {
        let current = self.live.load();
        let built = Cluster::from_contents(contents);
        if let Ok(mut held) = self.held.lock() {
            *held = built.as_ref().err().map(ToString::to_string);
        }
        let next = match built {
            Ok(next) if next.same_as(&current.placement) => Arc::clone(&current.placement),
            Ok(next) => Arc::new(next),
            Err(e) => {
                tracing::error!(
                    "config under {} refused, keeping the ring held: {e}",
                    self.prefix
                );
                self.note_error(Some(e.to_string()));
                Arc::clone(&current.placement)
            }
        };
        let new_ring = !Arc::ptr_eq(&next, &current.placement);
        if self.live.publish(revision as u64, next).is_some() && new_ring {
            self.changed.send_modify(|n| *n += 1);
        }
    }

    fn confirm(&self) {
        let now = self.started.elapsed().as_millis() as u64;
        self.confirmed_ms.store(now, Ordering::Release);
    }

    fn staleness(&self) -> Duration {
        let confirmed = Duration::from_millis(self.confirmed_ms.load(Ordering::Acquire));
        self.started.elapsed().saturating_sub(confirmed)
    }

    fn note_error(&self, error: Option<String>) {
        if let Ok(mut last) = self.last_error.lock() {
            *last = error;
        }
    }
}

/// One event of a watch response: a put (`value`) or a delete (`None`)
/// of `key` at `revision`.
#[derive(Debug, Clone)]
struct Change<'a> {
    key: std::borrow::Cow<'a, str>,
    value: Option<&'a [u8]>,
    created: i64,
    revision: i64,
}

/// What one watch response did to the contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Outcome {
    /// Whether any event was applied (the ring must be rebuilt).
    changed: bool,
    /// Events at or below the revision already applied: replays, left out.
    ignored: u64,
    /// The one revision to publish the response at, if it moves the
    /// watcher forward.
    publish: Option<i64>,
}

/// Applies the `changes` of one watch response (header revision `header`)
/// to `contents` as one unit: every change above `*applied` is applied,
/// every change at or below it is ignored and counted. The response is
/// published once, at its last event's revision (a delayed response's
/// header may run ahead of events still to come), or at `header` for a
/// progress notification (no event: "nothing of yours changed up to
/// here"); `*applied` moves there. Nothing is published for a response
/// that does not move the watcher forward.
///
/// Example: applied 10, events put a@9, put b@11, delete c@12, header 15:
/// a is ignored (1), b and c change, published once at 12, applied 12.
fn apply_changes(
    contents: &mut Contents,
    changes: &[Change<'_>],
    header: i64,
    applied: &mut i64,
) -> Outcome {
    let mut outcome = Outcome {
        changed: false,
        ignored: 0,
        publish: None,
    };
    for change in changes {
        if change.revision <= *applied {
            outcome.ignored += 1;
            continue;
        }
        match change.value {
            Some(value) => contents.put(&change.key, value, change.created, change.revision),
            None => contents.delete(&change.key),
        }
        outcome.changed = true;
    }
    let confirmed = changes.iter().map(|c| c.revision).max().unwrap_or(header);
    if outcome.changed || confirmed > *applied {
        *applied = (*applied).max(confirmed);
        outcome.publish = Some(confirmed);
    }
    outcome
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

#[cfg(test)]
mod tests {
    use super::*;

    const PREFIX: &str = "/p/";

    fn put(name: &'static str, value: &'static str, revision: i64) -> Change<'static> {
        Change {
            key: format!("/p/nodes/{name}").into(),
            value: Some(value.as_bytes()),
            created: revision,
            revision,
        }
    }

    fn delete(name: &'static str, revision: i64) -> Change<'static> {
        Change {
            value: None,
            ..put(name, "", revision)
        }
    }

    /// The members' names and weights.
    fn members(contents: &Contents) -> Vec<(String, Option<f64>)> {
        contents
            .members()
            .iter()
            .map(|m| (m.name.clone(), m.member.weight))
            .collect()
    }

    /// a (weight 1) and c, applied up to revision 10.
    fn held() -> (Contents, i64) {
        let mut contents = Contents::new(PREFIX);
        contents.put("/p/nodes/a", br#"{"weight": 1}"#, 3, 3);
        contents.put("/p/nodes/c", b"{}", 4, 4);
        (contents, 10)
    }

    #[test]
    fn events_at_or_below_the_applied_revision_are_ignored_and_counted() {
        let (mut contents, mut applied) = held();
        // A replay of a at 9 and of a at 10 (the applied revision itself),
        // then two new events: b joins at 11, c leaves at 12.
        let changes = [
            put("a", r#"{"weight": 5}"#, 9),
            put("a", r#"{"weight": 7}"#, 10),
            put("b", "{}", 11),
            delete("c", 12),
        ];
        let outcome = apply_changes(&mut contents, &changes, 15, &mut applied);
        assert_eq!(
            outcome,
            Outcome {
                changed: true,
                ignored: 2,
                publish: Some(12)
            }
        );
        assert_eq!(applied, 12);
        assert_eq!(
            members(&contents),
            [("a".into(), Some(1.0)), ("b".into(), None)],
            "the replays left a's weight alone"
        );
    }

    #[test]
    fn a_response_of_replays_only_changes_and_publishes_nothing() {
        let (mut contents, mut applied) = held();
        let before = members(&contents);
        let changes = [put("a", r#"{"weight": 5}"#, 8), delete("c", 10)];
        let outcome = apply_changes(&mut contents, &changes, 10, &mut applied);
        assert_eq!(
            outcome,
            Outcome {
                changed: false,
                ignored: 2,
                publish: None
            }
        );
        assert_eq!((applied, members(&contents)), (10, before));
    }

    #[test]
    fn a_response_is_one_unit_published_at_its_last_event() {
        let (mut contents, mut applied) = held();
        // Three revisions in one response, its header ahead of them: one
        // publish, at the last event (13), never at 11 or 12 or the header.
        let changes = [put("b", "{}", 11), put("d", "{}", 12), delete("a", 13)];
        let outcome = apply_changes(&mut contents, &changes, 20, &mut applied);
        assert_eq!(
            outcome,
            Outcome {
                changed: true,
                ignored: 0,
                publish: Some(13)
            }
        );
        assert_eq!(applied, 13);
        let names: Vec<String> = members(&contents).into_iter().map(|m| m.0).collect();
        assert_eq!(names, ["c", "b", "d"], "join order: creation revision");
    }

    #[test]
    fn a_progress_notification_confirms_its_header_revision() {
        let (mut contents, mut applied) = held();
        let outcome = apply_changes(&mut contents, &[], 20, &mut applied);
        assert_eq!(
            outcome,
            Outcome {
                changed: false,
                ignored: 0,
                publish: Some(20)
            }
        );
        assert_eq!(applied, 20);
        // An older notification (delayed) does not move it back.
        let outcome = apply_changes(&mut contents, &[], 18, &mut applied);
        assert_eq!((outcome.publish, applied), (None, 20));
    }
}
