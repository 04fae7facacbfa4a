//! [`Watcher`]: a client holding the ring of a membership source, and
//! [`Feed`], what a source's follow loop publishes through.
//!
//! Every source follows the same pattern (Kubernetes' reflector): **list**
//! the members and the config as of a version V (an etcd revision, a
//! ZooKeeper zxid, a gossip view), build the [`Cluster`] and publish it in
//! a [`Live`] holder at V; then **follow** the changes in order, each batch
//! applied as one unit ([`apply_changes`]) and published once; **confirm**
//! the version when the source says nothing changed (the same ring
//! republished, nothing rebuilt, staleness back to zero); and on any loss
//! **start over** with a fresh list after a jittered back-off, never
//! resuming from a point whose events may be lost. The loop is the
//! source's (each source's events differ); the publishing, the counters,
//! the held ring on a bad config and the change notifications are this
//! file's, the same for all.
//!
//! Lookups read the last published snapshot (lock-free, [`Live::load`]):
//! they never wait for the source and keep working while it is away;
//! [`Watcher::status`] says how stale the ring is.
//!
//! Cost: per change one rebuild of the placement (the algorithm's build
//! cost) and O(N) for the members; a confirmation is one atomic store and
//! one publish of the same `Arc`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ringwise::{Live, Snapshot};
use tokio::sync::{Semaphore, watch};

use crate::cluster::Cluster;
use crate::member::Contents;
use crate::task::Task;

/// How a [`Watcher`] follows its source.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Options {
    /// How often to ask the source to confirm the version held (default
    /// 1 s): the resolution of staleness, and how soon a silent dead
    /// connection is noticed (after three unanswered requests).
    pub progress_every: Duration,
    /// The longest pause between two attempts to list again (default 1 s;
    /// the first retries are 50 ms, 100 ms, ... with jitter).
    pub max_backoff: Duration,
    /// Test hook: when set, the watcher takes a permit from it after each
    /// list and before it starts following, so a test can hold it there
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

impl Options {
    /// Refuses a zero period or back-off (a busy loop).
    pub fn check(&self) -> Result<(), crate::Error> {
        if self.progress_every.is_zero() || self.max_backoff.is_zero() {
            return Err(crate::Error::InvalidOption {
                option: "watch options",
                message: "progress_every and max_backoff must be above zero".into(),
            });
        }
        Ok(())
    }
}

/// Where a watcher is.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Status {
    /// The version of the published ring (confirmed current then): the
    /// etcd revision, the ZooKeeper zxid, or the count of gossip views
    /// applied (local to this client: gossip has no shared version).
    pub revision: u64,
    /// Time since the source last confirmed that version (an event or a
    /// progress notification).
    pub staleness: Duration,
    /// Events ignored because their version was already applied.
    pub ignored: u64,
    /// Lists after the first one (each recovery starts with one).
    pub relists: u64,
    /// Follows that ended because their start was compacted away (etcd).
    pub compactions: u64,
    /// The last error met, if the last attempt failed.
    pub last_error: Option<String>,
    /// Why the ring held is not the one the source's contents describe
    /// now: the config refused (see [`crate::member`]); `None` once a ring
    /// is built from them again.
    pub held: Option<String>,
}

/// A running watcher. Dropping it stops the background task.
#[derive(Debug)]
pub struct Watcher {
    feed: Arc<Feed>,
    task: Task,
}

impl Watcher {
    /// Runs a source's follow loop `run` in the background over `feed`,
    /// which holds the first ring already. `run` must return soon after
    /// its receiver changes (the watcher stops).
    pub fn spawn<F>(
        feed: Arc<Feed>,
        run: impl FnOnce(Arc<Feed>, watch::Receiver<bool>) -> F,
    ) -> Self
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        let task = Task::spawn(|stop| run(Arc::clone(&feed), stop));
        Watcher { feed, task }
    }

    /// The current ring and its version: lock-free, never waits.
    pub fn load(&self) -> Arc<Snapshot<Arc<Cluster>>> {
        self.feed.live.load()
    }

    /// A receiver that wakes on every new ring (not on confirmations of
    /// the same ring); its value is the count of rings published.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.feed.changed.subscribe()
    }

    /// Version, staleness and counters.
    pub fn status(&self) -> Status {
        let feed = &self.feed;
        Status {
            revision: feed.live.load().revision,
            staleness: feed.staleness(),
            ignored: feed.ignored.load(Ordering::Relaxed),
            relists: feed.relists.load(Ordering::Relaxed),
            compactions: feed.compactions.load(Ordering::Relaxed),
            last_error: feed.last_error.lock().map(|e| e.clone()).unwrap_or(None),
            held: feed.held.lock().map(|e| e.clone()).unwrap_or(None),
        }
    }

    /// Stops following; the last ring stays readable through any snapshot
    /// already loaded.
    pub async fn shutdown(mut self) {
        self.task.stop().await;
    }
}

/// What a source's follow loop publishes through: the [`Live`] ring, the
/// confirmation clock and the counters of [`Status`].
#[derive(Debug)]
pub struct Feed {
    /// What is followed, for the logs (`etcd /caches`, `zk /caches`).
    name: String,
    options: Options,
    live: Live<Arc<Cluster>>,
    started: Instant,
    /// Milliseconds since `started` of the last confirmation.
    confirmed_ms: AtomicU64,
    ignored: AtomicU64,
    relists: AtomicU64,
    compactions: AtomicU64,
    last_error: Mutex<Option<String>>,
    /// Why the ring held is not built from the contents (a bad config).
    held: Mutex<Option<String>>,
    /// Bumped on every publish of a different ring (not on confirmations).
    changed: watch::Sender<u64>,
}

impl Feed {
    /// A feed holding `cluster` at `version`, confirmed now; `name` says
    /// what is followed in the logs.
    pub fn new(name: String, options: Options, cluster: Cluster, version: u64) -> Arc<Self> {
        let (changed, _) = watch::channel(0);
        Arc::new(Feed {
            name,
            options,
            live: Live::at_revision(Arc::new(cluster), version),
            started: Instant::now(),
            confirmed_ms: AtomicU64::new(0),
            ignored: AtomicU64::new(0),
            relists: AtomicU64::new(0),
            compactions: AtomicU64::new(0),
            last_error: Mutex::new(None),
            held: Mutex::new(None),
            changed,
        })
    }

    /// The options the watcher was started with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// What is followed (for the logs).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The ring held now.
    pub fn load(&self) -> Arc<Snapshot<Arc<Cluster>>> {
        self.live.load()
    }

    /// Waits on the test hook of [`Options::before_watch`], if set.
    pub async fn gate(&self) {
        if let Some(gate) = &self.options.before_watch {
            let permit = gate.acquire().await;
            permit.map(|p| p.forget()).ok();
        }
    }

    /// Applies one batch of changes as a unit ([`apply_changes`]) and
    /// publishes the outcome: rebuilt when anything changed, the same ring
    /// at the new version when only the version moved. Confirms.
    pub fn apply(
        &self,
        contents: &mut Contents,
        changes: &[Change<'_>],
        header: i64,
        applied: &mut i64,
    ) {
        let outcome = apply_changes(contents, changes, header, applied);
        self.ignored.fetch_add(outcome.ignored, Ordering::Relaxed);
        match outcome.publish {
            Some(version) if outcome.changed => self.rebuild(contents, version as u64),
            Some(version) => self.republish(version as u64),
            None => {}
        }
        self.confirm();
    }

    /// The same ring, confirmed current at `version`.
    pub fn republish(&self, version: u64) {
        let current = self.live.load();
        self.live.publish(version, Arc::clone(&current.placement));
    }

    /// Rebuilds the cluster and publishes it at `version`; a bad config
    /// keeps the ring held (republished at the new version).
    pub fn rebuild(&self, contents: &mut Contents, version: u64) {
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
                    "config of {} refused, keeping the ring held: {e}",
                    self.name
                );
                self.note_error(Some(e.to_string()));
                Arc::clone(&current.placement)
            }
        };
        let new_ring = !Arc::ptr_eq(&next, &current.placement);
        if self.live.publish(version, next).is_some() && new_ring {
            self.changed.send_modify(|n| *n += 1);
        }
    }

    /// After a fresh list: counts the relist, clears the last error,
    /// rebuilds at `version` and confirms. Returns the relists so far.
    pub fn relisted(&self, contents: &mut Contents, version: u64) -> u64 {
        let relists = self.relists.fetch_add(1, Ordering::Relaxed) + 1;
        tracing::info!(source = %self.name, version, relists, "listed again");
        // Before the rebuild, which records a bad config.
        self.note_error(None);
        self.rebuild(contents, version);
        self.confirm();
        relists
    }

    /// Counts a follow that ended on a compacted start.
    pub fn compacted(&self) {
        self.compactions.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts `n` events ignored as replays.
    pub fn ignored(&self, n: u64) {
        self.ignored.fetch_add(n, Ordering::Relaxed);
    }

    /// The source confirmed the version held: staleness restarts.
    pub fn confirm(&self) {
        let now = self.started.elapsed().as_millis() as u64;
        self.confirmed_ms.store(now, Ordering::Release);
    }

    /// Time since the last confirmation.
    pub fn staleness(&self) -> Duration {
        let confirmed = Duration::from_millis(self.confirmed_ms.load(Ordering::Acquire));
        self.started.elapsed().saturating_sub(confirmed)
    }

    /// Records the last error (`None`: the last attempt worked).
    pub fn note_error(&self, error: Option<String>) {
        if let Ok(mut last) = self.last_error.lock() {
            *last = error;
        }
    }
}

/// One event of a batch: a put (`value`) or a delete (`None`) of `key` at
/// version `revision`, the key created at version `created` (its place in
/// join order).
#[derive(Debug, Clone)]
pub struct Change<'a> {
    /// The key or path.
    pub key: std::borrow::Cow<'a, str>,
    /// The new value; `None` for a delete.
    pub value: Option<&'a [u8]>,
    /// The version that created the key.
    pub created: i64,
    /// The version of this change.
    pub revision: i64,
}

/// What one batch did to the contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// Whether any event was applied (the ring must be rebuilt).
    pub changed: bool,
    /// Events at or below the version already applied: replays, left out.
    pub ignored: u64,
    /// The one version to publish the batch at, if it moves the watcher
    /// forward.
    pub publish: Option<i64>,
}

/// Applies the `changes` of one batch (confirmed up to `header`) to
/// `contents` as one unit: every change above `*applied` is applied,
/// every change at or below it is ignored and counted. The batch is
/// published once, at its last event's version (a delayed batch's header
/// may run ahead of events still to come), or at `header` for a batch
/// without events (a progress notification: "nothing of yours changed up
/// to here"); `*applied` moves there. Nothing is published for a batch
/// that does not move the watcher forward.
///
/// Example: applied 10, events put a@9, put b@11, delete c@12, header 15:
/// a is ignored (1), b and c change, published once at 12, applied 12.
pub fn apply_changes(
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
