//! How long until every client holds the same ring after a change, on
//! gossip: `cargo bench -p ringwise-gossip --bench convergence [-- --runs
//! 20 --sizes 10,50 --ttl 10 --watchers 5]`.
//!
//! Per size N: N members (in-process chitchat nodes, each its own UDP
//! socket on loopback) and W watchers, converged first. Then each run:
//!
//! - **join**: one more in-process member; from `join` returning (its
//!   entry announced, after its settle wait, also shown) until every
//!   watcher holds the N + 1 members and one fingerprint;
//! - **leave**: its `shutdown` (announces `left`); until every watcher
//!   holds the N members again;
//! - **kill**: a member process (`ringwise-gossip-member`), converged,
//!   then SIGKILLed; **detect** is until the first watcher drops it (the
//!   failure detector), **kill** until every watcher agrees without it.
//!
//! Median and worst of the runs, in milliseconds. The ttl sets the
//! timing ([`Timing::for_ttl`]: gossip every ttl / 40, phi threshold 12),
//! so every figure scales with it; the default 10 s is the CLI's.

#[path = "../tests/support.rs"]
mod support;

use std::time::{Duration, Instant};

use ringwise_gossip::{Member, Registrar, Timing};
use support::{Process, agree, cluster, gossip, names, watchers};

/// The command line: `--runs`, `--sizes`, `--ttl`, `--watchers`.
struct Args {
    runs: usize,
    sizes: Vec<usize>,
    ttl: Duration,
    watchers: usize,
}

fn args() -> Args {
    let mut args = Args {
        runs: 20,
        sizes: vec![10, 50],
        ttl: Duration::from_secs(10),
        watchers: 5,
    };
    let given: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < given.len() {
        let value = given.get(i + 1).cloned().unwrap_or_default();
        match given[i].as_str() {
            "--runs" => args.runs = value.parse().expect("--runs N"),
            "--sizes" => {
                args.sizes = value
                    .split(',')
                    .map(|s| s.parse().expect("--sizes 10,50"))
                    .collect()
            }
            "--ttl" => args.ttl = Duration::from_secs(value.parse().expect("--ttl SECONDS")),
            "--watchers" => args.watchers = value.parse().expect("--watchers N"),
            // cargo bench passes --bench.
            _ => {
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    args
}

/// Polls until `condition` holds (every 2 ms); the time it took.
async fn wait(what: &str, deadline: Duration, mut condition: impl FnMut() -> bool) -> Duration {
    let started = Instant::now();
    while !condition() {
        assert!(
            started.elapsed() < deadline,
            "{what}: not within {deadline:?}"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    started.elapsed()
}

/// `median worst` of `samples`, in ms.
fn summary(samples: &mut [Duration]) -> String {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let median = samples[samples.len() / 2];
    let worst = samples[samples.len() - 1];
    format!("{:>8.0} {:>8.0}", ms(median), ms(worst))
}

async fn size(n: usize, args: &Args) {
    let ttl = args.ttl;
    let deadline = ttl * 6;
    let cluster = cluster(&format!("bench{n}"));
    let seed = gossip(&cluster, &[], ttl)
        .join("m0", Member::default())
        .await;
    let seed = seed.expect("the seed registers");
    let seeds = [seed.address()];
    let mut registrars: Vec<Registrar> = vec![seed];
    let joins: Vec<_> = (1..n)
        .map(|i| {
            let g = gossip(&cluster, &seeds, ttl);
            tokio::spawn(async move { g.join(&format!("m{i}"), Member::default()).await })
        })
        .collect();
    for join in joins {
        registrars.push(join.await.expect("joined").expect("registered"));
    }
    let watchers = watchers(&cluster, &seeds, ttl, args.watchers).await;
    let base: Vec<String> = (0..n).map(|i| format!("m{i}")).collect();
    wait("the first agreement", deadline, || agree(&watchers, &base)).await;
    let (mut announce, mut join, mut leave, mut detect, mut kill) =
        (vec![], vec![], vec![], vec![], vec![]);
    for run in 0..args.runs {
        let name = format!("j{run}");
        let mut with = base.clone();
        with.push(name.clone());
        let started = Instant::now();
        let joined = gossip(&cluster, &seeds, ttl)
            .join(&name, Member::default())
            .await;
        let joined = joined.expect("a join");
        announce.push(started.elapsed());
        join.push(wait("join", deadline, || agree(&watchers, &with)).await);
        let started = Instant::now();
        let leaving = tokio::spawn(joined.shutdown());
        wait("leave", deadline, || agree(&watchers, &base)).await;
        leave.push(started.elapsed());
        leaving.await.expect("left");

        let name = format!("k{run}");
        with.pop();
        with.push(name.clone());
        let mut process = Process::start(&cluster, &seeds, &name, ttl, "{}");
        wait("a process joins", deadline, || agree(&watchers, &with)).await;
        let started = Instant::now();
        process.signal("KILL");
        let gone = |w: &ringwise_gossip::Watcher| !names(w).contains(&name);
        detect.push(wait("detect", deadline, || watchers.iter().any(gone)).await);
        wait("kill", deadline, || agree(&watchers, &base)).await;
        kill.push(started.elapsed());
    }
    let runs = args.runs;
    println!(
        "{n:>4} members, {} watchers, {runs} runs  median    worst (ms)",
        args.watchers
    );
    println!(
        "  announce (join's settle wait)  {}",
        summary(&mut announce)
    );
    println!("  join   -> one fingerprint      {}", summary(&mut join));
    println!("  leave  -> one fingerprint      {}", summary(&mut leave));
    println!("  kill   -> first watcher drops  {}", summary(&mut detect));
    println!("  kill   -> one fingerprint      {}", summary(&mut kill));
    for watcher in watchers {
        watcher.shutdown().await;
    }
    for registrar in registrars {
        drop(registrar);
    }
}

fn main() {
    let args = args();
    let timing = Timing::for_ttl(args.ttl);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "gossip convergence: ttl {} s, gossip every {} ms, phi threshold {}; load {}",
        args.ttl.as_secs(),
        timing.gossip_interval.as_millis(),
        timing.phi_threshold,
        load.trim()
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    for &n in &args.sizes {
        runtime.block_on(size(n, &args));
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load at the end: {}", load.trim());
}
