//! A client's answers, written in request order: the queue of what each
//! request's answer will be made of ([`Pending`]), and the writing of its
//! oldest entry once that is there.
//!
//! How it works: the client's connection ([`crate::client`]) queues one
//! entry per request with the share of its budget it holds (one value per
//! request, one per distinct key of a retrieval's part). Whenever the
//! oldest entry is ready ([`Pending::poll_ready`]: its server answered or
//! failed, or it needed no server) or late ([`Pending::deadline`]), it is
//! taken from the queue and its answer appended to the connection's
//! output, which is written when nothing else is ready or once it holds
//! [`FLUSH`] bytes. A retrieval over several servers is put back in
//! request order as it is written ([`write_retrieval`]).
//!
//! Cost: per answer one copy into the output; no allocation but the
//! queue's growth (freed with the rest of the connection's busy state when
//! it is idle).

use std::collections::VecDeque;
use std::future::poll_fn;
use std::sync::atomic::Ordering;
use std::task::Poll;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::time::Instant;

use crate::exchange::wait;
use crate::response::values;
use crate::retrieve::{FLUSH, Pending, write_retrieval};

/// The answers a client awaits, oldest first, and its output.
#[derive(Debug, Default)]
pub struct Answers {
    queue: VecDeque<(Pending, usize)>,
    /// The budget the queue holds: the sum of its entries' weights.
    owed: usize,
    /// Answers not yet written to the client.
    out: Vec<u8>,
}

/// Whether the client is still to be served after an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Served {
    /// Yes.
    Open,
    /// No: it asked to close, or its socket failed.
    Closed,
}

impl Answers {
    /// Queues `pending`, holding `weight` of the client's budget.
    pub fn push(&mut self, pending: Pending, weight: usize) {
        self.owed += weight;
        self.queue.push_back((pending, weight));
    }

    /// The budget the queued answers hold.
    pub fn owed(&self) -> usize {
        self.owed
    }

    /// Whether nothing is queued or unwritten.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty() && self.out.is_empty()
    }

    /// Whether an answer is awaited.
    pub fn awaits(&self) -> bool {
        !self.queue.is_empty()
    }

    /// When the oldest answer is late, if it waits for a server.
    pub fn deadline(&self, timeout: Duration) -> Option<Instant> {
        self.queue.front()?.0.deadline(timeout)
    }

    /// Ready once the oldest answer is there (pending while none is
    /// queued).
    pub async fn ready(&mut self) {
        poll_fn(|cx| match self.queue.front_mut() {
            Some((front, _)) => front.poll_ready(cx),
            None => Poll::Pending,
        })
        .await
    }

    /// Writes every answer that is there or late, in order, then the
    /// output.
    pub async fn write_ready(&mut self, stream: &mut TcpStream, timeout: Duration) -> Served {
        while let Some((front, _)) = self.queue.front_mut() {
            let there = poll_fn(|cx| Poll::Ready(front.poll_ready(cx).is_ready())).await;
            let late = || front.deadline(timeout).is_some_and(|d| d <= Instant::now());
            if !there && !late() {
                break;
            }
            if self.write_oldest(stream, timeout).await == Served::Closed {
                return Served::Closed;
            }
        }
        self.flush(stream).await
    }

    /// Waits for the oldest answer (up to its deadline) and writes it to
    /// the output, which is written from [`FLUSH`] bytes on.
    pub async fn write_oldest(&mut self, stream: &mut TcpStream, timeout: Duration) -> Served {
        let Some((next, weight)) = self.queue.pop_front() else {
            return Served::Open;
        };
        self.owed -= weight;
        match next {
            Pending::Now(text) => self.out.extend_from_slice(text),
            Pending::Ready(bytes) => self.put(bytes),
            Pending::One(server, answer) => {
                let bytes = wait(&server, answer, timeout).await;
                self.put(bytes.unwrap_or_else(|e| e));
            }
            Pending::Values(server, answer, keys) => {
                let bytes = wait(&server, answer, timeout).await.unwrap_or_else(|e| e);
                let found = values(&bytes).count() as u64;
                let counters = &server.counters;
                counters.hits.fetch_add(found, Ordering::Relaxed);
                let missed = (keys as u64).saturating_sub(found);
                counters.misses.fetch_add(missed, Ordering::Relaxed);
                self.put(bytes);
            }
            Pending::Retrieval(retrieval) => {
                let written = write_retrieval(*retrieval, timeout, &mut self.out, stream);
                if Box::pin(written).await.is_err() {
                    return Served::Closed;
                }
            }
            Pending::Close => {
                self.flush(stream).await;
                return Served::Closed;
            }
        }
        if self.out.len() >= FLUSH {
            return self.flush(stream).await;
        }
        Served::Open
    }

    /// Adds an answer to the output; a large one with nothing before it
    /// becomes the output as it is, not copied.
    fn put(&mut self, answer: Vec<u8>) {
        if self.out.is_empty() && answer.len() >= FLUSH {
            self.out = answer;
        } else {
            self.out.extend_from_slice(&answer);
        }
    }

    /// Writes the output.
    pub async fn flush(&mut self, stream: &mut TcpStream) -> Served {
        if self.out.is_empty() {
            return Served::Open;
        }
        let written = stream.write_all(&self.out).await;
        self.out.clear();
        match written {
            Ok(()) => Served::Open,
            Err(_) => Served::Closed,
        }
    }

    /// Writes every answer, waiting for each.
    pub async fn write_all(&mut self, stream: &mut TcpStream, timeout: Duration) -> Served {
        while self.awaits() {
            if self.write_oldest(stream, timeout).await == Served::Closed {
                return Served::Closed;
            }
        }
        self.flush(stream).await
    }
}
