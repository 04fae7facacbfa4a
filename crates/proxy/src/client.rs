//! One client's connection: requests read, routed and answered in order.
//!
//! How it works: a reader parses requests ([`crate::request::parse`]),
//! sends each to its owner's connection (a retrieval of several keys to
//! each owner of some of them, in one request per owner) and queues what
//! the answer will be made of; a writer takes the queue in order, waits
//! for each answer and writes it. A retrieval split over servers is put
//! back in request order: each server's hits come in the order of its
//! keys, so walking the request's keys and taking a server's next hit
//! when its key matches restores memcached's order, repeats included.
//!
//! Bounds: the queue holds at most [`PIPELINE`] requests, so a client that
//! sends without reading stops being read once it is full; the read
//! buffer holds at most one line ([`Limits::max_line`]) or one data block
//! ([`Limits::max_value`]) beyond what was parsed.
//!
//! Cost per request: one parse, one hash and lookup per key, one copy of
//! the request to the server's write buffer and of the answer back.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt, BufWriter};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};

use crate::backend::{Answer, Job, failure};
use crate::pool::Pool;
use crate::request::{Limits, Request, Retrieval, TOO_LARGE, parse};
use crate::response::{Expect, values};

/// How many requests of one client may wait for their answers.
pub const PIPELINE: usize = 1024;

/// The settings every connection shares.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// The reader's limits.
    pub limits: Limits,
    /// How long an answer may take before the client gets a
    /// `SERVER_ERROR` instead.
    pub timeout: Duration,
}

/// What the writer sends for one request.
enum Pending {
    Now(&'static [u8]),
    One(oneshot::Receiver<Answer>),
    /// A retrieval over several servers: the keys in request order with
    /// the part that holds each, and each part's answer.
    Split {
        keys: Vec<(Vec<u8>, usize)>,
        parts: Vec<oneshot::Receiver<Answer>>,
    },
    /// Nothing more: close after what came before.
    Close,
}

/// Serves one client until it closes, quits or breaks the protocol.
pub async fn serve(stream: TcpStream, pool: Arc<Pool>, settings: Settings) {
    let _ = stream.set_nodelay(true);
    let client = pool.client();
    let (mut read, write) = stream.into_split();
    let (queue, pending) = mpsc::channel(PIPELINE);
    let writer = tokio::spawn(write_answers(write, pending, settings.timeout));
    let mut buf: Vec<u8> = Vec::with_capacity(16 * 1024);
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
            let pending = match request {
                Request::Reply(Some(text)) => Pending::Now(text),
                Request::Reply(None) => continue,
                Request::Keyed {
                    key,
                    bytes,
                    noreply,
                } => {
                    let expect = (!noreply).then_some(Expect::Line);
                    match forward(&pool, key, client, bytes.to_vec(), expect).await {
                        Some(answer) => Pending::One(answer),
                        None => continue,
                    }
                }
                Request::Get {
                    command,
                    exptime,
                    keys,
                } => retrieve(&pool, client, command, exptime, &keys).await,
                Request::TooLarge {
                    key,
                    set,
                    noreply,
                    swallow: more,
                } => {
                    swallow = more;
                    if set {
                        let mut delete = b"delete ".to_vec();
                        delete.extend_from_slice(key);
                        delete.extend_from_slice(b" noreply\r\n");
                        forward(&pool, key, client, delete, None).await;
                    }
                    if noreply {
                        continue;
                    }
                    Pending::Now(TOO_LARGE)
                }
                Request::Version => {
                    let (tx, rx) = oneshot::channel();
                    match pool.backend(0, client) {
                        Some(backend) => {
                            let bytes = b"version\r\n".to_vec();
                            let reply = Some((Expect::Line, tx));
                            backend.send(Job { bytes, reply }).await;
                            Pending::One(rx)
                        }
                        None => Pending::Now(b"SERVER_ERROR ringwise-proxy: the pool is empty\r\n"),
                    }
                }
                Request::Quit | Request::Close => {
                    let _ = queue.send(Pending::Close).await;
                    break 'conn;
                }
            };
            if queue.send(pending).await.is_err() {
                break 'conn;
            }
        }
        buf.drain(..start);
        if buf.len() > settings.limits.max_line.max(settings.limits.max_value) {
            break;
        }
        if buf.capacity() - buf.len() < 4096 {
            buf.reserve(16 * 1024);
        }
        match read.read_buf(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
    drop(queue);
    let _ = writer.await;
}

/// Sends `bytes` to the owner of `key`; the answer's receiver when one is
/// expected (`None` under `noreply`, and an error answer when the pool is
/// empty).
async fn forward(
    pool: &Pool,
    key: &[u8],
    client: usize,
    bytes: Vec<u8>,
    expect: Option<Expect>,
) -> Option<oneshot::Receiver<Answer>> {
    let Some((_, backend)) = pool.route(key, client) else {
        let (tx, rx) = oneshot::channel();
        let _ = tx.send(Err(
            b"SERVER_ERROR ringwise-proxy: the pool is empty\r\n".to_vec()
        ));
        return expect.map(|_| rx);
    };
    match expect {
        None => {
            backend.send(Job { bytes, reply: None }).await;
            None
        }
        Some(expect) => {
            let (tx, rx) = oneshot::channel();
            let reply = Some((expect, tx));
            backend.send(Job { bytes, reply }).await;
            Some(rx)
        }
    }
}

/// A retrieval: one request per owner of some of the keys.
async fn retrieve(
    pool: &Pool,
    client: usize,
    command: Retrieval,
    exptime: Option<&[u8]>,
    keys: &[&[u8]],
) -> Pending {
    if keys.is_empty() {
        return Pending::Now(b"END\r\n");
    }
    if pool.is_empty() {
        return Pending::Now(b"SERVER_ERROR ringwise-proxy: the pool is empty\r\n");
    }
    // Each owner's request line, in the order owners first appear.
    let mut owners: Vec<(usize, Vec<u8>)> = Vec::new();
    let mut placed = Vec::with_capacity(keys.len());
    for key in keys {
        let Some((node, _)) = pool.route(key, client) else {
            continue;
        };
        let part = match owners.iter().position(|(n, _)| *n == node) {
            Some(part) => part,
            None => {
                let mut line = command.word().to_vec();
                if let Some(exptime) = exptime {
                    line.push(b' ');
                    line.extend_from_slice(exptime);
                }
                owners.push((node, line));
                owners.len() - 1
            }
        };
        owners[part].1.push(b' ');
        owners[part].1.extend_from_slice(key);
        placed.push((key.to_vec(), part));
    }
    let mut parts = Vec::with_capacity(owners.len());
    for (node, mut line) in owners.iter().cloned() {
        line.extend_from_slice(b"\r\n");
        let (tx, rx) = oneshot::channel();
        match pool.backend(node, client) {
            Some(backend) => {
                let reply = Some((Expect::Values, tx));
                backend.send(Job { bytes: line, reply }).await;
            }
            None => {
                let _ = tx.send(Err(failure("?", "no connection")));
            }
        }
        parts.push(rx);
    }
    if parts.len() == 1 {
        return Pending::One(parts.remove(0));
    }
    Pending::Split {
        keys: placed,
        parts,
    }
}

async fn write_answers(
    write: tokio::net::tcp::OwnedWriteHalf,
    mut pending: mpsc::Receiver<Pending>,
    timeout: Duration,
) {
    let mut write = BufWriter::with_capacity(64 * 1024, write);
    loop {
        let next = match pending.try_recv() {
            Ok(next) => next,
            Err(mpsc::error::TryRecvError::Empty) => {
                if write.flush().await.is_err() {
                    return;
                }
                match pending.recv().await {
                    Some(next) => next,
                    None => break,
                }
            }
            Err(mpsc::error::TryRecvError::Disconnected) => break,
        };
        let written = match next {
            Pending::Now(text) => write.write_all(text).await,
            Pending::One(answer) => {
                let bytes = wait(answer, timeout).await;
                write.write_all(bytes.as_ref().unwrap_or_else(|e| e)).await
            }
            Pending::Split { keys, parts } => {
                let mut answers = Vec::with_capacity(parts.len());
                for part in parts {
                    answers.push(wait(part, timeout).await);
                }
                write.write_all(&assemble(&keys, &answers)).await
            }
            Pending::Close => break,
        };
        if written.is_err() {
            return;
        }
    }
    let _ = write.flush().await;
    let _ = write.shutdown().await;
}

async fn wait(answer: oneshot::Receiver<Answer>, timeout: Duration) -> Answer {
    match tokio::time::timeout(timeout, answer).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(_)) => Err(b"SERVER_ERROR ringwise-proxy: the request was dropped\r\n".to_vec()),
        Err(_) => Err(b"SERVER_ERROR ringwise-proxy: the server timed out\r\n".to_vec()),
    }
}

/// The answer of a split retrieval: the hits in request order and `END`,
/// or the first part's error.
fn assemble(keys: &[(Vec<u8>, usize)], answers: &[Answer]) -> Vec<u8> {
    let mut hits = Vec::with_capacity(answers.len());
    for answer in answers {
        match answer {
            Ok(bytes) if bytes.starts_with(b"VALUE ") || bytes.starts_with(b"END\r\n") => {
                hits.push(values(bytes).peekable());
            }
            Ok(error) | Err(error) => return error.clone(),
        }
    }
    let mut out = Vec::new();
    for (key, part) in keys {
        let next = &mut hits[*part];
        if next.peek().is_some_and(|(k, _)| k == key) {
            if let Some((_, block)) = next.next() {
                out.extend_from_slice(block);
            }
        }
    }
    out.extend_from_slice(b"END\r\n");
    out
}
