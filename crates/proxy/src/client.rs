//! One client's connection: requests read, routed and answered in order.
//!
//! How it works: a reader parses requests ([`crate::request::parse`]),
//! routes each key on the routing in force ([`crate::routing`]), queues
//! each request on its owner's connection (a retrieval of several keys on
//! each owner of some of them, in one request per owner; the connections
//! are woken to write once all that was read is parsed,
//! [`crate::exchange::Batch`]) and queues what the answer will be made
//! of; a writer takes the queue in order, waits
//! for each answer and writes it. A retrieval split over servers is put
//! back in request order: each server's hits come in the order of its
//! keys, so walking the request's keys and taking a server's next hit
//! when its key matches restores memcached's order, repeats included.
//! Keys that moved in a change not yet settled follow [`crate::warm`]:
//! writes on the reader's side under the key's lock (awaited, so the
//! client's order holds), fallback reads on the writer's.
//!
//! Bounds: the answers a client awaits hold at most [`PIPELINE`] values
//! (its budget: a request takes one, a retrieval's part one per distinct
//! key, [`crate::retrieve::PART_KEYS`] at most), so a client that sends
//! without reading stops being read once they wait; the writer holds at
//! most one answer beyond [`crate::retrieve::FLUSH`] bytes; the read
//! buffer holds at most one line ([`Limits::max_line`]) or one data block
//! ([`Limits::max_value`]) beyond what was parsed.
//!
//! Cost per request: one parse, one hash and lookup per key, one copy of
//! the request to the server's write buffer and of the answer back.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot};

use crate::backend::NO_SERVER;
use crate::exchange::{Batch, line, wait};
use crate::pool::Pool;
use crate::request::{Limits, Request, Retrieval, TOO_LARGE, parse};
use crate::response::{Expect, values};
use crate::retrieve::{FLUSH, Pending, Retrieve, write_retrieval};
use crate::write::{Write, invalidate, locked_write};

/// How many values the answers one client awaits may hold (its budget):
/// a client that does not read holds at most this many in the proxy (128
/// of memcached's largest item, 1 MB, are 128 MB; of 1 KB values, 128 KB),
/// and is not read meanwhile. A request takes one, a retrieval's part one
/// per distinct key it asks.
pub const PIPELINE: usize = 128;

/// A request's answer to come and the budget it holds until written.
type Queued = (Pending, OwnedSemaphorePermit);

/// The settings every connection shares.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// The reader's limits.
    pub limits: Limits,
    /// How long an answer may take before the client gets a
    /// `SERVER_ERROR` instead (and the server a failure).
    pub timeout: Duration,
}

/// Serves one client until it closes, quits or breaks the protocol.
pub async fn serve(stream: TcpStream, pool: Arc<Pool>, settings: Settings) {
    let _ = stream.set_nodelay(true);
    let client = pool.client();
    let (mut read, write) = stream.into_split();
    let (queue, pending) = mpsc::channel(PIPELINE);
    let budget = Arc::new(Semaphore::new(PIPELINE));
    let writer = tokio::spawn(write_answers(write, pending, settings.timeout));
    // Allocated when bytes arrive and freed when all are parsed: an idle
    // connection holds no buffer.
    let mut buf: Vec<u8> = Vec::new();
    // What one read's requests queued, written together once parsed.
    let mut batch = Batch::default();
    // The answer last queued, handed to the writer when the next comes.
    let mut held: Option<Queued> = None;
    let mut swallow = 0usize;
    'conn: loop {
        let mut start = 0;
        while start < buf.len() {
            if swallow > 0 {
                let dropped = swallow.min(buf.len() - start);
                swallow -= dropped;
                start += dropped;
                continue;
            }
            let Some((request, used)) = parse(&buf[start..], &settings.limits) else {
                break;
            };
            start += used;
            // Taken before anything is sent: the answer's room.
            let Some(mut permit) = take(&budget, 1, &queue, &mut held, &mut batch).await else {
                break 'conn;
            };
            // Loaded after any wait: a request is queued on the routing it
            // was routed by, with no wait in between.
            let routing = pool.routing();
            // A retrieval of several parts: the reader waits until it is
            // written (its later parts go before this client's next
            // requests).
            let mut streamed: Option<oneshot::Receiver<()>> = None;
            let pending = match request {
                Request::Reply(Some(text)) => Pending::Now(text),
                Request::Reply(None) => continue,
                Request::Keyed {
                    key,
                    bytes,
                    noreply,
                } => {
                    let hot = pool.hot();
                    let pending = match routing.route(key) {
                        None => (!noreply).then_some(Pending::Now(NO_SERVER)),
                        Some((owner, false)) if !hot.is_some_and(|h| h.recently_hot(key)) => {
                            if let Some(hot) = hot {
                                invalidate(
                                    hot,
                                    &routing,
                                    &mut batch,
                                    client,
                                    key,
                                    settings.timeout,
                                );
                            }
                            match noreply {
                                true => {
                                    batch.tell(owner, client, &bytes);
                                    None
                                }
                                false => {
                                    let answer = batch.send(owner, client, &bytes, Expect::Line);
                                    Some(Pending::One(owner.clone(), answer))
                                }
                            }
                        }
                        Some(_) => {
                            // Its exchanges are awaited under the key's
                            // lock: the burst goes first. Boxed, as the
                            // other rare paths: the connection's own
                            // future stays small (an idle connection's
                            // memory).
                            batch.flush();
                            let timeout = settings.timeout;
                            let write = Write {
                                key,
                                bytes: &bytes,
                                noreply,
                            };
                            Box::pin(locked_write(&pool, hot, client, write, timeout)).await
                        }
                    };
                    match pending {
                        Some(pending) => pending,
                        None => continue,
                    }
                }
                Request::Get {
                    command,
                    exptime,
                    keys,
                } => {
                    let hot = pool.hot().filter(|_| command == Retrieval::Get);
                    let spread = hot.and_then(|hot| {
                        let key = keys.single()?;
                        let (owner, unsettled) = routing.route(key)?;
                        if unsettled || !hot.read(key) || routing.settling() {
                            return None;
                        }
                        let replica = hot.choose(&routing.current, key)?;
                        (!Arc::ptr_eq(replica, owner))
                            .then(|| Retrieve::hot(&routing, client, key, replica, owner))
                    });
                    // The common case first: one key, not moving, not
                    // spread: one line to its owner, no retrieval state.
                    let single = match (&spread, keys.single()) {
                        (None, Some(key)) => routing
                            .route(key)
                            .filter(|(_, unsettled)| !unsettled)
                            .map(|(owner, _)| (owner, key)),
                        _ => None,
                    };
                    match (spread, single) {
                        (Some(retrieve), _) => retrieve.send(&mut batch),
                        (None, Some((owner, key))) => {
                            let mut line = command.word().to_vec();
                            if let Some(exptime) = exptime {
                                line.extend_from_slice(format!(" {exptime}").as_bytes());
                            }
                            line.push(b' ');
                            line.extend_from_slice(key);
                            line.extend_from_slice(b"\r\n");
                            let answer = batch.send(owner, client, &line, Expect::Values);
                            Pending::Values(owner.clone(), answer, 1)
                        }
                        (None, None) => {
                            let mut retrieve =
                                Retrieve::new(&routing, client, command, exptime, &keys);
                            let more = retrieve.weight() - 1;
                            if more > 0 {
                                let taken = take(&budget, more, &queue, &mut held, &mut batch);
                                let Some(more) = taken.await else {
                                    break 'conn;
                                };
                                permit.merge(more);
                            }
                            if retrieve.streams() {
                                streamed = Some(retrieve.finished());
                            }
                            retrieve.send(&mut batch)
                        }
                    }
                }
                Request::TooLarge {
                    key,
                    set,
                    noreply,
                    swallow: more,
                } => {
                    swallow = more;
                    // memcached deletes the key of a failed set: so here,
                    // on every server that could answer with the old
                    // value, as any write.
                    if set {
                        batch.flush();
                        let delete = line(b"delete", key, b" noreply\r\n");
                        let write = Write {
                            key,
                            bytes: &delete,
                            noreply: true,
                        };
                        let (timeout, hot) = (settings.timeout, pool.hot());
                        Box::pin(locked_write(&pool, hot, client, write, timeout)).await;
                    }
                    if noreply {
                        continue;
                    }
                    Pending::Now(TOO_LARGE)
                }
                Request::Refuse {
                    reply,
                    swallow: more,
                } => {
                    swallow = more;
                    Pending::Now(reply)
                }
                Request::Version => match routing.current.servers.first() {
                    Some(server) => {
                        let answer = batch.send(server, client, b"version\r\n", Expect::Line);
                        Pending::One(server.clone(), answer)
                    }
                    None => Pending::Now(NO_SERVER),
                },
                Request::Quit | Request::Close => {
                    batch.flush();
                    if let Some(last) = held.take() {
                        hand(&queue, last, &mut batch).await;
                    }
                    let _ = queue.send((Pending::Close, permit)).await;
                    break 'conn;
                }
            };
            if let Some(previous) = held.replace((pending, permit)) {
                if !hand(&queue, previous, &mut batch).await {
                    break 'conn;
                }
            }
            if let Some(written) = streamed {
                batch.flush();
                if let Some(last) = held.take() {
                    if !hand(&queue, last, &mut batch).await {
                        break 'conn;
                    }
                }
                let _ = written.await;
            }
        }
        // The burst's last answer goes to the writer after the flush: the
        // writer, woken last, runs first, and the connections' tasks after
        // every client ready now has queued its burst, so they write all
        // of them at once (woken after it, they wrote each client's alone).
        batch.flush();
        if let Some(last) = held.take() {
            if !hand(&queue, last, &mut batch).await {
                break 'conn;
            }
        }
        buf.drain(..start);
        if buf.is_empty() {
            buf = Vec::new();
            if read.readable().await.is_err() {
                break;
            }
        }
        if buf.capacity() - buf.len() < 4096 {
            buf.reserve(16 * 1024);
        }
        match read.read_buf(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
    batch.flush();
    if let Some(last) = held.take() {
        // A client that shut its side down still reads its answers.
        hand(&queue, last, &mut batch).await;
    }
    drop(queue);
    let _ = writer.await;
}

/// Takes `weight` of the client's budget (at most [`PIPELINE`]): at once
/// when it is there; otherwise the burst is flushed and the answer held
/// back handed to the writer, which frees the budget as it writes. `None`
/// when the writer is gone.
async fn take(
    budget: &Arc<Semaphore>,
    weight: usize,
    queue: &mpsc::Sender<Queued>,
    held: &mut Option<Queued>,
    batch: &mut Batch,
) -> Option<OwnedSemaphorePermit> {
    let weight = weight.clamp(1, PIPELINE) as u32;
    if let Ok(permit) = budget.clone().try_acquire_many_owned(weight) {
        return Some(permit);
    }
    batch.flush();
    if let Some(last) = held.take() {
        if !hand(queue, last, batch).await {
            return None;
        }
    }
    budget.clone().acquire_many_owned(weight).await.ok()
}

/// Hands `pending` to the writer; false when it is gone.
async fn hand(queue: &mpsc::Sender<Queued>, pending: Queued, batch: &mut Batch) -> bool {
    match queue.try_send(pending) {
        Ok(()) => true,
        Err(TrySendError::Full(pending)) => {
            // The writer waits for answers this burst may hold.
            batch.flush();
            queue.send(pending).await.is_ok()
        }
        Err(TrySendError::Closed(_)) => false,
    }
}

async fn write_answers(
    mut write: tokio::net::tcp::OwnedWriteHalf,
    mut pending: mpsc::Receiver<Queued>,
    timeout: Duration,
) {
    // Answers gather here while more are queued and go out in one write;
    // freed whenever the queue is empty, so an idle connection holds none.
    let mut out: Vec<u8> = Vec::new();
    loop {
        let next = match pending.try_recv() {
            Ok(next) => next,
            Err(mpsc::error::TryRecvError::Empty) => {
                if !out.is_empty() {
                    if write.write_all(&out).await.is_err() {
                        return;
                    }
                    out = Vec::new();
                }
                match pending.recv().await {
                    Some(next) => next,
                    None => break,
                }
            }
            Err(mpsc::error::TryRecvError::Disconnected) => break,
        };
        // The budget is freed once the answer is in `out`.
        let (next, _permit) = next;
        match next {
            Pending::Now(text) => out.extend_from_slice(text),
            Pending::Ready(bytes) => out.extend_from_slice(&bytes),
            Pending::One(server, answer) => {
                let bytes = wait(&server, answer, timeout).await;
                out.extend_from_slice(bytes.as_ref().unwrap_or_else(|e| e));
            }
            Pending::Values(server, answer, keys) => {
                let bytes = wait(&server, answer, timeout).await;
                let bytes = bytes.as_ref().unwrap_or_else(|e| e);
                let found = values(bytes).count() as u64;
                let counters = &server.counters;
                counters.hits.fetch_add(found, Ordering::Relaxed);
                let missed = (keys as u64).saturating_sub(found);
                counters.misses.fetch_add(missed, Ordering::Relaxed);
                out.extend_from_slice(bytes);
            }
            Pending::Retrieval(retrieval) => {
                let written = write_retrieval(*retrieval, timeout, &mut out, &mut write);
                if Box::pin(written).await.is_err() {
                    return;
                }
            }
            Pending::Close => break,
        }
        if out.len() >= FLUSH {
            if write.write_all(&out).await.is_err() {
                return;
            }
            out.clear();
        }
    }
    let _ = write.write_all(&out).await;
    let _ = write.shutdown().await;
}
