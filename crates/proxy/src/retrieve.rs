//! Retrievals (`get`, `gets`, `gat`, `gats`): asked of their keys' owners
//! in parts of bounded size, put back in request order and written part
//! by part, and during a warm-up window completed from the moved keys'
//! previous owners.
//!
//! A part is the request's next keys, as many as name at most
//! [`PART_KEYS`] distinct keys whose line stays within memcached's
//! 2048-byte limit ([`PART_LINE`]). It asks each owner of some of them
//! once, in one line listing its distinct keys in request order: a key
//! the request repeats is asked once and its value written as many times
//! as the request names it. Each owner answers its hits in its line's
//! order, so walking the owner's keys and taking its next hit when the key
//! matches finds each key's value. The part's answer is written to the
//! client before the next part is asked, so a retrieval holds at most one
//! part's values in the proxy, whatever it names (a 1 MB value named
//! 5,000 times is asked once per part and streamed). A retrieval of more
//! than one part stops its client's reading until it is written (so the
//! client's later requests still reach each server after it).
//!
//! An unsettled key ([`crate::routing`]) that its owner missed is read
//! from its previous owners under the key's lock ([`warm`]), unless a
//! change was published since the retrieval was routed (then the miss is
//! the answer); for `get`
//! that value is the answer, for the others the owner is asked again once
//! the copy is there (its CAS value, its new expiry). A hot key read from
//! a replica that missed is read from its owner and copied the same way.
//!
//! Cost: one request per owner and part; per key, one comparison with the
//! part's distinct keys (at most [`PART_KEYS`]); per unsettled miss, one
//! round trip per previous owner asked and one for the copy (and one more
//! to the owner for `gets`/`gat`/`gats`).

use std::io;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use std::task::{Context, Poll, ready};

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::time::Instant;

use crate::backend::NO_SERVER;
use crate::exchange::{Batch, Reply, ask, send, wait};
use crate::request::{Keys, Retrieval, words};
use crate::response::{Expect, values};
use crate::routing::Routing;
use crate::server::Server;
use crate::warm::{Copy, copy_to, meta_copy, warm};

/// The most distinct keys one part asks: its answers hold at most this
/// many values.
pub const PART_KEYS: usize = 32;

/// The longest line a part sends a server: memcached closes a connection
/// whose line (other than a `get`/`gets`) is still without `\n` after
/// 2048 bytes, and `gat`/`gats` lines must stay within it.
pub const PART_LINE: usize = 2048;

/// Where a client's connection writes the answers it gathered.
pub const FLUSH: usize = 64 * 1024;

/// What a client's connection sends for one request.
#[derive(Debug)]
pub enum Pending {
    /// A fixed answer.
    Now(&'static [u8]),
    /// An answer already received.
    Ready(Vec<u8>),
    /// One server's answer.
    One(Arc<Server>, Reply),
    /// One server's answer to a retrieval of `usize` keys (its hits and
    /// misses counted).
    Values(Arc<Server>, Reply, usize),
    /// A retrieval over several servers, with repeated or moved keys, or
    /// of several parts.
    Retrieval(Box<Retrieve>),
    /// Nothing more: close after what came before.
    Close,
}

impl Pending {
    /// Ready once what it waits for is there (for a retrieval, its current
    /// part's answers), so that writing it waits for nothing but the
    /// socket (and, for a retrieval, its later parts and the copies of
    /// moved keys it misses).
    pub fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        match self {
            Pending::One(_, reply) | Pending::Values(_, reply, _) => reply.poll_answer(cx),
            Pending::Retrieval(retrieve) => {
                for reply in retrieve.owners.iter_mut().filter_map(|(_, r)| r.as_mut()) {
                    ready!(reply.poll_answer(cx));
                }
                Poll::Ready(())
            }
            Pending::Now(_) | Pending::Ready(_) | Pending::Close => Poll::Ready(()),
        }
    }

    /// When what it waits for is late (`None`: it waits for nothing).
    pub fn deadline(&self, timeout: Duration) -> Option<Instant> {
        match self {
            Pending::One(_, reply) | Pending::Values(_, reply, _) => Some(reply.deadline(timeout)),
            Pending::Retrieval(retrieve) => (retrieve.owners.iter())
                .filter_map(|(_, reply)| Some(reply.as_ref()?.deadline(timeout)))
                .min(),
            Pending::Now(_) | Pending::Ready(_) | Pending::Close => None,
        }
    }
}

/// Where a key's miss is completed from.
#[derive(Debug, Clone)]
enum Miss {
    /// Nowhere: a miss.
    Settled,
    /// Its previous owners ([`warm`]).
    Unsettled,
    /// A hot key read from a replica: its owner.
    Hot(Arc<Server>),
}

/// One distinct key of the part: where it is in the request, its owner
/// (an index in `owners`, none when the pool has no server for it) and
/// where a miss is completed from.
#[derive(Debug)]
struct Asked {
    at: Range<usize>,
    owner: Option<usize>,
    miss: Miss,
}

/// A retrieval being asked and written, part by part.
#[derive(Debug)]
pub struct Retrieve {
    routing: Arc<Routing>,
    client: usize,
    command: Retrieval,
    exptime: Option<i32>,
    /// A hot key's replica and owner: the key is read from the replica,
    /// completed from the owner.
    hot: Option<(Arc<Server>, Arc<Server>)>,
    /// The request's keys, as written.
    text: Vec<u8>,
    /// The current part: `text[part]`.
    part: Range<usize>,
    /// How many keys the part names, repeats counted.
    named: usize,
    asked: Vec<Asked>,
    /// The part's owners and their answers to come.
    owners: Vec<(Arc<Server>, Option<Reply>)>,
}

impl Retrieve {
    /// The retrieval of `keys` on `routing`, its first part planned.
    pub fn new(
        routing: &Arc<Routing>,
        client: usize,
        command: Retrieval,
        exptime: Option<i32>,
        keys: &Keys<'_>,
    ) -> Retrieve {
        let mut retrieve = Retrieve::empty(routing, client, command, exptime, keys.text());
        retrieve.plan();
        retrieve
    }

    /// A hot key's `get` from `replica`, completed from `owner` (and
    /// copied) when the replica misses.
    pub fn hot(
        routing: &Arc<Routing>,
        client: usize,
        key: &[u8],
        replica: &Arc<Server>,
        owner: &Arc<Server>,
    ) -> Retrieve {
        let mut retrieve = Retrieve::empty(routing, client, Retrieval::Get, None, key);
        retrieve.hot = Some((replica.clone(), owner.clone()));
        retrieve.plan();
        retrieve
    }

    fn empty(
        routing: &Arc<Routing>,
        client: usize,
        command: Retrieval,
        exptime: Option<i32>,
        text: &[u8],
    ) -> Retrieve {
        Retrieve {
            routing: routing.clone(),
            client,
            command,
            exptime,
            hot: None,
            text: text.to_vec(),
            part: 0..0,
            named: 0,
            asked: Vec::new(),
            owners: Vec::new(),
        }
    }

    /// Whether more parts follow the one planned.
    pub fn streams(&self) -> bool {
        words(&self.text[self.part.end..]).next().is_some()
    }

    /// How many values the answers to come may hold at once: the client's
    /// budget this retrieval takes while it waits ([`PART_KEYS`] for one
    /// of several parts, each planned when the one before is written).
    pub fn weight(&self) -> usize {
        match self.streams() {
            true => PART_KEYS,
            false => self.asked.len().max(1),
        }
    }

    /// Plans the next part from where the current one ends; false when
    /// no key is left.
    fn plan(&mut self) -> bool {
        self.asked.clear();
        self.owners.clear();
        self.named = 0;
        let mut at = self.part.end;
        let start = at;
        // Every owner's line is at most the head, all the part's distinct
        // keys and `\r\n`.
        let mut line = head(self.command, self.exptime).len() + 2;
        loop {
            at += self.text[at..].iter().take_while(|&&b| b == b' ').count();
            if at == self.text.len() {
                break;
            }
            let end = memchr::memchr(b' ', &self.text[at..]).map_or(self.text.len(), |n| at + n);
            let key = &self.text[at..end];
            let text = &self.text;
            if !self.asked.iter().any(|a| &text[a.at.clone()] == key) {
                if self.asked.len() == PART_KEYS || line + 1 + key.len() > PART_LINE {
                    break;
                }
                line += 1 + key.len();
                let route = match &self.hot {
                    Some((replica, owner)) => Some((replica.clone(), Miss::Hot(owner.clone()))),
                    None => self.routing.route(key).map(|(o, unsettled)| {
                        let miss = match unsettled {
                            true => Miss::Unsettled,
                            false => Miss::Settled,
                        };
                        (o.clone(), miss)
                    }),
                };
                let (owner, miss) = match route {
                    Some((server, miss)) => {
                        let index = self
                            .owners
                            .iter()
                            .position(|(s, _)| Arc::ptr_eq(s, &server));
                        let index = index.unwrap_or_else(|| {
                            self.owners.push((server, None));
                            self.owners.len() - 1
                        });
                        (Some(index), miss)
                    }
                    None => (None, Miss::Settled),
                };
                self.asked.push(Asked {
                    at: at..end,
                    owner,
                    miss,
                });
            }
            self.named += 1;
            at = end;
        }
        self.part = start..at;
        self.named > 0
    }

    /// Sends the part's lines, in `batch` or at once.
    fn send_part(&mut self, mut batch: Option<&mut Batch>) {
        let head = head(self.command, self.exptime);
        for (index, (server, reply)) in self.owners.iter_mut().enumerate() {
            let mut line = head.clone();
            for asked in self.asked.iter().filter(|a| a.owner == Some(index)) {
                line.push(b' ');
                line.extend_from_slice(&self.text[asked.at.clone()]);
            }
            line.extend_from_slice(b"\r\n");
            *reply = Some(match batch.as_deref_mut() {
                Some(batch) => batch.send(server, self.client, &line, Expect::Values),
                None => send(server, self.client, &line, Expect::Values),
            });
        }
    }

    /// Queues the first part in `batch`; what the client's answer waits for.
    pub fn send(mut self, batch: &mut Batch) -> Pending {
        // Nothing to ask: no key (memcached's `END`), or no server for any
        // key (none in the pool, or all ejected).
        if self.owners.is_empty() && !self.streams() {
            return Pending::Now(match self.asked.is_empty() {
                true => b"END\r\n",
                false => NO_SERVER,
            });
        }
        self.send_part(Some(batch));
        let plain = self.named == self.asked.len()
            && (self.asked.iter()).all(|a| matches!(a.miss, Miss::Settled));
        if self.owners.len() == 1 && plain && !self.streams() && self.hot.is_none() {
            if let Some((server, Some(reply))) = self.owners.pop() {
                return Pending::Values(server, reply, self.named);
            }
        }
        Pending::Retrieval(Box::new(self))
    }
}

/// Writes the answer of a retrieval to `write` (through `out`, flushed
/// from [`FLUSH`] bytes on): the hits in request order and `END`, part by
/// part; an owner's error ends it (after what earlier parts wrote, as
/// memcached ends a `get` it cannot finish). Each part is asked once the
/// one before is written.
pub async fn write_retrieval<W: AsyncWrite + Unpin>(
    mut retrieve: Retrieve,
    timeout: Duration,
    out: &mut Vec<u8>,
    write: &mut W,
) -> io::Result<()> {
    loop {
        if let Err(error) = write_part(&mut retrieve, timeout, out, write).await? {
            out.extend_from_slice(&error);
            return Ok(());
        }
        if !retrieve.plan() {
            break;
        }
        retrieve.send_part(None);
    }
    out.extend_from_slice(b"END\r\n");
    Ok(())
}

/// Waits for the part's answers and writes its hits; `Ok(Err(line))` when
/// an owner failed.
async fn write_part<W: AsyncWrite + Unpin>(
    retrieve: &mut Retrieve,
    timeout: Duration,
    out: &mut Vec<u8>,
    write: &mut W,
) -> io::Result<Result<(), Vec<u8>>> {
    let mut answers = Vec::with_capacity(retrieve.owners.len());
    for (server, reply) in &mut retrieve.owners {
        let Some(reply) = reply.take() else {
            answers.push(Vec::new());
            continue;
        };
        match wait(server, reply, timeout).await {
            Ok(bytes) if bytes.starts_with(b"VALUE ") || bytes.starts_with(b"END\r\n") => {
                answers.push(bytes);
            }
            Ok(error) | Err(error) => return Ok(Err(error)),
        }
    }
    let Retrieve {
        routing,
        client,
        command,
        exptime,
        text,
        part,
        asked,
        owners,
        ..
    } = &*retrieve;
    // Each distinct key's block: found on its owner, or copied.
    let mut hits: Vec<_> = answers.iter().map(|a| values(a).peekable()).collect();
    let mut found: Vec<Option<&[u8]>> = Vec::with_capacity(asked.len());
    for asked in asked {
        let key = &text[asked.at.clone()];
        let Some(owner) = asked.owner else {
            found.push(None);
            continue;
        };
        let next = &mut hits[owner];
        let counters = &owners[owner].0.counters;
        match next.next_if(|(k, _)| *k == key) {
            Some((_, block)) => {
                counters.hits.fetch_add(1, Ordering::Relaxed);
                found.push(Some(block));
            }
            None => {
                counters.misses.fetch_add(1, Ordering::Relaxed);
                found.push(None);
            }
        }
    }
    let mut copied: Vec<Option<Vec<u8>>> = Vec::new();
    for (index, asked) in asked.iter().enumerate() {
        let (Some(owner), None) = (asked.owner, found[index]) else {
            continue;
        };
        if matches!(asked.miss, Miss::Settled) {
            continue;
        }
        let owner = &owners[owner].0;
        let key = &text[asked.at.clone()];
        let from = Completion {
            routing,
            miss: &asked.miss,
            client: *client,
            timeout,
        };
        let copy = copy(from, owner, key, *command, *exptime);
        let copy = Box::pin(copy).await;
        if copied.len() <= index {
            copied.resize_with(index + 1, || None);
        }
        copied[index] = copy;
    }
    for key in words(&text[part.clone()]) {
        let Some(index) = asked.iter().position(|a| &text[a.at.clone()] == key) else {
            continue;
        };
        let block = found[index].or_else(|| copied.get(index)?.as_deref());
        if let Some(block) = block {
            out.extend_from_slice(block);
            if out.len() >= FLUSH {
                write.write_all(out).await?;
                out.clear();
            }
        }
    }
    Ok(Ok(()))
}

/// Where and how a miss is completed.
struct Completion<'a> {
    routing: &'a Routing,
    miss: &'a Miss,
    client: usize,
    timeout: Duration,
}

/// A missed key's value from its previous owners (or a hot key's from
/// its owner), copied to `owner` under the key's lock, as the answer's
/// block: for `get` the copy itself, for the others the owner's answer
/// once it holds the copy (its CAS value, its expiry).
async fn copy(
    from: Completion<'_>,
    owner: &Arc<Server>,
    key: &[u8],
    command: Retrieval,
    exptime: Option<i32>,
) -> Option<Vec<u8>> {
    let Completion {
        routing,
        miss,
        client,
        timeout,
    } = from;
    let copy = {
        let _lock = routing.locks.lock(key).await;
        match miss {
            // Routed before a change that a request holding the lock
            // before this one may have acted on: the owner missed, which
            // is an answer (no copy is read from where the key was).
            _ if !routing.is_latest() => None,
            Miss::Settled => None,
            Miss::Unsettled => warm(routing, owner, client, key, timeout).await,
            Miss::Hot(from) => hot_copy(from, owner, client, key, timeout).await,
        }
    }?;
    if command == Retrieval::Get {
        let mut block = b"VALUE ".to_vec();
        block.extend_from_slice(key);
        block.push(b' ');
        block.extend_from_slice(&copy.flags);
        block.extend_from_slice(format!(" {}\r\n", copy.data.len()).as_bytes());
        block.extend_from_slice(&copy.data);
        block.extend_from_slice(b"\r\n");
        return Some(block);
    }
    let again = one_key(command, exptime, key);
    let answer = ask(owner, client, &again, Expect::Values, timeout).await?;
    values(&answer).next().map(|(_, block)| block.to_vec())
}

/// A hot key's value read from its owner and added to `replica`; the
/// caller holds the key's lock.
async fn hot_copy(
    owner: &Server,
    replica: &Server,
    client: usize,
    key: &[u8],
    timeout: Duration,
) -> Option<Copy> {
    let copy = meta_copy(owner, client, key, timeout).await?;
    copy_to(replica, client, key, &copy, timeout).await;
    Some(copy)
}

/// `get`, or `gat <exptime>`: a retrieval line's head.
fn head(command: Retrieval, exptime: Option<i32>) -> Vec<u8> {
    let mut head = command.word().to_vec();
    if let Some(exptime) = exptime {
        head.extend_from_slice(format!(" {exptime}").as_bytes());
    }
    head
}

/// The retrieval line of one key: `<head> <key>\r\n`.
pub fn one_key(command: Retrieval, exptime: Option<i32>, key: &[u8]) -> Vec<u8> {
    let mut line = head(command, exptime);
    line.push(b' ');
    line.extend_from_slice(key);
    line.extend_from_slice(b"\r\n");
    line
}
