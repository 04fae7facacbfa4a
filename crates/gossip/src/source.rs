//! [`Gossip`]: this crate behind `ringwise_membership::Source`, what the
//! commands take as `--membership gossip://HOST:PORT?seeds=HOST:PORT,...`.
//!
//! The URL: `HOST:PORT` is this process's own UDP address (port 0 picks a
//! free one; bound first, then advertised); `seeds` the peers to join
//! through (any live participant: a member or a watcher); `cluster` the
//! chitchat cluster id, which keeps two clusters on one network apart
//! (default: the URL's path without its `/`, so `ringwise`, or `caches`
//! for `gossip://127.0.0.1:7946/caches`). Every operation (register,
//! watch, read, configure) runs a node of its own on that address, so a
//! fixed port serves one of them per process.

use std::time::Duration;

use ringwise_membership::{
    Cluster, Error, Member, Options, Pending, Registration, Scheme, Source, Url, Watcher,
    check_host, check_ttl,
};
use serde_json::{Map, Value};

use crate::registrar::Registrar;

/// A gossip cluster, as one participant joins it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gossip {
    /// This process's own UDP address (`HOST:PORT`, port 0 for any).
    pub listen: String,
    /// The peers to join through (`HOST:PORT` each).
    pub seeds: Vec<String>,
    /// The chitchat cluster id.
    pub cluster: String,
    /// The failure-detection bound: a killed member leaves every view
    /// within it ([`crate::Timing::for_ttl`]). Every participant should
    /// use the same.
    pub ttl: Duration,
}

impl Gossip {
    /// The cluster `cluster` reached through `seeds`, this process
    /// listening on `listen`.
    pub fn new(listen: &str, seeds: Vec<String>, cluster: &str, ttl: Duration) -> Self {
        Gossip {
            listen: listen.to_owned(),
            seeds,
            cluster: cluster.to_owned(),
            ttl,
        }
    }

    /// The cluster a `gossip://` URL names.
    pub fn from_url(url: &Url, ttl: Duration) -> Result<Self, Error> {
        let bad = |option, message: String| Error::InvalidOption { option, message };
        if url.scheme != Scheme::Gossip {
            return Err(bad("membership", format!("{url}: not a gossip:// URL")));
        }
        for (key, _) in &url.query {
            if key != "seeds" && key != "cluster" {
                return Err(bad(
                    "membership",
                    format!(
                        "{url}: unknown query key `{key}`; a gossip URL takes seeds and cluster"
                    ),
                ));
            }
        }
        let seeds: Vec<String> = url
            .get("seeds")
            .unwrap_or("")
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        for seed in &seeds {
            check_host(seed).map_err(|why| bad("seeds", format!("seed `{seed}`: {why}")))?;
        }
        let cluster = match url.get("cluster") {
            Some("") => return Err(bad("membership", format!("{url}: the cluster id is empty"))),
            Some(cluster) => cluster.to_owned(),
            None => url.prefix.trim_start_matches('/').to_owned(),
        };
        let gossip = Gossip::new(&url.hosts[0], seeds, &cluster, ttl);
        gossip.check()?;
        Ok(gossip)
    }

    /// Refuses a ttl the failure detector cannot keep (whole seconds,
    /// at least 2) and a bad address.
    pub fn check(&self) -> Result<(), Error> {
        check_ttl(
            self.ttl,
            2,
            "the failure detector needs a few gossip rounds",
        )?;
        check_host(&self.listen).map_err(|why| Error::InvalidOption {
            option: "membership",
            message: format!("own address `{}`: {why}", self.listen),
        })?;
        if self.cluster.is_empty() {
            return Err(Error::InvalidOption {
                option: "membership",
                message: "the cluster id is empty".into(),
            });
        }
        Ok(())
    }

    /// The prefix the view's keys are named under (`/CLUSTER`), in
    /// [`Cluster::members`] and `skipped`.
    pub fn prefix(&self) -> String {
        format!("/{}", self.cluster)
    }

    /// Registers `name` and returns the registrar itself (its address).
    pub async fn join(&self, name: &str, member: Member) -> Result<Registrar, crate::Error> {
        Registrar::register(self, name, member).await
    }
}

impl Registration for Registrar {
    fn is_registered(&self) -> bool {
        Registrar::is_registered(self)
    }

    fn describe(&self) -> String {
        Registrar::describe(self)
    }

    fn shutdown(self: Box<Self>) -> Pending<'static, ()> {
        Box::pin(async move {
            Registrar::shutdown(*self).await;
            Ok(())
        })
    }
}

impl Source for Gossip {
    fn kind(&self) -> &'static str {
        "gossip"
    }

    fn describe(&self) -> String {
        format!("gossip {} (cluster {})", self.listen, self.cluster)
    }

    fn register<'a>(
        &'a self,
        name: &'a str,
        member: Member,
        ttl: Duration,
    ) -> Pending<'a, Box<dyn Registration>> {
        Box::pin(async move {
            let gossip = Gossip {
                ttl,
                ..self.clone()
            };
            let registrar = Registrar::register(&gossip, name, member).await?;
            Ok(Box::new(registrar) as Box<dyn Registration>)
        })
    }

    fn watch(&self, options: Options) -> Pending<'_, Watcher> {
        Box::pin(async move { Ok(crate::watch(self, options).await?) })
    }

    fn read(&self) -> Pending<'_, (Cluster, u64)> {
        Box::pin(async move { Ok(crate::read(self).await?) })
    }

    fn settings(&self) -> Pending<'_, Map<String, Value>> {
        Box::pin(async move { Ok(crate::settings(self).await?) })
    }

    fn configure<'a>(
        &'a self,
        changes: &'a [(String, Option<Value>)],
    ) -> Pending<'a, Map<String, Value>> {
        Box::pin(async move { Ok(crate::configure(self, changes).await?) })
    }
}
