//! What a run means: the article's table (steady hit rate, the keys the
//! change made cold, database load right after it and at its peak, and
//! how long until the load is back within 10 % of steady), as text or as
//! one JSON document with every interval.

use std::fmt::Write as _;

use serde::Serialize;

use crate::check::Checked;
use crate::run::{self, Interval, Phase, Run};

/// One placement's figures.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub algorithm: String,
    pub change: String,
    /// Whether warm-up reached a steady hit rate (within 1 point over 3
    /// intervals) before its time bound.
    pub steady: bool,
    pub steady_hit_rate: f64,
    pub steady_db_reads_per_second: f64,
    /// Fraction of all keys whose server differs after the change.
    pub moved: f64,
    /// Of the reads that were the first request of their key after the
    /// change, the share that missed where a steady cache would have hit:
    /// `1 − (their hit rate) / (steady hit rate)`.
    pub cold: Option<f64>,
    /// The article's arithmetic from `moved`:
    /// `((1 − h) + h · moved) / (1 − h)` at the measured steady hit rate `h`.
    pub expected_multiplier: f64,
    /// Hit rate and database load (× steady) of the first interval after
    /// the change.
    pub hit_rate_after: Option<f64>,
    pub multiplier_after: Option<f64>,
    /// The highest database load (× steady) of any interval after it.
    pub peak_multiplier: Option<f64>,
    /// Seconds from the change until the database load stays within 10 %
    /// of steady (`None`: not by the end of the run).
    pub recover_seconds: Option<f64>,
    /// Cache requests that failed (a killed server), requests dropped from
    /// a thread's schedule when it fell more than 1 s behind.
    pub errors: u64,
    pub shed: u64,
    pub requests: u64,
    /// Database writes (the invalidating requests).
    pub db_writes: u64,
    pub seconds: f64,
    /// The servers of this run: address, and pid when started here.
    pub servers: Vec<Server>,
    /// A proxy placement's `ringwise-proxy`: its address and pid.
    pub proxy: Option<Server>,
    /// A proxy placement's reads of moved keys answered from their
    /// previous server in the warm-up window (the proxy's
    /// `fallback_hits`, all servers).
    pub fallback_hits: Option<u64>,
    /// The stale-read check (`--check-stale`), when it ran.
    pub stale_check: Option<Checked>,
    pub intervals: Vec<Point>,
}

/// What a run has besides its intervals: the servers, a proxy's, the check.
#[derive(Debug, Clone)]
pub struct Extras {
    pub servers: Vec<Server>,
    pub proxy: Option<Server>,
    pub fallback_hits: Option<u64>,
    pub stale_check: Option<Checked>,
}

/// A memcached of the run.
#[derive(Debug, Clone, Serialize)]
pub struct Server {
    pub address: String,
    pub pid: Option<u32>,
}

/// One interval as reported: relative to the change and to steady.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    /// Seconds from the change to the interval's end (negative before).
    pub t: f64,
    pub phase: Phase,
    pub hit_rate: f64,
    pub db_reads_per_second: f64,
    pub db_multiplier: f64,
    pub requests: u64,
    pub errors: u64,
}

/// Summarises one run; `moved` is the fraction of keys whose server the
/// change altered.
pub fn summarize(algorithm: &str, run: &Run, moved: f64, extras: Extras) -> Summary {
    let baseline = run::baseline_db_per_second(&run.intervals);
    let steady: Vec<&Interval> = run
        .intervals
        .iter()
        .filter(|i| i.phase == Phase::Steady)
        .collect();
    let hits: u64 = steady.iter().map(|i| i.hits).sum();
    let reads: u64 = steady.iter().map(|i| i.reads).sum();
    let h = if reads == 0 {
        0.0
    } else {
        hits as f64 / reads as f64
    };
    let after: Vec<&Interval> = run
        .intervals
        .iter()
        .filter(|i| i.phase == Phase::After)
        .collect();
    let multiplier = |i: &Interval| i.db_per_second() / baseline.max(1e-9);
    let change_at = run.change_at.unwrap_or(0.0);
    let cold = (run.first_reads > 0 && h > 0.0)
        .then(|| 1.0 - (run.first_hits as f64 / run.first_reads as f64) / h);
    Summary {
        algorithm: algorithm.to_owned(),
        change: run.change.clone(),
        steady: run.steady,
        steady_hit_rate: h,
        steady_db_reads_per_second: baseline,
        moved,
        cold,
        expected_multiplier: if h < 1.0 {
            ((1.0 - h) + h * moved) / (1.0 - h)
        } else {
            f64::NAN
        },
        hit_rate_after: after.first().map(|i| i.hit_rate()),
        multiplier_after: after.first().map(|i| multiplier(i)),
        peak_multiplier: after.iter().map(|i| multiplier(i)).reduce(f64::max),
        recover_seconds: recovery(&after, baseline, change_at),
        errors: run.totals.errors,
        shed: run.totals.shed,
        requests: run.totals.requests,
        db_writes: run.totals.db_writes,
        seconds: run.wall_seconds,
        servers: extras.servers,
        proxy: extras.proxy,
        fallback_hits: extras.fallback_hits,
        stale_check: extras.stale_check,
        intervals: run
            .intervals
            .iter()
            .map(|i| Point {
                t: i.end - change_at,
                phase: i.phase,
                hit_rate: i.hit_rate(),
                db_reads_per_second: i.db_per_second(),
                db_multiplier: multiplier(i),
                requests: i.requests,
                errors: i.errors,
            })
            .collect(),
    }
}

/// Seconds from the change to the start of the first window of
/// [`run::STEADY_INTERVALS`] intervals from which on every window's mean
/// load is within 10 % of steady; `None` if the last window is not.
fn recovery(after: &[&Interval], baseline: f64, change_at: f64) -> Option<f64> {
    let width = run::STEADY_INTERVALS;
    let high = |w: &[&Interval]| run::window_db_per_second(w) > run::RECOVERED * baseline;
    let windows: Vec<&[&Interval]> = after.windows(width).collect();
    if windows.last().is_none_or(|w| high(w)) {
        return None;
    }
    let from = windows.iter().rposition(|w| high(w)).map_or(0, |p| p + 1);
    let start = after[from].end - after[from].seconds;
    Some((start - change_at).max(0.0))
}

/// The table, as the terminal shows it.
pub fn table(summaries: &[Summary]) -> String {
    let mut out = String::new();
    if let Some(first) = summaries.first() {
        let _ = writeln!(out, "{}", first.change);
    }
    let _ = writeln!(
        out,
        "{:<12} {:>8} {:>8} {:>8} {:>10} {:>9} {:>9} {:>9} {:>10} {:>8}",
        "placement",
        "steady",
        "moved",
        "cold",
        "hits after",
        "DB after",
        "DB peak",
        "expected",
        "recover",
        "errors"
    );
    for s in summaries {
        let _ = writeln!(
            out,
            "{:<12} {:>8} {:>8} {:>8} {:>10} {:>9} {:>9} {:>9} {:>10} {:>8}",
            s.algorithm,
            percent(Some(s.steady_hit_rate)),
            percent(Some(s.moved)),
            percent(s.cold),
            percent(s.hit_rate_after),
            times(s.multiplier_after),
            times(s.peak_multiplier),
            times(Some(s.expected_multiplier)),
            s.recover_seconds
                .map_or("never".to_owned(), |r| format!("{r:.1} s")),
            s.errors,
        );
    }
    if summaries.iter().any(|s| s.stale_check.is_some()) {
        out.push_str(&stale_table(summaries));
    }
    out
}

/// The stale-read check's lines: versioned writes, reads (after the
/// change), stale reads, and a proxy's warm-up copies.
fn stale_table(summaries: &[Summary]) -> String {
    let keys = summaries
        .iter()
        .find_map(|s| s.stale_check.as_ref())
        .map_or(0, |c| c.keys);
    let mut out = format!(
        "\nstale-read check: versioned writes and reads of {keys} keys check:N, the same path\n\
         {:<12} {:>8} {:>8} {:>12} {:>8} {:>10} {:>15}\n",
        "placement", "writes", "reads", "after change", "stale", "errors", "warm-up copies"
    );
    for s in summaries {
        let Some(c) = &s.stale_check else { continue };
        let _ = writeln!(
            out,
            "{:<12} {:>8} {:>8} {:>12} {:>8} {:>10} {:>15}",
            s.algorithm,
            c.writes,
            c.reads,
            c.reads_after,
            c.stale,
            c.errors,
            s.fallback_hits.map_or("-".to_owned(), |n| n.to_string()),
        );
    }
    out
}

/// Each placement's intervals, one line each.
pub fn intervals(summary: &Summary) -> String {
    let mut out = format!(
        "{}: {} (steady {:.0} DB reads/s)\n{:>8} {:>7} {:>8} {:>10} {:>8} {:>7}\n",
        summary.algorithm,
        summary.change,
        summary.steady_db_reads_per_second,
        "t (s)",
        "phase",
        "hit rate",
        "DB reads/s",
        "× steady",
        "errors"
    );
    for p in &summary.intervals {
        let phase = match p.phase {
            Phase::Warmup => "warm-up",
            Phase::Steady => "steady",
            Phase::After => "after",
        };
        let _ = writeln!(
            out,
            "{:>8.1} {:>7} {:>8} {:>10.0} {:>8.2} {:>7}",
            p.t,
            phase,
            percent(Some(p.hit_rate)),
            p.db_reads_per_second,
            p.db_multiplier,
            p.errors
        );
    }
    out
}

fn percent(x: Option<f64>) -> String {
    x.map_or("-".to_owned(), |x| format!("{:.1} %", 100.0 * x))
}

fn times(x: Option<f64>) -> String {
    x.map_or("-".to_owned(), |x| format!("{x:.2}×"))
}
