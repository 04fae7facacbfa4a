//! One placement's run: fill the cache to its steady state, run the paced
//! read-through workload until the hit rate is steady, change membership,
//! keep running until the database load is back within 10 % of steady (or
//! the time bound), and record every interval.
//!
//! The workload (per request, from each worker's seeded stream): a key;
//! with probability `1 − hit_rate` a write (the row's version bumped in
//! SQLite, the key deleted from its cache server: cache-aside
//! invalidation), otherwise a read (`get` on the key's server; on a miss
//! or a server error, one indexed database read and a `set`). A read hits
//! exactly when the key's previous request was a read, so the steady hit
//! rate is `hit_rate` whatever the key distribution: `P(previous request
//! of the key was a read) = 1 − w`. Warm-up starts from that stationary
//! state (each key cached with probability `hit_rate`), then confirms it
//! on the paced workload.
//!
//! Requests are paced open-loop at `--rps` (split over the threads), as
//! the article's 100,000 requests per second arrive whatever the cache
//! does; a thread more than 1 s behind drops the excess from its schedule
//! (counted as `shed`), so a slow database cannot pile up work for ever.
//!
//! Every loop is bounded: the preload by K keys, the workers by the end
//! flag the driver sets, the driver by `warmup_max + after_max` seconds,
//! and all by the stop flag SIGINT and SIGTERM set.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow};
use arc_swap::ArcSwap;
use indicatif::ProgressBar;
use serde::Serialize;

use crate::cache::Cache;
use crate::db::{self, Database};
use crate::keys::{Distribution, Rng, mix};
use crate::route::Route;

/// How a thread that falls behind its schedule catches up at most.
const MAX_BACKLOG: Duration = Duration::from_secs(1);
/// Intervals whose hit rates agree make the steady state; as many within
/// 10 % of steady load end the run after the change.
pub const STEADY_INTERVALS: usize = 3;
/// Steady: the hit rates of the last intervals span at most this.
const STEADY_SPREAD: f64 = 0.01;
/// Recovered: database load at most this times steady.
pub const RECOVERED: f64 = 1.1;

/// What the workers do.
#[derive(Debug, Clone)]
pub struct Workload {
    pub keys: u64,
    pub hit_rate: f64,
    pub distribution: Arc<Distribution>,
    pub rps: f64,
    pub threads: usize,
    pub value_size: usize,
    pub seed: u64,
}

/// How long each phase lasts.
#[derive(Debug, Clone)]
pub struct Timing {
    pub interval: Duration,
    pub warmup: Duration,
    pub warmup_max: Duration,
    pub after_min: Duration,
    pub after_max: Duration,
}

/// Totals since the start of the paced workload.
#[derive(Debug, Default)]
pub struct Counters {
    requests: AtomicU64,
    reads: AtomicU64,
    hits: AtomicU64,
    db_reads: AtomicU64,
    db_writes: AtomicU64,
    errors: AtomicU64,
    shed: AtomicU64,
    first_reads: AtomicU64,
    first_hits: AtomicU64,
}

/// A copy of [`Counters`].
#[derive(Debug, Default, Clone, Copy)]
pub struct Totals {
    pub requests: u64,
    pub reads: u64,
    pub hits: u64,
    pub db_reads: u64,
    pub db_writes: u64,
    pub errors: u64,
    pub shed: u64,
    pub first_reads: u64,
    pub first_hits: u64,
}

impl Counters {
    fn totals(&self) -> Totals {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Totals {
            requests: get(&self.requests),
            reads: get(&self.reads),
            hits: get(&self.hits),
            db_reads: get(&self.db_reads),
            db_writes: get(&self.db_writes),
            errors: get(&self.errors),
            shed: get(&self.shed),
            first_reads: get(&self.first_reads),
            first_hits: get(&self.first_hits),
        }
    }
}

fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}

/// What the workers, the driver and a membership follower share.
#[derive(Debug)]
pub struct Shared {
    /// The placement over the current members.
    pub route: ArcSwap<Route>,
    /// Every server that may be a member, by index.
    pub caches: Vec<Cache>,
    counters: Counters,
    /// Per key: requested since the change (the first request after it
    /// tells whether the key was still cached where the placement looks).
    touched: Vec<AtomicBool>,
    tracking: AtomicBool,
    end: AtomicBool,
    /// SIGINT / SIGTERM.
    pub stop: Arc<AtomicBool>,
}

impl Shared {
    /// From now on, each key's first request after the change tells
    /// whether it was still cached where the placement looks.
    pub fn track(&self) {
        self.tracking.store(true, Ordering::Relaxed);
    }

    pub fn new(route: Route, caches: Vec<Cache>, keys: u64, stop: Arc<AtomicBool>) -> Self {
        Shared {
            route: ArcSwap::from_pointee(route),
            caches,
            counters: Counters::default(),
            touched: (0..keys).map(|_| AtomicBool::new(false)).collect(),
            tracking: AtomicBool::new(false),
            end: AtomicBool::new(false),
            stop,
        }
    }

    /// The run is over (the driver ended it, or a signal).
    pub fn ending(&self) -> bool {
        self.end.load(Ordering::Relaxed) || self.stop.load(Ordering::Relaxed)
    }

    /// Whether the change was made (keys are tracked from it on).
    pub fn tracking(&self) -> bool {
        self.tracking.load(Ordering::Relaxed)
    }
}

/// A membership change and what applies it: the driver calls `change`
/// once, at an interval boundary after warm-up, and `tick` every 50 ms or
/// so (a static cluster drops a killed server after its detection delay;
/// an etcd follower publishes routes from its own thread).
pub trait Membership {
    /// Makes the change; returns what it did, for the report. The keys
    /// the change made cold are counted from this moment on, unless the
    /// membership counts them from when its route changes
    /// ([`Shared::track`]).
    fn change(&mut self, shared: &Shared) -> Result<String>;
    /// Whether this membership calls [`Shared::track`] itself (a live
    /// source whose route follows the change a propagation delay later).
    fn tracks(&self) -> bool {
        false
    }
    /// Called often; `since_change` is `None` before the change.
    fn tick(&mut self, shared: &Shared, since_change: Option<Duration>) -> Result<()>;
    /// A proxy placement's reads answered from a previous server in the
    /// warm-up window (the proxy's `fallback_hits`); `None` without a proxy.
    fn fallback_hits(&self) -> Result<Option<u64>> {
        Ok(None)
    }
}

/// Which part of the run an interval belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    Warmup,
    Steady,
    After,
}

/// One interval of the paced workload.
#[derive(Debug, Clone, Serialize)]
pub struct Interval {
    /// Seconds from the start of the paced workload to the interval's end.
    pub end: f64,
    pub seconds: f64,
    pub phase: Phase,
    pub requests: u64,
    pub reads: u64,
    pub hits: u64,
    pub db_reads: u64,
    pub errors: u64,
    pub shed: u64,
}

impl Interval {
    pub fn hit_rate(&self) -> f64 {
        ratio(self.hits, self.reads)
    }

    pub fn db_per_second(&self) -> f64 {
        self.db_reads as f64 / self.seconds.max(1e-9)
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// Everything one placement's run measured.
#[derive(Debug, Clone)]
pub struct Run {
    pub intervals: Vec<Interval>,
    /// Seconds from the start to the change (`None`: stopped before it).
    pub change_at: Option<f64>,
    pub change: String,
    /// Whether warm-up reached a steady hit rate before its time bound.
    pub steady: bool,
    /// Reads whose key had not been requested since the change, and how
    /// many of them hit: the share of cached keys the change made cold.
    pub first_reads: u64,
    pub first_hits: u64,
    pub totals: Totals,
    pub wall_seconds: f64,
}

/// Sets each key with probability `hit_rate` on its server, the
/// stationary state of the workload (see the module doc). Bounded by K.
pub fn preload(shared: &Shared, work: &Workload) -> Result<()> {
    let threshold = (work.hit_rate * u64::MAX as f64) as u64;
    let route = shared.route.load_full();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..work.threads)
            .map(|t| {
                let route = &route;
                scope.spawn(move || -> Result<()> {
                    let mut i = t as u64;
                    while i < work.keys && !shared.ending() {
                        if mix(work.seed ^ mix(i)) <= threshold {
                            let key = db::key(i);
                            if let Some(server) = route.server(&key) {
                                shared.caches[server]
                                    .set(&key, &db::value(i, work.value_size))
                                    .map_err(|e| anyhow!("preload {key}: {e}"))?;
                            }
                        }
                        i += work.threads as u64;
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().map_err(|_| anyhow!("a preload thread panicked"))?)
    })
}

/// The paced workload of thread `t` until the driver ends it.
fn worker(shared: &Shared, db: &Database, work: &Workload, t: usize) -> Result<()> {
    let reader = db.open()?;
    let mut rng = Rng::new(work.seed, t as u64 + 1);
    let rate = work.rps / work.threads as f64;
    let mut start = Instant::now();
    let mut issued = 0u64;
    let c = &shared.counters;
    while !shared.ending() {
        let due = start + Duration::from_secs_f64(issued as f64 / rate);
        let now = Instant::now();
        if due > now {
            sleep((due - now).min(Duration::from_millis(20)));
            continue;
        }
        if now - due > MAX_BACKLOG {
            let behind = ((now - due).as_secs_f64() * rate) as u64;
            add(&c.shed, behind);
            start += Duration::from_secs_f64(behind as f64 / rate);
        }
        issued += 1;
        request(shared, &reader, work, &mut rng)?;
    }
    Ok(())
}

/// One request: a write (database, then invalidate) or a read-through get.
fn request(shared: &Shared, reader: &db::Reader, work: &Workload, rng: &mut Rng) -> Result<()> {
    let c = &shared.counters;
    let i = work.distribution.draw(rng);
    let write = rng.unit() >= work.hit_rate;
    let key = db::key(i);
    let server = shared.route.load().server(&key);
    let first = shared.tracking.load(Ordering::Relaxed)
        && !shared.touched[i as usize].swap(true, Ordering::Relaxed);
    add(&c.requests, 1);
    if write {
        reader.write(&key)?;
        add(&c.db_writes, 1);
        if let Some(s) = server
            && shared.caches[s].delete(&key).is_err()
        {
            add(&c.errors, 1);
        }
        return Ok(());
    }
    add(&c.reads, 1);
    let got = server.map(|s| shared.caches[s].get(&key));
    let hit = matches!(got, Some(Ok(Some(_))));
    if matches!(got, Some(Err(_))) {
        add(&c.errors, 1);
    }
    if first {
        add(&c.first_reads, 1);
        add(&c.first_hits, u64::from(hit));
    }
    if hit {
        add(&c.hits, 1);
        return Ok(());
    }
    let value = reader
        .read(&key)?
        .ok_or_else(|| anyhow!("{key} is not in the database"))?;
    add(&c.db_reads, 1);
    if let Some(s) = server
        && shared.caches[s].set(&key, &value).is_err()
    {
        add(&c.errors, 1);
    }
    Ok(())
}

/// Runs the workers and drives the phases; `progress` shows the live hit
/// rate. `side` runs on threads of its own beside the workers, each until
/// the run ends (the stale-read check's threads). Returns every interval.
pub fn drive(
    shared: &Shared,
    db: &Database,
    work: &Workload,
    timing: &Timing,
    membership: &mut dyn Membership,
    progress: &ProgressBar,
    side: &[&(dyn Fn() + Sync)],
) -> Result<Run> {
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..work.threads)
            .map(|t| scope.spawn(move || worker(shared, db, work, t)))
            .collect();
        for f in side {
            scope.spawn(f);
        }
        let run = phases(shared, timing, membership, progress);
        shared.end.store(true, Ordering::Relaxed);
        for handle in workers {
            handle
                .join()
                .map_err(|_| anyhow!("a worker thread panicked"))??;
        }
        run
    })
}

/// The driver's loop: one interval per `timing.interval`, bounded by
/// `warmup_max + after_max`.
fn phases(
    shared: &Shared,
    timing: &Timing,
    membership: &mut dyn Membership,
    progress: &ProgressBar,
) -> Result<Run> {
    let start = Instant::now();
    let limit = timing.warmup_max + timing.after_max;
    let mut run = Run {
        intervals: Vec::new(),
        change_at: None,
        change: String::new(),
        steady: false,
        first_reads: 0,
        first_hits: 0,
        totals: Totals::default(),
        wall_seconds: 0.0,
    };
    let mut changed: Option<Instant> = None;
    let mut last = shared.counters.totals();
    let mut last_at = start;
    while start.elapsed() < limit && !shared.stop.load(Ordering::Relaxed) {
        let next = last_at + timing.interval;
        while Instant::now() < next && !shared.stop.load(Ordering::Relaxed) {
            membership.tick(shared, changed.map(|c| c.elapsed()))?;
            sleep((next.saturating_duration_since(Instant::now())).min(Duration::from_millis(50)));
        }
        let now = Instant::now();
        let totals = shared.counters.totals();
        let phase = if changed.is_some() {
            Phase::After
        } else {
            Phase::Warmup
        };
        run.intervals.push(interval(
            &last,
            &totals,
            (now - last_at).as_secs_f64(),
            (now - start).as_secs_f64(),
            phase,
        ));
        (last, last_at) = (totals, now);
        show(progress, &run, start.elapsed());
        match changed {
            None if warmed(&run.intervals, start.elapsed(), timing) => {
                run.steady = steady(&run.intervals);
                mark_steady(&mut run.intervals);
                if !membership.tracks() {
                    shared.track();
                }
                run.change = membership.change(shared)?;
                run.change_at = Some(start.elapsed().as_secs_f64());
                changed = Some(Instant::now());
                progress.set_message(format!("{}; running", run.change));
            }
            Some(at) if recovered(&run.intervals, at.elapsed(), timing) => break,
            _ => {}
        }
    }
    let totals = shared.counters.totals();
    run.first_reads = totals.first_reads;
    run.first_hits = totals.first_hits;
    run.totals = totals;
    run.wall_seconds = start.elapsed().as_secs_f64();
    Ok(run)
}

fn interval(before: &Totals, now: &Totals, seconds: f64, end: f64, phase: Phase) -> Interval {
    Interval {
        end,
        seconds,
        phase,
        requests: now.requests - before.requests,
        reads: now.reads - before.reads,
        hits: now.hits - before.hits,
        db_reads: now.db_reads - before.db_reads,
        errors: now.errors - before.errors,
        shed: now.shed - before.shed,
    }
}

fn show(progress: &ProgressBar, run: &Run, elapsed: Duration) {
    if let Some(last) = run.intervals.last() {
        let phase = if run.change_at.is_some() {
            "after the change"
        } else {
            "warm-up"
        };
        progress.set_position(elapsed.as_secs());
        progress.set_message(format!(
            "{phase}: hit rate {:.1} %, {:.0} DB reads/s, {:.0} req/s",
            100.0 * last.hit_rate(),
            last.db_per_second(),
            last.requests as f64 / last.seconds.max(1e-9),
        ));
    }
}

/// The last intervals' hit rates agree within [`STEADY_SPREAD`].
fn steady(intervals: &[Interval]) -> bool {
    let Some(last) = intervals
        .len()
        .checked_sub(STEADY_INTERVALS)
        .map(|i| &intervals[i..])
    else {
        return false;
    };
    let rates = last.iter().map(Interval::hit_rate);
    let (low, high) = rates.fold((f64::MAX, f64::MIN), |(l, h), r| (l.min(r), h.max(r)));
    last.iter().all(|i| i.reads > 0) && high - low <= STEADY_SPREAD
}

/// Warm-up is over: at least `warmup` and steady, or `warmup_max`.
fn warmed(intervals: &[Interval], elapsed: Duration, timing: &Timing) -> bool {
    (elapsed >= timing.warmup && steady(intervals)) || elapsed >= timing.warmup_max
}

/// The baseline intervals (the last of warm-up) become `Steady`.
fn mark_steady(intervals: &mut [Interval]) {
    let n = intervals.len();
    for i in &mut intervals[n.saturating_sub(STEADY_INTERVALS)..] {
        i.phase = Phase::Steady;
    }
}

/// After at least `after_min`, the database load of the last
/// [`STEADY_INTERVALS`] together is within [`RECOVERED`] of steady (their
/// mean, not each: one interval's count is noisy).
fn recovered(intervals: &[Interval], since: Duration, timing: &Timing) -> bool {
    if since < timing.after_min {
        return false;
    }
    let after: Vec<&Interval> = intervals
        .iter()
        .filter(|i| i.phase == Phase::After)
        .collect();
    after.len() >= STEADY_INTERVALS
        && window_db_per_second(&after[after.len() - STEADY_INTERVALS..])
            <= RECOVERED * baseline_db_per_second(intervals)
}

/// Database reads per second over consecutive intervals.
pub fn window_db_per_second(window: &[&Interval]) -> f64 {
    let reads: u64 = window.iter().map(|i| i.db_reads).sum();
    let seconds: f64 = window.iter().map(|i| i.seconds).sum();
    reads as f64 / seconds.max(1e-9)
}

/// The mean database reads per second of the steady intervals.
pub fn baseline_db_per_second(intervals: &[Interval]) -> f64 {
    let steady: Vec<&Interval> = intervals
        .iter()
        .filter(|i| i.phase == Phase::Steady)
        .collect();
    window_db_per_second(&steady)
}
