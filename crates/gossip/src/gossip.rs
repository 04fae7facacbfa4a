//! [`Gossip`]: one participant's way into a gossip cluster, read from
//! the `--membership gossip://HOST:PORT?seeds=HOST:PORT,...` URL.
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

use ringwise_membership::{Error, Scheme, Url, check_host, check_ttl};

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
    /// at least 2), a bad address or seed, and an empty cluster id.
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
        for seed in &self.seeds {
            check_host(seed).map_err(|why| Error::InvalidOption {
                option: "seeds",
                message: format!("seed `{seed}`: {why}"),
            })?;
        }
        if self.cluster.is_empty() {
            return Err(Error::InvalidOption {
                option: "membership",
                message: "the cluster id is empty".into(),
            });
        }
        Ok(())
    }

    /// The prefix the view's keys are named under (`/CLUSTER`), in
    /// `Cluster::members` and `skipped`.
    pub fn prefix(&self) -> String {
        format!("/{}", self.cluster)
    }
}
