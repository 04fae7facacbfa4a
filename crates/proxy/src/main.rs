//! The `ringwise-proxy` binary: flags, the pool, the accept loop.
//!
//! With `--nutcracker`, the pool's own directives are the defaults, as
//! nutcracker reads them: `listen`, `timeout`, `server_connections`,
//! `auto_eject_hosts`, `server_failure_limit`, `server_retry_timeout`; a
//! flag given overrides its directive.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Parser;
use ringwise_proxy::client::{self, Settings};
use ringwise_proxy::hot::{self, HotKeys};
use ringwise_proxy::pool::{self, Options, Pool, Source, nutcracker_directives};
use ringwise_proxy::reload::{self, Watched};
use ringwise_proxy::request::Limits;
use ringwise_proxy::server::Ejection;
use ringwise_proxy::{live, stats, sweep};
use tokio::net::TcpListener;

/// A memcached proxy: every key to its owner under any ringwise placement.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Address to listen on [default: the pool's `listen`, else
    /// 127.0.0.1:22122]. The address taken is printed on stderr as
    /// `listening on ADDR`.
    #[arg(long, value_name = "ADDR")]
    listen: Option<String>,
    /// A ringwise cluster file whose node names are the servers' host:port.
    /// Read again on SIGHUP and when it changes.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with_all = ["nutcracker", "membership"],
        required_unless_present_any = ["nutcracker", "membership"]
    )]
    cluster: Option<PathBuf>,
    /// A twemproxy nutcracker.yml: its pool routes exactly as nutcracker
    /// does. Read again on SIGHUP and when it changes.
    #[arg(long, value_name = "FILE", conflicts_with = "membership")]
    nutcracker: Option<PathBuf>,
    /// A live membership source: etcd://HOST:PORT/PREFIX, zk://HOST:PORT/PREFIX
    /// or gossip://HOST:PORT?... (the servers joined with `ringwise join
    /// --address HOST:PORT`); the proxy follows every change.
    #[arg(long, value_name = "URL")]
    membership: Option<String>,
    /// Seconds: ZooKeeper's session and gossip's dead-node bound (--membership).
    #[arg(long, default_value_t = 10, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    membership_ttl: u64,
    /// Which pool of the nutcracker.yml (needed when it has several).
    #[arg(long, value_name = "NAME", requires = "nutcracker")]
    pool: Option<String>,
    /// Connections to each server (a client uses one of them, so its
    /// requests to a server stay in order) [default: the pool's
    /// `server_connections`, else 1, as nutcracker's].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    server_connections: Option<u32>,
    /// Milliseconds an answer may take before the client gets a
    /// SERVER_ERROR [default: the pool's `timeout`, else 1000].
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    timeout: Option<u64>,
    /// Take a server out of the ring after `--server-failure-limit`
    /// failures in a row, for `--server-retry-timeout` [default: the
    /// pool's `auto_eject_hosts`, else false].
    #[arg(long, value_name = "BOOL")]
    auto_eject_hosts: Option<bool>,
    /// [default: the pool's `server_failure_limit`, else 2]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    server_failure_limit: Option<u32>,
    /// Milliseconds [default: the pool's `server_retry_timeout`, else 30000].
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    server_retry_timeout: Option<u64>,
    /// Seconds after a membership change during which a moved key missing
    /// on its new server is read from its previous one and copied (0: off).
    #[arg(long, default_value_t = 60, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(0..=86_400))]
    warm_up: u64,
    /// Milliseconds between checks of the membership file.
    #[arg(long, default_value_t = 1000, value_name = "MS", value_parser = clap::value_parser!(u64).range(10..=3_600_000))]
    reload_interval: u64,
    /// Serve the per-server counters as JSON on this address.
    #[arg(long, value_name = "ADDR")]
    stats: Option<String>,
    /// Print the counters as one JSON line every SECONDS on stdout.
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    stats_interval: Option<u64>,
    /// Spread the reads of a hot key over its first N replicas with
    /// bounded loads, and delete every written key on its other N - 1
    /// (0 or 1: off). See docs/proxy.md, "Hot keys".
    #[arg(long, default_value_t = 0, value_name = "N", value_parser = clap::value_parser!(u16).range(0..=16))]
    hot_keys: u16,
    /// The share of reads in a half-second period that makes a key hot.
    #[arg(long, default_value_t = 0.05, value_name = "SHARE", value_parser = share)]
    hot_share: f64,
    /// ε of the load bound: a replica takes a hot read while its requests
    /// this period are under (1 + ε) × the mean + 1.
    #[arg(long, default_value_t = 0.25, value_name = "EPSILON", value_parser = epsilon)]
    hot_epsilon: f64,
    /// Worker threads. One, as nutcracker, by default: every request
    /// passes between a few tasks, and on two cores a second thread made
    /// those hand-offs cross threads (BENCHMARKS.md, "The proxy beside
    /// nutcracker"); for more cores give more, or run one proxy per core.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    threads: u16,
}

fn share(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|x| *x > 0.0 && *x <= 1.0)
        .ok_or_else(|| "give a share above 0 and at most 1, e.g. 0.05".into())
}

fn epsilon(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|x| *x > 0.0 && *x <= 100.0)
        .ok_or_else(|| "give an epsilon above 0 and at most 100, e.g. 0.25".into())
}

/// The pool's directives that the flags default to.
#[derive(Debug, Default)]
struct Directives {
    listen: Option<String>,
    timeout: Option<u64>,
    server_connections: Option<u32>,
    auto_eject_hosts: Option<bool>,
    server_failure_limit: Option<u32>,
    server_retry_timeout: Option<u64>,
}

fn directives(list: &[(String, String, usize)]) -> anyhow::Result<Directives> {
    let mut d = Directives::default();
    for (name, value, line) in list {
        let bad = || format!("line {line}: `{name}: {value}` is not valid");
        match name.as_str() {
            "listen" => d.listen = Some(value.clone()),
            "timeout" => d.timeout = Some(value.parse().with_context(bad)?),
            "server_connections" => d.server_connections = Some(value.parse().with_context(bad)?),
            "auto_eject_hosts" => d.auto_eject_hosts = Some(value.parse().with_context(bad)?),
            "server_failure_limit" => {
                d.server_failure_limit = Some(value.parse().with_context(bad)?)
            }
            "server_retry_timeout" => {
                d.server_retry_timeout = Some(value.parse().with_context(bad)?)
            }
            _ => {}
        }
    }
    Ok(d)
}

/// Where the membership comes from.
enum Start {
    /// A file followed by [`reload::follow`], with its text as read.
    File(Watched, String),
    /// A live source's URL.
    Live(String),
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let (start, file) = match (&args.cluster, &args.nutcracker, &args.membership) {
        (_, _, Some(url)) => (Start::Live(url.clone()), Directives::default()),
        (Some(path), _, _) => (
            Start::File(watched(path, None), read(path)?),
            Directives::default(),
        ),
        (None, Some(path), _) => {
            let text = read(path)?;
            let list = nutcracker_directives(&text, args.pool.as_deref())?;
            let file = directives(&list).with_context(|| format!("in {}", path.display()))?;
            let start = Start::File(watched(path, Some(args.pool.clone())), text);
            (start, file)
        }
        (None, None, None) => bail!("give --cluster FILE, --nutcracker FILE or --membership URL"),
    };
    // One thread: one event loop that also accepts, as nutcracker's, not
    // a scheduler with one worker and a thread that parks in `block_on`
    // beside it (with memaslap's 8 connections on a busy machine that
    // one waited where nutcracker did not: BENCHMARKS.md).
    let runtime = match args.threads {
        1 => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
        n => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(usize::from(n))
            .enable_all()
            .build(),
    }
    .context("starting the runtime")?;
    runtime.block_on(run(args, file, start))
}

fn read(path: &Path) -> anyhow::Result<String> {
    reload::read_capped(path).with_context(|| format!("cannot read {}", path.display()))
}

fn watched(path: &Path, nutcracker: Option<Option<String>>) -> Watched {
    Watched {
        path: path.to_path_buf(),
        nutcracker,
    }
}

async fn run(args: Args, file: Directives, start: Start) -> anyhow::Result<()> {
    let timeout = Duration::from_millis(args.timeout.or(file.timeout).unwrap_or(1000).max(1));
    let eject = args
        .auto_eject_hosts
        .or(file.auto_eject_hosts)
        .unwrap_or(false);
    let failure_limit = args
        .server_failure_limit
        .or(file.server_failure_limit)
        .unwrap_or(2);
    let retry = args
        .server_retry_timeout
        .or(file.server_retry_timeout)
        .unwrap_or(30_000);
    let connections = args
        .server_connections
        .or(file.server_connections)
        .unwrap_or(1);
    let options = Options {
        connections: connections as usize,
        connect_timeout: timeout,
        ejection: Ejection {
            failure_limit: if eject { failure_limit.max(1) } else { 0 },
            retry_timeout: Duration::from_millis(retry),
        },
        warm_up: Duration::from_secs(args.warm_up),
        hot_keys: (args.hot_keys > 1).then_some(HotKeys {
            replicas: usize::from(args.hot_keys),
            share: args.hot_share,
            epsilon: args.hot_epsilon,
        }),
        timeout,
    };
    let pool = match start {
        Start::File(watched, text) => {
            let source = match &watched.nutcracker {
                None => Source::Cluster(text.clone()),
                Some(pool) => Source::Nutcracker {
                    text: text.clone(),
                    pool: pool.clone(),
                },
            };
            let pool = Arc::new(Pool::start(&source, options).context("reading the pool")?);
            let interval = Duration::from_millis(args.reload_interval);
            tokio::spawn(reload::follow(pool.clone(), watched, text, interval));
            pool
        }
        Start::Live(url) => {
            let ttl = Duration::from_secs(args.membership_ttl);
            let (members, changes) = live::spawn(url, ttl, Duration::from_secs(30)).await?;
            let pool = Arc::new(Pool::start_with(members, options));
            tokio::spawn(live::follow(pool.clone(), changes));
            pool
        }
    };
    tokio::spawn(pool::health(pool.clone()));
    tokio::spawn(sweep::follow(pool.clone()));
    let listen = args
        .listen
        .or(file.listen)
        .unwrap_or_else(|| "127.0.0.1:22122".into());
    let listener = TcpListener::bind(&listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    if let Some(address) = &args.stats {
        let stats = TcpListener::bind(address)
            .await
            .with_context(|| format!("cannot listen on --stats {address}"))?;
        eprintln!("stats on {}", stats.local_addr()?);
        tokio::spawn(stats::serve(stats, pool.clone()));
    }
    if let Some(seconds) = args.stats_interval {
        tokio::spawn(stats::lines(pool.clone(), Duration::from_secs(seconds)));
    }
    if pool.hot().is_some() {
        let counted = pool.clone();
        let servers = move || counted.routing().servers().into_iter().cloned().collect();
        tokio::spawn(hot::periods(servers));
    }
    eprintln!("listening on {}", listener.local_addr()?);
    let settings = Settings {
        limits: Limits::default(),
        timeout,
    };
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    tokio::spawn(client::serve(stream, pool.clone(), settings));
                }
                // Out of descriptors, say: wait a little and go on.
                Err(err) => {
                    eprintln!("ringwise-proxy: accept failed: {err}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            _ = tokio::signal::ctrl_c() => return Ok(()),
        }
    }
}
