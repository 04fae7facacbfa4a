//! Membership from a live source (`--membership etcd://...`, `zk://...`,
//! `gossip://...`): the cluster the source's watcher publishes becomes the
//! routing ([`Pool::change_to`]) each time it changes, with the warm-up
//! window as for a file. A member's `address` is the server it reaches
//! (`ringwise join --address HOST:PORT`); a member without one is reached
//! at its name.
//!
//! How it behaves when the source fails: the watcher keeps the last
//! cluster it read and reconnects with back-off (`ringwise-membership`),
//! so the proxy routes by the last known membership until the source is
//! back; a cluster with no member keeps the routing in force (a proxy
//! with no server answers nothing useful), reported on standard error.
//!
//! The source is followed on a thread of its own ([`spawn`]), so its
//! builds never stall the clients.
//!
//! Cost: one placement build per published change (the watcher's, on its
//! thread), one routing swap.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use ringwise_membership::{Cluster, Options, Scheme, Source, Url, Watcher};
use tokio::sync::{mpsc, oneshot};

use crate::pool::{Membership, Pool};

/// The source `url` names; `ttl` bounds liveness (ZooKeeper's session,
/// gossip's dead-node timeout).
pub fn open(url: &str, ttl: Duration) -> anyhow::Result<Box<dyn Source>> {
    let url: Url = url
        .parse()
        .map_err(|e| anyhow!("--membership {url}: {e}"))?;
    let source: Box<dyn Source> = match url.scheme {
        Scheme::Etcd => {
            let base = ringwise_etcd::Connection::parse("http://127.0.0.1:2379")
                .map_err(|e| anyhow!("{e}"))?;
            Box::new(ringwise_etcd::Etcd::from_url(&url, base).map_err(|e| anyhow!("{e}"))?)
        }
        Scheme::ZooKeeper => Box::new(
            ringwise_zookeeper::ZooKeeper::from_url(&url)
                .map_err(|e| anyhow!("{e}"))?
                .with_session_timeout(ttl),
        ),
        Scheme::Gossip => {
            Box::new(ringwise_gossip::Gossip::from_url(&url, ttl).map_err(|e| anyhow!("{e}"))?)
        }
        _ => bail!("--membership {url}: give etcd://, zk:// or gossip://"),
    };
    Ok(source)
}

/// Starts watching `source`; the watcher and the first non-empty cluster
/// it read (waiting up to `wait` for one).
pub async fn first(source: &dyn Source, wait: Duration) -> anyhow::Result<(Watcher, Arc<Cluster>)> {
    let watcher = source
        .watch(Options::default())
        .await
        .map_err(|e| anyhow!("--membership: {e}"))?;
    let mut changes = watcher.changes();
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let cluster = watcher.load().placement.clone();
        if cluster.placement().is_some() {
            return Ok((watcher, cluster));
        }
        tokio::select! {
            _ = changes.changed() => {}
            () = tokio::time::sleep_until(deadline) => {
                bail!("--membership: no member within {} s; start the servers' `ringwise join` first", wait.as_secs())
            }
        }
    }
}

/// The membership `cluster` describes; `None` with no member.
pub fn routing_of(cluster: &Cluster) -> Option<Membership> {
    let keyed = cluster.placement()?.clone();
    let nodes = ringwise::Placement::nodes(keyed.placement());
    let mut addresses = Vec::with_capacity(nodes.len());
    for node in nodes.iter() {
        let member = cluster.member(&node.name);
        let address = member.and_then(|m| m.member.address.clone());
        addresses.push(address.unwrap_or_else(|| node.name.clone()));
    }
    let fingerprint = cluster.fingerprint;
    Some(Membership {
        keyed,
        addresses,
        fingerprint,
    })
}

/// Opens `url` and follows it on a thread of its own, with a runtime of
/// its own: the watcher's reads and placement builds (a cluster of
/// thousands of members) never run on the threads that serve clients.
/// The first non-empty membership (waiting up to `wait`), and the later
/// ones as they come.
pub async fn spawn(
    url: String,
    ttl: Duration,
    wait: Duration,
) -> anyhow::Result<(Membership, mpsc::Receiver<Membership>)> {
    let (first_tx, first_rx) = oneshot::channel::<anyhow::Result<Membership>>();
    let (tx, rx) = mpsc::channel(1);
    std::thread::Builder::new()
        .name("membership".into())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            let runtime = match runtime {
                Ok(runtime) => runtime,
                Err(err) => {
                    let _ = first_tx.send(Err(anyhow!("starting the membership runtime: {err}")));
                    return;
                }
            };
            runtime.block_on(watch(url, ttl, wait, first_tx, tx));
        })
        .context("starting the membership thread")?;
    let members = first_rx.await.context("the membership thread stopped")??;
    Ok((members, rx))
}

/// The membership thread's work ([`spawn`]).
async fn watch(
    url: String,
    ttl: Duration,
    wait: Duration,
    first_tx: oneshot::Sender<anyhow::Result<Membership>>,
    tx: mpsc::Sender<Membership>,
) {
    let opened = async {
        let source = open(&url, ttl)?;
        let (watcher, cluster) = first(source.as_ref(), wait).await?;
        let members = routing_of(&cluster).context("an empty cluster")?;
        anyhow::Ok((source, watcher, members))
    };
    let (_source, watcher, members) = match opened.await {
        Ok(opened) => opened,
        Err(err) => {
            let _ = first_tx.send(Err(err));
            return;
        }
    };
    if first_tx.send(Ok(members)).is_err() {
        return;
    }
    let mut changes = watcher.changes();
    loop {
        if changes.changed().await.is_err() {
            eprintln!(
                "ringwise-proxy: the membership watcher stopped; routing by the last membership"
            );
            return;
        }
        let cluster = watcher.load().placement.clone();
        match routing_of(&cluster) {
            Some(members) => {
                if tx.send(members).await.is_err() {
                    return;
                }
            }
            None => eprintln!("ringwise-proxy: the membership lists no member; routing unchanged"),
        }
    }
}

/// Makes every membership from [`spawn`] the routing, on the pool's own
/// runtime (a change is a table and a flush of the joining servers).
pub async fn follow(pool: Arc<Pool>, mut changes: mpsc::Receiver<Membership>) {
    while let Some(members) = changes.recv().await {
        if pool.change_to(members).await {
            eprintln!(
                "ringwise-proxy: the membership changed the routing (epoch {})",
                pool.routing().epoch
            );
        }
    }
}
