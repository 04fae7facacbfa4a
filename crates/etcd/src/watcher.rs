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

use etcd_client::{Client, EventType, WatchOptions as EtcdWatchOptions, WatchResponse};
use ringwise::{Live, Snapshot};
use tokio::sync::{Semaphore, watch};

use crate::cluster::Cluster;
use crate::connect::{Connection, bounded};
use crate::member::Contents;
use crate::store::list;
use crate::{Error, Task, backoff};

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
        let mut client = connection.connect().await?;
        let (contents, revision) = list(&mut client, &prefix, connection).await?;
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
            changed,
        });
        let task = Task::spawn(|stop| Arc::clone(&shared).run(client, contents, revision, stop));
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
        mut client: Client,
        mut contents: Contents,
        mut applied: i64,
        mut stop: watch::Receiver<bool>,
    ) {
        self.confirm();
        let mut failures = 0u32;
        loop {
            let followed = tokio::select! {
                followed = self.follow(&mut client, &mut contents, &mut applied) => followed,
                _ = stop.changed() => return,
            };
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
            tracing::warn!(prefix = %self.prefix, reason = %reason, "watch ended");
            self.note_error(Some(reason));
            // List again until it works.
            loop {
                failures += 1;
                tokio::select! {
                    _ = tokio::time::sleep(backoff(failures, self.options.max_backoff)) => {}
                    _ = stop.changed() => return,
                }
                let listed = tokio::select! {
                    listed = self.relist() => listed,
                    _ = stop.changed() => return,
                };
                match listed {
                    Ok((fresh, fresh_contents, revision)) => {
                        client = fresh;
                        contents = fresh_contents;
                        applied = revision;
                        self.relists.fetch_add(1, Ordering::Relaxed);
                        self.rebuild(&mut contents, revision);
                        self.confirm();
                        self.note_error(None);
                        failures = 0;
                        break;
                    }
                    Err(e) => {
                        tracing::warn!(prefix = %self.prefix, error = %e, "cannot list");
                        self.note_error(Some(e.to_string()));
                    }
                }
            }
        }
    }

    async fn relist(&self) -> Result<(Client, Contents, i64), Error> {
        let mut client = self.connection.connect().await?;
        let (contents, revision) = list(&mut client, &self.prefix, &self.connection).await?;
        Ok((client, contents, revision))
    }

    /// Watches from `applied + 1` until the watch ends.
    async fn follow(
        &self,
        client: &mut Client,
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
        let mut stream = bounded(
            "watch",
            timeout,
            client.watch(self.prefix.clone(), Some(options)),
        )
        .await?;
        // The first answer says whether the watch exists. Progress is
        // asked for only after it: a progress notification is a promise
        // about a watch that is synced, and one that arrived before the
        // watch was refused as compacted would claim a revision whose
        // events were never seen.
        let first = bounded("create the watch", timeout, stream.message()).await?;
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
                    bounded("request progress", timeout, stream.request_progress()).await?;
                }
                message = stream.message() => {
                    let Some(response) = message.map_err(|source| Error::Etcd { operation: "watch", source })? else {
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

    /// Applies one watch response as a unit.
    fn apply(&self, response: &WatchResponse, contents: &mut Contents, applied: &mut i64) {
        let revision = response.header().map_or(0, |h| h.revision());
        if response.created() {
            return;
        }
        let mut changed = false;
        for event in response.events() {
            let Some(kv) = event.kv() else { continue };
            if kv.mod_revision() <= *applied {
                self.ignored.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            let key = String::from_utf8_lossy(kv.key());
            match event.event_type() {
                EventType::Put => contents.put(&key, kv.value(), kv.create_revision()),
                EventType::Delete => contents.delete(&key),
            }
            changed = true;
        }
        let last_event = response
            .events()
            .iter()
            .filter_map(|e| e.kv())
            .map(|kv| kv.mod_revision())
            .max();
        // A progress notification (no events) confirms everything up to
        // the header's revision; a response with events confirms up to its
        // last event (a delayed response's header may run ahead of events
        // still to come).
        let confirmed = if response.events().is_empty() {
            revision
        } else {
            last_event.unwrap_or(revision)
        };
        if changed {
            *applied = (*applied).max(last_event.unwrap_or(*applied));
            self.rebuild(contents, confirmed);
        } else if confirmed > *applied {
            *applied = confirmed;
            let current = self.live.load();
            self.live
                .publish(confirmed as u64, Arc::clone(&current.placement));
        }
        self.confirm();
    }

    /// Rebuilds the cluster and publishes it at `revision`; a bad config
    /// keeps the ring held (republished at the new revision).
    fn rebuild(&self, contents: &mut Contents, revision: i64) {
        let current = self.live.load();
        let next = match Cluster::from_contents(contents) {
            Ok(next) if next.same_as(&current.placement) => Arc::clone(&current.placement),
            Ok(next) => Arc::new(next),
            Err(e) => {
                tracing::error!(prefix = %self.prefix, error = %e, "config refused; keeping the ring held");
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
