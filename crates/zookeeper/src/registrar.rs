//! A member announcing itself: an ephemeral znode, alive as long as its
//! session.
//!
//! How it works. `register` opens a session whose timeout is the ttl
//! (ZooKeeper grants one within the server's `[minSessionTimeout,
//! maxSessionTimeout]`, by default 2 to 20 ticks: [`Registrar::session_timeout`]
//! is the one granted), creates the missing parents as persistent znodes,
//! then `PREFIX/nodes/NAME` as an EPHEMERAL znode holding the member's
//! JSON. If the znode exists, its `ephemeralOwner` says who holds it:
//! another session is `NameTaken`; our own session means an earlier
//! attempt was applied and its answer lost, and counts as done.
//!
//! The client pings every third of the session timeout by itself and
//! moves to another server when one goes away; the session, and the
//! znode with it, survive while some server hears from it within the
//! timeout. A background task follows the session's state:
//!
//! - disconnected: nothing to do, the client reconnects with the same
//!   session; the znode stays, no watcher sees a change;
//! - expired (away longer than the timeout: ZooKeeper deleted the znode,
//!   every watcher dropped the member): ZooKeeper never revives a session,
//!   so it opens a new one and registers again, as a new join;
//! - `shutdown` deletes the znode and closes the session: watchers drop
//!   the member within one event instead of the timeout.
//!
//! A process killed with SIGKILL pings no more: the server expires the
//! session, and deletes the znode, at most the session timeout later.
//!
//! Cost: one session (a TCP connection and its pings) per registrar;
//! `is_registered` is an atomic load.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ringwise_membership::backoff::backoff;
use ringwise_membership::member::node_key;
use ringwise_membership::{Member, Task, check_name};
use tokio::sync::watch;
use zookeeper_client as zk;

use crate::error::{Error, classify};
use crate::session::{Settings, make_path, nodes_dir, open};

/// A registered member. Dropping it closes the session (the znode goes
/// when the server hears of it); [`Registrar::shutdown`] deletes it first.
#[derive(Debug)]
pub struct Registrar {
    shared: Arc<Shared>,
    task: Task,
}

#[derive(Debug)]
struct Shared {
    settings: Settings,
    prefix: String,
    key: String,
    name: String,
    value: String,
    registered: AtomicBool,
    session: AtomicI64,
    /// The session holding the znode.
    client: Mutex<Option<zk::Client>>,
}

impl Registrar {
    /// Registers `name` with `member` under `prefix`, its session's timeout
    /// asked for as `settings.timeout`, and keeps it registered.
    pub(crate) async fn register(
        settings: Settings,
        prefix: &str,
        name: &str,
        member: Member,
    ) -> Result<Self, Error> {
        check_name(name)?;
        let shared = Arc::new(Shared {
            settings,
            prefix: prefix.to_owned(),
            key: node_key(prefix, name),
            name: name.to_owned(),
            value: member.to_json(),
            registered: AtomicBool::new(false),
            session: AtomicI64::new(0),
            client: Mutex::new(None),
        });
        let client = shared.claim().await?;
        let task = Task::spawn(|stop| Arc::clone(&shared).keep(client, stop));
        Ok(Registrar { shared, task })
    }

    /// Whether the znode is held by the current session (false from an
    /// expiry until the next registration).
    pub fn is_registered(&self) -> bool {
        self.shared.registered.load(Ordering::Acquire)
    }

    /// The member's znode.
    pub fn key(&self) -> &str {
        &self.shared.key
    }

    /// The session holding it.
    pub fn session(&self) -> i64 {
        self.shared.session.load(Ordering::Acquire)
    }

    /// The session timeout the server granted (the current session's).
    pub fn session_timeout(&self) -> Duration {
        self.shared
            .client
            .lock()
            .ok()
            .and_then(|c| c.as_ref().map(zk::Client::session_timeout))
            .unwrap_or(self.shared.settings.timeout)
    }

    /// Deletes the znode and closes the session.
    pub async fn shutdown(mut self) -> Result<(), Error> {
        self.task.stop().await;
        self.shared.registered.store(false, Ordering::Release);
        let client = self.shared.client.lock().ok().and_then(|mut c| c.take());
        let Some(client) = client else { return Ok(()) };
        let key = &self.shared.key;
        let deleted = match client.delete(key, None).await {
            Ok(()) | Err(zk::Error::NoNode) => Ok(()),
            Err(e) => Err(classify(
                "delete the member",
                key,
                self.shared.settings.authenticated(),
                e,
            )),
        };
        // Dropping the last handle closes the session (CloseSession): an
        // ephemeral left by a failed delete goes with it.
        drop(client);
        tracing::info!(key = %key, "left");
        deleted
    }
}

impl Shared {
    /// Opens a session and creates the znode under it.
    async fn claim(&self) -> Result<zk::Client, Error> {
        let client = open(&self.settings).await?;
        let authenticated = self.settings.authenticated();
        make_path(&client, &self.settings, &nodes_dir(&self.prefix)).await?;
        let ours = client.session_id().0;
        let options = zk::CreateMode::Ephemeral.with_acls(self.settings.acls());
        loop {
            match client
                .create(&self.key, self.value.as_bytes(), &options)
                .await
            {
                Ok(_) => break,
                Err(zk::Error::NodeExists) => match client.check_stat(&self.key).await {
                    Ok(Some(stat)) if stat.ephemeral_owner == ours => break,
                    Ok(Some(stat)) => {
                        return Err(Error::NameTaken {
                            name: self.name.clone(),
                            key: self.key.clone(),
                            holder: holder(stat.ephemeral_owner),
                        });
                    }
                    // Gone meanwhile (its session just expired): again.
                    Ok(None) => continue,
                    Err(e) => return Err(classify("read the member", &self.key, authenticated, e)),
                },
                Err(e) => return Err(classify("register the member", &self.key, authenticated, e)),
            }
        }
        self.session.store(ours, Ordering::Release);
        self.registered.store(true, Ordering::Release);
        if let Ok(mut held) = self.client.lock() {
            *held = Some(client.clone());
        }
        let granted = client.session_timeout();
        if granted != self.settings.timeout {
            tracing::warn!(
                "{}: ZooKeeper granted a session timeout of {granted:?} for the {:?} asked \
                 (its minSessionTimeout/maxSessionTimeout): a dead member leaves within {granted:?}",
                self.key,
                self.settings.timeout
            );
        }
        tracing::info!(
            key = %self.key,
            session = format_args!("{ours:#x}"),
            timeout_ms = client.session_timeout().as_millis() as u64,
            "registered"
        );
        Ok(client)
    }

    /// Follows the session; registers again under a new one after an
    /// expiry.
    async fn keep(self: Arc<Self>, client: zk::Client, mut stop: watch::Receiver<bool>) {
        let mut states = client.state_watcher();
        drop(client);
        loop {
            let state = tokio::select! {
                state = states.changed() => state,
                _ = stop.changed() => return,
            };
            if !state.is_terminated() {
                tracing::debug!(key = %self.key, %state, "session state");
                continue;
            }
            self.registered.store(false, Ordering::Release);
            tracing::warn!("session of {} ended ({state}); registering again", self.key);
            let mut failures = 0u32;
            loop {
                failures += 1;
                let claimed = tokio::select! {
                    claimed = self.claim() => claimed,
                    _ = stop.changed() => return,
                };
                match claimed {
                    Ok(client) => {
                        states = client.state_watcher();
                        break;
                    }
                    Err(e) => tracing::error!("cannot register {} again: {e}", self.key),
                }
                tokio::select! {
                    _ = tokio::time::sleep(backoff(failures, Duration::from_secs(1))) => {}
                    _ = stop.changed() => return,
                }
            }
        }
    }
}

/// How a session is named in messages: `session 0x1000...`.
pub(crate) fn holder(session: i64) -> String {
    format!("session {session:#x}")
}
