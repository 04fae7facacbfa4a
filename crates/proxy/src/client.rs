//! One client's connection: requests read, routed and answered in order,
//! in one task.
//!
//! How it works: the task waits for whichever comes first: bytes from the
//! client, the answer its oldest request awaits ([`Answers`]), or that
//! answer's deadline. Bytes are parsed into requests ([`parse`]); each is
//! routed on the routing in force ([`crate::routing`]) and queued on its
//! owner's connection (a retrieval of several keys on each owner of some
//! of them, in one request per owner), and what its answer will be made of
//! is queued in order; the server connections are woken to write once all
//! that was read is parsed ([`Batch`]). Each server connection's task
//! hands an answer straight to this one, which writes the answers in
//! request order as they come. A retrieval split over servers is put back
//! in request order: each server's hits come in the order of its keys, so
//! walking the request's keys and taking a server's next hit when its key
//! matches restores memcached's order, repeats included. Keys that moved
//! in a change not yet settled follow [`crate::warm`]: writes under the
//! key's lock, awaited in place (so the client's order holds); fallback
//! reads when their answer is written.
//!
//! An idle connection (nothing unparsed, awaited or unwritten) holds its
//! socket and a small future waiting for it to be readable, nothing else:
//! its busy state (buffers, the answers' queue, the timer) is boxed and
//! freed when the work is done, and made again when bytes come (one
//! allocation per burst, against the kilobytes every idle connection of a
//! large fleet would hold).
//!
//! Bounds: the answers a client awaits hold at most [`PIPELINE`] values
//! (its budget: a request takes one, a retrieval's part one per distinct
//! key, [`crate::retrieve::PART_KEYS`] at most), so a client that sends
//! without reading stops being read once they wait; the output holds at
//! most one answer beyond [`crate::retrieve::FLUSH`] bytes; the read
//! buffer holds at most one line ([`Limits::max_line`]) or one data block
//! ([`Limits::max_value`]) beyond what was parsed. While the client does
//! not read its answers, it is not read either.
//!
//! Cost per request: one parse, one hash and lookup per key, one copy of
//! the request to the server's write buffer and of the answer back; one
//! wake of this task by the server connection's. One timer per burst, not
//! per request: it is moved only when the oldest answer's deadline passes
//! before the answer.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::time::Instant;

use crate::answer::{Answers, Served};
use crate::backend::NO_SERVER;
use crate::exchange::{Batch, line};
use crate::pool::Pool;
use crate::request::{Limits, Request, Retrieval, TOO_LARGE, parse};
use crate::response::Expect;
use crate::retrieve::{Pending, Retrieve, one_key};
use crate::write::{Write, invalidate, locked_write};

/// How many values the answers one client awaits may hold (its budget):
/// a client that does not read holds at most this many in the proxy (128
/// of memcached's largest item, 1 MB, are 128 MB; of 1 KB values, 128 KB),
/// and is not read meanwhile. A request takes one, a retrieval's part one
/// per distinct key it asks.
pub const PIPELINE: usize = 128;

/// The settings every connection shares.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// The parser's limits.
    pub limits: Limits,
    /// How long an answer may take before the client gets a
    /// `SERVER_ERROR` instead (and the server a failure).
    pub timeout: Duration,
}

/// Serves one client until it closes, quits or breaks the protocol.
pub async fn serve(mut stream: TcpStream, pool: Arc<Pool>, settings: Settings) {
    let _ = stream.set_nodelay(true);
    let client = pool.client();
    // Bytes of a value too large still to drop: the one thing a
    // connection carries from one burst to the next.
    let mut swallow = 0;
    loop {
        if stream.readable().await.is_err() {
            break;
        }
        let busy = Busy {
            pool: &pool,
            settings,
            client,
            swallow,
            buf: Vec::new(),
            batch: Batch::default(),
            answers: Answers::default(),
            eof: false,
            quit: false,
        };
        match Box::pin(busy.run(&mut stream)).await {
            Some(left) => swallow = left,
            None => break,
        }
    }
    let _ = stream.shutdown().await;
}

/// A connection with work: what it read and has not parsed, what it
/// queued on servers and has not flushed, the answers it awaits.
struct Busy<'a> {
    pool: &'a Arc<Pool>,
    settings: Settings,
    client: usize,
    swallow: usize,
    buf: Vec<u8>,
    /// What one read's requests queued, written together once parsed.
    batch: Batch,
    answers: Answers,
    /// The client closed its side (or its socket failed): what it sent
    /// is still answered.
    eof: bool,
    /// The client quit or broke the protocol: nothing after is parsed.
    quit: bool,
}

/// Where parsing stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Parsed {
    /// At the end of what was read (or at an unfinished request).
    All,
    /// At a request the client's budget has no room for yet.
    Budget,
    /// The client's socket failed.
    Closed,
}

/// What a request comes to.
enum Routed {
    /// An answer to queue, with the budget it takes.
    Answer(Pending, usize),
    /// A retrieval of several parts: its client is read no more until it
    /// is written (its later parts go before the client's next requests).
    Streamed(Pending, usize),
    /// No answer (`noreply`, or nothing to say).
    Nothing,
    /// The client's last request: answer what came before, then close.
    Last,
    /// The client's socket failed.
    Closed,
}

impl Busy<'_> {
    /// Serves the connection until it is idle (`Some` of the bytes still
    /// to drop) or closed (`None`).
    async fn run(mut self, stream: &mut TcpStream) -> Option<usize> {
        let timeout = self.settings.timeout;
        let sleep = tokio::time::sleep_until(Instant::now() + timeout);
        tokio::pin!(sleep);
        let mut armed: Option<Instant> = None;
        // The socket was found readable: read before waiting.
        let mut readable = true;
        loop {
            if readable && !self.eof {
                readable = false;
                if self.buf.capacity() - self.buf.len() < 4096 {
                    self.buf.reserve(16 * 1024);
                }
                match stream.try_read_buf(&mut self.buf) {
                    Ok(0) => self.eof = true,
                    Ok(_) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(_) => self.eof = true,
                }
            }
            let parsed = self.parse(stream).await;
            if parsed == Parsed::Closed {
                return None;
            }
            self.batch.flush();
            if self.answers.write_ready(stream, timeout).await == Served::Closed {
                return None;
            }
            // Answers the proxy gave itself were there at once: their
            // budget is back, and what waited for it is parsed now, not
            // after more bytes that may never come.
            if parsed == Parsed::Budget && self.answers.owed() < PIPELINE {
                continue;
            }
            if self.answers.is_empty() {
                // With nothing awaited, what is left unparsed is an
                // unfinished request: it waits for bytes, or for none.
                if self.eof || self.quit {
                    return None;
                }
                if self.buf.is_empty() {
                    return Some(self.swallow);
                }
            }
            // Wait for the oldest answer, its deadline, or more bytes (when
            // the budget has room).
            if let Some(deadline) = self.answers.deadline(timeout) {
                if armed.is_none_or(|armed| armed > deadline) {
                    sleep.as_mut().reset(deadline);
                    armed = Some(deadline);
                }
            }
            let room = !self.eof && !self.quit && self.answers.owed() < PIPELINE;
            tokio::select! {
                biased;
                () = self.answers.ready() => {}
                () = &mut sleep, if armed.is_some() => armed = None,
                ready = stream.readable(), if room => match ready {
                    Ok(()) => readable = true,
                    Err(_) => self.eof = true,
                },
            }
        }
    }

    /// Parses and routes what was read, as far as the budget allows.
    async fn parse(&mut self, stream: &mut TcpStream) -> Parsed {
        // Out of `self` while its requests, which borrow it, are routed.
        let mut buf = std::mem::take(&mut self.buf);
        let mut start = 0;
        let mut stopped = Parsed::All;
        while start < buf.len() && !self.quit {
            if self.swallow > 0 {
                let dropped = self.swallow.min(buf.len() - start);
                self.swallow -= dropped;
                start += dropped;
                continue;
            }
            if self.answers.owed() >= PIPELINE {
                stopped = Parsed::Budget;
                break;
            }
            let Some((request, used)) = parse(&buf[start..], &self.settings.limits) else {
                break;
            };
            start += used;
            let routed = self.route(request, stream).await;
            match routed {
                Routed::Answer(pending, weight) => self.answers.push(pending, weight),
                Routed::Streamed(pending, weight) => {
                    self.answers.push(pending, weight);
                    self.batch.flush();
                    let timeout = self.settings.timeout;
                    if self.answers.write_all(stream, timeout).await == Served::Closed {
                        return Parsed::Closed;
                    }
                }
                Routed::Nothing => {}
                Routed::Last => {
                    self.answers.push(Pending::Close, 1);
                    self.quit = true;
                }
                Routed::Closed => return Parsed::Closed,
            }
        }
        buf.drain(..start);
        if !buf.is_empty() && !self.quit {
            self.buf = buf;
        }
        stopped
    }

    /// Routes one request: queues it on its servers (or answers it here)
    /// and says what its answer will be made of.
    async fn route(&mut self, request: Request<'_>, stream: &mut TcpStream) -> Routed {
        let timeout = self.settings.timeout;
        // Loaded after any wait: a request is queued on the routing it
        // was routed by, with no wait in between.
        let routing = self.pool.routing();
        let pending = match request {
            Request::Reply(Some(text)) => Pending::Now(text),
            Request::Reply(None) => return Routed::Nothing,
            Request::Keyed {
                key,
                bytes,
                noreply,
            } => {
                let hot = self.pool.hot();
                let pending = match routing.route(key) {
                    None => (!noreply).then_some(Pending::Now(NO_SERVER)),
                    Some((owner, false)) if !hot.is_some_and(|h| h.recently_hot(key)) => {
                        if let Some(hot) = hot {
                            invalidate(hot, &routing, &mut self.batch, self.client, key, timeout);
                        }
                        match noreply {
                            true => {
                                self.batch.tell(owner, self.client, &bytes);
                                None
                            }
                            false => {
                                let answer =
                                    self.batch.send(owner, self.client, &bytes, Expect::Line);
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
                        self.batch.flush();
                        let write = Write {
                            key,
                            bytes: &bytes,
                            noreply,
                        };
                        Box::pin(locked_write(self.pool, hot, self.client, write, timeout)).await
                    }
                };
                match pending {
                    Some(pending) => pending,
                    None => return Routed::Nothing,
                }
            }
            Request::Get {
                command,
                exptime,
                keys,
            } => {
                let hot = self.pool.hot().filter(|_| command == Retrieval::Get);
                let spread = hot.and_then(|hot| {
                    let key = keys.single()?;
                    let (owner, unsettled) = routing.route(key)?;
                    if unsettled || !hot.read(key) || routing.settling() {
                        return None;
                    }
                    let replica = hot.choose(&routing.current, key)?;
                    (!Arc::ptr_eq(replica, owner))
                        .then(|| Retrieve::hot(&routing, self.client, key, replica, owner))
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
                    (Some(retrieve), _) => retrieve.send(&mut self.batch),
                    (None, Some((owner, key))) => {
                        let line = one_key(command, exptime, key);
                        let answer = self.batch.send(owner, self.client, &line, Expect::Values);
                        Pending::Values(owner.clone(), answer, 1)
                    }
                    (None, None) => {
                        let retrieve =
                            Retrieve::new(&routing, self.client, command, exptime, &keys);
                        // Room for its values: the answers before it are
                        // written until there is.
                        let weight = retrieve.weight().min(PIPELINE);
                        while self.answers.owed() + weight > PIPELINE && self.answers.awaits() {
                            self.batch.flush();
                            if self.answers.write_oldest(stream, timeout).await == Served::Closed {
                                return Routed::Closed;
                            }
                        }
                        let streams = retrieve.streams();
                        let pending = retrieve.send(&mut self.batch);
                        return match streams {
                            true => Routed::Streamed(pending, weight),
                            false => Routed::Answer(pending, weight),
                        };
                    }
                }
            }
            Request::TooLarge {
                key,
                set,
                noreply,
                swallow: more,
            } => {
                self.swallow = more;
                // memcached deletes the key of a failed set: so here,
                // on every server that could answer with the old
                // value, as any write.
                if set {
                    self.batch.flush();
                    let delete = line(b"delete", key, b" noreply\r\n");
                    let write = Write {
                        key,
                        bytes: &delete,
                        noreply: true,
                    };
                    let hot = self.pool.hot();
                    Box::pin(locked_write(self.pool, hot, self.client, write, timeout)).await;
                }
                if noreply {
                    return Routed::Nothing;
                }
                Pending::Now(TOO_LARGE)
            }
            Request::Refuse {
                reply,
                swallow: more,
            } => {
                self.swallow = more;
                Pending::Now(reply)
            }
            Request::Version => match routing.current.servers.first() {
                Some(server) => {
                    let answer = self
                        .batch
                        .send(server, self.client, b"version\r\n", Expect::Line);
                    Pending::One(server.clone(), answer)
                }
                None => Pending::Now(NO_SERVER),
            },
            Request::Quit | Request::Close => return Routed::Last,
        };
        Routed::Answer(pending, 1)
    }
}
