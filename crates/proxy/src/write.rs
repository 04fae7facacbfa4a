//! Writes that reach more than the key's owner: those of a key that moved
//! in a change not yet settled, or of a hot key ([`locked_write`]), and
//! the deletes that keep a hot key's replicas from serving an old value
//! ([`invalidate`]).
//!
//! The rule (docs/proxy.md, "The consistency promise"): a write is
//! acknowledged only once no server a read could fall back to holds an
//! older copy of its key. So a locked write routes its key once it holds
//! the key's lock ([`crate::locks`]), copies the old value first when the
//! command reads it ([`crate::warm`]), writes the owner, then deletes the
//! key on every loser ([`crate::routing`]) and hot replica, awaiting each
//! answer; one left unanswered turns the client's answer into a
//! `SERVER_ERROR`.
//!
//! Cost: a write of a settled key that is not hot never comes here; a
//! locked write costs one round trip to the owner and one per loser or
//! replica, one after another, under the key's lock.

use std::sync::Arc;
use std::time::Duration;

use crate::backend::NO_SERVER;
use crate::backend::failure;
use crate::exchange::{Batch, ask, line, send, tell, wait};
use crate::hot::Hot;
use crate::pool::Pool;
use crate::response::Expect;
use crate::retrieve::Pending;
use crate::routing::Routing;
use crate::server::Server;
use crate::warm::warm;

/// With hot keys on: a write of a key that is not hot deletes it on its
/// other replicas, now and once more after the timeout (a copy from the
/// time it was hot may still land); a hot key's writes take
/// [`locked_write`] instead.
pub fn invalidate(
    hot: &Hot,
    routing: &Routing,
    batch: &mut Batch,
    client: usize,
    key: &[u8],
    timeout: Duration,
) {
    let others: Vec<Arc<Server>> = hot
        .others(&routing.current, key)
        .into_iter()
        .cloned()
        .collect();
    if others.is_empty() {
        return;
    }
    let delete = line(b"delete", key, b" noreply\r\n");
    for server in &others {
        batch.tell(server, client, &delete);
    }
    tokio::spawn(async move {
        tokio::time::sleep(timeout).await;
        for server in &others {
            tell(server, client, &delete);
        }
    });
}

/// A write request as the client sent it.
#[derive(Debug, Clone, Copy)]
pub struct Write<'a> {
    /// The key.
    pub key: &'a [u8],
    /// The request, in its canonical form.
    pub bytes: &'a [u8],
    /// Whether the client awaits no answer.
    pub noreply: bool,
}

/// A write of an unsettled or hot key, under its lock ([`crate::warm`]),
/// routed once the lock is held: the value copied first when the command
/// reads it, the write to the owner awaited, then the key deleted on its
/// losers and hot replicas, each awaited. The write is acknowledged only
/// when every one of those deletes was answered: otherwise an older copy
/// may remain where a read could find it, and the client gets a
/// `SERVER_ERROR` (the write may have been applied, as after a timeout).
/// `None` when nothing is to be answered.
pub async fn locked_write(
    pool: &Pool,
    hot: Option<&Hot>,
    client: usize,
    write: Write<'_>,
    timeout: Duration,
) -> Option<Pending> {
    let Write {
        key,
        bytes,
        noreply,
    } = write;
    let _lock = pool.locks().lock(key).await;
    let routing = pool.routing();
    let Some((owner, unsettled)) = routing.route(key) else {
        return (!noreply).then_some(Pending::Now(NO_SERVER));
    };
    let verb = bytes
        .split(|&b| b == b' ')
        .find(|w| !w.is_empty())
        .unwrap_or_default();
    let replaces = verb == b"set" || verb == b"delete";
    if unsettled && !replaces {
        // Found as before the change: copied first.
        warm(&routing, owner, client, key, timeout).await;
    }
    // The write itself, known to be done before the lock is let go: its
    // answer, or with noreply a no-op's answer after it.
    let answer = match noreply {
        true => {
            tell(owner, client, bytes);
            ask(owner, client, b"mn\r\n", Expect::Line, timeout).await;
            None
        }
        false => Some(
            wait(owner, send(owner, client, bytes, Expect::Line), timeout)
                .await
                .unwrap_or_else(|e| e),
        ),
    };
    let delete = line(b"delete", key, b"\r\n");
    let mut deleted = false;
    let mut elsewhere: Vec<Arc<Server>> = routing.losers(key, owner);
    if let Some(hot) = hot {
        for replica in hot.others(&routing.current, key) {
            if !Arc::ptr_eq(replica, owner) && !elsewhere.iter().any(|s| Arc::ptr_eq(s, replica)) {
                elsewhere.push(replica.clone());
            }
        }
    }
    let fallbacks = routing.fallbacks(key, owner);
    let mut unanswered: Option<&Arc<Server>> = None;
    for server in &elsewhere {
        match ask(server, client, &delete, Expect::Line, timeout).await {
            Some(a) => {
                // Held where a read could have found it.
                let readable = fallbacks.iter().any(|f| Arc::ptr_eq(f, server));
                deleted |= readable && a == b"DELETED\r\n";
            }
            None => unanswered = unanswered.or(Some(server)),
        }
    }
    let answer = answer?;
    if let Some(server) = unanswered {
        let why = "no answer to deleting the key's older copy there, so the write \
                   (perhaps applied) is not acknowledged";
        return Some(Pending::Ready(failure(server.address(), why)));
    }
    if verb == b"delete" && deleted && answer == b"NOT_FOUND\r\n" {
        return Some(Pending::Now(b"DELETED\r\n"));
    }
    Some(Pending::Ready(answer))
}
