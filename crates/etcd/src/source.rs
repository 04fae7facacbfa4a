//! [`Etcd`]: this crate behind `ringwise_membership::Source`, what the
//! commands take as `--membership etcd://HOST:PORT[,...]/PREFIX`.

use std::time::Duration;

use ringwise_membership::{
    Cluster, Error, Member, Options, Pending, Registration, Source, Url, Watcher,
};
use serde_json::{Map, Value};

use crate::connect::Connection;
use crate::registrar::Registrar;

/// The members under one prefix of one etcd cluster.
#[derive(Debug, Clone)]
pub struct Etcd {
    /// How to reach etcd.
    pub connection: Connection,
    /// The cluster's prefix.
    pub prefix: String,
}

impl Etcd {
    /// The cluster under `prefix`, reached through `connection`.
    pub fn new(connection: Connection, prefix: &str) -> Self {
        Etcd {
            connection,
            prefix: prefix.to_owned(),
        }
    }

    /// The source an `etcd://` URL names, with the connection's other
    /// settings (timeout, user, TLS) from `base`.
    pub fn from_url(url: &Url, base: Connection) -> Result<Self, Error> {
        // Certificates mean https: the same hosts, over TLS.
        let scheme = if base.tls.is_some() { "https" } else { "http" };
        let endpoints: Vec<String> = url
            .hosts
            .iter()
            .map(|h| format!("{scheme}://{h}"))
            .collect();
        let mut connection = Connection::parse(&endpoints.join(","))?;
        connection.timeout = base.timeout;
        connection.user = base.user;
        connection.tls = base.tls;
        Ok(Etcd::new(connection, &url.prefix))
    }
}

impl Registration for Registrar {
    fn is_registered(&self) -> bool {
        Registrar::is_registered(self)
    }

    fn describe(&self) -> String {
        format!("{} (lease {:x})", self.key(), self.lease())
    }

    fn shutdown(self: Box<Self>) -> Pending<'static, ()> {
        Box::pin(async move { Ok(Registrar::shutdown(*self).await?) })
    }
}

impl Source for Etcd {
    fn kind(&self) -> &'static str {
        "etcd"
    }

    fn describe(&self) -> String {
        format!("etcd {}", self.prefix)
    }

    fn register<'a>(
        &'a self,
        name: &'a str,
        member: Member,
        ttl: Duration,
    ) -> Pending<'a, Box<dyn Registration>> {
        Box::pin(async move {
            let registrar =
                Registrar::register(&self.connection, &self.prefix, name, member, ttl).await?;
            Ok(Box::new(registrar) as Box<dyn Registration>)
        })
    }

    fn watch(&self, options: Options) -> Pending<'_, Watcher> {
        Box::pin(async move { Ok(crate::watch(&self.connection, &self.prefix, options).await?) })
    }

    fn read(&self) -> Pending<'_, (Cluster, u64)> {
        Box::pin(async move {
            let (cluster, revision) = crate::read(&self.connection, &self.prefix).await?;
            Ok((cluster, revision as u64))
        })
    }

    fn settings(&self) -> Pending<'_, Map<String, Value>> {
        Box::pin(async move { Ok(crate::settings(&self.connection, &self.prefix).await?) })
    }

    fn configure<'a>(
        &'a self,
        changes: &'a [(String, Option<Value>)],
    ) -> Pending<'a, Map<String, Value>> {
        Box::pin(
            async move { Ok(crate::configure(&self.connection, &self.prefix, changes).await?) },
        )
    }
}
