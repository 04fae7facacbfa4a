//! `ringwise-cachebench`: the seed article's cache argument ("Сколько это
//! стоит") on real memcached servers, with ringwise doing the placement.
//!
//! For each placement given (`--algo modulo,ring,...`), with the same key
//! stream: start N memcached servers on loopback (or use `--servers`), fill
//! an SQLite database, fill the cache to its steady state, run a paced
//! read-through workload until the hit rate is steady, change membership
//! (`--add`, `--remove`, `--kill`), and keep running until the database
//! load is back within 10 % of steady. Prints each interval and the table:
//! the keys the change made cold, the database load right after the change
//! and at its peak (× steady), and the seconds it took to recover.
//!
//! Modules: `servers` (memcached and `ringwise join` children, killed by
//! pid), `cache` (memcache clients), `db` (SQLite), `keys` (seeded
//! streams, Zipf), `route` (modulo or a ringwise placement over the
//! members), `membership` (fixed or a live source), `proxy` (the placements
//! `proxy` and `proxy-cold`: a `ringwise-proxy` started here and its
//! cluster file), `check` (the stale-read check), `run` (workers and
//! phases), `report` (the table), `svg` (the chart).
//!
//! Cost: K keys in the database and the key-touched table; per request
//! one placement lookup (O(1) to O(log P)) and one or two round trips.

mod cache;
mod check;
mod db;
mod failure;
mod flags;
mod keys;
mod membership;
mod proxy;
mod report;
mod route;
mod run;
mod servers;
mod svg;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Parser, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};

use crate::cache::Cache;
use crate::check::Checker;
use crate::db::Database;
use crate::failure::Failure;
use crate::keys::Distribution;
use crate::membership::{Change, Fixed, Live, LiveTarget, Processes};
use crate::proxy::{Proxy, ProxyMembership};
use crate::report::Summary;
use crate::route::{Algo, Route};
use crate::run::{Membership, Shared, Timing, Workload};
use crate::servers::Memcached;

/// The article's cache argument on real memcached servers: database load
/// before and after a membership change, per placement.
#[derive(Debug, Parser)]
#[command(name = "ringwise-cachebench", version, after_help = failure::EXIT_CODES)]
// `--zipf -1` is a value out of range, not an unknown option `-1`.
#[command(allow_negative_numbers = true)]
struct Args {
    /// Servers before the change (started here on loopback).
    #[arg(long, default_value_t = 10, value_parser = flags::whole::<u32>(1, 256, "servers"))]
    nodes: u32,
    /// Use these running memcached servers (HOST:PORT,...) instead: the
    /// first ones are the members, the last K the ones `--add K` adds;
    /// each is flushed (flush_all) before every placement's run.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "LIST",
        conflicts_with = "nodes",
        value_parser = flags::host_port
    )]
    servers: Vec<String>,
    /// The memcached program.
    #[arg(long, value_name = "PATH", default_value = "memcached")]
    memcached: PathBuf,
    /// Memory of each memcached started here, in megabytes.
    /// memcached refuses less than 2 (its 1 MiB item limit must be at
    /// most half the memory).
    #[arg(long, value_name = "MB", default_value_t = 64,
          value_parser = flags::whole::<u32>(2, 65_536, "megabytes"))]
    memory: u32,
    /// Add K empty servers at the change (the default: 1).
    #[arg(long, value_name = "K", group = "what", value_parser = flags::whole::<usize>(1, 256, "servers"))]
    add: Option<usize>,
    /// Remove K servers at the change (they keep running, unused).
    #[arg(long, value_name = "K", group = "what", value_parser = flags::whole::<usize>(1, 256, "servers"))]
    remove: Option<usize>,
    /// SIGKILL K servers at the change; the placement drops them when
    /// membership says so (`--detect`, or their etcd lease).
    #[arg(long, value_name = "K", group = "what", value_parser = flags::whole::<usize>(1, 256, "servers"))]
    kill: Option<usize>,
    /// Without etcd: seconds from a kill until membership drops the server.
    #[arg(long, value_name = "S", default_value_t = 1.0, value_parser = flags::seconds())]
    detect: f64,
    /// Placements to compare: `modulo` (md5(key) % N, the article's
    /// baseline), any ringwise algorithm, and `proxy` / `proxy-cold`: a
    /// ring placed by a `ringwise-proxy` started here, with its warm-up
    /// window and without it (`--warm-up 0`).
    #[arg(long, value_delimiter = ',', default_value = "modulo,ring", value_parser = parse_algo)]
    algo: Vec<Algo>,
    /// Keys (rows in the database).
    #[arg(long, value_name = "K", default_value_t = 100_000,
          value_parser = flags::whole::<u64>(1, 50_000_000, "keys"))]
    keys: u64,
    /// Steady hit rate: the other requests are writes that invalidate.
    #[arg(long, value_name = "H", default_value_t = 0.95,
          value_parser = flags::number(|x| x > 0.0 && x < 1.0, "give a fraction above 0 and below 1 (0.95)"))]
    hit_rate: f64,
    /// Zipf exponent of the key popularity (0: uniform).
    #[arg(long, value_name = "S", default_value_t = 0.0,
          value_parser = flags::number(|x| (0.0..=10.0).contains(&x), "give an exponent from 0 (uniform) to 10"))]
    zipf: f64,
    /// Requests per second offered (open loop), over all threads.
    #[arg(long, value_name = "R", default_value_t = 10_000.0,
          value_parser = flags::number(|x| (1.0..=1e7).contains(&x), "give 1 to 10,000,000 requests per second"))]
    rps: f64,
    /// Worker threads (each with its own connections and key stream).
    #[arg(long, value_name = "T", default_value_t = 4, value_parser = flags::whole::<u32>(1, 256, "threads"))]
    threads: u32,
    /// Milliseconds added to every database read (a remote database).
    #[arg(long, value_name = "MS", default_value_t = 0.0,
          value_parser = flags::number(|x| (0.0..=10_000.0).contains(&x), "give 0 to 10,000 milliseconds"))]
    db_latency: f64,
    /// Bytes per value.
    #[arg(long, value_name = "B", default_value_t = 100,
          value_parser = flags::whole::<usize>(1, 1 << 20, "bytes"))]
    value_size: usize,
    /// Seconds per reported interval.
    #[arg(long, value_name = "S", default_value_t = 0.5, value_parser = flags::seconds())]
    interval: f64,
    /// Least seconds of paced warm-up before the change.
    #[arg(long, value_name = "S", default_value_t = 3.0, value_parser = flags::seconds())]
    warmup: f64,
    /// Most seconds of warm-up (the change happens then even if the hit
    /// rate is not steady); at least `--warmup`.
    #[arg(long, value_name = "S", default_value_t = 30.0, value_parser = flags::seconds())]
    warmup_max: f64,
    /// Least seconds after the change.
    #[arg(long, value_name = "S", default_value_t = 3.0, value_parser = flags::seconds())]
    after_min: f64,
    /// Most seconds after the change (the run ends earlier once the
    /// database load has been within 10 % of steady for 3 intervals); at
    /// least `--after-min`.
    #[arg(long, value_name = "S", default_value_t = 120.0, value_parser = flags::seconds())]
    after_max: f64,
    /// Seed of the key streams (the same for every placement).
    #[arg(long, default_value_t = 1, value_parser = flags::whole::<u64>(0, u64::MAX, ""))]
    seed: u64,
    /// Follow live membership: etcd://HOST:PORT[/PREFIX],
    /// zk://HOST:PORT[/PREFIX] or gossip://HOST:PORT[?seeds=...]. Each
    /// server joins with `ringwise join`.
    #[arg(long, value_name = "URL")]
    membership: Option<String>,
    /// The ringwise CLI for `ringwise join` (default: beside this program,
    /// else on PATH).
    #[arg(long, value_name = "PATH")]
    ringwise: Option<PathBuf>,
    /// How long a killed server stays, seconds (`--membership`): the
    /// registrars' lease TTL on etcd, session timeout on ZooKeeper, the
    /// failure detector's bound on gossip.
    #[arg(long, value_name = "S", default_value_t = 3, value_parser = flags::whole::<u64>(2, 86_400, "seconds"))]
    ttl: u64,
    /// The memcached proxy of the `proxy` placements (default: beside this
    /// program, else on PATH).
    #[arg(long, value_name = "PATH")]
    proxy: Option<PathBuf>,
    /// Keys of the stale-read check: versioned writes and reads back
    /// through the same path, at 5 % of --rps beside the workload; a read
    /// older than the last acknowledged write is stale (0: no check).
    #[arg(long, value_name = "KEYS", default_value_t = 1000,
          value_parser = flags::whole::<u64>(0, 1_000_000, "keys"))]
    check_stale: u64,
    /// Output: the text table or one JSON document.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Write a chart of hit rate and database load over time.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

fn parse_algo(name: &str) -> Result<Algo, String> {
    name.parse()
}

fn main() {
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(e) => clap_exit(e),
    };
    let stop = Arc::new(AtomicBool::new(false));
    on_signals(Arc::clone(&stop));
    let result = bench(&args, &stop);
    if stop.load(Ordering::Relaxed) {
        eprintln!("ringwise-cachebench: stopped by a signal; every server started here is stopped");
        std::process::exit(130);
    }
    match result {
        Ok(()) => {}
        Err(err) => {
            eprintln!("ringwise-cachebench: {err:#}");
            // Every error is given its code where it is made or caught
            // (`bench`); a failed write is 74; one without either is a
            // server the run lost on the way (69).
            std::process::exit(exit_code(&err));
        }
    }
}

/// The code of [`failure::Failure`] in `err`'s chain; else 74 (EX_IOERR,
/// as `ringwise`'s table) when writing an output failed: the chart, the
/// table or the JSON document; else 69.
fn exit_code(err: &anyhow::Error) -> i32 {
    if let Some(code) = failure::code_of(err) {
        return code.into();
    }
    let written = err
        .chain()
        .any(|e| e.is::<ringwise_sim::files::WriteError>() || e.is::<StdoutError>());
    if written { 74 } else { 69 }
}

/// Writing to stdout failed (the table, the JSON document, the intervals).
#[derive(Debug)]
struct StdoutError(std::io::Error);

impl std::fmt::Display for StdoutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot write to stdout: {}", self.0)
    }
}

impl std::error::Error for StdoutError {}

/// Writes `text` to stdout and flushes it: a full disk or a closed pipe is
/// an error, where `print!` would panic.
fn say_out(text: &str) -> Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| StdoutError(e).into())
}

/// Help and `--version` are output: written and checked (clap's own exit
/// ignores a failed write, so `--help > /dev/full` exited 0); a usage
/// error goes to stderr with clap's code.
fn clap_exit(e: clap::Error) -> ! {
    if e.use_stderr() {
        e.exit();
    }
    let text = match std::io::stdout().is_terminal() {
        true => e.render().ansi().to_string(),
        false => e.render().to_string(),
    };
    match say_out(&text) {
        Ok(()) => std::process::exit(0),
        Err(err) => {
            eprintln!("ringwise-cachebench: {err:#}");
            std::process::exit(74);
        }
    }
}

/// SIGINT and SIGTERM set `stop`: every loop ends, every server started
/// here is killed by its guard.
fn on_signals(stop: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        runtime.block_on(async {
            use tokio::signal::unix::{SignalKind, signal};
            let (Ok(mut int), Ok(mut term)) = (
                signal(SignalKind::interrupt()),
                signal(SignalKind::terminate()),
            ) else {
                return;
            };
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
            stop.store(true, Ordering::Relaxed);
        });
    });
}

/// Checks the options, then runs every placement in turn. Exit codes
/// (`failure`): the options 2, the scratch database and the outputs 74,
/// the servers and the membership source a placement's run needs 69.
fn bench(args: &Args, stop: &Arc<AtomicBool>) -> Result<()> {
    let change = change(args).map_err(Failure::usage)?;
    let (work, timing) = settings(args).map_err(Failure::usage)?;
    if args.membership.is_some()
        && let Some(algo) = args.algo.iter().find(|a| a.is_proxy())
    {
        return Err(Failure::usage(anyhow::anyhow!(
            "--algo {algo} with --membership: a proxy placement's membership is the cluster \
             file this program gives ringwise-proxy; run the proxy placements without \
             --membership"
        )));
    }
    let live = live_target(args).map_err(Failure::usage)?;
    let dir = scratch_dir().map_err(Failure::io)?;
    let result = (|| {
        let db = Database::create(
            &dir,
            work.keys,
            work.value_size,
            Duration::from_secs_f64(args.db_latency / 1000.0),
        )
        .map_err(Failure::io)?;
        let mut summaries = Vec::new();
        for &algo in &args.algo {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let summary = one(
                args,
                algo,
                change,
                &work,
                &timing,
                &db,
                live.as_ref(),
                stop,
                &dir,
            )
            .map_err(Failure::unavailable)?;
            if args.format == Format::Text {
                say_out(&format!("{}\n", report::intervals(&summary)))?;
            }
            summaries.push(summary);
        }
        output(args, &summaries).map_err(Failure::io)
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn change(args: &Args) -> Result<Change> {
    let change = match (args.add, args.remove, args.kill) {
        (_, Some(k), _) => Change::Remove(k),
        (_, _, Some(k)) => Change::Kill(k),
        (k, _, _) => Change::Add(k.unwrap_or(1)),
    };
    let total = if args.servers.is_empty() {
        args.nodes as usize + if let Change::Add(k) = change { k } else { 0 }
    } else {
        args.servers.len()
    };
    let n = total.checked_sub(if let Change::Add(k) = change { k } else { 0 });
    match (change, n) {
        (Change::Add(_), Some(n)) if n >= 1 => {}
        (Change::Add(k), _) => bail!(
            "--add {k} with --servers: list at least {} servers (the members, then the {k} added), \
             not {}",
            k + 1,
            args.servers.len()
        ),
        (Change::Remove(k) | Change::Kill(k), Some(n)) if k < n => {}
        (change, n) => {
            let (flag, k) = match change {
                Change::Kill(k) => ("--kill", k),
                Change::Remove(k) | Change::Add(k) => ("--remove", k),
            };
            bail!(
                "{flag} {k}: the cluster has only {} servers; at least one must stay (give \
                 {flag} 1 to {})",
                n.unwrap_or(0),
                n.unwrap_or(0).saturating_sub(1)
            )
        }
    }
    if matches!(change, Change::Kill(_)) && !args.servers.is_empty() {
        bail!("--kill stops server processes: it needs servers started here, not --servers");
    }
    Ok(change)
}

/// The workload and the timing. Each value's own range was checked when
/// it was parsed (`flags`); what is left are the pairs of options.
fn settings(args: &Args) -> Result<(Workload, Timing)> {
    let positive = |x: f64| Duration::from_secs_f64(x);
    for (least, least_flag, most, most_flag) in [
        (args.warmup, "--warmup", args.warmup_max, "--warmup-max"),
        (args.after_min, "--after-min", args.after_max, "--after-max"),
    ] {
        if least > most {
            bail!(
                "{least_flag} {least} is more than {most_flag} {most}: give {least_flag} at \
                 most {most_flag}"
            );
        }
    }
    let work = Workload {
        keys: args.keys,
        hit_rate: args.hit_rate,
        distribution: Arc::new(Distribution::new(args.keys, args.zipf)),
        rps: args.rps,
        threads: args.threads as usize,
        value_size: args.value_size,
        seed: args.seed,
    };
    let timing = Timing {
        interval: positive(args.interval),
        warmup: positive(args.warmup),
        warmup_max: positive(args.warmup_max),
        after_min: positive(args.after_min),
        after_max: positive(args.after_max),
    };
    Ok((work, timing))
}

fn live_target(args: &Args) -> Result<Option<LiveTarget>> {
    let Some(url) = &args.membership else {
        return Ok(None);
    };
    if !args.servers.is_empty() {
        bail!("--membership starts the servers it registers: it cannot use --servers");
    }
    let ringwise = args.ringwise.clone().unwrap_or_else(|| {
        let beside = std::env::current_exe()
            .ok()
            .and_then(|exe| Some(exe.parent()?.join("ringwise")))
            .filter(|p| p.exists());
        beside.unwrap_or_else(|| PathBuf::from("ringwise"))
    });
    LiveTarget::parse(url, ringwise, args.ttl)
        .map(Some)
        .context("--membership")
}

/// One placement: servers, membership, preload, the paced run, summary.
#[allow(clippy::too_many_arguments, reason = "the run's parts, each used once")]
fn one(
    args: &Args,
    algo: Algo,
    change: Change,
    work: &Workload,
    timing: &Timing,
    db: &Database,
    live: Option<&LiveTarget>,
    stop: &Arc<AtomicBool>,
    dir: &std::path::Path,
) -> Result<Summary> {
    let (addresses, processes) = servers(args, change)?;
    let n = change.initial(addresses.len());
    let listed = addresses
        .iter()
        .zip(&processes)
        .map(|(address, p)| report::Server {
            address: address.clone(),
            pid: p.as_ref().map(Memcached::pid),
        })
        .collect();
    let connections = work.threads as u32 + check::THREADS as u32;
    let mut caches = addresses
        .iter()
        .map(|a| Cache::connect(a, connections))
        .collect::<Result<Vec<_>>>()?;
    if !args.servers.is_empty() {
        caches.iter().try_for_each(Cache::flush)?;
    }
    let started = match algo {
        Algo::Proxy { warm } => {
            let program = proxy::program(args.proxy.as_deref());
            let proxy = Proxy::start(&program, dir, &algo.to_string(), warm, &addresses[..n])?;
            caches = vec![Cache::connect(&proxy.address, connections)?];
            Some(proxy)
        }
        _ => None,
    };
    let proxy_server = started.as_ref().map(|p| report::Server {
        address: p.address.clone(),
        pid: Some(p.pid()),
    });
    let progress = progress_bar(args, algo, timing);
    let initial = match live {
        Some(_) => Route::build(algo, &[])?,
        None => Route::build(algo, &membership::first(n))?,
    };
    let shared = Shared::new(initial, caches, work.keys, Arc::clone(stop));
    let mut membership: Box<dyn Membership> = match (live, started) {
        (_, Some(proxy)) => Box::new(ProxyMembership::new(
            proxy,
            n,
            change,
            addresses.clone(),
            processes,
            Duration::from_secs_f64(args.detect),
        )),
        (Some(target), None) => {
            let mut live = Live::start(algo, n, change, target, processes, addresses.clone())?;
            progress.set_message("waiting for the membership source to list the servers");
            live.wait_for(&shared, Duration::from_secs(20))?;
            Box::new(live)
        }
        (None, None) => Box::new(Fixed::new(
            algo,
            n,
            change,
            processes,
            Duration::from_secs_f64(args.detect),
        )),
    };
    progress.set_message("filling the cache to its steady state");
    run::preload(&shared, work)?;
    let checker =
        (args.check_stale > 0).then(|| Checker::new(args.check_stale, work.rps, work.seed));
    if let Some(checker) = &checker {
        checker.preload(&shared)?;
    }
    let before = shared.route.load_full();
    let checks: Vec<Box<dyn Fn() + Sync>> = match &checker {
        Some(checker) => (0..check::THREADS)
            .map(|t| {
                let shared = &shared;
                Box::new(move || checker.worker(shared, t)) as Box<dyn Fn() + Sync>
            })
            .collect(),
        None => Vec::new(),
    };
    let side: Vec<&(dyn Fn() + Sync)> = checks.iter().map(|f| f.as_ref()).collect();
    let outcome = run::drive(
        &shared,
        db,
        work,
        timing,
        membership.as_mut(),
        &progress,
        &side,
    )?;
    // Let a pending route (a killed server's detection) land.
    membership.tick(&shared, Some(Duration::from_secs(u64::MAX >> 2)))?;
    let after = shared.route.load_full();
    let fallback_hits = membership.fallback_hits()?;
    drop(membership);
    progress.finish_and_clear();
    if outcome.change_at.is_none() {
        bail!("stopped before the change");
    }
    let moved = match algo {
        // The proxy's placement over its file's nodes (the servers'
        // addresses), before and after.
        Algo::Proxy { .. } => {
            proxy::moved(&addresses[..n], &addresses[..change.after(n)], work.keys)?
        }
        _ => moved(&before, &after, work.keys),
    };
    let extras = report::Extras {
        servers: listed,
        proxy: proxy_server,
        fallback_hits,
        stale_check: checker.as_ref().map(Checker::checked),
    };
    Ok(report::summarize(
        &algo.to_string(),
        &outcome,
        moved,
        extras,
    ))
}

/// The servers' addresses and, for those started here, their processes.
fn servers(args: &Args, change: Change) -> Result<(Vec<String>, Processes)> {
    if !args.servers.is_empty() {
        args.servers
            .iter()
            .try_for_each(|a| servers::check_running(a))?;
        let processes = args.servers.iter().map(|_| None).collect();
        return Ok((args.servers.clone(), processes));
    }
    let extra = if let Change::Add(k) = change { k } else { 0 };
    let mut processes = Processes::new();
    for _ in 0..args.nodes as usize + extra {
        processes.push(Some(Memcached::start(&args.memcached, args.memory)?));
    }
    let addresses = processes
        .iter()
        .flatten()
        .map(|p| p.address.clone())
        .collect();
    Ok((addresses, processes))
}

/// The fraction of the K keys whose server differs between two routes.
fn moved(before: &Route, after: &Route, keys: u64) -> f64 {
    let moved = (0..keys)
        .filter(|&i| {
            let key = db::key(i);
            before.server(&key) != after.server(&key)
        })
        .count();
    moved as f64 / keys.max(1) as f64
}

/// A bar over the run's time bound on a terminal, hidden otherwise.
fn progress_bar(args: &Args, algo: Algo, timing: &Timing) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bound = (timing.warmup_max + timing.after_max).as_secs();
    let bar = ProgressBar::new(bound);
    let style = ProgressStyle::with_template("{prefix:>12} [{elapsed:>4}] {bar:20} {msg}")
        .map(|s| s.progress_chars("=> "));
    if let Ok(style) = style {
        bar.set_style(style);
    }
    bar.set_prefix(algo.to_string());
    bar.enable_steady_tick(Duration::from_millis(200));
    let _ = args;
    bar
}

/// The table or JSON document, and the chart.
fn output(args: &Args, summaries: &[Summary]) -> Result<()> {
    if let Some(path) = &args.svg {
        let chart = svg::chart(summaries);
        let plain = ringwise_sim::files::Mode::Plain;
        ringwise_sim::files::write_atomically(path, plain, |out| out.write_all(chart.as_bytes()))?;
    }
    match args.format {
        Format::Text => say_out(&report::table(summaries))?,
        Format::Json => {
            let document = serde_json::json!({
                "version": 1,
                "servers_before": summaries.first().map(|_| change_counts(args)),
                "keys": args.keys,
                "hit_rate": args.hit_rate,
                "zipf": args.zipf,
                "rps": args.rps,
                "db_latency_ms": args.db_latency,
                "membership": args.membership.as_ref().and_then(|m| m.split_once("://")).map_or(
                    "fixed",
                    |(scheme, _)| match scheme {
                        "zk" => "zookeeper",
                        other => other,
                    }
                ),
                "algorithms": summaries,
            });
            say_out(&format!("{}\n", serde_json::to_string_pretty(&document)?))?;
        }
    }
    Ok(())
}

fn change_counts(args: &Args) -> usize {
    match change(args) {
        Ok(c) => c.initial(if args.servers.is_empty() {
            args.nodes as usize + if let Change::Add(k) = c { k } else { 0 }
        } else {
            args.servers.len()
        }),
        Err(_) => 0,
    }
}

/// A fresh directory for the database.
fn scratch_dir() -> Result<PathBuf> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!(
        "ringwise-cachebench-{}-{nanos}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).with_context(|| format!("create {}", dir.display()))?;
    Ok(dir)
}
