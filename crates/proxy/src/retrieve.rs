//! Retrievals (`get`, `gets`, `gat`, `gats`): split by owner, put back in
//! request order, and during a warm-up window completed from the moved
//! keys' previous owners.
//!
//! A retrieval sends one request per owner of some of its keys, listing
//! them in request order. Each owner answers its hits in that order, so
//! walking the request's keys and taking an owner's next hit when its key
//! matches restores memcached's order, repeats included. An unsettled key
//! that its owner missed is read from its previous owners under the key's
//! lock ([`warm`]); for `get` that value is the answer, for the others the
//! owner is asked again once the copy is there (its CAS value, its new
//! expiry).
//!
//! Cost: one request per owner; per key, one comparison when assembling;
//! per unsettled miss, one round trip per previous owner asked (and one
//! more to the owner for `gets`/`gat`/`gats`).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::exchange::{Batch, Reply, ask, wait};
use crate::request::Retrieval;
use crate::response::{Expect, values};
use crate::routing::Routing;
use crate::server::Server;
use crate::warm::{Copy, copy_to, meta_copy, warm};

/// What the writer sends for one request.
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
    /// A retrieval over several servers or with moved keys.
    Retrieval(Box<Retrieve>),
    /// Nothing more: close after what came before.
    Close,
}

/// Where a key's miss is completed from.
#[derive(Debug)]
enum Miss {
    /// Nowhere: a miss.
    Settled,
    /// Its previous owners ([`warm`]).
    Unsettled,
    /// A hot key read from a replica: its owner.
    Hot(Arc<Server>),
}

/// One key of a retrieval: which part holds it, and where a miss is
/// completed from.
#[derive(Debug)]
struct Key {
    key: Vec<u8>,
    part: usize,
    miss: Miss,
}

/// A retrieval being sent and then assembled.
#[derive(Debug)]
pub struct Retrieve {
    routing: Arc<Routing>,
    client: usize,
    command: Retrieval,
    exptime: Option<Vec<u8>>,
    keys: Vec<Key>,
    /// Each owner and its request line, in the order owners first appear.
    parts: Vec<(Arc<Server>, Vec<u8>)>,
    answers: Vec<Reply>,
}

impl Retrieve {
    /// The retrieval of `keys` on `routing`.
    pub fn new(
        routing: &Arc<Routing>,
        client: usize,
        command: Retrieval,
        exptime: Option<&[u8]>,
        keys: &[&[u8]],
    ) -> Retrieve {
        let mut retrieve = Retrieve {
            routing: routing.clone(),
            client,
            command,
            exptime: exptime.map(<[u8]>::to_vec),
            keys: Vec::with_capacity(keys.len()),
            parts: Vec::new(),
            answers: Vec::new(),
        };
        for key in keys {
            let Some((owner, unsettled)) = routing.route(key) else {
                continue;
            };
            let part = match retrieve
                .parts
                .iter()
                .position(|(s, _)| Arc::ptr_eq(s, owner))
            {
                Some(part) => part,
                None => {
                    retrieve.parts.push((owner.clone(), retrieve.head()));
                    retrieve.parts.len() - 1
                }
            };
            let line = &mut retrieve.parts[part].1;
            line.push(b' ');
            line.extend_from_slice(key);
            let miss = match unsettled {
                true => Miss::Unsettled,
                false => Miss::Settled,
            };
            retrieve.keys.push(Key {
                key: key.to_vec(),
                part,
                miss,
            });
        }
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
        let line = [&b"get "[..], key].concat();
        Retrieve {
            routing: routing.clone(),
            client,
            command: Retrieval::Get,
            exptime: None,
            keys: vec![Key {
                key: key.to_vec(),
                part: 0,
                miss: Miss::Hot(owner.clone()),
            }],
            parts: vec![(replica.clone(), line)],
            answers: Vec::new(),
        }
    }

    /// `get`, or `gat <exptime>`.
    fn head(&self) -> Vec<u8> {
        let mut head = self.command.word().to_vec();
        if let Some(exptime) = &self.exptime {
            head.push(b' ');
            head.extend_from_slice(exptime);
        }
        head
    }

    /// Queues the parts in `batch`; what the writer will wait for.
    pub fn send(mut self, batch: &mut Batch) -> Pending {
        if self.keys.is_empty() {
            return Pending::Now(match self.routing.current.servers.is_empty() {
                true => b"SERVER_ERROR ringwise-proxy: the pool has no server\r\n",
                false => b"END\r\n",
            });
        }
        let client = self.client;
        for (server, line) in &mut self.parts {
            line.extend_from_slice(b"\r\n");
            let answer = batch.send(server, client, line, Expect::Values);
            self.answers.push(answer);
            // Sent: only the answers are kept while they come.
            *line = Vec::new();
        }
        let moved = self.keys.iter().any(|k| !matches!(k.miss, Miss::Settled));
        if self.parts.len() == 1 && !moved {
            let server = self.parts[0].0.clone();
            return Pending::Values(server, self.answers.remove(0), self.keys.len());
        }
        Pending::Retrieval(Box::new(self))
    }
}

/// The answer of a retrieval: the hits in request order and `END`, or the
/// first part's error.
pub async fn write_retrieval(retrieve: Retrieve, timeout: Duration) -> Vec<u8> {
    let Retrieve {
        routing,
        client,
        command,
        exptime,
        keys,
        parts,
        answers,
    } = retrieve;
    let mut bodies = Vec::with_capacity(answers.len());
    for ((server, _), answer) in parts.iter().zip(answers) {
        match wait(server, answer, timeout).await {
            Ok(bytes) if bytes.starts_with(b"VALUE ") || bytes.starts_with(b"END\r\n") => {
                bodies.push(bytes);
            }
            Ok(error) | Err(error) => return error,
        }
    }
    let mut hits: Vec<_> = bodies.iter().map(|b| values(b).peekable()).collect();
    let mut out = Vec::new();
    for key in &keys {
        let next = &mut hits[key.part];
        let owner = &parts[key.part].0;
        if next.peek().is_some_and(|(k, _)| *k == key.key.as_slice()) {
            if let Some((_, block)) = next.next() {
                owner.counters.hits.fetch_add(1, Ordering::Relaxed);
                out.extend_from_slice(block);
            }
            continue;
        }
        owner.counters.misses.fetch_add(1, Ordering::Relaxed);
        let copy = match &key.miss {
            Miss::Settled => continue,
            Miss::Unsettled => {
                let _lock = routing.locks.lock(&key.key).await;
                warm(&routing, owner, client, &key.key, timeout).await
            }
            Miss::Hot(from) => {
                let _lock = routing.locks.lock(&key.key).await;
                hot_copy(from, owner, client, &key.key, timeout).await
            }
        };
        let Some(copy) = copy else {
            continue;
        };
        if command == Retrieval::Get {
            out.extend_from_slice(b"VALUE ");
            out.extend_from_slice(&key.key);
            out.push(b' ');
            out.extend_from_slice(&copy.flags);
            out.extend_from_slice(format!(" {}\r\n", copy.data.len()).as_bytes());
            out.extend_from_slice(&copy.data);
            out.extend_from_slice(b"\r\n");
            continue;
        }
        // gets, gat, gats: the new owner's answer, now that it has it.
        let mut again = command.word().to_vec();
        if let Some(exptime) = &exptime {
            again.push(b' ');
            again.extend_from_slice(exptime);
        }
        again.push(b' ');
        again.extend_from_slice(&key.key);
        again.extend_from_slice(b"\r\n");
        if let Some(answer) = ask(owner, client, &again, Expect::Values, timeout).await {
            if let Some((_, block)) = values(&answer).next() {
                out.extend_from_slice(block);
            }
        }
    }
    out.extend_from_slice(b"END\r\n");
    out
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
