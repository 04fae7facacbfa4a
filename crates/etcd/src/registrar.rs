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
//!   it opens a new one, through the next endpoint that answers, while the
//!   lease may still be alive (less than `ttl` since the last renewal); the
//!   key stays, no watcher sees a change;
//! - the lease is gone (etcd answered TTL 0, or `ttl` passed without a
//!   renewal: the key was deleted and every watcher dropped the node): it
//!   grants a new lease and registers again, as a new join;
//! - `shutdown` revokes the lease: the key goes at once, so watchers drop
//!   the node within a watch round trip instead of `ttl`.
//!
//! Every call fails over between the endpoints until the connection's
//! deadline (`Connection::retry`); a transaction retried after its answer
//! was lost finds the key under its own lease and counts as done.
//!
//! A process killed with SIGKILL renews nothing: etcd deletes the key when
//! the lease expires, at most `ttl` later.
//!
//! Cost: one etcd round trip per `ttl / 3`; `is_registered` is an atomic
//! load.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};

use etcd_client::{Compare, CompareOp, PutOptions, Txn, TxnOp, TxnOpResponse};
use tokio::sync::watch;

use ringwise_membership::backoff::backoff;
use ringwise_membership::member::node_key;
use ringwise_membership::{Member, Task, check_name};

use crate::Error;
use crate::connect::{Connection, Link, bounded};

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
                    "{} s: a lease lives whole seconds, at least 2 (etcd's minimum)",
                    ttl.as_secs_f64()
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
        let mut link = None;
        shared.claim(&mut link).await?;
        let task = Task::spawn(|stop| Arc::clone(&shared).keep_alive(link, stop));
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
        self.shared
            .connection
            .call("revoke the lease", |mut client| async move {
                bounded("revoke the lease", timeout, client.lease_revoke(lease)).await
            })
            .await?;
        tracing::info!(key = %self.shared.key, lease = format_args!("{lease:x}"), "lease revoked");
        Ok(())
    }
}

impl Shared {
    /// Grants a lease and writes the key under it if nobody holds it,
    /// each call failing over between the endpoints (`link` ends on the
    /// one that answered).
    async fn claim(&self, link: &mut Option<Link>) -> Result<(), Error> {
        let connection = &self.connection;
        let timeout = connection.timeout;
        let ttl = self.ttl.as_secs() as i64;
        let grant = connection
            .retry("grant a lease", link, |mut client| async move {
                bounded("grant a lease", timeout, client.lease_grant(ttl, None)).await
            })
            .await?;
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
        let txn = &txn;
        let written = connection
            .retry("register the node", link, |mut client| async move {
                bounded("register the node", timeout, client.txn(txn.clone())).await
            })
            .await;
        let answer = match written {
            Ok(answer) => answer,
            Err(e) => {
                self.revoke_once(link, lease).await;
                return Err(e);
            }
        };
        // The holder's lease, when the key existed. Our own lease: an
        // earlier attempt of the transaction was applied but its answer
        // lost, and this one found the key it wrote.
        let holder = answer.op_responses().into_iter().find_map(|r| match r {
            TxnOpResponse::Get(get) => get.kvs().first().map(|kv| kv.lease()),
            _ => None,
        });
        if !answer.succeeded() && holder != Some(lease) {
            self.revoke_once(link, lease).await;
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

    /// Revokes a lease granted for a registration that failed: one
    /// bounded attempt, as the failure may be etcd's absence; an
    /// unrevoked lease holds no key and expires after `ttl`.
    async fn revoke_once(&self, link: &mut Option<Link>, lease: i64) {
        let Some(held) = link.as_mut() else { return };
        let timeout = self.connection.timeout;
        let revoked = bounded("revoke the lease", timeout, held.client.lease_revoke(lease)).await;
        if let Err(e) = revoked {
            let e = self.connection.locate(link, e);
            tracing::warn!(
                "{e}; the unused lease {lease:x} of {} expires with its ttl",
                self.key
            );
        }
    }

    /// Renews the lease until told to stop; re-registers after a loss.
    async fn keep_alive(self: Arc<Self>, mut link: Option<Link>, mut stop: watch::Receiver<bool>) {
        let mut renewed = Instant::now();
        let mut failures = 0u32;
        while !*stop.borrow() {
            let outcome = tokio::select! {
                outcome = self.session(&mut link, &mut renewed) => outcome,
                _ = stop.changed() => return,
            };
            if let Err(e) = &outcome {
                tracing::warn!("keep-alive of {} interrupted: {e}", self.key);
                // The stream broke: reopen it through the next endpoint
                // (a no-op after a retry that gave up: it moved on itself).
                self.connection.abandon(&mut link);
            }
            if renewed.elapsed() >= self.ttl || matches!(outcome, Ok(Lost)) {
                self.registered.store(false, Ordering::Release);
                tracing::warn!("lease of {} lost; registering again", self.key);
                let claimed = tokio::select! {
                    claimed = self.claim(&mut link) => claimed,
                    _ = stop.changed() => return,
                };
                match claimed {
                    Ok(()) => {
                        renewed = Instant::now();
                        failures = 0;
                        continue;
                    }
                    Err(e) => tracing::error!("cannot register {} again: {e}", self.key),
                }
            }
            failures += 1;
            tokio::select! {
                _ = tokio::time::sleep(backoff(failures, Duration::from_secs(1))) => {}
                _ = stop.changed() => return,
            }
        }
    }

    /// One keep-alive stream, opened through any endpoint that answers:
    /// renews every `ttl / 3` until the stream breaks (`Err`) or etcd says
    /// the lease is gone (`Ok(Lost)`).
    async fn session(&self, link: &mut Option<Link>, renewed: &mut Instant) -> Result<Lost, Error> {
        let timeout = self.connection.timeout;
        let lease = self.lease.load(Ordering::Acquire);
        let (mut keeper, mut stream) = self
            .connection
            .retry("open a keep-alive stream", link, |mut client| async move {
                let open = client.lease_keep_alive(lease);
                bounded("open a keep-alive stream", timeout, open).await
            })
            .await?;
        let period = self.ttl / 3;
        let here = |e| self.connection.locate(link, e);
        loop {
            bounded("renew the lease", timeout, keeper.keep_alive())
                .await
                .map_err(here)?;
            let answer = bounded("renew the lease", timeout, stream.message())
                .await
                .map_err(here)?;
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
