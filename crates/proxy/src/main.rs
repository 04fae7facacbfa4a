//! The `ringwise-proxy` binary: flags, the pool, the accept loop.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use ringwise_proxy::client::{self, Settings};
use ringwise_proxy::pool::{Pool, Source};
use ringwise_proxy::request::Limits;
use tokio::net::TcpListener;

/// A memcached proxy: every key to its owner under any ringwise placement.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Address to listen on (port 0: any free port; the address taken is
    /// printed on stderr as `listening on ADDR`).
    #[arg(long, default_value = "127.0.0.1:22122", value_name = "ADDR")]
    listen: String,
    /// A ringwise cluster file whose node names are the servers' host:port.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "nutcracker",
        required_unless_present = "nutcracker"
    )]
    cluster: Option<PathBuf>,
    /// A twemproxy nutcracker.yml: its pool routes exactly as nutcracker does.
    #[arg(long, value_name = "FILE")]
    nutcracker: Option<PathBuf>,
    /// Which pool of the nutcracker.yml (needed when it has several).
    #[arg(long, value_name = "NAME", requires = "nutcracker")]
    pool: Option<String>,
    /// Connections to each server (a client uses one of them, so its
    /// requests to a server stay in order).
    #[arg(long, default_value_t = 2, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    server_connections: u16,
    /// Milliseconds an answer may take before the client gets a SERVER_ERROR.
    #[arg(long, default_value_t = 1000, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    timeout: u64,
    /// Worker threads.
    #[arg(long, default_value_t = 2, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    threads: u16,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let read = |path: &PathBuf| {
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
    };
    let source = match (&args.cluster, &args.nutcracker) {
        (Some(path), _) => Source::Cluster(read(path)?),
        (None, Some(path)) => Source::Nutcracker {
            text: read(path)?,
            pool: args.pool.clone(),
        },
        (None, None) => anyhow::bail!("give --cluster FILE or --nutcracker FILE"),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(usize::from(args.threads))
        .enable_all()
        .build()
        .context("starting the runtime")?;
    runtime.block_on(run(args, source))
}

async fn run(args: Args, source: Source) -> anyhow::Result<()> {
    let timeout = Duration::from_millis(args.timeout);
    let pool = Pool::start(&source, usize::from(args.server_connections), timeout)
        .context("reading the pool")?;
    let pool = Arc::new(pool);
    let listener = TcpListener::bind(&args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    eprintln!("listening on {}", listener.local_addr()?);
    let settings = Settings {
        limits: Limits::default(),
        timeout,
    };
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                // A failed accept (out of descriptors) must not stop the
                // proxy: wait a little and go on.
                match accepted {
                    Ok((stream, _)) => {
                        tokio::spawn(client::serve(stream, pool.clone(), settings));
                    }
                    Err(err) => {
                        eprintln!("accept failed: {err}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
            }
            _ = tokio::signal::ctrl_c() => return Ok(()),
        }
    }
}
