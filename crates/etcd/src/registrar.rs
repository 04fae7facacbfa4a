//! A node announcing itself: its key under a lease, kept alive until the
//! process stops or dies.
//!
//! How it works. `register` grants a lease of `ttl` seconds and, in one
//! transaction, writes `PREFIX/nodes/NAME` under it only if the key does
//! not exist (`create_revision == 0`); if it exists, another process holds
//! the name and the registration is refused (the fresh lease is revoked).
//! A background task then renews the lease every `ttl / 3` over a
//! keep-alive stream:
//!
//! - the stream breaks (etcd restarted, the member it talked to died):
//!   it opens a new one while the lease may still be alive (less than `ttl`
//!   since the last renewal); the key stays, no watcher sees a change;
//! - the lease is gone (etcd answered TTL 0, or `ttl` passed without a
//!   renewal: the key was deleted and every watcher dropped the node): it
//!   grants a new lease and registers again, as a new join;
//! - `shutdown` revokes the lease: the key goes at once, so watchers drop
//!   the node within a watch round trip instead of `ttl`.
//!
//! A process killed with SIGKILL renews nothing: etcd deletes the key when
//! the lease expires, at most `ttl` later.
//!
//! Cost: one etcd round trip per `ttl / 3`; `is_registered` is an atomic
//! load.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};

use etcd_client::{Client, Compare, CompareOp, PutOptions, Txn, TxnOp, TxnOpResponse};
use tokio::sync::watch;

use crate::connect::{Connection, bounded};
use crate::member::{Member, node_key};
use crate::{Error, Task, backoff};

/// The default lease time to live.
pub const DEFAULT_TTL: Duration = Duration::from_secs(10);

/// A registered node. Dropping it stops renewing (the key then expires);
/// [`Registrar::shutdown`] removes the key at once.
#[derive(Debug)]
pub struct Registrar {
    shared: Arc<Shared>,
    task: Task,
}

#[derive(Debug)]
struct Shared {
    connection: Connection,
    key: String,
    name: String,
    value: String,
    ttl: Duration,
    registered: AtomicBool,
    lease: AtomicI64,
}

impl Registrar {
    /// Registers `name` with `member` under `prefix` for `ttl` (whole
    /// seconds, at least 2), and keeps it registered in the background.
    /// Fails if another live lease holds the name, or if etcd cannot be
    /// reached within the connection's timeout.
    pub async fn register(
        connection: &Connection,
        prefix: &str,
        name: &str,
        member: Member,
        ttl: Duration,
    ) -> Result<Self, Error> {
        check_name(name)?;
        if ttl < Duration::from_secs(2) || ttl.subsec_nanos() != 0 {
            return Err(Error::InvalidOption {
                option: "ttl",
                message: format!(
                    "{ttl:?}: a lease lives whole seconds, at least 2 (etcd's minimum)"
                ),
            });
        }
        let shared = Arc::new(Shared {
            connection: connection.clone(),
            key: node_key(prefix, name),
            name: name.to_owned(),
            value: member.to_json(),
            ttl,
            registered: AtomicBool::new(false),
            lease: AtomicI64::new(0),
        });
        let mut client = connection.connect().await?;
        shared.claim(&mut client).await?;
        let task = Task::spawn(|stop| Arc::clone(&shared).keep_alive(client, stop));
        Ok(Registrar { shared, task })
    }

    /// Whether the key is in etcd under a live lease, as of the last
    /// renewal.
    pub fn is_registered(&self) -> bool {
        self.shared.registered.load(Ordering::Acquire)
    }

    /// The current lease (0 before the first grant).
    pub fn lease(&self) -> i64 {
        self.shared.lease.load(Ordering::Acquire)
    }

    /// The node's key.
    pub fn key(&self) -> &str {
        &self.shared.key
    }

    /// Stops renewing and revokes the lease, which deletes the key.
    pub async fn shutdown(mut self) -> Result<(), Error> {
        self.task.stop().await;
        self.shared.registered.store(false, Ordering::Release);
        let lease = self.lease();
        let timeout = self.shared.connection.timeout;
        // The balanced client may first try an endpoint that is down (a
        // killed member): retry on the others until the deadline.
        let deadline = tokio::time::Instant::now() + timeout * 2;
        loop {
            let mut client = self.shared.connection.connect().await?;
            match bounded("revoke the lease", timeout, client.lease_revoke(lease)).await {
                Ok(_) => break,
                Err(e) if tokio::time::Instant::now() < deadline => {
                    tracing::warn!(lease = format_args!("{lease:x}"), error = %e, "revoke failed; retrying");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
                Err(e) => return Err(e),
            }
        }
        tracing::info!(key = %self.shared.key, lease = format_args!("{lease:x}"), "lease revoked");
        Ok(())
    }
}

impl Shared {
    /// Grants a lease and writes the key under it if nobody holds it.
    async fn claim(&self, client: &mut Client) -> Result<(), Error> {
        let timeout = self.connection.timeout;
        let ttl = self.ttl.as_secs() as i64;
        let grant = bounded("grant a lease", timeout, client.lease_grant(ttl, None)).await?;
        let lease = grant.id();
        let put = PutOptions::new().with_lease(lease);
        let txn = Txn::new()
            .when([Compare::create_revision(
                self.key.clone(),
                CompareOp::Equal,
                0,
            )])
            .and_then([TxnOp::put(self.key.clone(), self.value.clone(), Some(put))])
            .or_else([TxnOp::get(self.key.clone(), None)]);
        let answer = match bounded("register the node", timeout, client.txn(txn)).await {
            Ok(answer) => answer,
            Err(e) => {
                let _ = client.lease_revoke(lease).await;
                return Err(e);
            }
        };
        if !answer.succeeded() {
            let _ = bounded("revoke the lease", timeout, client.lease_revoke(lease)).await;
            let holder = answer.op_responses().into_iter().find_map(|r| match r {
                TxnOpResponse::Get(get) => get.kvs().first().map(|kv| kv.lease()),
                _ => None,
            });
            return Err(Error::NameTaken {
                name: self.name.clone(),
                key: self.key.clone(),
                lease: holder.unwrap_or(0),
            });
        }
        self.lease.store(lease, Ordering::Release);
        self.registered.store(true, Ordering::Release);
        tracing::info!(key = %self.key, lease = format_args!("{lease:x}"), ttl, "registered");
        Ok(())
    }

    /// Renews the lease until told to stop; re-registers after a loss.
    async fn keep_alive(self: Arc<Self>, mut client: Client, mut stop: watch::Receiver<bool>) {
        let mut renewed = Instant::now();
        let mut failures = 0u32;
        while !*stop.borrow() {
            let outcome = tokio::select! {
                outcome = self.session(&mut client, &mut renewed) => outcome,
                _ = stop.changed() => return,
            };
            if let Err(e) = &outcome {
                tracing::warn!(key = %self.key, error = %e, "keep-alive interrupted");
            }
            if renewed.elapsed() >= self.ttl || matches!(outcome, Ok(Lost)) {
                self.registered.store(false, Ordering::Release);
                tracing::warn!(key = %self.key, "lease lost; registering again");
                let claimed = tokio::select! {
                    claimed = self.reclaim() => claimed,
                    _ = stop.changed() => return,
                };
                match claimed {
                    Ok(fresh) => {
                        client = fresh;
                        renewed = Instant::now();
                        failures = 0;
                        continue;
                    }
                    Err(e) => tracing::error!(key = %self.key, error = %e, "cannot register"),
                }
            }
            failures += 1;
            tokio::select! {
                _ = tokio::time::sleep(backoff(failures, Duration::from_secs(1))) => {}
                _ = stop.changed() => return,
            }
        }
    }

    async fn reclaim(&self) -> Result<Client, Error> {
        let mut client = self.connection.connect().await?;
        self.claim(&mut client).await?;
        Ok(client)
    }

    /// One keep-alive stream: renews every `ttl / 3` until the stream
    /// breaks (`Err`) or etcd says the lease is gone (`Ok(Lost)`).
    async fn session(&self, client: &mut Client, renewed: &mut Instant) -> Result<Lost, Error> {
        let timeout = self.connection.timeout;
        let lease = self.lease.load(Ordering::Acquire);
        let (mut keeper, mut stream) = bounded(
            "open a keep-alive stream",
            timeout,
            client.lease_keep_alive(lease),
        )
        .await?;
        let period = self.ttl / 3;
        loop {
            bounded("renew the lease", timeout, keeper.keep_alive()).await?;
            let answer = bounded("renew the lease", timeout, stream.message()).await?;
            match answer {
                Some(answer) if answer.ttl() > 0 => {
                    *renewed = Instant::now();
                    self.registered.store(true, Ordering::Release);
                }
                Some(_) => return Ok(Lost),
                None => {
                    return Err(Error::InvalidValue {
                        key: self.key.clone(),
                        message: "the keep-alive stream closed".into(),
                    });
                }
            }
            tokio::time::sleep(period).await;
        }
    }
}

/// The lease is gone: etcd deleted the key.
struct Lost;

/// A name that works as a node and as the last part of a key.
fn check_name(name: &str) -> Result<(), Error> {
    ringwise::Node::new(name).validate()?;
    if name.contains('/') {
        return Err(Error::InvalidOption {
            option: "name",
            message: format!("{name:?}: a node name must not contain '/' (it ends a key)"),
        });
    }
    Ok(())
}
