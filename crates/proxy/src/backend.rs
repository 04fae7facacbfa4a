//! One pipelined connection to one memcached server.
//!
//! How it works: requests arrive on a bounded channel in the order the
//! clients' connections sent them; a writer sends them back to back (one
//! flush per burst) and queues, for each request that gets an answer, what
//! the answer looks like and who waits for it; a reader frames the
//! server's answers in the same order ([`crate::response::frame`]) and
//! hands each to its waiter. memcached answers a connection's requests in
//! order, so the n-th answer is the n-th expected one. A `noreply` request
//! queues nothing (memcached answers nothing to it, errors included; the
//! requests it would still answer, those of a wrong token count, the proxy
//! answers itself, see [`crate::request`]).
//!
//! The connection is made on the first request and made again on the next
//! one after it breaks; every request in flight then fails with a
//! `SERVER_ERROR` naming the server (a request already written may or may
//! not have been applied, as with any client).
//!
//! Cost: one task pair per connection; a request is copied once into the
//! write buffer, an answer once out of the read buffer.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt, BufWriter};
use tokio::net::TcpStream;
use tokio::net::tcp::OwnedReadHalf;
use tokio::sync::{mpsc, oneshot};

use crate::response::{Expect, frame};

/// An answer, or why there is none (a `SERVER_ERROR` line to send).
pub type Answer = Result<Vec<u8>, Vec<u8>>;

/// A request for the server.
#[derive(Debug)]
pub struct Job {
    /// The bytes to send.
    pub bytes: Vec<u8>,
    /// What the answer looks like, and who waits for it (`None`: no
    /// answer comes, `noreply`).
    pub reply: Option<(Expect, oneshot::Sender<Answer>)>,
}

/// The sending end of a connection's queue.
#[derive(Debug, Clone)]
pub struct Backend {
    address: String,
    jobs: mpsc::Sender<Job>,
}

/// How many requests may wait for a connection's writer.
const QUEUE: usize = 4096;

impl Backend {
    /// Starts the connection's task (it connects on the first request).
    pub fn start(address: String, connect_timeout: Duration) -> Backend {
        let (jobs, queue) = mpsc::channel(QUEUE);
        tokio::spawn(run(address.clone(), queue, connect_timeout));
        Backend { address, jobs }
    }

    /// The server's `host:port`.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Queues `job`; fails it when the connection's task is gone.
    pub async fn send(&self, job: Job) {
        if let Err(mpsc::error::SendError(job)) = self.jobs.send(job).await {
            fail(job, &self.address, "the connection's task stopped");
        }
    }
}

/// The `SERVER_ERROR` line of a failed request.
pub fn failure(address: &str, why: &str) -> Vec<u8> {
    format!("SERVER_ERROR ringwise-proxy: server {address}: {why}\r\n").into_bytes()
}

fn fail(job: Job, address: &str, why: &str) {
    if let Some((_, waiter)) = job.reply {
        let _ = waiter.send(Err(failure(address, why)));
    }
}

async fn run(address: String, mut queue: mpsc::Receiver<Job>, connect_timeout: Duration) {
    // Connect when there is something to send, and again after a break.
    while let Some(first) = queue.recv().await {
        let stream = match tokio::time::timeout(connect_timeout, TcpStream::connect(&address)).await
        {
            Ok(Ok(stream)) => stream,
            Ok(Err(err)) => {
                fail(first, &address, &format!("cannot connect: {err}"));
                continue;
            }
            Err(_) => {
                fail(first, &address, "connect timed out");
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let (read, write) = stream.into_split();
        let (waiting, waiters) = mpsc::unbounded_channel();
        let reader = tokio::spawn(read_answers(read, waiters, address.clone()));
        let mut write = BufWriter::with_capacity(64 * 1024, write);
        let mut next = Some(first);
        loop {
            let job = match next.take() {
                Some(job) => job,
                None => match queue.try_recv() {
                    Ok(job) => job,
                    Err(mpsc::error::TryRecvError::Empty) => {
                        if write.flush().await.is_err() {
                            break;
                        }
                        match queue.recv().await {
                            Some(job) => job,
                            None => break,
                        }
                    }
                    Err(mpsc::error::TryRecvError::Disconnected) => break,
                },
            };
            if let Err(err) = write.write_all(&job.bytes).await {
                fail(job, &address, &format!("write failed: {err}"));
                break;
            }
            if let Some(reply) = job.reply {
                if let Err(mpsc::error::SendError(reply)) = waiting.send(reply) {
                    let _ = reply
                        .1
                        .send(Err(failure(&address, "the connection closed")));
                    break;
                }
            }
        }
        // The reader answers what is in flight, or fails it, then ends.
        drop(waiting);
        let _ = write.shutdown().await;
        let _ = reader.await;
    }
}

async fn read_answers(
    mut read: OwnedReadHalf,
    mut waiters: mpsc::UnboundedReceiver<(Expect, oneshot::Sender<Answer>)>,
    address: String,
) {
    let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut start = 0;
    let why = 'read: loop {
        let Some((expect, waiter)) = waiters.recv().await else {
            return;
        };
        loop {
            match frame(&buf[start..], expect) {
                Ok(Some(len)) => {
                    let _ = waiter.send(Ok(buf[start..start + len].to_vec()));
                    start += len;
                    break;
                }
                Ok(None) => {}
                Err(garbled) => {
                    let _ = waiter.send(Err(failure(&address, &garbled.0)));
                    break 'read "it sent an answer out of step";
                }
            }
            if start > 0 {
                buf.drain(..start);
                start = 0;
            }
            if buf.capacity() - buf.len() < 16 * 1024 {
                buf.reserve(64 * 1024);
            }
            match read.read_buf(&mut buf).await {
                Ok(0) => {
                    let _ = waiter.send(Err(failure(&address, "the server closed the connection")));
                    break 'read "the server closed the connection";
                }
                Ok(_) => {}
                Err(err) => {
                    let _ = waiter.send(Err(failure(&address, &format!("read failed: {err}"))));
                    break 'read "read failed";
                }
            }
        }
    };
    waiters.close();
    while let Some((_, waiter)) = waiters.recv().await {
        let _ = waiter.send(Err(failure(&address, why)));
    }
}
