//! [`ZooKeeper`]: this crate behind `ringwise_membership::Source`, what the
//! commands take as `--membership zk://HOST:PORT[,...]/PREFIX`.
//!
//! The URL's query may carry `digest=USER:PASSWORD` (the same as
//! [`ZooKeeper::with_digest`]) and `session_timeout=SECONDS` (watchers'
//! and readers' sessions); any other key is refused, so that a typo is not
//! silently ignored.

use std::time::Duration;

use ringwise_membership::{
    Cluster, Error as MembershipError, Member, Options, Pending, Registration, Scheme, Source, Url,
    Watcher, check_ttl,
};
use serde_json::{Map, Value};

use crate::Error;
use crate::registrar::{Registrar, holder};
use crate::session::{Settings, check_prefix, connect_string, open};

/// The session timeout of watchers and one-shot reads when none is given.
pub const DEFAULT_SESSION_TIMEOUT: Duration = Duration::from_secs(10);

/// The members under one prefix of one ZooKeeper ensemble.
#[derive(Debug, Clone)]
pub struct ZooKeeper {
    /// The servers, each `HOST:PORT`.
    pub hosts: Vec<String>,
    /// The cluster's prefix (`/caches`).
    pub prefix: String,
    /// The session timeout asked for by watchers and one-shot reads
    /// (registrars ask for their ttl).
    pub session_timeout: Duration,
    /// Digest credentials (`USER`, `PASSWORD`), sent on every session.
    pub auth: Option<(String, String)>,
}

impl ZooKeeper {
    /// The cluster under `prefix` of the ensemble at `hosts`; sessions of
    /// 10 s.
    pub fn new(hosts: Vec<String>, prefix: &str) -> Self {
        ZooKeeper {
            hosts,
            prefix: prefix.to_owned(),
            session_timeout: DEFAULT_SESSION_TIMEOUT,
            auth: None,
        }
    }

    /// The source a `zk://` URL names.
    pub fn from_url(url: &Url) -> Result<Self, MembershipError> {
        if url.scheme != Scheme::ZooKeeper {
            return Err(MembershipError::InvalidOption {
                option: "membership",
                message: format!("{url} is not a zk:// URL"),
            });
        }
        if let Some(host) = url.hosts.iter().find(|h| h.contains('@')) {
            return Err(MembershipError::InvalidOption {
                option: "membership",
                message: format!(
                    "`{host}`: credentials do not go before the host in a zk:// URL; \
                     write ?digest=USER:PASSWORD after the prefix"
                ),
            });
        }
        let mut zk = ZooKeeper::new(url.hosts.clone(), &url.prefix);
        for (key, value) in &url.query {
            match key.as_str() {
                "digest" => {
                    let (user, password) =
                        value
                            .split_once(':')
                            .ok_or_else(|| MembershipError::InvalidOption {
                                option: "membership",
                                message: "digest: give digest=USER:PASSWORD".into(),
                            })?;
                    zk = zk.with_digest(user, password);
                }
                "session_timeout" => {
                    let seconds: u64 =
                        value.parse().map_err(|_| MembershipError::InvalidOption {
                            option: "membership",
                            message: format!("session_timeout `{value}`: give whole seconds"),
                        })?;
                    zk = zk.with_session_timeout(Duration::from_secs(seconds));
                }
                other => {
                    return Err(MembershipError::InvalidOption {
                        option: "membership",
                        message: format!(
                            "unknown query key `{other}` for zk://: use digest=USER:PASSWORD \
                             or session_timeout=SECONDS"
                        ),
                    });
                }
            }
        }
        zk.session_settings(zk.session_timeout)?;
        Ok(zk)
    }

    /// Authenticates every session as digest `user:password` (`addauth
    /// digest`); znodes this source creates are then readable and
    /// writable by that identity only (CREATOR_ALL).
    pub fn with_digest(mut self, user: &str, password: &str) -> Self {
        self.auth = Some((user.to_owned(), password.to_owned()));
        self
    }

    /// The session timeout of watchers and one-shot reads.
    pub fn with_session_timeout(mut self, timeout: Duration) -> Self {
        self.session_timeout = timeout;
        self
    }

    /// The session settings with `timeout`, checked.
    pub(crate) fn session_settings(&self, timeout: Duration) -> Result<Settings, Error> {
        check_prefix(&self.prefix)?;
        if timeout < Duration::from_millis(100) || timeout > Duration::from_secs(86_400) {
            return Err(Error::InvalidOption {
                option: "session timeout",
                message: format!("{timeout:?}: give 100 ms to a day"),
            });
        }
        Ok(Settings {
            hosts: connect_string(&self.hosts)?,
            timeout,
            auth: self.auth.clone(),
        })
    }

    /// Registers `name` (see [`Registrar`]): its session's timeout is
    /// `ttl`, as the server grants it.
    pub async fn register(
        &self,
        name: &str,
        member: Member,
        ttl: Duration,
    ) -> Result<Registrar, Error> {
        check_ttl(ttl, 1, "a session times out after whole seconds")?;
        Registrar::register(self.session_settings(ttl)?, &self.prefix, name, member).await
    }

    /// Lists the members, publishes the first ring and follows changes.
    pub async fn watch(&self, options: Options) -> Result<Watcher, Error> {
        crate::watcher::watch(
            &self.session_settings(self.session_timeout)?,
            &self.prefix,
            options,
        )
        .await
    }

    /// The cluster now and its zxid (`sync`, then one snapshot).
    pub async fn read(&self) -> Result<(Cluster, u64), Error> {
        let settings = self.session_settings(self.session_timeout)?;
        let client = open(&settings).await?;
        let _ = client.sync(&self.prefix).await;
        let (mut contents, zxid) =
            crate::snapshot::list(&client, &settings, &self.prefix, Vec::new()).await?;
        Ok((Cluster::from_contents(&mut contents)?, zxid.max(0) as u64))
    }

    /// The settings stored at `PREFIX/config`.
    pub async fn settings(&self) -> Result<Map<String, Value>, Error> {
        let settings = self.session_settings(self.session_timeout)?;
        let client = open(&settings).await?;
        crate::store::settings(&client, &settings, &self.prefix).await
    }

    /// Changes the settings (see `ringwise_membership::change_settings`).
    pub async fn configure(
        &self,
        changes: &[(String, Option<Value>)],
    ) -> Result<Map<String, Value>, Error> {
        let settings = self.session_settings(self.session_timeout)?;
        let client = open(&settings).await?;
        crate::store::configure(&client, &settings, &self.prefix, changes).await
    }
}

impl Registration for Registrar {
    fn is_registered(&self) -> bool {
        Registrar::is_registered(self)
    }

    /// `/caches/nodes/a (session 0x1000..., timeout 4 s)`: the timeout
    /// the server granted, which may differ from the ttl asked for.
    fn describe(&self) -> String {
        format!(
            "{} ({}, timeout {} s)",
            self.key(),
            holder(self.session()),
            self.session_timeout().as_secs_f64()
        )
    }

    fn shutdown(self: Box<Self>) -> Pending<'static, ()> {
        Box::pin(async move { Ok(Registrar::shutdown(*self).await?) })
    }
}

impl Source for ZooKeeper {
    fn kind(&self) -> &'static str {
        "zookeeper"
    }

    fn describe(&self) -> String {
        format!("zookeeper {}{}", self.hosts.join(","), self.prefix)
    }

    fn register<'a>(
        &'a self,
        name: &'a str,
        member: Member,
        ttl: Duration,
    ) -> Pending<'a, Box<dyn Registration>> {
        Box::pin(async move {
            let registrar = ZooKeeper::register(self, name, member, ttl).await?;
            Ok(Box::new(registrar) as Box<dyn Registration>)
        })
    }

    fn watch(&self, options: Options) -> Pending<'_, Watcher> {
        Box::pin(async move { Ok(ZooKeeper::watch(self, options).await?) })
    }

    fn read(&self) -> Pending<'_, (Cluster, u64)> {
        Box::pin(async move { Ok(ZooKeeper::read(self).await?) })
    }

    fn settings(&self) -> Pending<'_, Map<String, Value>> {
        Box::pin(async move { Ok(ZooKeeper::settings(self).await?) })
    }

    fn configure<'a>(
        &'a self,
        changes: &'a [(String, Option<Value>)],
    ) -> Pending<'a, Map<String, Value>> {
        Box::pin(async move { Ok(ZooKeeper::configure(self, changes).await?) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_the_source() {
        let url: Url =
            "zk://127.0.0.1:2181,127.0.0.1:2182/caches?digest=app:s3cret&session_timeout=4"
                .parse()
                .expect("url");
        let zk = ZooKeeper::from_url(&url).expect("zk");
        assert_eq!(zk.hosts, ["127.0.0.1:2181", "127.0.0.1:2182"]);
        assert_eq!(zk.prefix, "/caches");
        assert_eq!(zk.auth, Some(("app".into(), "s3cret".into())));
        assert_eq!(zk.session_timeout, Duration::from_secs(4));
        assert_eq!(zk.kind(), "zookeeper");
        assert_eq!(
            zk.describe(),
            "zookeeper 127.0.0.1:2181,127.0.0.1:2182/caches"
        );
        for (bad, words) in [
            ("zk://a:1/p?digest=nocolon", "digest=USER:PASSWORD"),
            (
                "zk://a:1/p?sesion_timeout=3",
                "unknown query key `sesion_timeout`",
            ),
            ("zk://a:1/zookeeper", "ZooKeeper's own"),
            ("etcd://a:1/p", "not a zk:// URL"),
            ("zk://u:p@a:1/p", "write ?digest=USER:PASSWORD"),
        ] {
            let url: Url = bad.parse().expect(bad);
            let e = ZooKeeper::from_url(&url).expect_err(bad).to_string();
            assert!(e.contains(words), "{bad}: {e}");
        }
    }
}
