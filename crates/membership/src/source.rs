//! [`Source`]: one membership source behind one interface, and the
//! `--membership` URL that names it.
//!
//! | URL | source | version | a dead member leaves |
//! |---|---|---|---|
//! | `etcd://HOST:PORT[,HOST:PORT...]/PREFIX` | etcd v3 | the revision | when its lease expires (`ttl`) |
//! | `zk://HOST:PORT[,HOST:PORT...]/PREFIX` | ZooKeeper 3.5+ | the zxid | when its session expires (`ttl`) |
//! | `gossip://HOST:PORT?seeds=HOST:PORT,...` | gossip on UDP | a local count | when the failure detector says so (within `ttl`) |
//!
//! A source registers members (each with its liveness: a lease, an
//! ephemeral znode's session, a gossip heartbeat), starts [`Watcher`]s
//! that publish the ring through [`crate::Feed`], and reads or changes
//! the settings once. The traits are object-safe (boxed futures), so a
//! command takes any source as a `Box<dyn Source>` built from the URL by
//! the crate that implements it.

use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::Error;
use crate::cluster::Cluster;
use crate::member::Member;
use crate::watcher::{Options, Watcher};

/// A future a source returns: `Send`, boxed (object-safe traits).
pub type Pending<'a, T> = Pin<Box<dyn Future<Output = Result<T, Error>> + Send + 'a>>;

/// A membership source: where members register and clients follow them.
pub trait Source: Send + Sync + std::fmt::Debug {
    /// `etcd`, `zookeeper` or `gossip`.
    fn kind(&self) -> &'static str;

    /// The source and the cluster's place in it, for messages (`etcd
    /// /caches`, `zookeeper 127.0.0.1:2181/caches`).
    fn describe(&self) -> String;

    /// Registers `name` with `member`, alive while the returned
    /// registration is (re-registered after a loss); `ttl` bounds how long
    /// the member stays after its process dies without a word. Fails when
    /// another live member holds the name.
    fn register<'a>(
        &'a self,
        name: &'a str,
        member: Member,
        ttl: Duration,
    ) -> Pending<'a, Box<dyn Registration>>;

    /// Lists the members, publishes the first ring and follows changes in
    /// the background. Fails when the first list does not succeed.
    fn watch(&self, options: Options) -> Pending<'_, Watcher>;

    /// The cluster now, and its version. One list and one build.
    fn read(&self) -> Pending<'_, (Cluster, u64)>;

    /// The settings stored (empty when none are).
    fn settings(&self) -> Pending<'_, Map<String, Value>>;

    /// Changes the settings (`None` removes one), checked against the
    /// members present before anything is written; returns them.
    fn configure<'a>(
        &'a self,
        changes: &'a [(String, Option<Value>)],
    ) -> Pending<'a, Map<String, Value>>;
}

/// A registered member. Dropping it stops its liveness (the member then
/// leaves within the ttl); [`Registration::shutdown`] leaves at once.
pub trait Registration: Send + Sync + std::fmt::Debug {
    /// Whether the member is registered as of the last renewal.
    fn is_registered(&self) -> bool;

    /// Where and how it is held, for `join`'s first line (`/caches/nodes/a
    /// (lease 694d81a3c2b04e07)`).
    fn describe(&self) -> String;

    /// Leaves at once and stops.
    fn shutdown(self: Box<Self>) -> Pending<'static, ()>;
}

/// The kind of a `--membership` URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Scheme {
    /// `etcd://`
    Etcd,
    /// `zk://`
    ZooKeeper,
    /// `gossip://`
    Gossip,
}

/// A parsed `--membership` URL: `SCHEME://HOST:PORT[,HOST:PORT...][/PATH][?QUERY]`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Url {
    /// The source.
    pub scheme: Scheme,
    /// The servers (etcd, ZooKeeper) or this member's own gossip address,
    /// each `HOST:PORT`.
    pub hosts: Vec<String>,
    /// The cluster's prefix, `/`-led without a trailing `/` (`/ringwise`
    /// when none is given).
    pub prefix: String,
    /// The query's pairs in order (`seeds=a:1,b:2`).
    pub query: Vec<(String, String)>,
}

/// The prefix when a URL names none.
pub const DEFAULT_PREFIX: &str = "/ringwise";

impl std::fmt::Display for Url {
    /// The URL as given, normalised (`zookeeper://` written `zk://`), with
    /// the password of a `digest=USER:PASSWORD` hidden: this is what
    /// messages and logs show ([`Url::with_secrets`] is the whole URL).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.write(f, false)
    }
}

impl Url {
    /// The whole URL, passwords included: for handing it to a process
    /// of one's own (`ringwise join --membership ...`), never to a message.
    pub fn with_secrets(&self) -> String {
        struct Whole<'a>(&'a Url);
        impl std::fmt::Display for Whole<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.write(f, true)
            }
        }
        Whole(self).to_string()
    }

    fn write(&self, f: &mut std::fmt::Formatter<'_>, secrets: bool) -> std::fmt::Result {
        let scheme = match self.scheme {
            Scheme::Etcd => "etcd",
            Scheme::ZooKeeper => "zk",
            Scheme::Gossip => "gossip",
        };
        write!(f, "{scheme}://{}{}", self.hosts.join(","), self.prefix)?;
        for (i, (key, value)) in self.query.iter().enumerate() {
            let separator = if i == 0 { '?' } else { '&' };
            match value.split_once(':') {
                Some((user, _)) if key == "digest" && !secrets => {
                    write!(f, "{separator}{key}={user}:<hidden>")?;
                }
                _ => write!(f, "{separator}{key}={value}")?,
            }
        }
        Ok(())
    }

    /// Sets query key `key` to `value` (replacing it if given).
    pub fn set(&mut self, key: &str, value: &str) {
        match self.query.iter_mut().find(|(k, _)| k == key) {
            Some(pair) => value.clone_into(&mut pair.1),
            None => self.query.push((key.to_owned(), value.to_owned())),
        }
    }

    /// The value of query key `key`, if given.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

impl FromStr for Url {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self, Error> {
        let bad = |message: String| Error::InvalidOption {
            option: "membership",
            message: format!("\"{text}\": {message}"),
        };
        let (scheme, rest) = text.split_once("://").ok_or_else(|| {
            bad(
                "give SCHEME://HOST:PORT..., e.g. etcd://127.0.0.1:2379/caches, \
                 zk://127.0.0.1:2181/caches or gossip://127.0.0.1:7946?seeds=127.0.0.1:7947"
                    .into(),
            )
        })?;
        let scheme = match scheme {
            "etcd" => Scheme::Etcd,
            "zk" | "zookeeper" => Scheme::ZooKeeper,
            "gossip" => Scheme::Gossip,
            other => {
                return Err(bad(format!(
                    "unknown source `{other}`: write etcd://HOST:PORT[,...]/PREFIX, \
                     zk://HOST:PORT[,...]/PREFIX or gossip://HOST:PORT?seeds=HOST:PORT,..."
                )));
            }
        };
        let (rest, query) = match rest.split_once('?') {
            Some((rest, query)) => (rest, query),
            None => (rest, ""),
        };
        let (hosts, path) = match rest.find('/') {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, ""),
        };
        let hosts: Vec<String> = hosts.split(',').map(str::to_owned).collect();
        for host in &hosts {
            check_host(host).map_err(|why| bad(format!("host `{host}`: {why}")))?;
        }
        let path = path.trim_end_matches('/');
        let prefix = if path.is_empty() {
            DEFAULT_PREFIX.to_owned()
        } else {
            path.to_owned()
        };
        if prefix.contains("//") {
            return Err(bad(format!("prefix `{prefix}` has an empty part")));
        }
        if scheme == Scheme::Gossip && hosts.len() != 1 {
            return Err(bad(
                "a gossip URL names one address, this process's own (HOST:PORT, port 0 for \
                 any); the others go in ?seeds=HOST:PORT,..."
                    .into(),
            ));
        }
        let mut pairs = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| bad(format!("query `{pair}`: give KEY=VALUE")))?;
            pairs.push((key.to_owned(), value.to_owned()));
        }
        Ok(Url {
            scheme,
            hosts,
            prefix,
            query: pairs,
        })
    }
}

/// Checks `HOST:PORT` (a name, an IPv4 address or `[IPv6]`, and a port).
pub fn check_host(host: &str) -> Result<(), String> {
    let (name, port) = host
        .rsplit_once(':')
        .ok_or("give HOST:PORT, e.g. 127.0.0.1:2379")?;
    if name.is_empty() {
        return Err("the host is empty".into());
    }
    port.parse::<u16>()
        .map_err(|_| format!("port `{port}` is not a number from 0 to 65535"))?;
    Ok(())
}

/// `ttl` checked as a source's liveness bound: whole seconds from
/// `minimum` to a day.
pub fn check_ttl(ttl: Duration, minimum: u64, why: &str) -> Result<(), Error> {
    if ttl < Duration::from_secs(minimum) || ttl.subsec_nanos() != 0 || ttl.as_secs() > 86_400 {
        return Err(Error::InvalidOption {
            option: "ttl",
            message: format!(
                "{} s: give whole seconds from {minimum} ({why}) to 86400",
                ttl.as_secs_f64()
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_of_each_source() {
        let etcd: Url = "etcd://127.0.0.1:2379,127.0.0.1:22379/caches/"
            .parse()
            .expect("etcd");
        assert_eq!(etcd.scheme, Scheme::Etcd);
        assert_eq!(etcd.hosts, ["127.0.0.1:2379", "127.0.0.1:22379"]);
        assert_eq!(etcd.prefix, "/caches");
        let zk: Url = "zk://localhost:2181".parse().expect("zk");
        assert_eq!(
            (zk.scheme, zk.prefix.as_str()),
            (Scheme::ZooKeeper, DEFAULT_PREFIX)
        );
        let gossip: Url = "gossip://127.0.0.1:0?seeds=127.0.0.1:7001,127.0.0.1:7002"
            .parse()
            .expect("gossip");
        assert_eq!(gossip.get("seeds"), Some("127.0.0.1:7001,127.0.0.1:7002"));
        assert_eq!(gossip.get("cluster"), None);
        let mut written = gossip.clone();
        written.set("cluster", "c1");
        let text = written.to_string();
        assert_eq!(
            text,
            "gossip://127.0.0.1:0/ringwise?seeds=127.0.0.1:7001,127.0.0.1:7002&cluster=c1"
        );
        assert_eq!(text.parse::<Url>().expect("again"), written);
    }

    #[test]
    fn a_digest_password_is_shown_only_when_asked() {
        let url: Url = "zk://127.0.0.1:2181/c?digest=ops:s3cret"
            .parse()
            .expect("zk");
        assert_eq!(url.to_string(), "zk://127.0.0.1:2181/c?digest=ops:<hidden>");
        assert_eq!(
            url.with_secrets(),
            "zk://127.0.0.1:2181/c?digest=ops:s3cret"
        );
        assert_eq!(url.with_secrets().parse::<Url>().expect("again"), url);
    }

    #[test]
    fn bad_urls_say_what_to_write() {
        for (url, words) in [
            ("127.0.0.1:2379", "give SCHEME://"),
            ("consul://127.0.0.1:8500", "unknown source `consul`"),
            ("etcd://127.0.0.1/caches", "give HOST:PORT"),
            ("zk://127.0.0.1:99999/x", "port `99999`"),
            ("gossip://a:1,b:2", "names one address"),
            ("etcd://a:1//x", "empty part"),
            ("gossip://a:1?seeds", "give KEY=VALUE"),
        ] {
            let e = url.parse::<Url>().expect_err(url).to_string();
            assert!(
                e.contains(words) && e.starts_with("membership: "),
                "{url}: {e}"
            );
        }
    }
}
