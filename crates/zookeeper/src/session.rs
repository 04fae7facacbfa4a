//! Opening a ZooKeeper session the way every part of this crate needs it:
//! the servers, the session timeout, digest credentials, and the ACL the
//! znodes it creates get.
//!
//! How it works. [`open`] connects through `zookeeper-client`'s
//! [`Connector`](zk::Connector) to the servers in turn until one accepts
//! the session (the client cycles through them for about the session
//! timeout, then fails with a timeout). Credentials are sent as `addauth
//! digest USER:PASSWORD` with the connect and resent by the client on
//! every reconnection of the session. A new session (after an expiry) is
//! a new [`open`]: ZooKeeper never revives an expired session.
//!
//! A watcher's [`Session`] is one such session with a persistent recursive
//! watch on the prefix, its events pumped into a channel by a task of
//! their own: `zookeeper-client`'s watcher panics when polled after a
//! terminal event, so only that task polls it, and stops at the terminal
//! event; a closed channel is the end of the session to the watcher.
//!
//! ACL decision: with credentials, every znode this crate creates gets
//! `CREATOR_ALL` (`auth::` — all rights for the digest identity of the
//! session that created it, and no rights at all for anyone else, reading
//! included: membership data names addresses). Without credentials,
//! `OPEN_ACL_UNSAFE` (world:anyone all), ZooKeeper's default. An ACL is
//! fixed at creation: a prefix made without credentials stays open, one
//! made with them stays closed to other identities.
//!
//! Cost: one TCP connection and one session per [`open`]; the session
//! pings every third of its timeout.

use std::time::Duration;

use tokio::sync::mpsc;
use zookeeper_client as zk;

use crate::error::{Error, classify};

/// How to reach ZooKeeper and who to be there.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// `HOST:PORT,HOST:PORT,...`.
    pub hosts: String,
    /// The session timeout asked for (the server grants one within its
    /// `[minSessionTimeout, maxSessionTimeout]`).
    pub timeout: Duration,
    /// Digest credentials.
    pub auth: Option<(String, String)>,
}

impl Settings {
    /// The ACL of the znodes created with these settings.
    pub fn acls(&self) -> zk::Acls<'static> {
        if self.auth.is_some() {
            zk::Acls::creator_all()
        } else {
            zk::Acls::anyone_all()
        }
    }

    /// Whether the session authenticates.
    pub fn authenticated(&self) -> bool {
        self.auth.is_some()
    }
}

/// Opens a new session.
pub(crate) async fn open(settings: &Settings) -> Result<zk::Client, Error> {
    // A connection attempt to one server that hangs gives way to the next
    // after a third of the session timeout (the client's own default is
    // the whole timeout divided by the number of servers).
    let mut connector = zk::Client::connector()
        .with_session_timeout(settings.timeout)
        .with_connection_timeout((settings.timeout / 3).max(Duration::from_millis(200)));
    if let Some((user, password)) = &settings.auth {
        connector = connector.with_auth("digest", format!("{user}:{password}").as_bytes());
    }
    let client = connector.connect(&settings.hosts).await.map_err(|e| {
        classify(
            "open a session",
            &settings.hosts,
            settings.authenticated(),
            e,
        )
    })?;
    Ok(client)
}

/// One session with its watch: the events pumped into a channel by a task
/// of their own (the client's watcher must not be polled after a terminal
/// event; a closed channel is the end of the session here).
pub(crate) struct Session {
    pub client: zk::Client,
    pub events: mpsc::UnboundedReceiver<zk::WatchedEvent>,
}

impl Session {
    pub async fn start(settings: &Settings, prefix: &str) -> Result<Self, Error> {
        let client = open(settings).await?;
        // Readers create the prefix too, so that the watch has something to
        // sit on; one without the right to (another identity's ACL) gets
        // the refusal from the list that follows, which names it.
        let _ = make_path(&client, settings, &nodes_dir(prefix)).await;
        // A new session may land on a follower behind the one the last
        // ring came from: catch it up with the leader before the list (a
        // list older than the ring held would be ignored anyway, never
        // published).
        let _ = client.sync(prefix).await;
        let mut watcher = client
            .watch(prefix, zk::AddWatchMode::PersistentRecursive)
            .await
            .map_err(|e| classify("watch the prefix", prefix, settings.authenticated(), e))?;
        let (sender, events) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            loop {
                let event = watcher.changed().await;
                let terminal = event.event_type == zk::EventType::Session
                    && event.session_state.is_terminated();
                if sender.send(event).is_err() || terminal {
                    return;
                }
            }
        });
        Ok(Session { client, events })
    }
}

/// Creates `path` and its missing parents as persistent znodes with the
/// settings' ACL (`mkdir -p`; existing ones are left alone).
pub(crate) async fn make_path(
    client: &zk::Client,
    settings: &Settings,
    path: &str,
) -> Result<(), Error> {
    let acls = settings.acls();
    let options = zk::CreateMode::Persistent.with_acls(acls);
    match client.mkdir(path, &options).await {
        Ok(()) => Ok(()),
        Err(e) => Err(classify(
            "create the prefix",
            path,
            settings.authenticated(),
            e,
        )),
    }
}

/// `PREFIX/nodes` without its trailing `/`: the parent of the members.
pub(crate) fn nodes_dir(prefix: &str) -> String {
    ringwise_membership::member::nodes_prefix(prefix)
        .trim_end_matches('/')
        .to_owned()
}

/// Checks a prefix as a ZooKeeper path: `/`-led, no trailing `/`, no
/// empty part.
pub(crate) fn check_prefix(prefix: &str) -> Result<(), Error> {
    let bad = |why: &str| Error::InvalidOption {
        option: "prefix",
        message: format!("\"{prefix}\": {why}; give a path such as /caches"),
    };
    if !prefix.starts_with('/') || prefix.len() < 2 {
        return Err(bad("a ZooKeeper path starts with / and names a znode"));
    }
    if prefix.ends_with('/') || prefix.contains("//") {
        return Err(bad("a ZooKeeper path has no empty part and no trailing /"));
    }
    if prefix.split('/').any(|part| part == "." || part == "..") {
        return Err(bad("ZooKeeper refuses . and .. in paths"));
    }
    if prefix == "/zookeeper" || prefix.starts_with("/zookeeper/") {
        return Err(bad("/zookeeper is ZooKeeper's own"));
    }
    Ok(())
}

/// The hosts as a connect string, checked.
pub(crate) fn connect_string(hosts: &[String]) -> Result<String, Error> {
    if hosts.is_empty() {
        return Err(Error::InvalidOption {
            option: "hosts",
            message: "no ZooKeeper server given: name at least one HOST:PORT".into(),
        });
    }
    for host in hosts {
        ringwise_membership::check_host(host).map_err(|why| Error::InvalidOption {
            option: "hosts",
            message: format!("`{host}`: {why}"),
        })?;
    }
    Ok(hosts.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_and_hosts_are_checked_with_what_to_write() {
        for bad in ["caches", "/", "/a/", "/a//b", "/a/../b", "/zookeeper/x"] {
            let e = check_prefix(bad).expect_err(bad).to_string();
            assert!(e.starts_with("prefix: ") && e.contains("/caches"), "{e}");
        }
        check_prefix("/caches/eu-1").expect("good");
        assert_eq!(nodes_dir("/caches"), "/caches/nodes");
        let e = connect_string(&[]).expect_err("none").to_string();
        assert!(e.contains("at least one HOST:PORT"), "{e}");
        let e = connect_string(&["a:1".into(), "b".into()])
            .expect_err("b")
            .to_string();
        assert!(e.contains("`b`"), "{e}");
        assert_eq!(
            connect_string(&["a:1".into(), "b:2".into()])
                .ok()
                .as_deref(),
            Some("a:1,b:2")
        );
    }
}
